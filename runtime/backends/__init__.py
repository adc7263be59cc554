"""Backends: one module per SDK behind one async Protocol.

Each backend turns a `Request` into a `Completion` and translates its SDK's exceptions into
`CallFailed` (retryable or not) at its own boundary. SDK retries are off: the call layer
owns retrying. The SDK modules are imported only when a model of theirs is used.
"""

from __future__ import annotations

import os
from typing import Protocol

from skopt.compiler.plan import ModelSettings
from skopt.runtime.errors import MissingKey
from skopt.runtime.request import Completion, Params, Request


class Backend(Protocol):
    async def complete(self, request: Request, params: Params) -> Completion: ...

    async def aclose(self) -> None: ...


def params_of(settings: ModelSettings) -> Params:
    return Params(
        provider=settings.provider,
        name=settings.model or settings.name,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        top_p=settings.top_p,
        reasoning_effort=settings.reasoning_effort,
    )


def api_key(settings: ModelSettings) -> str:
    """The model's API key, from the environment only; never logged, stored or shown."""
    variable = settings.api_key_env or ""
    key = os.environ.get(variable, "")
    if not key:
        raise MissingKey(
            f"{variable} is not set: model '{settings.name}' reads its API key from it"
        )
    return key


def backend_for(settings: ModelSettings) -> Backend:
    if settings.provider == "openai":
        from skopt.runtime.backends.openai import OpenAIBackend

        return OpenAIBackend(settings)
    if settings.provider == "anthropic":
        from skopt.runtime.backends.anthropic import AnthropicBackend

        return AnthropicBackend(settings)
    if settings.provider == "local":
        from skopt.runtime.backends.local import LocalBackend

        return LocalBackend(settings)
    if settings.provider == "replay":
        from skopt.runtime.backends.replay import ReplayBackend

        return ReplayBackend(settings)
    if settings.provider == "sim":
        from skopt.runtime.backends.sim import SimBackend

        return SimBackend(settings)
    raise ValueError(f"no backend for provider {settings.provider!r} yet")

"""OpenAI Chat Completions through the official SDK; any compatible server through base_url.
The only module that imports `openai`."""

from __future__ import annotations

import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from skopt.compiler.plan import ModelSettings
from skopt.runtime.backends import api_key
from skopt.runtime.backends.failures import translated
from skopt.runtime.errors import CallFailed
from skopt.runtime.request import Completion, Params, Request

PROVIDER = "openai"


class OpenAIBackend:
    """`base_url` and `key` override the model's (the local provider serves its own);
    `json_objects` asks the server to constrain the optimizer's answers to a JSON object."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        base_url: str | None = None,
        key: str | None = None,
        json_objects: bool = False,
    ) -> None:
        self._key = key or api_key(settings)
        self._json_objects = json_objects
        self._client = openai.AsyncOpenAI(
            api_key=self._key,
            base_url=base_url or settings.base_url,
            max_retries=0,  # the call layer retries
            timeout=settings.timeout_s,
        )

    async def complete(self, request: Request, params: Params) -> Completion:
        start = time.perf_counter()
        with translated(openai, PROVIDER, self._key):
            response = await self._client.chat.completions.create(
                **self._arguments(request, params)
            )
        if not isinstance(response, ChatCompletion) or not response.choices:
            raise CallFailed(
                f"{PROVIDER} answered with something that is not a completion", retryable=True
            )
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            finish_reason=str(choice.finish_reason or ""),
            latency_s=time.perf_counter() - start,
        )

    def _arguments(self, request: Request, params: Params) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": params.name,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
        }
        if params.top_p is not None:
            arguments["top_p"] = params.top_p
        if params.reasoning_effort is not None:
            arguments["reasoning_effort"] = params.reasoning_effort
        if self._json_objects and request.role == "optimizer":
            arguments["response_format"] = {"type": "json_object"}
        return arguments

    async def aclose(self) -> None:
        await self._client.close()

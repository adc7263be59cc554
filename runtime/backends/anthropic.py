"""Anthropic's Messages API through the official SDK (system prompt in the `system` field).
The only module that imports `anthropic`."""

from __future__ import annotations

import time
from typing import Any

import anthropic
from anthropic.types import Message

from skopt.compiler.plan import ModelSettings
from skopt.runtime.backends import api_key
from skopt.runtime.backends.failures import translated
from skopt.runtime.errors import CallFailed
from skopt.runtime.request import Completion, Params, Request

PROVIDER = "anthropic"


class AnthropicBackend:
    def __init__(self, settings: ModelSettings) -> None:
        self._key = api_key(settings)
        self._client = anthropic.AsyncAnthropic(
            api_key=self._key,
            base_url=settings.base_url,
            max_retries=0,  # the call layer retries
            timeout=settings.timeout_s,
        )

    async def complete(self, request: Request, params: Params) -> Completion:
        start = time.perf_counter()
        with translated(anthropic, PROVIDER, self._key):
            message = await self._client.messages.create(**self._arguments(request, params))
        if not isinstance(message, Message) or message.content is None or message.usage is None:
            what = "something that is not a message"
            raise CallFailed(f"{PROVIDER} answered with {what}", retryable=True)
        text = "".join(
            getattr(block, "text", "") for block in message.content if block.type == "text"
        )
        return Completion(
            text=text,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            finish_reason=str(message.stop_reason or ""),
            latency_s=time.perf_counter() - start,
        )

    @staticmethod
    def _arguments(request: Request, params: Params) -> dict[str, Any]:
        sampling: dict[str, Any] = {"temperature": params.temperature}
        if params.top_p is not None:
            sampling["top_p"] = params.top_p
        arguments: dict[str, Any] = {
            "model": params.name,
            "max_tokens": params.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.conversation],
            # this SDK version takes sampling parameters only in the request body
            "extra_body": sampling,
        }
        if request.system:
            arguments["system"] = request.system
        return arguments

    async def aclose(self) -> None:
        await self._client.close()

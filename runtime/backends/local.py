"""`provider = local`: a small model on this machine's CPU, served by llama.cpp behind the same
OpenAI-compatible protocol, and spoken to through the openai backend.

The weights are resolved when the backend is made (so a missing package fails before a run
starts); the server starts on the first call (so a fully cached re-run never loads the model)
and is shared by every model block that runs the same file, stopped when the last one closes.
Optimizer answers are constrained to a JSON object by the server's grammar sampling.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

from skopt.compiler.plan import ModelSettings
from skopt.runtime.backends.openai import OpenAIBackend
from skopt.runtime.errors import CallFailed, LocalModelUnavailable
from skopt.runtime.local.server import LocalServer, ServerError
from skopt.runtime.local.weights import weights_for
from skopt.runtime.request import Completion, Params, Request

_KEY = "local"  # the server checks none; the SDK wants one
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
INSTALL = (
    "pip install 'skopt[local]' (llama-cpp-python builds from source: on x86 CPUs set "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_FMA=ON '
    '-DGGML_F16C=ON" for a build that runs on any AVX2 machine)'
)
_shared: dict[Path, tuple[LocalServer, int]] = {}
_shared_lock = threading.Lock()


class LocalBackend:
    def __init__(self, settings: ModelSettings) -> None:
        missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise LocalModelUnavailable(
                f"model '{settings.name}' runs locally, but {', '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not installed: run {INSTALL}"
            )
        self._settings = settings
        self._weights = weights_for(settings.model, settings.gguf).resolve()
        self._server: LocalServer | None = None
        self._client: OpenAIBackend | None = None
        self._starting = asyncio.Lock()

    async def complete(self, request: Request, params: Params) -> Completion:
        client = self._client or await self._connect()
        return await client.complete(request, params)

    async def _connect(self) -> OpenAIBackend:
        async with self._starting:
            if self._client is None:
                try:
                    self._server = await asyncio.to_thread(_acquire, self._weights, self._alias)
                except ServerError as exc:
                    raise CallFailed(str(exc), retryable=False) from exc
                self._client = OpenAIBackend(
                    self._settings, base_url=self._server.base_url, key=_KEY, json_objects=True
                )
            return self._client

    @property
    def _alias(self) -> str:
        return self._settings.model or self._settings.name

    async def aclose(self) -> None:
        client, self._client = self._client, None
        server, self._server = self._server, None
        if client is not None:
            await client.aclose()
        if server is not None:
            await asyncio.to_thread(_release, server)


def _acquire(weights: Path, alias: str) -> LocalServer:
    with _shared_lock:
        server, users = _shared.get(weights, (None, 0))
        if server is None:
            server = LocalServer(weights, alias)
            server.start()
        _shared[weights] = (server, users + 1)
        return server


def _release(server: LocalServer) -> None:
    with _shared_lock:
        _, users = _shared[server.weights]
        if users > 1:
            _shared[server.weights] = (server, users - 1)
            return
        del _shared[server.weights]
        server.stop()

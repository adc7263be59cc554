"""`provider = local`: a small model on this machine's CPU, served by llama.cpp behind the same
OpenAI-compatible protocol, and spoken to through the openai backend.

Making the backend resolves the weights (so a missing package fails before a run starts) and
starts the server in the calling thread (no thread left loading a model behind an interrupted
run). One server serves every model block that runs the same file; the last to close stops it.
Optimizer answers are constrained to a JSON object by the server's grammar sampling.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

from skopt.compiler.plan import ModelSettings
from skopt.runtime.backends.openai import OpenAIBackend
from skopt.runtime.errors import LocalModelUnavailable
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
        weights = weights_for(settings.model, settings.gguf).resolve()
        try:
            self._server: LocalServer | None = _acquire(weights, settings.model or settings.name)
        except ServerError as exc:
            raise LocalModelUnavailable(str(exc)) from exc
        self._client = OpenAIBackend(
            settings, base_url=self._server.base_url, key=_KEY, json_objects=True
        )

    async def complete(self, request: Request, params: Params) -> Completion:
        return await self._client.complete(request, params)

    async def aclose(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            await self._client.aclose()
            _release(server)


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

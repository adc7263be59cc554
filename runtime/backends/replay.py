"""`provider = replay`: answers from a recorded run's cache, offline and deterministic.

A request matches a recording when its messages and sample index do, whichever model block
asked (the replaying recipe names a `replay` model, not the recorded one). A request the run
never made is an error that names the phase and shows how it differs from the closest
recorded request."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from skopt.compiler.plan import ModelSettings
from skopt.runtime.cache import ResponseCache
from skopt.runtime.errors import ReplayMiss
from skopt.runtime.request import Completion, Params, Request, canonical, content_key

DIFF_LINES = 12


class ReplayBackend:
    def __init__(self, settings: ModelSettings) -> None:
        assert settings.replay_from is not None
        self._cache = ResponseCache(Path(settings.replay_from) / "cache.sqlite", readonly=True)

    async def complete(self, request: Request, params: Params) -> Completion:
        found = self._cache.get_by_content(content_key(request))
        if found is None:
            raise ReplayMiss(self._miss(request, params))
        return found

    def _miss(self, request: Request, params: Params) -> str:
        wanted = _lines(canonical(request, params))
        recorded = [_lines(text) for text in self._cache.requests()]
        phase = request.phase or "?"
        head = f"replay: the run never made this request (phase '{phase}', role {request.role})"
        if not recorded:
            return head + "; the recording is empty"
        closest = max(recorded, key=lambda r: difflib.SequenceMatcher(None, r, wanted).ratio())
        diff = list(
            difflib.unified_diff(closest, wanted, "closest recorded", "asked", lineterm="", n=1)
        )
        return "\n".join([head, *diff[:DIFF_LINES], *(["..."] if len(diff) > DIFF_LINES else [])])

    async def aclose(self) -> None:
        self._cache.close()


def _lines(canonical_json: str) -> list[str]:
    return json.dumps(
        json.loads(canonical_json), indent=1, sort_keys=True, ensure_ascii=False
    ).splitlines()

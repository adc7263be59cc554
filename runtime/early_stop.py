"""Early stopping of a sweep's cells (`sweep { stop = asha(grace = G, reduction = R) }`): the
asynchronous successive halving of Li et al. (ASHA), on the gate scores the cells' journals
record, so that a grid spends its budget on the cells that lead.

The rungs are the steps G, G·R, G·R², … before a cell's last step. A cell that finishes the
step of a rung reports its gate score there; it goes on only if that score is among the best
1/R of the scores reported at that rung so far (at least one goes on: the first to arrive
always does, as in ASHA). A stopped cell skips its remaining steps, still scores its test, and
keeps its best skill; its table row says it stopped early.

The rungs' scores are kept in `asha.json` at the sweep's root, written at each report, so that
a resumed sweep decides with what its cells reported before. Every method is a coroutine: the
same object serves cells here and, inside the Ray executor's hub, cells on other machines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from skopt.compiler.plan import AshaStop
from skopt.runtime.artifacts import write_json

RUNGS = "asha.json"


class Stopper(Protocol):
    async def goes_on(self, taker: str, step: int, total: int, score: float) -> bool: ...


class Rungs:
    def __init__(self, stop: AshaStop, root: Path) -> None:
        self.stop = stop
        self.path = root / RUNGS
        self.scores: dict[str, dict[str, float]] = _read(self.path)

    def is_rung(self, step: int, total: int) -> bool:
        rung = self.stop.grace
        while rung < step:
            rung *= self.stop.reduction
        return rung == step < total

    async def goes_on(self, taker: str, step: int, total: int, score: float) -> bool:
        """Whether `taker`, having finished `step` of `total` with gate score `score`, goes
        on to its next step."""
        if not self.is_rung(step, total):
            return True
        reported = self.scores.setdefault(str(step), {})
        reported[taker] = score  # a resumed cell reports its rung again: the same score
        write_json(self.path, {"stop": self.stop.model_dump(), "rungs": self.scores})
        ranked = sorted(reported.values(), reverse=True)
        keep = max(1, len(ranked) // self.stop.reduction)
        return score >= ranked[keep - 1]


def _read(path: Path) -> dict[str, dict[str, float]]:
    try:
        rungs = json.loads(path.read_text(encoding="utf-8"))["rungs"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {str(step): {str(k): float(v) for k, v in at.items()} for step, at in rungs.items()}

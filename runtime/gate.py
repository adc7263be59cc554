"""The validation gate: does a candidate skill beat the current one, honestly?

Scores are per item (hard, soft), averaged over the gate items and their repeats. The metric
is `hard`, `soft` or `mixed(w)` = w·hard + (1-w)·soft. A candidate is accepted only if it beats
the current score by more than `min_delta` (strictly), and with `no_regression`, only if no
item that passed with the current skill fails with the candidate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skopt.compiler.plan import GateSettings
from skopt.runtime.events import GateResult

Scores = Mapping[str, tuple[float, float]]  # item key -> (hard, soft)


def metric(scores: Scores, gate: GateSettings) -> float:
    if not scores:
        return 0.0
    hard = sum(h for h, _ in scores.values()) / len(scores)
    soft = sum(s for _, s in scores.values()) / len(scores)
    if gate.metric == "hard":
        return hard
    if gate.metric == "soft":
        return soft
    w = gate.mixed_weight if gate.mixed_weight is not None else 0.5
    return w * hard + (1 - w) * soft


@dataclass(frozen=True)
class Decision:
    accepted: bool
    before: float
    after: float
    reason: str
    regressions: tuple[str, ...] = ()

    def result(self, candidate: str) -> GateResult:
        """The decision as the journal records it, for the candidate of this hash."""
        return GateResult(
            accepted=self.accepted,
            reason=self.reason,
            before=self.before,
            after=self.after,
            regressions=list(self.regressions),
            candidate=candidate,
        )


def decide(current: Scores, candidate: Scores, gate: GateSettings) -> Decision:
    before, after = metric(current, gate), metric(candidate, gate)
    regressions = tuple(k for k, (h, _) in candidate.items() if h < 1 <= current.get(k, (0, 0))[0])
    if after <= before + gate.min_delta:
        reason = f"{after:.4f} does not beat {before:.4f} by more than {gate.min_delta:g}"
        return Decision(False, before, after, reason, regressions)
    if gate.no_regression and regressions:
        return Decision(
            False, before, after, f"{len(regressions)} passing items now fail", regressions
        )
    return Decision(True, before, after, f"{after:.4f} beats {before:.4f}", regressions)

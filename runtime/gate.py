"""The validation gate: does a candidate skill beat the current one, honestly?

Scores are per item (hard, soft), averaged over the gate items and their repeats. The metric
is `hard`, `soft` or `mixed(w)` = w·hard + (1-w)·soft. A candidate is accepted only if
- it beats the current score by more than `min_delta` (strictly);
- its gain is unlikely to be luck: item by item (repeats averaged), the items it fixes against
  the items it breaks pass the sign test at the gate's `confidence`, shared among the
  candidates the step can score, `tries` at most (compiler/gate_bound.py);
- with `no_regression`, no item that passed with the current skill fails with the candidate.
The reason says which of these decided, with the items fixed and broken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skopt.compiler.gate_bound import believed, fewest_fixes, luck, stated, tested_at
from skopt.compiler.plan import GateSettings
from skopt.runtime.events import GateResult

Scores = Mapping[str, tuple[float, float]]  # item key -> (hard, soft)
_TIE = 1e-9  # item scores closer than this are the same


def metric(scores: Scores, gate: GateSettings) -> float:
    if not scores:
        return 0.0
    return sum(_value(h, s, gate) for h, s in scores.values()) / len(scores)


def _value(hard: float, soft: float, gate: GateSettings) -> float:
    if gate.metric == "hard":
        return hard
    if gate.metric == "soft":
        return soft
    w = gate.mixed_weight if gate.mixed_weight is not None else 0.5
    return w * hard + (1 - w) * soft


def fixed_and_broken(
    current: Scores, candidate: Scores, gate: GateSettings
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The gate items the candidate scores higher and lower on than the current skill, each
    item's repeats (keys `ID#R`) averaged into one value."""
    before, after = _per_item(current, gate), _per_item(candidate, gate)
    changes = {item: after[item] - before[item] for item in sorted(after.keys() & before.keys())}
    return (
        tuple(item for item, d in changes.items() if d > _TIE),
        tuple(item for item, d in changes.items() if d < -_TIE),
    )


def _per_item(scores: Scores, gate: GateSettings) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for key, (hard, soft) in scores.items():
        item, _, repeat = key.rpartition("#")
        values.setdefault(item if item and repeat.isdigit() else key, []).append(
            _value(hard, soft, gate)
        )
    return {item: sum(v) / len(v) for item, v in values.items()}


@dataclass(frozen=True)
class Decision:
    accepted: bool
    before: float
    after: float
    reason: str
    regressions: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()  # the gate items it scores higher on
    broken: tuple[str, ...] = ()

    @property
    def near_miss(self) -> bool:
        """Refused, though it fixed more items than it broke."""
        return not self.accepted and len(self.fixed) > len(self.broken)

    def result(
        self, candidate: str, source: str = "selected", shared_by: int | None = None
    ) -> GateResult:
        """The decision as the journal records it, for the candidate of this hash."""
        return GateResult(
            accepted=self.accepted,
            reason=self.reason,
            before=self.before,
            after=self.after,
            regressions=list(self.regressions),
            candidate=candidate,
            source=source,
            shared_by=shared_by,
        )


def decide(
    current: Scores, candidate: Scores, gate: GateSettings, shared_by: int | None = None
) -> Decision:
    """Accept `candidate` over `current`, or not, and say why. The sign test's confidence is
    shared by `shared_by` candidates (the step's `tries` when not given)."""
    tries = shared_by or gate.tries
    before, after = metric(current, gate), metric(candidate, gate)
    regressions = tuple(k for k, (h, _) in candidate.items() if h < 1 <= current.get(k, (0, 0))[0])
    fixed_items, broken_items = fixed_and_broken(current, candidate, gate)
    fixed, broken = len(fixed_items), len(broken_items)
    tally = f"{fixed} fixed, {broken} broken"
    items = {"fixed": fixed_items, "broken": broken_items}
    if after <= before + gate.min_delta:
        reason = f"{after:.4f} does not beat {before:.4f} by more than {gate.min_delta:g} ({tally})"
        return Decision(False, before, after, reason, regressions, **items)
    confidence = tested_at(gate.confidence, tries)
    if not believed(fixed, broken, confidence):
        reason = (
            f"{after:.4f} beats {before:.4f}, but {tally} is luck with "
            f"{_p(luck(fixed, broken))} ({stated(gate.confidence, tries)} needs p ≤ "
            f"{1 - confidence:.3f}: at least {fewest_fixes(gate.confidence, tries)} fixed "
            "with none broken)"
        )
        return Decision(False, before, after, reason, regressions, **items)
    if gate.no_regression and regressions:
        reason = f"{len(regressions)} passing items now fail"
        return Decision(False, before, after, reason, regressions, **items)
    odds = f", {_p(luck(fixed, broken))}" if gate.confidence > 0 else ""
    reason = f"{after:.4f} beats {before:.4f} ({tally}{odds})"
    return Decision(True, before, after, reason, regressions, **items)


def _p(p: float) -> str:
    return f"p = {p:.3f}" if p >= 0.001 else "p < 0.001"

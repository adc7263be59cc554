"""Judging a replayed answer (SPEC §7): rule checks and exact references locally, a rubric through
the judge model. Every verdict is a hard score (0 or 1), a soft one (0..1) and a short note.

- rules: hard 1 when every check passes; soft the fraction that pass.
- exact: the reference (whitespace and case folded) found in the answer.
- rubric: the judge model's score (0..1) from its JSON answer; hard 1 at `RUBRIC_PASS` or above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skopt.runtime.sleep.tasks import Check, Task

RUBRIC_PASS = 0.8
NOTE_CHARS = 400


@dataclass(frozen=True)
class Verdict:
    hard: float
    soft: float
    note: str

    @property
    def passed(self) -> bool:
        return self.hard >= 1


def by_rules(task: Task, answer: str) -> Verdict:
    results = [(c, _passes(c, answer)) for c in task.checks]
    failed = [c for c, ok in results if not ok]
    soft = sum(ok for _, ok in results) / len(results) if results else 0.0
    note = "; ".join(f"{c.kind} {c.value!r} failed" for c in failed) or "every check passed"
    return Verdict(float(not failed and bool(results)), soft, note[:NOTE_CHARS])


def _passes(check: Check, answer: str) -> bool:
    if check.kind == "contains":
        return check.value.lower() in answer.lower()
    if check.kind == "not_contains":
        return check.value.lower() not in answer.lower()
    found = re.search(check.value, answer, re.IGNORECASE) is not None
    return found if check.kind == "regex" else not found


def by_reference(task: Task, answer: str) -> Verdict:
    reference = _fold(task.reference or "")
    ok = bool(reference) and reference in _fold(answer)
    return Verdict(float(ok), float(ok), "the reference is in the answer" if ok else "it is not")


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


def by_rubric(value: object) -> Verdict | None:
    """The judge model's verdict from its JSON answer `{"score": 0..1, "note": "..."}`; None
    when the answer is not usable."""
    score = value.get("score") if isinstance(value, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        return None
    note = value.get("note") if isinstance(value, dict) else ""
    text = note if isinstance(note, str) else ""
    return Verdict(float(score >= RUBRIC_PASS), float(score), text[:NOTE_CHARS])

"""Task records mined from sessions (SPEC §7): what the user asked, the minimal context, how to
judge an answer (rule checks, an exact reference, or a rubric), the corrections the user typed
afterwards, and the session it came from. Deduplicated, and split by a hash of the seed and the
task's id into train and held-out, so that no task is ever on both sides.

Two miners make them: the optimizer model (up to three tasks a session, read from its JSON
answer, every field checked) and, when its answer is not usable, a heuristic one (the session's
first prompt as the intent, later prompts that correct the agent as signals, a rubric from them
and — for the common "use X, not Y" — rule checks).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skopt.compiler.night_calls import split_sizes
from skopt.runtime.sleep.sessions import Session

Split = Literal["train", "holdout"]
CheckKind = Literal["contains", "not_contains", "regex", "not_regex"]
MAX_TASKS_PER_SESSION = 3
MAX_FIELD_CHARS = 2000
MAX_CHECKS = 6


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Check(Record):
    kind: CheckKind
    value: str


class Task(Record):
    id: str  # a hash of the normalised intent: the same task mined twice is one task
    intent: str
    context: str
    checks: list[Check]
    reference: str | None  # for `judge = exact`
    rubric: str | None  # for `judge = rubric(...)`
    signals: list[str]  # the user's corrections, as typed (redacted)
    session: str  # "agent:session_id"
    miner: Literal["model", "heuristic"]
    split: Split | None = None


# -- corrections ------------------------------------------------------------------------------

# A prompt that tells the agent it went wrong (English; the model miner reads any language).
CORRECTION = re.compile(
    r"^\s*(no\b|nope\b|don'?t\b|do not\b|never\b|stop\b|wrong\b|instead\b|that'?s not\b|"
    r"use\s+\S+.*\b(not|instead of)\b)",
    re.IGNORECASE,
)
NAME = r"[\w+-]+(?:\.[\w+-]+)*"  # a tool or package: `uv`, `ruff`, `python3.12`, not a full stop
USE_NOT = re.compile(
    rf"\buse\s+`?(?P<good>{NAME})`?\s*,?\s*(?:not|instead of|rather than)\s+`?(?P<bad>{NAME})`?",
    re.IGNORECASE,
)


def corrections(session: Session) -> list[str]:
    """Later prompts that correct the agent: after a refused or failed call, or worded so."""
    found = []
    for before, turn in zip(session.turns, session.turns[1:], strict=False):
        went_wrong = any(t.rejected or t.is_error for t in before.tools)
        if went_wrong or CORRECTION.search(turn.prompt):
            found.append(turn.prompt)
    return found


def rule_checks(signals: Sequence[str]) -> list[Check]:
    """`use X, not Y` → the answer mentions X and does not mention Y."""
    checks: list[Check] = []
    for signal in signals:
        for m in USE_NOT.finditer(signal):
            checks += [Check(kind="contains", value=m["good"])]
            checks += [Check(kind="not_regex", value=rf"\b{re.escape(m['bad'])}\b")]
    return list(dict.fromkeys(checks))[:MAX_CHECKS]


# -- miners -----------------------------------------------------------------------------------


def heuristic_task(session: Session) -> Task | None:
    if not session.turns:
        return None
    signals = corrections(session)
    intent = session.turns[0].prompt[:MAX_FIELD_CHARS]
    rubric = "The answer does what the user asked" + (
        ", and respects what they said afterwards: " + " / ".join(signals) if signals else "."
    )
    return Task(
        id=task_id(intent),
        intent=intent,
        context=_context(session),
        checks=rule_checks(signals),
        reference=None,
        rubric=rubric[:MAX_FIELD_CHARS],
        signals=signals,
        session=f"{session.agent}:{session.session_id}",
        miner="heuristic",
    )


def model_tasks(value: object, session: Session) -> list[Task]:
    """The tasks of the miner's JSON answer that are whole: an intent, and valid checks."""
    raw = value.get("tasks") if isinstance(value, dict) else None
    tasks = []
    for item in raw if isinstance(raw, list) else []:
        task = _task(item, session)
        if task is not None:
            tasks.append(task)
    return tasks[:MAX_TASKS_PER_SESSION]


def _task(item: object, session: Session) -> Task | None:
    if not isinstance(item, dict):
        return None
    intent = _text(item.get("intent"))
    if not intent:
        return None
    checks = [c for c in map(_check, _list(item.get("checks"))) if c is not None]
    return Task(
        id=task_id(intent),
        intent=intent,
        context=_text(item.get("context")) or _context(session),
        checks=checks[:MAX_CHECKS],
        reference=_text(item.get("reference")) or None,
        rubric=_text(item.get("rubric")) or None,
        signals=[c for c in map(_text, _list(item.get("corrections"))) if c]
        or corrections(session),
        session=f"{session.agent}:{session.session_id}",
        miner="model",
    )


def _check(item: object) -> Check | None:
    if not isinstance(item, dict) or item.get("kind") not in CheckKind.__args__:  # type: ignore[attr-defined]
        return None
    value = _text(item.get("value"))
    if not value:
        return None
    if item["kind"] in ("regex", "not_regex"):
        try:
            re.compile(value)
        except re.error:
            return None
    return Check(kind=item["kind"], value=value)


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    return value.strip()[:MAX_FIELD_CHARS] if isinstance(value, str) else ""


def _context(session: Session) -> str:
    where = f"project {session.cwd}" if session.cwd else "a project"
    branch = f", branch {session.git_branch}" if session.git_branch else ""
    return f"A coding task in {where}{branch}."


# -- ids, dedupe, split -----------------------------------------------------------------------


def task_id(intent: str) -> str:
    normalised = " ".join(intent.lower().split())
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


def judgeable(tasks: Sequence[Task], judge: str) -> list[Task]:
    """The tasks the recipe's judge can score: rule checks, a reference, or a rubric."""
    if judge == "rules":
        return [t for t in tasks if t.checks]
    if judge == "exact":
        return [t for t in tasks if t.reference]
    return [t for t in tasks if t.rubric]


def dedupe(tasks: Sequence[Task]) -> list[Task]:
    """One task per id, the first mined (the model's before the heuristic's)."""
    return list({t.id: t for t in reversed(tasks)}.values())[::-1]


def split(tasks: Sequence[Task], holdout: float, seed: int) -> list[Task]:
    """Each task to train or held-out: ranked by a hash of the seed and its id, the first
    `split_sizes` counts (the plan's, compiler/night_calls.py) are held out, the rest train."""
    _, held = split_sizes(len(tasks), holdout)
    ranked = sorted(tasks, key=lambda t: _bucket(seed, t.id))
    out = {t.id for t in ranked[:held]}
    side: dict[bool, Split] = {True: "holdout", False: "train"}
    return [t.model_copy(update={"split": side[t.id in out]}) for t in tasks]


def _bucket(seed: int, task: str) -> float:
    digest = hashlib.sha256(f"{seed}:{task}".encode()).hexdigest()
    return int(digest[:12], 16) / 16**12

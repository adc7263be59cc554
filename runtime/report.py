"""What `skopt report` says about a run folder (SPEC §1, §4, §5.3): pure functions over its files.

A folder is a run folder when it holds the marker that `skopt run` writes first. The
scores and gate decisions come from `summary.json` when the run ended (done, or stopped by
the budget after its final test), else from `state.json` (an interrupted, failed or killed
run keeps its last finished step there); how its last session ended is in the journal.
Plan against actual counts the journal's call events per (phase, role) — cache hits are
engine calls answered for free, so they count as calls and are also shown apart — and sets
them next to the plan's ranges; an actual outside its range is flagged. For an unfinished
run only an actual above the plan's maximum is flagged: the minima hold for a whole run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from skopt.compiler.cost import usd as plan_usd
from skopt.compiler.plan import PHASE_ORDER, Count, Job, Plan, Usd
from skopt.compiler.saved import PlanUnreadable, read_plan
from skopt.runtime.claim import NotARunFolder, open_folder, read_marker
from skopt.runtime.events import CallEvent, RunEvent

# finished: done; budget: stopped by the budget (test scored); interrupted, failed: how the last
# session ended; unfinished: killed (no end recorded); not started: no step state yet.
Status = Literal["finished", "budget", "interrupted", "failed", "unfinished", "not started"]
USD_SLACK = 1e-6  # the plan rounds dollars to 6 decimals


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Scores(Frozen):
    gate_split: str
    initial: float | None  # the baseline: the initial skill on the gate split
    best: float | None
    final: float | None  # the current skill at the end (or at the stop)
    test_initial: float | None
    test_best: float | None
    gap: float | None  # best skill: gate score minus test score (over-fitting to the gate)


class Decision(Frozen):
    step: int
    epoch: int
    failures: int | None  # failed train rollouts of the step
    accepted: bool
    before: float | None  # None: no candidate was scored
    after: float | None
    reason: str
    regressions: int  # gate items that passed before and fail with the candidate


class Usage(Frozen):
    """Plan against actual for one (phase, role); `plan_*` is None where the plan has none."""

    phase: str
    role: str
    model: str
    calls: int  # every call event, cache hits and failures included
    cache_hits: int
    failed: int
    input_tokens: int
    output_tokens: int
    usd: float | None  # None: a paid call of a model without a known price
    plan_calls: Count | None
    plan_input_tokens: Count | None
    plan_output_tokens: Count | None
    input_exact: bool  # the plan counted input tokens exactly (else an estimate)
    plan_usd: Usd | None
    outside: list[str]  # "calls", "input_tokens", "output_tokens", "usd": outside the plan


class Report(Frozen):
    folder: str
    recipe: str
    status: Status
    ended: str  # why the last session ended: the budget limit, or what failed ("" if done)
    simulation: bool
    steps_done: int
    steps_planned: int
    accepted: int
    rejected: int
    scores: Scores
    decisions: list[Decision]
    usage: list[Usage]
    unreadable_events: int  # journal lines that could not be read (a kill mid-line)


def report(root: Path) -> Report:
    """The report of the run folder at `root`. Raises NotARunFolder."""
    marker = read_marker(root)
    if marker is not None and marker["kind"] == "sweep":
        raise NotARunFolder(
            f"{root} is a sweep: its table is {root / 'sweep.md'},"
            f" report a cell: skopt report {root / 'cells' / '01'}"
        )
    folder = open_folder(root, "run")
    plan = _plan(root / "plan.json")
    job = plan.jobs[0]
    summary = _object(root / "summary.json")
    state = summary if summary is not None else _object(folder.state)
    history = [h for h in (state or {}).get("history", []) if isinstance(h, dict)]
    try:
        decisions = [_decision(h) for h in history]
    except (ValidationError, ValueError, TypeError) as exc:
        raise NotARunFolder(f"{root}: its step history cannot be read: {str(exc)[:200]}") from None
    events, sessions, unreadable = read_journal(folder.events)
    status, ended = _status(summary, state, sessions)
    return Report(
        folder=str(root),
        recipe=plan.recipe,
        status=status,
        ended=ended,
        simulation=_simulation(plan, job, summary),
        steps_done=len(history),
        steps_planned=job.schedule.total_steps,
        accepted=sum(d.accepted for d in decisions),
        rejected=sum(not d.accepted and d.reason != "no candidate" for d in decisions),
        scores=scores(job, summary, state),
        decisions=decisions,
        usage=usage(plan, job, events, finished=summary is not None and not ended),
        unreadable_events=unreadable,
    )


def _status(
    summary: dict[str, Any] | None, state: dict[str, Any] | None, sessions: list[RunEvent]
) -> tuple[Status, str]:
    """How the run stands, and why its last session ended where that is not "done"."""
    last = sessions[-1] if sessions else None
    ended = last.outcome if last is not None and last.status == "finished" else ""
    detail = last.detail if last is not None and ended in ("budget", "failed") else ""
    if summary is not None:
        return ("budget", detail) if summary.get("stopped") else ("finished", "")
    if ended in ("budget", "interrupted", "failed"):
        return ended, detail  # type: ignore[return-value]
    return ("unfinished" if state is not None else "not started"), ""


def _plan(path: Path) -> Plan:
    if not path.is_file():
        raise NotARunFolder(f"{path.parent}: this run never started (no plan.json in it)")
    try:
        return read_plan(path)
    except PlanUnreadable as exc:
        raise NotARunFolder(str(exc)) from None


def _object(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise NotARunFolder(f"{path} cannot be read: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise NotARunFolder(f"{path} is not a JSON object")
    return data


def read_journal(path: Path) -> tuple[list[CallEvent], list[RunEvent], int]:
    """The journal's call events, its session events, and how many lines could not be read."""
    if not path.is_file():
        return [], [], 0
    calls: list[CallEvent] = []
    sessions: list[RunEvent] = []
    unreadable = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if data.get("kind") == "run":
                sessions.append(RunEvent(**data))
            else:
                calls.append(CallEvent(**data))
        except (ValueError, TypeError, AttributeError):
            unreadable += 1
    return calls, sessions, unreadable


def _simulation(plan: Plan, job: Job, summary: dict[str, Any] | None) -> bool:
    if summary is not None and "simulation" in summary:
        return bool(summary["simulation"])
    used = (job.train.target, job.train.optimizer)
    return any(m.provider == "sim" for m in plan.models if m.name in used)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def scores(job: Job, summary: dict[str, Any] | None, state: dict[str, Any] | None) -> Scores:
    """Gate and test scores, from the summary of a finished run or the state of a stopped one;
    None where the run has no such score yet."""
    if summary is not None:
        gate = summary.get("gate") or {}
        found = [gate.get(k) for k in ("initial", "best", "final")]
    else:
        found = [(state or {}).get(k) for k in ("baseline_score", "best_score", "current_score")]
    initial, best, final = (_number(v) for v in found)
    test = (state or {}).get("test") or {}
    test_best = _number(test.get("best"))
    return Scores(
        gate_split=job.train.gate.split,
        initial=initial,
        best=best,
        final=final,
        test_initial=_number(test.get("initial")),
        test_best=test_best,
        gap=None if best is None or test_best is None else best - test_best,
    )


def _decision(entry: Mapping[str, Any]) -> Decision:
    decision = entry.get("decision") or {}
    regressions = decision.get("regressions")
    return Decision(
        step=int(entry.get("step", 0)),
        epoch=int(entry.get("epoch", 0)),
        failures=entry.get("failures"),
        accepted=bool(decision.get("accepted")),
        before=_number(decision.get("before")),
        after=_number(decision.get("after")),
        reason=str(decision.get("reason", "")),
        regressions=len(regressions) if isinstance(regressions, list) else 0,
    )


def usage(plan: Plan, job: Job, events: Sequence[CallEvent], finished: bool) -> list[Usage]:
    """One line per (phase, role) that the plan counts or the journal holds, in phase order."""
    totals = {(t.phase, t.role): t for t in job.totals}
    keys: dict[tuple[str, str], None] = dict.fromkeys(
        [*totals, *((e.phase, e.role) for e in events)]
    )
    order: dict[str, int] = {name: i for i, name in enumerate(PHASE_ORDER)}
    ranked = sorted(keys, key=lambda k: (order.get(k[0], len(order)), k[0], k[1] != "target"))
    by_key: dict[tuple[str, str], list[CallEvent]] = {key: [] for key in ranked}
    for event in events:
        by_key[(event.phase, event.role)].append(event)
    return [
        _usage(plan, job, phase, role, by_key[(phase, role)], finished) for phase, role in ranked
    ]


def _usage(
    plan: Plan, job: Job, phase: str, role: str, events: list[CallEvent], finished: bool
) -> Usage:
    total = next((t for t in job.totals if (t.phase, t.role) == (phase, role)), None)
    model = job.train.target if role == "target" else job.train.optimizer
    settings = next((m for m in plan.models if m.name == model), None)
    paid = [e for e in events if e.ok and not e.cache_hit]
    spent = None if any(e.usd is None for e in paid) else sum(e.usd or 0.0 for e in events)
    cost = (
        plan_usd(settings, total.input_tokens, total.output_tokens) if total and settings else None
    )
    actual = Usage(
        phase=phase,
        role=role,
        model=model,
        calls=len(events),
        cache_hits=sum(e.cache_hit for e in events),
        failed=sum(not e.ok for e in events),
        input_tokens=sum(e.input_tokens for e in events),
        output_tokens=sum(e.output_tokens for e in events),
        usd=spent,
        plan_calls=total.calls if total else None,
        plan_input_tokens=total.input_tokens if total else None,
        plan_output_tokens=total.output_tokens if total else None,
        input_exact=total.input_exact if total else False,
        plan_usd=cost,
        outside=[],
    )
    return actual.model_copy(update={"outside": outside(actual, finished)})


def outside(u: Usage, finished: bool) -> list[str]:
    """Which actuals fall outside the plan's range (only above the maximum while unfinished)."""
    checks: list[tuple[str, float | None, float | None, float | None, float]] = [
        ("calls", u.calls, *_bounds(u.plan_calls), 0),
        ("input_tokens", u.input_tokens, *_bounds(u.plan_input_tokens), 0),
        ("output_tokens", u.output_tokens, *_bounds(u.plan_output_tokens), 0),
        ("usd", u.usd, *(_bounds(u.plan_usd) if u.plan_usd else (None, None)), USD_SLACK),
    ]
    if u.plan_calls is None:
        return ["calls"]  # the plan never asks this role anything in this phase
    found = []
    for name, value, low, high, slack in checks:
        if value is None or low is None or high is None:
            continue
        if value > high + slack or (finished and value < low - slack):
            found.append(name)
    return found


def _bounds(c: Count | Usd | None) -> tuple[float | None, float | None]:
    return (None, None) if c is None else (c.min, c.max)

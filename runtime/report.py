"""What `skopt report` says about a run folder (SPEC §1, §4, §5.3): pure functions over its
plan and its journal.

A folder is a run folder when it holds the marker that `skopt run` writes first. Everything
else comes from the journal (runtime/journal.py), the single record of a run: scores (the
baseline, each finished step, the final test), gate decisions, how the last session ended, and
plan against actual — the journal's call events per (phase, role); cache hits are engine calls
answered for free, so they count as calls and are also shown apart. An actual outside its
range is flagged; for a run that did not finish, only an actual above the plan's maximum is
(the minima hold for a whole run).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skopt.compiler.cost import usd as plan_usd
from skopt.compiler.plan import PHASE_ORDER, Count, Job, Plan, Usd
from skopt.compiler.saved import PlanUnreadable, read_plan
from skopt.runtime.claim import NotARunFolder, open_folder, read_marker
from skopt.runtime.events import (
    BaselineScored,
    CallEvent,
    EarlyStop,
    FinalTestScored,
    StepFinished,
)
from skopt.runtime.journal import Journal, read_journal

# finished: done; budget: stopped by the budget; interrupted, failed: how the last session
# ended; unfinished: no end recorded (killed, or still running); not started: no score yet.
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
    source: str = "selected"  # which of the step's candidates decided (runtime/tries.py)


class Usage(Frozen):
    """Plan against actual for one (phase, role); `plan_*` is None where the plan has none."""

    phase: str
    role: str
    model: str
    calls: int  # every call event, cache hits and failures included
    cache_hits: int
    shared_hits: int  # cache hits that another cell of the sweep paid for
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
    stopped_early: int | None = None  # a sweep's cell stopped early after this step


def report(root: Path) -> Report:
    """The report of the run folder at `root`. Raises NotARunFolder."""
    return report_of(root, *read_run(root))


def read_run(root: Path) -> tuple[Plan, Journal]:
    """The plan and the journal of the run folder at `root`. Raises NotARunFolder."""
    marker = read_marker(root)
    if marker is not None and marker["kind"] == "sweep":
        raise NotARunFolder(
            f"{root} is a sweep: its table is {root / 'sweep.md'},"
            f" report a cell: skopt report {root / 'cells' / '01'}"
        )
    folder = open_folder(root, "run")
    return _plan(root / "plan.json"), read_journal(folder.events)


def report_of(root: Path, plan: Plan, journal: Journal) -> Report:
    """The report of the run at `root`, from its plan and its journal."""
    job = plan.jobs[0]
    decisions = [_decision(e) for e in journal.steps]
    status, ended = run_status(journal)
    return Report(
        folder=str(root),
        recipe=plan.recipe,
        status=status,
        ended=ended,
        simulation=_simulation(plan, job),
        steps_done=len(decisions),
        steps_planned=job.schedule.total_steps,
        accepted=sum(d.accepted for d in decisions),
        rejected=sum(not d.accepted and d.reason != "no candidate" for d in decisions),
        scores=scores(job, journal),
        decisions=decisions,
        usage=usage(plan, job, journal.calls, finished=status == "finished"),
        unreadable_events=journal.unreadable,
        stopped_early=early.after_step if (early := journal.last(EarlyStop)) else None,
    )


def run_status(journal: Journal) -> tuple[Status, str]:
    """How the run stands, and why its last session ended where that was not "done"."""
    ended = journal.ended
    if ended is not None:
        return ("finished", "") if ended.outcome == "done" else (ended.outcome, ended.detail)
    started = journal.last(BaselineScored) is not None
    return ("unfinished" if started else "not started"), ""


def _plan(path: Path) -> Plan:
    if not path.is_file():
        raise NotARunFolder(f"{path.parent}: this run never started (no plan.json in it)")
    try:
        return read_plan(path)
    except PlanUnreadable as exc:
        raise NotARunFolder(str(exc)) from None


def _simulation(plan: Plan, job: Job) -> bool:
    used = (job.train.target, job.train.optimizer)
    return any(m.provider == "sim" for m in plan.models if m.name in used)


def scores(job: Job, journal: Journal) -> Scores:
    """Gate and test scores as far as the run got; None where it has no such score yet."""
    baseline = journal.last(BaselineScored)
    steps = journal.steps
    initial = baseline.score if baseline else None
    best = steps[-1].result.best if steps else initial
    final = steps[-1].result.score if steps else initial
    test = journal.last(FinalTestScored)
    return Scores(
        gate_split=job.train.gate.split,
        initial=initial,
        best=best,
        final=final,
        test_initial=test.initial if test else None,
        test_best=test.best if test else None,
        gap=None if best is None or test is None else best - test.best,
    )


def _decision(event: StepFinished) -> Decision:
    r, d = event.result, event.result.decision
    return Decision(
        step=r.step,
        epoch=r.epoch,
        failures=r.failures,
        accepted=d.accepted,
        before=d.before,
        after=d.after,
        reason=d.reason,
        regressions=len(d.regressions),
        source=d.source or "selected",
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
        shared_hits=sum(e.shared for e in events),
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

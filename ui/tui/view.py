"""What the run monitor shows, computed from a run's plan and journal at a moment: no Textual
here, so that it is tested on its own and the screens only lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from skopt.compiler.plan import Plan
from skopt.runtime.events import (
    BaselineScored,
    EpochBoundary,
    FinalTestScored,
    OptimizerAnswer,
    RunFinished,
    RunStarted,
    StepFinished,
    StepResult,
)
from skopt.runtime.journal import Journal
from skopt.runtime.report import run_status


@dataclass(frozen=True)
class Bar:
    """Spending of one kind against the plan's range and the budget."""

    label: str  # "calls", "tokens", "usd"
    actual: float
    low: float | None  # the plan's minimum and maximum (None: unknown, e.g. no price)
    high: float | None
    budget: float | None

    @property
    def limit(self) -> float | None:
        """What the bar fills towards: the budget if there is one, else the plan's maximum."""
        return self.budget if self.budget is not None else self.high


@dataclass(frozen=True)
class RunView:
    recipe: str
    status: str  # "running", "finished", "budget", "interrupted", "failed", "unfinished", …
    detail: str
    simulation: bool
    epoch: int
    step: int  # the step under way or last finished (0: the baseline)
    steps: int
    epochs: int
    phase: str
    elapsed_s: float
    eta_s: float | None  # None: not running, or no step finished in this session yet
    bars: list[Bar]
    baseline: float | None
    results: list[StepResult]
    test: FinalTestScored | None
    initial: str  # the skill when the run started
    previous: str  # the skill before its last change
    skill: str  # the current skill
    unusable: list[OptimizerAnswer]


def run_view(plan: Plan, journal: Journal, now: float, running: bool) -> RunView:
    """The monitor's view of a run; `running`: a process works in its folder right now."""
    job = plan.jobs[0]
    status, detail = run_status(journal)
    started = journal.of(RunStarted)
    phase = journal.phase
    results = [e.result for e in journal.steps]
    skills = _skills(journal)
    baseline = journal.last(BaselineScored)
    return RunView(
        recipe=plan.recipe,
        status="running" if running and journal.ended is None else status,
        detail=detail,
        simulation=any(m.provider == "sim" for m in plan.models),
        epoch=phase.epoch if phase else 0,
        step=phase.step if phase else 0,
        steps=job.schedule.total_steps,
        epochs=job.train.epochs,
        phase=phase.phase if phase else "",
        elapsed_s=_elapsed(journal, now, running),
        eta_s=_eta(journal, now, running, job.schedule.total_steps),
        bars=_bars(plan, journal),
        baseline=baseline.score if baseline else None,
        results=results,
        test=journal.last(FinalTestScored),
        initial=started[0].skill if started else "",
        previous=skills[-2] if len(skills) > 1 else (skills[0] if skills else ""),
        skill=skills[-1] if skills else "",
        unusable=[e for e in journal.of(OptimizerAnswer) if not e.usable],
    )


def _skills(journal: Journal) -> list[str]:
    """Every version the current skill went through, in order."""
    versions: list[str] = []
    for event in journal.of_kinds(RunStarted, StepFinished, EpochBoundary):
        skill = event.skill  # type: ignore[attr-defined]
        if not versions or versions[-1] != skill:
            versions.append(skill)
    return versions


def _sessions(journal: Journal, now: float, running: bool) -> list[tuple[float, float]]:
    """Each session's start and end (the last one ends now while it runs)."""
    spans: list[tuple[float, float]] = []
    start: float | None = None
    last = journal.events[-1].at if journal.events else now
    for event in journal.of_kinds(RunStarted, RunFinished):
        if isinstance(event, RunStarted):
            if start is not None:
                spans.append((start, event.at))  # a session that was killed
            start = event.at
        elif isinstance(event, RunFinished) and start is not None:
            spans.append((start, event.at))
            start = None
    if start is not None:
        spans.append((start, now if running else last))
    return spans


def _elapsed(journal: Journal, now: float, running: bool) -> float:
    return sum(end - start for start, end in _sessions(journal, now, running))


def _eta(journal: Journal, now: float, running: bool, total: int) -> float | None:
    """Time left at this session's pace: its seconds per finished step × the steps left."""
    spans = _sessions(journal, now, running)
    if not running or not spans or journal.ended is not None:
        return None
    start = spans[-1][0]
    done = [e for e in journal.steps if e.at >= start]
    if not done:
        return None
    left = total - done[-1].result.step
    return (now - start) / len(done) * left


def _bars(plan: Plan, journal: Journal) -> list[Bar]:
    job = plan.jobs[0]
    paid = [e for e in journal.calls if e.ok and not e.cache_hit]
    models = job.models
    usd_known = all(m.usd is not None for m in models)
    budget = plan.budget
    return [
        Bar(
            "calls",
            len(paid),
            sum(m.calls.min for m in models),
            sum(m.calls.max for m in models),
            budget.calls,
        ),
        Bar(
            "tokens",
            sum(e.input_tokens + e.output_tokens for e in paid),
            sum(m.input_tokens.min + m.output_tokens.min for m in models),
            sum(m.input_tokens.max + m.output_tokens.max for m in models),
            budget.tokens,
        ),
        Bar(
            "usd",
            sum(e.usd or 0.0 for e in paid),
            sum(m.usd.min for m in models if m.usd) if usd_known else None,
            sum(m.usd.max for m in models if m.usd) if usd_known else None,
            budget.usd,
        ),
    ]

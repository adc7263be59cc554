"""What `skopt run` shows while it works (a line per phase change and per finished step, with
elapsed time and an estimate of what is left) and the summary line it ends with."""

from __future__ import annotations

import time
from collections.abc import Callable

import click

from skopt.compiler.plan import ModelCost, Plan
from skopt.runtime.events import (
    CallEvent,
    Event,
    PhaseStarted,
    RunStarted,
    StepFinished,
    StepResult,
)
from skopt.runtime.report import Report


def clock_text(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Live progress on standard error, from the run's journal events: a line when a phase
    starts and when a step finishes. Calls are counted as the budget counts them: paid calls
    apart from cache hits, which cost nothing."""

    def __init__(
        self, prefix: str = "", plan: Plan | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.prefix = prefix  # a sweep's cells run side by side: "[02] " says whose line it is
        self.clock = clock
        self.started = clock()
        self.paid = self.hits = self.steps = 0
        self.usd = 0.0
        self.total = 0
        self.limits = self.dollars = ""
        costs = _planned(plan)
        if plan is not None and costs:
            most = sum(m.calls.max for m in costs)
            budget = plan.budget
            calls = f" of budget {budget.calls}" if budget.calls is not None else ""
            self.limits = f"{calls} · at most {most} planned"
            self.dollars = f" of budget ${budget.usd:.2f}" if budget.usd is not None else ""

    def emit(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.total = event.steps
        elif isinstance(event, CallEvent):
            self.paid += event.ok and not event.cache_hit
            self.hits += event.cache_hit
            self.usd += event.usd or 0.0
        elif isinstance(event, PhaseStarted):
            self._say(
                f"  {event.phase:<12} paid calls {self.paid}{self.limits} (cached {self.hits})"
                f" · ${self.usd:.4f}{self.dollars}"
            )
        elif isinstance(event, StepFinished):
            self._step(event.result)

    def _step(self, r: StepResult) -> None:
        self.steps += 1
        d = r.decision
        tried = f" ({d.source})" if d.source not in (None, "selected") else ""
        verdict = f"accepted{tried}" if d.accepted else f"kept the skill ({d.reason})"
        elapsed = self.clock() - self.started
        left = self.total - r.step
        eta = f" · about {clock_text(elapsed / self.steps * left)} left" if left > 0 else ""
        self._say(
            f"step {r.step}/{self.total} · epoch {r.epoch} · {verdict} · score {r.score:.3f}"
            f" · best {r.best:.3f} · {clock_text(elapsed)} elapsed{eta}"
        )

    def _say(self, line: str) -> None:
        click.echo(self.prefix + line, err=True)


def _planned(plan: Plan | None) -> list[ModelCost]:
    """The planned costs of the one job (or night) the progress counts against."""
    if plan is None:
        return []
    if len(plan.jobs) == 1:
        return plan.jobs[0].models
    return plan.sleep.models if plan.sleep is not None and not plan.jobs else []


def summary_line(r: Report, seconds: float) -> str:
    """One line at the end of a run, as test runners end theirs."""
    s = r.scores
    paid = sum(u.calls - u.cache_hits - u.failed for u in r.usage)
    cached = sum(u.cache_hits for u in r.usage)
    known = [u.usd for u in r.usage]
    cost = "cost unknown" if any(v is None for v in known) else f"${sum(v or 0 for v in known):.4f}"
    word = {"finished": "done", "budget": "stopped by the budget"}.get(r.status, r.status)
    test = (
        f" · test {_score(s.test_initial)} → {_score(s.test_best)}"
        if s.test_best is not None
        else " · test not scored"
    )
    return (
        f"{word} · {r.steps_done} of {r.steps_planned} steps: {r.accepted} accepted,"
        f" {r.rejected} rejected · gate {_score(s.initial)} → {_score(s.best)}{test}"
        f" · {paid} paid calls ({cached} cached) · {cost} · {clock_text(seconds)}"
    )


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"

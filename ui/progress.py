"""What `skopt run` shows while it works (a line per phase change and per finished step, with
elapsed time and an estimate of what is left) and the summary line it ends with."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import click

from skopt.compiler.plan import Plan
from skopt.runtime.events import CallEvent
from skopt.runtime.report import Report


def clock_text(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Live progress on standard error. Calls are counted as the budget counts them: paid
    calls apart from cache hits, which cost nothing."""

    def __init__(
        self, prefix: str = "", plan: Plan | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.prefix = prefix  # a sweep's cells run side by side: "[02] " says whose line it is
        self.clock = clock
        self.started = clock()
        self.paid = self.hits = self.steps = 0
        self.usd = 0.0
        self.phase = ""
        self.limits = ""
        if plan is not None and len(plan.jobs) == 1:
            most = sum(m.calls.max for m in plan.jobs[0].models)
            budget = plan.budget
            calls = f" of budget {budget.calls}" if budget.calls is not None else ""
            dollars = f" of budget ${budget.usd:.2f}" if budget.usd is not None else ""
            self.limits = f"{calls} · at most {most} planned"
            self.dollars = dollars
        else:
            self.dollars = ""

    def call(self, event: CallEvent) -> None:
        self.paid += event.ok and not event.cache_hit
        self.hits += event.cache_hit
        self.usd += event.usd or 0.0
        if event.phase != self.phase:
            self.phase = event.phase
            line = (
                f"  {self.phase:<12} paid calls {self.paid}{self.limits} (cached {self.hits})"
                f" · ${self.usd:.4f}{self.dollars}"
            )
            click.echo(self.prefix + line, err=True)

    def step(self, record: dict[str, Any], total: int) -> None:
        self.steps += 1
        decision = record["decision"]
        verdict = (
            "accepted" if decision.get("accepted") else f"kept the skill ({decision.get('reason')})"
        )
        elapsed = self.clock() - self.started
        left = total - record["step"]
        eta = f" · about {clock_text(elapsed / self.steps * left)} left" if left else ""
        click.echo(
            f"{self.prefix}step {record['step']}/{total} · epoch {record['epoch']} · {verdict}"
            f" · score {record['score']:.3f} · best {record['best']:.3f}"
            f" · {clock_text(elapsed)} elapsed{eta}",
            err=True,
        )


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

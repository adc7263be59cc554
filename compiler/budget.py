"""The budget verdict: does the worst case of the plan fit, and how many steps does it cover?

The runtime reserves the worst case before it starts anything: the baseline and the final test
up front (so a run that starts can always report a test score), then each step with the
epoch-boundary phases that precede it. The verdict walks the plan's phases in the same order.
A sleep night is one unit: it is reserved whole before it starts, so it fits or it does not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skopt.compiler.plan import Budget, Job, ModelSettings, Phase, SleepJob, SleepPhase, Verdict
from skopt.grammar.source import Diagnostic, Span, error, warning


@dataclass(frozen=True)
class Worst:
    calls: int = 0
    tokens: int = 0
    usd: float = 0.0

    def __add__(self, other: Worst) -> Worst:
        return Worst(self.calls + other.calls, self.tokens + other.tokens, self.usd + other.usd)

    def exceeds(self, budget: Budget, usd_known: bool) -> list[str]:
        over = []
        if budget.calls is not None and self.calls > budget.calls:
            over.append("calls")
        if budget.tokens is not None and self.tokens > budget.tokens:
            over.append("tokens")
        if usd_known and budget.usd is not None and self.usd > budget.usd + 1e-12:
            over.append("usd")
        return over


def worst(phase: Phase | SleepPhase, models: Mapping[str, ModelSettings]) -> Worst:
    total = Worst()
    for rc in phase.calls:
        price = models[rc.model].price
        usd = 0.0
        if price is not None:
            usd = (
                rc.input_tokens.max * price.input_usd + rc.output_tokens.max * price.output_usd
            ) / price.per
        total += Worst(rc.calls.max, rc.input_tokens.max + rc.output_tokens.max, usd)
    return total


def _unchecked(
    budget: Budget, used: set[str], models: dict[str, ModelSettings], time: str
) -> list[str]:
    unchecked = []
    if budget.time_s is not None:
        unchecked.append(f"time: {time}")
    if budget.usd is not None and any(models[m].price is None for m in used):
        unknown = sorted(m for m in used if models[m].price is None)
        unchecked.append(f"usd: no price known for {', '.join(unknown)}")
    return unchecked


def verdict(job: Job, budget: Budget, models: dict[str, ModelSettings]) -> Verdict | None:
    if budget == Budget():
        return None
    used = {rc.model for p in job.phases for rc in p.calls}
    usd_known = all(models[m].price is not None for m in used)
    unchecked = _unchecked(
        budget,
        used,
        models,
        "checked before each step (it starts while the time left holds about one"
        " more step and the final test)",
    )
    upfront = sum(
        (worst(p, models) for p in job.phases if p.phase in ("baseline", "final_test")), Worst()
    )
    per_step = _steps(job.phases, models)
    total = job.schedule.total_steps
    covered, binding = _covered(upfront, per_step, budget, usd_known)
    return Verdict(
        fits=covered == total and not binding,
        covered_steps=covered,
        total_steps=total,
        limits=binding,
        unchecked=unchecked,
    )


def _covered(
    first: Worst, costs: Sequence[Worst], budget: Budget, usd_known: bool
) -> tuple[int, list[str]]:
    """How many of `costs`, one after another after `first`, the budget pays; the limits that
    stop the next one (or `first` itself)."""
    spent, binding = first, first.exceeds(budget, usd_known)
    covered = 0
    for cost in [] if binding else costs:
        binding = (spent + cost).exceeds(budget, usd_known)
        if binding:
            break
        spent += cost
        covered += 1
    return covered, binding


def _steps(phases: Sequence[Phase], models: dict[str, ModelSettings]) -> list[Worst]:
    """The worst case of each step, with the boundary phases that run before it."""
    by_step: dict[int, Worst] = {}
    for phase in phases:
        if phase.phase in ("baseline", "final_test"):
            continue
        by_step[phase.step] = by_step.get(phase.step, Worst()) + worst(phase, models)
    return [by_step[s] for s in sorted(by_step)]


def diagnostics(job: Job, where: Span) -> list[Diagnostic]:
    v = job.verdict
    if v is None or v.fits:
        return []
    limits = ", ".join(v.limits)
    prefix = f"[{job.name}] " if job.overrides else ""
    if v.covered_steps == 0:
        return [
            error(
                f"{prefix}the budget cannot pay for the first step's worst case ({limits})",
                where,
                "too small to start",
                help="raise the budget, or make steps cheaper (batch_size, max_tokens, gate)",
            )
        ]
    return [
        warning(
            f"{prefix}budget covers {v.covered_steps} of {v.total_steps} steps",
            where,
            f"the worst case runs out of {limits}",
            help="the run stops cleanly (exit 3) when the rest cannot pay for the next step",
        )
    ]


# -- a sweep: one budget for every cell ---------------------------------------------------------


def sweep_verdict(
    jobs: Sequence[Job], budget: Budget, models: dict[str, ModelSettings]
) -> Verdict | None:
    """Whether the budget pays for every cell's worst case together, or for how many whole
    cells (counted in the verdict's steps), in the order of the grid."""
    if budget == Budget() or len(jobs) < 2:
        return None
    used = {rc.model for job in jobs for p in job.phases for rc in p.calls}
    usd_known = all(models[m].price is not None for m in used)
    cells = [sum((worst(p, models) for p in job.phases), Worst()) for job in jobs]
    covered, binding = _covered(Worst(), cells, budget, usd_known)
    return Verdict(
        fits=covered == len(jobs),
        covered_steps=covered,
        total_steps=len(jobs),
        limits=binding,
        unchecked=_unchecked(budget, used, models, "the cells share one clock"),
    )


def sweep_diagnostics(v: Verdict | None, where: Span) -> list[Diagnostic]:
    if v is None or v.fits:
        return []
    return [
        warning(
            f"the budget covers the worst case of {v.covered_steps} of {v.total_steps} cells",
            where,
            f"the whole sweep's worst case runs out of {', '.join(v.limits)}",
            help="the cells share one budget: a cell stops cleanly (exit 3) before a step the"
            " rest of it cannot pay, and still scores its test",
        )
    ]


# -- a sleep night ----------------------------------------------------------------------------


def night_worst(job: SleepJob, models: dict[str, ModelSettings]) -> Worst:
    """A night's worst case, every phase at its maxima: what a night reserves to start."""
    return sum((worst(p, models) for p in job.phases), Worst())


def night_verdict(
    job: SleepJob, budget: Budget, models: dict[str, ModelSettings]
) -> Verdict | None:
    """Whether the budget pays for a night's worst case: one unit, fits or not."""
    if budget == Budget():
        return None
    used = {rc.model for p in job.phases for rc in p.calls}
    usd_known = all(models[m].price is not None for m in used)
    binding = night_worst(job, models).exceeds(budget, usd_known)
    return Verdict(
        fits=not binding,
        covered_steps=0 if binding else 1,
        total_steps=1,
        limits=binding,
        unchecked=_unchecked(
            budget, used, models, "cannot be planned; the night checks it while it runs"
        ),
    )


def night_diagnostics(job: SleepJob, where: Span) -> list[Diagnostic]:
    v = job.verdict
    if v is None or v.fits:
        return []
    return [
        error(
            f"the budget cannot pay for a night's worst case ({', '.join(v.limits)})",
            where,
            "too small for one night",
            help="raise the budget, or make a night smaller (max_sessions, max_tasks, max_tokens)",
        )
    ]

"""How much does the engine cost on top of its calls? A simulator run of 20 steps where every
call takes 50 ms (the sim backend's `complete` awaits `asyncio.sleep(latency)` first; bench
code only). Goals: wall time within 1.3x of the critical path its calls and concurrency imply;
a fully cached re-run under 2 s.

Measured side by side in one run:

  latency run    the 20-step run with 50 ms calls: wall time
  critical path  the run's phases one after another (its journal, in order), each costing
                 ceil(paid calls of the phase / model concurrency) x latency; cache hits cost
                 nothing. A lower bound: rounds inside a phase that depend on each other (a
                 hierarchical merge's levels, slow update's before/after) count as one
  rounds taken   the latency rounds the run actually waited through: backend calls grouped by
                 start time (a new round when a call starts more than half a latency after the
                 round's first); x latency = the run's time if the engine cost nothing
  overhead       the same run with 0 ms calls, wall time / steps (best of 3): the engine's own
                 cost per step (prompts, scoring, edits, artifacts, cache, journal), the sim's
                 replies included
  cached         a new run whose cache starts as the latency run's (`--cache-from`): every call
                 a cache hit, none paid (the 50 ms backend stays in place, and is never reached)

    .venv/bin/python bench/run_bench.py [--latency 0.05] [--concurrency 16] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import skopt
from skopt.runtime.backends.sim import SimBackend
from skopt.runtime.events import CallEvent
from skopt.runtime.request import Completion, Params, Request

STEPS = 20
GOAL_RATIO = 1.3
GOAL_CACHED_S = 2.0

RECIPE = """skopt 1
# bench/run_bench.py: 120 train items / batch 24 = 5 steps per epoch, x 4 epochs = 20 steps
model sim {{
  provider    = sim
  concurrency = {concurrency}
}}
env rules {{
  kind = synthetic(rules = 8, items = 200, noise = 5%, seed = 1)
  split {{ train = 60%, valid = 20%, test = 20%, seed = 42 }}
}}
train {{
  target     = sim
  optimizer  = sim
  skill      = "skill.md"
  epochs     = 4
  batch_size = 24
  minibatch  = 8
  lr         = cosine(max = 4, min = 2)
  gate {{ split = valid, metric = hard }}
}}
budget {{ calls = 50k }}
"""
SKILL = "# House rules\n\nAnswer every question with the house code that applies to it.\n"


class Latency:
    """The sim backend's `complete`, made to wait `seconds` first; start times are kept."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.starts: list[float] = []
        self._original: Callable[..., Awaitable[Completion]] = SimBackend.complete

    def install(self) -> None:
        original, latency = self._original, self

        async def complete(backend: SimBackend, request: Request, params: Params) -> Completion:
            latency.starts.append(time.perf_counter())
            if latency.seconds:
                await asyncio.sleep(latency.seconds)
            return await original(backend, request, params)

        SimBackend.complete = complete  # type: ignore[method-assign]

    def uninstall(self) -> None:
        SimBackend.complete = self._original  # type: ignore[method-assign]


@dataclass
class Run:
    wall_s: float
    result: skopt.RunResult
    starts: list[float]

    @property
    def folder(self) -> Path:
        return self.result.folder

    def events(self) -> list[CallEvent]:
        """The journal's call events (it also records each session's start and end)."""
        return skopt.open_run(self.folder).journal.calls

    def paid(self) -> int:
        return self.result.paid_calls


def run(
    plan: skopt.Plan,
    folder: Path,
    latency: Latency,
    seconds: float,
    cache_from: Path | None = None,
) -> Run:
    latency.seconds, latency.starts = seconds, []
    began = time.perf_counter()
    result = skopt.run(plan, folder, cache_from=cache_from)
    wall = time.perf_counter() - began
    if not result.ok:
        raise SystemExit(f"the bench run did not finish: {result.message}")
    return Run(wall, result, latency.starts)


def critical_path(events: list[CallEvent], concurrency: int, latency: float) -> float:
    """Phases one after another, in journal order; each ceil(paid calls / concurrency) rounds.
    A phase is a run of consecutive events with the same phase and role."""
    rounds = 0
    for _, group in groupby(events, key=lambda e: (e.phase, e.role)):
        paid = sum(1 for e in group if e.ok and not e.cache_hit)
        rounds += math.ceil(paid / concurrency)
    return rounds * latency


def rounds_taken(starts: list[float], latency: float) -> int:
    """Backend calls grouped into latency rounds by their start times."""
    rounds, first = 0, -math.inf
    for at in sorted(starts):
        if at - first > latency / 2:
            rounds, first = rounds + 1, at
    return rounds


def results(folder: Path) -> dict[str, str]:
    files = [*sorted((folder / "skills").glob("*.md")), folder / "best_skill.md"]
    return {f.name: f.read_text(encoding="utf-8") for f in files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per call")
    parser.add_argument("--concurrency", type=int, default=16, help="the sim model's slots")
    parser.add_argument("--quick", action="store_true", help="1 ms calls, one overhead run (CI)")
    args = parser.parse_args()
    if args.quick:
        args.latency = 0.001

    with tempfile.TemporaryDirectory(prefix="skopt-run-bench-") as tmp:
        work = Path(tmp)
        (work / "skill.md").write_text(SKILL, encoding="utf-8")
        recipe = work / "bench.skopt"
        recipe.write_text(RECIPE.format(concurrency=args.concurrency), encoding="utf-8")
        began = time.perf_counter()
        try:
            plan = skopt.compile(recipe)
        except skopt.RecipeError as exc:
            raise SystemExit(str(exc)) from None
        compile_s = time.perf_counter() - began
        steps = plan.jobs[0].schedule.total_steps
        assert steps == STEPS, steps

        latency = Latency()
        latency.install()
        try:
            repeats = 1 if args.quick else 3
            instant = [run(plan, work / f"instant-{i}", latency, 0.0) for i in range(repeats)]
            overhead = min(instant, key=lambda r: r.wall_s)  # the first also warms up
            slow = run(plan, work / "slow", latency, args.latency)
            cached = run(plan, work / "cached", latency, args.latency, cache_from=slow.folder)
        finally:
            latency.uninstall()

        assert results(slow.folder) == results(overhead.folder) == results(cached.folder)
        assert cached.paid() == 0 and not cached.starts, "the cached re-run reached the backend"
        events = slow.events()
        path = critical_path(events, args.concurrency, args.latency)
        taken = rounds_taken(slow.starts, args.latency)
        test = slow.result.scores
        assert test is not None and test.test_initial is not None and test.test_best is not None
        print(
            f"skopt run bench (simulation): {steps} steps, {len(events)} calls ({slow.paid()}"
            " paid; the rest answered by the cache or an identical call in flight),"
            f" concurrency {args.concurrency}, {args.latency * 1000:g} ms per call;"
            f" compile {compile_s:.3f} s;"
            f" test score {test.test_initial:.3f} -> {test.test_best:.3f}"
        )
        print()
        table(args.latency, steps, slow, overhead, cached, path, taken, len(instant))


def table(
    latency: float,
    steps: int,
    slow: Run,
    overhead: Run,
    cached: Run,
    path: float,
    taken: int,
    repeats: int,
) -> None:
    ratio = slow.wall_s / path
    taken_s = taken * latency
    per_step_ms = overhead.wall_s / steps * 1000
    rows = [
        ("measure", "measured", "goal", "met"),
        (f"wall time, {latency * 1000:g} ms calls", f"{slow.wall_s:.3f} s", "–", "–"),
        (
            "critical path (Σ phases ⌈calls/concurrency⌉ × latency)",
            f"{path:.3f} s",
            "–",
            "–",
        ),
        ("wall / critical path", f"{ratio:.2f}x", f"≤ {GOAL_RATIO}x", _met(ratio <= GOAL_RATIO)),
        (
            "latency rounds actually waited (× latency)",
            f"{taken} ({taken_s:.3f} s)",
            "–",
            "–",
        ),
        ("wall / rounds waited", f"{slow.wall_s / taken_s:.2f}x", "–", "–"),
        (
            "engine overhead per step (0 ms calls)",
            f"{per_step_ms:.1f} ms ({overhead.wall_s:.3f} s / {steps}, best of {repeats})",
            "–",
            "–",
        ),
        (
            "fully cached re-run",
            f"{cached.wall_s:.3f} s",
            f"< {GOAL_CACHED_S:g} s",
            _met(cached.wall_s < GOAL_CACHED_S),
        ),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


def _met(ok: bool) -> str:
    return "yes" if ok else "no"


if __name__ == "__main__":
    main()

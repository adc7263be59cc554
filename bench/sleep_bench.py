"""What does a night of `skopt sleep` cost and find? `recipes/sleep.skopt` run for real with the
local models (Qwen2.5-Coder 0.5B replays, 1.5B mines and reflects, llama.cpp on this machine's
CPU) over the reference transcripts, staged in a temporary project folder. It prints what was
harvested and mined, and per phase the calls paid beside the plan's worst case, the tokens and
the wall time with each phase's share of the night; then the gate's verdict and the edits.

    .venv/bin/python bench/sleep_bench.py [--recipe recipes/sleep.skopt] [--set K=V]...
    .venv/bin/python bench/sleep_bench.py --quick    # both models on the simulator (CI: does the
                                                     # bench still run? its numbers say nothing)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import skopt
from skopt.compiler.plan import SLEEP_PHASE_ORDER, Plan
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.events import NightMined, PhaseFinished, PhaseStarted
from skopt.runtime.journal import Journal, read_journal
from skopt.runtime.sleep.cycle import sleep

ROOT = Path(__file__).resolve().parent.parent

QUICK = ["small.provider=sim", "big.provider=sim"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "sleep.skopt"))
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--quick", action="store_true", help="the simulator in both roles (CI)")
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="sleep-bench-"))
    sets = [*(QUICK if args.quick else []), *args.sets, f"sleep.project={project}"]
    try:
        plan = skopt.compile(args.recipe, sets)
    except skopt.RecipeError as exc:
        sys.exit(f"{exc}\n\nthe recipe does not compile")
    if plan.sleep is None:
        sys.exit(f"{args.recipe} is not a sleep recipe: it has no night to run")

    began = time.perf_counter()
    slept = sleep(plan, dry_run=False)
    wall = time.perf_counter() - began
    journal = read_journal(RunFolder(slept.outcome.folder).events)
    print(f"sleep bench · {args.recipe} · {slept.outcome.message}")
    print(f"wall time {wall:.1f} s (the models' servers started included)")
    print()
    mined(journal)
    print()
    phases(plan, journal)
    print()
    print(slept.report if slept.report else "(nothing staged)")


def mined(journal: Journal) -> None:
    m = journal.last(NightMined)
    if m is None:
        print("nothing mined")
        return
    over = ", ".join(f"{n} {why}" for why, n in sorted(m.skipped.items())) or "none"
    print(f"sessions read {m.sessions} (passed over: {over})")
    print(
        f"tasks mined {m.mined} → kept {m.kept} ({m.kept - m.holdout} train, {m.holdout} held out)"
    )


def phases(plan: Plan, journal: Journal) -> None:
    assert plan.sleep is not None
    most = {p.phase: sum(rc.calls.max for rc in p.calls) for p in plan.sleep.phases}
    started = {e.phase: e.at for e in journal.of(PhaseStarted)}
    seconds = {e.phase: e.at - started[e.phase] for e in journal.of(PhaseFinished)}
    night = sum(seconds.values()) or 1.0
    print("phase      calls paid / plan max   input tok  output tok   seconds   share")
    for name in SLEEP_PHASE_ORDER:
        calls = [c for c in journal.calls if c.phase == name and c.ok and not c.cache_hit]
        tokens_in = sum(c.input_tokens for c in calls)
        tokens_out = sum(c.output_tokens for c in calls)
        s = seconds.get(name, 0.0)
        print(
            f"{name:<10} {len(calls):>6} / {most.get(name, 0):<12} {tokens_in:>11,}"
            f" {tokens_out:>11,} {s:>9.1f} {s / night:>7.0%}"
        )
    paid = [c for c in journal.calls if c.ok and not c.cache_hit]
    print(
        f"{'night':<10} {len(paid):>6} / {sum(most.values()):<12}"
        f" {sum(c.input_tokens for c in paid):>11,} {sum(c.output_tokens for c in paid):>11,}"
        f" {night:>9.1f}"
    )


if __name__ == "__main__":
    main()

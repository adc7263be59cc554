"""Does skopt teach a real small model something? The quickstart recipe, run for real with the
local models (Qwen2.5-Coder 0.5B as target, 1.5B as optimizer, llama.cpp on this machine's CPU),
then the test split scored three ways, side by side:

  no skill       the target with an empty system message
  initial skill  the recipe's starting skill (skills/house_style.md)
  trained skill  the run's best skill (chosen on the valid split only)

plus the run's calls and tokens per role and its wall time. The trained skill is printed too.

    .venv/bin/python bench/local_bench.py [--recipe recipes/quickstart.skopt] [--set K=V]...
    .venv/bin/python bench/local_bench.py --quick     # one small step, 0.5B only (CI: does the
                                                      # bench still run? its scores say nothing)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import skopt

ROOT = Path(__file__).resolve().parent.parent

# --quick: does the bench still run? One step on 4 valid and 4 test items, with the 0.5B model
# as the optimizer too (one server, short replies); its scores say nothing.
QUICK = [
    "house.limit.train=5",
    "house.limit.valid=4",
    "house.limit.test=4",
    "train.gate.samples=4",
    "optimizer.name=qwen2.5-coder-0.5b",
    "optimizer.max_tokens=80",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "quickstart.skopt"))
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--out", help="run folder (default: a temporary one)")
    parser.add_argument("--quick", action="store_true", help="one small step (CI)")
    args = parser.parse_args()
    if args.quick:
        args.sets += QUICK

    try:
        plan = skopt.compile(args.recipe, args.sets)
    except skopt.RecipeError as exc:
        sys.exit(f"{exc}\n\nthe recipe does not compile")
    job = plan.jobs[0]
    out = Path(args.out or tempfile.mkdtemp(prefix="local-bench-")) / "run"

    began = time.perf_counter()
    result = skopt.run(plan, out)
    wall = time.perf_counter() - began
    record = skopt.open_run(out)
    if record.summary is None:
        sys.exit(f"the run did not finish: {result.message}")
    summary = record.summary
    bare = skopt.evaluate(plan, "", "test")

    models = {m.name: m.model or m.name for m in plan.models}
    print(f"local bench · {args.recipe} · {result.message.split(':')[0]}")
    print(f"target {models[job.train.target]} · optimizer {models[job.train.optimizer]}")
    print()
    print(f"test split, {bare.items} items   no skill   initial skill   trained skill")
    print(
        f"accuracy (hard)              {bare.hard:8.3f}   {summary['test']['initial']:13.3f}"
        f"   {summary['test']['best']:13.3f}"
    )
    print(
        f"gate ({summary['gate']['split']})                  {'':8}   "
        f"{summary['gate']['initial']:13.3f}   {summary['gate']['best']:13.3f}"
    )
    print()
    calls, tokens_in, tokens_out = Counter[str](), Counter[str](), Counter[str]()
    for call in record.journal.calls:
        if not call.cache_hit:
            calls[call.role] += 1
            tokens_in[call.role] += call.input_tokens
            tokens_out[call.role] += call.output_tokens
    print(f"training: {summary['steps']} steps, {summary['accepted']} accepted by the gate, "
          f"{summary['rejected']} rejected, wall {wall:.0f} s")  # fmt: skip
    for role in ("target", "optimizer"):
        print(
            f"  {role:9} {calls[role]:4} calls · {tokens_in[role]:7,} tokens in · "
            f"{tokens_out[role]:6,} tokens out"
        )
    print(f"  no-skill scoring: {bare.calls} calls (not part of the run)")
    print()
    print("trained skill:")
    print(record.best_skill)


if __name__ == "__main__":
    main()

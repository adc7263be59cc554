"""A sweep of 8 simulator cells whose every call takes 50 ms, run by the local executor and by
the Ray executor on a 2-node cluster of this machine (a head and a worker, 2 CPUs each),
side by side:

  wall / ideal   the sweep's wall time against its critical path: each cell's own critical
                 path (its phases one after another, each ceil(paid calls / concurrency)
                 rounds of the latency), the cells in 4 slots (local: --parallel 4; Ray: 4
                 CPUs), so max(the longest cell, the sum over 4)
  paid calls     what the sweep paid, against what its cells would have paid without the
                 shared cache (their paid calls plus those the sweep's cache answered), and
                 a single cell's baseline (the calls every cell has in common)
  Ray overhead   per cell: the time from submitting its task to its result, less the time its
                 journal spans (scheduling, the task's start, the hub's round trips, the end)

    .venv/bin/python bench/sweep_bench.py [--latency 0.05] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import runpy
import subprocess
import sys
import tempfile
import time
from itertools import groupby
from pathlib import Path
from typing import Any

# The tests' Ray cluster of this machine (standard library only), run from its file: tests/
# is not an installed package, and nothing here edits sys.path to make it one.
CLUSTER = Path(__file__).resolve().parent.parent / "tests" / "runtime" / "ray_cluster.py"
SLOTS = 4
RECIPE = """skopt 1
model sim {{
  provider    = sim
  concurrency = 8
  latency     = {latency}s
}}
env rules {{
  kind = synthetic(rules = 8, items = 120, noise = 5%, seed = 3)
}}
train {{
  target    = sim
  optimizer = sim
  skill     = "skill.md"
  epochs    = {epochs}
  minibatch = 6
}}
sweep {{
  lr         = [constant(2), constant(4)]
  batch_size = [18, 36]
  reflect    = [all, failures]
}}
"""
CELLS = [f"{i:02d}" for i in range(1, 9)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--quick", action="store_true", help="5 ms calls, one epoch (CI)")
    args = parser.parse_args()
    latency, epochs = (0.005, 1) if args.quick else (args.latency, 2)
    folder = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    (folder / "sweep.skopt").write_text(RECIPE.format(latency=latency, epochs=epochs))
    (folder / "skill.md").write_text("# House rules\n\nAnswer with the house code.\n")

    local_s = sweep(folder, "local", ["--parallel", str(SLOTS)])
    cluster = runpy.run_path(str(CLUSTER))["new_cluster"]()
    try:
        ray_s = sweep(folder, "ray", ["--executor", "ray", "--ray-address", cluster.address],
                      cluster.env)  # fmt: skip
    finally:
        cluster.stop()

    ideal = critical_path(folder / "local", latency)
    print(f"sweep bench (simulation): 8 cells, {latency * 1000:g} ms a call, {SLOTS} slots")
    print()
    rows = [("measure", "local", "ray", "goal", "met")]
    rows.append(("wall time", f"{local_s:.2f} s", f"{ray_s:.2f} s", "–", "–"))
    rows.append(("ideal (critical path in 4 slots)", f"{ideal:.2f} s", f"{ideal:.2f} s", "–", "–"))
    rows.append(("wall / ideal", f"{local_s / ideal:.2f}x", f"{ray_s / ideal:.2f}x", "–", "–"))
    counted = {name: calls(folder / name) for name in ("local", "ray")}
    rows.append(("calls without a shared cache", *(f"{c[1]:,}" for c in counted.values()),
                 "–", "–"))  # fmt: skip
    baseline = counted["local"][2]
    goal = counted["local"][1] - 7 * baseline  # the common baseline paid once, the rest own
    rows.append(
        ("calls paid", *(f"{c[0]:,}" for c in counted.values()), f"<= {goal:,}",
         "yes" if all(c[0] <= goal for c in counted.values()) else "NO")
    )  # fmt: skip
    overhead = ray_overhead(folder / "ray")
    rows.append(
        ("Ray overhead per cell, mean (max)", "–", f"{sum(overhead) / len(overhead):.2f} s"
         f" ({max(overhead):.2f} s)", "< 2 s", "yes" if max(overhead) < 2 else "NO")
    )  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def sweep(folder: Path, out: str, args: list[str], env: dict[str, str] | None = None) -> float:
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from skopt.ui.cli import main; main()", "run", "sweep.skopt",
         "--out", out, "--quiet", *args],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the {out} sweep failed: {done.stderr[-2000:]}")
    return time.perf_counter() - began


def events(cell: Path) -> list[dict[str, Any]]:
    lines = (cell / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def critical_path(root: Path, latency: float) -> float:
    """max(the longest cell, the cells' sum over the slots); a cell's own path as
    bench/run_bench.py counts it, with every call the cell made (paid or shared) paid."""
    paths = []
    for cell in CELLS:
        made = [e for e in events(root / "cells" / cell) if e["kind"] == "call"]
        rounds = 0
        for _, group in groupby(made, key=lambda e: (e["phase"], e["role"])):
            asked = sum(1 for e in group if e["ok"] and (not e["cache_hit"] or e["shared"]))
            rounds += math.ceil(asked / 8)
        paths.append(rounds * latency)
    return max(max(paths), sum(paths) / SLOTS)


def calls(root: Path) -> tuple[int, int, int]:
    """(paid, paid had there been no shared cache, one cell's baseline)."""
    paid = without = 0
    for cell in CELLS:
        made = [e for e in events(root / "cells" / cell) if e["kind"] == "call" and e["ok"]]
        paid += sum(not e["cache_hit"] for e in made)
        without += sum(not e["cache_hit"] or e["shared"] for e in made)
    first = events(root / "cells" / "01")
    baseline = sum(1 for e in first if e["kind"] == "call" and e["phase"] == "baseline")
    return paid, without, baseline


def ray_overhead(root: Path) -> list[float]:
    """Per cell: submitted to its result, less the time it waited for a free CPU and the time
    its journal spans."""
    cells = json.loads((root / "ray.json").read_text())["cells"]
    spans = []
    for cell in CELLS:
        times = [e["at"] for e in events(root / "cells" / cell)]
        c = cells[cell]
        spans.append(c["seconds"] - c["queued_s"] - (max(times) - min(times)))
    return spans


if __name__ == "__main__":
    main()

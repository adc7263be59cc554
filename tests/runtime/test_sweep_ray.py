"""Sweeps on a real Ray cluster (tests/runtime/ray_cluster.py: a head and a worker node, two
CPUs each, the worker in a folder of its own): `skopt run SWEEP --executor ray` from a folder
that no node works in gives the local executor's cells, byte for byte; one budget holds for
8 cells at once; a worker node killed mid-sweep costs no completed call twice; the shared
cache pays each common call once. Without the `ray` extra these are skipped, and
`--executor ray` exits 2 with the install command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.test_kill_resume import results

ray = pytest.importorskip("ray", reason="the Ray tests need the extra: pip install -e '.[ray]'")

from tests.runtime.ray_cluster import Cluster, ctrl_c_as_in_a_terminal, new_cluster  # noqa: E402

SKOPT = [sys.executable, "-c", "from skopt.ui.cli import main; main()"]
DEADLINE = 240.0
RECIPE = """skopt 1
model sim {
  provider    = sim
  concurrency = 8
}
env rules {
  kind = synthetic(rules = 8, items = 120, noise = 5%, seed = 3)
}
train {
  target    = sim
  optimizer = sim
  skill     = "skill.md"
  epochs    = 2
  minibatch = 6
}
sweep {
  lr         = [constant(2), constant(4)]
  batch_size = [18, 36]
  reflect    = [all, failures]
}
"""
CELLS = [f"{i:02d}" for i in range(1, 9)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    made = new_cluster()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the sweeps are launched from: the recipe and its skill, by relative paths."""
    folder = tmp_path_factory.mktemp("driver")
    (folder / "sweep.skopt").write_text(RECIPE)
    (folder / "skill.md").write_text("# House rules\n\nAnswer with the house code.\n")
    return folder


def skopt(driver: Path, *args: str, cluster: Cluster | None = None) -> subprocess.Popen[bytes]:
    """`skopt run sweep.skopt` launched from `driver` (joining `cluster`)."""
    joined = ["--executor", "ray", "--ray-address", cluster.address] if cluster else []
    return subprocess.Popen(
        ctrl_c_as_in_a_terminal([*SKOPT, "run", "sweep.skopt", "--quiet", *args, *joined]),
        cwd=driver,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cluster.env if cluster else None,
    )


def finished(process: subprocess.Popen[bytes], code: int = 0) -> str:
    out, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == code, err.decode(errors="replace")
    return out.decode()


@pytest.fixture(scope="module")
def local(driver: Path) -> Path:
    finished(skopt(driver, "--out", "local", "--parallel", "4"))
    return driver / "local"


def table(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((root / "sweep.json").read_text())["cells"]
    return rows


def calls(cell: Path) -> list[dict[str, Any]]:
    lines = (cell / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e["kind"] == "call"]


def paid(root: Path) -> int:
    """The sweep's paid calls: answered, and from neither a cell's nor the sweep's cache."""
    return sum(
        1 for c in CELLS for e in calls(root / "cells" / c) if e["ok"] and not e["cache_hit"]
    )


COMPARED = ("cell", "name", "status", "steps", "accepted", "rejected", "gate_best")


def test_a_sweep_on_two_nodes_is_the_local_sweep(
    cluster: Cluster, driver: Path, local: Path
) -> None:
    out = finished(skopt(driver, "--out", "on-ray", cluster=cluster))
    on_ray = driver / "on-ray"
    assert out == (on_ray / "sweep.md").read_text()
    for cell in CELLS:  # the same skills, summary and history, byte for byte
        assert results(on_ray / "cells" / cell) == results(local / "cells" / cell), cell
    assert [{k: r[k] for k in COMPARED} for r in table(on_ray)] == [
        {k: r[k] for k in COMPARED} for r in table(local)
    ]
    nodes = json.loads((on_ray / "ray.json").read_text())["cells"]
    assert sorted(nodes) == CELLS and len({n["node"] for n in nodes.values()}) == 2
    # every request the sweep asks is paid once, whichever cell asked it first
    assert paid(on_ray) == paid(local)


def test_the_shared_cache_pays_the_common_baseline_once(cluster: Cluster, local: Path) -> None:
    for root in (local, local.parent / "on-ray"):
        baselines = [
            [e for e in calls(root / "cells" / c) if e["phase"] == "baseline"] for c in CELLS
        ]
        each = len(baselines[0])
        assert each and sum(not e["cache_hit"] for b in baselines for e in b) == each
        assert sum(e["shared"] for b in baselines for e in b) == 7 * each


def test_one_budget_holds_with_8_cells_at_once(cluster: Cluster, driver: Path, local: Path) -> None:
    budget = paid(local) // 2  # about half of what the whole sweep pays
    out = driver / "half"
    process = skopt(driver, "--out", "half", "--set", f"budget.calls={budget}", cluster=cluster)
    finished(process, code=3)
    assert paid(out) <= budget
    rows = table(out)
    assert "budget" in {r["status"] for r in rows} and {r["status"] for r in rows} <= {
        "budget",
        "done",
    }
    for r in rows:  # valid artifacts: every cell that ran a step scored its test
        if r["steps"]:
            assert r["test_best"] is not None


def _running(cell: Path) -> bool:
    """Whether the cell is under way: a few steps journaled, and no end."""
    try:
        journal = (cell / "events.jsonl").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return journal.count("\n") > 40 and '"run_finished"' not in journal


def _lines(cell: Path) -> int:
    try:
        return (cell / "events.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_early_stopping_on_ray_decides_in_the_hub(cluster: Cluster, driver: Path) -> None:
    (driver / "asha.skopt").write_text(
        RECIPE.replace("sweep {", "sweep {\n  stop = asha(grace = 2, reduction = 2)")
    )
    done = subprocess.run(
        [*SKOPT, "run", "asha.skopt", "--quiet", "--out", "asha", "--executor", "ray",
         "--ray-address", cluster.address],
        cwd=driver, capture_output=True, env=cluster.env, timeout=DEADLINE, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    rungs = json.loads((driver / "asha" / "asha.json").read_text())["rungs"]
    assert sorted(rungs["2"]) == CELLS  # every cell reported its first rung to the hub
    for row in table(driver / "asha"):
        summary = json.loads((driver / "asha" / "cells" / row["cell"] / "summary.json").read_text())
        stopped = summary["stopped_early"]
        assert row["status"] == ("done" if stopped is None else f"stopped early (step {stopped})")
        assert stopped is None or (str(stopped) in rungs and row["test_best"] is not None)


def test_an_interrupted_sweep_on_ray_resumes_on_ray(
    cluster: Cluster, driver: Path, local: Path
) -> None:
    slow = "sim.latency=0.05s"  # long enough that Ctrl-C lands before the sweep ends
    process = skopt(driver, "--out", "stopped", "--set", slow, cluster=cluster)
    stopped = driver / "stopped"
    deadline = time.monotonic() + DEADLINE
    while sum(_lines(stopped / "cells" / c) > 40 for c in CELLS) < 2:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # Ctrl-C: every running cell journals it and stops
    finished(process, code=130)
    ended = [_outcomes(stopped / "cells" / c) for c in CELLS]
    assert "interrupted" in {o[-1] for o in ended if o}
    resumed = subprocess.run(
        [*SKOPT, "run", "--resume", "stopped", "--quiet", "--executor", "ray",
         "--ray-address", cluster.address],
        cwd=driver, capture_output=True, env=cluster.env, timeout=DEADLINE, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr.decode()
    for cell in CELLS:
        assert results(stopped / "cells" / cell) == results(local / "cells" / cell), cell
    assert paid(stopped) == paid(local)


def _outcomes(cell: Path) -> list[str]:
    try:
        lines = (cell / "events.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [e["outcome"] for e in map(json.loads, lines) if e["kind"] == "run_finished"]


def test_a_worker_node_killed_mid_sweep(cluster: Cluster, driver: Path, local: Path) -> None:
    # the last test of the module: it ends the module's cluster's worker node
    slow = "sim.latency=0.03s"  # every call 30 ms: the sweep takes long enough to be cut
    process = skopt(driver, "--out", "cut", "--set", slow, cluster=cluster)
    cut = driver / "cut"
    deadline = time.monotonic() + DEADLINE
    while sum(_running(cut / "cells" / c) for c in CELLS) < 4:  # 4 at once: on both nodes
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    cluster.kill_worker()
    finished(process)
    assert [r["status"] for r in table(cut)] == ["done"] * 8
    for cell in CELLS:
        assert results(cut / "cells" / cell) == results(local / "cells" / cell), cell
    resumed = [
        c for c in CELLS if '"resumed":true' in (cut / "cells" / c / "events.jsonl").read_text()
    ]
    assert resumed  # the cells the dead node ran were continued from their folders ...
    for cell in resumed:  # ... paying none of their completed calls again
        keys = [e["key"] for e in calls(cut / "cells" / cell) if e["ok"] and not e["cache_hit"]]
        assert len(keys) == len(set(keys)), cell
    # Across the sweep, only an answer that arrived just before its worker died, which another
    # cell asked for before the retry shared it, can be paid twice: at most what the dead cells
    # had in flight (their model's concurrency each).
    assert paid(local) <= paid(cut) <= paid(local) + 8 * len(resumed)
    nodes = json.loads((cut / "ray.json").read_text())["cells"]
    assert len({nodes[c]["node"] for c in resumed}) == 1  # ... on the node that was left

"""Sweeps on the simulator: every cell runs in its own ordinary run folder, side by side; the
comparison table; the worst cell's exit; and --resume of a whole sweep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import AshaStop, Plan, SweepSettings
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.errors import CallFailed
from skopt.runtime.executors import local as local_executor
from skopt.runtime.exits import Exit, Outcome
from skopt.runtime.report import report
from skopt.runtime.run import Display, resume, start
from skopt.runtime.sweep import cell_plan, is_sweep, resume_sweep, run_sweep
from skopt.ui.cli import main
from tests.conftest import RECIPES
from tests.runtime.test_run import StopAfter, events, results

CELLS = ["01", "02", "03", "04"]


def sweep_plan(*sets: str) -> Plan:
    result = compile_recipe(str(RECIPES / "sweep.skopt"), list(sets))
    assert result.plan is not None, result.diagnostics
    return result.plan


def table(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((root / "sweep.json").read_text())["cells"]
    return rows


def paid(folder: Path) -> int:
    return sum(1 for e in events(folder) if e["ok"] and not e["cache_hit"])


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Plan, Path, Outcome]:
    """The sweep recipe run once, three cells at a time, for the tests that only read it."""
    plan = sweep_plan()
    root = tmp_path_factory.mktemp("sweep") / "root"
    return plan, root, run_sweep(plan, root, parallel=3)


def test_every_cell_runs_and_the_table_compares_them(
    swept: tuple[Plan, Path, Outcome],
) -> None:
    plan, root, outcome = swept
    assert outcome.exit is Exit.OK, outcome.message
    assert is_sweep(root)
    rows = table(root)
    assert [r["cell"] for r in rows] == CELLS
    assert [r["name"] for r in rows] == [
        "lr = constant(4), batch_size = 20",
        "lr = constant(4), batch_size = 40",
        "lr = cosine(max = 8, min = 2), batch_size = 20",
        "lr = cosine(max = 8, min = 2), batch_size = 40",
    ]
    for row, job in zip(rows, plan.jobs, strict=True):
        cell = root / "cells" / row["cell"]
        summary = json.loads((cell / "summary.json").read_text())
        assert row["status"] == "done" and row["exit"] == 0
        assert row["steps"] == row["steps_planned"] == job.schedule.total_steps
        assert (row["accepted"], row["rejected"]) == (summary["accepted"], summary["rejected"])
        assert row["gate_best"] == summary["gate"]["best"]
        assert (row["test_initial"], row["test_best"]) == (
            summary["test"]["initial"],
            summary["test"]["best"],
        )
        assert row["test_best"] > row["test_initial"]
        assert row["paid_calls"] == paid(cell) > 0
    markdown = (root / "sweep.md").read_text()
    assert all(f"| {c} | {r['name']} |" in markdown for c, r in zip(CELLS, rows, strict=True))


def test_each_cell_is_an_ordinary_run_folder(swept: tuple[Plan, Path, Outcome]) -> None:
    plan, root, _ = swept
    for cell, job in zip(CELLS, plan.jobs, strict=True):
        folder = root / "cells" / cell
        saved = Plan.model_validate_json((folder / "plan.json").read_text())
        assert [j.name for j in saved.jobs] == [job.name]
        assert report(folder).status == "finished"
        before = (folder / "events.jsonl").read_bytes()
        assert resume(folder).exit is Exit.OK  # finished: nothing left to do
        assert (folder / "events.jsonl").read_bytes() == before


def test_cells_equal_running_each_cell_alone(
    swept: tuple[Plan, Path, Outcome], tmp_path: Path
) -> None:
    plan, root, _ = swept
    for cell, job in zip(CELLS, plan.jobs, strict=True):
        alone = tmp_path / cell
        assert start(cell_plan(plan, job), RunFolder(alone)).exit is Exit.OK
        assert (alone / "best_skill.md").read_bytes() == (
            root / "cells" / cell / "best_skill.md"
        ).read_bytes()
        assert results(alone) == results(root / "cells" / cell)


def test_one_budget_for_the_whole_sweep(tmp_path: Path) -> None:
    # 700 calls for the whole sweep (its worst case is 3,680): cells stop cleanly before a step
    # the rest cannot pay, each that started still scores its test, none spends past it
    outcome = run_sweep(sweep_plan("budget.calls=700"), tmp_path / "budget", parallel=4)
    assert outcome.exit is Exit.BUDGET
    rows = table(tmp_path / "budget")
    assert sum(r["paid_calls"] for r in rows) <= 700
    assert "budget" in [r["status"] for r in rows]
    for r in rows:
        cell = tmp_path / "budget" / "cells" / r["cell"]
        ended = [e for e in map(json.loads, (cell / "events.jsonl").read_text().splitlines())
                 if e["kind"] == "run_finished"]  # fmt: skip
        assert ended[-1]["outcome"] in ("done", "budget")
        if r["steps"]:
            assert r["test_initial"] is not None and r["test_best"] is not None


def test_the_shared_cache_pays_the_common_baseline_once(
    swept: tuple[Plan, Path, Outcome],
) -> None:
    _, root, _ = swept
    baselines = [
        [e for e in events(root / "cells" / cell) if e["phase"] == "baseline"] for cell in CELLS
    ]
    each = len(baselines[0])
    assert each > 0 and all(len(b) == each for b in baselines)  # the same calls in every cell
    paid_once = sum(1 for b in baselines for e in b if not e["cache_hit"])
    assert paid_once == each  # ... paid once for the whole sweep
    shared = sum(1 for b in baselines for e in b if e["shared"])
    assert shared == 3 * each
    rows = table(root)
    assert sum(r["shared_calls"] for r in rows) >= shared
    assert "from the sweep's cache" in (root / "sweep.md").read_text()


@pytest.mark.parametrize(
    ("exits", "worst"),
    [
        ([Exit.OK] * 4, Exit.OK),
        ([Exit.OK, Exit.BUDGET, Exit.OK, Exit.OK], Exit.BUDGET),
        ([Exit.BUDGET, Exit.FAILED, Exit.OK, Exit.BUDGET], Exit.FAILED),
    ],
)
def test_exit_aggregation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exits: list[Exit], worst: Exit
) -> None:
    plan = sweep_plan()
    by_name = {job.name: exit for job, exit in zip(plan.jobs, exits, strict=True)}

    async def fake(
        plan: Plan,
        folder: RunFolder,
        show: Display | None = None,
        no_cache: bool = False,
        shared: object = None,
    ) -> Outcome:
        exit = by_name[plan.jobs[0].name]
        if exit is Exit.FAILED:  # a failing cell does not stop the others
            raise CallFailed("the provider said no", retryable=False)
        return Outcome(exit, folder.root, exit.name)

    monkeypatch.setattr(local_executor, "start_job", fake)
    outcome = run_sweep(plan, tmp_path / "root", parallel=4)
    assert outcome.exit is worst
    rows = table(tmp_path / "root")
    assert [r["exit"] for r in rows] == [int(e) for e in exits]
    failed = [r for r in rows if r["status"] == "failed"]
    assert all(r["message"] == "the provider said no" for r in failed)
    assert ("failed: the provider said no" in (tmp_path / "root" / "sweep.md").read_text()) == (
        worst is Exit.FAILED
    )


def test_an_interrupted_sweep_resumes_every_unfinished_cell(
    swept: tuple[Plan, Path, Outcome], tmp_path: Path
) -> None:
    plan, whole, _ = swept
    root = tmp_path / "cut"

    def stop_in_cell_03(label: str, plan: Plan) -> Display | None:
        return StopAfter(300) if label == "03" else None

    with pytest.raises(KeyboardInterrupt):
        run_sweep(plan, root, stop_in_cell_03, parallel=2)
    statuses = [r["status"] for r in table(root)]
    assert statuses[2] != "done" and statuses.count("done") >= 1  # 03 waited for a free slot
    outcome = resume_sweep(root, parallel=2)
    assert outcome.exit is Exit.OK, outcome.message
    for cell in CELLS:
        assert results(root / "cells" / cell) == results(whole / "cells" / cell)
        assert paid(root / "cells" / cell) == paid(whole / "cells" / cell)  # none paid twice
    assert [r["status"] for r in table(root)] == ["done"] * 4


def test_cli_runs_a_sweep_prints_the_table_and_resumes_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    recipe = str(RECIPES / "sweep.skopt")
    result = CliRunner().invoke(main, ["run", recipe, "--out", str(root), "--parallel", "4"])
    assert result.exit_code == 0, result.stderr
    assert "| 04 | lr = cosine(max = 8, min = 2), batch_size = 40 |" in result.stdout
    assert "[03] step 12/12" in result.stderr  # each cell's progress says whose it is
    assert "sweep of 4 cells: 4 done" in result.stderr
    result = CliRunner().invoke(main, ["run", "--resume", str(root), "--quiet"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (root / "sweep.md").read_text()


def test_asha_stops_the_cells_that_lag_at_a_rung(tmp_path: Path) -> None:
    # one cell at a time, so the order in which cells reach each rung is the grid's
    plan = sweep_plan()
    stop = AshaStop(grace=2, reduction=2)
    plan = plan.model_copy(update={"sweep": SweepSettings(stop=stop)})
    root = tmp_path / "asha"
    outcome = run_sweep(plan, root, parallel=1)
    assert outcome.exit is Exit.OK, outcome.message
    rows = table(root)
    rungs = json.loads((root / "asha.json").read_text())["rungs"]
    reported: dict[str, list[float]] = {}
    for row, job in zip(rows, plan.jobs, strict=True):  # replay each cell's rung reports
        summary = json.loads((root / "cells" / row["cell"] / "summary.json").read_text())
        total = job.schedule.total_steps
        stopped = None
        for h in summary["history"]:
            step = h["step"]
            if step in (2, 4, 8) and step < total:
                assert rungs[str(step)][row["cell"]] == h["score"]
                at = reported.setdefault(str(step), [])
                at.append(h["score"])
                keep = sorted(at, reverse=True)[max(1, len(at) // 2) - 1]
                if h["score"] < keep:
                    stopped = step
                    break
        assert summary["stopped_early"] == stopped, row["cell"]
        if stopped is not None:
            assert row["status"] == f"stopped early (step {stopped})"
            assert row["steps"] == stopped < job.schedule.total_steps
            assert row["test_best"] is not None  # its test is still scored, its best skill kept
            assert (root / "cells" / row["cell"] / "best_skill.md").exists()
        else:
            assert row["status"] == "done" and row["steps"] == job.schedule.total_steps
    assert any(r["status"].startswith("stopped early") for r in rows)

"""The readable plan of every example recipe, snapshotted as plain text."""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from skopt.compiler.compile import compile_recipe
from skopt.ui.plan_view import lr_text, render_plan
from tests.conftest import RECIPES, ROOT

JOBS = ["demo", "openai", "anthropic", "sweep", "sleep"]


@pytest.mark.parametrize("name", JOBS)
def test_plan_text(
    name: str, snapshot_txt: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = compile_recipe(f"recipes/{name}.skopt")
    assert result.plan is not None, result.diagnostics
    assert render_plan(result.plan) + "\n" == snapshot_txt


def test_library_has_no_job() -> None:
    result = compile_recipe(str(RECIPES / "base.skopt"))
    assert result.plan is not None and result.plan.job_kind == "none"
    assert "library for imports" in render_plan(result.plan)


def test_lr_by_step_of_a_long_plan_is_one_short_line(tmp_path: Path) -> None:
    """10,000 steps of a slowly changing schedule: runs, not 10,000 numbers."""
    recipe = tmp_path / "long.skopt"
    recipe.write_text(
        "skopt 1\nmodel m { provider = sim }\nenv e { kind = synthetic(items = 100) }\n"
        "train { target = m, optimizer = m, skill = empty, batch_size = 60, epochs = 10_000\n"
        "  lr = cosine(max = 4, min = 2), slow_update = off, meta_skill = off }\n"
    )
    result = compile_recipe(str(recipe))
    assert result.plan is not None, result.diagnostics
    (line,) = [x for x in render_plan(result.plan).splitlines() if x.startswith("lr by step")]
    assert line == "lr by step  4 ×3334, 3 ×3333, 2 ×3333"


def test_lr_by_step_with_many_runs_shows_both_ends() -> None:
    rates = [*range(40, 0, -1), None, None]
    assert lr_text(rates) == (
        "40, 39, 38, 37, 36, 35, 34, 33, … 25 more runs …, 7, 6, 5, 4, 3, 2, 1, auto ×2"
    )

"""The readable plan of every example recipe, snapshotted as plain text."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from skopt.compiler.compile import compile_recipe
from skopt.ui.plan_view import render_plan
from tests.conftest import RECIPES, ROOT

JOBS = ["demo", "openai", "anthropic", "sweep"]


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

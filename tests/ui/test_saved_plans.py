"""Saved plans (`skopt plan -o`): they run from any folder, a `--set` that cannot apply to one
is an error, and the fix a stale plan suggests works when pasted."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.conftest import demo_project
from tests.ui.invoke import run


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the demo (recipe, the recipe it imports, its skill) in tmp/project; the
    current folder is tmp."""
    folder = demo_project(tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    return folder


def steps(folder: Path) -> int:
    return int(json.loads((folder / "summary.json").read_text())["steps"])


def test_a_saved_plan_runs_from_any_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("plan", "project/demo.skopt", "-o", "project/plan.json")[0] == 0
    saved = json.loads((project / "plan.json").read_text())
    assert saved["recipe"] == "demo.skopt"  # relative to the plan file
    code, _, err = run("run", "project/plan.json", "--out", "from-parent", "--quiet")
    assert code == 0, err
    monkeypatch.chdir(project)
    code, _, err = run("run", "plan.json", "--out", "from-inside", "--quiet")
    assert code == 0, err
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run("run", "../project/plan.json", "--out", "r", "--quiet")
    assert code == 0, err
    assert steps(project.parent / "from-parent") == steps(project / "from-inside") == 9


def test_a_flag_that_cannot_apply_to_a_saved_plan_is_an_error(project: Path) -> None:
    assert run("plan", "project/demo.skopt", "-o", "project/plan.json")[0] == 0
    code, _, err = run("run", "project/plan.json", "--set", "train.epochs=1", "--out", "r")
    assert code == 2
    assert "--set cannot change a saved plan" in err
    assert "skopt plan RECIPE --set train.epochs=1 -o project/plan.json" in err
    assert not (project.parent / "r").exists()


@pytest.mark.parametrize("sets", [[], ["train.epochs=2"]])
def test_the_fix_a_stale_plan_suggests_works_when_pasted(
    project: Path, monkeypatch: pytest.MonkeyPatch, sets: list[str]
) -> None:
    flags = [part for s in sets for part in ("--set", s)]
    monkeypatch.chdir(project)
    assert run("plan", "demo.skopt", *flags, "-o", "plan.json")[0] == 0
    monkeypatch.chdir(project.parent)
    recipe = project / "demo.skopt"
    recipe.write_text(recipe.read_text().replace("batch_size = 24", "batch_size = 36"))
    code, _, err = run("run", "project/plan.json", "--out", "r")
    assert code == 4
    assert "the recipe (or a file it imports, or a --set flag) changed" in err
    fix = next(line for line in err.splitlines() if line.startswith("make it again with: "))
    words = shlex.split(fix.removeprefix("make it again with: "))
    assert words[:2] == ["skopt", "plan"]
    assert run(*words[1:])[0] == 0  # pasted as it is
    code, _, err = run("run", "project/plan.json", "--out", "r", "--quiet")
    assert code == 0, err
    assert steps(project.parent / "r") == (4 if sets else 6)

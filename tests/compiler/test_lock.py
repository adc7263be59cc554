"""Saved plans: what they record, and `stale` saying exactly what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skopt.compiler.compile import compile_recipe, stale
from skopt.compiler.plan import Plan

RECIPE = """\
skopt 1
model m { provider = sim }
env e {
  kind = qa
  data = "items.jsonl"
}
train {
  target = m
  optimizer = m
  skill = "skill.md"
  epochs = 1
}
"""


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    rows = [{"input": f"q{i}", "answer": str(i)} for i in range(30)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "skill.md").write_text("# Skill\n")
    path = tmp_path / "r.skopt"
    path.write_text(RECIPE)
    return path


def saved(recipe: Path, sets: tuple[str, ...] = ()) -> Plan:
    result = compile_recipe(str(recipe), sets)
    assert result.plan is not None, result.diagnostics
    # a plan survives a round trip through its JSON file
    return Plan.model_validate_json(result.plan.model_dump_json())


def test_fresh_plan_is_not_stale(recipe: Path) -> None:
    assert stale(saved(recipe)) == []


def test_changed_skill(recipe: Path) -> None:
    plan = saved(recipe)
    (recipe.parent / "skill.md").write_text("# Skill\nBe brief.\n")
    assert stale(plan) == ["the initial skill changed"]


def test_changed_data_moves_the_split(recipe: Path) -> None:
    plan = saved(recipe)
    with (recipe.parent / "items.jsonl").open("a") as f:
        f.write(json.dumps({"input": "new", "answer": "x"}) + "\n")
    assert stale(plan) == ["the env's data changed", "the split assignment changed"]


def test_changed_recipe(recipe: Path) -> None:
    plan = saved(recipe)
    recipe.write_text(RECIPE.replace("epochs = 1", "epochs = 2"))
    assert stale(plan) == ["the recipe (or a file it imports, or a --set flag) changed"]


def test_set_flags_are_part_of_the_plan(recipe: Path) -> None:
    plan = saved(recipe, ("train.epochs=2",))
    assert plan.sets == ["train.epochs=2"] and plan.jobs[0].train.epochs == 2
    assert stale(plan) == []


def test_broken_recipe(recipe: Path) -> None:
    plan = saved(recipe)
    recipe.write_text("train {")
    assert stale(plan) == ["the recipe no longer compiles"]

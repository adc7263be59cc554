"""The Python API (api.py, re-exported from the package root): compile, run, resume, evaluate
and open_run on real recipes and real run folders, with the simulator (instant, model-free)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

import skopt
import skopt.api
from skopt.runtime.evaluate import HARNESSES, SPLITS
from skopt.runtime.events import Event, RunFinished, RunStarted, StepFinished
from tests.conftest import RECIPES

DEMO = RECIPES / "demo.skopt"
SKOPT = str(Path(sys.executable).with_name("skopt"))
BAD = """skopt 1
model sim { provider = sim }
env rules {
  kind = synthetic(rules = 8, items = 120, noise = 5%, seed = 1)
}
train {
  target    = sim
  optimzer  = sim
  skill     = "skill.md"
  epochs    = 0
}
"""


def summary_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return data


def matches_summary(scores: skopt.Scores | None, folder: Path) -> None:
    summary = summary_of(folder)
    assert scores is not None
    gate, test = summary["gate"], summary["test"]
    assert (scores.initial, scores.best, scores.final) == (
        gate["initial"],
        gate["best"],
        gate["final"],
    )
    assert (scores.test_initial, scores.test_best) == (test["initial"], test["best"])


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[skopt.RunResult, list[Event]]:
    """The demo, run once through the API into a new folder, with the events it told."""
    told: list[Event] = []
    out = tmp_path_factory.mktemp("api") / "demo"
    result = skopt.run(skopt.compile(DEMO), out, progress=lambda _label, e: told.append(e))
    return result, told


def test_compile_gives_the_plan_of_a_good_recipe() -> None:
    plan = skopt.compile(DEMO)
    assert isinstance(plan, skopt.Plan)
    assert plan.recipe == str(DEMO) and len(plan.jobs) == 1
    changed = skopt.compile(DEMO, sets=["train.epochs=1"])
    assert changed.jobs[0].schedule.total_steps < plan.jobs[0].schedule.total_steps


def test_a_bad_recipe_raises_one_error_that_renders_as_skopt_check_prints_it(
    tmp_path: Path,
) -> None:
    recipe = tmp_path / "bad.skopt"
    recipe.write_text(BAD, encoding="utf-8")
    (tmp_path / "skill.md").write_text("# skill\n", encoding="utf-8")
    with pytest.raises(skopt.RecipeError) as raised:
        skopt.compile(recipe)
    found = [(d.message, d.span.line, d.span.col) for d in raised.value.diagnostics]
    assert found == [
        ("train needs 'optimizer'", 6, 1),
        ("unknown key 'optimzer' in train", 8, 3),
        ("0 is out of range", 10, 15),
    ]
    assert all(d.is_error for d in raised.value.diagnostics)
    assert raised.value.sources[str(recipe)] == BAD
    checked = subprocess.run(
        [SKOPT, "check", str(recipe)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert checked.returncode == skopt.Exit.USAGE
    assert checked.stderr == f"{raised.value}\n\n{recipe}: failed (3 errors, 0 warnings)\n"
    assert "did you mean 'optimizer'?" in str(raised.value)


def test_sets_must_be_a_list_not_one_string() -> None:
    with pytest.raises(TypeError):
        skopt.compile(DEMO, sets="train.epochs=1")


def test_run_ends_in_its_folder_with_the_scores_of_its_summary(
    demo_run: tuple[skopt.RunResult, list[Event]],
) -> None:
    result, _ = demo_run
    assert result.ok and result.exit is skopt.Exit.OK and result.status == "finished"
    assert result.message.startswith("done")
    matches_summary(result.scores, result.folder)
    assert result.scores is not None and result.scores.best == 1.0  # the demo learns its rules
    journal = skopt.open_run(result.folder).journal
    paid = [c for c in journal.calls if c.ok and not c.cache_hit]
    assert (result.calls, result.paid_calls) == (len(journal.calls), len(paid))
    assert result.paid_calls > 0 and result.usd == 0.0  # the simulator is free
    assert result.cells == ()


def test_run_tells_progress_every_event_its_journal_records(
    demo_run: tuple[skopt.RunResult, list[Event]],
) -> None:
    result, told = demo_run
    assert isinstance(told[0], RunStarted) and isinstance(told[-1], RunFinished)
    assert told == skopt.open_run(result.folder).events


def test_run_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    mine = tmp_path / "notes.txt"
    mine.write_text("mine\n", encoding="utf-8")
    with pytest.raises(skopt.FolderRefused, match="not empty"):
        skopt.run(skopt.compile(DEMO), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert mine.read_text(encoding="utf-8") == "mine\n"


def test_run_refuses_a_folder_that_holds_a_run(
    demo_run: tuple[skopt.RunResult, list[Event]],
) -> None:
    with pytest.raises(skopt.FolderRefused, match="already holds a run"):
        skopt.run(skopt.compile(DEMO), demo_run[0].folder)


def test_evaluate_scores_the_trained_skill_as_the_run_did(
    demo_run: tuple[skopt.RunResult, list[Event]],
) -> None:
    result, _ = demo_run
    plan = skopt.compile(DEMO)
    best = result.folder / "best_skill.md"
    scored = skopt.evaluate(plan, best)  # a path: the file is read
    assert isinstance(scored, skopt.Evaluation)
    assert scored.split == "test" and scored.simulation and scored.items > 0
    assert scored.hard == summary_of(result.folder)["test"]["best"]
    same = skopt.evaluate(plan, best.read_text(encoding="utf-8"))  # a str: the skill's text
    assert (same.hard, same.soft) == (scored.hard, scored.soft)
    assert skopt.evaluate(plan, "", split="valid").hard < scored.hard
    with pytest.raises(skopt.CannotEvaluate, match="unknown split"):
        skopt.evaluate(plan, "", split="dev")  # type: ignore[arg-type]


def test_the_splits_and_harnesses_the_api_names_are_the_runtimes() -> None:
    assert typing.get_args(skopt.api.Split) == SPLITS
    assert typing.get_args(skopt.api.Harness) == HARNESSES


def test_open_run_reads_a_finished_run(demo_run: tuple[skopt.RunResult, list[Event]]) -> None:
    folder = demo_run[0].folder
    record = skopt.open_run(str(folder))
    assert record.status == "finished" and record.plan.recipe == str(DEMO)
    assert record.scores == demo_run[0].scores
    assert record.summary == summary_of(folder)
    assert record.best_skill == (folder / "best_skill.md").read_text(encoding="utf-8")
    assert record.state is not None and record.state.best_skill == record.best_skill
    assert len(record.journal.steps) == record.report.steps_done == record.summary["steps"]


def test_open_run_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(skopt.NotARunFolder, match="not a run folder"):
        skopt.open_run(tmp_path)


def test_an_interrupted_run_is_read_back_and_resumed(tmp_path: Path) -> None:
    def interrupt(_label: str, event: Event) -> None:
        if isinstance(event, StepFinished) and event.result.step == 2:
            raise KeyboardInterrupt  # what Ctrl-C does, after step 2 is journaled

    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        skopt.run(skopt.compile(DEMO), out, progress=interrupt)
    stopped = skopt.open_run(out)
    assert stopped.status == "interrupted" and stopped.summary is None
    assert [s.result.step for s in stopped.journal.steps] == [1, 2]
    resumed = skopt.resume(out)
    assert resumed.status == "finished" and resumed.exit is skopt.Exit.OK
    matches_summary(resumed.scores, out)
    assert skopt.open_run(out).report.steps_done == stopped.report.steps_planned


def test_a_sweep_runs_every_cell(tmp_path: Path) -> None:
    plan = skopt.compile(RECIPES / "sweep.skopt")
    result = skopt.run(plan, tmp_path / "sweep", parallel=2)
    assert result.exit is skopt.Exit.OK and result.status == "finished"
    assert result.scores is None and len(result.cells) == len(plan.jobs) > 1
    for cell in result.cells:
        assert cell.status == "finished" and cell.folder.parent == tmp_path / "sweep" / "cells"
        matches_summary(cell.scores, cell.folder)
    assert result.paid_calls == sum(c.paid_calls for c in result.cells)
    with pytest.raises(skopt.NotARunFolder, match="is a sweep"):
        skopt.open_run(result.folder)


def test_every_name_of_the_package_root_is_the_api_and_typed() -> None:
    assert skopt.__all__ == skopt.api.__all__
    for name in skopt.__all__:
        value = getattr(skopt, name)
        assert value is getattr(skopt.api, name), name
        if callable(value) and not isinstance(value, type):
            hints = typing.get_type_hints(value)
            assert "return" in hints, name
    assert typing.get_type_hints(skopt.RunResult)["exit"] is skopt.Exit
    with pytest.raises(AttributeError):
        _ = skopt.no_such_name  # type: ignore[attr-defined]


def test_importing_a_layer_does_not_load_the_api() -> None:
    code = "import sys, skopt.runtime.run; print('skopt.api' in sys.modules, 'lark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]

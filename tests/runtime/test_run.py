"""End to end on the simulator: the demo trains, the plan's ranges hold, and a run
interrupted at any point resumes to byte-identical results without paying twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import Job, Plan
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.cache import ResponseCache
from skopt.runtime.events import BaselineScored, CallEvent, Event, RunStarted
from skopt.runtime.exits import Exit
from skopt.runtime.journal import read_journal
from skopt.runtime.run import resume, start
from tests.conftest import RECIPES, call_events


def demo() -> Plan:
    result = compile_recipe(str(RECIPES / "demo.skopt"))
    assert result.plan is not None, result.diagnostics
    return result.plan


def results(folder: Path) -> dict[str, str]:
    """What must be identical between runs: every skill version, the best skill, the summary."""
    skills = sorted((folder / "skills").glob("*.md"))
    files = [*skills, folder / "best_skill.md", folder / "summary.json"]
    return {f.name: f.read_text() for f in files}


def events(folder: Path) -> list[dict[str, object]]:
    return call_events(folder)


def test_demo_trains_a_better_skill(tmp_path: Path) -> None:
    outcome = start(demo(), RunFolder(tmp_path / "run"))
    assert outcome.exit is Exit.OK, outcome.message
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["simulation"] is True
    assert summary["accepted"] >= 1 and summary["rejected"] >= 1  # the gate has real work
    assert summary["test"]["best"] > summary["test"]["initial"]
    assert (tmp_path / "run" / "best_skill.md").read_text() != ""


SIMULATOR_RECIPES = ["demo", "sweep"]


@pytest.mark.parametrize("name", SIMULATOR_RECIPES)
def test_actual_calls_fall_inside_the_plan(tmp_path: Path, name: str) -> None:
    result = compile_recipe(str(RECIPES / f"{name}.skopt"))
    assert result.plan is not None, result.diagnostics
    for number, job in enumerate(result.plan.jobs):
        cell = result.plan.model_copy(update={"jobs": [job]})
        assert start(cell, RunFolder(tmp_path / str(number))).exit is Exit.OK
        assert_calls_inside(job, tmp_path / str(number))


def assert_calls_inside(job: Job, folder: Path) -> Counter[tuple[str, str]]:
    """Every (phase, role)'s calls inside the plan's [min, max]; the counts."""
    actual = Counter((e["phase"], e["role"]) for e in events(folder))
    totals = {(t.phase, t.role): t.calls for t in job.totals}
    for key, planned in totals.items():
        count = actual.get(key, 0)
        assert planned.min <= count <= planned.max, (job.name, key, count, planned)
    assert set(actual) <= set(totals)
    return actual


class StopAfter:
    """A display that interrupts the run (like Ctrl-C) after a number of calls."""

    def __init__(self, calls: int) -> None:
        self.left = calls

    def emit(self, event: Event) -> None:
        if not isinstance(event, CallEvent):
            return
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt


@pytest.mark.parametrize("after", [1, 40, 137, 400])
def test_interrupted_run_resumes_to_identical_results(tmp_path: Path, after: int) -> None:
    plan = demo()
    start(plan, RunFolder(tmp_path / "whole"))
    cut = StopAfter(after)
    with pytest.raises(KeyboardInterrupt):
        start(plan, RunFolder(tmp_path / "cut"), cut)
    paid_before = sum(1 for e in events(tmp_path / "cut") if not e["cache_hit"] and e["ok"])
    stopped = read_journal(tmp_path / "cut" / "events.jsonl")
    outcome = resume(tmp_path / "cut")
    assert outcome.exit is Exit.OK
    assert results(tmp_path / "cut") == results(tmp_path / "whole")
    # the journal says where the run resumed: the first step it had not finished
    first, again = read_journal(tmp_path / "cut" / "events.jsonl").of(RunStarted)
    assert (first.resumed, again.resumed) == (False, True)
    baseline_done = stopped.last(BaselineScored) is not None
    done = stopped.steps[-1].result.step if stopped.steps else 0
    assert again.step == done + baseline_done
    paid = sum(1 for e in events(tmp_path / "cut") if not e["cache_hit"] and e["ok"])
    whole = sum(1 for e in events(tmp_path / "whole") if not e["cache_hit"] and e["ok"])
    assert paid == whole  # no completed call was paid twice
    assert paid_before <= whole


def test_budget_stop_before_a_step_it_cannot_pay(tmp_path: Path) -> None:
    result = compile_recipe(str(RECIPES / "demo.skopt"), ["budget.calls=300"])
    assert result.plan is not None, result.diagnostics
    assert any("budget covers" in d.message for d in result.diagnostics)
    outcome = start(result.plan, RunFolder(tmp_path / "run"))
    assert outcome.exit is Exit.BUDGET, outcome.message
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert 0 < len(state["history"]) < result.plan.jobs[0].schedule.total_steps
    assert (tmp_path / "run" / "best_skill.md").read_text() == state["best_skill"]
    paid = sum(1 for e in events(tmp_path / "run") if e["ok"] and not e["cache_hit"])
    assert paid <= 300


def test_an_env_prompt_replaces_the_rollout_message(tmp_path: Path) -> None:
    template = tmp_path / "ask.j2"
    template.write_text("HOUSE DESK: {{ input }}\nReply as <answer>CODE</answer>.\n")
    recipe = tmp_path / "r.skopt"
    text = (RECIPES / "demo.skopt").read_text()
    recipe.write_text(
        text.replace('import "base.skopt"', f'import "{RECIPES / "base.skopt"}"')
        .replace('"skills/demo.md"', f'"{RECIPES / "skills" / "demo.md"}"')
        .replace("  split {", f'  prompt = "{template}"\n  split {{')
    )
    result = compile_recipe(str(recipe))
    assert result.plan is not None, result.diagnostics
    assert start(result.plan, RunFolder(tmp_path / "run")).exit is Exit.OK
    asked = ResponseCache(tmp_path / "run" / "cache.sqlite").requests()
    rollouts = [r for r in asked if "<task>" not in r]
    assert rollouts and all("HOUSE DESK: Case" in r for r in rollouts)


def test_answers_from_an_earlier_runs_cache_are_free(tmp_path: Path) -> None:
    """A run seeded with an earlier run's cache books every answer from it as a cache hit,
    also after an interrupt and --resume: it paid for none of them."""
    plan = demo()
    assert start(plan, RunFolder(tmp_path / "earlier")).exit is Exit.OK
    with pytest.raises(KeyboardInterrupt):
        start(plan, RunFolder(tmp_path / "later"), StopAfter(200), cache_from=tmp_path / "earlier")
    assert resume(tmp_path / "later").exit is Exit.OK
    later = events(tmp_path / "later")
    assert later and all(e["cache_hit"] for e in later)
    assert results(tmp_path / "later") == results(tmp_path / "earlier")

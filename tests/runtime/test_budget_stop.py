"""A budget stop, for every kind of limit: the run stops before a step it cannot pay (no call of
a partial step reaches the journal), still scores the initial and the best skill on the test
split (its worst case was held from the start), and says which limit stopped it."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

from skopt.compiler import budget as budgets
from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import Job, Plan, Rollout
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.exits import Exit
from skopt.runtime.journal import read_journal
from skopt.runtime.run import resume, start
from tests.conftest import RECIPES, call_events

PRICED = ["sim.price.input=$1", "sim.price.output=$2"]  # the simulator is free otherwise
DONE_STEPS = 2  # the budgets below pay for the baseline, the final test and two steps


def demo(*sets: str) -> Plan:
    result = compile_recipe(str(RECIPES / "demo.skopt"), [*PRICED, *sets])
    assert result.plan is not None, result.diagnostics
    return result.plan


def worst_by_step(job: Job, plan: Plan) -> dict[int, budgets.Worst]:
    """The plan's worst case of each unit: 0 the baseline, 1..T the steps (with the boundary
    phases before them), T + 1 the final test."""
    models = {m.name: m for m in plan.models}
    by_step: dict[int, budgets.Worst] = {}
    for phase in job.phases:
        by_step[phase.step] = by_step.get(phase.step, budgets.Worst()) + budgets.worst(
            phase, models
        )
    return by_step


def amount(worst: budgets.Worst, kind: str) -> float:
    return float({"calls": worst.calls, "tokens": worst.tokens, "usd": worst.usd}[kind])


def two_steps_and_a_half(job: Job, plan: Plan, kind: str) -> tuple[str, float]:
    """A limit (as a --set flag, and its value) that pays the worst case of the baseline, the
    final test and 2.5 steps."""
    by_step = worst_by_step(job, plan)
    last = job.schedule.total_steps + 1
    paid = by_step[0] + by_step[last] + sum((by_step[s] for s in (1, 2)), budgets.Worst())
    value = amount(paid, kind) + amount(by_step[3], kind) / 2
    flag = f"budget.usd=${value:.6f}" if kind == "usd" else f"budget.{kind}={int(value)}"
    return flag, round(value, 6) if kind == "usd" else int(value)


def spent(folder: Path, kind: str, phases: set[str] | None = None) -> float:
    paid = [e for e in call_events(folder) if e["ok"] and not e["cache_hit"]]
    paid = [e for e in paid if phases is None or e["phase"] in phases]
    if kind == "calls":
        return len(paid)
    if kind == "tokens":
        return sum(e["input_tokens"] + e["output_tokens"] for e in paid)
    return sum(e["usd"] for e in paid)


def assert_stopped_cleanly(folder: Path, job: Job, limit: str) -> int:
    """The run ended by the budget after whole steps, with test scores; returns its steps."""
    summary = json.loads((folder / "summary.json").read_text())
    steps = summary["steps"]
    assert 0 < steps < job.schedule.total_steps
    assert summary["stopped"] == {"limit": limit, "before_step": steps + 1}
    assert set(summary["test"]) == {"initial", "best"}
    calls = Counter(e["phase"] for e in call_events(folder))
    rollouts = sum(p.items * p.rollouts for p in job.phases if isinstance(p, Rollout))
    whole = [p for p in job.phases if isinstance(p, Rollout) and p.step <= steps]
    assert calls["rollout"] == sum(p.items * p.rollouts for p in whole) < rollouts
    boundary = [p.step for p in job.phases if p.phase in ("slow_update", "meta_skill")]
    started = {p.step for p in job.phases if p.step <= steps}
    if calls["slow_update"] or calls["meta_skill"]:
        assert {s for s in boundary if s in started}, "boundary calls of a step never run"
    assert calls["final_test"] > 0
    ended = read_journal(folder / "events.jsonl").ended
    assert ended is not None and ended.outcome == "budget"
    assert (folder / "best_skill.md").read_text() == json.loads(
        (folder / "state.json").read_text()
    )["best_skill"]
    return int(steps)


@pytest.mark.parametrize("kind", ["calls", "tokens", "usd"])
def test_each_kind_of_budget_stops_before_a_step_and_still_scores_the_test(
    tmp_path: Path, kind: str
) -> None:
    plan = demo()
    flag, limit = two_steps_and_a_half(plan.jobs[0], plan, kind)
    stopped = demo(flag)
    job = stopped.jobs[0]
    assert job.verdict is not None and job.verdict.covered_steps == DONE_STEPS
    assert job.verdict.limits == [kind]
    folder = tmp_path / "run"
    outcome = start(stopped, RunFolder(folder))
    assert outcome.exit is Exit.BUDGET, outcome.message
    steps = assert_stopped_cleanly(folder, job, kind)
    assert f"the {kind} budget cannot pay for step {steps + 1} of 9" in outcome.message
    # The verdict counts every step at its worst; actual steps cost less, so at least as many
    # steps run. The stop was due: what was paid, the final test's and the next step's worst
    # case together pass the limit; and the whole run, final test included, stays within it.
    assert steps >= DONE_STEPS
    by_step = worst_by_step(job, stopped)
    before_test = spent(folder, kind) - spent(folder, kind, {"final_test"})
    due = before_test + amount(by_step[job.schedule.total_steps + 1], kind)
    assert due + amount(by_step[steps + 1], kind) > limit
    assert spent(folder, kind) <= limit


def test_a_time_budget_stops_before_a_step_and_still_scores_the_test(tmp_path: Path) -> None:
    """Time cannot be reserved: a step starts only while the time left holds about one more
    step and the final test; the run's clock here advances one second per reading."""
    plan = demo("budget.time=40s")
    ticks = itertools.count()
    outcome = start(plan, RunFolder(tmp_path / "run"), clock=lambda: float(next(ticks)))
    assert outcome.exit is Exit.BUDGET, outcome.message
    assert "the time budget cannot pay for step" in outcome.message
    assert_stopped_cleanly(tmp_path / "run", plan.jobs[0], "time")


def test_a_budget_stopped_run_resumes_to_the_same_stop(tmp_path: Path) -> None:
    plan = demo(two_steps_and_a_half(demo().jobs[0], demo(), "calls")[0])
    folder = tmp_path / "run"
    assert start(plan, RunFolder(folder)).exit is Exit.BUDGET
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert resume(folder).exit is Exit.BUDGET
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before  # a run that reached its end: nothing left to do, nothing written

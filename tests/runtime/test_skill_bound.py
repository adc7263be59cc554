"""A plan's maxima hold at run time: the actual input tokens of every (phase, role) fall inside
the plan's ranges however the skill grows, because the runtime refuses an edit, a rewrite or a
slow-update guidance that would make the skill larger than the plan's bound for its step
(compiler/skill_size.py), and records why."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import Job, Plan, SlowUpdate, Update
from skopt.compiler.tokens import counter_for
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.edits import SLOW_UPDATE, Edit, SizeLimit, apply_edits, open_marker
from skopt.runtime.exits import Exit
from skopt.runtime.run import start
from tests.conftest import RECIPES, call_events

COUNT = counter_for("sim", None).count  # what the plan and the runtime count sim skills with


def compiled(name: str, *sets: str) -> Plan:
    result = compile_recipe(str(RECIPES / f"{name}.skopt"), list(sets))
    assert result.plan is not None, result.diagnostics
    return result.plan


def run(plan: Plan, folder: Path) -> Path:
    assert start(plan, RunFolder(folder)).exit is Exit.OK
    return folder


def input_tokens(folder: Path) -> Counter[tuple[str, str]]:
    found: Counter[tuple[str, str]] = Counter()
    for event in call_events(folder):
        found[event["phase"], event["role"]] += event["input_tokens"]
    return found


def assert_inside(job: Job, folder: Path) -> None:
    """Target inputs inside [min, max] (counted as the sim counts them); optimizer inputs, which
    the plan only estimates, at most the max."""
    actual = input_tokens(folder)
    totals = {(t.phase, t.role): t.input_tokens for t in job.totals}
    assert set(actual) <= set(totals)
    for (phase, role), planned in totals.items():
        tokens = actual.get((phase, role), 0)
        low = planned.min if role == "target" else 0
        assert low <= tokens <= planned.max, (job.name, phase, role, tokens, planned)


def records(folder: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("steps/*/record.json"))]


def assert_within_bounds(job: Job, folder: Path) -> None:
    """Every skill the run made (versions, candidates) within its step's bound."""
    bounds = {p.step: p.max_skill_tokens for p in job.phases if isinstance(p, Update)}
    for step, bound in bounds.items():
        version = folder / "skills" / f"skill_v{step:04d}.md"
        assert COUNT(version.read_text()) <= bound, version
        candidate = folder / "steps" / f"{step:04d}" / "candidate.md"
        if candidate.is_file():
            assert COUNT(candidate.read_text()) <= bound, candidate


VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "demo": ("demo", ()),
    "demo, rewrite": ("demo", ("train.mode=rewrite",)),
    "demo, full_rewrite": ("demo", ("train.mode=full_rewrite",)),
    "demo, autonomous lr, gated slow update": (
        "demo",
        ("train.lr=autonomous", "train.slow_update.gate=on"),
    ),
    "sweep": ("sweep", ()),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_actual_input_tokens_fall_inside_the_plan(tmp_path: Path, variant: str) -> None:
    """The demo's skill grows from 20 tokens to several rules: before the bound, its gate and
    later rollouts took more input tokens than the plan's maximum."""
    name, sets = VARIANTS[variant]
    plan = compiled(name, *sets)
    for number, job in enumerate(plan.jobs):
        folder = run(plan.model_copy(update={"jobs": [job]}), tmp_path / str(number))
        assert_inside(job, folder)
        assert_within_bounds(job, folder)


def test_edits_past_the_bound_are_skipped_and_recorded(tmp_path: Path) -> None:
    """With max_tokens = 1, an edit may add 9 tokens: the simulator's rules are longer, so some
    are refused, the rest apply, and the plan's maxima still hold."""
    plan = compiled("demo", "sim.max_tokens=1")
    folder = run(plan, tmp_path / "run")
    outcomes = [o for r in records(folder) for o in r.get("outcomes", [])]  # type: ignore[attr-defined]
    refused = [o for o in outcomes if "over the plan's bound" in o["reason"]]
    assert refused and all(o["status"] == "skipped" for o in refused)
    assert any(o["status"] == "applied" for o in outcomes)
    assert_within_bounds(plan.jobs[0], folder)
    assert_inside(plan.jobs[0], folder)


def test_a_rewrite_past_the_bound_is_no_candidate(tmp_path: Path) -> None:
    plan = compiled("demo", "sim.max_tokens=4", "train.mode=rewrite")
    folder = run(plan, tmp_path / "run")
    refused = [r for r in records(folder) if "refused" in r]
    assert refused
    for record in refused:
        assert "over the plan's bound" in str(record["refused"])
        assert record["decision"] == {
            "accepted": False,
            "reason": "no candidate",
            "regressions": [],
        }
    assert_within_bounds(plan.jobs[0], folder)
    assert_inside(plan.jobs[0], folder)


def test_slow_update_guidance_past_the_bound_is_refused(tmp_path: Path) -> None:
    """A plan whose slow-update bound is the initial skill: the guidance cannot fit."""
    plan = compiled("demo")
    (job,) = plan.jobs
    initial = COUNT((RECIPES / "skills" / "demo.md").read_text())
    phases = [
        p.model_copy(update={"max_skill_tokens": initial}) if isinstance(p, SlowUpdate) else p
        for p in job.phases
    ]
    plan = plan.model_copy(update={"jobs": [job.model_copy(update={"phases": phases})]})
    folder = run(plan, tmp_path / "run")
    boundaries = sorted({p.step for p in phases if isinstance(p, SlowUpdate)})
    for step in boundaries:
        why = json.loads(
            (folder / "steps" / f"{step:04d}" / "slow_update_refused.json").read_text()
        )
        assert "over the plan's bound of" in why["reason"]
    for version in (folder / "skills").glob("*.md"):
        assert open_marker(SLOW_UPDATE) not in version.read_text(), version


# -- the one place edits are applied ------------------------------------------------------------


def test_apply_edits_skips_an_edit_that_would_pass_the_limit() -> None:
    skill = "# Rules\n"
    limit = SizeLimit(COUNT(skill) + 12, COUNT)
    long = "A rule long enough to pass the limit on its own, by far."
    edits = [
        Edit("add", long),
        Edit("add", "Short rule."),
        Edit("delete", anchor="# Rules"),
    ]
    result = apply_edits(skill, edits, limit=limit)
    assert [o.status for o in result.outcomes] == ["skipped", "applied", "applied"]
    assert result.outcomes[0].reason == (
        f"would make the skill {COUNT(skill + chr(10) + long + chr(10))} tokens,"
        f" over the plan's bound of {COUNT(skill) + 12}"
    )
    assert result.skill == "\nShort rule.\n"
    assert apply_edits(skill, edits).outcomes[0].status == "applied"  # no limit, no refusal

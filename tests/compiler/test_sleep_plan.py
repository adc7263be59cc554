"""A sleep recipe's plan: a night's calls against hand counts, the bounds its tokens are counted
with, the budget verdict, the hashes and a saved plan's paths."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from skopt.compiler import sleep_bounds as B
from skopt.compiler.compile import Compiled, compile_recipe, stale
from skopt.compiler.night_calls import (
    NightOutcome,
    NightShape,
    extremes,
    night_calls,
    split_sizes,
)
from skopt.compiler.plan import Plan, SleepJob
from skopt.compiler.saved import plan_text, read_plan
from skopt.compiler.tokens import Estimate, TiktokenCounter, chat_tokens
from skopt.grammar.source import render_all
from skopt.prompts import render

# A night of S = 12 sessions, T = 8 tasks, holdout 34% (3 held out,
# 5 train), minibatch 3, a rubric judge.
RECIPE = """\
skopt 1
model small { provider = sim }
model big {
  provider    = openai
  name        = "gpt-4o-mini"
  api_key_env = "SKOPT_TEST_SET_KEY"
  max_tokens  = 500
}
sleep {
  sources      = [claude(root = "claude"), generic("generic.jsonl")]
  target       = small
  optimizer    = small
  judge        = rubric(model = big)
  skill        = "CLAUDE.md"
  max_sessions = 12
  max_tasks    = 8
  holdout      = 34%
  minibatch    = 3
  lr           = 2
}
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKOPT_TEST_SET_KEY", "not-a-real-key")
    (tmp_path / "claude").mkdir()
    (tmp_path / "generic.jsonl").write_text("")
    (tmp_path / "CLAUDE.md").write_text("# Notes\n\nRun the tests first.\n")
    path = tmp_path / "sleep.skopt"
    path.write_text(RECIPE)
    return path


def compiled(recipe: Path, *sets: str) -> Compiled:
    result = compile_recipe(str(recipe), sets)
    assert result.plan is not None, render_all(result.diagnostics, result.sources)
    return result


def night(recipe: Path, *sets: str) -> SleepJob:
    plan = compiled(recipe, *sets).plan
    assert plan is not None and plan.sleep is not None
    return plan.sleep


def calls_of(job: SleepJob) -> dict[tuple[str, str], tuple[int, float, int]]:
    return {
        (p.phase, rc.role): (rc.calls.min, rc.calls.expected, rc.calls.max)
        for p in job.phases
        for rc in p.calls
    }


# -- calls ------------------------------------------------------------------------------------


def test_the_calls_of_a_night_against_hand_counts(recipe: Path) -> None:
    """S = 12, T = 8 → H = round(2.72) = 3 held out, R = 5 train, mb = 3.
    mine: a call per session, each maybe asked twice: [0, 24] ~12.
    replay: R + H = 8 with the current skill. judge (rubric): the same 8, maybe twice: [0, 16].
    reflect: ceil(5 / 3) = 2 reflections + 1 selection = 3, maybe twice: 6; expected: half of
    the 5 train tasks fail (3, half up): ceil(3 / 3) = 1 reflection + 1 selection = 2.
    gate: the candidate on the H = 3 held-out tasks, and each judged (maybe twice: 6)."""
    job = night(recipe)
    assert [p.phase for p in job.phases] == ["mine", "replay", "judge", "reflect", "gate"]
    assert calls_of(job) == {
        ("mine", "optimizer"): (0, 12, 24),
        ("replay", "target"): (0, 8, 8),
        ("judge", "judge"): (0, 8, 16),
        ("reflect", "optimizer"): (0, 2, 6),
        ("gate", "target"): (0, 3, 3),
        ("gate", "judge"): (0, 3, 6),
    }
    by_model = {m.model: (m.calls.min, m.calls.expected, m.calls.max) for m in job.models}
    assert by_model == {"small": (0, 25, 41), "big": (0, 11, 22)}


def test_the_calls_of_the_designs_example_night(recipe: Path) -> None:
    """S = 120, T = 40 (H = round(13.6) = 14, R = 26), mb = 5, a local judge: no judge calls.
    reflect: ceil(26 / 5) = 6 + 1 = 7, twice 14; expected: 13 failures → 3 + 1 = 4."""
    job = night(
        recipe,
        "sleep.judge=rules",
        "sleep.max_sessions=120",
        "sleep.max_tasks=40",
        "sleep.minibatch=5",
    )
    assert calls_of(job) == {
        ("mine", "optimizer"): (0, 120, 240),
        ("replay", "target"): (0, 40, 40),
        ("reflect", "optimizer"): (0, 4, 14),
        ("gate", "target"): (0, 14, 14),
    }
    assert next(p for p in job.phases if p.phase == "judge").calls == []


def test_max_sessions_defaults_to_three_times_max_tasks(recipe: Path) -> None:
    recipe.write_text(RECIPE.replace("  max_sessions = 12\n", ""))
    assert night(recipe).settings.max_sessions == 24


@pytest.mark.parametrize(
    ("tasks", "holdout", "sizes"),
    [
        (0, 0.34, (0, 0)),
        (1, 0.34, (1, 0)),  # nothing to gate on
        (2, 0.34, (1, 1)),  # at least one held out
        (2, 0.99, (1, 1)),  # at least one to train on
        (3, 0.5, (1, 2)),  # 1.5 rounds half up
        (10, 0.25, (7, 3)),
        (40, 0.34, (26, 14)),
    ],
)
def test_split_sizes(tasks: int, holdout: float, sizes: tuple[int, int]) -> None:
    assert split_sizes(tasks, holdout) == sizes


@pytest.mark.parametrize("rubric", [False, True])
@pytest.mark.parametrize("minibatch", [1, 2, 5])
def test_every_night_falls_between_the_planned_extremes(rubric: bool, minibatch: int) -> None:
    """Every outcome of small nights: each phase's calls lie between the plan's 'none' and
    'worst' nights (so the plan's ranges hold whatever the night finds)."""
    shape = NightShape(holdout=0.34, minibatch=minibatch, rubric=rubric)
    for sessions, tasks in itertools.product(range(4), range(8)):
        none, _, worst = (night_calls(shape, o) for o in extremes(shape, sessions, tasks))
        for failures, usable in itertools.product(range(tasks + 1), (False, True)):
            found = night_calls(shape, NightOutcome(sessions, tasks, failures, usable))
            assert found.keys() == worst.keys()
            for key, calls in found.items():
                assert none[key] <= calls <= worst[key], (key, sessions, tasks, failures)


# -- tokens -----------------------------------------------------------------------------------


def test_token_maxima_are_the_templates_plus_the_bounds(recipe: Path) -> None:
    """With an exact counter (the judge is gpt-4o-mini): a judge call's input is at most the
    judge template, a task and a rubric at their bounds (a byte-level tokenizer makes at most a
    token a byte), the target's answer at its max_tokens, and the seams."""
    job = night(recipe)
    counter = TiktokenCounter("o200k_base")
    template = chat_tokens(counter, "", render("sleep_judge.j2", task="", rubric="", answer=""))
    per_call = template + B.TASK_CHARS + B.RUBRIC_CHARS + 4096 + 3 * B.SEAM
    (judge,) = next(p for p in job.phases if p.phase == "judge").calls
    assert judge.input_tokens.max == judge.calls.max * per_call
    assert judge.output_tokens.max == judge.calls.max * 500  # the judge's max_tokens
    assert not judge.input_exact  # it carries texts of the night
    # an estimate counter (sim): a digest at its bound, at four characters a token
    (mine,) = next(p for p in job.phases if p.phase == "mine").calls
    template = chat_tokens(Estimate(), "", render("sleep_mine.j2", session=""))
    assert mine.input_tokens.max == 24 * (template + B.DIGEST_CHARS // 4 + B.SEAM)


def test_the_gate_carries_a_candidate_of_at_most_the_skill_bound(recipe: Path) -> None:
    job = night(recipe)
    live = Estimate().count((recipe.parent / "CLAUDE.md").read_text())
    assert job.max_skill_tokens == live + B.LEARNED_MARKERS + 2 * (4096 + 8)
    replay = next(p for p in job.phases if p.phase == "replay").calls[0]
    gate = next(p for p in job.phases if p.phase == "gate").calls[0]
    grown = job.max_skill_tokens - live
    assert gate.input_tokens.max // 3 == replay.input_tokens.max // 8 + grown


@pytest.mark.parametrize("counter", [Estimate(), "cl100k_base", "o200k_base"], ids=str)
def test_the_learned_markers_fit_their_allowance(counter: object) -> None:
    count = counter if isinstance(counter, Estimate) else TiktokenCounter(str(counter))
    markers = "\n\n<!-- skopt:learned -->\n\n<!-- /skopt:learned -->\n"
    assert count.count(markers) <= B.LEARNED_MARKERS


def test_clip_keeps_a_text_that_fits_and_cuts_the_middle_of_one_that_does_not() -> None:
    assert B.clip("short", 10) == "short"
    text = "HEAD " + "x" * 10_000 + " TAIL"
    clipped = B.clip(text, 100)
    assert len(clipped.encode()) <= 100 and clipped.startswith("HEAD ")
    assert clipped.endswith(" TAIL") and B.CUT in clipped
    assert B.clip(clipped, 100) == clipped  # idempotent
    assert B.clip(text, 3) == "HEA"  # no room for the cut marker


@pytest.mark.parametrize("text", ["é" * 5000, "🙂" * 3000, "a€" * 4000, "\x00\xff" * 5000])
def test_clip_bounds_bytes_and_so_tokens(text: str) -> None:
    """The bounds are in UTF-8 bytes too, so an exact (byte-level) counter makes at most
    `limit` tokens of a clipped text: the plan's maximum is a bound."""
    clipped = B.digest(text)
    assert len(clipped.encode()) <= B.DIGEST_CHARS and len(clipped) <= B.DIGEST_CHARS
    assert TiktokenCounter("o200k_base").count(clipped) <= B.DIGEST_CHARS
    assert TiktokenCounter("cl100k_base").count(clipped) <= B.DIGEST_CHARS


# -- the verdict ------------------------------------------------------------------------------


def worst_calls(job: SleepJob) -> int:
    return sum(rc.calls.max for p in job.phases for rc in p.calls)


def test_a_budget_that_pays_for_the_worst_night_fits(recipe: Path) -> None:
    most = worst_calls(night(recipe))
    assert most == 63  # 41 + 22, as counted above
    job = night(recipe, f"sleep.budget.calls={most}")
    assert job.verdict is not None and job.verdict.fits
    assert (job.verdict.covered_steps, job.verdict.total_steps, job.verdict.limits) == (1, 1, [])


def test_a_budget_one_call_short_cannot_pay_for_a_night(recipe: Path) -> None:
    result = compile_recipe(str(recipe), ["sleep.budget.calls=62"])
    assert result.plan is None
    (diagnostic,) = result.diagnostics
    assert diagnostic.message == "the budget cannot pay for a night's worst case (calls)"
    assert diagnostic.span.path == "<command line>"  # at the limit that binds


def test_a_usd_budget_is_checked_against_the_priced_models(recipe: Path) -> None:
    """The judge is priced (gpt-4o-mini); the sim models are free."""
    job = night(recipe, "budget.usd=$1")
    assert job.verdict is not None and job.verdict.fits and job.verdict.unchecked == []
    big = next(m for m in job.models if m.model == "big")
    assert big.usd is not None and 0 < big.usd.max < 1
    result = compile_recipe(str(recipe), [f"budget.usd=${big.usd.max / 2:.6f}"])
    assert [d.message for d in result.diagnostics] == [
        "the budget cannot pay for a night's worst case (usd)"
    ]


def test_time_cannot_be_planned(recipe: Path) -> None:
    job = night(recipe, "sleep.budget.time=10min")
    assert job.verdict is not None and job.verdict.fits
    assert job.verdict.unchecked == ["time: cannot be planned; the night checks it while it runs"]


# -- hashes and saved plans -------------------------------------------------------------------


def saved(recipe: Path) -> Plan:
    plan = compiled(recipe).plan
    assert plan is not None
    return Plan.model_validate_json(plan.model_dump_json())


def test_sessions_in_a_source_do_not_make_a_plan_stale(recipe: Path) -> None:
    """Harvesting happens when the night runs: the plan holds the roots, not what is in them."""
    plan = saved(recipe)
    (recipe.parent / "claude" / "session.jsonl").write_text('{"type": "user"}\n')
    (recipe.parent / "generic.jsonl").write_text('{"prompt": "x"}\n')
    assert stale(plan) == []


def test_a_changed_live_skill_makes_a_plan_stale(recipe: Path) -> None:
    plan = saved(recipe)
    (recipe.parent / "CLAUDE.md").write_text("# Notes\n\nUse uv.\n")
    assert stale(plan) == ["the live skill changed"]


def test_a_default_root_is_hashed_as_the_folder_it_names(
    recipe: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe.write_text(RECIPE.replace('claude(root = "claude")', "codex"))
    monkeypatch.setenv("HOME", "/home/one")
    plan = saved(recipe)
    assert plan.sleep is not None and plan.sleep.settings.sources[0].root == "/home/one/.codex"
    monkeypatch.setenv("HOME", "/home/two")
    assert stale(plan) == ["the sources' roots changed"]


def test_a_saved_sleep_plan_keeps_its_paths_from_another_folder(
    recipe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plan = compiled(Path(recipe.name)).plan
    assert plan is not None and plan.sleep is not None
    elsewhere = tmp_path / "plans" / "deep"
    elsewhere.mkdir(parents=True)
    (elsewhere / "plan.json").write_text(plan_text(plan, elsewhere / "plan.json"))
    monkeypatch.chdir(elsewhere)
    back = read_plan(Path("plan.json")).sleep
    assert back is not None

    def here(path: str) -> Path:
        return (elsewhere / path).resolve()

    s, t = plan.sleep.settings, back.settings
    assert here(t.skill) == (tmp_path / s.skill).resolve()
    assert here(t.project) == (tmp_path / s.project).resolve()
    assert [here(r.root) for r in t.sources] == [(tmp_path / r.root).resolve() for r in s.sources]
    assert t.within is not None and here(t.within) == tmp_path.resolve()  # the project
    assert t.out == s.out == ".skopt/sleep"  # relative to the project, which moved


# -- settings ---------------------------------------------------------------------------------


def test_project_and_within_default_to_the_recipes_folder(recipe: Path) -> None:
    s = night(recipe).settings
    assert s.project == s.within == str(recipe.parent)
    assert (s.since_s, s.lookback_s, s.include, s.out) == (
        None,
        72 * 3600.0,
        ["interactive"],
        ".skopt/sleep",
    )
    assert (s.gate.metric, s.gate.no_regression, s.gate.min_delta) == ("hard", True, 0.0)


def test_within_any_takes_every_folder_and_a_relative_one_is_from_the_recipe(
    recipe: Path,
) -> None:
    assert night(recipe, "sleep.within=any").settings.within is None
    recipe.write_text(RECIPE.replace("  lr ", '  within = "../src"\n  lr '))
    assert night(recipe).settings.within == str(recipe.parent / "../src")


def test_a_schedule_set_on_the_command_line_needs_no_quotes(recipe: Path) -> None:
    assert night(recipe, "sleep.schedule=17 3 * * 1-5").settings.schedule == "17 3 * * 1-5"
    result = compile_recipe(str(recipe), ["sleep.schedule=17 25 * * *"])
    (diagnostic,) = result.diagnostics
    assert diagnostic.message == "hour 25 is out of range in the cron expression"
    # `--set sleep.schedule=` is 21 columns; the hour is the value's 4th character
    assert (diagnostic.span.path, diagnostic.span.col) == ("<command line>", 25)


def test_what_the_night_imports_does_not_load_the_parser() -> None:
    """The runtime imports the bounds, the call counts and the verdict; the import contracts
    forbid a chain from skopt.runtime to lark, so these must not start one."""
    code = (
        "import sys\n"
        "import skopt.compiler.sleep_bounds, skopt.compiler.night_calls, skopt.compiler.budget\n"
        "assert 'lark' not in sys.modules, sorted(m for m in sys.modules if 'lark' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

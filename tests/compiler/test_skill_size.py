"""The bound on the skill's size (compiler/skill_size.py), and the plan's target token ranges
that are counted with it: every call carries a skill from empty up to the bound of its phase."""

from __future__ import annotations

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import FinalTest, Gate, Job, Rollout, SlowUpdate, Update
from skopt.compiler.skill_size import (
    AUTONOMOUS_EDITS,
    EDIT_SEAM,
    INITIAL,
    REGION_MARKERS,
    Growth,
    SkillSize,
)
from skopt.compiler.tokens import counter_for
from skopt.runtime.edits import SLOW_UPDATE, Edit, apply_edits, replace_region
from tests.conftest import RECIPES

REPLY = 100


def growth(mode: str, initial: int = 40, slow_update: bool = True) -> Growth:
    return Growth(initial=initial, reply=REPLY, mode=mode, slow_update=slow_update)


def test_initial_is_exactly_the_initial_skill() -> None:
    assert (INITIAL.low(40), INITIAL.high(40)) == (40, 40)


def test_patch_grows_by_lr_edits_of_one_reply_each() -> None:
    g = growth("patch")
    one = g.after_step(INITIAL, 3)
    assert one == SkillSize(changed=True, growth=3 * (REPLY + EDIT_SEAM))
    assert (one.low(40), one.high(40)) == (0, 40 + 3 * (REPLY + EDIT_SEAM))  # may also shrink
    two = g.after_step(one, 2)
    assert two.growth == 5 * (REPLY + EDIT_SEAM)
    assert g.after_step(INITIAL, None).growth == AUTONOMOUS_EDITS * (REPLY + EDIT_SEAM)
    assert g.after_step(INITIAL, 0) == SkillSize(changed=True, growth=0)


@pytest.mark.parametrize("mode", ["rewrite", "full_rewrite"])
def test_a_rewrite_is_one_reply_plus_the_region_it_keeps(mode: str) -> None:
    g = growth(mode, initial=40)
    kept = REPLY + REGION_MARKERS  # a slow-update region (one guidance) is larger than the skill
    first = g.after_step(INITIAL, 4)
    assert first.high(40) == REPLY + EDIT_SEAM + kept
    assert g.after_step(first, 4) == first  # however many steps: the bound does not grow
    big = growth(mode, initial=500, slow_update=False)  # no region but the initial skill's own
    assert big.after_step(INITIAL, 4).high(500) == REPLY + EDIT_SEAM + 500


def test_slow_update_adds_one_guidance_in_its_markers() -> None:
    g = growth("patch")
    size = g.after_slow_update(g.after_step(INITIAL, 2))
    assert size.growth == 2 * (REPLY + EDIT_SEAM) + REPLY + REGION_MARKERS


@pytest.mark.parametrize(
    ("provider", "model"), [("openai", "gpt-4o-mini"), ("openai", "gpt-4"), ("sim", None)]
)
def test_the_allowances_cover_markers_and_seams(provider: str, model: str | None) -> None:
    """REGION_MARKERS and EDIT_SEAM, counted with each counter a plan uses."""
    counter = counter_for(provider, model)
    skill = "# House rules\n\n- Answer briefly.\n- Dates: YYYY-MM-DD.\n"
    guidance = "- Keep the rules."
    region = replace_region(skill, SLOW_UPDATE, guidance)
    added = counter.count(region) - counter.count(skill) - counter.count(guidance)
    assert added <= REGION_MARKERS
    for anchor in (None, "- Answer briefly.", "# House rules"):
        content = "Amounts: two decimals, then the currency code."
        edited = apply_edits(skill, [Edit("add", content, anchor)])
        assert edited.outcomes[0].status == "applied"
        seam = counter.count(edited.skill) - counter.count(skill) - counter.count(content)
        assert seam <= EDIT_SEAM, (anchor, seam)


def job(*sets: str) -> Job:
    result = compile_recipe(str(RECIPES / "demo.skopt"), list(sets))
    assert result.plan is not None, result.diagnostics
    return result.plan.jobs[0]


INITIAL_TOKENS = counter_for("sim", None).count((RECIPES / "skills" / "demo.md").read_text())
REPLY_TOKENS = 4096  # the sim model's max_tokens
ITEMS = 24  # the demo's batch, valid and test sizes


def test_target_ranges_run_from_an_empty_skill_to_the_bound() -> None:
    """Demo: the gate of step k scores a candidate of at most step k's bound; the rollout of
    step k+1 and the final test carry a skill of at most that, and at least nothing; the first
    rollout carries the initial skill, exactly."""
    demo = job()
    bounds = {p.step: p.max_skill_tokens for p in demo.phases if isinstance(p, Update)}
    lr = demo.schedule.lr
    edit = REPLY_TOKENS + EDIT_SEAM
    assert bounds[1] == INITIAL_TOKENS + lr[0] * edit
    (slow, _) = (p for p in demo.phases if isinstance(p, SlowUpdate))
    assert slow.step == 4 and slow.max_skill_tokens == bounds[3] + REPLY_TOKENS + REGION_MARKERS
    assert bounds[4] == slow.max_skill_tokens + lr[3] * edit

    def tokens(kind: type[Gate | Rollout | FinalTest], step: int) -> tuple[int, float, int]:
        (phase,) = (p for p in demo.phases if isinstance(p, kind) and p.step == step)
        t = phase.calls[0].input_tokens
        return t.min, t.expected, t.max

    low, expected, high = tokens(Rollout, 1)
    assert low == expected == high
    low, expected, high = tokens(Gate, 1)  # no calls at all when no candidate is made
    tries = demo.train.gate.tries  # the most candidates a step scores; expected: the first
    assert (low, high) == (0, tries * round(expected + ITEMS * (bounds[1] - INITIAL_TOKENS)))
    low, expected, high = tokens(Rollout, 2)
    assert low == round(expected - ITEMS * INITIAL_TOKENS)
    assert high == round(expected + ITEMS * (bounds[1] - INITIAL_TOKENS))
    low, expected, high = tokens(FinalTest, 10)
    once = expected / 2  # the initial skill's pass; the best skill's is the other half
    assert (low, high) == (round(once), round(once + once + ITEMS * (bounds[9] - INITIAL_TOKENS)))


def test_a_rewrite_bound_grows_only_by_slow_updates() -> None:
    bounds = [p.max_skill_tokens for p in job("train.mode=rewrite").phases if isinstance(p, Update)]
    region = REPLY_TOKENS + REGION_MARKERS
    cap = REPLY_TOKENS + EDIT_SEAM + region
    assert bounds == [cap] * 3 + [cap + region] * 3 + [cap + 2 * region] * 3

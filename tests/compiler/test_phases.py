"""Call counting: the phase functions, and the plan's ranges against every outcome."""

from __future__ import annotations

import random

import pytest

from skopt.compiler import phases as P


@pytest.mark.parametrize(
    ("patches", "merge_batch", "calls"),
    [(0, 8, 0), (1, 8, 0), (2, 8, 1), (8, 8, 1), (9, 8, 2), (64, 8, 9), (5, 2, 4)],
)
def test_merge_calls(patches: int, merge_batch: int, calls: int) -> None:
    assert P.merge_calls(patches, merge_batch) == calls


def shape(
    n: int = 40,
    mode: str = "patch",
    autonomous: bool = False,
    succ: bool = True,
    tries: int = 1,
    demonstrations: bool = False,
) -> P.StepShape:
    return P.StepShape(n, 8, 8, succ, mode, autonomous, 20, tries, demonstrations)


def test_reflect_splits_failures_and_successes() -> None:
    assert P.reflect_calls(shape(), 20) == (3, 3)
    assert P.reflect_calls(shape(succ=False), 20) == (3, 0)
    assert P.reflect_calls(shape(), 0) == (0, 5)


def test_optimizer_maxima_allow_one_reask_per_call() -> None:
    explained = P.explain_step(shape())
    # 40 trajectories: at most 6 minibatches, each reflection asked again for its edits
    # (runtime/edit_checks.py) and each of those two answers asked again for its JSON
    assert explained["reflect", "optimizer"].max == 2 * 2 * 6
    assert explained["reflect", "optimizer"].min == 5
    assert explained["select", "optimizer"].max == 2 * 1
    full = P.explain_step(shape(7, "full_rewrite"))  # whole skills are not edit-checked
    assert full["reflect", "optimizer"].max == 2 * full["reflect", "optimizer"].expected


def test_explain_step_covers_every_outcome() -> None:
    rng = random.Random(0)
    shapes = (
        shape(),
        shape(13, "rewrite"),
        shape(7, "full_rewrite"),
        shape(40, autonomous=True),
        shape(20, tries=3, demonstrations=True),
        shape(9, "rewrite", tries=4, demonstrations=True),
    )
    for s in shapes:
        explained = P.explain_step(s)
        for _ in range(200):
            outcome = P.Outcome(
                rng.randint(0, s.trajectories),
                rng.random() < 0.5,
                rng.random() < 0.5,
                rng.randint(0, s.tries + 1),  # a step never scores more than it may
            )
            for key, calls in P.step_calls(s, outcome).items():
                bounds = explained[key]
                assert bounds.min <= calls <= bounds.max, (s, outcome, key)
        for bounds in explained.values():
            assert bounds.min <= bounds.expected <= bounds.max


def test_gate_maximum_counts_every_candidate_a_step_can_make() -> None:
    # patch mode: the selected edits, a near miss merge, the left-out edits, demonstrations
    assert P.explain_step(shape(tries=3))["gate", "target"] == P.Span3(0, 20, 60)
    assert P.explain_step(shape(tries=9, demonstrations=True))["gate", "target"].max == 4 * 20
    # a rewrite makes one candidate, and demonstrations one more
    assert P.explain_step(shape(mode="rewrite", tries=3))["gate", "target"].max == 20
    rewrite = shape(mode="rewrite", tries=3, demonstrations=True)
    assert P.explain_step(rewrite)["gate", "target"].max == 40
    # with no usable reflection, only demonstrations can be scored (and, in patch mode, their
    # merge with earlier near misses), and only of failures
    demo = shape(tries=3, demonstrations=True)
    assert P.step_calls(demo, P.Outcome(5, False, False, 3))["gate", "target"] == 40
    demo_rewrite = shape(mode="rewrite", tries=3, demonstrations=True)
    assert P.step_calls(demo_rewrite, P.Outcome(5, False, False, 3))["gate", "target"] == 20
    assert P.step_calls(demo, P.Outcome(0, False, False, 3))["gate", "target"] == 0
    assert P.step_calls(shape(tries=3), P.Outcome(5, False, False, 3))["gate", "target"] == 0
    # the left-out edits exist only when the merged edits outnumber the learning rate
    assert P.step_calls(shape(tries=3), P.Outcome(5, True, False, 3))["gate", "target"] == 40


def test_exact_phases_have_no_range() -> None:
    explained = P.explain_step(shape())
    assert explained["rollout", "target"] == P.Span3(40, 40, 40)
    assert explained["gate", "target"] == P.Span3(0, 20, 20)
    assert explained["update", "optimizer"] == P.Span3(0, 0, 0)  # patch mode edits in place
    assert P.explain_step(shape(mode="rewrite"))["update", "optimizer"].max == 2  # + one re-ask
    assert P.explain_step(shape(mode="full_rewrite"))["select", "optimizer"].max == 0

"""How many LLM calls each phase makes, as a function of how the step turns out.

The engine (runtime) and the plan both use these definitions: the engine calls them with the
outcome it observed, the plan walks every possible outcome to get exact counts or `[min, max]`
ranges, plus an expected value under a typical outcome. There is no second formula to drift.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from skopt.compiler.plan import PhaseName, Role


@dataclass(frozen=True, slots=True)
class Outcome:
    """One way a step can turn out."""

    failures: int  # trajectories that failed (the rest succeeded)
    usable: bool  # the optimizer's reflections yielded at least one patch
    over_lr: bool  # the merged edits outnumber the step's learning rate
    scored: int  # candidates scored on the gate (0 when none was new); at most StepShape.tries


@dataclass(frozen=True, slots=True)
class StepShape:
    """What a step's call counts depend on, apart from its outcome."""

    trajectories: int  # items × rollouts
    minibatch: int
    merge_batch: int
    reflect_successes: bool
    mode: str
    autonomous: bool
    gate_calls: int  # target calls to score one candidate: gate items × repeats
    tries: int = 1  # the most candidates one step scores (gate tries)
    demonstrations: bool = False  # a step's failures make a candidate of worked examples


def candidates(shape: StepShape, outcome: Outcome, has_edits: bool) -> int:
    """The most candidates a step can score (runtime/tries.py), `gate tries` at most:
    - the selected edits (or a rewrite), when the reflections gave edits;
    - in patch mode, the merged edits that selection left out, when they outnumber the lr;
    - worked examples of the step's failures, with demonstrations on;
    - in patch mode, after the step's first near miss, its edits with earlier near misses'."""
    patch = shape.mode == "patch"
    made = has_edits + (has_edits and patch and outcome.over_lr)
    made += bool(shape.demonstrations and outcome.failures)
    made += patch and made > 0
    return min(made, shape.tries)


def minibatches(count: int, size: int) -> int:
    return math.ceil(count / size) if count else 0


def merge_calls(patches: int, merge_batch: int) -> int:
    """Calls to merge `patches` hierarchically, `merge_batch` at a time, into one.

    Each round groups the patches; a group of one is carried over without a call.
    """
    calls = 0
    while patches > 1:
        full, rest = divmod(patches, merge_batch)
        calls += full + (1 if rest > 1 else 0)
        patches = math.ceil(patches / merge_batch)
    return calls


def reflect_calls(shape: StepShape, failures: int) -> tuple[int, int]:
    """(failure calls, success calls) of the reflect phase."""
    successes = shape.trajectories - failures if shape.reflect_successes else 0
    return minibatches(failures, shape.minibatch), minibatches(successes, shape.minibatch)


def aggregate_calls(fail_patches: int, success_patches: int, merge_batch: int) -> int:
    """Failures and successes are merged apart, then once together, failures first."""
    both = 1 if fail_patches and success_patches else 0
    return merge_calls(fail_patches, merge_batch) + merge_calls(success_patches, merge_batch) + both


def step_calls(shape: StepShape, outcome: Outcome) -> dict[tuple[PhaseName, Role], int]:
    """The calls of every phase of one step under one outcome."""
    fail_calls, success_calls = reflect_calls(shape, outcome.failures)
    fail_patches = fail_calls if outcome.usable else 0
    success_patches = success_calls if outcome.usable else 0
    has_edits = bool(fail_patches or success_patches)
    full_rewrite = shape.mode == "full_rewrite"
    select = 0
    if has_edits and not full_rewrite:
        select = (1 if shape.autonomous else 0) + (1 if outcome.over_lr else 0)
    update = 1 if has_edits and shape.mode == "rewrite" else 0
    gate = shape.gate_calls * min(outcome.scored, candidates(shape, outcome, has_edits))
    return {
        ("rollout", "target"): shape.trajectories,
        ("reflect", "optimizer"): fail_calls + success_calls,
        ("aggregate", "optimizer"): aggregate_calls(
            fail_patches, success_patches, shape.merge_batch
        ),
        ("select", "optimizer"): select,
        ("update", "optimizer"): update,
        ("gate", "target"): gate,
    }


def outcomes(shape: StepShape) -> Iterator[Outcome]:
    for failures in range(shape.trajectories + 1):
        for usable in (False, True):
            for over_lr in (False, True):
                for scored in range(shape.tries + 1):
                    yield Outcome(failures, usable, over_lr, scored)


def typical(shape: StepShape) -> Outcome:
    """The outcome behind 'expected': half the trajectories fail, every call is useful, and the
    first candidate decides."""
    return Outcome(
        failures=math.floor(shape.trajectories / 2 + 0.5),
        usable=True,
        over_lr=True,
        scored=1,
    )


@dataclass(frozen=True, slots=True)
class Span3:
    min: int
    expected: float
    max: int


@functools.cache
def explain_step(shape: StepShape) -> dict[tuple[PhaseName, Role], Span3]:
    """Exact counts or ranges of every phase of a step, over all of its possible outcomes."""
    low: dict[tuple[PhaseName, Role], int] = {}
    high: dict[tuple[PhaseName, Role], int] = {}
    for outcome in outcomes(shape):
        for key, calls in step_calls(shape, outcome).items():
            low[key] = min(low.get(key, calls), calls)
            high[key] = max(high.get(key, calls), calls)
    expected = step_calls(shape, typical(shape))
    asked = {key: _asked(key[1], high[key]) for key in expected}
    if shape.mode != "full_rewrite":  # a reflection with unusable edits is asked once more
        asked["reflect", "optimizer"] *= 1 + RECHECKS
    return {key: Span3(low[key], expected[key], asked[key]) for key in expected}


# An optimizer answer that is not valid JSON is asked again once (runtime/structured.py).
REASKS = 1
# A reflection whose edits have problems is asked again once (runtime/edit_checks.py), and that
# answer too may be asked again for its JSON.
RECHECKS = 1


def _asked(role: Role, calls: int) -> int:
    """The most calls: every optimizer call may be asked once more."""
    return calls * (1 + REASKS) if role == "optimizer" else calls


# -- phases outside steps ---------------------------------------------------------------------


def baseline_calls(gate_calls: int) -> Span3:
    return Span3(gate_calls, gate_calls, gate_calls)


def slow_update_calls(samples: int, gate_calls: int, gated: bool) -> dict[Role, Span3]:
    """Both epochs' skills on the same samples (cached scores are free), then one call."""
    target_max = 2 * samples + (gate_calls if gated else 0)
    return {
        "target": Span3(0, target_max, target_max),
        "optimizer": Span3(1, 1, _asked("optimizer", 1)),
    }


def meta_skill_calls() -> Span3:
    return Span3(1, 1, _asked("optimizer", 1))


def final_test_calls(items: int) -> Span3:
    """The initial and the best skill on the test split; once when the best is the initial."""
    return Span3(items, 2 * items, 2 * items)

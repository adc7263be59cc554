"""The validation gate (SPEC §5.1): `metric` and `decide` as table tests, and simulator runs
in which `no_regression` and `min_delta` change what the gate decides."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import GateSettings
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.exits import Exit
from skopt.runtime.gate import Decision, Scores, decide, metric
from skopt.runtime.run import start
from tests.conftest import RECIPES


def gate(
    kind: str = "hard",
    w: float | None = None,
    no_regression: bool = False,
    min_delta: float = 0.0,
    confidence: float = 0.0,
    tries: int = 1,
) -> GateSettings:
    return GateSettings(
        split="valid",
        metric=kind,  # type: ignore[arg-type]
        mixed_weight=w,
        samples=None,
        repeats=1,
        no_regression=no_regression,
        min_delta=min_delta,
        confidence=confidence,
        tries=tries,
    )


def hard(*passed: int) -> dict[str, tuple[float, float]]:
    """Items a, b, c, ... scored 1 or 0 (soft equal to hard)."""
    return {chr(ord("a") + i): (float(p), float(p)) for i, p in enumerate(passed)}


# (scores, gate settings, expected metric)
METRICS: dict[str, tuple[Scores, GateSettings, float]] = {
    "empty": ({}, gate(), 0.0),
    "hard-mean": (hard(1, 0, 1, 1), gate(), 0.75),
    "soft-mean": ({"a": (0.0, 0.5), "b": (1.0, 1.0)}, gate("soft"), 0.75),
    "hard-ignores-soft": ({"a": (0.0, 0.5), "b": (1.0, 1.0)}, gate("hard"), 0.5),
    "mixed-weight": (
        {"a": (0.0, 0.5), "b": (1.0, 0.5)},
        gate("mixed", 0.25),
        0.25 * 0.5 + 0.75 * 0.5,
    ),
    "mixed-hard-heavy": ({"a": (1.0, 0.0)}, gate("mixed", 0.75), 0.75),
    "mixed-default-half": ({"a": (1.0, 0.0)}, gate("mixed"), 0.5),
}


@pytest.mark.parametrize(("scores", "settings", "expected"), METRICS.values(), ids=METRICS)
def test_metric(scores: Scores, settings: GateSettings, expected: float) -> None:
    assert metric(scores, settings) == pytest.approx(expected)


# (current, candidate, settings, accepted, reason, regressions)
DECISIONS: dict[str, tuple[Scores, Scores, GateSettings, bool, str, tuple[str, ...]]] = {
    "better": (
        hard(0, 0, 1, 1),
        hard(1, 0, 1, 1),
        gate(),
        True,
        "0.7500 beats 0.5000 (1 fixed, 0 broken)",
        (),
    ),
    "equal-is-not-better": (
        hard(1, 0, 1, 0),
        hard(0, 1, 1, 0),
        gate(),
        False,
        "0.5000 does not beat 0.5000 by more than 0 (1 fixed, 1 broken)",
        ("a",),
    ),
    "worse": (
        hard(1, 1, 0, 0),
        hard(1, 0, 0, 0),
        gate(),
        False,
        "0.2500 does not beat 0.5000 by more than 0 (0 fixed, 1 broken)",
        ("b",),
    ),
    "gain-equal-to-min-delta": (
        hard(1, 1, 0, 0),
        hard(1, 1, 1, 0),
        gate(min_delta=0.25),
        False,
        "0.7500 does not beat 0.5000 by more than 0.25 (1 fixed, 0 broken)",
        (),
    ),
    "gain-above-min-delta": (
        hard(1, 1, 0, 0),
        hard(1, 1, 1, 0),
        gate(min_delta=0.2),
        True,
        "0.7500 beats 0.5000 (1 fixed, 0 broken)",
        (),
    ),
    "regression-allowed-when-off": (
        hard(1, 0, 0, 0),
        hard(0, 1, 1, 0),
        gate(),
        True,
        "0.5000 beats 0.2500 (2 fixed, 1 broken)",
        ("a",),
    ),
    "regression-refused-when-on": (
        hard(1, 0, 0, 0),
        hard(0, 1, 1, 0),
        gate(no_regression=True),
        False,
        "1 passing items now fail",
        ("a",),
    ),
    "every-regression-named": (
        hard(1, 1, 0, 0, 0),
        hard(0, 0, 1, 1, 1),
        gate(no_regression=True),
        False,
        "2 passing items now fail",
        ("a", "b"),
    ),
    "no-regression-on-and-none": (
        hard(1, 0, 0),
        hard(1, 1, 0),
        gate(no_regression=True),
        True,
        "0.6667 beats 0.3333 (1 fixed, 0 broken)",
        (),
    ),
    "partial-credit-is-a-regression": (
        {"a": (1.0, 1.0), "b": (0.0, 0.0)},
        {"a": (0.5, 0.9), "b": (1.0, 1.0)},
        gate("soft", no_regression=True),
        False,
        "1 passing items now fail",
        ("a",),
    ),
    "failing-item-still-failing-is-no-regression": (
        {"a": (0.0, 0.6), "b": (0.0, 0.0)},
        {"a": (0.0, 0.2), "b": (1.0, 1.0)},
        gate("soft", no_regression=True),
        True,
        "0.6000 beats 0.3000 (1 fixed, 1 broken)",
        (),
    ),
    "item-new-to-the-gate-is-no-regression": (
        hard(1),
        {"a": (1.0, 1.0), "z": (0.0, 0.0)},
        gate("soft", no_regression=True),
        False,
        "0.5000 does not beat 1.0000 by more than 0 (0 fixed, 0 broken)",
        (),
    ),
    "score-checked-before-regressions": (
        hard(1, 0),
        hard(0, 0),
        gate(no_regression=True),
        False,
        "0.0000 does not beat 0.5000 by more than 0 (0 fixed, 1 broken)",
        ("a",),
    ),
    "mixed-metric-decides": (
        {"a": (0.0, 0.0)},
        {"a": (0.0, 0.8)},
        gate("mixed", 0.5, min_delta=0.3),
        True,
        "0.4000 beats 0.0000 (1 fixed, 0 broken)",
        (),
    ),
    "empty-gate-never-accepts": (
        {},
        {},
        gate(),
        False,
        "0.0000 does not beat 0.0000 by more than 0 (0 fixed, 0 broken)",
        (),
    ),
    # -- the sign test (confidence): the items fixed against the items broken
    "luck-is-rejected": (
        hard(0, 0, 0, 0, 0, 0),
        hard(1, 1, 1, 0, 0, 0),
        gate(confidence=0.9),
        False,
        "0.5000 beats 0.0000, but 3 fixed, 0 broken is luck with p = 0.125 (confidence 90% "
        "needs p ≤ 0.100: at least 4 fixed with none broken)",
        (),
    ),
    "enough-fixes-are-believed": (
        hard(0, 0, 0, 0, 0, 0),
        hard(1, 1, 1, 1, 0, 0),
        gate(confidence=0.9),
        True,
        "0.6667 beats 0.0000 (4 fixed, 0 broken, p = 0.062)",
        (),
    ),
    "tries-share-the-confidence": (  # 3 tries: each is tested at p ≤ 0.1 / 3
        hard(0, 0, 0, 0, 0, 0),
        hard(1, 1, 1, 1, 0, 0),
        gate(confidence=0.9, tries=3),
        False,
        "0.6667 beats 0.0000, but 4 fixed, 0 broken is luck with p = 0.062 (confidence 90% over "
        "3 tries needs p ≤ 0.033: at least 5 fixed with none broken)",
        (),
    ),
    "broken-items-count-against": (  # net +3 as above, but P(X ≥ 5 | 7 changed) = 0.227
        hard(0, 0, 0, 0, 0, 1, 1, 0),
        hard(1, 1, 1, 1, 1, 0, 0, 0),
        gate(confidence=0.9),
        False,
        "0.6250 beats 0.2500, but 5 fixed, 2 broken is luck with p = 0.227 (confidence 90% "
        "needs p ≤ 0.100: at least 4 fixed with none broken)",
        ("f", "g"),
    ),
    "repeats-of-an-item-are-one-item": (  # 3 items fixed in both repeats: 3 fixed, not 6
        {f"{i}#{r}": (0.0, 0.0) for i in "abcd" for r in (0, 1)},
        {f"{i}#{r}": (float(i != "d"), float(i != "d")) for i in "abcd" for r in (0, 1)},
        gate(confidence=0.9),
        False,
        "0.7500 beats 0.0000, but 3 fixed, 0 broken is luck with p = 0.125 (confidence 90% "
        "needs p ≤ 0.100: at least 4 fixed with none broken)",
        (),
    ),
}


@pytest.mark.parametrize(
    ("current", "candidate", "settings", "accepted", "reason", "regressions"),
    DECISIONS.values(),
    ids=DECISIONS,
)
def test_decide(
    current: Scores,
    candidate: Scores,
    settings: GateSettings,
    accepted: bool,
    reason: str,
    regressions: tuple[str, ...],
) -> None:
    decision = decide(current, candidate, settings)
    assert replace(decision, fixed=(), broken=()) == Decision(
        accepted,
        metric(current, settings),
        metric(candidate, settings),
        reason,
        regressions,
    )


def test_the_tries_a_step_can_make_share_the_confidence() -> None:
    """7 fixed against 1 broken is p = 0.035: luck over 3 tries (p ≤ 0.033), believed when the
    step can score only 2 candidates (p ≤ 0.050) or 1 (p ≤ 0.100)."""
    current, candidate = hard(*[0] * 8, 1), hard(*[1] * 7, 0, 0)
    settings = gate(confidence=0.9, tries=3)
    assert not decide(current, candidate, settings).accepted
    assert not decide(current, candidate, settings, shared_by=3).accepted
    for shared in (1, 2):
        assert decide(current, candidate, settings, shared_by=shared).accepted
    refused = decide(hard(0, 0, 0, 0, 0), hard(1, 1, 1, 1, 0), settings, shared_by=2)
    assert refused.reason.endswith(
        "(confidence 90% over 2 tries needs p ≤ 0.050: at least 5 fixed with none broken)"
    )
    assert decide(current, candidate, settings, shared_by=2).result("h", shared_by=2).shared_by == 2


# -- simulator runs ----------------------------------------------------------------------


def demo_run(folder: Path, *overrides: str) -> list[dict[str, Any]]:
    """The demo on the simulator with `overrides`; the history of its gate decisions."""
    result = compile_recipe(str(RECIPES / "demo.skopt"), list(overrides))
    assert result.plan is not None, result.diagnostics
    outcome = start(result.plan, RunFolder(folder))
    assert outcome.exit is Exit.OK, outcome.message
    history: list[dict[str, Any]] = json.loads((folder / "state.json").read_text())["history"]
    return history


def record(folder: Path, step: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (folder / "steps" / f"{step:04d}" / "record.json").read_text()
    )
    return data


# What no_regression and min_delta decide alone, on a seed whose run has a step accepted with
# regressions and a small gain (seeds differ in the batches and so in what the sim proposes).
# One candidate a step: each step's decision is then its candidate's.
NO_SIGN_TEST = ("train.gate.confidence=0", "train.gate.tries=1", "train.seed=2")


def test_decision_names_the_items_fixed_and_broken() -> None:
    decision = decide(hard(0, 0, 1, 1), hard(1, 0, 1, 0), gate())
    assert (decision.fixed, decision.broken) == (("a",), ("d",))
    assert not decision.near_miss  # as many fixed as broken
    assert decide(hard(0, 0, 0, 0), hard(1, 1, 0, 0), gate(confidence=0.9)).near_miss
    assert not decide(hard(0, 0, 0, 0), hard(1, 1, 1, 1), gate(confidence=0.9)).near_miss


def test_no_regression_rejects_a_better_mean_that_breaks_a_passing_item(tmp_path: Path) -> None:
    off = demo_run(tmp_path / "off", *NO_SIGN_TEST)
    on = demo_run(tmp_path / "on", *NO_SIGN_TEST, "train.gate.no_regression=on")
    # The first step whose candidate raised the mean while breaking items that passed ...
    step = next(
        h["step"] for h in off if h["decision"]["accepted"] and h["decision"]["regressions"]
    )
    allowed = off[step - 1]["decision"]
    assert allowed["after"] > allowed["before"]
    # ... was decided on the same evidence with the setting on (the runs agree until then) ...
    assert on[: step - 1] == off[: step - 1]
    refused = record(tmp_path / "on", step)["decision"]
    assert on[step - 1]["decision"] == refused
    assert (refused["before"], refused["after"]) == (allowed["before"], allowed["after"])
    assert refused["regressions"] == allowed["regressions"]
    # ... and rejected for it: the skill stays what it was.
    assert refused["accepted"] is False
    assert refused["reason"] == f"{len(refused['regressions'])} passing items now fail"
    skills = tmp_path / "on" / "skills"
    version = f"skill_v{step:04d}.md"
    assert (skills / version).read_text() == (skills / f"skill_v{step - 1:04d}.md").read_text()
    assert (tmp_path / "off" / "skills" / version).read_text() != (skills / version).read_text()


MIN_DELTA = 0.1


def test_min_delta_rejects_gains_that_are_too_small(tmp_path: Path) -> None:
    history = demo_run(tmp_path / "run", *NO_SIGN_TEST, f"train.gate.min_delta={MIN_DELTA}")
    decided = [h["decision"] for h in history if h["decision"]["reason"] != "no candidate"]
    for d in decided:
        assert d["accepted"] == (d["after"] - d["before"] > MIN_DELTA), d
    small = [d for d in decided if 0 < d["after"] - d["before"] <= MIN_DELTA]
    assert small, "no step gained a little: the run does not exercise min_delta"
    assert all(f"by more than {MIN_DELTA:g} (" in d["reason"] for d in small)
    assert any(d["accepted"] for d in decided)

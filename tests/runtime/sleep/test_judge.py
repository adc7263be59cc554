"""Judging a replayed answer: rule checks and exact references here, a rubric from the judge
model's JSON answer."""

from __future__ import annotations

import pytest

from skopt.runtime.sleep.judge import by_reference, by_rubric, by_rules
from skopt.runtime.sleep.tasks import Check, heuristic_task
from tests.runtime.sleep.sessions_for_tests import session


def task(**fields: object):  # type: ignore[no-untyped-def]
    found = heuristic_task(session("add httpx", "no, use uv not pip"))
    assert found is not None
    return found.model_copy(update=fields)


def test_rules_pass_when_every_check_passes() -> None:
    t = task()
    assert by_rules(t, "Run `uv add httpx`.").hard == 1.0
    failed = by_rules(t, "Run `pip install httpx`, or uv.")
    assert (failed.hard, failed.soft) == (0.0, 0.5)
    assert "not_regex" in failed.note
    assert by_rules(t, "pipx is fine with uv").hard == 1.0  # \bpip\b: pipx is another word
    none = by_rules(task(checks=[]), "anything")
    assert (none.hard, none.soft) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("check", "answer", "passes"),
    [
        (Check(kind="contains", value="UV ADD"), "uv add httpx", True),
        (Check(kind="not_contains", value="pip install"), "Pip Install x", False),
        (Check(kind="regex", value=r"uv (add|lock)"), "uv lock", True),
        (Check(kind="not_regex", value=r"^sudo"), "sudo uv add", False),
    ],
)
def test_each_kind_of_check(check: Check, answer: str, passes: bool) -> None:
    assert by_rules(task(checks=[check]), answer).passed is passes


def test_exact_finds_the_reference_with_case_and_spaces_folded() -> None:
    t = task(reference="uv add  httpx")
    assert by_reference(t, "Run:\nUV ADD httpx\n").passed
    assert not by_reference(t, "uv add requests").passed
    assert not by_reference(task(reference=None), "uv add httpx").passed


@pytest.mark.parametrize(
    ("answer", "hard", "soft"),
    [
        ({"score": 0.9, "note": "uses uv"}, 1.0, 0.9),
        ({"score": 0.8}, 1.0, 0.8),
        ({"score": 0.5, "note": 3}, 0.0, 0.5),
        ({"score": 1}, 1.0, 1.0),
    ],
)
def test_a_rubric_verdict_from_the_judges_answer(answer: object, hard: float, soft: float) -> None:
    verdict = by_rubric(answer)
    assert verdict is not None and (verdict.hard, verdict.soft) == (hard, soft)


@pytest.mark.parametrize(
    "answer", [None, "0.9", {"score": "0.9"}, {"score": True}, {"score": 1.5}, {"note": "x"}]
)
def test_an_unusable_judge_answer_is_none(answer: object) -> None:
    assert by_rubric(answer) is None

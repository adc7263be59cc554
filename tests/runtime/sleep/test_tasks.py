"""Mining tasks: the heuristic miner, the model miner's answer checked field by field, dedupe,
what each judge can score, and the split into train and held-out."""

from __future__ import annotations

from skopt.compiler.night_calls import split_sizes
from skopt.runtime.sleep.tasks import (
    USE_NOT,
    Check,
    corrections,
    dedupe,
    heuristic_task,
    judgeable,
    model_tasks,
    rule_checks,
    split,
    task_id,
)
from tests.runtime.sleep.sessions_for_tests import session


def test_use_x_not_y_takes_names_with_dots_but_not_a_full_stop() -> None:
    said = "No, use uv not pip. Use `python3.12` instead of python3.11; use ruff rather than black."
    found = [(m["good"], m["bad"]) for m in USE_NOT.finditer(said)]
    assert found == [("uv", "pip"), ("python3.12", "python3.11"), ("ruff", "black")]


def test_corrections_are_later_prompts_worded_so_or_after_a_failed_call() -> None:
    worded = session("add httpx", "no, use uv not pip", "thanks, now commit")
    assert corrections(worded) == ["no, use uv not pip"]
    failed = session("add httpx", "try again with the lock file", failed_first=True)
    assert corrections(failed) == ["try again with the lock file"]
    assert corrections(session("add httpx", "and commit it")) == []


def test_the_heuristic_task_takes_the_first_prompt_and_checks_from_the_corrections() -> None:
    task = heuristic_task(session("add httpx to the project", "no, use uv not pip"))
    assert task is not None
    assert task.intent == "add httpx to the project"
    assert task.signals == ["no, use uv not pip"]
    assert task.checks == [
        Check(kind="contains", value="uv"),
        Check(kind="not_regex", value=r"\bpip\b"),
    ]
    assert task.miner == "heuristic" and task.session == "claude-code:s1"
    assert "use uv not pip" in (task.rubric or "")
    assert heuristic_task(session()) is None


def test_the_model_miner_keeps_whole_tasks_and_drops_bad_fields() -> None:
    answer = {
        "tasks": [
            {
                "intent": "Add httpx.",
                "context": "",
                "checks": [
                    {"kind": "contains", "value": "uv add"},
                    {"kind": "regex", "value": "(unclosed"},  # not a regex: dropped
                    {"kind": "sounds_good", "value": "x"},  # not a kind: dropped
                    {"kind": "not_contains"},  # no value: dropped
                ],
                "reference": "uv add httpx",
                "rubric": "uses uv",
                "corrections": ["no, use uv not pip"],
            },
            {"intent": "  ", "checks": []},  # no intent: dropped
            "not a task",
        ]
    }
    tasks = model_tasks(answer, session("add httpx"))
    assert len(tasks) == 1
    task = tasks[0]
    assert task.checks == [Check(kind="contains", value="uv add")]
    assert task.reference == "uv add httpx" and task.rubric == "uses uv"
    assert task.context == "A coding task in project /home/dana/src/app, branch main."
    assert task.miner == "model"
    assert model_tasks("garbage", session("x")) == [] and model_tasks({"tasks": 3}, session()) == []
    many = {"tasks": [{"intent": f"task {i}"} for i in range(5)]}
    assert len(model_tasks(many, session("x"))) == 3


def test_the_same_intent_twice_is_one_task_the_first_mined() -> None:
    a = heuristic_task(session("Add  HTTPX", sid="a"))
    b = heuristic_task(session("add httpx", sid="b"))
    assert a is not None and b is not None and a.id == b.id == task_id("add httpx")
    assert [t.session for t in dedupe([a, b])] == ["claude-code:a"]


def test_each_judge_keeps_the_tasks_it_can_score() -> None:
    ruled = heuristic_task(session("add httpx", "no, use uv not pip"))
    plain = heuristic_task(session("explain the build"))
    assert ruled is not None and plain is not None
    exact = ruled.model_copy(update={"reference": "uv add httpx"})
    assert judgeable([ruled, plain], "rules") == [ruled]
    assert judgeable([ruled, plain, exact], "exact") == [exact]
    assert judgeable([ruled, plain], "rubric") == [ruled, plain]


def test_the_split_is_by_hash_disjoint_stable_and_has_both_sides() -> None:
    tasks = [t for i in range(40) if (t := heuristic_task(session(f"task number {i}")))]
    once, again = split(tasks, 0.25, seed=7), split(list(reversed(tasks)), 0.25, seed=7)
    assert {t.id: t.split for t in once} == {t.id: t.split for t in again}  # not by position
    held = {t.id for t in once if t.split == "holdout"}
    assert len(held) == 10  # exactly the plan's count (split_sizes), so its gate calls hold
    for n in range(2, 12):
        sides = [t.split for t in split(tasks[:n], 0.34, seed=7)]
        assert sides.count("holdout") == split_sizes(n, 0.34)[1]
    assert {t.id: t.split for t in split(tasks, 0.25, seed=8)} != {t.id: t.split for t in once}
    for holdout in (0.0, 1.0):  # two tasks or more: one on each side, whatever the fraction
        sides = [t.split for t in split(tasks[:2], holdout, seed=7)]
        assert sorted(sides) == ["holdout", "train"]  # type: ignore[type-var]
    assert [t.split for t in split(tasks[:1], 0.0, seed=7)] == ["train"]


def test_rule_checks_are_deduplicated_and_bounded() -> None:
    signals = ["use uv not pip", "use uv not pip!"] + [f"use a{i} not b{i}" for i in range(9)]
    checks = rule_checks(signals)
    assert len(checks) == len(set(checks)) == 6

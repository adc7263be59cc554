"""The sleep templates (prompts/sleep_*.j2): their variables are the design's, they render in
the sandbox, and they carry the sentinel that keeps skopt's own sessions out of a harvest."""

from __future__ import annotations

import pytest

from skopt.prompts import EXAMPLES, SLEEP_VARIABLES, needed, render

# Each template's variables are fixed; the night (runtime) renders them with exactly these.
DESIGN = {
    "sleep_mine.j2": {"session"},
    "sleep_replay.j2": {"task"},
    "sleep_judge.j2": {"task", "rubric", "answer"},
    "sleep_reflect.j2": {"skill", "failures", "lr", "memory"},
}
SENTINEL = "<!-- skopt-internal:"


def test_the_templates_take_the_designs_variables() -> None:
    assert SLEEP_VARIABLES == DESIGN
    for name, variables in DESIGN.items():
        assert needed(name) == variables, name


@pytest.mark.parametrize("name", sorted(DESIGN))
def test_a_template_renders_its_values_and_starts_with_the_sentinel(name: str) -> None:
    values = {key: EXAMPLES[key] for key in DESIGN[name]}
    text = render(name, **values)
    assert text.startswith(SENTINEL)
    for key, value in values.items():
        assert str(value) in text, key
    empty = render(name, **{key: "" for key in DESIGN[name]})
    assert "{{" not in empty and "{%" not in empty


@pytest.mark.parametrize("name", ["sleep_mine.j2", "sleep_judge.j2", "sleep_reflect.j2"])
def test_an_optimizer_or_judge_prompt_names_its_task_and_asks_for_json(name: str) -> None:
    text = render(name, **{key: EXAMPLES[key] for key in DESIGN[name]})
    assert f"<task>{name.removesuffix('.j2')}</task>" in text
    assert text.endswith("Reply with JSON only:")


def test_the_replay_prompt_is_the_task_alone() -> None:
    """The skill is the system message; the user message is the task (and the sentinel)."""
    assert render("sleep_replay.j2", task="Add httpx.") == (
        "<!-- skopt-internal: sleep replay -->\nAdd httpx."
    )

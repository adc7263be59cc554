"""A night's edits go into the LEARNED region only: created when missing, the text outside it
never changed, and an edit that would pass the plan's size bound is skipped."""

from __future__ import annotations

from skopt.runtime.edits import Edit, SizeLimit
from skopt.runtime.sleep.learned import HEADING, with_edits

SKILL = "# Notes\n\nUse pip for everything.\n"


def test_the_region_is_created_at_the_end_when_missing() -> None:
    applied = with_edits(SKILL, [Edit("add", "- Use uv, not pip.")])
    assert applied.skill.startswith(SKILL)
    tail = applied.skill[len(SKILL) :]
    assert "<!-- skopt:learned -->" in tail and "<!-- /skopt:learned -->" in tail
    assert HEADING in tail and "- Use uv, not pip." in tail
    assert [o.status for o in applied.outcomes] == ["applied"]


def test_edits_never_touch_text_outside_the_region() -> None:
    skill = SKILL + "\n<!-- skopt:learned -->\n- Run the tests.\n<!-- /skopt:learned -->\n\nEnd.\n"
    outside = [
        Edit("replace", "Use uv for everything.", anchor="Use pip for everything."),
        Edit("delete", anchor="End."),
    ]
    inside = Edit("replace", "- Run the tests first.", anchor="- Run the tests.")
    applied = with_edits(skill, [*outside, inside])
    assert [o.status for o in applied.outcomes] == ["skipped", "skipped", "applied"]
    assert applied.skill == skill.replace("- Run the tests.", "- Run the tests first.")


def test_nothing_applies_nothing_changes() -> None:
    applied = with_edits(SKILL, [Edit("delete", anchor="not there")])
    assert applied.skill == SKILL


def test_an_edit_past_the_size_bound_is_skipped() -> None:
    def count(text: str) -> int:
        return len(text)

    small, big = Edit("add", "- Use uv."), Edit("add", "- " + "very long rule " * 40)
    room = len(with_edits(SKILL, [small]).skill) + 5
    applied = with_edits(SKILL, [small, big], SizeLimit(room, count))
    assert [o.status for o in applied.outcomes] == ["applied", "skipped"]
    assert len(applied.skill) <= room

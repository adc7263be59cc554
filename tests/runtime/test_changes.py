"""Changes between skill versions: replayed in order on the old text, they make the new one,
byte for byte; each one's old text is found once; taking some leaves the others applicable."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skopt.runtime.changes import Block, blocks_between, replay

SKILL = "# House rules\n\nAnswer with the code.\n\n- Dates: YYYY-MM-DD.\n- Amounts: USD 1.00.\n"


def replayed(old: str, blocks: list[Block]) -> str | None:
    text: str | None = old
    for block in blocks:
        text = replay(text, block) if text is not None else None
    return text


CASES = {
    "an added rule": (SKILL, SKILL + "- Keys: UPPER_SNAKE.\n"),
    "a changed rule": (SKILL, SKILL.replace("USD 1.00", "USD 1234.50")),
    "a deleted rule": (SKILL, SKILL.replace("- Dates: YYYY-MM-DD.\n", "")),
    "two far apart": (SKILL, SKILL.replace("# House", "# Our house").replace(".00", ".50")),
    "whitespace only": (SKILL, SKILL.replace("\n\n", "\n\n\n", 1)),
    "from empty": ("", SKILL),
    "to empty": (SKILL, ""),
    "no final newline": (SKILL.rstrip("\n"), SKILL.rstrip("\n") + "\n- More."),
    "repeated lines": ("- a\n- x\n- a\n- y\n- a\n", "- a\n- x\n- b\n- y\n- a\n"),
}


@pytest.mark.parametrize(("old", "new"), CASES.values(), ids=CASES)
def test_all_changes_replayed_make_the_new_version(old: str, new: str) -> None:
    blocks = blocks_between(old, new)
    assert blocks
    assert replayed(old, blocks) == new
    for block in blocks:
        assert block.at_end or old.count(block.replaced) == 1


def test_each_change_applies_alone_and_keeps_the_others_applicable() -> None:
    new = (
        SKILL.replace("# House", "# Our house")
        .replace(".00", ".50")
        .replace("code.\n", "code.\nKeep it short.\n")
    )
    blocks = blocks_between(SKILL, new)
    assert len(blocks) == 3
    for skipped in range(3):
        taken = [b for i, b in enumerate(blocks) if i != skipped]
        text = replayed(SKILL, taken)
        assert text is not None and text != new
        assert replay(text, blocks[skipped]) == new  # the one left out still applies last


def test_a_change_whose_text_is_gone_does_not_apply() -> None:
    (block,) = blocks_between(SKILL, SKILL.replace("USD 1.00", "USD 1234.50"))
    assert replay(SKILL.replace("Amounts", "Money"), block) is None


lines = st.lists(st.sampled_from(["- a\n", "- b\n", "x\n", "\n", "# t\n", "- c"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_any_two_versions(old: list[str], new: list[str]) -> None:
    a, b = "".join(old), "".join(new)
    blocks = blocks_between(a, b)
    result = replayed(a, blocks)
    # unique context may not exist in very repetitive text: then a change refuses, never
    # producing a wrong text
    assert result is None or result == b

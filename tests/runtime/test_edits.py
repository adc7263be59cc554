"""Edit application (SPEC §5.2) as table tests: anchors, duplicates, protected regions, leakage,
sequential application and recorded outcomes; and properties that hold for any input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skopt.runtime.edits import (
    LEAK_REASON,
    LEARNED,
    SLOW_UPDATE,
    Edit,
    apply_edits,
    close_marker,
    find_regions,
    leaked_answer,
    open_marker,
    replace_region,
    without_leaks,
)


def region(name: str, body: str) -> str:
    return f"{open_marker(name)}\n{body}\n{close_marker(name)}\n"


LEARNED_BLOCK = region(LEARNED, "- learned rule")
SLOW_BLOCK = region(SLOW_UPDATE, "guidance")


def only(skill: str, edit: Edit, gold: tuple[str, ...] = ()) -> tuple[str, str, str]:
    """(new skill, status, reason) of applying one edit."""
    result = apply_edits(skill, [edit], gold_answers=gold)
    (outcome,) = result.outcomes
    return result.skill, outcome.status, outcome.reason


# --- applied edits: (skill, edit, expected skill, expected reason) ----------------------------

EXACT = "(matched exactly)"
NORMALISED = "(matched after whitespace normalisation)"
AT_END = "added at the end of the editable text"

APPLIED = {
    # add without anchor
    "add-end-list-joins": ("- a\n", Edit("add", "- b"), "- a\n- b\n", AT_END),
    "add-end-paragraph-gets-blank-line": (
        "Para.\n",
        Edit("add", "New."),
        "Para.\n\nNew.\n",
        AT_END,
    ),
    "add-end-no-final-newline": ("- a", Edit("add", "- b"), "- a\n- b\n", AT_END),
    "add-end-before-trailing-blank-lines": (
        "- a\n\n\n",
        Edit("add", "- b"),
        "- a\n- b\n\n\n",
        AT_END,
    ),
    "add-to-empty-skill": ("", Edit("add", "Rule."), "Rule.\n", AT_END),
    "add-blank-anchor-is-end": ("- a\n", Edit("add", "- b", anchor=" \n"), "- a\n- b\n", AT_END),
    "add-content-edge-blank-lines-trimmed": (
        "- a\n",
        Edit("add", "\n\n- b\n\n"),
        "- a\n- b\n",
        AT_END,
    ),
    "add-end-table-row-joins": (
        "| a | 1 |\n",
        Edit("add", "| b | 2 |"),
        "| a | 1 |\n| b | 2 |\n",
        AT_END,
    ),
    "add-end-before-trailing-region": (
        "- a\n\n" + LEARNED_BLOCK,
        Edit("add", "- b"),
        "- a\n- b\n\n" + LEARNED_BLOCK,
        AT_END,
    ),
    "add-end-before-two-trailing-regions": (
        "Para.\n\n" + SLOW_BLOCK + "\n" + LEARNED_BLOCK + "\n",
        Edit("add", "New."),
        "Para.\n\nNew.\n\n" + SLOW_BLOCK + "\n" + LEARNED_BLOCK + "\n",
        AT_END,
    ),
    "add-end-after-middle-region": (
        "A.\n" + SLOW_BLOCK + "Tail.\n",
        Edit("add", "New."),
        "A.\n" + SLOW_BLOCK + "Tail.\n\nNew.\n",
        AT_END,
    ),
    "add-end-before-unclosed-region": (
        "- a\n<!-- skopt:learned -->\nx",
        Edit("add", "- b"),
        "- a\n- b\n\n<!-- skopt:learned -->\nx",
        AT_END,
    ),
    "add-end-when-all-is-protected": (
        LEARNED_BLOCK,
        Edit("add", "New."),
        "New.\n\n" + LEARNED_BLOCK,
        AT_END,
    ),
    "add-end-marker-on-last-text-line": (
        "Text <!-- skopt:learned -->\nx\n<!-- /skopt:learned -->\n",
        Edit("add", "New."),
        "Text \n\nNew.\n\n<!-- skopt:learned -->\nx\n<!-- /skopt:learned -->\n",
        AT_END,
    ),
    # add after an anchor: after the line on which the anchor ends
    "add-after-anchor-line": (
        "- a\n- b\n",
        Edit("add", "- c", anchor="- a"),
        "- a\n- c\n- b\n",
        f"added after the anchor's line {EXACT}",
    ),
    "add-after-anchor-mid-line": (
        "Be brief. Cite.\nNext.\n",
        Edit("add", "New.", anchor="brief"),
        "Be brief. Cite.\n\nNew.\n\nNext.\n",
        f"added after the anchor's line {EXACT}",
    ),
    "add-after-heading": (
        "## Rules\n- a\n",
        Edit("add", "Intro.", anchor="## Rules"),
        "## Rules\n\nIntro.\n\n- a\n",
        f"added after the anchor's line {EXACT}",
    ),
    "add-after-last-line-without-newline": (
        "- a",
        Edit("add", "- b", anchor="- a"),
        "- a\n- b\n",
        f"added after the anchor's line {EXACT}",
    ),
    "add-after-normalised-anchor": (
        "- one\n  two\n- three\n",
        Edit("add", "- x", anchor="one two"),
        "- one\n  two\n- x\n- three\n",
        f"added after the anchor's line {NORMALISED}",
    ),
    "add-crlf-keeps-line-endings": (
        "- a\r\n- b\r\n",
        Edit("add", "- c\n- d", anchor="- a"),
        "- a\r\n- c\r\n- d\r\n- b\r\n",
        f"added after the anchor's line {EXACT}",
    ),
    # replace
    "replace-exact": ("Be brief.\n", Edit("replace", "concise", "brief"), "Be concise.\n", ""),
    "replace-normalised-maps-to-original-span": (
        "Always cite\n   your sources.\nNext\n",
        Edit("replace", "cite sources.", anchor="cite your sources."),
        "Always cite sources.\nNext\n",
        NORMALISED,
    ),
    "replace-normalised-unicode-spaces": (
        "Use\u00a0\u00a0tabs\there\u2028now\n",
        Edit("replace", "X", anchor="Use tabs here now"),
        "X\n",
        NORMALISED,
    ),
    "replace-normalised-anchor-edge-whitespace": (
        "a  b c\n",
        Edit("replace", "X", anchor="\n a b \t"),
        "X c\n",
        NORMALISED,
    ),
    "replace-exact-wins-over-normalised": (
        "a  b\na b\n",
        Edit("replace", "c", anchor="a b"),
        "a  b\nc\n",
        EXACT,
    ),
    "replace-regex-metacharacters": (
        "Match a.*b (x)+ [y] $\n",
        Edit("replace", "z", anchor="a.*b (x)+"),
        "Match z [y] $\n",
        EXACT,
    ),
    "replace-unicode": (
        "Émilie — café ☕\n",
        Edit("replace", "thé", anchor="café"),
        "Émilie — thé ☕\n",
        "",
    ),
    "replace-content-edge-newlines-fitted": (
        "Be brief.\n",
        Edit("replace", "\nconcise\n", anchor="brief"),
        "Be concise.\n",
        "",
    ),
    "replace-crlf-content": (
        "a\r\nb\r\nc\r\n",
        Edit("replace", "x\ny", anchor="b"),
        "a\r\nx\r\ny\r\nc\r\n",
        "",
    ),
    # delete
    "delete-whole-line": ("- a\n- b\n- c\n", Edit("delete", anchor="- b"), "- a\n- c\n", EXACT),
    "delete-phrase": (
        "Be brief and polite.\n",
        Edit("delete", anchor=" and polite"),
        "Be brief.\n",
        "",
    ),
    "delete-last-line": ("- a\n- b", Edit("delete", anchor="- b"), "- a\n", ""),
    "delete-anchor-with-newline": ("- a\n- b\n", Edit("delete", anchor="- a\n"), "- b\n", ""),
    "delete-normalised-lines": (
        "One\ntwo\n  three\nfour\n",
        Edit("delete", anchor="two three"),
        "One\nfour\n",
        NORMALISED,
    ),
    "delete-line-before-region": (
        "A\nX\n" + LEARNED_BLOCK,
        Edit("delete", anchor="X"),
        "A\n" + LEARNED_BLOCK,
        "",
    ),
}


@pytest.mark.parametrize(("skill", "edit", "expected", "reason"), APPLIED.values(), ids=APPLIED)
def test_applied(skill: str, edit: Edit, expected: str, reason: str) -> None:
    new, status, why = only(skill, edit)
    assert (new, status) == (expected, "applied")
    assert reason in why


# --- skipped edits: (skill, edit, reason); the skill never changes ------------------------------

SKILL = "# Skill\n\n- be brief\n- cite sources\n\n" + SLOW_BLOCK + "\n" + LEARNED_BLOCK
TOUCHES = "anchor touches a protected region"

SKIPPED = {
    "add-anchor-missing": (SKILL, Edit("add", "- x", anchor="nowhere"), "anchor not found"),
    "replace-anchor-missing": (SKILL, Edit("replace", "x", anchor="nowhere"), "anchor not found"),
    "delete-anchor-missing": (SKILL, Edit("delete", anchor="nowhere"), "anchor not found"),
    "anchor-not-found-case-sensitive": (
        SKILL,
        Edit("delete", anchor="BE BRIEF"),
        "anchor not found",
    ),
    "add-anchor-twice": ("- a\n- a\n", Edit("add", "- x", anchor="- a"), "anchor found 2 times"),
    "replace-anchor-twice": ("x y x\n", Edit("replace", "z", anchor="x"), "anchor found 2 times"),
    "anchor-overlapping-occurrences": (
        "aaa\n",
        Edit("delete", anchor="aa"),
        "anchor found 2 times",
    ),
    "anchor-twice-normalised": (
        "a  b\na\tb\n",
        Edit("delete", anchor="a b"),
        "anchor found 2 times",
    ),
    "anchor-once-outside-once-inside": (
        "guidance\n" + SLOW_BLOCK,
        Edit("delete", anchor="guidance"),
        "anchor found 2 times",
    ),
    "add-empty-content": (SKILL, Edit("add", ""), "empty content"),
    "add-blank-content": (SKILL, Edit("add", " \n\t"), "empty content"),
    "replace-empty-content": (SKILL, Edit("replace", "", anchor="be brief"), "empty content"),
    "replace-missing-anchor": (SKILL, Edit("replace", "x"), "missing anchor"),
    "delete-missing-anchor": (SKILL, Edit("delete"), "missing anchor"),
    "delete-blank-anchor": (SKILL, Edit("delete", anchor="  "), "missing anchor"),
    "unknown-op": (SKILL, Edit("insert", "x"), "unknown op 'insert'"),  # type: ignore[arg-type]
    "replace-with-same-text": (
        SKILL,
        Edit("replace", "be   brief", anchor="be brief"),
        "replacement equals the anchor text",
    ),
    # duplicates
    "add-duplicate-exact": (SKILL, Edit("add", "- cite sources"), "already present"),
    "add-duplicate-normalised": (
        "- cite   your\nsources\n",
        Edit("add", "- cite your sources"),
        "already present",
    ),
    "add-duplicate-of-protected-text": (SKILL, Edit("add", "guidance"), "already present"),
    "add-duplicate-with-anchor": (
        SKILL,
        Edit("add", "- be brief", anchor="# Skill"),
        "already present",
    ),
    # protected regions
    "anchor-inside-region": (SKILL, Edit("replace", "x", anchor="guidance"), TOUCHES),
    "delete-inside-learned": (SKILL, Edit("delete", anchor="- learned rule"), TOUCHES),
    "add-after-anchor-inside-region": (SKILL, Edit("add", "- x", anchor="learned rule"), TOUCHES),
    "anchor-overlapping-opening-marker": (
        SKILL,
        Edit("delete", anchor="sources\n\n<!-- skopt"),
        TOUCHES,
    ),
    "anchor-overlapping-closing-marker": (
        SKILL,
        Edit("replace", "x", anchor="guidance\n<!-- /skopt:slow-update -->"),
        TOUCHES,
    ),
    "anchor-is-a-whole-region": (SKILL, Edit("delete", anchor=SLOW_BLOCK), TOUCHES),
    "anchor-spanning-two-regions": (
        SKILL,
        Edit("delete", anchor="guidance <!-- /skopt:slow-update --> <!-- skopt:learned -->"),
        TOUCHES,
    ),
    "anchor-stray-closing-marker": (
        "A\n<!-- /skopt:learned -->\n",
        Edit("delete", anchor="<!-- /skopt:learned -->"),
        TOUCHES,
    ),
    "anchor-after-unclosed-region": (
        "A\n<!-- skopt:learned -->\nB\n",
        Edit("delete", anchor="B"),
        TOUCHES,
    ),
    "add-anchor-line-runs-into-region": (
        "Rules: <!-- skopt:learned -->\nx\n<!-- /skopt:learned -->\n",
        Edit("add", "- y", anchor="Rules:"),
        TOUCHES,
    ),
    "add-content-with-marker": (
        SKILL,
        Edit("add", "x\n<!-- /skopt:learned -->\ny"),
        "content contains a skopt region marker",
    ),
    "replace-content-with-marker": (
        SKILL,
        Edit("replace", "<!-- skopt:other -->", anchor="be brief"),
        "content contains a skopt region marker",
    ),
    "replace-forging-a-marker": (
        "<!-- skoX -->\n",
        Edit("replace", "pt:learned", anchor="X"),
        "would change a protected region",
    ),
}


@pytest.mark.parametrize(("skill", "edit", "reason"), SKIPPED.values(), ids=SKIPPED)
def test_skipped(skill: str, edit: Edit, reason: str) -> None:
    assert only(skill, edit) == (skill, "skipped", reason)


def test_protected_names_are_configurable() -> None:
    skill = "A\n" + LEARNED_BLOCK
    edit = Edit("delete", anchor="- learned rule")
    assert apply_edits(skill, [edit], protected=[SLOW_UPDATE]).outcomes[0].status == "applied"
    assert apply_edits(skill, [edit]).outcomes[0].status == "skipped"


# --- leakage --------------------------------------------------------------------------------

LEAKS = {
    "long-answer": ("The capital is Canberra.", ["Canberra"], "", "canberra"),
    "case-insensitive": ("the capital is CANBERRA", ["canberra"], "", "canberra"),
    "casefold-unicode": ("Die STRASSE heißt so", ["Straße"], "", "strasse"),
    "whitespace-normalised": ("born in\nNew   York City", ["new york city"], "", "new york city"),
    "number": ("The total is 1250.", ["1250"], "", "1250"),
    "punctuation-edged": ("it costs $1,250 in all", ["$1,250"], "", "$1,250"),
    "first-in-sorted-order": ("zeta and alpha1", ["zeta", "alpha1"], "", "alpha1"),
    "word-boundary-prefix": ("Canberran cuisine", ["Canberra"], "", None),
    "word-boundary-suffix": ("12500 units", ["1250"], "", None),
    "word-boundary-inside": ("xparisx", ["paris"], "", None),
    "short-answer": ("answer yes or 42 or B", ["yes", "42", "B", "1.5"], "", None),
    "common-word": ("say positive, None or unknown", ["positive", "None", "Unknown"], "", None),
    "already-in-skill": ("Use Python 3 features", ["python"], "Write Python code.", None),
    "no-answers": ("anything at all", [], "", None),
    "blank-answer": ("anything at all", ["", "   "], "", None),
}


@pytest.mark.parametrize(("content", "answers", "skill", "expected"), LEAKS.values(), ids=LEAKS)
def test_leaked_answer(content: str, answers: list[str], skill: str, expected: str | None) -> None:
    assert leaked_answer(content, answers, skill=skill) == expected


LEAK_EDITS = {
    "add-refused": (Edit("add", "- Answer Canberra"), "skipped"),
    "add-after-anchor-refused": (Edit("add", "- say canberra", anchor="- be brief"), "skipped"),
    "replace-refused": (Edit("replace", "be Canberra", anchor="be brief"), "skipped"),
    "replace-with-answer-in-protected-text-allowed": (
        Edit("replace", "follow the guidance", anchor="be brief"),
        "applied",
    ),
    "delete-allowed": (Edit("delete", anchor="- be brief"), "applied"),
    "short-answer-allowed": (Edit("add", "- answer yes or no"), "applied"),
}


@pytest.mark.parametrize(("edit", "status"), LEAK_EDITS.values(), ids=LEAK_EDITS)
def test_leakage_guard_in_apply(edit: Edit, status: str) -> None:
    new, got, reason = only(SKILL, edit, gold=("Canberra", "yes", "guidance"))
    assert got == status
    if status == "skipped":
        assert (new, reason) == (SKILL, LEAK_REASON)
        assert "canberra" not in reason.casefold()  # the reason may reach the optimizer
    else:
        assert new != SKILL


OLD = "# Skill\n\nCapitals: answer the city.\n"
# (old skill, rewritten skill, expected skill, lines refused); gold answers: Canberra, Ottawa
REWRITES = {
    "nothing-leaks": (OLD, OLD + "Be brief.\n", OLD + "Be brief.\n", []),
    "leaking-line-dropped": (
        OLD,
        OLD + "- Australia: Canberra\n- Spell names in full.\n",
        OLD + "- Spell names in full.\n",
        ["- Australia: Canberra"],
    ),
    "every-leaking-line-dropped": (
        OLD,
        "# Skill\n\nSay OTTAWA for Canada.\nBe brief.\nor canberra\n",
        "# Skill\n\nBe brief.\n",
        ["Say OTTAWA for Canada.", "or canberra"],
    ),
    "answer-the-old-skill-states-kept": (
        OLD + "Ottawa is a capital.\n",
        OLD + "Ottawa is a capital.\nCanada: Ottawa\n",
        OLD + "Ottawa is a capital.\nCanada: Ottawa\n",
        [],
    ),
    "crlf-lines": (
        "A\r\n",
        "A\r\nB: Canberra\r\nC\r\n",
        "A\r\nC\r\n",
        ["B: Canberra"],
    ),
    "last-line-without-newline": (OLD, OLD + "Canberra", OLD, ["Canberra"]),
    "word-boundary": (OLD, OLD + "Canberran food\n", OLD + "Canberran food\n", []),
}


@pytest.mark.parametrize(("old", "new", "expected", "refused"), REWRITES.values(), ids=REWRITES)
def test_without_leaks_drops_the_lines_that_leak(
    old: str, new: str, expected: str, refused: list[str]
) -> None:
    result = without_leaks(old, new, ["Canberra", "Ottawa", "yes"])
    assert result.skill == expected
    assert [(o.edit.op, o.edit.content) for o in result.outcomes] == [("add", r) for r in refused]
    assert {(o.status, o.reason) for o in result.outcomes} <= {("skipped", LEAK_REASON)}


def test_without_leaks_refuses_a_rewrite_whose_answer_spans_lines() -> None:
    new = OLD + "The capital of the US is Washington,\nD.C. and so on.\n"
    result = without_leaks(OLD, new, ["Washington, D.C."])
    assert result.skill == OLD
    assert [(o.edit.content, o.status, o.reason) for o in result.outcomes] == [
        (new, "skipped", LEAK_REASON)
    ]


def test_without_leaks_with_no_answers_is_the_identity() -> None:
    new = "anything\nat all: Canberra\n"
    assert without_leaks(OLD, new, []).skill == new
    assert without_leaks(OLD, new, []).outcomes == ()


# --- sequential application and recorded outcomes --------------------------------------------


def test_edits_apply_in_order_and_every_outcome_is_recorded() -> None:
    edits = [
        Edit("add", "- c", anchor="- b", rationale="r1", support=3),
        Edit("replace", "- C", anchor="- c"),  # sees the line the first edit added
        Edit("add", "- C"),  # now a duplicate
        Edit("delete", anchor="- a"),
        Edit("delete", anchor="- a"),  # already gone
        Edit("add", ""),
        Edit("replace", "x", anchor="- "),  # "- b" and "- C": ambiguous
    ]
    result = apply_edits("- a\n- b\n", edits)
    assert result.skill == "- b\n- C\n"
    assert [(o.edit, o.status) for o in result.outcomes] == [
        (edits[0], "applied"),
        (edits[1], "applied"),
        (edits[2], "skipped"),
        (edits[3], "applied"),
        (edits[4], "skipped"),
        (edits[5], "skipped"),
        (edits[6], "skipped"),
    ]
    assert [o.reason for o in result.outcomes if o.status == "skipped"] == [
        "already present",
        "anchor not found",
        "empty content",
        "anchor found 2 times",
    ]
    assert result.applied == (edits[0], edits[1], edits[3])


def test_same_add_twice_in_one_batch_lands_once() -> None:
    result = apply_edits("Intro.\n", [Edit("add", "- x"), Edit("add", "-   x")])
    assert result.skill == "Intro.\n\n- x\n"
    assert [o.status for o in result.outcomes] == ["applied", "skipped"]


def test_no_edits() -> None:
    assert apply_edits(SKILL, []) == apply_edits(SKILL, ())
    assert apply_edits(SKILL, []).skill == SKILL


# --- regions ---------------------------------------------------------------------------------


def test_find_regions() -> None:
    skill = "A\n" + SLOW_BLOCK + "<!-- /skopt:learned -->\n<!-- skopt:other -->\n" + LEARNED_BLOCK
    regions = find_regions(skill)
    assert [r.name for r in regions] == [SLOW_UPDATE, LEARNED]  # stray closing and other: none
    assert [skill[r.start : r.end] + "\n" for r in regions] == [SLOW_BLOCK, LEARNED_BLOCK]
    assert skill[regions[1].body_start : regions[1].body_end] == "\n- learned rule\n"


def test_unclosed_region_runs_to_the_end() -> None:
    skill = "A\n<!-- skopt:learned -->\nB <!-- skopt:learned -->\nC"
    (only_region,) = find_regions(skill)
    assert skill[only_region.start :] == skill[only_region.start : only_region.end]


REGIONS = {
    "create-in-empty-skill": ("", SLOW_UPDATE, "Do X.", region(SLOW_UPDATE, "Do X.")),
    "create-at-end": ("Intro.\n\n", LEARNED, "- y", "Intro.\n\n" + region(LEARNED, "- y")),
    "create-without-final-newline": (
        "Intro.",
        LEARNED,
        "- y",
        "Intro.\n\n" + region(LEARNED, "- y"),
    ),
    "create-after-other-region": (
        "A\n\n" + LEARNED_BLOCK,
        SLOW_UPDATE,
        "g",
        "A\n\n" + LEARNED_BLOCK + "\n" + SLOW_BLOCK.replace("guidance", "g"),
    ),
    "replace-body": (
        "A\n\n" + SLOW_BLOCK + "\nB\n",
        SLOW_UPDATE,
        "new\nguidance",
        "A\n\n" + region(SLOW_UPDATE, "new\nguidance") + "\nB\n",
    ),
    "replace-leaves-other-region": (
        SLOW_BLOCK + LEARNED_BLOCK,
        LEARNED,
        "- z",
        SLOW_BLOCK + region(LEARNED, "- z"),
    ),
    "empty-body": (
        SLOW_BLOCK,
        SLOW_UPDATE,
        "",
        "<!-- skopt:slow-update -->\n<!-- /skopt:slow-update -->\n",
    ),
    "markers-in-content-dropped": (
        "",
        LEARNED,
        "a <!-- /skopt:learned --> b",
        region(LEARNED, "a  b"),
    ),
    "closes-unclosed-region": (
        "A\n<!-- skopt:learned -->\nold",
        LEARNED,
        "new",
        "A\n" + region(LEARNED, "new").removesuffix("\n"),
    ),
    "create-before-unclosed-other-region": (
        "A\n<!-- skopt:learned -->\nx",
        SLOW_UPDATE,
        "g",
        "A\n\n" + region(SLOW_UPDATE, "g") + "<!-- skopt:learned -->\nx",
    ),
    "forged-marker-in-content-dropped": (
        "",
        LEARNED,
        "a <!-- sko<!-- skopt:x -->pt:learned --> b",
        region(LEARNED, "a  b"),
    ),
    "crlf": (
        "A\r\n" + SLOW_BLOCK.replace("\n", "\r\n"),
        SLOW_UPDATE,
        "x\ny",
        "A\r\n" + region(SLOW_UPDATE, "x\ny").replace("\n", "\r\n"),
    ),
}


@pytest.mark.parametrize(("skill", "name", "content", "expected"), REGIONS.values(), ids=REGIONS)
def test_replace_region(skill: str, name: str, content: str, expected: str) -> None:
    written = replace_region(skill, name, content)
    assert written == expected
    assert replace_region(written, name, content) == written


def test_replace_region_rejects_a_name_that_cannot_be_a_marker() -> None:
    with pytest.raises(ValueError, match="not a region name"):
        replace_region("", "bad -->", "x")


def test_step_edits_cannot_touch_what_replace_region_wrote() -> None:
    skill = replace_region("Intro.\n", SLOW_UPDATE, "Prefer short answers.")
    edits = [Edit("delete", anchor="Prefer short answers."), Edit("add", "- new")]
    result = apply_edits(skill, edits)
    assert [o.status for o in result.outcomes] == ["skipped", "applied"]
    assert result.skill == "Intro.\n\n- new\n\n" + region(SLOW_UPDATE, "Prefer short answers.")


# --- properties ------------------------------------------------------------------------------

PIECES = [
    "- a",
    "b",
    " ",
    "\n",
    "\r\n",
    "\t",
    "\u00a0",
    "é",
    ".*+?[](){}|^$\\",
    "<!-- ",
    "-->",
    "skopt:",
    "learned",
    open_marker(LEARNED),
    close_marker(LEARNED),
    open_marker(SLOW_UPDATE),
    close_marker(SLOW_UPDATE),
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=12).map("".join)


@st.composite
def skills_and_edits(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    skill = draw(texts) + draw(st.sampled_from(["", SLOW_BLOCK, LEARNED_BLOCK])) + draw(texts)
    skill += draw(st.sampled_from(["", LEARNED_BLOCK, SLOW_BLOCK + LEARNED_BLOCK]))

    def anchor(i: int, j: int, noise: str) -> str:
        return skill[min(i, j) : max(i, j)] if noise == "" else noise

    positions = st.integers(0, len(skill))
    anchors = st.none() | st.builds(anchor, positions, positions, st.just("") | texts)
    edit = st.builds(Edit, st.sampled_from(["add", "replace", "delete"]), texts, anchors)
    return skill, draw(st.lists(edit, max_size=6))


def protected_text(skill: str) -> list[str]:
    return [skill[r.start : r.end] for r in find_regions(skill)]


@settings(max_examples=400, deadline=None)
@given(skills_and_edits(), st.lists(texts, max_size=3))
def test_apply_edits_never_raises_nor_touches_protected_regions(
    case: tuple[str, list[Edit]], gold: list[str]
) -> None:
    skill, edits = case
    result = apply_edits(skill, edits, gold_answers=gold)
    assert len(result.outcomes) == len(edits)
    assert protected_text(result.skill) == protected_text(skill)
    assert apply_edits(skill, edits, gold_answers=gold) == result  # deterministic
    if all(o.status == "skipped" for o in result.outcomes):
        assert result.skill == skill


@settings(max_examples=200, deadline=None)
@given(texts, st.sampled_from([SLOW_UPDATE, LEARNED]), texts)
def test_replace_region_never_raises_and_is_idempotent(skill: str, name: str, content: str) -> None:
    written = replace_region(skill, name, content)
    assert replace_region(written, name, content) == written
    assert find_regions(written, (name,))[0].closed


plain = st.lists(st.sampled_from(PIECES[:9]) | st.text("ab \n-", max_size=4), max_size=8).map(
    "".join
)


@settings(max_examples=200, deadline=None)
@given(
    plain,
    st.sampled_from(["", SLOW_BLOCK]),
    plain,
    st.sampled_from(["", "<!-- skopt:learned -->\nx"]),
)
def test_replace_region_keeps_the_other_regions(
    head: str, slow: str, middle: str, learned: str
) -> None:
    skill = head + slow + middle + learned
    written = replace_region(skill, SLOW_UPDATE, "new guidance")
    assert [skill[r.start : r.end] for r in find_regions(skill, (LEARNED,))] == [
        written[r.start : r.end] for r in find_regions(written, (LEARNED,))
    ]
    (region_,) = find_regions(written, (SLOW_UPDATE,))
    assert written[region_.body_start : region_.body_end].strip() == "new guidance"

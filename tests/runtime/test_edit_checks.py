"""Edits checked right after reflection (runtime/edit_checks.py): each kind of unusable edit the
small optimizers were seen to propose is found and named, usable ones pass untouched, and the
re-ask message lists every problem by edit number."""

from __future__ import annotations

from skopt.compiler.dataset import Item
from skopt.runtime.edit_checks import check, reask_text, usable
from skopt.runtime.edits import Edit
from skopt.runtime.optimizer import reflect_own_words
from skopt.runtime.scoring import Trajectory

SKILL = "# Ticket routing\n\nRoute each support ticket to the queue that handles it.\n"
TICKET = (
    "Please re-issue the invoice for #51234 with our company name, Lumen GmbH. This is the "
    "second time I write."
)
EVIDENCE = [
    Trajectory(Item("i1", TICKET, ("accounts",)), 0, "billing", "billing", 0.0, 0.0),
    Trajectory(
        Item("i2", "My keyboard arrived broken. Refund!", ("logistics",)), 0, "x", "x", 0, 0
    ),
]


def problems(edit: Edit) -> tuple[str, ...]:
    (finding,) = check([edit], SKILL, EVIDENCE)
    return finding.problems


def test_a_general_rule_with_a_right_example_is_usable() -> None:
    rule = Edit(
        "add",
        "Invoices whose company name or VAT number must change go to accounts. "
        'Example: "re-issue the invoice for #51234 with our company name" -> accounts.',
    )
    assert problems(rule) == ()
    assert usable(check([rule], SKILL, EVIDENCE)) == [rule]


def test_an_anchor_that_is_not_in_the_skill() -> None:
    found = problems(Edit("replace", "Route to billing.", anchor=TICKET))
    assert len(found) == 1 and found[0].startswith('it cannot be applied to the skill "Please')
    assert "not found" in found[0]


def test_a_rule_the_skill_already_has() -> None:
    found = problems(Edit("add", "Route each support ticket to the queue that handles it."))
    assert found == ("it cannot be applied to the skill: already present",)


def test_content_that_copies_an_input() -> None:
    found = problems(Edit("add", f"Tickets like this go to accounts: {TICKET}"))
    assert found == (f'it copies a task\'s input ("{TICKET[:59]}…")',)


def test_an_example_that_maps_an_answer_to_an_answer() -> None:
    found = problems(Edit("add", "Route by topic. Example: accounts -> logistics."))
    assert found == ('its example "accounts -> logistics" maps an answer to an answer',)


def test_an_example_that_contradicts_the_evidence_is_given_the_expected_answer() -> None:
    wrong = Edit("add", "Damage is logistics. Example: keyboard arrived broken -> billing.")
    (finding,) = check([wrong], SKILL, EVIDENCE)
    assert finding.problems == ()
    assert (
        finding.edit.content
        == "Damage is logistics. Example: keyboard arrived broken -> logistics."
    )
    assert finding.repairs == (
        'example "keyboard arrived broken -> billing" now gives "logistics"',
    )


def test_an_example_the_evidence_cannot_judge_passes() -> None:
    assert problems(Edit("add", "Dates: YYYY-MM-DD. Example: 19 October 2001 -> 2001-10-19.")) == ()


def test_the_reask_names_each_problem_by_edit_number() -> None:
    edits = [
        Edit("add", "Broken items go to logistics."),
        Edit("add", "Example: accounts -> billing."),
        Edit("delete", anchor="not in the skill"),
    ]
    findings = check(edits, SKILL, EVIDENCE)
    assert [bool(f.problems) for f in findings] == [False, True, True]
    text = reask_text(findings, 3)
    assert "- edit 2: its example" in text and "- edit 3: it cannot be applied" in text
    assert "edit 1" not in text and text.endswith('at most 3 edits: {"edits": [...]}')


def test_an_example_must_give_one_of_the_labels() -> None:
    copied = Edit(
        "add", 'Invoices go to work. Example: "Your invoice from Dropbox is ready." -> work.'
    )
    labels = ["billing", "tech", "accounts", "logistics", "priority"]
    (finding,) = check([copied], SKILL, EVIDENCE, labels)
    assert finding.problems == (
        'its example "Your invoice from Dropbox is ready. -> work" gives "work", which is not one '
        "of the labels (billing, tech, accounts, logistics, priority)",
    )


def test_a_quoted_input_is_one_example_and_no_copy() -> None:
    quoted = Edit("add", f'Company name changes go to accounts. Example: "{TICKET}" -> billing.')
    (finding,) = check([quoted], SKILL, EVIDENCE, ["accounts", "billing"])
    assert finding.problems == ()  # its sentences are one example's left side, not a rule
    assert finding.edit.content.endswith(f'"{TICKET}" -> accounts.')  # given the expected label


def reflect_prompt(task_kind: str) -> str:
    """reflect.j2's own words, as the optimizer hands them to the check."""
    return reflect_own_words(None, "failures", task_kind, 3)


def test_a_rule_copied_from_the_prompts_example_is_found() -> None:
    # the 1.5B's copies on tickets: the example's rule with a ticket glued on, a right label
    glued = '"Order #50210: the monitor arm is cracked. Refund please." -> logistics.'
    copies = [
        f"Invoices and receipts for services go to work. Example: {glued}",
        f"Mails from relatives (mum, dad, a sister) go to family. Example: {glued}",
    ]
    own = reflect_prompt("classify")
    for content in copies:
        (finding,) = check([Edit("add", content)], SKILL, EVIDENCE, ["logistics"], own)
        assert finding.problems == ("it copies the prompt's example, which is not about this task",)
    real = Edit("add", f"Refunds for damaged items go to logistics. Example: {glued}")
    assert check([real], SKILL, EVIDENCE, ["logistics"], own)[0].problems == ()


def test_borrowing_the_prompts_form_is_no_copy() -> None:
    own = reflect_prompt("qa")
    form = Edit(
        "add", 'Amounts: write the number followed by " USD". Example: 3715.25 -> 3715.25 USD.'
    )
    assert check([form], SKILL, EVIDENCE, (), own)[0].problems == ()
    copy = Edit("add", "Counting questions: reply with the number alone. Example: 3 weeks -> 21.")
    assert check([copy], SKILL, EVIDENCE, (), own)[0].problems != ()

"""The rules every candidate skill passes, whatever made it (SPEC §5.2): a rewrite keeps the
protected slow-update region of the skill it replaces, the leakage guard drops what would copy a
gold answer of the valid or test split, and every refusal is recorded like a skipped edit.
"""

from __future__ import annotations

from skopt.runtime.edits import (
    SLOW_UPDATE,
    Applied,
    Edit,
    find_regions,
    replace_region,
    without_leaks,
)
from skopt.runtime.events import EditOutcome, EditRecord
from skopt.runtime.optimizer import edit_json


def guarded(skill: str, rewritten: str, leaks: set[str]) -> Applied:
    """A rewritten skill less the lines that would leak a gold answer (the leakage guard of
    patches, for whole skills), with the region of `skill` kept verbatim."""
    return without_leaks(skill, keep_regions(skill, rewritten), leaks)


def with_guidance(skill: str, guidance: str, leaks: set[str]) -> Applied:
    """`skill` with `guidance` in its protected region, past the leakage guard: slow update may
    compare on the valid split, whose answers the guidance must not copy."""
    return without_leaks(skill, replace_region(skill, SLOW_UPDATE, guidance), leaks)


def keep_regions(old: str, new: str) -> str:
    """A rewritten skill keeps the protected slow-update region of the old one, verbatim."""
    regions = [r for r in find_regions(old) if r.name == SLOW_UPDATE]
    if not regions:
        return new
    return replace_region(new, SLOW_UPDATE, old[regions[0].body_start : regions[0].body_end])


def edit_record(edit: Edit) -> EditRecord:
    return EditRecord(
        op=edit.op,
        anchor=edit.anchor,
        content=edit.content,
        rationale=edit.rationale,
        support=edit.support,
    )


def prompt_json(record: EditRecord) -> dict[str, object]:
    """An edit as the optimizer's prompts show it (the same JSON as `edit_json`)."""
    r = record
    return edit_json(Edit(r.op, r.content, r.anchor, r.rationale, r.support))


def outcomes(applied: Applied) -> list[EditOutcome]:
    return [
        EditOutcome(edit=edit_record(o.edit), status=o.status, reason=o.reason)
        for o in applied.outcomes
    ]

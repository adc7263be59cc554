"""Edits of a night go into the skill's LEARNED region only (`<!-- skopt:learned -->` …
`<!-- /skopt:learned -->`, created at the end of the file when missing, under a heading): the
edit engine of SPEC §5.2 applies them to the region's body as a document of its own, so the text
outside the region never changes, whatever the edits say. An edit that would make the whole
skill count more tokens than the plan's bound is skipped, as in training.
"""

from __future__ import annotations

from collections.abc import Sequence

from skopt.runtime.edits import (
    LEARNED,
    Applied,
    Edit,
    SizeLimit,
    apply_edits,
    find_regions,
    replace_region,
)

HEADING = "## Learned from past sessions (skopt sleep)"


def with_edits(skill: str, edits: Sequence[Edit], limit: SizeLimit | None = None) -> Applied:
    """`skill` with `edits` applied inside its LEARNED region; each edit's outcome."""
    found = find_regions(skill, (LEARNED,))
    body = skill[found[0].body_start : found[0].body_end] if found else f"\n{HEADING}\n"
    whole = (
        SizeLimit(limit.tokens, lambda b: limit.count(replace_region(skill, LEARNED, b)))
        if limit
        else None
    )
    applied = apply_edits(body, edits, protected=(), limit=whole)
    if not applied.applied:
        return Applied(skill, applied.outcomes)
    return Applied(replace_region(skill, LEARNED, applied.skill), applied.outcomes)

"""A step's candidates after the first (docs/decisions.md, "More than one candidate").

When the gate rejects a step's candidate, the step may score the next one, up to `gate tries`
candidates in all, each tested at the confidence they share (compiler/gate_bound.py). In order:

1. `next`: the merged edits that selection left out, as many as the learning rate.
2. `demonstrations` (`train demonstrations = on`): worked examples of the step's failed train
   items, `Example: "input" -> expected answer`, as many as the learning rate. With a classify
   env's declared labels, each label that neither those examples nor the skill show gets one
   counterweight: a right example of it from the train split, since a small model answers with
   the labels its examples show. Before the examples, in such an env, each train item whose
   input holds words that set its answer apart in the train split (runtime/label_phrases.py)
   gives a rule, the failed items' first: `If the ticket mentions "Enterprise plan", answer
   priority, whatever else it says.` All of it comes from the train split only; the leakage
   guard checks it like any edit.

Right after the step's first near miss — a candidate the gate refused although it fixed more
gate items than it broke — comes `near_miss`: its edits together with those of earlier near
misses (a step that accepts none keeps its best one; the newest NEAR_MISSES are kept). Two rules
that each fix three items are luck alone and believed together (GEPA keeps a frontier of
candidates that win on different items for the same reason).

Pure functions; the engine scores what they make and keeps the near misses in its state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skopt.compiler.dataset import Item
from skopt.runtime.edits import Edit
from skopt.runtime.envs.text import label_key
from skopt.runtime.events import EditRecord
from skopt.runtime.label_phrases import TrainPhrases
from skopt.runtime.scoring import Trajectory

Source = Literal["selected", "near_miss", "next", "demonstrations"]
NEAR_MISSES = 3  # the most kept: the newest
DEMONSTRATION_CHARS = 300  # a longer input makes no worked example


class NearMiss(BaseModel):
    """A refused candidate that fixed more gate items than it broke."""

    model_config = ConfigDict(extra="forbid")

    step: int
    edits: list[EditRecord]  # the edits that made it (those applied)
    fixed: list[str]  # the gate items it fixed
    broken: list[str]


def shared_by(skill: str, candidates: Sequence[str | None], merges: bool, tries: int) -> int:
    """How many candidates a step can score, counted before its first gate pass from the skills
    its sources make without a gate outcome (None: no skill) and whether a near miss can merge
    with the pool: each new skill once, one merge, `tries` at most. The gate tests each at
    the confidence they share, so that a step with one candidate tests it at the whole."""
    new = {c for c in candidates if c is not None and c != skill}
    return max(1, min(len(new) + merges, tries))


def kept(pool: Sequence[NearMiss], new: NearMiss) -> list[NearMiss]:
    """The pool with `new` as its newest entry (in place of one with the same edits), the
    newest NEAR_MISSES kept."""
    same = [(e.op, e.anchor, e.content) for e in new.edits]
    rest = [m for m in pool if [(e.op, e.anchor, e.content) for e in m.edits] != same]
    return [*rest, new][-NEAR_MISSES:]


def with_near_misses(first: Sequence[EditRecord], pool: Sequence[NearMiss]) -> list[Edit]:
    """The edits of this step's near miss, then each pooled near miss's (newest first) that is
    not among them."""
    edits: list[Edit] = []
    seen: set[tuple[str, str | None, str]] = set()
    for r in [*first, *(r for miss in reversed(pool) for r in miss.edits)]:
        if (r.op, r.anchor, r.content) not in seen:
            seen.add((r.op, r.anchor, r.content))
            edits.append(Edit(r.op, r.content, r.anchor, r.rationale, r.support))
    return edits


def left_out(merged: Sequence[Edit], selected: Sequence[Edit], lr: int) -> list[Edit]:
    """The merged edits that selection did not take, most supported first, `lr` at most."""
    rest = [e for e in merged if e not in selected]
    return sorted(rest, key=lambda e: -e.support)[:lr]


def demonstrations(failures: Sequence[Trajectory], count: int, skill: str = "") -> list[Edit]:
    """Worked examples of failed train items: each item's input, quoted, and its expected answer
    (the first, when it has several), `count` at most, one per input that the skill does not
    quote already."""
    edits: list[Edit] = []
    for t in failures:
        if len(edits) >= count:
            break
        if (shown := _example(t.item, edits, skill)) is not None:
            edits.append(Edit("add", shown, None, "a worked example of a failed train item"))
    return edits


def phrase_rules(
    failures: Sequence[Trajectory], phrases: TrainPhrases, noun: str, skill: str = ""
) -> list[Edit]:
    """The words that set each train item's answer apart (`phrases`), as rules about the `noun`
    (what the env's inputs are): the failed items' first, then the rest of the train split's,
    one per phrase and label, none that the skill states already."""
    edits: list[Edit] = []
    stated: set[tuple[str, str]] = set()
    for item in [*(t.item for t in failures), *phrases.items]:
        phrase = phrases.deciding(item)
        if phrase is None or (phrase.casefold(), label_key(item.answers[0])) in stated:
            continue
        stated.add((phrase.casefold(), label_key(item.answers[0])))
        rule = (
            f'If the {noun} mentions "{phrase}", answer {item.answers[0]}, whatever else it says.'
        )
        if rule not in skill:
            edits.append(Edit("add", rule, None, "the words that set train items of a label apart"))
    return edits


def counterweights(
    shown: Sequence[Edit], skill: str, train: Sequence[Item], labels: Sequence[str]
) -> list[Edit]:
    """For each label that neither the `shown` examples nor the skill give, one example of it:
    the first train item with that answer. None when nothing is shown."""
    if not shown:
        return []
    edits: list[Edit] = []
    for label in labels:
        made = [*shown, *edits]
        if _gives(skill, label) or any(_gives(e.content, label) for e in made):
            continue
        key = label_key(label)
        of_label = (i for i in train if i.answers and label_key(i.answers[0]) == key)
        if example := next(filter(None, (_example(i, made, skill) for i in of_label)), None):
            edits.append(Edit("add", example, None, f"a counterweight: an example of {label}"))
    return edits


def _example(item: Item, made: Sequence[Edit], skill: str) -> str | None:
    """`Example: "input" -> answer` for `item`; None when the item makes none (no answer, an
    input too long) or its input is already quoted in `made` or in the skill."""
    text = " ".join(item.input.split())
    if not item.answers or not text or len(text) > DEMONSTRATION_CHARS:
        return None
    quoted = f'"{text}"'
    if quoted in skill or any(quoted in e.content for e in made):
        return None
    return f"Example: {quoted} -> {item.answers[0]}"


def _gives(text: str, label: str) -> bool:
    """Whether `text` holds an example that ends in `label` (`-> label`)."""
    return re.search(rf"->\s*{re.escape(label)}(?!\w)", text, re.IGNORECASE) is not None

"""The aggregate phase's hierarchical merge (SPEC §5.1): a step's patches (or, in
`full_rewrite` mode, its candidate skills) merged by the optimizer in groups of `merge_batch`,
round after round, until one is left. A group of one is carried over without a call; an
unusable answer keeps the group's edits (or its first candidate), never fails the step.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from skopt.runtime.calls import gathered
from skopt.runtime.edits import Edit
from skopt.runtime.optimizer import Memory, Optimizer, Patch

T = TypeVar("T")


async def merge_patches(
    optimizer: Optimizer, skill: str, patches: list[Patch], size: int, memory: Memory
) -> Patch | None:
    async def group(patches: list[Patch]) -> Patch:
        merged = await optimizer.merge(skill, patches, memory)
        return merged if merged is not None else concatenated(patches)  # keep them all

    return await _rounds(patches, size, group)


async def merge_candidates(
    optimizer: Optimizer, skill: str, candidates: list[str], size: int
) -> str | None:
    async def group(candidates: list[str]) -> str:
        return await optimizer.merge_full(skill, candidates) or candidates[0]

    return await _rounds(candidates, size, group)


async def _rounds(items: list[T], size: int, merge: Callable[[list[T]], Awaitable[T]]) -> T | None:
    async def one(group: list[T]) -> T:
        return group[0] if len(group) == 1 else await merge(group)

    while len(items) > 1:
        items = list(await gathered(*(one(g) for g in chunks(items, size))))
    return items[0] if items else None


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def concatenated(patches: list[Patch]) -> Patch:
    """The edits of every patch, once each (support summed)."""
    seen: dict[str, Edit] = {}
    for edit in (e for p in patches for e in p.edits):
        key = json.dumps([edit.op, edit.anchor, edit.content])
        seen[key] = (
            Edit(
                edit.op, edit.content, edit.anchor, edit.rationale, seen[key].support + edit.support
            )
            if key in seen
            else edit
        )
    return Patch(patches[0].source, list(seen.values()))

"""The changes between two versions of a skill, as blocks of text a person can take one by one.

A block replaces `old` lines by `new` ones, between unchanged `before` and `after` lines: just
enough of them that `before + old + after` occurs once. Replayed in order on the old version,
all blocks make the new one, byte for byte (whitespace included): context comes only from the
unchanged text around a block, and every block keeps it as it was.

Taken one by one, a block also applies where its context moved or was never added (a person
took a later change but not the one beside it): it then looks for its own old lines alone, or,
for an insertion, for one side of its context; a block appended at the very end is appended to
whatever text it is given. Whatever it finds must be found exactly once, or it does not apply.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

Opcodes = Sequence[tuple[str, int, int, int, int]]


@dataclass(frozen=True)
class Block:
    before: str
    old: str
    new: str
    after: str
    at_end: bool = False  # an insertion after the old version's last line

    @property
    def replaced(self) -> str:
        """The text this block looks for."""
        return self.before + self.old + self.after

    @property
    def replacement(self) -> str:
        return self.before + self.new + self.after


def blocks_between(old: str, new: str) -> list[Block]:
    """The changed blocks that turn `old` into `new`, top to bottom."""
    if old == new:
        return []
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [_block(a, b, ops, i, old) for i, op in enumerate(ops) if op[0] != "equal"]


def replay(text: str, block: Block) -> str | None:
    """`text` with the block's change made; None when it does not apply (see the docstring)."""
    if block.at_end:
        return text + ("\n" if text and not text.endswith("\n") else "") + block.new
    if _unique(text, block.replaced):
        return text.replace(block.replaced, block.replacement, 1)
    if block.old:
        return text.replace(block.old, block.new, 1) if _unique(text, block.old) else None
    if block.before and _unique(text, block.before):
        return text.replace(block.before, block.before + block.new, 1)
    if block.after and _unique(text, block.after):
        return text.replace(block.after, block.new + block.after, 1)
    return None


def _block(a: list[str], b: list[str], ops: Opcodes, at: int, old: str) -> Block:
    """The change at `ops[at]`, widened into the unchanged runs beside it until what it looks
    for is unique (or the runs are used up)."""
    _, i1, i2, j1, j2 = ops[at]
    if i1 == i2 == len(a):
        return Block("", "", "".join(b[j1:j2]), "", at_end=True)
    above, below = _equal_run(ops, at - 1), _equal_run(ops, at + 1)
    up = down = 0
    while not _unique(old, "".join(a[i1 - up : i2 + down])):
        if down < below:
            down += 1
        elif up < above:
            up += 1
        else:
            break
    return Block(
        "".join(a[i1 - up : i1]), "".join(a[i1:i2]), "".join(b[j1:j2]), "".join(a[i2 : i2 + down])
    )


def _equal_run(ops: Opcodes, at: int) -> int:
    """How many unchanged lines `ops[at]` holds (0 if it is not an unchanged run)."""
    if not 0 <= at < len(ops) or ops[at][0] != "equal":
        return 0
    return ops[at][2] - ops[at][1]


def _unique(text: str, part: str) -> bool:
    """`part` occurs in `text` exactly once, overlapping occurrences counted."""
    first = text.find(part)
    return bool(part) and first >= 0 and text.find(part, first + 1) < 0

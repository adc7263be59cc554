"""How large the skill can get: a bound, in the target model's tokens, on the skill after every
step and every slow update, which the plan counts target inputs with and the runtime enforces.

Every text that enters the skill comes out of one optimizer reply, and a reply holds at most the
optimizer's `max_tokens` (call it R). So, per step:
- `patch`: at most lr edits are applied (the select phase keeps the top lr; an autonomous step is
  planned for AUTONOMOUS_EDITS), each adding at most R tokens of content plus EDIT_SEAM.
- `rewrite`, `full_rewrite`: the candidate is one reply (at most R + EDIT_SEAM) plus the
  slow-update region it keeps verbatim (at most the initial skill, or one guidance reply in its
  markers), so the bound stops growing once it holds that.
- slow update: the region's body is replaced by one reply, in its markers: at most R +
  REGION_MARKERS more.
A skill may also shrink (`delete`, `replace`, a shorter rewrite), down to nothing.

Tokenizers differ: R counts the optimizer's tokens, the bound counts the target's (exactly for
OpenAI targets, as the plan's ~4-characters estimate otherwise), and a tokenizer's count of a
text is not the sum of its counts of the parts. So the bound is not derived from the text — it is
enforced: the runtime counts each candidate with the same counter and refuses an edit, a rewrite
or a guidance that would make the skill larger (recorded with the reason, like any skipped
edit). Every skill a target call carries is then within the bound, and a call's input is at most
the bound plus the user message and chat overhead: a max that holds at run time, not on average.
The allowances are generous enough that a reply-sized edit is never refused in practice.
"""

from __future__ import annotations

from dataclasses import dataclass

# Tokens an edit may add beyond its content: the blank lines put around an added block, and the
# seams where the text on either side is tokenized anew.
EDIT_SEAM = 8
# The slow-update region's two marker comments, with the line breaks around them (a test counts
# them with every counter the plan uses).
REGION_MARKERS = 32
# An autonomous step chooses its own lr; it is planned (and reflections are asked) for this many.
AUTONOMOUS_EDITS = 8


@dataclass(frozen=True, slots=True)
class SkillSize:
    """The skill while a phase runs, measured against the initial skill: whether it may have
    changed (and so shrunk, down to nothing), and by how many tokens it may have grown."""

    changed: bool = False
    growth: int = 0

    def low(self, initial: int) -> int:
        return 0 if self.changed else initial

    def high(self, initial: int) -> int:
        return initial + self.growth


INITIAL = SkillSize()


@dataclass(frozen=True, slots=True)
class Growth:
    """How much each step and each slow update may grow the skill (module docstring)."""

    initial: int  # the initial skill, in the target's tokens
    reply: int  # the optimizer's max_tokens
    mode: str  # patch | rewrite | full_rewrite
    slow_update: bool

    @property
    def edit(self) -> int:
        return self.reply + EDIT_SEAM

    @property
    def region(self) -> int:
        return self.reply + REGION_MARKERS

    def after_step(self, size: SkillSize, lr: int | None) -> SkillSize:
        if self.mode == "patch":
            edits = AUTONOMOUS_EDITS if lr is None else lr
            return SkillSize(True, size.growth + edits * self.edit)
        kept = max(self.initial, self.region if self.slow_update else 0)
        return SkillSize(True, max(size.growth, self.edit + kept - self.initial))

    def after_slow_update(self, size: SkillSize) -> SkillSize:
        return SkillSize(True, size.growth + self.region)

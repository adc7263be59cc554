"""What a night may send to a model: the bounds the plan counts with and the runtime enforces.

A night's prompts carry text that only exists at run time (a harvested session, a mined task, a
judge's note), so the plan cannot count it: it counts its bound instead, and the runtime cuts
every such text to that bound with `clip` before it goes into a prompt. The bounds are in
characters and are also bounds in UTF-8 bytes (a clipped text is at most `limit` bytes long), so
a byte-level tokenizer (OpenAI's, Qwen's) makes at most `limit` tokens of it: for an exact
counter the plan's maximum is a bound, for the others an estimate like every one they make.

The skill a candidate may carry is bounded as training's (compiler/skill_size.py): the live file,
the LEARNED block's markers, and at most lr edits of one optimizer reply each. The runtime counts
each candidate with the target's counter and refuses an edit that would pass `max_skill_tokens`.

The runtime imports this module: it must not reach the parser (see pyproject's import contracts).
"""

from __future__ import annotations

import math

from skopt.compiler.skill_size import EDIT_SEAM
from skopt.compiler.tokens import Counter

# A session as the miner sees it (its digest: prompts, tool calls, answers, corrections).
DIGEST_CHARS = 8000
# A task's intent and context as the target sees it.
TASK_CHARS = 2000
# A judge's note on one answer (why it passed or failed), as reflection sees it.
NOTE_CHARS = 400
# A task's rubric, as the rubric judge sees it.
RUBRIC_CHARS = 1000
# What earlier nights left for reflection (edits tried and rejected, recurring failures).
MEMORY_CHARS = 2000

# Tokens of the LEARNED block's two markers with the line breaks around them
# (`<!-- skopt:learned -->` … `<!-- /skopt:learned -->`), when the night creates the block.
LEARNED_MARKERS = 32
# Tokens where a variable's text meets the template around it (counted apart, then added).
SEAM = 4
# Tokens of the JSON keys and punctuation around one failure in a reflect prompt.
FAILURE_SEAM = 24

CUT = "\n[...]\n"  # put where a clipped text lost its middle


def clip(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-8 bytes (so at most `limit` characters): unchanged when it
    fits, else its head and its tail around `CUT` (a session's start says what was asked, its
    end how it went). Clipping a clipped text changes nothing."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len(CUT)
    if room < 2:
        return data[:limit].decode("utf-8", "ignore")
    head = data[: room - room // 2].decode("utf-8", "ignore")  # a split character is dropped
    tail = data[len(data) - room // 2 :].decode("utf-8", "ignore")
    return head + CUT + tail


def digest(text: str) -> str:
    return clip(text, DIGEST_CHARS)


def task(text: str) -> str:
    return clip(text, TASK_CHARS)


def note(text: str) -> str:
    return clip(text, NOTE_CHARS)


def rubric(text: str) -> str:
    return clip(text, RUBRIC_CHARS)


def memory(text: str) -> str:
    return clip(text, MEMORY_CHARS)


def most_tokens(counter: Counter, limit: int) -> int:
    """The most tokens a text clipped to `limit` counts: at most one a byte for an exact
    (byte-level) tokenizer; an estimate counts it as it counts any text of that length."""
    return limit if counter.exact else expected_tokens(limit)


def expected_tokens(limit: int) -> int:
    """A text at its bound, at about four characters a token (as `tokens.Estimate` counts)."""
    return math.ceil(limit / 4)


def max_skill_tokens(live: int, lr: int, reply: int) -> int:
    """The most target tokens a candidate skill may count: the live file's `live` tokens, the
    LEARNED markers, and `lr` edits of at most one optimizer reply (`reply` tokens) each."""
    return live + LEARNED_MARKERS + lr * (reply + EDIT_SEAM)

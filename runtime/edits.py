"""Edits to a skill document (SPEC §5.2): applying `add` / `replace` / `delete` edits to Markdown
text, the protected regions that step edits never touch, and the leakage guard. Pure functions:
no I/O, no exceptions for any input text, the same output for the same input.

Rules, in the order each edit is checked:
- An unknown op, an `add`/`replace` with blank content, content holding a skopt region marker,
  or a `replace`/`delete` without anchor is skipped. So is content that would copy a gold answer
  of a valid/test item (the leakage guard, rule in `leaked_answer`). Whole skills written by
  the rewrite modes, and slow-update guidance, pass the same guard line by line
  (`without_leaks`): a line that would leak is dropped, the rest stands.
- An `add` whose text is already in the skill (whitespace-normalised) is skipped.
- Anchors match exactly first, then whitespace-normalised (runs of whitespace collapsed,
  case-sensitive), mapped back to the span of original text they cover. Found twice or more
  (overlapping occurrences count, occurrences inside protected regions count), or not at all:
  skipped. An anchor inside or overlapping a protected region: skipped.
- `add` without anchor lands after the last line of the editable text, i.e. before any protected
  regions that end the document, never inside one. `add` with anchor lands after the line on
  which the anchor ends; an unknown anchor never falls back to an append. Added text gets a blank
  line on either side, unless the line there is blank or both lines are list items (or their
  indented continuations) or table rows: Markdown neither folds it into a paragraph nor splits a
  list.
- `replace` swaps the anchor's span for the content; a replacement equal to the anchor (normalised)
  is skipped. `delete` removes the span, and its line when nothing else is left on it.
- Edits apply in order, each to the result of the previous ones; every edit gets an `Outcome`.
  After each edit the protected regions and markers are checked to be exactly what they were
  before it; if not, the edit is undone and skipped. So is an edit after which the skill counts
  more tokens than the `SizeLimit` given (the plan's bound for the step, which its maxima of
  target input tokens are counted with: compiler/skill_size.py).

Protected regions are delimited by HTML comments, `<!-- skopt:NAME -->` … `<!-- /skopt:NAME -->`:
`slow-update` holds the epoch-boundary guidance (written by `replace_region`, SPEC §5.1) and
`learned` is the sleep LEARNED block (SPEC §7). An opening marker without its closing one protects
everything after it; a stray closing marker protects itself. `replace_region` (force-applied, for
slow update) rewrites the body of the first region of a name, or creates it at the end of the text
(before an unclosed region the text ends in).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Op = Literal["add", "replace", "delete"]
Status = Literal["applied", "skipped"]

SLOW_UPDATE = "slow-update"  # <!-- skopt:slow-update --> … <!-- /skopt:slow-update -->
LEARNED = "learned"  # <!-- skopt:learned --> … <!-- /skopt:learned -->
PROTECTED: tuple[str, ...] = (SLOW_UPDATE, LEARNED)

# The leakage guard checks only answers that could not plausibly appear in an instruction by
# chance: at least this many characters (so "yes", "B", "42" or "1.5" are never checked) ...
MIN_ANSWER_CHARS = 4
# ... and not a word that instructions use as vocabulary (labels, verdicts).
COMMON_ANSWERS = frozenset(
    {"true", "false", "none", "null", "unknown", "maybe", "positive", "negative", "neutral"}
    | {"correct", "incorrect", "other", "n/a", "neither", "both"}
)

LEAK_REASON = "would copy a gold answer of a valid/test item"

_MARKER = re.compile(r"<!--\s*(/?)skopt:([A-Za-z0-9_-]+)\s*-->")
_NAME = re.compile(r"[A-Za-z0-9_-]+")
# List items, their indented continuation lines, and table rows.
_BLOCK_ITEM = re.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|\|)|[ \t]+\S")

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Edit:
    op: Op
    content: str = ""
    anchor: str | None = None
    rationale: str = ""  # why the optimizer proposed it (bookkeeping only)
    support: int = 1  # how many minibatches proposed it (bookkeeping only)


@dataclass(frozen=True, slots=True)
class Outcome:
    edit: Edit
    status: Status
    reason: str  # how it was applied, or why it was skipped


@dataclass(frozen=True, slots=True)
class Applied:
    skill: str
    outcomes: tuple[Outcome, ...]  # one per edit, in input order

    @property
    def applied(self) -> tuple[Edit, ...]:
        return tuple(o.edit for o in self.outcomes if o.status == "applied")


@dataclass(frozen=True, slots=True)
class SizeLimit:
    """The most tokens a skill may count, and the counter (the target model's, as the plan
    counts with) that measures it."""

    tokens: int
    count: Callable[[str], int]

    def refusal(self, skill: str) -> str:
        """Why `skill` is too large; "" when it fits."""
        size = self.count(skill)
        if size <= self.tokens:
            return ""
        return f"would make the skill {size} tokens, over the plan's bound of {self.tokens}"


@dataclass(frozen=True, slots=True)
class Region:
    name: str
    start: int  # the opening marker's first character
    end: int  # just past the closing marker; the text's end when unclosed
    body_start: int
    body_end: int
    closed: bool = True


def open_marker(name: str) -> str:
    return f"<!-- skopt:{name} -->"


def close_marker(name: str) -> str:
    return f"<!-- /skopt:{name} -->"


def find_regions(skill: str, names: Iterable[str] = PROTECTED) -> tuple[Region, ...]:
    """The regions of `names` in `skill`, in document order."""
    wanted = frozenset(names)
    opened: dict[str, re.Match[str]] = {}
    found: list[Region] = []
    for m in _MARKER.finditer(skill):
        closing, name = m.group(1) == "/", m.group(2)
        if name not in wanted:
            continue
        if not closing:
            opened.setdefault(name, m)  # a repeated opening marker lies inside the first's region
        elif name in opened:
            o = opened.pop(name)
            found.append(Region(name, o.start(), m.end(), o.end(), m.start()))
    found += [
        Region(n, o.start(), len(skill), o.end(), len(skill), False) for n, o in opened.items()
    ]
    return tuple(sorted(found, key=lambda r: (r.start, r.end, r.name)))


def replace_region(skill: str, name: str, content: str) -> str:
    """`skill` with region `name`'s body set to `content` (markers in it dropped); the region is
    created at the end when missing. Force-applied: used by slow update, not by step edits."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a region name: {name!r}")
    nl = _newline(skill)
    text = _to_newline(_without_markers(content).strip("\r\n"), nl)
    body = nl + (text + nl if text else "") + close_marker(name)
    found = find_regions(skill, (name,))
    if found:
        return skill[: found[0].body_start] + body + skill[found[0].end :]
    # At the end, unless the text ends inside another unclosed region: then just before it.
    unclosed = [r.start for r in find_regions(skill, _names(skill)) if not r.closed]
    at = min(unclosed, default=len(skill))
    head = skill[:at].rstrip() + nl + nl if skill[:at].strip() else ""
    return head + open_marker(name) + body + nl + skill[at:]


def _without_markers(text: str) -> str:
    while _MARKER.search(text):  # removing one marker may join the halves of another
        text = _MARKER.sub("", text)
    return text


def _names(skill: str) -> set[str]:
    return {m.group(2) for m in _MARKER.finditer(skill)}


def leaked_answer(content: str, gold_answers: Iterable[str], *, skill: str = "") -> str | None:
    """The gold answer (normalised) that `content` would copy into `skill`, or None.

    Answers and content are compared whitespace-normalised and case-insensitively, as whole words
    (an answer that starts or ends with a letter, digit or `_` must not continue a word). Answers
    shorter than MIN_ANSWER_CHARS or in COMMON_ANSWERS are not checked, and neither is an answer
    the skill already contains: the edit would reveal nothing the skill does not say. The caller
    passes the answers of valid and test items only, and leaves out a task's declared labels.
    """
    return _leak(_squash(content).casefold(), _squash(skill).casefold(), _checked(gold_answers))


def without_leaks(skill: str, rewritten: str, gold_answers: Iterable[str]) -> Applied:
    """`rewritten` (a whole new skill, or new text for a region of `skill`) less every line that
    would copy a gold answer `skill` does not already state: the leakage guard for the rewrite
    modes and slow-update guidance, as `apply_edits` is for patches.

    Each such line is a line the rewrite adds (text that `skill` had cannot state a new answer),
    so it is recorded as a skipped `add` with the patch guard's reason; the rest of the rewrite
    stands. An answer that survives this, because it is broken across lines, refuses the whole
    rewrite: `skill` comes back unchanged, with one skipped outcome that holds all of `rewritten`.
    """
    answers = _checked(gold_answers)
    old = _squash(skill).casefold()
    kept: list[str] = []
    refused: list[Outcome] = []
    for line in rewritten.splitlines(keepends=True):
        if answers and _leak(_squash(line).casefold(), old, answers):
            refused.append(Outcome(Edit("add", line.rstrip("\r\n")), "skipped", LEAK_REASON))
        else:
            kept.append(line)
    guarded = "".join(kept)
    if answers and _leak(_squash(guarded).casefold(), old, answers):
        return Applied(skill, (Outcome(Edit("add", rewritten), "skipped", LEAK_REASON),))
    return Applied(guarded, tuple(refused))


def apply_edits(
    skill: str,
    edits: Sequence[Edit],
    *,
    protected: Iterable[str] = PROTECTED,
    gold_answers: Iterable[str] = (),
    limit: SizeLimit | None = None,
) -> Applied:
    """Apply `edits` in order to `skill` under the rules of this module's docstring."""
    names, answers = tuple(protected), _checked(gold_answers)
    outcomes: list[Outcome] = []
    for edit in edits:
        skill, outcome = _apply_one(skill, edit, names, answers, limit)
        outcomes.append(outcome)
    return Applied(skill, tuple(outcomes))


def _apply_one(
    skill: str,
    edit: Edit,
    names: tuple[str, ...],
    answers: tuple[str, ...],
    limit: SizeLimit | None,
) -> tuple[str, Outcome]:
    refusal = _refusal(skill, edit, answers)
    if refusal:
        return skill, Outcome(edit, "skipped", refusal)
    guarded = _guarded(skill, names)
    changed, reason = _OPS[edit.op](skill, edit, guarded)
    if changed is None:
        return skill, Outcome(edit, "skipped", reason)
    # A last line of defence: whatever the op did, the protected text must be what it was.
    if _texts(changed, _guarded(changed, names)) != _texts(skill, guarded):
        return skill, Outcome(edit, "skipped", "would change a protected region")
    too_large = limit.refusal(changed) if limit else ""
    if too_large:
        return skill, Outcome(edit, "skipped", too_large)
    return changed, Outcome(edit, "applied", reason)


def _refusal(skill: str, edit: Edit, answers: tuple[str, ...]) -> str:
    """Why `edit` is skipped before its anchor is looked at; "" when it is not."""
    if edit.op not in _OPS:
        return f"unknown op {edit.op!r}"
    if edit.op == "delete":
        return "" if edit.anchor and edit.anchor.strip() else "missing anchor"
    if not edit.content.strip():
        return "empty content"
    if _MARKER.search(edit.content):
        return "content contains a skopt region marker"
    if answers and _leak(_squash(edit.content).casefold(), _squash(skill).casefold(), answers):
        return LEAK_REASON
    if edit.op == "replace":
        return "" if edit.anchor and edit.anchor.strip() else "missing anchor"
    return "already present" if _squash(edit.content) in _squash(skill) else ""


def _add(skill: str, edit: Edit, guarded: tuple[Span, ...]) -> tuple[str | None, str]:
    if not (edit.anchor and edit.anchor.strip()):
        at = _editable_end(skill, guarded)
        return _insert_block(skill, at, edit.content), "added at the end of the editable text"
    span, how = _anchor_span(skill, edit.anchor, guarded)
    if span is None:
        return None, how
    at = _line_end(skill, span[1] - 1)
    if _touches((span[0], at), guarded):
        return None, "anchor touches a protected region"
    return _insert_block(skill, at, edit.content), f"added after the anchor's line ({how})"


def _replace(skill: str, edit: Edit, guarded: tuple[Span, ...]) -> tuple[str | None, str]:
    span, how = _anchor_span(skill, edit.anchor or "", guarded)
    if span is None:
        return None, how
    old = skill[span[0] : span[1]]
    new = _fit(edit.content, old, _newline(skill))
    if _squash(new) == _squash(old):
        return None, "replacement equals the anchor text"
    return skill[: span[0]] + new + skill[span[1] :], f"replaced the anchor ({how})"


def _delete(skill: str, edit: Edit, guarded: tuple[Span, ...]) -> tuple[str | None, str]:
    span, how = _anchor_span(skill, edit.anchor or "", guarded)
    if span is None:
        return None, how
    start, end = _whole_line(skill, span)
    return skill[:start] + skill[end:], f"deleted the anchor ({how})"


_OPS: dict[str, Callable[[str, Edit, tuple[Span, ...]], tuple[str | None, str]]] = {
    "add": _add,
    "replace": _replace,
    "delete": _delete,
}


# --- anchors ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Folded:
    """Text with each run of whitespace collapsed to one space, and the original span of each
    character, so that a match in the folded text maps back to the original."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]


def _fold(text: str) -> _Folded:
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace() and i > 0 and text[i - 1].isspace():
            ends[-1] = i + 1
            continue
        chars.append(" " if ch.isspace() else ch)
        starts.append(i)
        ends.append(i + 1)
    return _Folded("".join(chars), tuple(starts), tuple(ends))


def _squash(text: str) -> str:
    return " ".join(text.split())  # str.split and str.isspace agree on what whitespace is


def _occurrences(hay: str, needle: str) -> list[int]:
    found: list[int] = []
    i = hay.find(needle)
    while i >= 0:
        found.append(i)
        i = hay.find(needle, i + 1)
    return found


def _locate(skill: str, anchor: str) -> tuple[list[Span], str]:
    """Every span the anchor matches, exactly or else normalised, and which of the two it was."""
    exact = [(i, i + len(anchor)) for i in _occurrences(skill, anchor)]
    if exact:
        return exact, "matched exactly"
    folded, needle = _fold(skill), _squash(anchor)
    last = len(needle) - 1
    spans = [(folded.starts[i], folded.ends[i + last]) for i in _occurrences(folded.text, needle)]
    return spans, "matched after whitespace normalisation"


def _anchor_span(skill: str, anchor: str, guarded: tuple[Span, ...]) -> tuple[Span | None, str]:
    """The one span the anchor designates, or None and why not."""
    spans, how = _locate(skill, anchor)
    if not spans:
        return None, "anchor not found"
    if len(spans) > 1:
        return None, f"anchor found {len(spans)} times"
    if _touches(spans[0], guarded):
        return None, "anchor touches a protected region"
    return spans[0], how


# --- protected text --------------------------------------------------------------------------


def _guarded(skill: str, names: tuple[str, ...]) -> tuple[Span, ...]:
    """Spans step edits may not touch: the regions, and every marker of their names (a stray
    closing marker included)."""
    regions = [(r.start, r.end) for r in find_regions(skill, names)]
    markers = [m.span() for m in _MARKER.finditer(skill) if m.group(2) in names]
    return tuple(sorted(regions + markers))


def _texts(skill: str, guarded: tuple[Span, ...]) -> tuple[str, ...]:
    return tuple(skill[start:end] for start, end in guarded)


def _touches(span: Span, guarded: tuple[Span, ...]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in guarded)


def _editable_end(skill: str, guarded: tuple[Span, ...]) -> int:
    """Where an unanchored `add` goes: after the line of the last editable character, before the
    protected regions (and whitespace) that end the document."""
    end = len(skill)
    last = len(skill.rstrip())
    while ending_here := [start for start, stop in guarded if start < last <= stop]:
        end = min(ending_here)
        last = len(skill[:end].rstrip())
    return 0 if last == 0 else min(_line_end(skill, last - 1), end)


# --- text surgery ----------------------------------------------------------------------------


def _newline(skill: str) -> str:
    return "\r\n" if "\r\n" in skill else "\n"


def _to_newline(text: str, nl: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", nl)


def _line_end(text: str, i: int) -> int:
    """Just past the line break that ends the line holding position `i` (or the text's end)."""
    j = text.find("\n", i)
    return len(text) if j < 0 else j + 1


def _whole_line(text: str, span: Span) -> Span:
    """`span`, widened to its whole line(s) when only whitespace would be left on them."""
    start = text.rfind("\n", 0, span[0]) + 1
    end = span[1] if text[span[0] : span[1]].endswith("\n") else _line_end(text, span[1])
    if text[start : span[0]].strip() or text[span[1] : end].strip():
        return span
    return start, end


def _fit(content: str, old: str, nl: str) -> str:
    """Replacement text in the document's line endings, with no line breaks at an edge where the
    replaced text had none (so a replaced phrase does not open a blank line)."""
    text = _to_newline(content, nl)
    if not old.endswith("\n"):
        text = text.rstrip("\r\n")
    if not old.startswith(("\r", "\n")):
        text = text.lstrip("\r\n")
    return text


def _insert_block(skill: str, at: int, content: str) -> str:
    """`content` inserted as whole lines at `at` (a line start, or the text's end)."""
    nl = _newline(skill)
    block = _to_newline(content, "\n").strip("\n")
    before, after = skill[:at], skill[at:]
    if before and not before.endswith("\n"):
        before += nl
    above = before.removesuffix("\n").removesuffix("\r").rpartition("\n")[2]
    below = after.partition("\n")[0]
    lead = "" if _joins(above, block.partition("\n")[0]) else nl
    trail = "" if _joins(block.rpartition("\n")[2], below) else nl
    return before + lead + block.replace("\n", nl) + nl + trail + after


def _joins(upper: str, lower: str) -> bool:
    """Whether two lines may sit together with no blank line between them."""
    if not upper.strip() or not lower.strip():
        return True
    return bool(_BLOCK_ITEM.match(upper) and _BLOCK_ITEM.match(lower))


# --- leakage ---------------------------------------------------------------------------------


def _checked(gold_answers: Iterable[str]) -> tuple[str, ...]:
    """The normalised answers the guard checks, sorted so that reports are deterministic."""
    normalised = {_squash(a).casefold() for a in gold_answers}
    return tuple(sorted(a for a in normalised if _distinctive(a)))


def _distinctive(answer: str) -> bool:
    return len(answer) >= MIN_ANSWER_CHARS and answer not in COMMON_ANSWERS


def _leak(content: str, skill: str, answers: tuple[str, ...]) -> str | None:
    for answer in answers:
        if _has_word(content, answer) and not _has_word(skill, answer):
            return answer
    return None


def _has_word(hay: str, needle: str) -> bool:
    return any(_bounded(hay, i, i + len(needle)) for i in _occurrences(hay, needle))


def _bounded(hay: str, start: int, end: int) -> bool:
    left = start == 0 or not (_wordy(hay[start]) and _wordy(hay[start - 1]))
    right = end == len(hay) or not (_wordy(hay[end - 1]) and _wordy(hay[end]))
    return left and right


def _wordy(ch: str) -> bool:
    return ch.isalnum() or ch == "_"

"""Edits checked right after reflection, before they cost a step (docs/decisions.md, "Edits
checked before they count").

A small optimizer proposes edits that can never help: an anchor that is not in the skill, a
rule that copies a task's input word for word, an example that maps an answer to an answer
("billing -> technical") or that contradicts the evidence it was drawn from, text the skill
already has. Each is found here, against the skill and the trajectories the reflection saw;
the reflection is asked once more with the problems listed (`Optimizer.reflect`), and what is
still unusable is dropped. Pure functions.

- Apply rules: each edit is applied alone to the skill (`edits.apply_edits`); one that would be
  skipped (anchor not found or ambiguous, text already present, a replacement equal to its
  anchor...) is unusable for that reason.
- Examples are `A -> B` (also `→`, `=>`) in the content. An example whose left side is an
  expected answer of the evidence maps an answer to an answer. An example whose left side is
  found in an input of the evidence (or holds that whole input) must give that input's expected
  answer: another answer contradicts the evidence, and is repaired — the example's right side
  becomes the expected answer (the small optimizers were seen to pair a right input with the
  target's wrong output, and to repeat it when asked again), recorded in `repairs`.
- Labels: given the env's labels (`classify`), an example must give one of them (the 1.5B
  was seen to copy the prompt's worked example, mails sorted into "work" and "family").
- Copies: the content, examples taken out, may not share COPIED_WORDS consecutive words with
  an input of the evidence: a rule states what to do, an example quotes the input. A quoted
  left side ("…" -> B) is one example, whatever sentences it holds.
- The prompt's own example: given the prompt's own words (its text without skill, evidence or
  memory), the content, examples taken out, may not share PROMPT_WORDS consecutive words with
  them. The 1.5B was seen to copy the worked example's rules ("Invoices and receipts for
  services go to work.") with a ticket of the evidence glued on as the example, so that the
  label check passed; borrowing the example's form ("write the number followed by", five
  words) stays allowed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from skopt.runtime.edits import Edit, apply_edits
from skopt.runtime.envs.text import label_key
from skopt.runtime.scoring import Trajectory

COPIED_WORDS = 8
PROMPT_WORDS = 6
_ARROW = re.compile(r"\s*(?:->|→|=>)\s*")
_SEGMENTS = re.compile(r"\n|;|(?<=[.!?])\s+(?=[A-Z\"'(])")
_LEAD = re.compile(
    r"^\s*(?:[-*]\s+|\d+[.)]\s+)?(?:(?:examples?|e\.g\.|for example)\s*:?\s*)?", re.IGNORECASE
)
_WORD = re.compile(r"\w+")
# A quoted left side: "…" -> B, B ending at the end of its sentence, line or clause.
_QUOTED = re.compile(
    r"(?P<q>[\"“])(?P<left>[^\"“”\n]+)[\"”]\s*(?:->|→|=>)\s*(?P<right>[^\n;]+?)(?=\.(?:\s|$)|;|\n|$)"
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One proposed edit, as repaired, with its problems (none: usable) and its repairs."""

    edit: Edit
    problems: tuple[str, ...]
    repairs: tuple[str, ...] = ()


def check(
    edits: Sequence[Edit],
    skill: str,
    evidence: Sequence[Trajectory],
    labels: Sequence[str] = (),
    prompt: str = "",
) -> list[Finding]:
    """Each edit, its examples repaired from the evidence, with its problems, in order.
    `prompt` is the asking prompt's own words, which a rule may not copy."""
    findings = []
    for proposed in edits:
        edit, repairs = _repaired(proposed, evidence)
        problems = _problems(edit, skill, evidence, labels, prompt)
        findings.append(Finding(edit, tuple(problems), tuple(repairs)))
    return findings


def _repaired(edit: Edit, evidence: Sequence[Trajectory]) -> tuple[Edit, list[str]]:
    """The edit with each example that contradicts the evidence given its expected answer."""
    if edit.op == "delete":
        return edit, []
    content, repairs = edit.content, []
    for left, right in _examples(edit.content)[0]:
        wrong = [t for t in _inputs_with(left, evidence) if not _right(right, t)]
        if not wrong:
            continue
        gold = wrong[0].item.answers[0]
        fixed = _with_answer(content, left, right, gold)
        if fixed is not None:
            content = fixed
            repairs.append(
                f'example "{_short(left)} -> {_short(right)}" now gives "{_short(gold)}"'
            )
    return (replace(edit, content=content), repairs) if repairs else (edit, [])


def _right(said: str, t: Trajectory) -> bool:
    return any(_same_answer(said, gold) for gold in t.item.answers)


def _with_answer(content: str, left: str, right: str, gold: str) -> str | None:
    at = content.find(left)
    end = content.find(right, at + len(left)) if at >= 0 else -1
    return None if end < 0 else content[:end] + gold + content[end + len(right) :]


def usable(findings: Sequence[Finding]) -> list[Edit]:
    return [f.edit for f in findings if not f.problems]


def reask_text(findings: Sequence[Finding], max_edits: int) -> str:
    """The message that asks the reflection again, each problem named."""
    lines = ["Some of your edits cannot be used:"]
    for number, finding in enumerate(findings, 1):
        lines += [f"- edit {number}: {problem}" for problem in finding.problems]
    lines += [
        "Keep the edits that had no problem. Fix or leave out the others: an anchor is text "
        'copied exactly from the skill (or use "add" without an anchor), a rule says what to do '
        "in general, and an example maps a task's input to its expected answer.",
        f"Reply with JSON only, at most {max_edits} edits: " + '{"edits": [...]}',
    ]
    return "\n".join(lines)


def _problems(
    edit: Edit, skill: str, evidence: Sequence[Trajectory], labels: Sequence[str], prompt: str
) -> list[str]:
    found = []
    outcome = apply_edits(skill, [edit]).outcomes[0]
    if outcome.status == "skipped":
        anchor = f' "{_short(edit.anchor)}"' if edit.anchor else ""
        found.append(f"it cannot be applied to the skill{anchor}: {outcome.reason}")
    if edit.op == "delete":
        return found
    examples, rest = _examples(edit.content)
    answers = {label_key(a): a for t in evidence for a in t.item.answers if label_key(a)}
    known = {label_key(label) for label in labels}
    for left, right in examples:
        if known and label_key(right) not in known:
            found.append(
                f'its example "{_short(left)} -> {_short(right)}" gives "{_short(right)}", '
                f"which is not one of the labels ({', '.join(labels)})"
            )
            continue
        if label_key(left) in answers and not _inputs_with(left, evidence):
            found.append(
                f'its example "{_short(left)} -> {_short(right)}" maps an answer to an answer'
            )
            continue
        for t in _inputs_with(left, evidence):
            if not _right(right, t):
                found.append(
                    f'its example "{_short(left)} -> {_short(right)}" contradicts the evidence: '
                    f'the expected answer there is "{_short(t.item.answers[0])}"'
                )
                break
    for t in evidence:
        if _shares_words(rest, t.item.input):
            found.append(f'it copies a task\'s input ("{_short(t.item.input)}")')
            break
    if _shares_words(rest, prompt, PROMPT_WORDS):
        found.append("it copies the prompt's example, which is not about this task")
    return found


def _examples(content: str) -> tuple[list[tuple[str, str]], str]:
    """The `A -> B` examples of a content, and the content without them."""
    examples: list[tuple[str, str]] = []
    for quoted in _QUOTED.finditer(content):
        examples.append((quoted["left"].strip(), quoted["right"].strip().strip(" \"'`")))
    rest = []
    for segment in _SEGMENTS.split(_QUOTED.sub(" ", content)):
        parts = _ARROW.split(segment, maxsplit=1)
        if len(parts) == 2:
            left = _LEAD.sub("", parts[0]).strip(" \"'`")
            right = parts[1].strip().rstrip(".").strip(" \"'`")
            if left and right:
                examples.append((left, right))
                continue
        rest.append(segment)
    return examples, " ".join(rest)


def _inputs_with(left: str, evidence: Sequence[Trajectory]) -> list[Trajectory]:
    """The trajectories whose input holds the example's left side (or is held by it)."""
    said = " ".join(left.casefold().split())
    if len(said) < 4:
        return []
    found = []
    for t in evidence:
        given = " ".join(t.item.input.casefold().split())
        if said in given or given in said:
            found.append(t)
    return found


def _same_answer(said: str, gold: str) -> bool:
    return label_key(said) == label_key(gold) or " ".join(said.split()) == " ".join(gold.split())


def _shares_words(text: str, given: str, words: int = COPIED_WORDS) -> bool:
    ours = [w.casefold() for w in _WORD.findall(text)]
    theirs = [w.casefold() for w in _WORD.findall(given)]
    if len(theirs) < words:
        return False
    runs = {tuple(theirs[i : i + words]) for i in range(len(theirs) - words + 1)}
    return any(tuple(ours[i : i + words]) in runs for i in range(len(ours) - words + 1))


def _short(text: str | None, limit: int = 60) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

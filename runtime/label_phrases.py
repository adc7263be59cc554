"""The words that set a train item's label apart: a phrase of its input that train items of its
label share and no train item of another label holds (docs/decisions.md, "Demonstrations").

A small optimizer model does not write such rules (bench/RESULTS.md): shown a failed ticket that
the Enterprise plan makes `priority`, the 1.5B wrote rules about the ticket's topic, or copied
its prompt's example. The train split says it plainly — "Enterprise plan" is in four train
tickets, all `priority` — so skopt states it, and the gate decides whether it helps.

A phrase is one to three consecutive words of one clause, that neither begins nor ends with a
common English word, holds no digit (order numbers, amounts) and is not all capitalised words
(a name: "Ben", "Lumen GmbH"). The chosen phrase is the one in the most train items with the
label (the longer one on a tie, then the first); two such items at least (the item itself
counts), and none with another label. Pure: no call is made.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from skopt.compiler.dataset import Item
from skopt.runtime.envs.text import label_key

MAX_WORDS = 3
MIN_ITEMS = 2  # train items of the label that hold the phrase, the item itself counted
_COMMON = (
    "a about all am an and any are as at be been but by can could dear did do does for from"
    " had has have he hello her here hi his how i if in is it its just me my no not of on or"
    " our please she so some that the their there these they this those to us was we were what"
    " when where which who why will with would you your"
)
COMMON = frozenset(_COMMON.split())  # words a phrase neither begins nor ends with
_CLAUSE = re.compile(r"[.,;:!?()\[\]\"]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")

Phrase = tuple[str, ...]  # lowercased words


class TrainPhrases:
    """The train split's items, and where each phrase of theirs occurs: the first answer of
    every train item that holds it. Built once per run; `deciding` then looks each phrase up."""

    def __init__(self, train: Sequence[Item]) -> None:
        self.items = list(train)
        self.answers: dict[Phrase, list[str]] = {}
        for other in train:
            if other.answers:
                for phrase in _all_phrases(other.input):
                    self.answers.setdefault(phrase, []).append(label_key(other.answers[0]))

    def deciding(self, item: Item) -> str | None:
        """The phrase of `item`'s input that sets its first answer apart in the train split,
        as the input writes it; None when there is none."""
        if not item.answers:
            return None
        label = label_key(item.answers[0])
        best: tuple[tuple[int, int], Phrase] | None = None
        for phrase in _candidates(item.input):
            answers = self.answers.get(phrase, [])
            if any(answer != label for answer in answers) or len(answers) < MIN_ITEMS:
                continue
            rank = (len(answers), len(phrase))
            if best is None or rank > best[0]:
                best = (rank, phrase)
        if best is None:
            return None
        written = re.search(r"\W+".join(map(re.escape, best[1])), item.input, re.IGNORECASE)
        return written.group(0) if written else " ".join(best[1])


def _clauses(text: str) -> Iterator[list[str]]:
    for clause in _CLAUSE.split(text):
        yield _WORD.findall(clause)


def _runs(words: list[str]) -> Iterator[list[str]]:
    for n in range(1, MAX_WORDS + 1):
        for i in range(len(words) - n + 1):
            yield words[i : i + n]


def _candidates(text: str) -> dict[Phrase, None]:
    """The phrases of `text` that could state a rule, clause by clause (a dict: ordered, once
    each)."""
    found: dict[Phrase, None] = {}
    for words in _clauses(text):
        for run in _runs(words):
            phrase = tuple(w.lower() for w in run)
            if phrase[0] in COMMON or phrase[-1] in COMMON:
                continue
            if any(ch.isdigit() for w in run for ch in w) or all(w[0].isupper() for w in run):
                continue
            found[phrase] = None
    return found


def _all_phrases(text: str) -> set[Phrase]:
    """Every run of words of `text`, unfiltered: where a phrase occurs at all."""
    return {tuple(w.lower() for w in run) for words in _clauses(text) for run in _runs(words)}

"""Text normalisation shared by the env kinds that compare words: SQuAD-style normalisation and
token F1 (for `qa`), and label keys (for `classify`).

Punctuation is every ASCII punctuation character (as in SQuAD's `string.punctuation`, which
includes symbols such as `$` and `|`) plus every Unicode punctuation character (categories P*).
Letters, digits and combining marks of any script are kept. Linear in the length of the text.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


class _DropPunctuation(dict[int, int | None]):
    """A `str.translate` table that deletes punctuation, filled in as characters are met
    (only the Basic Multilingual Plane is kept, so that the table stays small)."""

    def __missing__(self, code: int) -> int | None:
        value = None if is_punctuation(chr(code)) else code
        if code < 0x10000:
            self[code] = value
        return value


_TABLE = _DropPunctuation()


def is_punctuation(char: str) -> bool:
    return char in string.punctuation or unicodedata.category(char).startswith("P")


def normalize(text: str) -> str:
    """SQuAD normalisation: lowercase, drop punctuation and the articles a/an/the, collapse
    whitespace."""
    text = text.lower().translate(_TABLE)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    return normalize(text).split()


def token_f1(answer: list[str], gold: list[str]) -> float:
    """Token-overlap F1 of two normalised token lists (1.0 when both are empty)."""
    if not answer or not gold:
        return float(answer == gold)
    common = sum((Counter(answer) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(answer), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def label_key(text: str) -> str:
    """A label as compared: surrounding whitespace and punctuation removed, case folded."""
    start, end = 0, len(text)
    while start < end and _edge(text[start]):
        start += 1
    while end > start and _edge(text[end - 1]):
        end -= 1
    return text[start:end].casefold()


def _edge(char: str) -> bool:
    return char.isspace() or is_punctuation(char)

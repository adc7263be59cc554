"""Secret redaction (transcripts README §7): what leaves the harvester, and what the night writes
or sends, carries no secret a rule can find.

This module owns the `Redactor`: the ordered rules of `data/redaction_rules.json` (vendor rules
first, contextual last) with typed placeholders (`[REDACTED:openai_key]`), applied to every
string leaf of parsed data (never to raw JSON lines, whose escaping hides PEM newlines and
quotes), and the rule for structured data: a value under a secret-named key (`*secret*`,
`*password*`, `*api_key*`, `authorization`, `*_token`, ...) is replaced whatever it looks like,
while numbers (token counts) are kept. Redaction is idempotent: rules skip placeholders, and
`text` repeats the rules until nothing changes, so a second pass is a no-op by construction.

`strip_no_intent` drops what carries no intent and only risk: thinking signatures, encrypted
reasoning, base64 images, `originalFile` copies.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TypeVar, cast

T = TypeVar("T")

PLACEHOLDER = "[REDACTED]"  # a value under a secret-named key
# Rules rerun until nothing changes: a placeholder can open the word boundary of a secret glued
# to the one before it, so a chain of n glued secrets takes n passes. A text still changing
# after the last pass is withheld whole, never passed on half redacted.
_MAX_PASSES = 64
UNSETTLED = "[REDACTED:unsettled]"

_SECRET_KEY = re.compile(
    r"secret|password|passwd|api_?key|apikey|access_?key|private_?key|credential|cookie"
    r"|^(?:proxy_)?authorization$|^token$|_token$",
    re.IGNORECASE,
)
_NO_INTENT_KEYS = frozenset({"signature", "encrypted_content", "originalFile"})
_DATA_URL = re.compile(r"^data:[\w/+.-]+;base64,", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    replacement: str


def is_secret_key(key: str) -> bool:
    """A key that names a secret; `*_tokens` counts and `PWD` (a directory) do not."""
    return bool(_SECRET_KEY.search(key.replace("-", "_")))


class Redactor:
    """The ordered rules, applied to text and to every string leaf of a tree."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)

    @classmethod
    def from_json(cls, raw: str | bytes) -> Redactor:
        """Rules as `redaction_rules.json` writes them (Python `re`, `\\1` group references)."""
        data = json.loads(raw)
        return cls(
            [Rule(r["name"], re.compile(r["pattern"]), r["replacement"]) for r in data["rules"]]
        )

    def text(self, text: str) -> str:
        for _ in range(_MAX_PASSES):
            redacted = self._once(text)
            if redacted == text:
                return text
            text = redacted
        return UNSETTLED

    def _once(self, text: str) -> str:
        for rule in self.rules:
            text = rule.pattern.sub(rule.replacement, text)
        return text

    def tree(self, value: T) -> T:
        """Every string leaf (and key) redacted; values under secret-named keys replaced."""
        return cast(T, self._tree(value, secret=False))

    def _tree(self, value: object, *, secret: bool) -> object:
        if isinstance(value, str):
            if secret and value and not value.startswith("[REDACTED"):
                return PLACEHOLDER
            return self.text(value)
        if isinstance(value, dict):
            return {
                (self.text(k) if isinstance(k, str) else k): self._tree(
                    v, secret=secret or (isinstance(k, str) and is_secret_key(k))
                )
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._tree(v, secret=secret) for v in value]
        return value  # numbers (token counts), booleans, None


def strip_no_intent(value: T) -> T:
    """`value` without thinking signatures, encrypted reasoning, `originalFile` copies and
    base64 images (data URLs and `{"type": "base64", "data": ...}` sources)."""
    return cast(T, _strip(value))


def _strip(value: object) -> object:
    if isinstance(value, str):
        return "[image]" if _DATA_URL.match(value) else value
    if isinstance(value, dict):
        base64 = value.get("type") == "base64"
        return {
            k: _strip(v)
            for k, v in value.items()
            if k not in _NO_INTENT_KEYS and not (base64 and k == "data")
        }
    if isinstance(value, list | tuple):
        return [_strip(v) for v in value]
    return value


@cache
def default_redactor() -> Redactor:
    """The packaged rules (`skopt/runtime/sleep/data/redaction_rules.json`)."""
    data = importlib.resources.files("skopt.runtime.sleep").joinpath("data/redaction_rules.json")
    return Redactor.from_json(data.read_bytes())


def redact_text(text: str) -> str:
    return default_redactor().text(text)


def redact_tree(value: T) -> T:
    return default_redactor().tree(value)

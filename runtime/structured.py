"""Structured answers from the optimizer: JSON parsed (fenced or bare), repaired where the fix
is unambiguous, asked again once with the parse error, and otherwise "nothing usable" with
the raw text kept for the record. Never an exception for malformed output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from skopt.runtime.calls import CallLayer
from skopt.runtime.request import Message, Request

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)\n?```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_SMART_QUOTES = str.maketrans({"“": '"', "”": '"'})


@dataclass(frozen=True)
class Structured:
    value: object | None  # the parsed JSON, or None: nothing usable
    raw: str  # the last answer, as received
    repaired: bool = False
    reasked: bool = False
    problem: str = ""  # why the answer was not usable as it came


def parse_json(text: str) -> tuple[object | None, str, bool]:
    """(value, problem, repaired): value None when no unambiguous JSON value is in `text`."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] or [text.strip(), _outermost(text)]
    problem = "no JSON found"
    for candidate in dict.fromkeys(c for c in candidates if c):
        try:
            return json.loads(candidate), "", False
        except (ValueError, RecursionError) as exc:
            problem = str(exc)
        repaired = _TRAILING_COMMA.sub(r"\1", candidate.translate(_SMART_QUOTES))
        if repaired != candidate:
            try:
                return json.loads(repaired), "", True
            except (ValueError, RecursionError):
                pass
    return None, problem, False


def _outermost(text: str) -> str:
    """The span from the first `{` or `[` to the last matching closer, if any."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return ""
    start = min(starts)
    end = text.rfind("}" if text[start] == "{" else "]")
    return text[start : end + 1] if end > start else ""


async def ask_json(layer: CallLayer, request: Request) -> Structured:
    first = await layer.call(request)
    value, problem, repaired = parse_json(first.text)
    if value is not None:
        return Structured(value, first.text, repaired=repaired)
    again = replace(
        request,
        messages=(
            *request.messages,
            Message("assistant", first.text),
            Message(
                "user", f"That answer was not valid JSON ({problem}). Reply with the JSON only."
            ),
        ),
    )
    second = await layer.call(again)
    value, second_problem, repaired = parse_json(second.text)
    if value is not None:
        return Structured(value, second.text, repaired=repaired, reasked=True, problem=problem)
    return Structured(None, second.text, reasked=True, problem=second_problem)

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
_SMART_QUOTES = str.maketrans({"“": '"', "”": '"'})
_CLOSER_AHEAD = re.compile(r"\s*[}\]]")


@dataclass(frozen=True)
class Structured:
    value: object | None  # the parsed JSON, or None: nothing usable
    raw: str  # the answer the value came from (or the last one), as received
    answers: tuple[str, ...] = ()  # every answer received, for the record
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
        for repaired in _repairs(candidate):
            try:
                return json.loads(repaired), "", True
            except (ValueError, RecursionError):
                continue
    return None, problem, False


def _repairs(text: str) -> list[str]:
    """Unambiguous fixes, mildest first: trailing commas, then curly quotes used as quotes."""
    no_commas = _without_trailing_commas(text)
    quoted = _without_trailing_commas(text.translate(_SMART_QUOTES))
    return [t for t in dict.fromkeys((no_commas, quoted)) if t != text]


def _without_trailing_commas(text: str) -> str:
    """Drop a comma before `}` or `]`, but never inside a string."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string and ch == "\\":
            out.append(text[i : i + 2])  # an escape pair, whatever it escapes
            i += 2
            continue
        if ch == '"':
            in_string = not in_string
        if in_string or ch != "," or not _CLOSER_AHEAD.match(text, i + 1):
            out.append(ch)
        i += 1
    return "".join(out)


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
        return Structured(value, first.text, (first.text,), repaired=repaired)
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
    answers = (first.text, second.text)
    if value is not None:
        return Structured(value, second.text, answers, repaired, reasked=True, problem=problem)
    return Structured(None, second.text, answers, reasked=True, problem=second_problem)

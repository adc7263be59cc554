"""Structured optimizer answers: JSON fenced or bare, repaired where unambiguous, re-asked once,
else "nothing usable" with the raw text kept. Through the call layer and the real SDK."""

from __future__ import annotations

import asyncio

import pytest

from skopt.compiler.plan import Budget
from skopt.runtime.backends import backend_for
from skopt.runtime.calls import CallLayer
from skopt.runtime.events import ListSink
from skopt.runtime.ledger import Ledger
from skopt.runtime.request import Message, Request
from skopt.runtime.structured import Structured, ask_json, parse_json
from tests.runtime.conftest import settings
from tests.runtime.server import Reply, ScriptedServer

pytestmark = pytest.mark.usefixtures("key")

REQUEST = Request(
    model="m",
    messages=(Message("system", "Answer in JSON."), Message("user", "Propose edits.")),
    role="optimizer",
    phase="reflect",
)


def ask(server: ScriptedServer, *answers: str) -> Structured:
    server.script(*(Reply(text=a) for a in answers))
    model = settings("openai", server.openai_url)

    async def go() -> Structured:
        backend = backend_for(model)
        layer = CallLayer({"m": model}, {"m": backend}, Ledger(Budget()), ListSink())
        try:
            return await ask_json(layer, REQUEST)
        finally:
            await backend.aclose()

    return asyncio.run(go())


EDITS = {"edits": [{"op": "add", "text": "Check units."}]}


@pytest.mark.parametrize(
    "answer",
    [
        'Here you go:\n```json\n{"edits": [{"op": "add", "text": "Check units."}]}\n```\nDone.',
        '```\n{"edits": [{"op": "add", "text": "Check units."}]}\n```',
        '{"edits": [{"op": "add", "text": "Check units."}]}',
        '  \n{"edits": [{"op": "add", "text": "Check units."}]}\n',
        'Sure! {"edits": [{"op": "add", "text": "Check units."}]} Hope this helps.',
    ],
    ids=["fenced", "fenced-no-lang", "bare", "bare-whitespace", "prose-around"],
)
def test_json_is_found(server: ScriptedServer, answer: str) -> None:
    result = ask(server, answer)
    assert result.value == EDITS
    assert (result.repaired, result.reasked, result.raw) == (False, False, answer)
    assert server.count() == 1


@pytest.mark.parametrize(
    "answer",
    [
        '{"edits": [{"op": "add", "text": "Check units.",},],}',
        '```json\n{"edits": [{"op": "add", "text": "Check units."},\n]}\n```',
    ],
    ids=["trailing-commas", "fenced-trailing-comma"],
)
def test_trailing_comma_is_repaired(server: ScriptedServer, answer: str) -> None:
    result = ask(server, answer)
    assert result.value == EDITS
    assert result.repaired and not result.reasked
    assert server.count() == 1


def test_garbage_then_valid_json_on_the_re_ask(server: ScriptedServer) -> None:
    result = ask(server, "I think the skill is fine as it is.", '{"edits": []}')
    assert result.value == {"edits": []}
    assert result.reasked and result.problem
    assert server.count() == 2
    again = server.requests[1].body["messages"]
    assert again[:2] == server.requests[0].body["messages"]
    assert again[2] == {"role": "assistant", "content": "I think the skill is fine as it is."}
    assert again[3]["role"] == "user" and "JSON" in again[3]["content"]


def test_garbage_twice_is_nothing_usable(server: ScriptedServer) -> None:
    result = ask(server, "no idea", "still {not json")
    assert result.value is None
    assert result.reasked and result.problem
    assert result.raw == "still {not json"
    assert server.count() == 2


def test_two_json_values_are_ambiguous(server: ScriptedServer) -> None:
    result = ask(server, 'Either {"edits": []} or {"edits": [1]}.', '{"edits": [2]}')
    assert result.value == {"edits": [2]} and result.reasked


@pytest.mark.parametrize(
    ("text", "value", "repaired"),
    [
        ("[1, 2, 3]", [1, 2, 3], False),
        ('{"a": "x, }"}', {"a": "x, }"}, False),
        ("[1, 2,]", [1, 2], True),
        ("{“a”: 1}", {"a": 1}, True),
        ("", None, False),
        ("{{{{", None, False),
        ("[" * 5000 + "]" * 5000, None, False),
    ],
    ids=["array", "comma-in-string", "array-comma", "smart-quotes", "empty", "braces", "deep"],
)
def test_parse_json(text: str, value: object, repaired: bool) -> None:
    found, problem, was_repaired = parse_json(text)
    assert (found, was_repaired) == (value, repaired)
    assert bool(problem) == (value is None)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"text": "use [a, b,] lists",}', {"text": "use [a, b,] lists"}),
        ('{"text": "say “hi”",}', {"text": "say “hi”"}),
    ],
    ids=["comma-inside-a-string", "smart-quotes-inside-a-string"],
)
def test_repair_never_changes_string_contents(text: str, value: object) -> None:
    """Only the trailing comma outside strings is removed; the text of an edit stays as written."""
    found, _, repaired = parse_json(text)
    assert found == value and repaired

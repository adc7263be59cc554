"""`skopt lsp` end to end: the real server process, a client session over its pipes.

Diagnostics are compared with what `skopt check` prints for the same text, and formatting
with what `skopt fmt` writes, so that the server is shown to call the compiler, not to hold
checks of its own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skopt.compiler.schema import TRAIN
from tests.ui.invoke import run
from tests.ui.lsp_client import Client

BASE = """skopt 1
# shared models

model tiny {
  provider = sim
}

model coach {
  provider    = sim
  concurrency = 4
}
"""

BROKEN = """model extra {
  provider   = sim
  temprature = 0
}
"""

GOOD = """skopt 1
import "base.skopt"

env rules {
  kind   = synthetic(rules = 4, items = 60)
  input  = "😀é"
  metric = f1
}

train {
  target     = tiny
  optimizer  = coach
  skill      = "skills/s.md"
  epochs     = 2
  batch_size = 12
  mode       = patch
}

budget { calls = 20k }
"""

# a bad key after characters that are two UTF-16 code units (😀) and one (é)
BAD = GOOD.replace('  input  = "😀é"\n  metric = f1', '  input  = "😀é", metrics = f1')


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "base.skopt").write_text(BASE, encoding="utf-8")
    (tmp_path / "broken.skopt").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "s.md").write_text("Answer briefly.\n", encoding="utf-8")
    (tmp_path / "recipe.skopt").write_text(BAD, encoding="utf-8")  # the unsaved buffer differs
    return tmp_path


@pytest.fixture
def client(folder: Path) -> Any:
    session = Client(folder)
    yield session
    if session.process.poll() is None:  # a test that failed before its shutdown
        session.close()


def at(text: str, needle: str, offset: int = 0) -> dict[str, int]:
    """The LSP position (UTF-16) of `needle` in `text`, plus `offset` characters."""
    index = text.index(needle) + offset
    before = text[:index]
    line = before.count("\n")
    column = before[before.rfind("\n") + 1 :]
    return {"line": line, "character": len(column.encode("utf-16-le")) // 2}


def test_a_session_over_a_pipe(folder: Path, client: Client) -> None:
    recipe = folder / "recipe.skopt"
    uri, base_uri = recipe.as_uri(), (folder / "base.skopt").as_uri()
    doc = {"textDocument": {"uri": uri}}

    reply = client.request(
        "initialize", {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}
    )
    capabilities = reply["capabilities"]
    assert capabilities["positionEncoding"] == "utf-16"
    for provider in ("hoverProvider", "definitionProvider", "documentFormattingProvider"):
        assert capabilities[provider], provider
    assert "=" in capabilities["completionProvider"]["triggerCharacters"]
    client.notify("initialized")

    # -- diagnostics: those of `skopt check`, at the same place, in UTF-16 columns ---------
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "skopt", "version": 1, "text": BAD}},
    )
    found = client.diagnostics(uri, 1)[uri]
    assert len(found) == 1
    diagnostic = found[0]
    code, _, printed = run("check", str(recipe))
    assert code == 2
    head, *notes = diagnostic["message"].split("\n")
    assert f"error: {head}\n" in printed
    assert head == "unknown key 'metrics' in env"
    line, col = map(int, re.search(rf"--> {re.escape(str(recipe))}:(\d+):(\d+)", printed).groups())
    start = at(BAD, "metrics")
    assert (line - 1, col - 1) == (start["line"], start["character"] - 1)  # 😀 is 2 units
    assert diagnostic["range"] == {"start": start, "end": at(BAD, "metrics", len("metrics"))}
    assert diagnostic["severity"] == 1 and diagnostic["source"] == "skopt"
    assert "help: did you mean 'metric'?" in notes and "= help: did you mean 'metric'?" in printed

    # the buffer, not the file on disk (still BAD), is what is checked
    change(client, uri, 2, GOOD)
    assert client.diagnostics(uri, 2)[uri] == []

    # an import is followed: its file's diagnostics come under its own URI, and go when it does
    broken_uri = (folder / "broken.skopt").as_uri()
    with_broken = GOOD.replace('import "base.skopt"', 'import "base.skopt"\nimport "broken.skopt"')
    change(client, uri, 3, with_broken)
    published = client.diagnostics(uri, 3)
    assert published[uri] == []
    [imported] = published[broken_uri]
    assert imported["message"].startswith("unknown key 'temprature'")
    assert imported["range"]["start"] == {"line": 2, "character": 2}
    change(client, uri, 4, GOOD)
    assert client.diagnostics(uri, 4)[broken_uri] == []

    # -- hover ------------------------------------------------------------------------------
    hover = client.request("textDocument/hover", {**doc, "position": at(GOOD, "epochs", 2)})
    text = hover["contents"]["value"]
    assert "**epochs**" in text and "a whole number" in text and "default `4`" in text
    assert TRAIN.keys["epochs"].doc in text
    assert hover["range"] == {"start": at(GOOD, "epochs"), "end": at(GOOD, "epochs", 6)}

    hover = client.request("textDocument/hover", {**doc, "position": at(GOOD, "= tiny", 3)})
    text = hover["contents"]["value"]
    assert "model tiny" in text and "base.skopt:4" in text and "provider = sim" in text
    assert "coach" not in text

    # -- completion -------------------------------------------------------------------------
    keys = labels(client, doc, at(GOOD, "  epochs"))  # at the start of a line inside train
    assert keys == [*TRAIN.keys, *TRAIN.children]
    assert "provider" not in keys and "kind" not in keys
    assert labels(client, doc, at(GOOD, "patch")) == ["patch", "rewrite", "full_rewrite"]

    typing = GOOD.replace("target     = tiny", "target     = ")  # does not parse yet
    change(client, uri, 5, typing)
    assert any("expected" in d["message"] for d in client.diagnostics(uri, 5)[uri])
    names = labels(client, doc, at(typing, "target     = ", len("target     = ")))
    assert sorted(names) == ["coach", "tiny"]  # models only, from the import; not env 'rules'
    change(client, uri, 6, GOOD)
    assert client.diagnostics(uri, 6)[uri] == []

    # -- definition -------------------------------------------------------------------------
    target = client.request("textDocument/definition", {**doc, "position": at(GOOD, "= tiny", 3)})
    assert target["uri"] == base_uri
    assert target["range"] == {"start": at(BASE, "tiny"), "end": at(BASE, "tiny", 4)}
    imported = client.request("textDocument/definition", {**doc, "position": at(GOOD, "base.")})
    assert imported["uri"] == base_uri and imported["range"]["start"] == {"line": 0, "character": 0}

    # -- formatting: what `skopt fmt` writes ------------------------------------------------
    options = {"tabSize": 2, "insertSpaces": True}
    assert client.request("textDocument/formatting", {**doc, "options": options}) == []
    messy = GOOD.replace("budget { calls = 20k }", "budget {calls=20k,\n  usd=$5}")
    change(client, uri, 7, messy)
    [edit] = client.request("textDocument/formatting", {**doc, "options": options})
    copy = folder / "copy.skopt"
    copy.write_text(messy, encoding="utf-8")
    assert run("fmt", str(copy))[0] == 0
    assert edit["newText"] == copy.read_text(encoding="utf-8") != messy
    last = messy.split("\n")
    end = {"line": len(last) - 1, "character": len(last[-1])}
    assert edit["range"] == {"start": {"line": 0, "character": 0}, "end": end}
    change(client, uri, 8, "train {\n")
    assert client.request("textDocument/formatting", {**doc, "options": options}) is None

    assert client.close() == 0


def change(client: Client, uri: str, version: int, text: str) -> None:
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def labels(client: Client, doc: dict[str, Any], position: dict[str, int]) -> list[str]:
    reply = client.request("textDocument/completion", {**doc, "position": position})
    return [item["label"] for item in reply["items"]]


def test_columns_in_the_encoding_the_client_asks_for_and_closing(
    folder: Path, client: Client
) -> None:
    uri = (folder / "recipe.skopt").as_uri()
    capabilities = {"general": {"positionEncodings": ["utf-8", "utf-16"]}}
    reply = client.request("initialize", {"processId": None, "capabilities": capabilities})
    assert reply["capabilities"]["positionEncoding"] == "utf-8"
    client.notify("initialized")
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "skopt", "version": 1, "text": BAD}},
    )
    [diagnostic] = client.diagnostics(uri, 1)[uri]
    line = BAD.split("\n")[5]
    before = line[: line.index("metrics")]
    assert diagnostic["range"]["start"] == {"line": 5, "character": len(before.encode("utf-8"))}
    change(client, uri, 2, BAD.replace("metrics", "metric"))
    assert client.diagnostics(uri, 2)[uri] == []
    key = len(before.encode("utf-8"))
    hover = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 5, "character": key + 3}},
    )
    assert hover["contents"]["value"].startswith("**metric** · env key")
    assert hover["range"]["start"] == {"line": 5, "character": key}
    # closing the only recipe that reads the file clears what was published for it
    change(client, uri, 3, BAD)
    assert len(client.diagnostics(uri, 3)[uri]) == 1
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri, None)[uri] == []
    assert client.close() == 0

"""The VS Code extension folder: the TextMate grammar's shape (what VS Code reads, every include
resolved, every regex compiled by Oniguruma), the grammar tokenizing every recipe of the
repository as the parser reads it (textmate-grammar-python, a port of vscode-textmate), the
manifest's references, and extension.js run in Node."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import onigurumacffi
import pytest

from tests.conftest import ROOT
from tests.ui.recipe_words import RECIPE_FILES, lexical_errors, name, source, words

EXTENSION = ROOT / "editors" / "vscode"
GRAMMAR = EXTENSION / "syntaxes" / "skopt.tmLanguage.json"

SCOPE_OF = {
    "directive": "keyword.control.directive.skopt",
    "block-kind": "keyword.other.block.skopt",
    "block-name": "entity.name.type.skopt",
    "key": "variable.other.property.skopt",
    "argument": "variable.parameter.skopt",
    "function": "support.function.skopt",
    "word": "constant.other.word.skopt",
    "comment": "comment.line.number-sign.skopt",
    "string": "string.quoted.double.skopt",
    "long-string": "string.quoted.triple.skopt",
    "integer": "constant.numeric.integer.skopt",
    "float": "constant.numeric.float.skopt",
    "money": "constant.numeric.money.skopt",
    "percent": "constant.numeric.percent.skopt",
    "count": "constant.numeric.count.skopt",
    "duration": "constant.numeric.duration.skopt",
}
# the top-level scope names of the TextMate convention (themes colour these)
STANDARD_ROOTS = {
    "comment", "constant", "entity", "invalid", "keyword", "markup", "meta", "punctuation",
    "storage", "string", "support", "variable",
}  # fmt: skip
RULE_KEYS = {
    "name", "match", "captures", "begin", "end", "beginCaptures", "endCaptures", "patterns",
    "include", "comment", "contentName",
}  # fmt: skip
REGEX_KEYS = {"match": "captures", "begin": "beginCaptures", "end": "endCaptures"}

Json = dict[str, Any]
# ((line, col) from 0, text, scopes), as textmate-grammar-python's flatten gives them
Token = tuple[tuple[int, int], str, list[str]]


def load(path: Path) -> Json:
    loaded: Json = json.loads(path.read_text())
    return loaded


def rules(grammar: Json) -> Iterator[tuple[str, Json]]:
    """Every rule of the grammar with where it is, nested patterns and captures included."""
    todo = [(f"patterns[{i}]", r) for i, r in enumerate(grammar["patterns"])]
    todo += list(grammar["repository"].items())
    while todo:
        where, rule = todo.pop()
        yield where, rule
        todo += [(f"{where}.patterns[{i}]", r) for i, r in enumerate(rule.get("patterns", []))]
        for key in REGEX_KEYS.values():
            todo += [(f"{where}.{key}[{n}]", r) for n, r in rule.get(key, {}).items()]


def regexes() -> list[tuple[str, str, int]]:
    """(where, regex, the highest capture number the rule scopes)."""
    found = []
    for where, rule in rules(load(GRAMMAR)):
        for key, captures in REGEX_KEYS.items():
            if key in rule:
                highest = max((int(n) for n in rule.get(captures, {})), default=0)
                found.append((f"{where}.{key}", rule[key], highest))
    return found


def test_the_grammar_has_what_vscode_reads() -> None:
    grammar = load(GRAMMAR)
    assert grammar["scopeName"] == "source.skopt"
    assert grammar["name"] == "skopt"
    assert grammar["fileTypes"] == ["skopt"]
    assert grammar["patterns"] and isinstance(grammar["repository"], dict)


def test_every_rule_is_a_match_a_begin_end_an_include_or_a_list_of_patterns() -> None:
    for where, rule in rules(load(GRAMMAR)):
        assert set(rule) <= RULE_KEYS, where
        shapes = ["match" in rule, "begin" in rule, "include" in rule]
        assert sum(shapes) <= 1, where
        assert ("begin" in rule) == ("end" in rule), where
        if not any(shapes) and "patterns" not in rule:
            assert "captures" not in rule and set(rule) <= {"name", "comment"}, where  # a capture
        if "include" in rule:
            assert set(rule) == {"include"}, where


def test_every_include_resolves_and_every_repository_entry_is_used() -> None:
    grammar = load(GRAMMAR)
    included = {rule["include"] for _, rule in rules(grammar) if "include" in rule}
    assert all(i.startswith("#") for i in included), included
    assert {i[1:] for i in included} == set(grammar["repository"])


@pytest.mark.parametrize(("where", "regex", "highest"), regexes(), ids=lambda v: str(v)[:40])
def test_every_regex_compiles_in_python_and_in_oniguruma(
    where: str, regex: str, highest: int
) -> None:
    onigurumacffi.compile(regex)  # VS Code's engine; raises on a bad pattern
    assert re.compile(regex).groups >= highest, f"{where} scopes a group it does not have"


def test_every_scope_is_a_standard_name_of_this_language() -> None:
    names = [rule["name"] for _, rule in rules(load(GRAMMAR)) if "name" in rule]
    assert set(SCOPE_OF.values()) <= set(names)
    for scope in names:
        assert scope.endswith(".skopt") and scope.split(".")[0] in STANDARD_ROOTS, scope


# tokenizing with the grammar


@pytest.fixture(scope="module")
def tokenize(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[Token]]:
    here = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("textmate"))  # importing it makes a cache folder in cwd
    try:
        from textmate_grammar.parsers.base import LanguageParser
        from textmate_grammar.utils.logger import LOGGER
    finally:
        os.chdir(here)
    LOGGER.logger.setLevel("ERROR")  # it warns of every stretch of text no rule scopes
    parser = LanguageParser(load(GRAMMAR))

    def run(text: str) -> list[Token]:
        element = parser.parse_string(text)
        assert element is not None
        found: list[Token] = element.flatten()
        return found

    return run


def word_starts(text: str, found: list[Token]) -> dict[tuple[int, int], tuple[str, str]]:
    """Where each run of tokens in one word scope starts (1-based), its scope and the text of
    its first line (a triple-quoted string runs on over the line breaks)."""
    lines = text.split("\n")
    words_scopes = set(SCOPE_OF.values())
    starts: dict[tuple[int, int], tuple[str, str]] = {}
    last: tuple[int, int, str] | None = None  # the line, end column and scope of the last token
    for (line, col), piece, scopes in found:
        scope = next((s for s in scopes if s in words_scopes), None)
        if scope is None:
            last = None
            continue
        if last is not None and last[2] == scope and (line, col) == last[:2]:
            start = next(reversed(starts))
            if start[0] == line + 1:  # still on the run's first line
                starts[start] = (scope, starts[start][1] + piece)
        elif not (
            scope == SCOPE_OF["long-string"]
            and last == (line - 1, len(lines[line - 1]), scope)
            and col == 0
        ):
            starts[(line + 1, col + 1)] = (scope, piece)
        last = (line, col + len(piece), scope)
    return starts


ACCEPTED = [p for p in RECIPE_FILES if words(source(p)) is not None]
REJECTED = [p for p in RECIPE_FILES if p not in ACCEPTED]


@pytest.mark.parametrize("path", ACCEPTED, ids=name)
def test_every_word_of_a_parsed_recipe_gets_its_scope(
    path: Path, tokenize: Callable[[str], list[Token]]
) -> None:
    text = source(path)
    found = tokenize(text)
    assert [t for t in found if any(s.startswith("invalid.") for s in t[2])] == []
    expected = {
        (w.line, w.col): (SCOPE_OF[w.kind], w.text.split("\n")[0]) for w in words(text) or []
    }
    assert word_starts(text, found) == expected


@pytest.mark.parametrize("path", REJECTED, ids=name)
def test_invalid_scopes_stand_exactly_where_the_parser_fails_to_lex(
    path: Path, tokenize: Callable[[str], list[Token]]
) -> None:
    text = source(path)
    found = tokenize(text)
    invalid = {(line + 1, col + 1) for (line, col), _, s in found if s[-1].startswith("invalid.")}
    diagnosed = {(d.span.line, d.span.col) for d in lexical_errors(text)}
    assert diagnosed <= invalid
    assert {line for line, _ in invalid} == {line for line, _ in diagnosed}


# the manifest and the client


def test_the_manifest_contributes_the_language_the_grammar_and_the_setting() -> None:
    manifest = load(EXTENSION / "package.json")
    contributes = manifest["contributes"]
    [language] = contributes["languages"]
    [grammar] = contributes["grammars"]
    assert language["id"] == grammar["language"] == "skopt"
    assert language["extensions"] == [".skopt"]
    assert grammar["scopeName"] == load(EXTENSION / grammar["path"])["scopeName"]
    assert (EXTENSION / language["configuration"]).is_file()
    assert (EXTENSION / manifest["main"]).is_file()
    assert manifest["activationEvents"] == ["onLanguage:skopt"]
    assert "vscode" in manifest["engines"]
    assert "vscode-languageclient" in manifest["dependencies"]
    assert contributes["configuration"]["properties"]["skopt.path"]["default"] == "skopt"


def test_the_language_configuration_comments_brackets_and_pairs() -> None:
    config = load(EXTENSION / "language-configuration.json")
    assert config["comments"] == {"lineComment": "#"}
    assert ["{", "}"] in config["brackets"] and ["(", ")"] in config["brackets"]
    closing = {p["open"]: p["close"] for p in config["autoClosingPairs"]}
    assert closing == {"{": "}", "[": "]", "(": ")", '"': '"'}
    word = re.compile(config["wordPattern"])
    assert [word.fullmatch(w) is not None for w in ("max_tokens", "gpt-4o", "10min", "$0.15")] == [
        True
    ] * 4


def node() -> str:
    found = shutil.which("node")
    assert found is not None, "Node.js (v20 on this project's machines) runs the client's tests"
    return found


def test_the_client_is_valid_javascript_and_its_patterns_compile_in_javascript() -> None:
    config = EXTENSION / "language-configuration.json"
    subprocess.run([node(), "--check", str(EXTENSION / "extension.js")], check=True)
    script = (
        "const c = require(process.argv[1]);"
        "for (const p of [c.wordPattern, ...Object.values(c.indentationRules)]) new RegExp(p);"
    )
    subprocess.run([node(), "-e", script, str(config)], check=True)


def test_the_client_starts_skopt_lsp_over_stdio_and_restarts_it_when_the_path_changes() -> None:
    host = Path(__file__).with_name("extension_host.js")
    out = subprocess.run(
        [node(), str(host), str(EXTENSION / "extension.js"), "/opt/bin/skopt", "skopt-dev"],
        capture_output=True,
        text=True,
        check=True,
    )
    selector = [
        {"scheme": "file", "language": "skopt"},
        {"scheme": "untitled", "language": "skopt"},
    ]

    def client(command: str) -> list[object]:
        return ["client", "skopt", {"command": command, "args": ["lsp"], "transport": 0}, selector]

    calls = json.loads(out.stdout)
    assert calls[:8] == [
        client("/opt/bin/skopt"),
        ["start"],
        ["subscriptions", 1],
        ["stop"],  # a change of skopt.path, not of another setting, restarts the server
        client("skopt-dev"),
        ["start"],
        ["stop"],  # deactivate
        client("skopt-dev"),
    ]
    assert calls[8] == ["start"]
    assert calls[9][0] == "error" and "'skopt-dev lsp'" in calls[9][1]
    assert "skopt.path" in calls[9][1]
    assert len(calls) == 10  # no stop for a server that never started

"""Property tests for the recipe grammar, the formatter and the compiler's front door.

SPEC §3: no input, however malformed (binary junk, 1 MB lines, deep nesting, invalid UTF-8),
produces a traceback or a hang. SPEC §1: `skopt fmt` is idempotent and keeps comments.

The valid-recipe generator below writes random but well-formed recipes with every value kind
and comments in every place a person puts them; the formatter must be idempotent on them,
must not change what they mean, and must keep every comment.

Bugs these tests found are kept at the bottom of the file as regression tests. The one time
limit here (a minute, for work that takes a second or less) only catches hangs and quadratic
blow-ups on a machine however busy; speed is measured in bench/.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from skopt.compiler import schema
from skopt.compiler.compile import compile_recipe
from skopt.grammar import ast, lexing
from skopt.grammar.format import format_recipe
from skopt.grammar.parse import Parsed, parse
from skopt.grammar.source import Span

PATH = "prop.skopt"

# -- helpers --------------------------------------------------------------------------------


def located(span: Span) -> bool:
    """At a line and column, or about the file as a whole (a file that is not a recipe)."""
    return span.is_whole_file or (span.line >= 1 and span.col >= 1)


def parse_ok(text: str) -> Parsed:
    parsed = parse(text, PATH)
    assert isinstance(parsed, Parsed)
    assert (parsed.recipe is None) == bool(parsed.diagnostics), parsed
    for diag in parsed.diagnostics:
        span = diag.span
        assert span.line >= 1 and span.col >= 1, (diag, text[:200])
        assert span.end_line >= span.line, diag
        assert diag.message, diag
    return parsed


HANG = 60.0  # seconds: work that takes a second or less, or a quadratic blow-up (hours)


def finishes(fn: Callable[[], object]) -> object:
    """`fn()`, which must not hang (not a speed test: see bench/compile_bench.py)."""
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    assert elapsed < HANG, f"took {elapsed:.2f}s: a hang or a quadratic blow-up"
    return result


def fmt(text: str) -> str:
    parsed = parse(text, PATH)
    assert parsed.recipe is not None, (parsed.diagnostics, text)
    return format_recipe(parsed.recipe, text)


def comment_texts(recipe: ast.Recipe) -> Counter[str]:
    # the formatter drops trailing whitespace (and a CR) at the end of a comment
    return Counter(c.text.rstrip() for c in recipe.comments)


def assert_fmt_properties(text: str) -> None:
    parsed = parse(text, PATH)
    assert parsed.recipe is not None, (parsed.diagnostics, text)
    once = format_recipe(parsed.recipe, text)
    reparsed = parse(once, PATH)
    assert reparsed.recipe is not None, (reparsed.diagnostics, once)
    twice = format_recipe(reparsed.recipe, once)
    assert twice == once, f"not idempotent\n--- input\n{text}\n--- once\n{once}\n--- twice\n{twice}"
    assert reparsed.recipe == parsed.recipe, f"meaning changed\n--- input\n{text}\n--- once\n{once}"
    assert comment_texts(reparsed.recipe) == comment_texts(parsed.recipe), (
        f"comments changed\n{text}\n---\n{once}"
    )


FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MEDIUM = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- 1. arbitrary text and bytes ------------------------------------------------------------


@FAST
@given(st.text(max_size=400))
def test_random_text_never_raises(text: str) -> None:
    parse_ok(text)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    parse_ok(data.decode("utf-8", errors="replace"))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_as_latin1_never_raise(data: bytes) -> None:
    # every byte value, control characters included, as one character each
    parse_ok(data.decode("latin-1"))


# -- 2. token soups -------------------------------------------------------------------------

WORDS = [
    "model", "env", "train", "budget", "sweep", "sleep", "gate", "split", "price", "skopt",
    "import", "on", "off", "true", "false", "cosine", "constant", "synthetic", "provider", "sim",
    "target", "optimizer", "epochs", "x", "_", "a-b", "A_1",
]  # fmt: skip
IDENT = st.one_of(
    st.sampled_from(WORDS),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,12}", fullmatch=True),
)
STRING_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")
NUMBERS = st.one_of(
    st.sampled_from(["0", "4", "0.5", "1_000", "1e-3", "-2", "1.5e+3", "007", "1e400", "1_"]),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
QUANTITIES = st.sampled_from(
    ["60%", "$0.15", "$25", "20k", "2M", "30s", "10min", "2h", "1.5k", "-5%", "1e3s", "$1_000"]
)
BAD_QUANTITIES = st.sampled_from(["$", "5x", "1..2", "$-3", "2m", "3K", "1e", "--1", "5%%", "$1e3"])
PUNCT = st.sampled_from(["=", "{", "}", "(", ")", "[", "]", ",", "\n", "\n\n", ",\n"])
SOUP_TOKEN = st.one_of(
    PUNCT,
    PUNCT,
    IDENT,
    NUMBERS,
    QUANTITIES,
    BAD_QUANTITIES,
    st.text(STRING_CHARS, max_size=12).map(
        lambda s: '"' + s.replace("\\", "").replace('"', "") + '"'
    ),
    st.text(max_size=12).map(lambda s: '"""' + s + '"""'),
    st.sampled_from(['"unterminated', '"""open', '"\\', '"a\\"', '""""', "\\"]),
    st.text(STRING_CHARS, max_size=12).map(lambda s: "#" + s + "\n"),
    st.sampled_from(["skopt 1", 'import "x.skopt"', "skopt", "import", "\t", "\r\n", "\x00", "@"]),
)
GLUE = st.sampled_from([" ", " ", " ", "", "\n", "  ", "\t"])


@st.composite
def token_soups(draw: st.DrawFn, max_size: int = 60) -> str:
    parts = draw(st.lists(st.tuples(SOUP_TOKEN, GLUE), max_size=max_size))
    return "".join(token + glue for token, glue in parts)


@MEDIUM
@given(token_soups())
def test_token_soup_never_raises(text: str) -> None:
    parse_ok(text)


@MEDIUM
@given(
    st.lists(st.sampled_from(["{", "}", "[", "]", "(", ")", "a", "=", "1", ",", "\n"]), max_size=80)
)
def test_bracket_soup_never_raises(tokens: list[str]) -> None:
    parse_ok(" ".join(tokens))


# -- 3. deep nesting ------------------------------------------------------------------------

DEPTH = 10_000
DEEP = {
    "lists": "train {\n  x = " + "[" * DEPTH + "]" * DEPTH + "\n}\n",
    "calls": "train {\n  x = " + "f(" * DEPTH + ")" * DEPTH + "\n}\n",
    "kwarg-calls": "train {\n  x = " + "f(a = " * DEPTH + "1" + ")" * DEPTH + "\n}\n",
    "blocks": "a {\n" * DEPTH + "}\n" * DEPTH,
    "named-blocks": "model m { " * DEPTH + "} " * DEPTH,
    "lists-unclosed": "train { x = " + "[" * DEPTH,
    "calls-unclosed": "train { x = " + "f(" * DEPTH,
    "blocks-unclosed": "a { " * DEPTH,
    "bare-braces": "{" * DEPTH + "}" * DEPTH,
    "mixed": "a { x = " + "[f(" * (DEPTH // 2) + ")]" * (DEPTH // 2) + " }",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_a_diagnostic(name: str) -> None:
    parsed = finishes(lambda: parse_ok(DEEP[name]))
    assert isinstance(parsed, Parsed)
    assert parsed.recipe is None
    assert any(d.is_error for d in parsed.diagnostics)


def test_nesting_just_under_the_limit_parses() -> None:
    ok = "train {\n  x = " + "[" * 40 + "]" * 40 + "\n}\n"
    assert parse_ok(ok).recipe is not None


def test_deep_nesting_through_compile(tmp_path: Path) -> None:
    recipe = tmp_path / "deep.skopt"
    recipe.write_text(DEEP["blocks"])
    result = finishes(lambda: compile_recipe(str(recipe)))
    assert not result.ok and result.plan is None  # type: ignore[attr-defined]


# -- 4. one-megabyte lines ------------------------------------------------------------------

MB = 1_000_000
HUGE = {
    "string-value": 'model m {\n  name = "' + "y" * MB + '"\n}\n',
    "escaped-string": 'model m { name = "' + '\\"' * (MB // 2) + '" }\n',
    "long-string": 'model m {\n  name = """' + "y" * MB + '"""\n}\n',
    "name-value": "model m {\n  name = " + "y" * MB + "\n}\n",
    "name-key": "model m {\n  " + "k" * MB + " = 1\n}\n",
    "block-kind": "k" * MB + " {}\n",
    "comment": "# " + "c" * MB + "\nmodel m { provider = sim }\n",
    "unterminated-string": 'model m { name = "' + "y" * MB,
    "unterminated-long-string": 'model m { name = """' + "y" * MB,
    "decimal-digits": "model m {\n  x = 1." + "1" * MB + "\n}\n",
    "junk": "@" * MB,
    "equals": "=" * MB,
    "many-blank-lines": "\n" * MB + "model m { provider = sim }\n",
}
# lines of many small tokens: the parser handles ~100-200k tokens a second, so these are
# 100 KB (a 1 MB line of `a = 1, ` takes about 8 s: linear, but not "a few seconds")
KB100 = 100_000
MANY_TOKENS = {
    "commas": "model m {" + "," * KB100 + "}",
    "one-line-entries": "model m { " + "a = 1, " * (KB100 // 7) + "}\n",
    "list-items": "model m { x = [" + "1, " * (KB100 // 3) + "] }\n",
    "call-args": "model m { x = f(" + "a = 1, " * (KB100 // 7) + ") }\n",
    "newlines-in-list": "model m { x = [" + "\n" * KB100 + "] }\n",
    "comment-lines": "model m {\n" + "# c\n" * (KB100 // 4) + "}\n",
}


@pytest.mark.parametrize("name", sorted(HUGE))
def test_one_megabyte_line_finishes(name: str) -> None:
    finishes(lambda: parse_ok(HUGE[name]))


@pytest.mark.parametrize("name", sorted(MANY_TOKENS))
def test_long_line_of_many_tokens_finishes(name: str) -> None:
    finishes(lambda: parse_ok(MANY_TOKENS[name]))


def test_one_megabyte_line_through_compile_and_fmt(tmp_path: Path) -> None:
    text = HUGE["string-value"]
    recipe = tmp_path / "huge.skopt"
    recipe.write_text(text)
    finishes(lambda: compile_recipe(str(recipe)))
    formatted = finishes(lambda: fmt(text))
    assert formatted == text


def test_many_syntax_errors_finish_quickly() -> None:
    # every line wrong: the parser re-parses after each error, so bound the total work
    text = "a b c = = {\n" * 50_000
    parsed = finishes(lambda: parse_ok(text))
    assert isinstance(parsed, Parsed) and parsed.diagnostics


def test_errors_at_the_end_of_a_long_file_cost_about_one_parse() -> None:
    good = "".join(
        f"model m{i} {{\n  provider = sim\n  concurrency = {i + 1}\n}}\n" for i in range(400)
    )
    start = time.perf_counter()
    assert parse_ok(good).recipe is not None
    clean = time.perf_counter() - start
    text = good + "oops oops oops\n" * 30
    start = time.perf_counter()
    parsed = parse_ok(text)
    broken = time.perf_counter() - start
    assert len(parsed.diagnostics) == 20
    assert broken < 5 * clean + 0.05, f"clean {clean:.3f}s, with 20 errors {broken:.3f}s"


# -- 5. invalid UTF-8 -----------------------------------------------------------------------

BAD_UTF8 = {
    "lone-continuation": b"skopt 1\nmodel m { provider = sim }\n\x80\n",
    "truncated-sequence": b'model m { name = "caf\xc3" }\n',
    "overlong": b'model m { name = "\xc0\xaf" }\n',
    "surrogate": b'model m { name = "\xed\xa0\x80" }\n',
    "ff-fe": b"\xff\xfe\x00m\x00o\x00d\x00",
    "in-comment": b"# caf\xe9\nmodel m { provider = sim }\n",
    "binary-junk": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("name", sorted(BAD_UTF8))
def test_invalid_utf8_is_a_diagnostic(tmp_path: Path, name: str) -> None:
    recipe = tmp_path / "bad.skopt"
    recipe.write_bytes(BAD_UTF8[name])
    result = compile_recipe(str(recipe))
    assert not result.ok
    assert result.plan is None
    diag = next(d for d in result.diagnostics if d.is_error)
    assert "UTF-8" in diag.message
    assert located(diag.span)


def test_invalid_utf8_position(tmp_path: Path) -> None:
    recipe = tmp_path / "bad.skopt"
    recipe.write_bytes(b'skopt 1\nmodel m {\n  name = "ab\xffc"\n}\n')
    (diag,) = compile_recipe(str(recipe)).diagnostics
    assert (diag.span.line, diag.span.col) == (3, 13)


def test_invalid_utf8_import_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "lib.skopt").write_bytes(b"model m { provider = \xff }\n")
    recipe = tmp_path / "main.skopt"
    recipe.write_text('skopt 1\nimport "lib.skopt"\n')
    result = compile_recipe(str(recipe))
    assert not result.ok and result.plan is None
    assert any("UTF-8" in d.message for d in result.diagnostics), result.diagnostics


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=200))
def test_random_binary_file_through_compile(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    recipe = tmp_path_factory.getbasetemp() / "binary.skopt"
    recipe.write_bytes(data)
    result = compile_recipe(str(recipe))
    for diag in result.diagnostics:
        assert located(diag.span)


# -- 6. a generator of valid recipes --------------------------------------------------------


# plain strings are generated in the formatter's canonical spelling; other spellings are in
# `test_fmt_keeps_meaning_of_non_canonical_strings`
def canonical(value: str) -> str:
    body = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{body}"'


VALUE_CHARS = st.one_of(
    st.sampled_from(list('ab #{}[]()=,"\\\n\t$%é→')),
    st.characters(blacklist_categories=("Cs",)),
)
COMMENT_CHARS = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))
LONG_BODY_CHARS = st.one_of(
    st.sampled_from(list("ab #{}[]()=,\\\n\n  \t")),
    st.characters(blacklist_categories=("Cs",), blacklist_characters='"\r'),
)
NAME = st.one_of(
    st.sampled_from(["m", "e", "target", "optimizer", "on", "off", "cosine", "a-b", "_x", "Z9"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,14}", fullmatch=True),
)
SCALARS = st.one_of(
    st.text(VALUE_CHARS, max_size=20).map(canonical),
    st.text(LONG_BODY_CHARS, max_size=30).map(lambda s: '"""' + s + '"""'),
    st.sampled_from(["0", "4", "0.5", "1_000", "1e-3", "-2", "1.5E+3", "42", "-0.25"]),
    st.integers(-(10**9), 10**9).map(str),
    st.sampled_from(["60%", "$0.15", "$25", "20k", "2M", "30s", "10min", "2h", "1.5k", "-5%"]),
    NAME,
)


def comment(draw: st.DrawFn) -> str:
    return "#" + draw(st.text(COMMENT_CHARS, max_size=24))


@st.composite
def values(draw: st.DrawFn, depth: int = 0, indent: str = "") -> str:
    kind = draw(st.sampled_from(["scalar"] * 5 + ["list", "call"] if depth < 3 else ["scalar"]))
    if kind == "scalar":
        return draw(SCALARS)
    items: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        item = draw(values(depth + 1, indent + "  "))
        if kind == "call" and draw(st.booleans()):
            item = f"{draw(NAME)} = {item}"
        items.append(item)
    open_, close = (f"{draw(NAME)}(", ")") if kind == "call" else ("[", "]")
    if not items or draw(st.integers(0, 3)):
        trailing = "," if items and draw(st.integers(0, 4)) == 0 else ""
        return open_ + ", ".join(items) + trailing + close
    # one item a line, with own-line and trailing comments inside the brackets
    inner = indent + "    "
    lines = [open_ + (f"  {comment(draw)}" if draw(st.integers(0, 3)) == 0 else "")]
    for index, item in enumerate(items):
        if draw(st.integers(0, 3)) == 0:
            lines.append(inner + comment(draw))
        comma = "," if index < len(items) - 1 or draw(st.booleans()) else ""
        tail = f" {comment(draw)}" if draw(st.integers(0, 3)) == 0 else ""
        lines.append(f"{inner}{item}{comma}{tail}")
    if draw(st.integers(0, 4)) == 0:
        lines.append(inner + comment(draw))
    lines.append(indent + "  " + close)
    return "\n".join(lines)


@st.composite
def one_line_blocks(draw: st.DrawFn, depth: int) -> str:
    head = draw(NAME) + (f" {draw(NAME)}" if draw(st.booleans()) else "")
    members = []
    for _ in range(draw(st.integers(0, 3))):
        if depth < 2 and draw(st.integers(0, 4)) == 0:
            members.append(draw(one_line_blocks(depth + 1)))
        else:
            value = draw(values(depth=2))  # single-line values only (no comments inside)
            assume("\n" not in value)
            members.append(f"{draw(NAME)} = {value}")
    sep = draw(st.sampled_from([", ", ",", " , "]))
    trailing = "," if members and draw(st.integers(0, 3)) == 0 else ""
    body = sep.join(members) + trailing
    return f"{head} {{ {body} }}" if body else f"{head} {{{draw(st.sampled_from(['', ' ']))}}}"


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0, indent: str = "") -> str:
    if draw(st.integers(0, 4)) == 0:
        return draw(one_line_blocks(depth))
    head = draw(NAME) + (f" {draw(NAME)}" if draw(st.booleans()) else "")
    inner = indent + draw(st.sampled_from(["  ", "    ", "\t", ""]))
    out = head + " {" + (f" {comment(draw)}" if draw(st.integers(0, 4)) == 0 else "") + "\n"
    count = draw(st.integers(0, 6))
    last_tail = ""
    for index in range(count):
        # own-line comments before a member, blank lines before, between and after them
        if draw(st.integers(0, 3)) == 0:
            out += "\n" * draw(st.integers(1, 2))
        for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 2)) == 0 else 0):
            out += inner + comment(draw) + "\n"
            if draw(st.integers(0, 3)) == 0:
                out += "\n"
        if depth < 3 and draw(st.integers(0, 4)) == 0:
            member = draw(blocks(depth + 1, inner))
        else:
            spaces = draw(st.sampled_from([" ", "  ", "    ", "\t"]))
            after = draw(st.sampled_from([" ", "  "]))
            member = f"{draw(NAME)}{spaces}={after}{draw(values(indent=inner))}"
        out += inner + member
        last = index == count - 1
        tail = f"  {comment(draw)}" if draw(st.integers(0, 3)) == 0 else ""
        if not tail and not last and draw(st.integers(0, 4)) == 0:
            out += draw(st.sampled_from([", ", ","]))  # the next member on the same line
            continue
        if not tail and draw(st.integers(0, 5)) == 0:
            out += ","
        if last and not tail and draw(st.integers(0, 3)) == 0:
            last_tail = " "  # close the block on the member's line
            break
        out += tail + "\n"
    if last_tail:
        return out + "}"
    if draw(st.integers(0, 4)) == 0:
        if draw(st.booleans()):
            out += "\n"
        out += inner + comment(draw) + "\n"
    return out + indent + "}"


@st.composite
def recipes(draw: st.DrawFn) -> str:
    statements: list[str] = []
    if draw(st.booleans()):
        statements.append(f"skopt {draw(st.sampled_from(['1', '2', '1_0']))}")
    for _ in range(draw(st.integers(0, 2))):
        statements.append(
            "import " + canonical(draw(st.text(VALUE_CHARS, min_size=1, max_size=12)))
        )
    for _ in range(draw(st.integers(0, 4))):
        statements.append(draw(blocks()))
    out = ""
    if draw(st.integers(0, 3)) == 0:
        out += "\n".join(comment(draw) for _ in range(draw(st.integers(1, 2)))) + "\n"
        out += "\n" * draw(st.integers(0, 2))
    for index, statement in enumerate(statements):
        if index:
            if draw(st.integers(0, 4)) == 0 and not out.endswith("\n"):
                out += draw(st.sampled_from([", ", ","]))
            else:
                out += "\n" if out.endswith("\n") else "\n" * draw(st.integers(1, 3))
                if draw(st.integers(0, 3)) == 0:
                    out += comment(draw) + "\n"
                    out += "\n" * draw(st.integers(0, 2))
        out += statement
        if draw(st.integers(0, 3)) == 0:
            out += f"  {comment(draw)}\n"
    if draw(st.integers(0, 3)) == 0:
        out += "\n" + comment(draw)
    return out + draw(st.sampled_from(["\n", "", "\n\n"]))


GEN = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@GEN
@given(recipes())
def test_fmt_is_idempotent_keeps_meaning_and_comments(text: str) -> None:
    assert_fmt_properties(text)


EXAMPLES = {
    "spec-example": """\
skopt 1
import "base.skopt"                       # shared models and prices

model target {
  provider    = openai                    # openai | anthropic | local | sim | replay
  name        = "gpt-4o-mini"
  temperature = 0
  concurrency = 16                        # in-flight calls for this model
}
model optimizer {
  provider = anthropic
  max_tokens = 4096
  price { input = $3, output = $15, per = 1M }     # overrides the shipped price table
}

train {
  lr         = cosine(max = 4, min = 2)   # edits per step
  gate { split = valid, metric = mixed(0.5), no_regression = off }
  slow_update { samples = 20 }            # or: slow_update = off
}

budget { calls = 5k, usd = $25, tokens = 20M, time = 2h }
""",
    "comments-everywhere": """\
# head
skopt 1 # version

# before a block
model m { # after the brace
  # before an entry
  provider = sim # trailing
  xs = [
    # inside a list
    1, # after an item
    2,
  ] # after the list
  lr = cosine(
    max = 4, # max
    min = 2,
  )
  # before the closing brace
} # after the closing brace
# the end
""",
    "crlf": "model m {\r\n  provider = sim # c\r\n  x = [1,\r\n    2]\r\n}\r\n",
    "long-list": "env e { labels = ["
    + ", ".join(f'"label number {i}"' for i in range(12))
    + "] }\n",
    "one-line-nested": "train { gate { split = valid }, epochs = 2, slow_update { samples = 3 } }\n",  # noqa: E501
    "comma-statements": 'skopt 1, import "a.skopt", model m { provider = sim }, env e {}\n',
    "long-strings": (
        'env e {\n  prompt = """\n    line one\n      line two\n    """\n  kind = qa\n}\n'
    ),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_fmt_properties_examples(name: str) -> None:
    assert_fmt_properties(EXAMPLES[name])


@pytest.mark.parametrize(
    "recipe", sorted(Path(__file__).resolve().parents[2].glob("recipes/*.skopt"))
)
def test_fmt_properties_shipped_recipes(recipe: Path) -> None:
    assert_fmt_properties(recipe.read_text())


# -- 7. compile_recipe on random input ------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compile-soup")
    (root / "items.jsonl").write_text(
        "".join(f'{{"id": "q{i}", "input": "question {i}", "answer": "{i}"}}\n' for i in range(40))
    )
    (root / "skill.md").write_text("# Skill\n\nAnswer briefly.\n")
    (root / "base.skopt").write_text("skopt 1\nmodel sim { provider = sim }\n")
    (root / "binary.skopt").write_bytes(b"\xff\xfe\x00")
    (root / "folder").mkdir()
    (root / "items.json").write_text(
        '[{"input": "a", "answer": "1"}, {"input": "b", "answer": ["2", "3"]}]'
    )
    (root / "items.csv").write_text("input,answer\nq1,a1\nq2,a2\nq3,a3\n")
    (root / "bad.jsonl").write_text('{"input": "a", "answer": "1"}\nnot json\n')
    (root / "empty.jsonl").write_text("")
    return root


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(soup=token_soups(max_size=40))
def test_compile_token_soup_never_raises(workdir: Path, soup: str) -> None:
    recipe = workdir / "soup.skopt"
    recipe.write_text(soup, encoding="utf-8", errors="surrogatepass")
    result = compile_recipe(str(recipe))
    assert result.ok or result.plan is None


def _keys(spec: schema.BlockSpec) -> list[str]:
    keys = list(spec.keys)
    for child in spec.children.values():
        keys += _keys(child)
    return keys


SPECS = [schema.MODEL, schema.ENV, schema.TRAIN, schema.BUDGET, schema.SLEEP]
KINDS = sorted(
    {s.kind for s in SPECS} | {c for s in SPECS for c in s.children} | {"sweep", "bogus"}
)
KEYS = sorted({k for s in SPECS for k in _keys(s)} | {"bogus", "lr", "batch_size"})
# keys whose size drives the plan's length stay small: the plan has one phase list per step
SMALL_INT_KEYS = {
    "epochs",
    "batch_size",
    "minibatch",
    "merge_batch",
    "rollouts",
    "repeats",
    "samples",
    "items",
    "rules",
}
SMALL_INTS = st.sampled_from(["0", "1", "2", "3", "-1", "0.5", "1k", "2M", "1e400", "all", "$1"])
COMPILE_VALUES = st.one_of(
    st.sampled_from(
        [
            "sim", "m", "e", "openai", "anthropic", "local", "replay", "bogus", "empty", "all",
            "valid", "test", "train", "on", "off", "true", "qa", "f1", "hard", "soft", "patch",
            "0", "1", "2", "-1", "0.5", "1e400", "1e-400", "60%", "200%", "0%", "$0", "$25",
            "$1e3", "2k", "1.5k", "2M", "30s", "0s", "10min", "2h", '"x"', '""',
            '"items.jsonl"', '"missing.jsonl"', '"skill.md"', '"folder"', '"binary.skopt"',
            "cosine(max = 4, min = 2)", "cosine(max = 2, min = 4)", "constant(0)", "constant(3)",
            "linear()", "linear(max = 3, min = 1)", "autonomous", "cosine(4, 2)", "mixed(0.5)",
            "mixed(2)", "numeric(tol = -1)", "numeric()", "python(\"m:E\")", "generic(path = 1)",
            "synthetic(items = 30)", "synthetic(rules = 0)", "synthetic(items = 1, rules = 1)",
            "synthetic(items = 12, noise = 50%, seed = 3)", "synthetic(bogus = 1)", "synthetic",
            "[]", "[1, 2]", "[constant(4), cosine(max = 8, min = 2)]", "[claude, codex]",
            '["a", "b"]', "[[1]]", "f(g(h()))",
        ]
    ),
)  # fmt: skip


@st.composite
def compile_blocks(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(KINDS))
    name = f" {draw(st.sampled_from(['m', 'e', 'sim', 'x']))}" if draw(st.booleans()) else ""
    members = []
    for _ in range(draw(st.integers(0, 6))):
        if depth < 2 and draw(st.integers(0, 4)) == 0:
            members.append(draw(compile_blocks(depth + 1)))
            continue
        key = draw(st.sampled_from(KEYS))
        value = draw(SMALL_INTS if key in SMALL_INT_KEYS else COMPILE_VALUES)
        if key == "kind" and draw(st.booleans()):
            value = draw(
                st.sampled_from(["synthetic(items = 20)", "qa", "synthetic(items = 60, rules = 3)"])
            )
        members.append(f"{key} = {value}")
    return f"{kind}{name} {{\n  " + "\n  ".join(members) + "\n}"


GOOD_START = """\
model m { provider = sim }
env e { kind = synthetic(items = 30) }
train { target = m, optimizer = m, skill = empty, epochs = 2, batch_size = 4 }
"""


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    head=st.sampled_from(["", "skopt 1\n", "skopt 2\n", 'import "base.skopt"\n', 'import "soup.skopt"\n',  # noqa: E501
                          'import "binary.skopt"\n', 'import "nope.skopt"\n', GOOD_START]),
    body=st.lists(compile_blocks(), max_size=5),
    sets=st.lists(
        st.sampled_from(["train.epochs=2", "train.lr=cosine(", "=", "x", "model.m.provider=bogus",
                         "train.gate.split=test", "budget.calls=1", "env.e.kind=qa", "a.b.c.d=1",
                         "train.epochs=[1,2]", "train.batch_size=2k", ".=.", "train.=1"]),
        max_size=2,
    ),
)  # fmt: skip
def test_compile_schema_soup_never_raises(
    workdir: Path, head: str, body: list[str], sets: list[str]
) -> None:
    recipe = workdir / "soup.skopt"
    recipe.write_text(head + "\n".join(body) + "\n")
    result = compile_recipe(str(recipe), sets)
    assert (result.plan is None) or result.ok
    for diag in result.diagnostics:
        assert diag.span.line >= 1 and diag.span.col >= 1, diag


# a recipe shaped by the schema: the right keys in the right blocks, values of the key's type
# most of the time, so that checking, lowering, the cost model and the budget all run


def _type_values(t: object, key: str) -> tuple[list[str], list[str]]:
    """(values that fit type `t`, values that do not) for key `key`."""
    kind = type(t).__name__
    if kind == "Int":
        if key in SMALL_INT_KEYS:
            return ["1", "2", "3"], ["0", "-1", "0.5", "1e400", "30s"]
        return ["1", "2", "42", "1k"], ["-1", "0.5", "1e400", "2M", "60%"]
    if kind == "Float":
        return ["0", "0.5", "1", "1e-3"], ["-1", "1e400", "2", "x", "$1"]
    if kind == "Unit":
        return {
            "percent": (["60%", "20%", "0%", "100%", "33.3%"], ["150%", "-5%", "0.5"]),
            "money": (["$0", "$0.15", "$25", "$100000"], ["25", "$1e3", "1k"]),
            "duration": (["30s", "10min", "2h"], ["0s", "5", "-1s"]),
        }.get(getattr(t, "unit", ""), (["1"], ["x"]))
    if kind == "Bool":
        return ["on", "off", "true", "false"], ["yes", "1", '"on"']
    if kind == "Str":
        return ['"x"', '"input"', '"answer"', '"{recipe}/{time}"'], ["x", "1", "[]"]
    if kind == "PathTo":
        good = ['"folder"'] if getattr(t, "kind", "") == "dir" else ['"items.jsonl"', '"skill.md"']
        return good, ['"missing"', '"."', '"bad.jsonl"', '"empty.jsonl"', '"/"', "x"]
    if kind == "Ref":
        return ["m", "o"], ["nope", '"m"', "e"]
    if kind == "Choice":
        good = list(getattr(t, "words", ()))
        bad = ["bogus"]
        for call, params in getattr(t, "calls", {}).items():
            args = ", ".join(
                f"{p} = {v}" for p, v in zip(params, ["2", "1", "10%", "1"], strict=False)
            )
            good.append(f"{call}({args})")
            bad += [f"{call}(1, 2, 3, 4, 5)", f"{call}(bogus = 1)"]
        return good or ["x"], bad
    good, bad = [], []
    for sub in vars(t).values() if hasattr(t, "__dict__") else ():
        for one in sub if isinstance(sub, tuple) else (sub,):
            if not isinstance(one, str | int | float | bool) and one is not None:
                g, b = _type_values(one, key)
                good += g
                bad += b
    if kind == "ListOf":
        return [f"[{', '.join(good[:2])}]"], ["[]", *good[:1], "[[1]]"]
    return good or ["1"], bad or ["x"]


WRONG = st.sampled_from(
    ["1", '"x"', "x", "[]", "f()", "1e400", "$1", "60%", "30s", "2M", "f(g(1))"]
)
SAFE_KINDS = [
    "synthetic(items = 30)",
    "synthetic(items = 12, rules = 3)",
    "synthetic(rules = 2, items = 20, noise = 0%)",
]


@st.composite
def schema_blocks(
    draw: st.DrawFn, spec: schema.BlockSpec, name: str | None, fixed: dict[str, str], broken: bool
) -> str:
    def bad() -> bool:
        return broken and draw(st.integers(0, 4)) == 0

    lines = [f"{k} = {v}" for k, v in fixed.items() if not bad()]
    for key in draw(st.lists(st.sampled_from(sorted(spec.keys)), max_size=3, unique=True)):
        if key in fixed or key in (
            "data",
            "files",
            "kind",
            "base_url",
            "api_key_env",
            "from",
            "gguf",
        ):
            continue
        good, wrong = _type_values(spec.keys[key].type, key)
        value = draw(st.sampled_from(wrong) | WRONG) if bad() else draw(st.sampled_from(good))
        lines.append(f"{key} = {value}")
    for kind, child in spec.children.items():
        if kind == "files" or draw(st.integers(0, 2)):
            continue
        required = {
            k: _type_values(v.type, k)[0][0]
            for k, v in child.keys.items()
            if v.default is schema.REQUIRED
        }
        lines.append(draw(schema_blocks(child, None, required, broken)))
    if bad():
        lines.append(f"{draw(st.sampled_from(['bogus', 'epoch', 'provder']))} = 1")
    head = spec.kind + (f" {name}" if name else "")
    return head + " {\n  " + "\n  ".join("\n  ".join(line.split("\n")) for line in lines) + "\n}"


@st.composite
def schema_recipes(draw: st.DrawFn) -> str:
    broken = draw(st.integers(0, 2)) == 0
    env_fixed = {"kind": draw(st.sampled_from(SAFE_KINDS))}
    if draw(st.booleans()):
        env_fixed = {"kind": draw(st.sampled_from(["qa", "classify"])), "data": '"items.jsonl"'}
    parts = [
        draw(schema_blocks(schema.MODEL, "m", {"provider": "sim"}, broken)),
        draw(
            schema_blocks(
                schema.MODEL,
                "o",
                {
                    "provider": draw(st.sampled_from(["sim", "openai", "anthropic"])),
                    "name": '"gpt-4o-mini"',
                },
                broken,
            )
        ),
        draw(schema_blocks(schema.ENV, "e", env_fixed, broken)),
    ]
    job = draw(st.sampled_from(["train", "train", "train", "sleep", "none"]))
    if job == "train":
        fixed = {
            "target": "m",
            "optimizer": "o",
            "skill": draw(st.sampled_from(["empty", '"skill.md"'])),
        }
        parts.append(draw(schema_blocks(schema.TRAIN, None, fixed, broken)))
    elif job == "sleep":
        parts.append(
            draw(
                schema_blocks(
                    schema.SLEEP,
                    None,
                    {"target": "m", "optimizer": "o", "skill": '"skill.md"'},
                    broken,
                )
            )
        )
    if draw(st.booleans()):
        parts.append(draw(schema_blocks(schema.BUDGET, None, {}, broken)))
    if draw(st.integers(0, 3)) == 0:
        keys = ["lr", "batch_size", "epochs", "mode", "seed", "reflect", "minibatch"]
        cells = []
        for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True)):
            good, _ = _type_values(schema.TRAIN.keys[key].type, key)
            cells.append(
                f"{key} = [{', '.join(draw(st.lists(st.sampled_from(good), min_size=1, max_size=2)))}]"  # noqa: E501
            )
        parts.append("sweep {\n  " + "\n  ".join(cells) + "\n}")
    return "skopt 1\n" + "\n".join(draw(st.permutations(parts))) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=schema_recipes())
def test_compile_schema_shaped_recipes_never_raise(workdir: Path, text: str) -> None:
    recipe = workdir / "shaped.skopt"
    recipe.write_text(text)
    result = compile_recipe(str(recipe))
    assert (result.plan is not None) == result.ok, result.diagnostics
    for diag in result.diagnostics:
        assert diag.span.line >= 1 and diag.span.col >= 1, diag


# -- bugs found by these tests: regression tests, and pins for the ones still open -----------


# int() of more than 4300 digits raised ValueError inside the transformer (fixed in fd8a43d)
@pytest.mark.parametrize(
    "text",
    [
        "model m { x = " + "1" * 4301 + " }",
        "model m { x = " + "1" * MB + " }",  # a 1 MB line of digits
        "model m { x = " + "1" * 5000 + "k }",
        "model m { x = $" + "1" * 5000 + " }",
        "skopt " + "1" * 5000,
    ],
    ids=["4301-digits", "1MB-digits", "count", "money", "header"],
)
def test_huge_integer_literal_is_a_diagnostic(text: str) -> None:
    finishes(lambda: parse_ok(text))


def test_fmt_idempotent_with_blank_line_after_comment() -> None:
    # regression: the run of aligned `=` used to change between the first and second fmt
    assert_fmt_properties("a {\n  x = 1\n  # c\n\n  yyyy = 2\n}\n")
    assert_fmt_properties("a {\n  x = 1\n  # c\n\n  # d\n  yyyy = 2\n}\n")


# fmt re-escapes strings, and Str.text used to take part in == (fixed in fd8a43d)
@pytest.mark.parametrize("text", ['a { x = "\\q" }\n', 'a { x = "a\tb" }\n', 'import "\\d"\n'])
def test_fmt_keeps_meaning_of_non_canonical_strings(text: str) -> None:
    assert_fmt_properties(text)


def _compile_with(workdir: Path, text: str, files: dict[str, bytes] | None = None) -> None:
    for name, data in (files or {}).items():
        (workdir / name).write_bytes(data)
    recipe = workdir / "pinned.skopt"
    recipe.write_text(text)
    result = compile_recipe(str(recipe))
    assert not result.ok and result.plan is None


TRAIN_ON = (
    "model m {{ provider = sim }}\n"
    "env e {{ kind = qa, data = {data} }}\n"
    "train {{ target = m, optimizer = m, skill = empty }}\n"
)


# path checks raised on names the OS rejects (fixed in fd8a43d)
@pytest.mark.parametrize(
    "text",
    [
        TRAIN_ON.format(data='"~no-such-user-skopt/items.jsonl"'),  # RuntimeError from expanduser
        TRAIN_ON.format(data='"' + "a" * 300 + '.jsonl"'),  # OSError ENAMETOOLONG from is_file
        'import "' + "a" * 300 + '.skopt"\n',  # OSError ENAMETOOLONG from path.exists
        'import "a\x00b.skopt"\n',  # ValueError (embedded null byte) from path.resolve
    ],
    ids=["tilde-unknown-user", "long-data-name", "long-import-name", "nul-in-import"],
)
def test_unusable_paths_are_diagnostics(workdir: Path, text: str) -> None:
    _compile_with(workdir, text)


# the data-file readers let errors other than JSONDecodeError escape (fixed in fd8a43d)
@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("deep.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n"),  # RecursionError
        ("deep.json", b"[" * 100_000 + b"]" * 100_000),  # RecursionError
        ("bigint.jsonl", b'{"input": "q", "answer": ' + b"1" * 5000 + b"}\n"),  # ValueError
        ("bigfield.csv", b"input,answer\n" + b"x" * 200_000 + b",1\n"),  # _csv.Error
    ],
    ids=["deep-jsonl", "deep-json", "bigint-jsonl", "big-csv-field"],
)
def test_bad_data_files_are_diagnostics(workdir: Path, name: str, data: bytes) -> None:
    _compile_with(workdir, TRAIN_ON.format(data=f'"{name}"'), {name: data})


# valid data was rejected: .jsonl split with str.splitlines() (U+2028), BOM kept (fixed in fd8a43d)
@pytest.mark.parametrize(
    "data",
    [
        '{"input": "q\u2028x", "answer": "a"}\n{"input": "r", "answer": "b"}\n'.encode(),
        b'\xef\xbb\xbf{"input": "q", "answer": "a"}\n{"input": "r", "answer": "b"}\n',
    ],
    ids=["u2028-in-jsonl-string", "bom-jsonl"],
)
def test_valid_jsonl_is_accepted(workdir: Path, data: bytes) -> None:
    (workdir / "ok.jsonl").write_bytes(data)
    recipe = workdir / "pinned.skopt"
    recipe.write_text(TRAIN_ON.format(data='"ok.jsonl"'))
    result = compile_recipe(str(recipe))
    assert not [d for d in result.diagnostics if "data" in d.message], result.diagnostics


def test_the_parser_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the parser costs ~25 ms, parsing a small recipe ~1 ms: it is built once per
    process (and its tables cached on disk), never per call."""
    builds: list[str] = []
    build = lexing.build
    monkeypatch.setattr(lexing, "build", lambda kind: builds.append(kind) or build(kind))
    lexing.parser.cache_clear()
    lexing.lexer.cache_clear()
    for _ in range(20):
        parse("model m { provider = sim }\n", PATH)
        parse("model m { provider = }\n", PATH)  # a syntax error: the recovery lexer too
    assert sorted(builds) == ["basic", "contextual"]


def test_a_line_of_closing_braces_is_cheap() -> None:
    text = "}" * 200_000
    finishes(lambda: parse_ok("model m {}\n"))  # warm
    finishes(lambda: parse_ok(text))  # no replay per brace: ~0.5 s of lexing

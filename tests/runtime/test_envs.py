"""Environments (runtime/envs): answer extraction, every kind's metric as table tests, loading a
user's python env, and a property test that no model output makes scoring raise."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import Env, EnvLoadError, Score, env_for, extract, read
from skopt.runtime.envs.math import last_number
from skopt.runtime.envs.python_env import PythonEnv


def env_settings(kind: str = "qa", metric: str = "f1", **overrides: Any) -> EnvSettings:
    """An env block as the compiler would resolve it; `overrides` change single fields."""
    fields: dict[str, Any] = {
        "name": "e",
        "kind": kind,
        "kind_args": {},
        "data": "data.jsonl",
        "files": {},
        "fields": {},
        "labels": None,
        "metric": metric,
        "metric_args": {},
        "split": None,
        "limit": {},
        "prompt": None,
        "answer_format": "raw",
        "strict_format": False,
        "task": None,
        "timeout_s": 120.0,
        "workers": 8,
    }
    fields.update(overrides)
    return EnvSettings(**fields)


def item(*answers: str) -> Item:
    return Item(id="i1", input="q?", answers=answers)


def scored(env: Env, output: str, *answers: str) -> tuple[float, float]:
    score = env.score(item(*answers), output)
    return score.hard, score.soft


# -- extract ----------------------------------------------------------------------------------

EXTRACT = [
    ("tag-one", "tag", "think... <answer>Paris</answer>", "Paris"),
    ("tag-several-last-wins", "tag", "<answer>A</answer> then <answer>B</answer>", "B"),
    ("tag-no-tag", "tag", "Paris", ""),
    ("tag-unclosed", "tag", "<answer>Paris", ""),
    ("tag-last-unclosed", "tag", "<answer>A</answer> <answer>B", "A"),
    ("tag-nested-open", "tag", "<answer>A <answer>B</answer>", "B"),
    ("tag-case", "tag", "<ANSWER>Paris</Answer>", "Paris"),
    ("tag-space-before-gt", "tag", "<answer >Paris</answer >", "Paris"),
    ("tag-whitespace", "tag", "<answer>\n  Paris \t\n</answer>", "Paris"),
    ("tag-multiline", "tag", "<answer>line 1\nline 2</answer>", "line 1\nline 2"),
    ("tag-empty", "tag", "<answer></answer>", ""),
    ("tag-kelvin-sign-is-not-k", "tag", "<answer>x</answer><\u212aanswer>y</answer>", "x"),
    ("last-line", "last_line", "step 1\nstep 2\n42", "42"),
    ("last-line-trailing-blanks", "last_line", "work\n  42  \n\n \t\n", "42"),
    ("last-line-crlf", "last_line", "work\r\n42\r\n", "42"),
    ("last-line-one-line", "last_line", "  42 ", "42"),
    ("last-line-empty", "last_line", "\n\n", ""),
    ("raw", "raw", "  the whole\nthing \n", "the whole\nthing"),
    ("raw-keeps-tags", "raw", "<answer>x</answer>", "<answer>x</answer>"),
]


@pytest.mark.parametrize(
    ("fmt", "output", "expected"), [c[1:] for c in EXTRACT], ids=[c[0] for c in EXTRACT]
)
def test_extract(fmt: str, output: str, expected: str) -> None:
    assert extract(output, fmt) == expected


def test_extract_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="answer format"):
        extract("x", "json")


def test_extract_is_linear_on_many_open_tags() -> None:
    start = time.perf_counter()
    assert extract("<answer>" * 200_000 + "</answer>", "tag") == ""
    assert extract("<answer>x" * 200_000, "tag") == ""
    assert time.perf_counter() - start < 2.0  # a lazy regex would take minutes


# -- qa ---------------------------------------------------------------------------------------

QA = [
    # (id, metric, answer, golds, hard, soft)
    ("exact-same", "exact", "Paris", ("Paris",), 1.0, 1.0),
    ("exact-case-punct", "exact", "paris!", ("Paris",), 1.0, 1.0),
    ("exact-articles", "exact", "The Eiffel Tower", ("Eiffel tower",), 1.0, 1.0),
    ("exact-article-an", "exact", "an apple", ("Apple.",), 1.0, 1.0),
    ("exact-article-inside-word", "exact", "theatre", ("atre",), 0.0, 0.0),
    ("exact-whitespace", "exact", "New   York\n City", ("new york city",), 1.0, 1.0),
    ("exact-unicode-punct", "exact", "«Paris»", ("Paris",), 1.0, 1.0),
    ("exact-wrong", "exact", "Lyon", ("Paris",), 0.0, 0.0),
    ("exact-partial-soft-is-hard", "exact", "Paris France", ("Paris",), 0.0, 0.0),
    ("exact-any-gold", "exact", "NYC", ("New York City", "NYC"), 1.0, 1.0),
    ("exact-no-gold", "exact", "Paris", (), 0.0, 0.0),
    ("exact-empty-answer", "exact", "", ("the",), 0.0, 0.0),
    ("f1-match", "f1", "the Paris.", ("Paris",), 1.0, 1.0),
    ("f1-partial", "f1", "Paris France", ("Paris",), 0.0, 2 / 3),
    ("f1-best-gold", "f1", "New York", ("York", "New York City"), 0.0, 0.8),
    ("f1-no-overlap", "f1", "Lyon", ("Paris",), 0.0, 0.0),
    ("f1-repeated-tokens", "f1", "x b b", ("b b c",), 0.0, 2 / 3),
    ("contains-whole-words", "contains", "It is Paris, France.", ("paris",), 1.0, 0.4),
    ("contains-not-part-of-word", "contains", "Parisian", ("Paris",), 0.0, 0.0),
    ("contains-phrase", "contains", "I think the New York City one", ("new york city",), 1, 2 / 3),
    ("contains-phrase-order", "contains", "City York New", ("New York City",), 0.0, 1.0),
    ("contains-any-gold", "contains", "maybe NYC", ("New York", "NYC"), 1.0, 2 / 3),
    ("contains-articles", "contains", "it was the Beatles", ("Beatles",), 1.0, 0.5),
]


@pytest.mark.parametrize(
    ("metric", "answer", "golds", "hard", "soft"), [c[1:] for c in QA], ids=[c[0] for c in QA]
)
def test_qa(metric: str, answer: str, golds: tuple[str, ...], hard: float, soft: float) -> None:
    env = env_for(env_settings("qa", metric))
    got_hard, got_soft = scored(env, answer, *golds)
    assert got_hard == hard
    assert got_soft == pytest.approx(soft)


def test_qa_scores_the_extracted_answer() -> None:
    env = env_for(env_settings("qa", "exact", answer_format="tag"))
    score = env.score(item("Paris"), "Paris? No: <answer>Lyon</answer> <answer> Paris </answer>")
    assert score == Score(1.0, 1.0, "Paris")


def test_an_output_without_the_tag_is_read_from_its_last_line_and_marked() -> None:
    lenient = env_for(env_settings("qa", "exact", answer_format="tag"))
    strict = env_for(env_settings("qa", "exact", answer_format="tag", strict_format=True))
    output = "Let me think.\n\nParis\n"
    assert lenient.score(item("Paris"), output) == Score(1.0, 1.0, "Paris", followed=False)
    assert strict.score(item("Paris"), output) == Score(0.0, 0.0, "", followed=False)
    assert lenient.score(item("Paris"), "<answer></answer>\nParis") == Score(0.0, 0.0, "")


# -- classify ---------------------------------------------------------------------------------

LABELS = ["positive", "negative", "Neutral"]
CLASSIFY = [
    # (id, labels, answer, gold, hard)
    ("same", LABELS, "positive", "positive", 1.0),
    ("case", LABELS, "POSITIVE", "Positive", 1.0),
    ("declared-case", LABELS, "neutral", "neutral", 1.0),
    ("surrounding-punct", LABELS, '**"Negative."**', "negative", 1.0),
    ("wrong-label", LABELS, "negative", "positive", 0.0),
    ("unknown-label", LABELS, "mixed", "mixed", 0.0),
    ("label-inside-sentence", LABELS, "It is positive.", "positive", 1.0),
    ("two-labels-named", LABELS, "positive or negative", "positive", 0.0),
    ("label-as-part-of-a-word", LABELS, "positively", "positive", 0.0),
    ("undeclared-inside-sentence", None, "It is spam", "spam", 0.0),  # gold is never searched
    ("inner-punct-kept", ["non-toxic", "toxic"], "non toxic", "non-toxic", 0.0),
    ("inner-punct-matches", ["non-toxic", "toxic"], "Non-Toxic!", "non-toxic", 1.0),
    ("empty", LABELS, "", "positive", 0.0),
    ("undeclared-gold", None, "Spam.", "spam", 1.0),
    ("undeclared-wrong", None, "ham", "spam", 0.0),
    ("field-name-labels", "label_field", "spam", "spam", 1.0),
]


@pytest.mark.parametrize(
    ("labels", "answer", "gold", "hard"), [c[1:] for c in CLASSIFY], ids=[c[0] for c in CLASSIFY]
)
def test_classify(labels: list[str] | str | None, answer: str, gold: str, hard: float) -> None:
    env = env_for(env_settings("classify", "accuracy", labels=labels))
    assert scored(env, answer, gold) == (hard, hard)


def test_classify_reads_a_bare_label_and_strict_does_not() -> None:
    fmt = {"labels": LABELS, "answer_format": "tag"}
    lenient = env_for(env_settings("classify", "accuracy", **fmt))
    strict = env_for(env_settings("classify", "accuracy", strict_format=True, **fmt))
    gold = item("negative")
    assert lenient.score(gold, "negative") == Score(1.0, 1.0, "negative", followed=False)
    assert lenient.score(gold, "Hmm.\nThe queue: Negative!\nThanks").hard == 1.0  # one label
    assert lenient.score(gold, "<answer>surely negative</answer>").hard == 1.0
    assert strict.score(gold, "negative") == Score(0.0, 0.0, "", followed=False)
    assert strict.score(gold, "<answer>surely negative</answer>").hard == 0.0


# -- math -------------------------------------------------------------------------------------

MATH = [
    # (id, answer, gold, tol, hard)
    ("integer", "The answer is 42.", "42", None, 1.0),
    ("integer-wrong", "41", "42", None, 0.0),
    ("last-number-wins", "3 apples + 4 apples = 7", "7", None, 1.0),
    ("decimal", "3.50", "3.5", None, 1.0),
    ("leading-dot", ".5", "0.5", None, 1.0),
    ("commas", "$1,234,567.89 in total", "1234567.89", None, 1.0),
    ("gold-commas", "1234", "1,234", None, 1.0),
    ("comma-list", "1,2,3", "3", None, 1.0),
    ("negative", "x = -12", "-12", None, 1.0),
    ("sign-matters", "12", "-12", None, 0.0),
    ("unicode-minus", "\u22125", "-5", None, 1.0),
    ("plus-sign", "+7", "7", None, 1.0),
    ("hyphen-is-not-sign", "pages 3-5", "5", None, 1.0),
    ("fraction", "3/4", "0.75", None, 1.0),
    ("fraction-spaces", "it is 3 / 4", "3/4", None, 1.0),
    ("negative-fraction", "-1/2", "-0.5", None, 1.0),
    ("fraction-over-zero", "1/0", "1", None, 0.0),
    ("percent", "12.5%", "12.5", None, 1.0),
    ("percent-gold", "12.5", "12.5%", None, 1.0),
    ("exponent", "2e-3", "0.002", None, 1.0),
    ("tol-default-inside", "1.0000005", "1", None, 1.0),
    ("tol-default-outside", "1.00001", "1", None, 0.0),
    ("tol-edge-inside", "1.5", "1", 0.5, 1.0),
    ("tol-edge-outside", "1.5000001", "1", 0.5, 0.0),
    ("tol-zero-exact", "2.0", "2", 0.0, 1.0),
    ("tol-zero-off", "2.0000001", "2", 0.0, 0.0),
    ("relative-tol-large", "123456789012", "123456789012.05", 0.0, 1.0),
    ("no-number", "I don't know", "4", None, 0.0),
    ("empty", "", "4", None, 0.0),
    ("gold-without-number", "4", "four", None, 0.0),
    ("word-with-digits", "answer v2", "2", None, 0.0),
]


@pytest.mark.parametrize(
    ("answer", "gold", "tol", "hard"), [c[1:] for c in MATH], ids=[c[0] for c in MATH]
)
def test_math(answer: str, gold: str, tol: float | None, hard: float) -> None:
    metric_args = {} if tol is None else {"tol": tol}
    env = env_for(env_settings("math", "numeric", metric_args=metric_args))
    assert scored(env, answer, gold) == (hard, hard)


def test_math_any_gold_answer() -> None:
    env = env_for(env_settings("math", "numeric"))
    assert scored(env, "0.5", "1/3", "1/2") == (1.0, 1.0)


@pytest.mark.parametrize(
    ("text", "value"),
    [("", None), ("1e99999", None), ("a 9" + "9" * 299, float("9" * 300)), ("\u0663", 3.0)],
    ids=["nothing", "overflow", "many-digits", "arabic-indic-digit"],
)
def test_last_number_edges(text: str, value: float | None) -> None:
    assert last_number(text) == value


# -- synthetic --------------------------------------------------------------------------------

SYNTHETIC = [
    ("same", "KQT42", 1.0),
    ("case-sensitive", "kqt42", 0.0),
    ("extra-text", "KQT42.", 0.0),
    ("surrounding-space", "  KQT42 ", 1.0),
    ("other-code", "ABC12", 0.0),
    ("empty", "", 0.0),
]


@pytest.mark.parametrize(
    ("answer", "hard"), [c[1:] for c in SYNTHETIC], ids=[c[0] for c in SYNTHETIC]
)
def test_synthetic(answer: str, hard: float) -> None:
    env = env_for(env_settings("synthetic", "exact", kind_args={"rules": 8, "items": 120}))
    assert scored(env, answer, "KQT42") == (hard, hard)


def test_synthetic_reads_the_tag() -> None:
    env = env_for(env_settings("synthetic", "exact", answer_format="tag"))
    assert env.score(item("KQT42"), "The rule says <answer>KQT42</answer>").hard == 1.0


# -- kinds and metrics ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "metric"),
    [("qa", "numeric"), ("classify", "f1"), ("math", "exact"), ("synthetic", "f1")],
    ids=lambda v: str(v),
)
def test_a_metric_the_kind_lacks_is_refused(kind: str, metric: str) -> None:
    with pytest.raises(EnvLoadError, match=f"env 'e': kind {kind} scores with .*not {metric}"):
        env_for(env_settings(kind, metric))


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(EnvLoadError, match="unknown kind 'chess'"):
        env_for(env_settings("chess", "exact"))


@pytest.mark.parametrize(
    ("kind", "metric", "fmt"),
    [("qa", "f1", "tag"), ("classify", "accuracy", "last_line"), ("math", "numeric", "raw")],
    ids=["qa", "classify", "math"],
)
def test_env_carries_name_and_answer_format(kind: str, metric: str, fmt: str) -> None:
    env = env_for(env_settings(kind, metric, name="trivia", answer_format=fmt))
    assert (env.name, env.answer_format) == ("trivia", fmt)


# -- python envs ------------------------------------------------------------------------------

USER_ENV = """
    class Env:
        def score(self, item, output):
            return 1.0 if item.answers[0] in output else 0.0

    class Tagged:
        answer_format = "tag"

        def score(self, item, output):
            return (float(output.endswith("</answer>")), 0.25)

    class Outer:
        class Inner:
            def score(self, item, output):
                return 0.5

    class Returns:
        value = None

        def score(self, item, output):
            return Returns.value

    class Raises:
        def score(self, item, output):
            raise RuntimeError("boom " + output)

    class NeedsArgs:
        def __init__(self, path):
            self.path = path

    class NoScore:
        pass

    class BadFormat:
        answer_format = "json"

        def score(self, item, output):
            return 1.0

    not_a_class = 3
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of user envs on sys.path, forgotten again after the test."""
    name = "skopt_test_user_envs"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(USER_ENV))
    (tmp_path / "skopt_test_broken.py").write_text("import no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in (name, "skopt_test_broken"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return name


def python_env(entry: str, **overrides: Any) -> Env:
    return env_for(env_settings("python", "exact", kind_args={"entry": entry}, **overrides))


def test_python_env_scores_through_the_user_class(user_module: str) -> None:
    env = python_env(f"{user_module}:Env", name="mine", answer_format="last_line")
    assert (env.name, env.answer_format) == ("mine", "last_line")
    # the user's score sees the whole output; skopt extracts the answer
    assert env.score(item("Paris"), "Paris, I think\nLyon") == Score(1.0, 1.0, "Lyon")
    assert env.score(item("Paris"), "Lyon") == Score(0.0, 0.0, "Lyon")


def test_python_env_answer_format_and_pair(user_module: str) -> None:
    env = python_env(f"{user_module}:Tagged", answer_format="raw")
    assert env.answer_format == "tag"  # the class's own format replaces the recipe's
    assert env.score(item("x"), "so <answer>x</answer>") == Score(1.0, 0.25, "x")


def test_python_env_dotted_attribute(user_module: str) -> None:
    env = python_env(f"{user_module}:Outer.Inner")
    assert env.score(item("x"), "y") == Score(1.0, 0.5, "y")  # hard rounds at 0.5


RESULTS = [
    ("bool", True, (1.0, 1.0)),
    ("int", 0, (0.0, 0.0)),
    ("fraction", 0.3, (0.0, 0.3)),
    ("above-one", 7, (1.0, 1.0)),
    ("below-zero", -2.5, (0.0, 0.0)),
    ("nan", float("nan"), (0.0, 0.0)),
    ("pair", (1, 0.75), (1.0, 0.75)),
    ("pair-clamped", (0.9, 1.5), (1.0, 1.0)),
]


@pytest.mark.parametrize(
    ("result", "expected"), [c[1:] for c in RESULTS], ids=[c[0] for c in RESULTS]
)
def test_python_env_results_are_brought_into_range(
    user_module: str, monkeypatch: pytest.MonkeyPatch, result: object, expected: tuple[float, float]
) -> None:
    env = python_env(f"{user_module}:Returns")
    monkeypatch.setattr(sys.modules[user_module].Returns, "value", result)
    score = env.score(item("x"), "out")
    assert ((score.hard, score.soft), score.error) == (expected, None)


@pytest.mark.parametrize(
    ("result", "reason"),
    [(None, "NoneType"), ("1.0", "str"), ((1.0, 0.5, 0.2), "tuple"), (("a", 1), "a str")],
    ids=["none", "string", "triple", "pair-of-text"],
)
def test_python_env_bad_results_score_zero_with_a_reason(
    user_module: str, monkeypatch: pytest.MonkeyPatch, result: object, reason: str
) -> None:
    env = python_env(f"{user_module}:Returns")
    monkeypatch.setattr(sys.modules[user_module].Returns, "value", result)
    score = env.score(item("x"), "out")
    assert (score.hard, score.soft, score.answer) == (0.0, 0.0, "out")
    assert score.error is not None and reason in score.error


def test_python_env_exception_in_score_is_recorded_not_raised(user_module: str) -> None:
    env = python_env(f"{user_module}:Raises")
    score = env.score(item("x"), "z" * 10_000)
    assert (score.hard, score.soft) == (0.0, 0.0)
    assert score.error is not None
    assert score.error.startswith(f"{user_module}:Raises: RuntimeError: boom zzz")
    assert len(score.error) < 400


LOAD_ERRORS = [
    ("missing-module", "no_such_pkg.envs:Env", r"cannot import no_such_pkg\.envs .*No module"),
    ("module-fails-on-import", "skopt_test_broken:Env", "cannot import skopt_test_broken"),
    ("missing-class", "{m}:Nope", "{m} has no attribute Nope"),
    ("missing-inner", "{m}:Outer.Nope", r"{m} has no attribute Outer\.Nope"),
    ("not-callable", "{m}:not_a_class", "3 is not a class"),
    ("needs-arguments", "{m}:NeedsArgs", r"creating it failed \(TypeError"),
    ("no-score", "{m}:NoScore", r"NoScore has no method score\(item, output\)"),
    ("bad-answer-format", "{m}:BadFormat", "answer_format = 'json'"),
    ("no-colon", "{m}.Env", "must read"),
    ("empty-class", "{m}:", "must read"),
]


@pytest.mark.parametrize(
    ("entry", "message"), [c[1:] for c in LOAD_ERRORS], ids=[c[0] for c in LOAD_ERRORS]
)
def test_python_env_load_errors_name_the_entry(user_module: str, entry: str, message: str) -> None:
    entry = entry.format(m=user_module)
    with pytest.raises(EnvLoadError) as caught:
        python_env(entry, name="mine")
    text = str(caught.value)
    assert text.startswith(f"env 'mine': python({entry!r})")
    assert caught.match(message.format(m=user_module))


# -- no output makes scoring raise --------------------------------------------------------------

OUTPUT_PIECES = st.sampled_from(
    [
        *("<answer>", "</answer>", "<ANSWER >", "\n", "\r\n", " ", "-", ",", ".", "/", "%", "e"),
        *("1", "1,234", "3/0", "9" * 400, "the", "Paris", "positive", "KQT42", "\u2212", "\u0663"),
        "\x00",
    ]
)
OUTPUTS = st.one_of(
    st.text(), st.lists(st.one_of(OUTPUT_PIECES, st.text(max_size=5)), max_size=30).map("".join)
)
GOLDS = st.lists(st.one_of(st.text(max_size=12), OUTPUT_PIECES), max_size=3).map(tuple)
ALL_ENVS = [
    env_settings(kind, metric, answer_format=fmt, labels=["positive", "-"], strict_format=strict)
    for strict in (False, True)
    for kind, metric in [
        ("qa", "exact"),
        ("qa", "f1"),
        ("qa", "contains"),
        ("classify", "accuracy"),
        ("math", "numeric"),
        ("synthetic", "exact"),
    ]
    for fmt in ("tag", "last_line", "raw")
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ALL_ENVS), OUTPUTS, GOLDS)
def test_scoring_never_raises(settings_: EnvSettings, output: str, golds: tuple[str, ...]) -> None:
    score = env_for(settings_).score(item(*golds), output)
    assert score.hard in (0.0, 1.0)
    assert 0.0 <= score.soft <= 1.0
    reading = read(output, settings_.answer_format, settings_.strict_format)
    assert score.followed == reading.followed
    if settings_.kind != "classify":  # which may find a label in the output
        assert score.answer == reading.answer


@pytest.mark.parametrize(
    "output",
    ["", "<answer>" * 50_000, "1," * 100_000, "9" * 100_000, "e" * 100_000, "\U0001f600" * 50_000],
    ids=["empty", "open-tags", "commas", "digits", "letters", "emoji"],
)
def test_scoring_huge_outputs(output: str) -> None:
    start = time.perf_counter()
    for settings_ in ALL_ENVS:
        score = env_for(settings_).score(item("positive", "1"), output)
        assert score.hard in (0.0, 1.0)
    assert time.perf_counter() - start < 10.0


USER_RESULTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.booleans(),
    st.tuples(st.floats(), st.floats()),
    st.none(),
    st.text(max_size=3),
    st.tuples(st.text(max_size=2), st.integers()),
    st.lists(st.floats(), max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["tag", "last_line", "raw"]), OUTPUTS, USER_RESULTS, st.booleans())
def test_python_env_never_raises(fmt: str, output: str, result: object, raises: bool) -> None:
    def user_score(item: Item, output: str) -> object:
        if raises:
            raise ValueError(output)
        return result

    score = PythonEnv("p", fmt, "m:E", user_score).score(item("x"), output)
    assert score.hard in (0.0, 1.0)
    assert 0.0 <= score.soft <= 1.0
    assert (score.error is not None) == (raises or not _is_score(result))


def _is_score(result: object) -> bool:
    def number(x: object) -> bool:
        return isinstance(x, int | float)

    return number(result) or (
        isinstance(result, tuple) and len(result) == 2 and all(map(number, result))
    )

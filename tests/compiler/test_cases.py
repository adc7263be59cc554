"""Golden cases: every recipe under cases/ compiled, its diagnostics or plan snapshotted.

- cases/bad/*.skopt must fail to compile; the rendered diagnostics are snapshotted (.txt).
- cases/warn/*.skopt must compile with warnings only; the rendered warnings are snapshotted.
- cases/ok/*.skopt must compile with no diagnostic at all; the plan is snapshotted (.json).
- SET_CASES: bad `--set` flags against cases/sets/recipe.skopt.

Each bad/warn case states its first diagnostic in its own first lines:

    # expect: [PATH:]LINE:COL MESSAGE
    # contains: TEXT      (optional, repeatable: a line the rendered output must contain)

The first `expect` line must be the first error (bad) or first warning (warn) in position
order, and its MESSAGE must occur in that diagnostic's message; further `expect` lines must
each match some diagnostic of the same severity. PATH defaults to the case file itself.
Helper files (imports, data, skills) live in subfolders, which are not globbed as cases.

Each case runs with the cases folder as the working directory and a relative recipe path, so
every path in the output is relative and the snapshots do not depend on the machine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from skopt.compiler.compile import Compiled, compile_recipe
from skopt.compiler.overrides import COMMAND_LINE
from skopt.grammar.source import Diagnostic, Severity, render_all

CASES = Path(__file__).parent / "cases"
EXPECT = re.compile(
    r"^#\s*expect:\s*(?:(?P<path>\S+?):)?(?P<line>\d+):(?P<col>\d+)\s+(?P<message>.+)$"
)
CONTAINS = re.compile(r"^#\s*contains:\s*(?P<text>.+)$")


@dataclass(frozen=True)
class Expect:
    path: str | None
    line: int
    col: int
    message: str


@dataclass(frozen=True)
class Case:
    path: Path
    expects: tuple[Expect, ...]
    contains: tuple[str, ...]


def read_case(path: Path) -> Case:
    expects: list[Expect] = []
    contains: list[str] = []
    # leading comment lines only; read as bytes so that the invalid-UTF-8 case loads too
    for raw in path.read_bytes().split(b"\n"):
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("#"):
            break
        if m := EXPECT.match(line):
            expects.append(Expect(m["path"], int(m["line"]), int(m["col"]), m["message"].strip()))
        elif m := CONTAINS.match(line):
            contains.append(m["text"].strip())
    return Case(path, tuple(expects), tuple(contains))


def cases(folder: str) -> list[object]:
    params: list[object] = []
    for path in sorted((CASES / folder).glob("*.skopt")):
        params.append(pytest.param(read_case(path), id=path.stem))
    return params


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """API key variables as the cases expect them, whatever the machine has set, and one home
    folder (a sleep source's default root is in it)."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SKOPT_TEST_UNSET_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SKOPT_TEST_SET_KEY", "not-a-real-key")
    monkeypatch.setenv("HOME", "/home/tester")


def compile_in(
    folder: Path, name: str, monkeypatch: pytest.MonkeyPatch, sets: Sequence[str] = ()
) -> Compiled:
    monkeypatch.chdir(folder)
    return compile_recipe(name, sets)


def check_expectations(
    expects: Sequence[Expect],
    default_path: str,
    diagnostics: Sequence[Diagnostic],
    severity: Severity,
    rendered: str,
) -> None:
    assert expects, f"{default_path}: add a first line '# expect: LINE:COL MESSAGE'"
    found = sorted((d for d in diagnostics if d.severity is severity), key=Diagnostic.sort_key)
    assert found, f"no {severity.value} at all:\n{rendered}"

    def matches(e: Expect, d: Diagnostic) -> bool:
        where = (d.span.path, d.span.line, d.span.col) == (e.path or default_path, e.line, e.col)
        return where and e.message in d.message

    first = expects[0]
    assert matches(first, found[0]), f"first {severity.value} is not {first}:\n{rendered}"
    for e in expects:
        assert f"--> {e.path or default_path}:{e.line}:{e.col}" in rendered
        assert any(matches(e, d) for d in found), f"no {severity.value} matches {e}:\n{rendered}"


@pytest.mark.parametrize("case", cases("bad"))
def test_bad_case(
    case: Case, snapshot_txt: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_in(case.path.parent, case.path.name, monkeypatch)
    rendered = render_all(result.diagnostics, result.sources)
    assert not result.ok, f"compiled without errors:\n{rendered}"
    assert result.plan is None
    check_expectations(case.expects, case.path.name, result.diagnostics, Severity.ERROR, rendered)
    for text in case.contains:
        assert text in rendered
    assert rendered == snapshot_txt


@pytest.mark.parametrize("case", cases("warn"))
def test_warn_case(
    case: Case, snapshot_txt: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_in(case.path.parent, case.path.name, monkeypatch)
    rendered = render_all(result.diagnostics, result.sources)
    assert result.ok, f"errors in a warn case:\n{rendered}"
    assert result.plan is not None
    check_expectations(case.expects, case.path.name, result.diagnostics, Severity.WARNING, rendered)
    for text in case.contains:
        assert text in rendered
    assert rendered == snapshot_txt


def stable_plan_json(result: Compiled) -> str:
    """The plan as JSON, minus what changes with every release: skopt's version and the hashes
    (which include the version and the prompt templates). Paths are already relative."""
    assert result.plan is not None
    data = json.loads(result.plan.model_dump_json())
    data["skopt_version"] = "<version>"
    data["hashes"] = {key: "<hash>" for key in data["hashes"]}
    return json.dumps(data, indent=2) + "\n"


@pytest.mark.parametrize("case", cases("ok"))
def test_ok_case(
    case: Case, snapshot_json: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_in(case.path.parent, case.path.name, monkeypatch)
    rendered = render_all(result.diagnostics, result.sources)
    assert result.diagnostics == [], f"an ok case must compile cleanly:\n{rendered}"
    assert result.plan is not None
    assert result.plan.recipe == case.path.name
    assert stable_plan_json(result) == snapshot_json


def test_imports_override_key_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values the importing file does not write survive from the imports, at every depth."""
    result = compile_in(CASES / "ok", "imports_override.skopt", monkeypatch)
    assert result.plan is not None, render_all(result.diagnostics, result.sources)
    models = {m.name: m for m in result.plan.models}
    assert (
        models["target"].temperature,
        models["target"].max_tokens,
        models["target"].concurrency,
    ) == (0.2, 512, 16)
    assert (models["optimizer"].provider, models["optimizer"].max_tokens) == ("sim", 1024)
    split = result.plan.envs[0].split
    assert split is not None
    assert (split.train, split.valid, split.test, split.seed) == (0.6, 0.2, 0.2, 9)
    assert result.plan.envs[0].limit == {"train": 20}
    assert (result.plan.budget.calls, result.plan.budget.time_s) == (20_000, 7200.0)
    assert sorted(result.sources) == [
        "imports_override.skopt",
        "lib/base.skopt",
        "lib/models.skopt",
    ]


def test_sweep_has_one_job_per_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    result = compile_in(CASES / "ok", "sweep.skopt", monkeypatch)
    assert result.plan is not None, render_all(result.diagnostics, result.sources)
    assert [j.name for j in result.plan.jobs] == [
        "lr = constant(4), batch_size = 15",
        "lr = constant(4), batch_size = 30",
        "lr = cosine(max = 8, min = 2), batch_size = 15",
        "lr = cosine(max = 8, min = 2), batch_size = 30",
    ]


# -- --set flags ------------------------------------------------------------------------------

# id: (flags, expected first error as "LINE:COL MESSAGE" on the <command line> source)
SET_CASES: dict[str, tuple[list[str], str]] = {
    "not_a_number": (["train.epochs=abc"], "1:20 expected a whole number, found 'abc'"),
    "no_such_block": (["nosuch.x=1"], "1:7 no block 'nosuch' to set"),
    "unknown_key": (["train.epochz=3"], "1:13 unknown key 'epochz' in train"),
    "out_of_range": (["train.epochs=0"], "1:20 0 is out of range"),
    "no_block": (["epochs=3"], "1:7 --set needs BLOCK.KEY"),
    "no_equals": (["train.epochs"], "1:7 expected --set KEY=VALUE"),
    "no_key": (["=3"], "1:7 expected --set KEY=VALUE"),
    # `--set budget.usd=$25` reaches skopt as `budget.usd=5`, `$5` as nothing: the shell ate `$…`
    "missing_unit": (["budget.usd=25"], "1:18 missing unit: --set budget.usd takes an amount"),
    "money_shortened": (["budget.usd=5"], "1:18 missing unit: --set budget.usd takes an amount"),
    "money_emptied": (["budget.usd="], "1:18 missing unit: --set budget.usd takes an amount"),
    "price_shortened": (
        ["m.price.input=00", "m.price.output=$1"],
        "1:21 missing unit: --set m.price.input takes an amount",
    ),
    "string_key_bad_quotes": (['m.name="unterminated'], "1:14 unterminated string"),
    "gate_test_split": (["train.gate.split=test"], "1:24 the gate may not use the test split"),
    "two_values": (["train.epochs=3 4"], "1:22 found a number '4'"),
    "bad_number": (["train.seed=1", "train.epochs=2ms"], "2:20 invalid number or quantity '2ms'"),
    "second_flag_bad": (
        ["train.seed=1", "train.epochs=x"],
        "2:20 expected a whole number, found 'x'",
    ),
    "block_as_key": (["train.gate=3"], "1:13 'gate' is a block"),
    "empty_value": (["train.seed=1", "train.epochs="], "2:20 --set train.epochs= needs a value"),
}


@pytest.mark.parametrize(
    ("flags", "expect"),
    [pytest.param(flags, expect, id=name) for name, (flags, expect) in SET_CASES.items()],
)
def test_bad_set(
    flags: list[str], expect: str, snapshot_txt: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = compile_in(CASES / "sets", "recipe.skopt", monkeypatch, flags)
    rendered = render_all(result.diagnostics, result.sources)
    assert not result.ok, f"compiled without errors:\n{rendered}"
    m = EXPECT.match(f"# expect: {expect}")
    assert m is not None
    e = Expect(COMMAND_LINE, int(m["line"]), int(m["col"]), m["message"])
    check_expectations([e], COMMAND_LINE, result.diagnostics, Severity.ERROR, rendered)
    assert rendered == snapshot_txt


def test_good_set_overrides_the_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    result = compile_in(
        CASES / "sets", "recipe.skopt", monkeypatch, ["train.epochs=3", "m.temperature=0.2"]
    )
    assert result.diagnostics == [], render_all(result.diagnostics, result.sources)
    assert result.plan is not None
    assert result.plan.sets == ["train.epochs=3", "m.temperature=0.2"]
    assert result.plan.jobs[0].train.epochs == 3
    assert result.plan.models[0].temperature == 0.2


def test_set_flag_labels_say_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    labels = {}
    for flag in ("=3", "train.epochs"):
        result = compile_in(CASES / "sets", "recipe.skopt", monkeypatch, [flag])
        (diagnostic,) = result.diagnostics
        labels[flag] = diagnostic.label
    assert labels == {"=3": "no key before '='", "train.epochs": "no '=' here"}


def test_set_money_help_has_the_shell_safe_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--set budget.usd=$25` arrives as `budget.usd=5`: the help shows the digits that
    arrived, with `$`, in single quotes."""
    helps = {}
    for flag in ("budget.usd=5", "budget.usd="):
        result = compile_in(CASES / "sets", "recipe.skopt", monkeypatch, [flag])
        (diagnostic,) = result.diagnostics
        assert "the shell ate '$…'" in diagnostic.help
        helps[flag] = diagnostic.help.rsplit(", ", 1)[-1]
    assert helps == {
        "budget.usd=5": "--set 'budget.usd=$5'",
        "budget.usd=": "--set 'budget.usd=$25'",
    }


def test_set_strings_and_paths_need_no_quotes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "other.md").write_text("Be brief.\n")
    recipe = (CASES / "sets" / "recipe.skopt").read_text()
    (tmp_path / "recipe.skopt").write_text(recipe + 'model o { provider = openai, name = "x" }\n')
    flags = [
        "o.base_url=http://127.0.0.1:8000/v1",
        "train.skill=skills/other.md",
        'o.api_key_env="MY KEY"',  # quoting stays possible
        "train.out=runs/{recipe}:x",
    ]
    result = compile_in(tmp_path, "recipe.skopt", monkeypatch, flags)
    assert result.diagnostics == [], render_all(result.diagnostics, result.sources)
    assert result.plan is not None
    model = result.plan.models[1]
    assert (model.base_url, model.api_key_env) == ("http://127.0.0.1:8000/v1", "MY KEY")
    train = result.plan.jobs[0].train
    assert (train.skill, train.out) == ("skills/other.md", "runs/{recipe}:x")


def test_set_a_word_where_a_path_or_a_word_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """`skill` takes a path or `empty`: a bare `empty` is the word, as in source."""
    result = compile_in(CASES / "sets", "recipe.skopt", monkeypatch, ["train.skill=empty"])
    assert result.diagnostics == [], render_all(result.diagnostics, result.sources)
    assert result.plan is not None and result.plan.jobs[0].train.skill is None


def test_case_folders_are_not_empty() -> None:
    assert len(cases("bad")) >= 30
    assert len(cases("warn")) >= 4
    assert len(cases("ok")) >= 5

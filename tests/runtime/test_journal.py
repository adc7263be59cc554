"""The journal (runtime/events.py, runtime/journal.py): a run's every fact, typed and versioned,
is in `events.jsonl` as it happened, and every reader reads it back.

A demo run journals every kind of a training run, each with the schema version; a budget stop
and a failed run say how they ended; records are frozen; a torn or foreign line is counted and
skipped, never fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from skopt.runtime.artifacts import RunFolder
from skopt.runtime.events import SCHEMA_VERSION, BudgetStop, RunFinished, RunStarted
from skopt.runtime.journal import read_journal
from tests.conftest import RECIPES
from tests.runtime.conftest import KEY
from tests.runtime.server import ScriptedServer, json_reply
from tests.runtime.test_run_openai import recipe
from tests.ui.invoke import run

TRAINING_KINDS = {
    "run_started", "run_finished", "phase_started", "phase_finished", "call", "optimizer_answer",
    "edits_checked", "edits_proposed", "candidate_built", "baseline", "gate_decided",
    "step_finished", "epoch_boundary", "final_test",
}  # fmt: skip


def lines(folder: Path) -> list[dict[str, object]]:
    text = (folder / "events.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_a_run_journals_every_kind_with_its_schema_version(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run("run", str(RECIPES / "demo.skopt"), "--out", str(out), "--quiet")[0] == 0
    raw = lines(out)
    assert {e["kind"] for e in raw} == TRAINING_KINDS
    assert all(e["v"] == SCHEMA_VERSION and isinstance(e["at"], float) for e in raw)
    times = [e["at"] for e in raw]
    assert times == sorted(times)  # appended as it happened

    journal = read_journal(RunFolder(out).events)
    assert len(journal.events) == len(raw) and journal.unreadable == 0
    started, ended = journal.events[0], journal.ended
    assert isinstance(started, RunStarted) and not started.resumed
    assert ended is not None and ended.outcome == "done"
    with pytest.raises(pydantic.ValidationError):
        ended.outcome = "failed"  # type: ignore[misc]  # a record is frozen


def test_a_budget_stop_is_journaled_as_one(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = run("run", str(RECIPES / "demo.skopt"), "--set", "budget.calls=300", "--out", str(out))
    assert code[0] == 3
    journal = read_journal(RunFolder(out).events)
    stop = journal.last(BudgetStop)
    assert stop is not None and stop.limit == "calls"
    assert journal.ended is not None and journal.ended.outcome == "budget"


@pytest.mark.usefixtures("key")
def test_a_failed_run_says_so_and_why(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.script(*([json_reply(400, "the model is not allowed here")] * 50))
        path = recipe(tmp_path, server.openai_url)
        code, _, err = run("run", str(path), "--out", str(tmp_path / "run"), "--quiet")
    assert code == 1 and "not allowed here" in err
    journal = read_journal(RunFolder(tmp_path / "run").events)
    ended = journal.ended
    assert isinstance(ended, RunFinished) and ended.outcome == "failed"
    assert "not allowed here" in ended.detail and KEY not in ended.detail
    assert any(not c.ok for c in journal.calls)


def test_a_torn_or_foreign_line_is_counted_and_skipped(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run("run", str(RECIPES / "demo.skopt"), "--out", str(out), "--quiet")[0] == 0
    whole = read_journal(RunFolder(out).events)
    with (out / "events.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"v": 1, "kind": "from_the_future", "at": 1.0}\n{"v": 1, "kind": "ca')
    again = read_journal(RunFolder(out).events)
    assert again.unreadable == 2 and len(again.events) == len(whole.events)
    assert run("report", str(out))[0] == 0  # a reader carries on

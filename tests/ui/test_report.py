"""`skopt report`: scores, gate decisions and plan against actual of finished, stopped and
unstarted runs; report.md; JSON; flags on actuals outside the plan; folders that are not runs."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import Plan
from skopt.compiler.saved import plan_text
from skopt.runtime.claim import claim
from skopt.runtime.events import RunFinished
from tests.conftest import RECIPES, call_events
from tests.ui.invoke import DEMO, run


def events(folder: Path) -> list[dict[str, Any]]:
    return call_events(folder)


def as_json(folder: Path) -> dict[str, Any]:
    code, out, err = run("report", str(folder), "--json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture
def copy(finished: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "run"))


def test_scores_and_decisions_agree_with_the_summary(copy: Path) -> None:
    summary = json.loads((copy / "summary.json").read_text())
    report = as_json(copy)
    scores = report["scores"]
    assert report["status"] == "finished" and report["simulation"] is True
    assert scores["gate_split"] == "valid"
    assert scores["initial"] == summary["gate"]["initial"]
    assert scores["best"] == summary["gate"]["best"]
    assert scores["final"] == summary["gate"]["final"]
    assert scores["test_initial"] == summary["test"]["initial"]
    assert scores["test_best"] == summary["test"]["best"]
    assert scores["gap"] == pytest.approx(summary["gate"]["best"] - summary["test"]["best"])
    assert (report["accepted"], report["rejected"]) == (summary["accepted"], summary["rejected"])
    assert [d["step"] for d in report["decisions"]] == [h["step"] for h in summary["history"]]
    for decision, entry in zip(report["decisions"], summary["history"], strict=True):
        assert decision["accepted"] == entry["decision"]["accepted"]
        assert decision["before"] == entry["decision"].get("before")
        assert decision["after"] == entry["decision"].get("after")
        assert decision["reason"] == entry["decision"]["reason"]


def test_plan_against_actual_counts_every_call_event(copy: Path) -> None:
    journal = events(copy)
    report = as_json(copy)
    usage = {(u["phase"], u["role"]): u for u in report["usage"]}
    assert Counter({k: u["calls"] for k, u in usage.items() if u["calls"]}) == Counter(
        (e["phase"], e["role"]) for e in journal
    )
    hits = Counter((e["phase"], e["role"]) for e in journal if e["cache_hit"])
    assert hits  # the demo answers some rollouts from the cache: shown apart
    for key, count in hits.items():
        assert usage[key]["cache_hits"] == count
    assert sum(u["input_tokens"] for u in usage.values()) == sum(e["input_tokens"] for e in journal)
    plan = json.loads((copy / "plan.json").read_text())
    for total in plan["jobs"][0]["totals"]:
        line = usage[(total["phase"], total["role"])]
        assert line["plan_calls"] == total["calls"]
        assert "calls" not in line["outside"]  # SPEC §4: actual calls fall inside the plan
        assert line["plan_usd"] == {"min": 0.0, "expected": 0.0, "max": 0.0}  # sim is free


def test_text_output_and_report_md(copy: Path) -> None:
    summary = json.loads((copy / "summary.json").read_text())
    code, text, _ = run("report", str(copy))
    assert code == 0
    assert text.splitlines()[0].endswith("(simulation)")
    assert f"finished · 9 of 9 steps · {summary['accepted']} accepted" in text
    gate, test = summary["gate"], summary["test"]
    assert f"gate (valid)  initial {gate['initial']:.3f} · best {gate['best']:.3f}" in text
    assert f"test          initial {test['initial']:.3f} · best {test['best']:.3f}" in text
    assert f"= {gate['best'] - test['best']:+.3f}" in text
    first = summary["history"][0]["decision"]
    assert f"{first['before']:.3f} → {first['after']:.3f}" in text and first["reason"] in text
    assert "no candidate" in text  # steps without a candidate are listed too
    assert "$0: every model of this run is free" in text
    assert (copy / "report.md").read_text() == f"```text\n{text.rstrip(chr(10))}\n```\n"


def test_actuals_outside_the_plan_are_flagged(copy: Path) -> None:
    extra = {
        "cache_hit": False,
        "error": "",
        "input_tokens": 10,
        "kind": "call",
        "latency_s": 0.0,
        "model": "sim",
        "ok": True,
        "output_tokens": 1,
        "retries": 0,
        "usd": 0.0,
    }
    with (copy / "events.jsonl").open("a") as f:
        for _ in range(200):
            f.write(json.dumps(extra | {"phase": "reflect", "role": "optimizer"}) + "\n")
        f.write(json.dumps(extra | {"phase": "gate", "role": "optimizer"}) + "\n")
        f.write('{"cache_hit": fal')  # a line cut by a kill
    report = as_json(copy)
    usage = {(u["phase"], u["role"]): u for u in report["usage"]}
    assert "calls" in usage[("reflect", "optimizer")]["outside"]
    assert usage[("gate", "optimizer")]["plan_calls"] is None
    assert usage[("gate", "optimizer")]["outside"] == ["calls"]
    assert report["unreadable_events"] == 1
    _, text, _ = run("report", str(copy))
    rows = [line.split() for line in text.splitlines()]
    reflect = next(row for row in rows if row[:2] == ["reflect", "optimizer"])
    assert reflect[2] == f"{usage[('reflect', 'optimizer')]['calls']}!"
    assert "outside the plan: calls of reflect/optimizer, gate/optimizer" in text
    assert "not planned" in text and "1 journal lines could not be read" in text


def test_a_run_stopped_by_the_budget(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, _ = run("run", DEMO, "--out", str(out), "--quiet", "--set", "budget.calls=300")
    assert code == 3
    report = as_json(out)
    state = json.loads((out / "state.json").read_text())
    assert report["status"] == "budget"
    assert report["ended"].startswith("the calls budget cannot pay for step ")
    assert report["steps_done"] == len(state["history"]) < report["steps_planned"]
    assert report["scores"]["best"] == state["best_score"]
    assert report["scores"]["test_best"] is not None and report["scores"]["gap"] is not None
    for line in report["usage"]:
        assert "calls" not in line["outside"]  # below a minimum is no flag while unfinished
    _, text, _ = run("report", str(out))
    assert "stopped by the budget (the calls budget cannot pay for step" in text
    assert "the test was scored" in text and "not scored" not in text
    assert "unfinished: only above the maximum is flagged" in text


def test_an_interrupted_run_is_told_from_a_budget_stop(finished: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    (copy / "summary.json").unlink()
    with (copy / "events.jsonl").open("a") as f:
        f.write(RunFinished(outcome="interrupted").model_dump_json() + "\n")
    report = as_json(copy)
    assert report["status"] == "interrupted" and report["ended"] == ""
    _, text, _ = run("report", str(copy))
    assert "interrupted (skopt run --resume continues it)" in text


def new_run_folder(folder: Path, plan: Plan) -> Path:
    """A run folder as `skopt run` leaves it before its first step: marker and plan."""
    claim(folder, "run")
    (folder / "plan.json").write_text(plan_text(plan, folder / "plan.json"))
    return folder


def test_a_run_stopped_before_its_first_step(tmp_path: Path) -> None:
    result = compile_recipe(DEMO)
    assert result.plan is not None
    folder = new_run_folder(tmp_path / "run", result.plan)
    report = as_json(folder)
    assert report["status"] == "not started" and report["decisions"] == []
    assert report["scores"]["initial"] is None
    assert all(u["calls"] == 0 for u in report["usage"])
    _, text, _ = run("report", str(folder))
    assert "not started" in text and "initial — · best —" in text


def test_a_priced_run_shows_dollars_against_the_plan(tmp_path: Path) -> None:
    result = compile_recipe(str(RECIPES / "openai.skopt"))
    assert result.plan is not None
    folder = new_run_folder(tmp_path / "run", result.plan)
    call = {"cache_hit": False, "error": "", "kind": "call", "latency_s": 0.1, "retries": 0}
    lines = [
        call
        | {"phase": "baseline", "role": "target", "model": "gpt-mini", "ok": True}
        | {"input_tokens": 40, "output_tokens": 5, "usd": 0.25},  # far above the plan's max
        call
        | {"phase": "baseline", "role": "target", "model": "gpt-mini", "ok": False}
        | {"input_tokens": 0, "output_tokens": 0, "usd": 0.0, "error": "HTTP 500"},
    ]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    report = as_json(folder)
    baseline = next(u for u in report["usage"] if u["phase"] == "baseline")
    assert (baseline["calls"], baseline["failed"], baseline["usd"]) == (2, 1, 0.25)
    assert baseline["plan_usd"]["max"] < 0.25 and "usd" in baseline["outside"]
    _, text, _ = run("report", str(folder))
    assert "plan min / expected / max" in text and "$0.2500!" in text


KINDS = ["missing", "a file", "empty", "only a saved plan", "broken plan"]


@pytest.mark.parametrize("make", KINDS)
def test_a_folder_that_is_not_a_run(copy: Path, tmp_path: Path, make: str) -> None:
    folder = {"missing": tmp_path / "nowhere", "empty": tmp_path / "empty"}.get(make, copy)
    if make == "a file":
        folder = tmp_path / "notes.txt"
        folder.write_text("mine\n")
    if make in ("empty", "only a saved plan"):
        folder = tmp_path / "empty"
        folder.mkdir()
    if make == "only a saved plan":
        assert run("plan", DEMO, "-o", str(folder / "plan.json"))[0] == 0
    if make == "broken plan":
        (folder / "plan.json").write_text("{}")
    before = sorted(folder.rglob("*")) if folder.is_dir() else []
    code, out, err = run("report", str(folder))
    assert code == 2 and out == ""
    expected = {
        "missing": "nowhere is not there: not a run folder",
        "a file": "notes.txt' is a file",
        "empty": "is not a run folder (skopt run marks its folders)",
        "only a saved plan": "it holds a plan: run it with skopt run",
        "broken plan": "is not a plan skopt can read",
    }[make]
    assert expected in err and "Traceback" not in err
    assert (sorted(folder.rglob("*")) if folder.is_dir() else []) == before  # nothing written

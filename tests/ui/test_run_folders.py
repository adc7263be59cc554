"""Run folders are safe: a run never writes into a folder that holds anything, never shares a
folder with another run, and `--resume` and `report` refuse what is not a run folder (or one
in use) with a sentence, exit 2, and write nothing."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.runtime import launch as launching
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.claim import claim, locked
from skopt.runtime.exits import Exit, Outcome
from skopt.runtime.journal import read_journal
from tests.conftest import RECIPES
from tests.ui.invoke import DEMO, run


def listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_run_never_overwrites_a_users_file(tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "best_skill.md").write_text("MINE\n")
    code, out, err = run("run", DEMO, "--out", str(keep), "--quiet")
    assert code == 2 and out == ""
    assert "is not empty" in err and "choose another --out" in err and "Traceback" not in err
    assert listing(keep) == {"best_skill.md": b"MINE\n"}


def test_a_second_run_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run("run", DEMO, "--out", str(out), "--quiet")[0] == 0
    before = listing(out)
    for recipe in (DEMO, str(RECIPES / "sweep.skopt")):
        code, _, err = run("run", recipe, "--out", str(out), "--quiet")
        assert code == 2
        assert f"already holds a run: continue it with skopt run --resume {out}" in err
    assert listing(out) == before


def test_an_empty_out_folder_is_used(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert run("run", DEMO, "--out", str(out), "--quiet")[0] == 0
    assert (out / "summary.json").is_file()


def test_runs_started_at_the_same_instant_get_folders_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both runs are given the same default name (the same second): each claims its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(launching.time, "strftime", lambda _: "20260101-000000")
    result = compile_recipe(DEMO)
    assert result.plan is not None
    plan = result.plan
    outcomes: list[Outcome] = []
    barrier = threading.Barrier(2)

    def one() -> None:
        root, unique = launching.destination(plan, None)
        barrier.wait()
        outcomes.append(asyncio.run(launching.launch_job(plan, root, unique)))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(o.exit for o in outcomes) == [Exit.OK, Exit.OK]
    folders = sorted(p.name for p in (tmp_path / "runs" / "demo").iterdir())
    assert folders == ["20260101-000000", "20260101-000000-2"]
    for name in folders:
        journal = read_journal(tmp_path / "runs" / "demo" / name / "events.jsonl")
        assert [e.kind for e in journal.events if e.kind.startswith("run_")] == [
            "run_started",
            "run_finished",
        ]
        summary = json.loads((tmp_path / "runs" / "demo" / name / "summary.json").read_text())
        assert summary["steps"] == 9


@pytest.mark.parametrize("kind", ["missing", "empty", "a saved plan", "a user's folder"])
def test_resume_refuses_what_is_not_a_run_folder(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "here"
    if kind != "missing":
        folder.mkdir()
    if kind == "a saved plan":
        assert run("plan", DEMO, "-o", str(folder / "plan.json"))[0] == 0
    if kind == "a user's folder":
        (folder / "skills").mkdir()
        (folder / "skills" / "mine.md").write_text("mine\n")
    before = listing(folder) if folder.exists() else None
    code, out, err = run("run", "--resume", str(folder))
    assert code == 2 and out == "" and "Traceback" not in err
    assert "not a run folder" in err
    if kind == "a saved plan":
        assert f"run it with skopt run {folder / 'plan.json'}" in err
    assert (listing(folder) if folder.exists() else None) == before


def test_a_folder_in_use_is_refused_and_its_holder_named(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run("run", DEMO, "--out", str(out), "--quiet")[0] == 0
    with locked(RunFolder(out)):  # as if another skopt process were working in it
        code, _, err = run("run", "--resume", str(out))
    assert code == 2
    assert f"in use by another skopt process (pid {os.getpid()})" in err
    assert run("run", "--resume", str(out))[0] == 0  # the lock goes with its holder


def test_claim_is_refused_when_the_marker_exists(tmp_path: Path) -> None:
    claim(tmp_path / "a", "run")
    with pytest.raises(Exception, match="already holds a run"):
        claim(tmp_path / "a", "run")
    assert claim(tmp_path / "a", "run", unique=True).root == tmp_path / "a-2"

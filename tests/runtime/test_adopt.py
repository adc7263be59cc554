"""Adopting a run's changes into the live skill file: only the accepted ones, after a backup,
never twice, never over a live file they no longer fit, and never half-written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from skopt.runtime.adopt import AdoptRefused, adopt, preview, proposal, receipts
from skopt.runtime.changes import replay
from tests.conftest import demo_project
from tests.ui.invoke import run

LIVE = Path("skills/demo.md")


SEED_5 = ("--set", "train.seed=5", "--set", "train.gate.tries=1")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo project (recipe, imported recipe, live skill) with one finished run in `run/`."""
    project = demo_project(tmp_path_factory.mktemp("adopt") / "project")
    here = Path.cwd()
    os.chdir(project)
    try:
        # The demo's seed 5, one candidate a step, accepts changes of every kind these tests
        # need: adds, a replace (`c.old`) and a slow update's guidance.
        code, _, err = run("run", "demo.skopt", "--out", "run", "--quiet", *SEED_5)
    finally:
        os.chdir(here)
    assert code == 0, err
    return project


@pytest.fixture
def project(finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the finished project, as the current folder."""
    copy = tmp_path / "project"
    shutil.copytree(finished, copy)
    monkeypatch.chdir(copy)
    return copy


def test_all_changes_replayed_make_the_best_skill(project: Path) -> None:
    p = proposal(Path("run"))
    assert p.live == str(LIVE) and len(p.changes) >= 3
    assert p.initial == LIVE.read_text() and p.best == Path("run/best_skill.md").read_text()
    text: str | None = p.initial
    for change in p.changes:
        assert text is not None
        text = replay(text, change.block)
    assert text == p.best
    sources = {c.source for c in p.changes}
    assert any(s.startswith("slow update") for s in sources)  # the demo's guidance is one
    assert all(c.fixed or c.source.startswith("slow") for c in p.changes)  # the gate's evidence


def test_adopt_all_writes_the_best_skill_with_a_backup_and_a_receipt(project: Path) -> None:
    initial = LIVE.read_bytes()
    numbers = [c.number for c in proposal(Path("run")).changes]
    done = adopt(Path("run"), numbers)
    assert LIVE.read_bytes() == Path("run/best_skill.md").read_bytes()
    assert Path(done.backup).read_bytes() == initial
    (kept,) = receipts(Path("run"))
    assert kept == done and kept.changes == numbers and kept.live == str(LIVE)
    with pytest.raises(AdoptRefused, match="was adopted before"):
        adopt(Path("run"), [numbers[0]])


def test_adopt_some_writes_only_those(project: Path) -> None:
    p = proposal(Path("run"))
    chosen = [p.changes[0].number, p.changes[1].number]
    expected, problems = preview(p, chosen, p.initial)
    assert not problems
    adopt(Path("run"), chosen)
    assert LIVE.read_text() == expected != p.best
    rest = [c.number for c in p.changes if c.number not in chosen]
    adopt(Path("run"), rest)  # the others later, on the file as it is now
    assert LIVE.read_text() == p.best
    assert [a.changes for a in receipts(Path("run"))] == [chosen, rest]


def test_a_change_that_needs_one_left_out_is_refused(project: Path) -> None:
    p = proposal(Path("run"))
    for change in p.changes:
        others = [c.number for c in p.changes if c.number != change.number]
        problems = preview(p, others, p.initial)[1]
        needing = [m for m in problems if f"needs change {change.number}," in m]
        if needing:
            break
    else:
        raise AssertionError("the demo run has a change that needs an earlier one")
    before = LIVE.read_bytes()
    with pytest.raises(AdoptRefused, match=f"needs change {change.number}, which is not accepted"):
        adopt(Path("run"), others)
    assert LIVE.read_bytes() == before
    assert not Path("run/adopt").exists() and receipts(Path("run")) == []


def test_a_live_file_edited_elsewhere_still_takes_the_changes(project: Path) -> None:
    LIVE.write_text("<!-- ours -->\n" + LIVE.read_text())
    p = proposal(Path("run"))
    adopt(Path("run"), [c.number for c in p.changes])
    assert LIVE.read_text() == "<!-- ours -->\n" + p.best


def test_a_live_file_changed_under_the_changes_is_refused(project: Path) -> None:
    p = proposal(Path("run"))
    LIVE.write_text("# Someone else's skill\n\nNothing in common.\n")
    before = LIVE.read_bytes()
    with pytest.raises(AdoptRefused, match="it changed since the run started"):
        adopt(Path("run"), [c.number for c in p.changes if c.old])
    assert LIVE.read_bytes() == before and receipts(Path("run")) == []


def test_nothing_to_adopt_and_unknown_numbers(project: Path) -> None:
    n = len(proposal(Path("run")).changes)
    with pytest.raises(AdoptRefused, match=f"no change {n + 1}: this run proposes 1 to {n}"):
        adopt(Path("run"), [n + 1])
    with pytest.raises(AdoptRefused, match="no change accepted"):
        adopt(Path("run"), [])


# `skopt adopt --all`, killed by SIGKILL at the rename that replaces the live file (before it, or
# right after it, before the receipt is written).
KILLED = """
import os, signal, sys
from skopt.ui.cli import main

when, replace = sys.argv[1], os.replace

def replacing(source, target, *args, **kwargs):
    live = os.fspath(target).endswith("demo.md")
    if live and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    replace(source, target, *args, **kwargs)
    if live and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)

os.replace = replacing
sys.argv = ["skopt", "adopt", "run", "--all"]
main()
"""


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_kill_during_adopt_leaves_the_old_or_the_new_file(project: Path, when: str) -> None:
    initial, best = LIVE.read_bytes(), Path("run/best_skill.md").read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILLED, when], capture_output=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    assert LIVE.read_bytes() == (initial if when == "before" else best)
    assert not Path("run/adopted.json").exists()
    code, _, err = run("adopt", "run", "--all")  # finishes what was stopped
    assert code == 0, err
    assert LIVE.read_bytes() == best
    assert len(json.loads(Path("run/adopted.json").read_text())["adoptions"]) == 1


def test_adopt_on_the_command_line(project: Path) -> None:
    code, out, _ = run("adopt", "run")
    assert code == 0 and "adopt with --all or --edit N" in out and "  1  step 1" in out
    assert not Path("run/adopted.json").exists()
    code, out, _ = run("adopt", "run", "--edit", "1")
    assert code == 0 and "adopted change 1 into skills/demo.md" in out
    code, _, err = run("adopt", "run", "--edit", "1")
    assert code == 2 and "change 1 was adopted before" in err
    code, _, err = run("adopt", "nowhere", "--all")
    assert code == 2 and "not a run folder" in err


def test_adopt_on_the_command_line_refuses_a_live_file_changed_under_it(project: Path) -> None:
    numbers = [f"--edit={c.number}" for c in proposal(Path("run")).changes if c.old]
    LIVE.write_text("# Someone else's skill\n\nNothing in common.\n")
    code, out, err = run("adopt", "run", *numbers)
    assert code == 2 and "it changed since the run started" in err and out == ""
    assert LIVE.read_text() == "# Someone else's skill\n\nNothing in common.\n"
    assert not Path("run/adopted.json").exists()

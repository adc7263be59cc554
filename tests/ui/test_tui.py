"""The terminal UI, driven with Textual's Pilot: the run monitor (finished, in progress, followed
live), a sweep's table, and per-change review with adopt; SVG snapshots of each screen."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.backends.sim import SimBackend
from skopt.runtime.changes import replay
from skopt.runtime.claim import locked
from skopt.runtime.exits import Exit
from skopt.runtime.journal import read_journal
from skopt.runtime.launch import Background, launch_job
from skopt.runtime.request import Completion, Params, Request
from skopt.ui.tui.app import SkoptApp, live_app, monitor_app, review_app
from skopt.ui.tui.help import HelpScreen
from skopt.ui.tui.monitor import MonitorScreen
from skopt.ui.tui.review import DetailsScreen, ReviewScreen
from skopt.ui.tui.sources import FolderSource, PushSource
from skopt.ui.tui.sweep import SweepScreen
from tests.conftest import demo_project
from tests.ui.invoke import DEMO, run

SIZE = (120, 40)
EPOCH = 1_800_000_000.0  # the journal's times, made fixed for snapshots
NOW = EPOCH + 400

# The demo run the review screens show: seed 5, one candidate a step.
SEED_5 = ("--set", "train.seed=5", "--set", "train.gate.tries=1")


def fixed_times(folder: Path) -> None:
    """The journal's `at` made one second per event from EPOCH (a snapshot shows durations)."""
    journal = folder / "events.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    journal.write_text(
        "".join(json.dumps(e | {"at": EPOCH + i}) + "\n" for i, e in enumerate(events))
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo project with a finished run (`run/`) and a finished sweep (`sweep/`)."""
    project = demo_project(tmp_path_factory.mktemp("tui") / "project")
    with contextlib.chdir(project):
        # seed 5, one candidate a step: a run whose best skill takes changes of every kind (an
        # add, a replace, a slow update's guidance) for the review screen
        assert run("run", "demo.skopt", "--out", "run", "--quiet", *SEED_5)[0] == 0
        assert run("run", "sweep.skopt", "--out", "sweep", "--quiet", "--parallel", "4")[0] == 0
    fixed_times(project / "run")
    for cell in (project / "sweep" / "cells").iterdir():
        fixed_times(cell)
    return project


@pytest.fixture
def project(runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(runs, copy)
    monkeypatch.chdir(copy)
    return copy


def drive(app: SkoptApp, script: Callable[[Any], Any]) -> Any:
    async def go() -> Any:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            return await script(pilot)

    return asyncio.run(go())


# -- the monitor ------------------------------------------------------------------------------


def test_the_monitor_shows_a_finished_run_and_every_key_works(project: Path) -> None:
    app = monitor_app(Path("run"), clock=lambda: NOW)

    async def script(pilot: Any) -> None:
        screen = app.screen
        assert isinstance(screen, MonitorScreen) and screen.view is not None
        view = screen.view
        assert view.status == "finished" and len(view.results) == view.steps == 9
        assert view.test is not None and view.skill == Path("run/best_skill.md").read_text()
        head = str(screen.query_one("#head").render())
        assert "finished" in head and "9 of 9 steps done" in head
        tabs = ("decisions", "skill", "previous", "initial", "optimizer")
        for key, tab in zip("12345", tabs, strict=True):
            await pilot.press(key)
            assert screen.query_one("TabbedContent").active == tab  # type: ignore[attr-defined]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("ctrl+c")  # as q

    drive(app, script)
    assert app.return_code == 0


def test_snapshot_of_a_finished_run(project: Path, snap_compare: Any) -> None:
    assert snap_compare(monitor_app(Path("run"), clock=lambda: NOW), terminal_size=SIZE)


def test_snapshot_of_a_run_in_progress(project: Path, snap_compare: Any) -> None:
    """Half of the journal, and a process holding the folder's lock: running, with an ETA."""
    journal = Path("run/events.jsonl")
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[: len(lines) // 2]))
    half = EPOCH + len(lines) // 2
    with locked(RunFolder(Path("run"))):
        app = monitor_app(Path("run"), clock=lambda: half + 3)
        assert snap_compare(app, terminal_size=SIZE)


def test_the_monitor_follows_a_run_live(project: Path, slow_sim: None) -> None:
    """A simulator run writes its journal while the monitor follows it: the UI ends up showing
    the last step and the final test."""
    plan = compile_recipe("demo.skopt").plan
    assert plan is not None
    runner = Background(lambda: launch_job(plan, Path("live"), False))
    runner.start()
    while not Path("live/plan.json").exists():
        time.sleep(0.01)
    app = SkoptApp(MonitorScreen(FolderSource(Path("live"))))

    async def script(pilot: Any) -> list[int]:
        seen = []
        screen = app.screen
        while screen.view is None or screen.view.test is None:
            await pilot.pause(0.1)
            seen.append(len(screen.view.results) if screen.view else 0)
        assert screen.view.status in ("finished", "running")
        await pilot.pause(0.5)
        assert screen.view.status == "finished" and len(screen.view.results) == 9
        return seen

    seen = drive(app, script)
    assert runner.result().exit is Exit.OK
    assert len(set(seen)) > 2  # it saw the steps come, not just the end


@pytest.fixture
def slow_sim(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every simulated call takes 30 ms, so that a run lasts long enough to be watched (a few
    seconds)."""
    original = SimBackend.complete

    async def complete(self: SimBackend, request: Request, params: Params) -> Completion:
        await asyncio.sleep(0.03)
        return await original(self, request, params)

    monkeypatch.setattr(SimBackend, "complete", complete)


def test_q_stops_a_run_of_this_process_resumably(
    project: Path, slow_sim: None, tmp_path: Path
) -> None:
    """`skopt run --tui`: q stops the run as Ctrl-C does; --resume then ends it exactly."""
    plan = compile_recipe("demo.skopt", ["train.seed=5", "train.gate.tries=1"]).plan  # as `run/`
    assert plan is not None
    source = PushSource(plan)
    runner = Background(lambda: launch_job(plan, Path("cut"), False, lambda *_: source))
    runner.start()
    app = live_app(plan, {"": source}, stop=runner.stop)

    async def script(pilot: Any) -> None:
        while len(source.journal.steps) < 2:
            await pilot.pause(0.05)
        await pilot.press("q")

    drive(app, script)
    with pytest.raises(asyncio.CancelledError):
        runner.result()
    journal = read_journal(Path("cut/events.jsonl"))
    assert journal.ended is not None and journal.ended.outcome == "interrupted"
    assert run("run", "--resume", "cut", "--quiet")[0] == 0
    assert Path("cut/best_skill.md").read_text() == Path("run/best_skill.md").read_text()
    assert Path("cut/summary.json").read_text() == Path("run/summary.json").read_text()


# -- a sweep ----------------------------------------------------------------------------------


def test_the_sweep_table_opens_a_cell(project: Path) -> None:
    app = monitor_app(Path("sweep"), clock=lambda: NOW)

    async def script(pilot: Any) -> None:
        sweep = app.screen
        assert isinstance(sweep, SweepScreen) and len(sweep.cells) == 4
        await pilot.press("j", "enter")
        assert isinstance(app.screen, MonitorScreen)
        assert app.screen.source.folder.root == Path("sweep/cells/02")  # type: ignore[attr-defined]
        await pilot.press("q")
        assert app.screen is sweep
        await pilot.press("q")

    drive(app, script)
    assert app.return_code == 0


def test_snapshot_of_a_sweep(project: Path, snap_compare: Any) -> None:
    assert snap_compare(monitor_app(Path("sweep"), clock=lambda: NOW), terminal_size=SIZE)


# -- review -----------------------------------------------------------------------------------


def test_review_keys_and_adopt(project: Path) -> None:
    live = Path("skills/demo.md")
    initial = live.read_bytes()
    app = review_app(Path("run"))

    async def script(pilot: Any) -> None:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        everything = {c.number for c in screen.proposal.changes}
        assert screen.accepted == everything
        await pilot.press("r")  # reject 1
        assert screen.accepted == everything - {1}
        await pilot.press("space")  # toggle it back
        assert screen.accepted == everything
        await pilot.press("j", "j", "r", "k", "a")  # reject 3; on 2, accept (already)
        assert screen.accepted == everything - {3}
        await pilot.press("j", "space")  # toggle 3 back in
        assert screen.accepted == everything
        await pilot.press("enter")
        assert isinstance(app.screen, DetailsScreen) and app.screen.change.number == 3
        await pilot.press("escape")
        await pilot.press("k", "k", "r")  # only 1 stays out
        await pilot.press("A")
        assert screen.adopted == everything - {1}
        await pilot.press("q")

    drive(app, script)
    p = review_app(Path("run")).first.proposal  # type: ignore[attr-defined]
    receipt = json.loads(Path("run/adopted.json").read_text())["adoptions"]
    assert [a["changes"] for a in receipt] == [sorted(c.number for c in p.changes if c.number != 1)]
    backup = Path(receipt[0]["backup"])
    assert backup.read_bytes() == initial
    expected = initial.decode()
    for change in p.changes[1:]:
        made = replay(expected, change.block)
        assert made is not None
        expected = made
    assert live.read_text() == expected


def test_snapshot_of_the_review(project: Path, snap_compare: Any) -> None:
    assert snap_compare(review_app(Path("run")), press=["j", "r"], terminal_size=SIZE)


def test_snapshot_of_the_details(project: Path, snap_compare: Any) -> None:
    assert snap_compare(review_app(Path("run")), press=["j", "enter"], terminal_size=SIZE)


# -- the command line -------------------------------------------------------------------------


def test_tui_and_review_refuse_what_is_not_a_run(tmp_path: Path) -> None:
    (tmp_path / "plan").mkdir()
    assert run("plan", DEMO, "-o", str(tmp_path / "plan" / "plan.json"))[0] == 0
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    for folder in (tmp_path, tmp_path / "missing", tmp_path / "plan"):
        for command in ("tui", "review"):
            code, out, err = run(command, str(folder))
            assert code == 2 and "not a run folder" in err and out == "", (command, folder)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written


def test_tui_with_no_folder_and_no_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run("tui")
    assert code == 2 and "no run under runs/" in err

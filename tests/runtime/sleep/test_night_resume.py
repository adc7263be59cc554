"""A killed night resumes without paying for a call twice (SPEC §5.4, §7): `skopt sleep run` in
a subprocess SIGKILLs itself at seeded points of the night (just after journaling its N-th paid
call, or between caching an answer and journaling it, or while staging), and the next
`skopt sleep run` continues it. The staged night is the uninterrupted night's, file for file;
the cache holds as many answers as the uninterrupted night paid for, and the journal counts
each once. The budget is exactly the night's worst case, so a resumed night that held a fresh
worst case on top of what it had paid would stop."""

from __future__ import annotations

import contextlib
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.journal import read_journal
from skopt.runtime.sleep.stage import nights
from tests.conftest import ROOT
from tests.runtime.sleep.night_recipes import night_recipe

SEED = 20261201
DEADLINE = 60.0
STAGED = ("manifest.json", "edits.json", "replays.json", "tried.json", "tasks.json", "report.md")

# `skopt sleep run` that kills itself, where argv[1] says:
#   after:N    just after journaling its N-th paid call
#   before:N   when about to journal its N-th paid call (the answer is in the cache already)
#   replace:F  just before the file named F replaces its temporary file
KILLED = """
import os, signal, sys
from skopt.runtime.events import JsonlSink
from skopt.ui.cli import main

where, _, what = sys.argv[1].partition(":")
journal, replace, paid = JsonlSink.emit, os.replace, 0

def emit(self, event):
    global paid
    if event.kind == "call" and event.ok and not event.cache_hit:
        paid += 1
        if where == "before" and paid == int(what):
            os.kill(os.getpid(), signal.SIGKILL)
    journal(self, event)
    if where == "after" and paid == int(what) and event.kind == "call":
        os.kill(os.getpid(), signal.SIGKILL)

def replacing(source, target, *args, **kwargs):
    if where == "replace" and os.path.basename(os.fspath(target)) == what:
        os.kill(os.getpid(), signal.SIGKILL)
    replace(source, target, *args, **kwargs)

JsonlSink.emit = emit
os.replace = replacing
sys.argv = ["skopt", "sleep", "run", "--quiet", sys.argv[2]]
main()
"""


def night(tmp_path: Path) -> Path:
    """A sleep recipe on the simulator with a rubric judge (every phase calls a model), whose
    budget is exactly its worst case."""
    recipe = night_recipe(tmp_path, judge="rubric(model = m)")
    plan = compile_recipe(str(recipe)).plan
    assert plan is not None and plan.sleep is not None
    most = sum(m.calls.max for m in plan.sleep.models)
    recipe.write_text(recipe.read_text().replace("calls = 100", f"calls = {most}"))
    return recipe


def sleep_run(recipe: Path, killed_at: str | None = None) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-c", KILLED, killed_at, str(recipe)] if killed_at else [
        sys.executable, "-c", "from skopt.ui.cli import main; main()",
        "sleep", "run", "--quiet", str(recipe),
    ]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, capture_output=True, timeout=DEADLINE, check=False)


def the_night(recipe: Path) -> Path:
    (found,) = nights(recipe.parent / ".skopt" / "sleep")
    return found


def staged(recipe: Path) -> dict[str, str]:
    """The staged files, with the paths and the name that differ between two projects."""
    folder, root = the_night(recipe), str(recipe.parent.parent)
    files = {name: (folder / name).read_text() for name in STAGED}
    files["proposed"] = (folder / "proposed" / "SKILL.md").read_text()
    return {k: v.replace(root, "ROOT").replace(folder.name, "NIGHT") for k, v in files.items()}


def paid(folder: Path) -> int:
    return sum(1 for e in read_journal(RunFolder(folder).events).calls if e.ok and not e.cache_hit)


def cached(folder: Path) -> int:
    with contextlib.closing(sqlite3.connect(folder / "cache.sqlite")) as db:
        return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    recipe = night(tmp_path_factory.mktemp("whole"))
    done = sleep_run(recipe)
    assert done.returncode == 0, done.stderr.decode()
    return recipe


def kill_points() -> list[list[str]]:
    """Seeded points over the night's paid calls (a fraction of them, so that the points stay
    sensible if the night changes), a night killed twice, and a kill while staging."""
    rng = random.Random(SEED)
    where = [rng.choice(["after", "before"]) for _ in range(4)]
    points = [[f"{w}:{rng.uniform(0.02, 0.98):.3f}"] for w in where]
    return [*points, ["after:0.2", "before:0.7"], ["replace:manifest.json"]]


def at(point: str, calls: int) -> str:
    where, _, what = point.partition(":")
    return point if where == "replace" else f"{where}:{max(1, round(float(what) * calls))}"


@pytest.mark.parametrize("points", kill_points(), ids=lambda p: "+".join(p))
def test_a_killed_night_resumes_to_the_same_staged_night(
    whole: Path, tmp_path: Path, points: list[str]
) -> None:
    calls = paid(the_night(whole))
    recipe = night(tmp_path)
    for point in points:
        killed = sleep_run(recipe, at(point, calls))
        assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
        assert not (the_night(recipe) / "manifest.json").exists()

    done = sleep_run(recipe)
    assert done.returncode == 0, done.stderr.decode()
    assert staged(recipe) == staged(whole)
    assert cached(the_night(recipe)) == cached(the_night(whole)) == calls
    assert paid(the_night(recipe)) == calls  # each answer paid for once, and journaled once

"""`skopt run` in a subprocess, killed with SIGKILL at seeded random points, then `--resume`d:
the results are byte-identical to an uninterrupted run, and no completed call is paid twice.

A kill point is a number of journal lines: the test waits until events.jsonl has at least that
many, then kills the process (it may have written a few more by then; the point is "somewhere
around there", which is what a kill at a random instant is). One case kills the resumed run
again before resuming a second time.

Late points, which a poll of the journal could miss (the run may end first), are hit from
inside the process: it kills itself while journaling the final test, and just before or after
summary.json replaces its temporary file. A kill during an HTTP call goes through the openai
SDK against the scripted local server, which holds a request unanswered until the kill.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.runtime.conftest import KEY, KEY_ENV
from tests.runtime.server import Reply, ScriptedServer, Seen
from tests.runtime.test_run_openai import answering, recipe

RECIPE = "recipes/demo.skopt"
SEED = 20261130
CASES = 4  # runs killed once each, plus one killed twice
DEADLINE = 20.0  # seconds a single process may take before the test gives up on it


def skopt() -> list[str]:
    """The venv's `skopt` script, next to this Python; else the CLI through this Python."""
    script = Path(sys.executable).with_name("skopt")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from skopt.ui.cli import main; main()"]


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*skopt(), "run", *args, "--quiet"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def finish(process: subprocess.Popen[bytes], code: int = 0) -> None:
    try:
        _, err = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("skopt run did not finish in time")
    assert process.returncode == code, err.decode(errors="replace")


def lines(journal: Path) -> int:
    try:
        return journal.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill_at(process: subprocess.Popen[bytes], journal: Path, at: int) -> None:
    """SIGKILL `process` once `journal` has `at` lines."""
    deadline = time.monotonic() + DEADLINE
    while lines(journal) < at:
        assert process.poll() is None, f"the run ended before its journal had {at} lines"
        assert time.monotonic() < deadline, "the journal stopped growing"
        time.sleep(0.0005)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL, "the run finished before it was killed"


def skills(folder: Path) -> dict[str, bytes]:
    files = [*sorted((folder / "skills").glob("*.md")), folder / "best_skill.md"]
    return {f.name: f.read_bytes() for f in files}


def results(folder: Path) -> dict[str, bytes]:
    """What must be identical: every skill version, the best skill, the summary (as bytes), and
    the history in the state (the rest of state.json holds the time the sessions took)."""
    history = json.loads((folder / "state.json").read_bytes())["history"]
    return skills(folder) | {
        "summary.json": (folder / "summary.json").read_bytes(),
        "history": json.dumps(history).encode(),
    }


def events(folder: Path) -> list[dict[str, object]]:
    text = (folder / "events.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]  # a torn line fails here
    return [e for e in lines if e.get("kind") == "call"]


def paid(folder: Path) -> int:
    """Calls the journal says were paid for: answered, and not from the cache."""
    return sum(1 for e in events(folder) if e["ok"] and not e["cache_hit"])


def cached(folder: Path) -> int:
    """Responses in the run's cache: one per call that completed and was paid for."""
    with contextlib.closing(sqlite3.connect(folder / "cache.sqlite")) as db:
        return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run."""
    folder = tmp_path_factory.mktemp("kill") / "whole"
    finish(start(RECIPE, "--out", str(folder)))
    return folder


def kill_points() -> list[list[int]]:
    """Seeded journal line counts to kill at, spread over the run's first ~85% of calls: 554
    lines for the demo now; the fractions keep the points sensible if that changes."""
    rng = random.Random(SEED)
    single = [[round(rng.uniform(0.01, 0.85) * 1000)] for _ in range(CASES)]
    first = rng.uniform(0.05, 0.4)
    return [*single, [round(first * 1000), round(rng.uniform(first + 0.1, 0.85) * 1000)]]


@pytest.mark.parametrize("per_mille", kill_points(), ids=lambda p: "kill@" + "+".join(map(str, p)))
def test_killed_run_resumes_to_identical_results(
    whole: Path, tmp_path: Path, per_mille: list[int]
) -> None:
    total = lines(whole / "events.jsonl")
    cut = tmp_path / "cut"
    for kill, point in enumerate(per_mille):
        process = start("--resume", str(cut)) if kill else start(RECIPE, "--out", str(cut))
        kill_at(process, cut / "events.jsonl", max(1, total * point // 1000))
        assert not (cut / "summary.json").exists()

    finish(start("--resume", str(cut)))
    assert results(cut) == results(whole)
    assert all(e["ok"] for e in events(cut))
    assert cached(cut) == cached(whole)  # no completed call was asked of the model twice
    # ... and the journal says so: every paid call journaled once, as paid, none as paid twice
    assert paid(cut) == paid(whole)


# `skopt run` with the journal's sink patched to SIGKILL the process itself when it is about to
# journal the first paid call after `after` events: the instant between a call's response
# entering the cache and its line entering the journal.
KILLED_BEFORE_JOURNAL = """
import os, signal, sys
from skopt.runtime.events import JsonlSink
from skopt.ui.cli import main

after, seen, journal = int(sys.argv[1]), 0, JsonlSink.emit

def emit(self, event):
    global seen
    seen += 1
    if seen > after and event.kind == "call" and event.ok and not event.cache_hit:
        os.kill(os.getpid(), signal.SIGKILL)
    journal(self, event)

JsonlSink.emit = emit
sys.argv = ["skopt", "run", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("after", [0, 300])
def test_a_call_cached_but_not_yet_journaled_is_journaled_once(
    whole: Path, tmp_path: Path, after: int
) -> None:
    cut = tmp_path / "cut"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_BEFORE_JOURNAL, str(after), RECIPE, "--out", str(cut)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.communicate(timeout=DEADLINE)
    assert process.returncode == -signal.SIGKILL
    assert cached(cut) > paid(cut)  # answers in the cache that the journal lacks
    finish(start("--resume", str(cut)))
    assert results(cut) == results(whole)
    assert cached(cut) == cached(whole)
    assert paid(cut) == paid(whole), "a call paid before the kill is journaled as a cache hit"


BUDGET = "budget.calls=300"  # the demo's worst case runs out of calls after a few steps


def test_budget_holds_across_a_kill_and_resume(tmp_path: Path) -> None:
    """A run that is killed and resumed spends no more than its budget, all parts together,
    and stops where the uninterrupted run stops."""
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    finish(start(RECIPE, "--set", BUDGET, "--out", str(whole)), code=3)
    assert paid(whole) <= 300
    at = round(lines(whole / "events.jsonl") * random.Random(SEED).uniform(0.3, 0.7))
    kill_at(start(RECIPE, "--set", BUDGET, "--out", str(cut)), cut / "events.jsonl", at)
    finish(start("--resume", str(cut)), code=3)
    assert paid(cut) <= 300, "the resumed run spent a fresh budget on top of the first part's"
    assert (
        json.loads((cut / "state.json").read_bytes())["history"]
        == json.loads((whole / "state.json").read_bytes())["history"]
    )
    assert skills(cut) == skills(whole)


# `skopt run` that SIGKILLs itself at a late point, named by argv[1]:
#   final_test:N      having journaled the N-th call of the final test
#   before:NAME       just before NAME replaces its temporary file (write_atomic's os.replace)
#   after:NAME        just after it did
KILLED_LATE = """
import os, signal, sys
from skopt.runtime.events import JsonlSink
from skopt.ui.cli import main

where, _, what = sys.argv[1].partition(":")
journal, replace, seen = JsonlSink.emit, os.replace, 0

def emit(self, event):
    global seen
    journal(self, event)
    seen += event.kind == "call" and event.phase == "final_test"
    if where == "final_test" and seen == int(what):
        os.kill(os.getpid(), signal.SIGKILL)

def replacing(source, target, *args, **kwargs):
    named = os.path.basename(os.fspath(target)) == what
    if where == "before" and named:
        os.kill(os.getpid(), signal.SIGKILL)
    replace(source, target, *args, **kwargs)
    if where == "after" and named:
        os.kill(os.getpid(), signal.SIGKILL)

JsonlSink.emit = emit
os.replace = replacing
sys.argv = ["skopt", "run", *sys.argv[2:]]
main()
"""


def final_test_calls(folder: Path) -> int:
    return sum(1 for e in events(folder) if e["phase"] == "final_test")


@pytest.mark.parametrize(
    "where", ["final_test:1", "final_test:half", "before:summary.json", "after:summary.json"]
)
def test_a_run_killed_late_resumes_to_identical_results(
    whole: Path, tmp_path: Path, where: str
) -> None:
    if where == "final_test:half":
        where = f"final_test:{final_test_calls(whole) // 2}"
    cut = tmp_path / "cut"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_LATE, where, RECIPE, "--out", str(cut), "--quiet"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == -signal.SIGKILL, err.decode(errors="replace")
    assert (cut / "summary.json").exists() is where.startswith("after:")
    if where.startswith("final_test:"):
        assert 0 < final_test_calls(cut) < final_test_calls(whole)
    else:  # the whole run was done: every call, all of its results but the last files
        assert cached(cut) == cached(whole)

    finish(start("--resume", str(cut)))
    assert results(cut) == results(whole)
    assert cached(cut) == cached(whole)
    assert paid(cut) == paid(whole)


# -- a kill during an HTTP call --------------------------------------------------------------


class Holding:
    """The scripted server's brain (test_run_openai.py), counting the requests it answers; from
    the `hold_from`-th on, it holds each request unanswered until `release` is set."""

    def __init__(self, respond: Callable[[Seen], bytes]) -> None:
        self.respond = respond
        self.count = 0
        self.hold_from: int | None = None
        self.held = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, seen: Seen) -> bytes:
        with self._lock:
            self.count += 1
            hold = self.hold_from is not None and self.count >= self.hold_from
        if hold:
            self.held.set()
            self.release.wait(timeout=DEADLINE)
        return self.respond(seen)


@pytest.fixture(scope="module")
def brain() -> Iterator[tuple[ScriptedServer, Holding]]:
    holding = Holding(answering())
    with ScriptedServer() as server:
        server.script(*([Reply(body=holding)] * 20_000))
        yield server, holding
        holding.release.set()


def with_key() -> dict[str, str]:
    """This environment with the test's key, and no provider variables of the SDKs."""
    names = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    return {k: v for k, v in os.environ.items() if k not in names} | {KEY_ENV: KEY}


@pytest.fixture(scope="module")
def words(
    tmp_path_factory: pytest.TempPathFactory, brain: tuple[ScriptedServer, Holding]
) -> tuple[Path, Path, int]:
    """A recipe on the scripted server (2 epochs), its uninterrupted run, and the requests it
    made. One call at a time: when the server holds a request, no other is on its way, so what
    the server was asked before the kill is exactly what the run had completed."""
    server, holding = brain
    root = tmp_path_factory.mktemp("http")
    path = recipe(root, server.openai_url, epochs="2")
    path.write_text(path.read_text().replace("concurrency = 4", "concurrency = 1"))
    assert "concurrency = 1" in path.read_text()
    before = holding.count
    finish(start(str(path), "--out", str(root / "whole"), env=with_key()))
    asked = holding.count - before
    assert asked == paid(root / "whole") == cached(root / "whole")  # every call asked once
    return path, root / "whole", asked


def http_kill_points() -> list[float]:
    rng = random.Random(SEED + 1)
    return [round(rng.uniform(0.05, 0.95), 2) for _ in range(2)]


@pytest.mark.parametrize("fraction", http_kill_points(), ids=lambda f: f"kill@request{f:.0%}")
def test_a_run_killed_during_an_http_call_pays_no_call_twice(
    brain: tuple[ScriptedServer, Holding],
    words: tuple[Path, Path, int],
    tmp_path: Path,
    fraction: float,
) -> None:
    _, holding = brain
    path, whole, asked = words
    cut = tmp_path / "cut"
    holding.release.clear()
    holding.held.clear()
    begin = holding.count
    held_at = holding.hold_from = begin + max(1, round(asked * fraction))
    process = start(str(path), "--out", str(cut), env=with_key())
    try:
        while not holding.held.wait(0.01):
            assert process.poll() is None, "the run ended before its request was held"
        process.send_signal(signal.SIGKILL)  # a request is on the wire, unanswered
        process.communicate(timeout=DEADLINE)
    finally:
        holding.hold_from = None
        holding.release.set()
    assert process.returncode == -signal.SIGKILL
    done = cached(cut)  # the calls that completed before the kill
    assert holding.count == held_at, "the held request was not the last one asked"
    assert done == held_at - begin - 1, "a call answered before the kill was not kept"

    resumed = holding.count
    finish(start("--resume", str(cut), env=with_key()))
    assert results(cut) == results(whole)
    assert cached(cut) == cached(whole)
    assert paid(cut) == paid(whole)
    # The resumed session asked the server for exactly the calls that had not completed.
    assert holding.count - resumed == asked - done

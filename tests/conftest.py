"""Shared fixtures: plain-file snapshots a reviewer can read (.txt and .json).

Regenerate snapshots only with `pytest --snapshot-update`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "recipes"


class TextSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    _file_extension = "txt"


class JsonSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    _file_extension = "json"


# Run a command with SIGINT at its default, then exec it.
_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def ctrl_c_as_in_a_terminal(command: list[str]) -> list[str]:
    """`command`, started so that a Ctrl-C (SIGINT) reaches it as it would in a terminal. A
    shell's background job (a CI run started with `&`) inherits SIGINT ignored, and so would
    every process the tests start. A `preexec_fn` cannot reset it once Ray is imported: its
    fork handlers fail in the child."""
    return [sys.executable, "-c", _DEFAULT_SIGINT, *command]


@pytest.fixture
def snapshot_txt(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshot)


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JsonSnapshot)


def call_events(folder: Path) -> list[dict[str, Any]]:
    """The call events of a run folder's journal (it also records each session's start and
    end)."""
    lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e.get("kind") == "call"]


def demo_project(folder: Path) -> Path:
    """A copy of the demo in `folder`: its recipes (demo, sweep, base) and its live skill, so
    that a test may run, review and adopt without touching the repository's files."""
    (folder / "skills").mkdir(parents=True)
    for name in ("demo.skopt", "sweep.skopt", "base.skopt", "skills/demo.md"):
        shutil.copy(RECIPES / name, folder / name)
    return folder

"""Shared fixtures: plain-file snapshots a reviewer can read (.txt and .json).

Regenerate snapshots only with `pytest --snapshot-update`.
"""

from __future__ import annotations

import json
import shutil
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

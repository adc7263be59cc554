"""Fixtures for harvest: a copy of the reference transcripts whose files are all old (so that no
file looks live, whatever the clock says), the clock harvest is given, and expected.json."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from skopt.runtime.sleep.harvest import Source
from skopt.runtime.sleep.sessions import KINDS

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
SECRETS: dict[str, str] = EXPECTED["fake_secret_literals"]
NOW = datetime(2026, 9, 1, tzinfo=UTC)  # after every fixture; the files' time is 2000-01-01
OLD = datetime(2000, 1, 1, tzinfo=UTC).timestamp()
ALL_KINDS = KINDS


def age(root: Path, mtime: float = OLD) -> None:
    """Every file and folder under `root` last changed at `mtime`."""
    for path in [root, *root.rglob("*")]:
        os.utime(path, (mtime, mtime))


def copy_transcripts(folder: Path) -> Path:
    """A writable copy of the reference transcripts in `folder`, every file of it old."""
    copy = folder / "transcripts"
    shutil.copytree(FIXTURES, copy)
    age(copy)
    return copy


@pytest.fixture
def transcripts(tmp_path: Path) -> Path:
    return copy_transcripts(tmp_path)


def sources(root: Path) -> list[Source]:
    """The three sources as the agents lay them out under `root`."""
    return [
        Source("claude", root / "claude"),
        Source("codex", root / "codex"),
        Source("generic", root / "generic"),
    ]


def strings(value: object) -> list[str]:
    """Every string in a tree of dicts, lists and tuples (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v)]
    return []

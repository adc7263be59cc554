"""Claiming a run folder: the marker that says what a folder is, and the lock of the process
working in it.

A run never writes into a folder it did not claim. A new run claims a folder that is absent
or empty by creating its marker (`.skopt-run`) exclusively, before anything else is written,
so two runs can never share a folder, however they race; a default folder name that is taken
gets a suffix (`-2`, `-3`, …). Every process working in a folder (a run, `--resume`) holds an
exclusive lock on `.skopt-lock`, which records its pid; a second process is refused and told
whose it is. The lock goes with the process, however it ends (SIGKILL included).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from skopt.runtime.artifacts import LOCK, MARKER, RunFolder

Kind = Literal["run", "sweep", "night"]
MAX_SUFFIX = 1000


class FolderRefused(Exception):
    """A folder skopt will not work in (exit 2); the message says why and what to do."""


class NotARunFolder(FolderRefused):
    """The folder is not one that `skopt run` made, or it cannot be read as one."""


class FolderInUse(FolderRefused):
    """Another process holds the folder's lock."""


def check_new(root: Path) -> None:
    """A new run may go to `root` only if it is absent or an empty folder."""
    if not root.exists():
        return
    if not root.is_dir():
        raise FolderRefused(f"{root} is a file, not a folder: choose another --out")
    if (root / MARKER).exists():
        raise FolderRefused(
            f"{root} already holds a run: continue it with skopt run --resume {root},"
            " or choose another --out"
        )
    if any(root.iterdir()):
        raise FolderRefused(
            f"{root} is not empty: a run writes only into a new or empty folder,"
            " so that it never overwrites a file of yours; choose another --out"
        )


def claim(root: Path, kind: Kind, unique: bool = False) -> RunFolder:
    """Make `root` a run folder of this `kind`, atomically; with `unique`, a taken name gets
    the first free suffix instead of being refused."""
    for n in range(1, MAX_SUFFIX + 1):
        candidate = root if n == 1 else root.with_name(f"{root.name}-{n}")
        try:
            check_new(candidate)
            return _mark(candidate, kind)
        except FolderRefused:
            if not unique:
                raise
    raise FolderRefused(f"no free folder name next to {root}")


def _mark(root: Path, kind: Kind) -> RunFolder:
    root.mkdir(parents=True, exist_ok=True)
    check_new(root)  # another process may have written in it since the first check
    marker = {"kind": kind, "id": uuid.uuid4().hex, "format": 1}
    try:
        fd = os.open(root / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise FolderRefused(f"{root} was just claimed by another run") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(marker, f)
        f.write("\n")
    return RunFolder(root)


def open_folder(root: Path, kind: Kind | None = None) -> RunFolder:
    """An existing run folder (of `kind`, when given); refused with a sentence otherwise."""
    if not root.is_dir():
        what = "a file" if root.exists() else "not there"
        raise NotARunFolder(f"{root} is {what}: not a run folder")
    marker = read_marker(root)
    if marker is None:
        hint = (
            f"; it holds a plan: run it with skopt run {root / 'plan.json'}"
            if (root / "plan.json").is_file()
            else ""
        )
        raise NotARunFolder(f"{root} is not a run folder (skopt run marks its folders){hint}")
    if kind is not None and marker["kind"] != kind:
        raise NotARunFolder(f"{root} is a {marker['kind']} folder, not a {kind} folder")
    return RunFolder(root)


def read_marker(root: Path) -> dict[str, str] | None:
    try:
        data = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") not in ("run", "sweep", "night"):
        return None
    return {k: str(v) for k, v in data.items()}


@contextlib.contextmanager
def locked(folder: RunFolder) -> Iterator[None]:
    """Hold the folder's lock while the block runs; FolderInUse names the holder's pid."""
    fd = os.open(folder.root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise FolderInUse(
                f"{folder.root} is in use by another skopt process (pid {holder});"
                " wait for it to end, or stop it"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def holder(folder: RunFolder) -> str | None:
    """The pid of the process working in the folder now; None when none is."""
    try:
        fd = os.open(folder.root / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
    finally:
        os.close(fd)  # releases the probe's shared lock
    return None

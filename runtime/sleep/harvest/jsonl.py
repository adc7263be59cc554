"""Reading transcript files leniently (transcripts README §8.7): a bad line is skipped, not the
file; an unreadable file is skipped, not the harvest. Nothing here raises on any file content.

This module owns the `Tally` (files looked at, and what was passed over by reason) and
`read_records`, which turns a JSONL file into its JSON objects, counting the rest: an
unreadable file (permissions, a directory named `*.jsonl`, a file that vanished, a file not one
line of which decodes), an empty file, a truncated last line (a crash mid-write), a bad line
(binary junk, invalid UTF-8, invalid JSON, JSON that is not an object).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JsonObject = dict[str, Any]


@dataclass
class Tally:
    """What a harvest looked at and passed over; harvest turns it into `Skipped`."""

    files: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, n: int = 1) -> None:
        self.counts[reason] += n


def read_records(path: Path, tally: Tally) -> list[JsonObject] | None:
    """The JSON objects of `path` in file order, or None when the file yields none (counted)."""
    tally.files += 1
    try:
        raw = path.read_bytes()
    except OSError:
        tally.skip("unreadable file")
        return None
    if not raw.strip():
        tally.skip("empty file")
        return None
    lines = raw.splitlines()
    records: list[JsonObject] = []
    bad: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _parse(line)
        if record is not None:
            records.append(record)
        else:
            last = number == len(lines) and not raw.endswith(b"\n")
            bad.append("truncated line" if last else "bad line")
    if not records:
        tally.skip("unreadable file")  # not one line decodes: binary, or another encoding
        return None
    for reason in bad:
        tally.skip(reason)
    return records


def _parse(line: bytes) -> JsonObject | None:
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_json(path: Path) -> JsonObject | None:
    """One JSON object file (a sub-agent's `.meta.json`, a live-session registry entry)."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None

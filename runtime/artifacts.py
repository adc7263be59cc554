"""The run folder (SPEC §5.3): what is written where, and how.

Files that describe results (skills, state, summary, step records) are written atomically
(temporary file + rename), so a kill at any instant leaves either the old or the new file.
Nothing here holds a timestamp or a secret, so that a resumed run ends byte-identical.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

MARKER = ".skopt-run"  # written first: says the folder is a run (or sweep) folder, and its id
LOCK = ".skopt-lock"  # locked by the process working in the folder; holds its pid


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, data: object) -> None:
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def read_json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


class RunFolder:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def id(self) -> str:
        """The run's id from its marker: whose answers in the cache this run paid for."""
        data = read_json(self.root / MARKER)
        return str(data.get("id", "")) if isinstance(data, dict) else ""

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def cache(self) -> Path:
        return self.root / "cache.sqlite"

    def skill(self, version: int) -> Path:
        return self.root / "skills" / f"skill_v{version:04d}.md"

    def step(self, step: int) -> Path:
        return self.root / "steps" / f"{step:04d}"

    def write_skill(self, version: int, text: str) -> None:
        write_atomic(self.skill(version), text)

    def write_best(self, text: str) -> None:
        write_atomic(self.root / "best_skill.md", text)

    def write_step(self, step: int, name: str, data: object) -> None:
        write_json(self.step(step) / name, data)

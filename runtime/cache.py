"""The response cache: every completion, keyed by a hash of its canonical request.

SQLite in WAL mode, safe for several writers (threads or processes) at once. A file that is
not a sound cache of ours is reported as damaged, never trusted.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from skopt.runtime.errors import CacheDamaged
from skopt.runtime.request import Completion

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    finish_reason TEXT NOT NULL,
    latency_s REAL NOT NULL
)
"""


class ResponseCache:
    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
            self._db = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
            self._open(readonly)
        except sqlite3.DatabaseError as exc:
            raise CacheDamaged(f"{path} is not a usable response cache: {exc}") from None

    def _open(self, readonly: bool) -> None:
        db = self._db
        if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
            raise sqlite3.DatabaseError("integrity check failed")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if readonly:
            if version != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
            return
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if version not in (0, SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
        with db:
            db.execute(_SCHEMA)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens, finish_reason, latency_s"
                " FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        return Completion(*row) if row else None

    def put(self, key: str, request: str, completion: Completion) -> None:
        c = completion
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    request,
                    c.text,
                    c.input_tokens,
                    c.output_tokens,
                    c.finish_reason,
                    c.latency_s,
                ),
            )

    def requests(self) -> list[tuple[str, str]]:
        """Every recorded (key, canonical request) — what replay diffs a miss against."""
        with self._lock:
            return list(self._db.execute("SELECT key, request FROM responses"))

    def close(self) -> None:
        with self._lock:
            self._db.close()

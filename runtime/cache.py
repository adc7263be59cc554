"""The response cache: every completion, keyed by a hash of its canonical request.

SQLite in WAL mode, safe for several writers (threads or processes) at once. A file that is
not a sound cache of ours is reported as damaged, never trusted.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from skopt.runtime.errors import CacheDamaged
from skopt.runtime.request import Completion

SCHEMA_VERSION = 2  # 2: rows say which run paid for them
READABLE = (1, SCHEMA_VERSION)
BUSY_TIMEOUT_S = 30  # how long an open or a write waits for another writer
Origin = tuple[str, str, str]  # model block, role, phase of the request that paid for a row
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    content_key TEXT NOT NULL,
    model TEXT NOT NULL,
    role TEXT NOT NULL,
    phase TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    finish_reason TEXT NOT NULL,
    latency_s REAL NOT NULL,
    run TEXT NOT NULL DEFAULT ''
)
"""
_COLUMNS = (
    "key, content_key, model, role, phase, request, text, input_tokens, output_tokens,"
    " finish_reason, latency_s, run"
)


class ResponseCache:
    """`run`: the id of the run whose answers this cache object writes (and reconciles)."""

    def __init__(self, path: Path, readonly: bool = False, run: str = "") -> None:
        self.path = path
        self.run = run
        self._lock = threading.Lock()
        try:
            uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
            self._db = sqlite3.connect(
                uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False
            )
            self._open(readonly)
        except sqlite3.DatabaseError as exc:
            raise CacheDamaged(f"{path} is not a usable response cache: {exc}") from None

    def _open(self, readonly: bool) -> None:
        db = self._db
        if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
            raise sqlite3.DatabaseError("integrity check failed")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, *READABLE) or (readonly and version == 0):
            raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
        if readonly:
            return
        _use_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
        with db:
            db.execute(_SCHEMA)
            if version == 1:
                db.execute("ALTER TABLE responses ADD COLUMN run TEXT NOT NULL DEFAULT ''")
            db.execute("CREATE INDEX IF NOT EXISTS by_content ON responses (content_key)")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def get(self, key: str) -> Completion | None:
        return self._one("key", key)

    def get_by_content(self, content_key: str) -> Completion | None:
        """The first recorded answer to these messages (replay)."""
        return self._one("content_key", content_key)

    def _one(self, column: str, value: str) -> Completion | None:
        rows = self._query(
            "SELECT text, input_tokens, output_tokens, finish_reason, latency_s"
            f" FROM responses WHERE {column} = ? ORDER BY key LIMIT 1",
            (value,),
        )
        return Completion(*rows[0]) if rows else None  # type: ignore[arg-type]

    def put(
        self,
        key: str,
        content_key: str,
        origin: Origin,
        request: str,
        completion: Completion,
        run: str | None = None,
    ) -> None:
        """Store an answer, as paid for by `run` (default: this cache's run; "" for an answer
        another run paid for, which this one got for free)."""
        c = completion
        row = (key, content_key, *origin, request, c.text, c.input_tokens, c.output_tokens)
        try:
            with self._lock, self._db:
                self._db.execute(
                    f"INSERT OR REPLACE INTO responses ({_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*row, c.finish_reason, c.latency_s, self.run if run is None else run),
                )
        except sqlite3.DatabaseError as exc:
            raise CacheDamaged(f"{self.path} cannot be written: {exc}") from None

    def paid(self) -> list[tuple[str, Origin, Completion]]:
        """Every answer this run paid for: (key, who asked, completion) — to reconcile the
        journal. Answers that came with the cache from another run were not paid by this one."""
        rows = self._query(
            "SELECT key, model, role, phase, text, input_tokens, output_tokens, finish_reason,"
            " latency_s FROM responses WHERE run = ? ORDER BY key",
            (self.run,),
        )
        return [(str(r[0]), (str(r[1]), str(r[2]), str(r[3])), Completion(*r[4:])) for r in rows]  # type: ignore[arg-type]

    def paid_requests(self) -> list[tuple[str, str, Origin, str, Completion]]:
        """Every answer this run paid for, whole: (key, content key, who asked, the canonical
        request, completion) — what a sweep's shared cache takes in."""
        rows = self._query(
            "SELECT key, content_key, model, role, phase, request, text, input_tokens,"
            " output_tokens, finish_reason, latency_s FROM responses WHERE run = ? ORDER BY key",
            (self.run,),
        )
        return [
            (str(r[0]), str(r[1]), (str(r[2]), str(r[3]), str(r[4])), str(r[5]), Completion(*r[6:]))  # type: ignore[arg-type]
            for r in rows
        ]

    def requests(self) -> list[str]:
        """Every recorded canonical request — what replay diffs a miss against."""
        return [str(r[0]) for r in self._query("SELECT request FROM responses ORDER BY key", ())]

    def _query(self, sql: str, args: tuple[str, ...]) -> list[tuple[object, ...]]:
        try:
            with self._lock:
                return list(self._db.execute(sql, args))
        except sqlite3.DatabaseError as exc:
            raise CacheDamaged(f"{self.path} cannot be read: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()


def copy_cache(earlier: Path, to: Path) -> None:
    """A new run's cache starts as a copy of an earlier run's (its rows keep the id of the run
    that paid for them, so the new run books them as cache hits, never as its own calls)."""
    try:
        source = sqlite3.connect(f"file:{earlier}?mode=ro", uri=True)
        target = sqlite3.connect(to)
        with source, target:
            source.backup(target)
        source.close()
        target.close()
    except sqlite3.DatabaseError as exc:
        raise CacheDamaged(f"{earlier} is not a usable response cache: {exc}") from None


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the file in WAL mode (a no-op once it is: the mode is kept in the file). SQLite does
    not wait for this one statement while another connection holds the write lock — as one that
    is making the same fresh file WAL at the same moment does — so the wait is here."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
            continue
        if mode != "wal":
            raise sqlite3.DatabaseError(f"journal mode {mode}, WAL needed")
        return

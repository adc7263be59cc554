"""A llama.cpp server for one GGUF file, on a free loopback port, started and stopped by skopt.

`start` launches `child.py` (the server plus a watchdog on this process), then waits until the
server answers `/v1/models`; a server that exits or stays silent fails with the tail of its log.
`stop` terminates it (then kills it after a grace period); servers still running when the
interpreter exits are stopped by an `atexit` hook, and the watchdog covers a hard kill of skopt.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

CONTEXT = 16384  # tokens; a reflection over a full minibatch fits with room to spare
START_TIMEOUT_S = 180.0
_live: set[LocalServer] = set()


class ServerError(Exception):
    """The local server did not come up; the message ends with the tail of its log."""


class LocalServer:
    def __init__(self, weights: Path, alias: str) -> None:
        self.weights = weights
        self.alias = alias
        self.threads = os.cpu_count() or 1
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        self.port = _free_port()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (open while the server runs)
        # A session of its own: Ctrl-C reaches skopt, which then stops the server in order.
        self._process = subprocess.Popen(
            [sys.executable, "-m", "skopt.runtime.local.child", str(os.getpid()), *self._args()],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _live.add(self)
        try:
            self._wait_healthy(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _args(self) -> list[str]:
        return [
            "--model", str(self.weights),
            "--model_alias", self.alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(CONTEXT),
            "--n_threads", str(self.threads),
            "--n_threads_batch", str(self.threads),
            "--verbose", "False",
        ]  # fmt: skip

    def _wait_healthy(self, timeout_s: float) -> None:
        assert self._process is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ServerError(
                    f"the local model server exited with status {self._process.returncode} "
                    f"while loading {self.weights.name}:\n{self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise ServerError(
            f"the local model server did not answer within {timeout_s:g}s:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 20) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return "\n".join(self._log.read().decode(errors="replace").splitlines()[-lines:])

    def stop(self, grace_s: float = 5.0) -> None:
        process, self._process = self._process, None
        _live.discard(self)
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(grace_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@atexit.register
def _stop_all() -> None:
    for server in list(_live):
        server.stop()

"""`skopt run --tui` as a user runs it: a real process on a pseudo-terminal, the monitor drawn by
Textual, the run against the scripted server (slow enough to be stopped half-way). `q` stops the
run cleanly and resumably: exit 130, the journal says "interrupted", and `--resume` finishes it."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

from skopt.runtime.artifacts import RunFolder
from skopt.runtime.journal import read_journal
from tests.runtime.server import Reply, ScriptedServer
from tests.runtime.test_kill_resume import skopt, with_key
from tests.runtime.test_run_openai import answering, recipe

DEADLINE = 60.0


def drain(fd: int) -> threading.Thread:
    """Read the terminal's output until it closes, so that the program never blocks on it."""

    def read() -> None:
        while True:
            try:
                if not os.read(fd, 65536):
                    return
            except OSError:
                return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_q_in_the_monitor_of_run_tui_stops_the_run_resumably(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.script(*([Reply(body=answering(), delay=0.02)] * 20_000))
        path, out = recipe(tmp_path, server.openai_url), tmp_path / "run"
        screen, terminal = pty.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        process = subprocess.Popen(
            [*skopt(), "run", str(path), "--out", str(out), "--tui"],
            stdin=terminal, stdout=terminal, stderr=terminal, cwd=tmp_path,
            env=with_key() | {"TERM": "xterm-256color"}, start_new_session=True,
        )  # fmt: skip
        os.close(terminal)
        reader = drain(screen)
        deadline = time.monotonic() + DEADLINE
        while len(read_journal(RunFolder(out).events).steps) < 1:  # the run is under way
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.write(screen, b"q")
        assert process.wait(timeout=DEADLINE) == 130
        os.close(screen)
        reader.join(timeout=5)

        journal = read_journal(RunFolder(out).events)
        assert journal.ended is not None and journal.ended.outcome == "interrupted"
        assert not (out / "summary.json").exists()
        done = subprocess.run(
            [*skopt(), "run", "--resume", str(out), "--quiet"],
            env=with_key(), capture_output=True, timeout=DEADLINE, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert (out / "summary.json").exists()

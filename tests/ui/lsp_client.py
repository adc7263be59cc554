"""A small LSP client for the tests: `skopt lsp` as a real process, JSON-RPC over its pipes."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

SKOPT = Path(sys.executable).parent / "skopt"
WAIT = 60  # seconds for one reply: a generous bound, never a timing assertion


class Client:
    def __init__(self, cwd: Path) -> None:
        self.log = (cwd / "lsp-stderr.txt").open("wb")
        self.process = subprocess.Popen(
            [str(SKOPT), "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.held: list[dict[str, Any]] = []  # notifications that came while awaiting a reply
        self.ids = 0
        assert self.process.stdout is not None
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,))
        self.reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while (length := _content_length(stream)) is not None:
                self.inbox.put(json.loads(stream.read(length)))
        finally:
            self.inbox.put(None)

    def _next(self) -> dict[str, Any]:
        message = self.inbox.get(timeout=WAIT)
        assert message is not None, "the server closed its output"
        return message

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"method": method, "params": params or {}})

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.ids += 1
        self.send({"id": self.ids, "method": method, "params": params or {}})
        while True:
            message = self._next()
            if message.get("id") == self.ids and "method" not in message:
                assert "error" not in message, message["error"]
                return message.get("result")
            self.held.append(message)

    def diagnostics(self, uri: str, version: int) -> dict[str, list[dict[str, Any]]]:
        """Every file's diagnostics published up to those of `uri` at `version`."""
        found: dict[str, list[dict[str, Any]]] = {}
        while True:
            message = self.held.pop(0) if self.held else self._next()
            if message.get("method") != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            found[params["uri"]] = params["diagnostics"]
            if params["uri"] == uri and params.get("version") == version:
                return found

    def close(self) -> int:
        """shutdown, exit: the server's exit code."""
        try:
            assert self.request("shutdown") is None
            self.notify("exit")
            return self.process.wait(timeout=WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.reader.join(timeout=WAIT)
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.log.close()


def _content_length(stream: IO[bytes]) -> int | None:
    """Read one message's headers: its length, or None at the end of the stream."""
    length = None
    while line := stream.readline():
        if line.strip():
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        elif length is not None:
            return length
    return None

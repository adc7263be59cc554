"""A scripted HTTP server on 127.0.0.1 that speaks just enough OpenAI and Anthropic.

Real sockets, stdlib only: `ThreadingHTTPServer` in a background thread, HTTP/1.1 with
keep-alive so that the SDKs' connection pools reuse connections as they would against a
provider. Each test scripts the replies it wants (status, headers, body, delay, or a dropped
connection) and reads back every request the SDK sent.

    POST /v1/chat/completions   OpenAI Chat Completions   (SDK base_url: root + "/v1")
    POST /v1/messages           Anthropic Messages        (SDK base_url: root)

With nothing scripted the server answers with a success that echoes the last user message.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass(frozen=True)
class Seen:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON


Body = bytes | Callable[[Seen], bytes]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `body=None` means the default success for the path."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Body | None = None
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    text: str | None = None  # text of the default success (instead of the echo)
    input_tokens: int = 11
    output_tokens: int = 7


def error_body(message: str, kind: str = "api_error") -> bytes:
    """An error body both SDKs read: `{"error": {"message": ..., "type": ...}}`."""
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def json_reply(status: int, message: str, **headers: str) -> Reply:
    return Reply(status=status, headers=dict(headers), body=error_body(message))


def last_user_text(body: Any) -> str:
    messages = body.get("messages", []) if isinstance(body, dict) else []
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def openai_completion(text: str, input_tokens: int, output_tokens: int, model: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": input_tokens,
                "completion_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            },
        }
    ).encode()


def anthropic_message(text: str, input_tokens: int, output_tokens: int, model: str) -> bytes:
    return json.dumps(
        {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    ).encode()


class ScriptedServer:
    """The server and its script; use as a context manager or through the `server` fixture."""

    def __init__(self, default_delay: float = 0.0) -> None:
        self.default_delay = default_delay
        self.requests: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests the server was answering at once
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order; then the default success again."""
        with self._lock:
            self._script.extend(replies)

    def count(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler -------------------------------------------------------------

    def _record(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._script.popleft() if self._script else Reply(delay=self.default_delay)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the benchmark opens 32+ connections at once


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the SDKs' pools reuse connections

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen = Seen(self.path, headers, body)
            reply = server._record(seen)
            if reply.delay:
                time.sleep(reply.delay)
            server._done()  # before answering: the client may send its next request at once
            if reply.drop:
                self._drop()
            else:
                self._send(reply, self._payload(reply, seen))

        def _payload(self, reply: Reply, seen: Seen) -> bytes:
            if callable(reply.body):
                return reply.body(seen)
            if reply.body is not None:
                return reply.body
            model = seen.body.get("model", "m") if isinstance(seen.body, dict) else "m"
            text = reply.text if reply.text is not None else f"echo: {last_user_text(seen.body)}"
            make = anthropic_message if seen.path == ANTHROPIC_PATH else openai_completion
            if seen.path not in (OPENAI_PATH, ANTHROPIC_PATH):
                return error_body(f"no route {seen.path}", "not_found_error")
            return make(text, reply.input_tokens, reply.output_tokens, model)

        def _send(self, reply: Reply, payload: bytes) -> None:
            with contextlib.suppress(OSError):  # the client may have given up (timeouts)
                self.send_response(reply.status)
                names = {k.lower() for k in reply.headers}
                if "content-type" not in names:
                    self.send_header("Content-Type", "application/json")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

        def _drop(self) -> None:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextlib.contextmanager
def refused_url() -> Iterator[str]:
    """A URL on 127.0.0.1 where nothing listens: a socket bound but never listening holds the
    port (so nobody else takes it) and connecting to it is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()

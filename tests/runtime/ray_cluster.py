"""A real Ray cluster for the tests: a head and a second worker node, each its own `ray start
--block` process (in a session of its own, so that the whole node ends with its process
group), on this machine, with small CPU counts. The worker starts in a folder of its own, so
that it never shares the launching process's working folder. Ray takes the machine's own
interface address even when asked for 127.0.0.1 (an address of this machine), so the
address to join is read from the head's output. Nodes are ended by their process groups,
never by `ray stop` (which ends every Ray process on the machine)."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
DEADLINE = 60.0
# Find a dead node within a couple of seconds, not the default half a minute.
FAST_FAILURE = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3"}


# Run a command with SIGINT at its default, then exec it.
_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def ctrl_c_as_in_a_terminal(command: list[str]) -> list[str]:
    """`command`, started so that a Ctrl-C (SIGINT) reaches it as it would in a terminal. A
    shell's background job (a CI run started with `&`) inherits SIGINT ignored, and so would
    every process the tests start. A `preexec_fn` cannot reset it once Ray is imported: its
    fork handlers fail in the child."""
    return [sys.executable, "-c", _DEFAULT_SIGINT, *command]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    """The nodes and every process that joins them use token authentication (Ray's default
    for local clusters), with a token of the test's own."""

    root: Path  # a short folder (Ray's socket paths must stay short)
    address: str = ""
    nodes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment of a process that joins the cluster."""
        token = self.root / "token"
        if not token.exists():
            token.write_text(secrets.token_hex(32))
        return os.environ | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}

    def start(self, cpus: int = 2) -> Cluster:
        try:
            return self._start(cpus)
        except BaseException:
            self.stop()
            raise

    def _start(self, cpus: int) -> Cluster:
        head_home, worker_home = self.root / "head", self.root / "worker"
        head_home.mkdir()
        worker_home.mkdir()
        port = free_port()
        head = self._node(
            head_home,
            "--head",
            f"--port={port}",
            f"--temp-dir={self.root / 'ray'}",
            "--include-dashboard=false",
            f"--num-cpus={cpus}",
        )
        self.address = self._address(head)
        self._node(worker_home, f"--address={self.address}", f"--num-cpus={cpus}")
        self.wait_for(2)
        return self

    def _node(self, home: Path, *args: str) -> subprocess.Popen[bytes]:
        with (home / "node.log").open("wb") as log:  # the node writes to its own copy
            node = subprocess.Popen(
                # ray.cancel reaches a running task as a SIGINT
                ctrl_c_as_in_a_terminal([RAY, "start", "--block", "--disable-usage-stats", *args]),
                cwd=home,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=self.env | FAST_FAILURE,
            )
        self.nodes.append(node)
        return node

    def _address(self, head: subprocess.Popen[bytes]) -> str:
        log = self.root / "head" / "node.log"
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            found = re.search(r"ray start --address='([^']+)'", log.read_text(errors="replace"))
            if found:
                return found.group(1)
            assert head.poll() is None, log.read_text(errors="replace")
            time.sleep(0.2)
        raise AssertionError("the head node did not start")

    def wait_for(self, nodes: int) -> None:
        """Until `nodes` nodes are alive in the cluster."""
        probe = (
            "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False);"
            " print(sum(n['Alive'] for n in ray.nodes()))"
        )
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            done = subprocess.run(
                [sys.executable, "-c", probe, self.address],
                capture_output=True,
                check=False,
                env=self.env,
            )
            if done.returncode == 0 and done.stdout.decode().strip().endswith(str(nodes)):
                return
            time.sleep(0.5)
        raise AssertionError(f"the cluster never had {nodes} nodes alive")

    def kill_worker(self) -> None:
        """SIGKILL the worker node and every process of it (its raylet, its workers)."""
        _end(self.nodes[1], signal.SIGKILL)

    def stop(self) -> None:
        for node in reversed(self.nodes):
            _end(node, signal.SIGTERM)


def _end(node: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(node.pid, sig)
    except ProcessLookupError:
        return
    try:
        node.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(node.pid, signal.SIGKILL)
        node.wait()
    time.sleep(0.5)
    with contextlib.suppress(ProcessLookupError):  # whatever of the node outlived `ray start`
        os.killpg(node.pid, signal.SIGKILL)


def new_cluster() -> Cluster:
    return Cluster(Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))).start()

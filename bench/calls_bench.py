"""How much does the call layer cost? Goals: 1,000 calls at concurrency 32 against a server that
answers after 50 ms within 1.25x of the ideal (1000 x 0.05 / 32 s); the layer's own overhead
under 1 ms per call; a fully cached re-run of the same 1,000 calls at 5,000 calls/s or more.

Measured side by side in one run:

  sdk only     the same calls through OpenAIBackend directly (the real openai SDK, 32 at a
               time): what the SDK, the sockets and the server cost without the layer
  layer        the same calls through CallLayer (cache, ledger, rate limit, events) over the
               real SDK: wall time and its ratio to the ideal
  overhead     CallLayer over a backend that answers instantly, in process: the layer's own
               cost per call (cache lookup and write, accounting, event), one call at a time
  cached       the layer run again over the same 1,000 requests, every one a cache hit

The server is the tests' scripted server (tests/runtime/server.py: ThreadingHTTPServer,
HTTP/1.1 keep-alive, Content-Length), run in its own process so that its threads do not
compete with the client for the GIL; `--in-process` runs it in this process instead.

    .venv/bin/python bench/calls_bench.py [--calls 1000] [--concurrency 32] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import runpy
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from skopt.compiler.plan import Budget, ModelSettings, Price
from skopt.runtime.backends import Backend, params_of
from skopt.runtime.backends.openai import OpenAIBackend
from skopt.runtime.cache import ResponseCache
from skopt.runtime.calls import CallLayer
from skopt.runtime.events import JsonlSink
from skopt.runtime.ledger import Ledger
from skopt.runtime.request import Completion, Message, Params, Request

# The tests' scripted server (standard library only), run from its file: tests/ is not an
# installed package, and nothing here edits sys.path to make it one.
SERVER = Path(__file__).resolve().parent.parent / "tests" / "runtime" / "server.py"
KEY_ENV = "SKOPT_BENCH_KEY"
GOAL_RATIO = 1.25
GOAL_OVERHEAD_US = 1000.0
GOAL_CACHED = 5000.0

SERVE = """
import runpy, sys
ScriptedServer = runpy.run_path(sys.argv[1])["ScriptedServer"]
server = ScriptedServer(default_delay=float(sys.argv[2])).start()
print(server.port, flush=True)
sys.stdin.read()
server.stop()
"""


class Served:
    """A running server: its base URL and how much CPU its process has used so far."""

    def __init__(self, base_url: str, pid: int | None) -> None:
        self.base_url, self.pid = base_url, pid

    def cpu_s(self) -> float:
        if self.pid is None:
            return 0.0
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def served(delay: float, in_process: bool) -> Iterator[Served]:
    """A scripted server that answers every request after `delay` seconds."""
    if in_process:
        scripted = runpy.run_path(str(SERVER))["ScriptedServer"]
        with scripted(default_delay=delay) as server:
            yield Served(server.openai_url, None)
        return
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(SERVER), str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        port = process.stdout.readline().strip()
        has_proc = Path(f"/proc/{process.pid}/stat").exists()
        yield Served(f"http://127.0.0.1:{port}/v1", process.pid if has_proc else None)
    finally:
        process.stdin.close()
        process.wait(timeout=10)
        process.stdout.close()


def model(base_url: str, concurrency: int) -> ModelSettings:
    return ModelSettings(
        name="target",
        provider="openai",
        model="gpt-bench",
        base_url=base_url,
        api_key_env=KEY_ENV,
        temperature=0.0,
        max_tokens=256,
        top_p=None,
        reasoning_effort=None,
        concurrency=concurrency,
        rpm=None,
        tpm=None,
        timeout_s=30.0,
        retries=5,
        replay_from=None,
        gguf=None,
        price=Price(input_usd=0.15, output_usd=0.6, per=1_000_000, source="recipe"),
    )


def requests(n: int) -> list[Request]:
    return [
        Request(
            model="target",
            messages=(
                Message("system", "You answer arithmetic questions with a number."),
                Message("user", f"Question {i}: what is {i} + {i}?"),
            ),
            phase="rollout",
        )
        for i in range(n)
    ]


class Instant:
    """A backend that answers at once: what is left is the layer's own cost."""

    async def complete(self, request: Request, params: Params) -> Completion:
        return Completion(request.messages[-1].content, 20, 5, "stop", 0.0)

    async def aclose(self) -> None:
        pass


def layer(settings: ModelSettings, backend: Backend, folder: Path, cache: bool) -> CallLayer:
    return CallLayer(
        {settings.name: settings},
        {settings.name: backend},
        Ledger(Budget()),
        JsonlSink(folder / "events.jsonl"),
        cache=ResponseCache(folder / "cache.sqlite") if cache else None,
    )


def close(calls: CallLayer) -> None:
    if calls.cache is not None:
        calls.cache.close()
    sink = calls.sink
    if isinstance(sink, JsonlSink):
        sink.close()


async def timed(run: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


async def costed(
    run: Callable[[], Awaitable[object]], server: Served
) -> tuple[float, float, float]:
    """(wall s, this process's CPU s, the server process's CPU s) for one run."""
    cpu, server_cpu = time.process_time(), server.cpu_s()
    wall = await timed(run)
    return wall, time.process_time() - cpu, server.cpu_s() - server_cpu


async def bounded(call: Callable[[Request], Awaitable[Completion]], batch: list[Request], n: int):
    """`call` over `batch`, at most `n` at a time (the layer bounds itself; the SDK alone not)."""
    gate = asyncio.Semaphore(n)

    async def one(request: Request) -> Completion:
        async with gate:
            return await call(request)

    return await asyncio.gather(*(one(r) for r in batch))


async def over_http(
    args: argparse.Namespace, server: Served, folder: Path
) -> dict[str, tuple[float, float, float]]:
    settings = model(server.base_url, args.concurrency)
    batch = requests(args.calls)
    backend = OpenAIBackend(settings)
    params = params_of(settings)
    try:
        await bounded(lambda r: backend.complete(r, params), batch[:64], args.concurrency)  # warm
        sdk = await costed(
            lambda: bounded(lambda r: backend.complete(r, params), batch, args.concurrency),
            server,
        )
        calls = layer(settings, backend, folder, cache=True)
        through = await costed(lambda: asyncio.gather(*(calls.call(r) for r in batch)), server)
        cached = await costed(lambda: asyncio.gather(*(calls.call(r) for r in batch)), server)
        close(calls)
    finally:
        await backend.aclose()
    return {"sdk": sdk, "layer": through, "cached": cached}


async def overhead(args: argparse.Namespace, folder: Path) -> dict[str, float]:
    """Microseconds per call that the layer adds to an instant backend, one call at a time."""
    settings = model("http://127.0.0.1:9/v1", args.concurrency)
    batch = requests(args.calls)
    backend = Instant()
    params = params_of(settings)

    async def alone() -> None:
        for r in batch:
            await backend.complete(r, params)

    results: dict[str, float] = {"bare": await timed(alone)}
    for name, cache in (("no cache", False), ("cache", True)):
        here = folder / name.replace(" ", "-")
        here.mkdir()
        calls = layer(settings, backend, here, cache=cache)

        async def through(calls: CallLayer = calls) -> None:
            for r in batch:
                await calls.call(r)

        results[name] = await timed(through)
        close(calls)
    bare = results["bare"]
    return {k: (v - bare) / len(batch) * 1e6 for k, v in results.items() if k != "bare"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--in-process", action="store_true", help="server threads in this process")
    parser.add_argument("--quick", action="store_true", help="100 calls (CI)")
    args = parser.parse_args()
    if args.quick:
        args.calls = 100
    os.environ[KEY_ENV] = "sk-bench-not-a-real-key"
    ideal = args.calls * args.delay / args.concurrency

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "http").mkdir()
        with served(args.delay, args.in_process) as server:
            runs = asyncio.run(over_http(args, server, folder / "http"))
        (folder / "instant").mkdir()
        cost = asyncio.run(overhead(args, folder / "instant"))

    table(args, ideal, runs, cost)


def table(
    args: argparse.Namespace,
    ideal: float,
    runs: dict[str, tuple[float, float, float]],
    cost: dict[str, float],
) -> None:
    n = args.calls
    where = "in this process" if args.in_process else "in its own process"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{n} calls, concurrency {args.concurrency}, server answers after {args.delay * 1000:g} ms"
        f" ({where}); ideal {ideal:.3f} s; {os.cpu_count()} CPUs, load average {load}\n"
    )

    def cpu(run: str) -> tuple[str, str]:
        _, client, server = runs[run]
        return f"{client / n * 1e6:.0f}", f"{server / n * 1e6:.0f}" if server else "-"

    sdk, through, cached = runs["sdk"][0], runs["layer"][0], runs["cached"][0]
    rate = n / cached
    rows = [
        ("SDK alone, no layer: wall / ideal", f"{sdk / ideal:.2f}x ({sdk:.3f} s)", "", "",
         *cpu("sdk")),
        ("layer over the SDK: wall / ideal", f"{through / ideal:.2f}x ({through:.3f} s)",
         f"<= {GOAL_RATIO}x", verdict(through / ideal <= GOAL_RATIO), *cpu("layer")),
        ("layer overhead, cache + events", f"{cost['cache']:.0f} us/call",
         f"<= {GOAL_OVERHEAD_US:g} us", verdict(cost["cache"] <= GOAL_OVERHEAD_US), "", ""),
        ("layer overhead, events, no cache", f"{cost['no cache']:.0f} us/call", "", "", "", ""),
        ("cached re-run", f"{rate:,.0f} calls/s", f">= {GOAL_CACHED:,.0f} calls/s",
         verdict(rate >= GOAL_CACHED), *cpu("cached")),
    ]  # fmt: skip
    header = ("measure", "measured", "goal", "met", "client CPU us/call", "server CPU us/call")
    widths = [max(len(r[i]) for r in [*rows, header]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")


def verdict(met: bool) -> str:
    return "yes" if met else "NO"


if __name__ == "__main__":
    main()

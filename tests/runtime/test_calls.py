"""The call layer end to end: real SDKs, a local server, the SQLite cache, the ledger, events.

Retries, Retry-After, the cache (hits, re-samples, damage, concurrent writers), replay, budgets
under 64 concurrent calls, and no API key in any artifact.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

from skopt.compiler.plan import Budget, ModelSettings, Price
from skopt.runtime.backends import backend_for, params_of
from skopt.runtime.backends.replay import ReplayBackend
from skopt.runtime.cache import ResponseCache
from skopt.runtime.calls import CallLayer, usd, worst_input_tokens
from skopt.runtime.errors import BudgetExhausted, CacheDamaged, CallFailed, ReplayMiss
from skopt.runtime.events import CallEvent, JsonlSink, ListSink
from skopt.runtime.ledger import Cost, Ledger
from skopt.runtime.ratelimit import RateLimit
from skopt.runtime.request import Completion, Message, Request
from tests.runtime.conftest import KEY, PROVIDERS, settings, url_for
from tests.runtime.server import Reply, ScriptedServer, Seen, error_body, json_reply

pytestmark = pytest.mark.usefixtures("key")

T = TypeVar("T")

ORIGIN = ("m", "target", "test")  # who asked, for rows written directly


def ask(text: str, **fields: object) -> Request:
    return Request(
        model="m",
        messages=(Message("system", "Be brief."), Message("user", text)),
        **fields,  # type: ignore[arg-type]
    )


@dataclass
class Rig:
    """A call layer over one model, with what it reports kept for the test."""

    layer: CallLayer
    ledger: Ledger
    sink: ListSink
    slept: list[float] = field(default_factory=list)

    @property
    def events(self) -> list[CallEvent]:
        return self.sink.events


@contextlib.asynccontextmanager
async def rig(
    model: ModelSettings,
    budget: Budget | None = None,
    cache: ResponseCache | None = None,
    sink: ListSink | JsonlSink | None = None,
    real_sleep: bool = False,
) -> AsyncIterator[Rig]:
    backend = backend_for(model)
    ledger = Ledger(budget or Budget())
    kept = ListSink()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(0)

    class Both:
        def emit(self, event: CallEvent) -> None:
            kept.emit(event)
            if sink is not None:
                sink.emit(event)

    layer = CallLayer(
        {model.name: model},
        {model.name: backend},
        ledger,
        Both(),
        cache=cache,
        sleep=asyncio.sleep if real_sleep else sleep,
    )
    try:
        yield Rig(layer, ledger, kept, slept)
    finally:
        await backend.aclose()


def run(model: ModelSettings, body: Callable[[Rig], Awaitable[T]], **options: object) -> T:
    async def go() -> T:
        async with rig(model, **options) as r:  # type: ignore[arg-type]
            return await body(r)

    return asyncio.run(go())


def openai(server: ScriptedServer, **overrides: object) -> ModelSettings:
    return settings("openai", server.openai_url, **overrides)


# -- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500_then_success_is_retried(server: ScriptedServer, provider: str) -> None:
    server.script(json_reply(500, "hiccup"), Reply(text="fine"))
    model = settings(provider, url_for(server, provider))

    async def body(r: Rig) -> tuple[Completion, Rig]:
        return await r.layer.call(ask("q")), r

    done, r = run(model, body)
    assert done.text == "fine"
    assert server.count() == 2
    (event,) = r.events
    assert (event.ok, event.retries, event.cache_hit) == (True, 1, False)
    assert (event.input_tokens, event.output_tokens) == (11, 7)
    assert event.usd == pytest.approx((11 * 1.0 + 7 * 2.0) / 1_000_000)
    assert len(r.slept) == 1
    assert r.ledger.spent == Cost(1, 11, 7, event.usd)


@pytest.mark.parametrize(
    "failure",
    [Reply(delay=1.0), Reply(drop=True), json_reply(503, "busy"), json_reply(429, "slow")],
    ids=["timeout", "dropped", "503", "429"],
)
def test_transient_failures_are_retried(server: ScriptedServer, failure: Reply) -> None:
    server.script(failure, Reply(text="fine"))

    async def body(r: Rig) -> tuple[Completion, Rig]:
        return await r.layer.call(ask("q")), r

    done, r = run(openai(server, timeout_s=0.3), body)
    assert done.text == "fine" and server.count() == 2
    assert [e.retries for e in r.events] == [1]


def test_429_retry_after_is_honoured(server: ScriptedServer) -> None:
    server.script(json_reply(429, "slow down", **{"Retry-After": "3"}), Reply(text="fine"))

    async def body(r: Rig) -> list[float]:
        await r.layer.call(ask("q"))
        return r.slept

    slept = run(openai(server), body)
    assert len(slept) == 1 and slept[0] >= 3.0


def test_429_retry_after_really_waits(server: ScriptedServer) -> None:
    server.script(json_reply(429, "slow down", **{"Retry-After": "1"}), Reply(text="fine"))

    async def body(r: Rig) -> float:
        start = time.perf_counter()
        await r.layer.call(ask("q"))
        return time.perf_counter() - start

    elapsed = run(openai(server), body, real_sleep=True)
    assert elapsed >= 1.0
    assert server.count() == 2


def test_backoff_grows_and_has_jitter(server: ScriptedServer) -> None:
    server.script(*[json_reply(500, "down")] * 4)

    async def body(r: Rig) -> list[float]:
        with pytest.raises(CallFailed):
            await r.layer.call(ask("q"))
        return r.slept

    slept = run(openai(server, retries=3), body)
    assert len(slept) == 3
    assert all(0 <= s <= 0.5 * 2**i for i, s in enumerate(slept))
    assert len(set(slept)) == 3


def test_400_is_not_retried(server: ScriptedServer) -> None:
    server.script(json_reply(400, "bad request"))

    async def body(r: Rig) -> tuple[CallFailed, Rig]:
        with pytest.raises(CallFailed) as caught:
            await r.layer.call(ask("q"))
        return caught.value, r

    error, r = run(openai(server), body)
    assert error.status == 400 and not error.retryable
    assert server.count() == 1 and r.slept == []
    (event,) = r.events
    assert not event.ok and event.retries == 0 and "bad request" in event.error
    assert r.ledger.spent == Cost() and nothing_reserved(r.ledger)


def test_retries_run_out(server: ScriptedServer) -> None:
    server.script(*[json_reply(502, "gateway")] * 3)

    async def body(r: Rig) -> Rig:
        with pytest.raises(CallFailed, match="502"):
            await r.layer.call(ask("q"))
        return r

    r = run(openai(server, retries=2), body)
    assert server.count() == 3
    assert [(e.ok, e.retries) for e in r.events] == [(False, 2)]
    assert nothing_reserved(r.ledger) and r.ledger.spent == Cost()


# -- concurrency and rate limits ---------------------------------------------------------------


def test_concurrency_per_model(server: ScriptedServer) -> None:
    server.default_delay = 0.1

    async def body(r: Rig) -> list[Completion]:
        return await asyncio.gather(*(r.layer.call(ask(f"q{i}")) for i in range(8)))

    done = run(openai(server, concurrency=3), body)
    assert [d.text for d in done] == [f"echo: q{i}" for i in range(8)]
    assert server.max_in_flight == 3


def test_rate_limit_waits_for_the_window() -> None:
    now = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limit = RateLimit(rpm=2, tpm=None, clock=lambda: now[0], sleep=sleep)

    async def go() -> None:
        for _ in range(3):
            await limit.acquire(10)
            now[0] += 1.0

    asyncio.run(go())
    assert waits == [58.0]


def test_token_rate_limit() -> None:
    now = [0.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    limit = RateLimit(rpm=None, tpm=100, clock=lambda: now[0], sleep=sleep)

    async def go() -> list[float]:
        times = []
        for _ in range(3):
            await limit.acquire(60)
            times.append(now[0])
        return times

    assert asyncio.run(go()) == [0.0, 60.0, 120.0]


# -- cache ------------------------------------------------------------------------------------


def test_second_identical_call_is_a_cache_hit(server: ScriptedServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")

    async def body(r: Rig) -> tuple[Completion, Completion, Rig]:
        first = await r.layer.call(ask("q", phase="rollout"))
        second = await r.layer.call(ask("q", phase="gate", role="optimizer"))
        return first, second, r

    first, second, r = run(openai(server), body, cache=cache)
    cache.close()
    assert server.count() == 1
    assert second.text == first.text
    assert [(e.cache_hit, e.usd) for e in r.events] == [(False, pytest.approx(25e-6)), (True, 0)]
    assert r.ledger.spent.calls == 1
    assert r.ledger.account("optimizer", "gate").cache_hits == 1


def test_deliberate_resample_is_a_new_request(server: ScriptedServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    server.script(Reply(text="one"), Reply(text="two"))

    async def body(r: Rig) -> list[str]:
        answers = [await r.layer.call(ask("q", sample=s)) for s in (0, 1, 0, 1)]
        return [a.text for a in answers]

    assert run(openai(server), body, cache=cache) == ["one", "two", "one", "two"]
    cache.close()
    assert server.count() == 2


def test_cache_outlives_the_layer(server: ScriptedServer, tmp_path: Path) -> None:
    """A resumed run answers every completed call from the cache: nothing is paid twice."""
    path = tmp_path / "cache.sqlite"

    async def body(r: Rig) -> list[Completion]:
        return await asyncio.gather(*(r.layer.call(ask(f"q{i}")) for i in range(5)))

    for _ in range(2):
        cache = ResponseCache(path)
        done = run(openai(server), body, cache=cache)
        cache.close()
        assert [d.text for d in done] == [f"echo: q{i}" for i in range(5)]
    assert server.count() == 5


def test_failures_are_not_cached(server: ScriptedServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    server.script(json_reply(400, "no"))

    async def body(r: Rig) -> str:
        with pytest.raises(CallFailed):
            await r.layer.call(ask("q"))
        return (await r.layer.call(ask("q"))).text

    assert run(openai(server), body, cache=cache) == "echo: q"
    cache.close()
    assert server.count() == 2


def test_junk_cache_file_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database\x00\xff" * 200)
    with pytest.raises(CacheDamaged, match=r"cache\.sqlite"):
        ResponseCache(path)
    with pytest.raises(CacheDamaged):
        ResponseCache(path, readonly=True)


def filled_cache(path: Path, rows: int) -> None:
    cache = ResponseCache(path)
    for i in range(rows):
        cache.put(
            f"k{i}", f"c{i}", ORIGIN, f'{{"n":{i}}}', Completion("x" * 500, 1, 2, "stop", 0.1)
        )
    cache.close()


def test_truncated_cache_file_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    filled_cache(path, 200)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CacheDamaged):
        ResponseCache(path)


def test_overwritten_pages_are_damaged(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    filled_cache(path, 200)
    data = bytearray(path.read_bytes())
    page = 4096
    data[2 * page : 4 * page] = b"\xa5" * (2 * page)
    path.write_bytes(bytes(data))
    with pytest.raises(CacheDamaged):
        ResponseCache(path)


def test_cache_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "cache.sqlite"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(CacheDamaged, match="99"):
        ResponseCache(path)


def test_concurrent_writer_threads_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    shared = ResponseCache(path)
    errors: list[BaseException] = []

    def write(writer: int, own: bool) -> None:
        try:
            cache = ResponseCache(path) if own else shared
            for i in range(150):
                key = f"w{writer}-{i}"
                cache.put(key, key, ORIGIN, "{}", Completion(key, i, writer, "stop", 0.0))
                assert cache.get(key) is not None
            if own:
                cache.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w, w % 2 == 0)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(shared.requests()) == 8 * 150
    assert shared.get("w5-149") == Completion("w5-149", 149, 5, "stop", 0.0)
    shared.close()


WRITER = """
import sys
from pathlib import Path
from skopt.runtime.cache import ResponseCache
from skopt.runtime.request import Completion
cache = ResponseCache(Path(sys.argv[1]))
for i in range(100):
    key = f"p{sys.argv[2]}-{i}"
    cache.put(key, key, ("m", "target", "test"), "{}", Completion(key, i, 0, "stop", 0.0))
cache.close()
"""


def test_concurrent_writer_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(n)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    outcomes = [(w.communicate(timeout=60)[1], w.returncode) for w in writers]
    assert [stderr for stderr, code in outcomes if code != 0] == []
    cache = ResponseCache(path, readonly=True)
    assert len(cache.requests()) == 600
    cache.close()


def test_opening_waits_while_another_opener_holds_the_write_lock(tmp_path: Path) -> None:
    # Six processes opening one fresh cache: one holds the write lock to make the file WAL, and
    # SQLite fails another's `journal_mode=WAL` at once ("database is locked") instead of waiting.
    path = tmp_path / "cache.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, holder.execute, ("COMMIT",))
    release.start()
    cache = ResponseCache(path)
    release.join()
    assert cache._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    cache.close()
    holder.close()


# -- replay -----------------------------------------------------------------------------------


def record(server: ScriptedServer, folder: Path, texts: list[str]) -> ModelSettings:
    """A finished run's folder with a cache of answers to `texts` (phase 'rollout')."""
    folder.mkdir(parents=True)
    cache = ResponseCache(folder / "cache.sqlite")
    model = openai(server)

    async def body(r: Rig) -> None:
        for text in texts:
            await r.layer.call(ask(text, phase="rollout"))

    run(model, body, cache=cache)
    cache.close()
    return model


def replayer(recorded: ModelSettings, folder: Path) -> ModelSettings:
    """The same model block switched to `provider = replay` as a recipe would write it:
    same block name and sampling settings, the recording's folder, no key, no price."""
    return recorded.model_copy(
        update={
            "provider": "replay",
            "model": None,
            "base_url": None,
            "api_key_env": None,
            "replay_from": str(folder),
            "price": Price(input_usd=0, output_usd=0, per=1_000_000, source="free"),
        }
    )


def test_replay_backend_answers_what_was_recorded(server: ScriptedServer, tmp_path: Path) -> None:
    recorded = record(server, tmp_path / "run", ["q1", "q2"])

    async def go() -> Completion:
        backend = ReplayBackend(replayer(recorded, tmp_path / "run"))
        try:
            return await backend.complete(ask("q2"), params_of(recorded))
        finally:
            await backend.aclose()

    assert asyncio.run(go()).text == "echo: q2"


def test_replay_hit_through_the_layer(server: ScriptedServer, tmp_path: Path) -> None:
    recorded = record(server, tmp_path / "run", ["q1", "q2"])
    calls = server.count()

    async def body(r: Rig) -> list[str]:
        return [(await r.layer.call(ask(t, phase="rollout"))).text for t in ("q2", "q1")]

    assert run(replayer(recorded, tmp_path / "run"), body) == ["echo: q2", "echo: q1"]
    assert server.count() == calls  # offline


def test_replay_miss_names_the_phase_and_shows_a_diff(
    server: ScriptedServer, tmp_path: Path
) -> None:
    recorded = record(server, tmp_path / "run", ["What is the capital of France?", "other"])

    async def go() -> str:
        backend = ReplayBackend(replayer(recorded, tmp_path / "run"))
        try:
            with pytest.raises(ReplayMiss) as caught:
                request = ask("What is the capital of Spain?", phase="gate")
                await backend.complete(request, params_of(recorded))
            return str(caught.value)
        finally:
            await backend.aclose()

    message = asyncio.run(go())
    assert "'gate'" in message
    lines = message.splitlines()
    assert any(line.startswith("-") and "France" in line for line in lines)
    assert any(line.startswith("+") and "Spain" in line for line in lines)
    assert len(lines) <= 20


def test_replay_miss_through_the_layer_is_not_retried(
    server: ScriptedServer, tmp_path: Path
) -> None:
    recorded = record(server, tmp_path / "run", ["q1"])

    async def body(r: Rig) -> tuple[str, Rig]:
        with pytest.raises(ReplayMiss) as caught:
            await r.layer.call(ask("never asked", phase="reflect"))
        return str(caught.value), r

    message, r = run(replayer(recorded, tmp_path / "run"), body)
    assert "'reflect'" in message and "never asked" in message
    assert r.slept == [] and [e.ok for e in r.events] == [False]


def test_replay_of_a_missing_folder_is_reported(tmp_path: Path) -> None:
    model = settings("replay", None, model=None, replay_from=str(tmp_path / "x"))
    with pytest.raises(CacheDamaged):
        backend_for(model)


# -- budgets ----------------------------------------------------------------------------------


def fire(model: ModelSettings, budget: Budget, n: int = 64) -> tuple[list[object], Ledger]:
    async def body(r: Rig) -> tuple[list[object], Ledger]:
        calls = [r.layer.call(ask(f"question {i:02d}")) for i in range(n)]
        return await asyncio.gather(*calls, return_exceptions=True), r.ledger

    return run(model, body, budget=budget)


def nothing_reserved(ledger: Ledger) -> bool:
    """All reservations given back (USD up to float rounding of the running sums)."""
    held = ledger.reserved
    return (held.calls, held.tokens) == (0, 0) and abs(held.usd) < 1e-12


def tally(results: list[object]) -> tuple[int, int, list[object]]:
    ok = sum(isinstance(x, Completion) for x in results)
    refused = sum(isinstance(x, BudgetExhausted) for x in results)
    other = [x for x in results if not isinstance(x, Completion | BudgetExhausted)]
    return ok, refused, other


def test_call_budget_holds_under_64_concurrent_calls(server: ScriptedServer) -> None:
    server.default_delay = 0.02
    results, ledger = fire(openai(server, concurrency=64), Budget(calls=20))
    assert tally(results) == (20, 44, [])
    assert server.count() == 20
    assert ledger.spent.calls == 20 and nothing_reserved(ledger)
    refused = next(x for x in results if isinstance(x, BudgetExhausted))
    assert refused.limit == "calls"


def test_usd_budget_holds_under_64_concurrent_calls(server: ScriptedServer) -> None:
    server.default_delay = 0.02
    model = openai(server, concurrency=64, max_tokens=1000)
    worst = usd(model, worst_input_tokens(ask("question 00")), model.max_tokens)
    assert worst is not None
    limit = 20.5 * worst
    results, ledger = fire(model, Budget(usd=limit))
    assert tally(results)[:2] == (20, 44)
    assert server.count() == 20
    assert 0 < ledger.spent.usd <= limit and nothing_reserved(ledger)


def test_token_budget_holds_under_64_concurrent_calls(server: ScriptedServer) -> None:
    server.default_delay = 0.02
    model = openai(server, concurrency=64, max_tokens=100)
    worst = worst_input_tokens(ask("question 00")) + model.max_tokens
    results, ledger = fire(model, Budget(tokens=20 * worst + worst // 2))
    assert tally(results)[:2] == (20, 44)
    assert server.count() == 20
    assert ledger.spent.tokens <= 20 * worst


def test_budget_with_failures_and_retries(server: ScriptedServer) -> None:
    """Failed calls give their reservation back; the limit still holds exactly."""
    server.default_delay = 0.01
    server.script(*[json_reply(400, "no")] * 5, *[json_reply(500, "flaky")] * 10)
    results, ledger = fire(openai(server, concurrency=64), Budget(calls=30))
    ok, refused, other = tally(results)
    assert refused == 34 and ok + len(other) == 30
    assert all(isinstance(x, CallFailed) and x.status == 400 for x in other)
    assert ledger.spent.calls == ok <= 30 and nothing_reserved(ledger)


def test_released_reservation_can_be_spent_again(server: ScriptedServer) -> None:
    server.script(json_reply(400, "no"))

    async def body(r: Rig) -> Ledger:
        with pytest.raises(CallFailed):
            await r.layer.call(ask("a"))
        await r.layer.call(ask("b"))
        with pytest.raises(BudgetExhausted):
            await r.layer.call(ask("c"))
        return r.ledger

    ledger = run(openai(server), body, budget=Budget(calls=1))
    assert ledger.spent.calls == 1 and server.count() == 2


def test_cache_hits_cost_no_budget(server: ScriptedServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")

    async def body(r: Rig) -> Ledger:
        for _ in range(5):
            await r.layer.call(ask("same"))
        return r.ledger

    ledger = run(openai(server), body, budget=Budget(calls=1), cache=cache)
    cache.close()
    assert ledger.spent.calls == 1 and server.count() == 1


# -- secrets ----------------------------------------------------------------------------------


def echo_credentials(seen: Seen) -> bytes:
    return error_body(f"rejected {seen.headers.get('authorization')} {KEY} {seen.headers}")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_key_in_any_artifact(server: ScriptedServer, tmp_path: Path, provider: str) -> None:
    sink = JsonlSink(tmp_path / "events.jsonl")
    cache = ResponseCache(tmp_path / "cache.sqlite")
    server.script(
        Reply(status=500, body=echo_credentials),
        Reply(text="fine"),
        Reply(status=400, body=echo_credentials),
        Reply(status=401, body=echo_credentials),
        *[Reply(status=429, body=echo_credentials)] * 3,
    )
    model = settings(provider, url_for(server, provider), retries=2)
    errors: list[BaseException] = []

    async def body(r: Rig) -> None:
        for text in ("a", "b", "c", "d"):
            try:
                await r.layer.call(ask(text))
            except Exception as exc:
                errors.append(exc)

    run(model, body, cache=cache, sink=sink)
    sink.close()
    cache.close()
    assert [type(e) for e in errors] == [CallFailed] * 3
    assert all(KEY in str(s.headers) for s in server.requests)
    for error in errors:
        assert KEY not in "".join(traceback.format_exception(error)) + repr(error)
    events = (tmp_path / "events.jsonl").read_text()
    assert events.count("\n") == 4 and "rejected" in events
    assert KEY not in events
    for path in tmp_path.iterdir():  # the cache and any -wal / -shm beside it
        if path.name.startswith("cache.sqlite"):
            assert KEY.encode() not in path.read_bytes(), path.name

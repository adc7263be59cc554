"""The call layer: every LLM call skopt makes goes through `CallLayer.call`.

In order: the cache (a hit costs nothing), a budget reservation of the call's worst case, the
model's concurrency slot and rate limit, the backend with a per-call timeout and retries
(exponential backoff with jitter, at least as long as the server's Retry-After; 429, 5xx,
timeouts and dropped connections only), then the actual cost is committed, the response
cached, and an event emitted.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from skopt.compiler.plan import ModelSettings
from skopt.compiler.tokens import PER_MESSAGE, PER_REPLY
from skopt.runtime.backends import Backend, params_of
from skopt.runtime.cache import ResponseCache
from skopt.runtime.errors import BudgetExhausted, CallFailed
from skopt.runtime.events import CallEvent, EventSink
from skopt.runtime.ledger import Cost, Ledger, Reservation
from skopt.runtime.ratelimit import RateLimit
from skopt.runtime.request import Completion, Request, cache_key, canonical, content_key
from skopt.runtime.shared import Answers, Paid

T = TypeVar("T")
MAX_BACKOFF = 60.0
MAX_RETRY_AFTER = 600.0  # a server asking for a longer wait fails the call instead


async def gathered(*work: Awaitable[T]) -> list[T]:
    """Every result, in order. When one fails, the others are cancelled and waited for before
    its error goes on, so that none runs on (into a journal closed by then) after the caller
    has given up."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        return list(await asyncio.gather(*tasks))
    except GeneratorExit:  # the loop is closing this coroutine: nothing may be awaited now
        raise
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def worst_input_tokens(request: Request) -> int:
    """An upper bound on input tokens: byte-level BPE never makes more tokens than bytes."""
    size = sum(len(m.content.encode()) + PER_MESSAGE for m in request.messages)
    return size + PER_REPLY


def usd(settings: ModelSettings, input_tokens: int, output_tokens: int) -> float | None:
    price = settings.price
    if price is None:
        return None
    return (input_tokens * price.input_usd + output_tokens * price.output_usd) / price.per


class CallLayer:
    def __init__(
        self,
        models: Mapping[str, ModelSettings],
        backends: Mapping[str, Backend],
        ledger: Ledger,
        sink: EventSink,
        cache: ResponseCache | None = None,
        read_cache: bool = True,  # False: ask every call anew (answers are still cached)
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        seed: int = 0,
        shared: Answers | None = None,  # a sweep's cache, shared with its other cells
    ) -> None:
        self.models, self.backends, self.ledger, self.sink, self.cache = (
            models,
            backends,
            ledger,
            sink,
            cache,
        )
        self.read_cache = read_cache
        self.shared = shared
        self._sleep = sleep
        self._jitter = random.Random(seed)
        self._slots = {name: asyncio.Semaphore(m.concurrency) for name, m in models.items()}
        self._limits = {name: RateLimit(m.rpm, m.tpm, sleep=sleep) for name, m in models.items()}
        self._in_flight: dict[str, asyncio.Future[Completion]] = {}
        self._settled = asyncio.Event()  # set whenever a reservation is committed or released

    async def call(self, request: Request) -> Completion:
        """The completion of `request`; identical requests in flight at once are paid once."""
        key = cache_key(request, params_of(self.models[request.model]))
        running = self._in_flight.get(key)
        if running is not None:
            completion = await asyncio.shield(running)
            self.ledger.cache_hit(request.role, request.phase)
            self._emit(request, completion, usd=0.0, retries=0, cache_hit=True, key=key)
            return completion
        task = asyncio.ensure_future(self._call(request, key))
        self._in_flight[key] = task
        try:
            return await task
        finally:
            self._in_flight.pop(key, None)

    async def _call(self, request: Request, key: str) -> Completion:
        cached = self.cache.get(key) if self.cache and self.read_cache else None
        if cached is not None:
            self.ledger.cache_hit(request.role, request.phase)
            self._emit(request, cached, usd=0.0, retries=0, cache_hit=True, key=key)
            return cached
        if self.shared is not None and self.read_cache:
            answer = await self.shared.claim(self.ledger.taker, key)
            if answer is not None:  # another run paid for it
                return self._shared_answer(request, key, answer)
        try:
            return await self._paid(request, key)
        except BaseException:
            if self.shared is not None:  # whoever waits for this answer asks for it anew
                await asyncio.shield(self.shared.settle(self.ledger.taker, key, None))
            raise

    def _shared_answer(self, request: Request, key: str, answer: Completion) -> Completion:
        if self.cache:  # kept with the run, as not paid by it, so that a resume finds it
            params = params_of(self.models[request.model])
            origin = (request.model, request.role, request.phase)
            self.cache.put(
                key, content_key(request), origin, canonical(request, params), answer, run=""
            )
        self.ledger.cache_hit(request.role, request.phase)
        self._emit(request, answer, usd=0.0, retries=0, cache_hit=True, key=key, shared=True)
        return answer

    async def _paid(self, request: Request, key: str) -> Completion:
        """Ask the backend, within a reservation of the call's worst case; the answer is cached
        (and shared) before anything else, so that no call is paid twice."""
        settings = self.models[request.model]
        params = params_of(settings)
        worst_in = worst_input_tokens(request)
        worst_usd = usd(settings, worst_in, settings.max_tokens) or 0.0
        reservation = await self._reserve(
            request, Cost(1, worst_in, settings.max_tokens, worst_usd)
        )
        try:
            async with self._slots[request.model]:
                await self._limits[request.model].acquire(worst_in + settings.max_tokens)
                completion, retries = await self._attempts(request, settings)
        except BaseException as exc:
            await self.ledger.release(reservation)
            self._settled.set()
            self._failed(request, exc)
            raise
        origin = (request.model, request.role, request.phase)
        paid = Paid(content_key(request), origin, canonical(request, params), completion)
        if self.cache:
            self.cache.put(key, paid.content_key, origin, paid.request, completion)
        # An answer that was paid for is booked whole (budget, the sweep's cache, journal) even
        # if the run is interrupted meanwhile: booked in part, another cell would pay it again.
        books = asyncio.ensure_future(self._book(request, key, reservation, paid, retries))
        try:
            return await asyncio.shield(books)
        except asyncio.CancelledError:
            await asyncio.wait({books})  # the books finish; how they end is their own
            raise

    async def _book(
        self, request: Request, key: str, reservation: Reservation, paid: Paid, retries: int
    ) -> Completion:
        completion = paid.completion
        if self.shared is not None:  # first: another cell may be waiting for this answer
            await self.shared.settle(self.ledger.taker, key, paid)
        cost = usd(self.models[request.model], completion.input_tokens, completion.output_tokens)
        actual = Cost(1, completion.input_tokens, completion.output_tokens, cost or 0.0)
        await self.ledger.commit(
            reservation, actual, request.role, request.phase, completion.latency_s
        )
        self._settled.set()
        self._emit(request, completion, usd=cost, retries=retries, cache_hit=False, key=key)
        return completion

    async def _reserve(self, request: Request, worst: Cost) -> Reservation:
        """Reserve the call's worst case. Inside a unit's hold, a call that does not fit waits
        while other calls are in flight: each gives back to the hold what it did not use."""
        while True:
            try:
                return await self.ledger.reserve(worst)
            except BudgetExhausted as exc:
                if self.ledger.open is None or self.ledger.in_flight == 0:
                    self._failed(request, exc)
                    raise
            self._settled.clear()
            await self._settled.wait()

    async def _attempts(self, request: Request, settings: ModelSettings) -> tuple[Completion, int]:
        backend = self.backends[request.model]
        params = params_of(settings)
        for attempt in range(settings.retries + 1):
            try:
                answer = await asyncio.wait_for(
                    backend.complete(request, params), settings.timeout_s
                )
                return answer, attempt
            except TimeoutError:
                failure = CallFailed(f"no answer within {settings.timeout_s:g}s", retryable=True)
            except CallFailed as exc:
                failure = exc
            too_long = failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER
            if not failure.retryable or attempt == settings.retries or too_long:
                failure.retries = attempt
                raise failure
            await self._sleep(self.backoff(attempt, failure.retry_after))
        raise AssertionError("unreachable")

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential with full jitter, never shorter than the server asked for."""
        delay = self._jitter.uniform(0, min(MAX_BACKOFF, 0.5 * 2**attempt))
        return max(delay, retry_after) if retry_after is not None else delay

    def _emit(
        self,
        request: Request,
        completion: Completion,
        usd: float | None,
        retries: int,
        cache_hit: bool,
        key: str,
        shared: bool = False,
    ) -> None:
        self.sink.emit(
            CallEvent(
                role=request.role,
                phase=request.phase,
                model=request.model,
                input_tokens=0 if cache_hit else completion.input_tokens,
                output_tokens=0 if cache_hit else completion.output_tokens,
                usd=usd,
                latency_s=0.0 if cache_hit else completion.latency_s,
                retries=retries,
                cache_hit=cache_hit,
                shared=shared,
                ok=True,
                key=key,
            )
        )

    def _failed(self, request: Request, exc: BaseException) -> None:
        self.sink.emit(
            CallEvent(
                role=request.role,
                phase=request.phase,
                model=request.model,
                input_tokens=0,
                output_tokens=0,
                usd=0.0,
                latency_s=0.0,
                retries=getattr(exc, "retries", 0),
                cache_hit=False,
                ok=False,
                error=str(exc) or type(exc).__name__,
            )
        )

"""Requests and tokens per minute, per model: a sliding window that makes callers wait."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

WINDOW = 60.0


class RateLimit:
    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep = clock, sleep
        self._sent: deque[tuple[float, int]] = deque()  # (when, tokens) within the window

    async def acquire(self, tokens: int) -> None:
        if self.rpm is None and self.tpm is None:
            return
        while (wait := self._wait(tokens)) > 0:
            await self._sleep(wait)
        self._sent.append((self._clock(), tokens))

    def _wait(self, tokens: int) -> float:
        now = self._clock()
        while self._sent and self._sent[0][0] <= now - WINDOW:
            self._sent.popleft()
        if not self._sent:
            return 0.0
        full_rpm = self.rpm is not None and len(self._sent) >= self.rpm
        used = sum(t for _, t in self._sent)
        full_tpm = self.tpm is not None and used + tokens > self.tpm
        return self._sent[0][0] + WINDOW - now if full_rpm or full_tpm else 0.0

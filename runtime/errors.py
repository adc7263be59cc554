"""Errors of the call layer. Backends translate SDK exceptions into `CallFailed` at their
boundary, saying whether trying again can help; nothing here ever carries an API key."""

from __future__ import annotations


class CallFailed(Exception):
    """A call that did not produce a completion."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.retries = 0  # attempts made before giving up, set by the call layer


class BudgetExhausted(Exception):
    """The rest of the budget cannot pay for what was asked; nothing was spent."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


class ReplayMiss(Exception):
    """A replayed run was asked a request it never recorded."""


class CacheDamaged(Exception):
    """The response cache file is not a sound SQLite database of ours."""


class MissingKey(Exception):
    """The environment variable that should hold an API key is not set."""


class LocalModelUnavailable(Exception):
    """A local model that cannot run here: the `local` extra or the model's packages are not
    installed, or its weights are missing or damaged. The message says what to install."""

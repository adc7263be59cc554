"""Shared by the SDK backends: HTTP failures → `CallFailed`, with Retry-After read and secrets
kept out of every message."""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Iterator, Mapping
from types import ModuleType

from skopt.runtime.errors import CallFailed

# 408 and 409 are the provider's own "try again" answers; 429 is a rate limit; 5xx the server's
RETRYABLE_STATUS = {408, 409, 429}


def from_status(
    provider: str, status: int, headers: Mapping[str, str], detail: str, key: str
) -> CallFailed:
    retryable = status in RETRYABLE_STATUS or status >= 500
    return CallFailed(
        f"{provider} answered HTTP {status}: {redact(detail, key)[:300]}",
        retryable=retryable,
        status=status,
        retry_after=retry_after(headers) if retryable else None,
    )


def connection_failed(provider: str, what: str, detail: str, key: str) -> CallFailed:
    return CallFailed(f"{provider} {what}: {redact(detail, key)[:300]}", retryable=True)


def redact(text: str, key: str) -> str:
    return text.replace(key, "[redacted]") if key else text


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `Retry-After-Ms` or `Retry-After` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lowered.get(name)
        if not value:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        try:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
    return None


@contextlib.contextmanager
def translated(sdk: ModuleType, provider: str, key: str) -> Iterator[None]:
    """The SDK's exceptions (openai and anthropic share their names) as `CallFailed`."""
    try:
        yield
    except sdk.APIStatusError as exc:
        detail = _detail(exc.body, str(exc.message))
        raise from_status(provider, exc.status_code, exc.response.headers, detail, key) from None
    except sdk.APITimeoutError:
        raise connection_failed(provider, "timed out", "no answer in time", key) from None
    except sdk.APIConnectionError as exc:
        raise connection_failed(provider, "connection failed", str(exc), key) from None
    except (sdk.APIError, ValueError) as exc:  # a body that is not an answer
        message = f"{provider} sent an unreadable answer: {redact(str(exc), key)[:300]}"
        raise CallFailed(message, retryable=True) from None


def _detail(body: object, fallback: str) -> str:
    """The server's own error message, when its body has one."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
    return fallback

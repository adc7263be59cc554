"""The SDK backends, through the real `openai` and `anthropic` SDKs against a local server.

Every failure must arrive as `CallFailed` that says whether trying again can help, after exactly
one HTTP request (the SDKs' own retries are off), and with the API key in no message.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
import traceback

import pytest

from skopt.compiler.plan import ModelSettings
from skopt.runtime.backends import Backend, backend_for, params_of
from skopt.runtime.errors import CallFailed, MissingKey
from skopt.runtime.request import Completion, Message, Request
from tests.runtime.conftest import KEY, KEY_ENV, PROVIDERS, settings, url_for
from tests.runtime.server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    Reply,
    ScriptedServer,
    Seen,
    error_body,
    json_reply,
    refused_url,
)

pytestmark = pytest.mark.usefixtures("key")

REQUEST = Request(
    model="m",
    messages=(
        Message("system", "You are terse."),
        Message("user", "What is 2+2?"),
    ),
)


def complete(model: ModelSettings, request: Request = REQUEST) -> Completion:
    async def go() -> Completion:
        backend: Backend = backend_for(model)
        try:
            return await backend.complete(request, params_of(model))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def failure(model: ModelSettings, request: Request = REQUEST) -> CallFailed:
    with pytest.raises(CallFailed) as caught:
        complete(model, request)
    return caught.value


def path_of(provider: str) -> str:
    return ANTHROPIC_PATH if provider == "anthropic" else OPENAI_PATH


# -- success --------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_success_text_and_usage(server: ScriptedServer, provider: str) -> None:
    server.script(Reply(text="4", input_tokens=123, output_tokens=45))
    done = complete(settings(provider, url_for(server, provider)))
    assert done.text == "4"
    assert (done.input_tokens, done.output_tokens) == (123, 45)
    assert done.finish_reason == ("end_turn" if provider == "anthropic" else "stop")
    assert done.latency_s > 0
    assert [r.path for r in server.requests] == [path_of(provider)]


def test_openai_request_carries_the_parameters(server: ScriptedServer) -> None:
    model = settings("openai", server.openai_url, top_p=0.9, reasoning_effort="low")
    complete(model)
    (seen,) = server.requests
    assert seen.body["model"] == "gpt-test"
    assert seen.body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is 2+2?"},
    ]
    assert seen.body["temperature"] == 0.3
    assert seen.body["max_tokens"] == 64
    assert seen.body["top_p"] == 0.9
    assert seen.body["reasoning_effort"] == "low"
    assert seen.headers["authorization"] == f"Bearer {KEY}"


def test_openai_leaves_out_unset_parameters(server: ScriptedServer) -> None:
    complete(settings("openai", server.openai_url))
    (seen,) = server.requests
    assert "top_p" not in seen.body and "reasoning_effort" not in seen.body


def test_anthropic_system_prompt_goes_in_the_system_field(server: ScriptedServer) -> None:
    complete(settings("anthropic", server.anthropic_url, top_p=0.8))
    (seen,) = server.requests
    assert seen.body["model"] == "claude-test"
    assert seen.body["system"] == "You are terse."
    assert seen.body["messages"] == [{"role": "user", "content": "What is 2+2?"}]
    assert seen.body["temperature"] == 0.3
    assert seen.body["max_tokens"] == 64
    assert seen.body["top_p"] == 0.8
    assert KEY in (seen.headers.get("x-api-key", "") + seen.headers.get("authorization", ""))


def test_anthropic_without_system_prompt_sends_no_system_field(server: ScriptedServer) -> None:
    request = Request(model="m", messages=(Message("user", "hi"),))
    complete(settings("anthropic", server.anthropic_url), request)
    (seen,) = server.requests
    assert "system" not in seen.body


# -- HTTP failures ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_with_retry_after_seconds(server: ScriptedServer, provider: str) -> None:
    server.script(json_reply(429, "slow down", **{"Retry-After": "7"}))
    error = failure(settings(provider, url_for(server, provider)))
    assert (error.retryable, error.status, error.retry_after) == (True, 429, 7.0)
    assert server.count() == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_with_retry_after_as_http_date(server: ScriptedServer, provider: str) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.script(json_reply(429, "slow down", **{"Retry-After": when}))
    error = failure(settings(provider, url_for(server, provider)))
    assert error.retryable and error.status == 429
    assert error.retry_after is not None and 27 <= error.retry_after <= 30
    assert server.count() == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_without_retry_after(server: ScriptedServer, provider: str) -> None:
    server.script(json_reply(429, "slow down"))
    error = failure(settings(provider, url_for(server, provider)))
    assert (error.retryable, error.status, error.retry_after) == (True, 429, None)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [500, 502, 503, 529])
def test_5xx_is_retryable(server: ScriptedServer, provider: str, status: int) -> None:
    server.script(json_reply(status, "overloaded"))
    error = failure(settings(provider, url_for(server, provider)))
    assert error.retryable and error.status == status
    assert "overloaded" in str(error)
    assert server.count() == 1


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_is_not_retryable(server: ScriptedServer, provider: str, status: int) -> None:
    server.script(json_reply(status, "bad request", **{"Retry-After": "3"}))
    error = failure(settings(provider, url_for(server, provider)))
    assert not error.retryable and error.status == status
    assert "bad request" in str(error)
    assert server.count() == 1


# -- transport failures ------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_is_retryable(server: ScriptedServer, provider: str) -> None:
    server.script(Reply(delay=1.5))
    start = time.perf_counter()
    error = failure(settings(provider, url_for(server, provider), timeout_s=0.3))
    assert error.retryable and error.status is None
    assert time.perf_counter() - start < 1.4  # gave up at the model's timeout, not the server's
    assert server.count() == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_connection_refused_is_retryable(provider: str) -> None:
    with refused_url() as url:
        base = url if provider == "anthropic" else url + "/v1"
        error = failure(settings(provider, base))
    assert error.retryable and error.status is None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_dropped_connection_is_retryable(server: ScriptedServer, provider: str) -> None:
    server.script(Reply(drop=True))
    error = failure(settings(provider, url_for(server, provider)))
    assert error.retryable and error.status is None
    assert server.count() == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_200_with_a_body_that_is_not_json(server: ScriptedServer, provider: str) -> None:
    server.script(Reply(body=b"<html>gateway hiccup</html>"))
    error = failure(settings(provider, url_for(server, provider)))
    assert error.retryable
    assert server.count() == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_200_with_a_text_body_that_is_not_json(server: ScriptedServer, provider: str) -> None:
    # served as text/plain the SDKs hand back a str instead of raising: still a CallFailed
    server.script(Reply(body=b"upstream busy", headers={"Content-Type": "text/plain"}))
    error = failure(settings(provider, url_for(server, provider)))
    assert error.retryable


@pytest.mark.parametrize("provider", PROVIDERS)
def test_200_with_json_that_is_not_a_completion(server: ScriptedServer, provider: str) -> None:
    server.script(Reply(body=b'{"status": "ok"}'))
    error = failure(settings(provider, url_for(server, provider)))
    assert error.retryable


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_http_request_per_call(server: ScriptedServer, provider: str) -> None:
    model = settings(provider, url_for(server, provider))
    server.script(json_reply(500, "a"), json_reply(429, "b"), Reply(drop=True))

    async def go() -> int:
        backend = backend_for(model)
        failed = 0
        try:
            for _ in range(4):
                try:
                    await backend.complete(REQUEST, params_of(model))
                except CallFailed:
                    failed += 1
        finally:
            await backend.aclose()
        return failed

    assert asyncio.run(go()) == 3
    assert server.count() == 4
    assert {r.headers.get("x-stainless-retry-count", "0") for r in server.requests} == {"0"}


# -- keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_missing_key_variable(
    server: ScriptedServer, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(MissingKey, match=KEY_ENV):
        backend_for(settings(provider, url_for(server, provider)))
    monkeypatch.setenv(KEY_ENV, "")
    with pytest.raises(MissingKey, match=KEY_ENV):
        backend_for(settings(provider, url_for(server, provider)))
    assert server.count() == 0


def echo_credentials(seen: Seen) -> bytes:
    """An error body that repeats the credentials it was sent, as a careless proxy might."""
    sent = seen.headers.get("authorization", "") + " " + seen.headers.get("x-api-key", "")
    return error_body(f"invalid credentials: {sent} (key {KEY})")


def every_text(error: BaseException) -> str:
    """The exception as anyone could see it: message, repr, and the printed traceback."""
    texts = [str(error), repr(error), *traceback.format_exception(error)]
    return "\n".join(texts)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_key_appears_in_no_exception(server: ScriptedServer, provider: str) -> None:
    model = settings(provider, url_for(server, provider), timeout_s=0.3)
    server.script(
        Reply(status=401, body=echo_credentials),
        Reply(status=400, body=echo_credentials),
        Reply(status=500, body=echo_credentials),
        Reply(status=429, body=echo_credentials, headers={"Retry-After": "1"}),
        Reply(body=echo_credentials, headers={"Content-Type": "application/json"}),
        Reply(body=echo_credentials, headers={"Content-Type": "text/plain"}),
        Reply(status=502, body=lambda seen: f"<html>{seen.headers}</html>".encode()),
        Reply(delay=1.0),
        Reply(drop=True),
    )
    errors: list[BaseException] = []
    for _ in range(9):
        try:
            complete(model)
        except Exception as error:
            errors.append(error)
    with refused_url() as url:
        try:
            complete(settings(provider, url if provider == "anthropic" else url + "/v1"))
        except Exception as error:
            errors.append(error)
    assert len(errors) == 10
    assert all(isinstance(e, CallFailed) for e in errors), [type(e) for e in errors]
    # the server really did see (and echo) the key, so redaction is what kept it out
    assert all(KEY in str(r.headers) for r in server.requests)
    for error in errors:
        assert KEY not in every_text(error)

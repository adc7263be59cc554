"""Redaction (transcripts README §7): each rule of redaction_rules.json finds its kind of secret
and leaves a typed placeholder; what is not a secret (ids, SHAs, token counts, PWD) is left
alone; values under secret-named keys go whatever they look like; every planted secret leaves
every string of every fixture record (toolUseResult copies and history.jsonl included); and a
second pass changes nothing."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from skopt.runtime.sleep.redact import (
    UNSETTLED,
    Redactor,
    default_redactor,
    is_secret_key,
    redact_text,
    redact_tree,
    strip_no_intent,
)
from tests.runtime.sleep.conftest import FIXTURES, SECRETS, strings

JWT = SECRETS["jwt"]
# One invented secret per rule (every one contains FAKE or is AWS's documented example).
SAMPLES = {
    "private_key": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEFAKEkeyBODY\nline2FAKE\n-----END RSA PRIVATE KEY-----"
    ),
    "anthropic": "sk-ant-api03-FAKEFAKEFAKEFAKEFAKEFAKE",
    "openai": "sk-proj-FAKEFAKEFAKEFAKEFAKEFAKE",
    "sk_generic": "sk-or-v1-FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE",
    "stripe": "sk_live_FAKEFAKEFAKEFAKE1234",
    "aws_id": "AKIAFAKEFAKEFAKEFAKE",
    "aws_secret": "aws_secret_access_key = FAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfake",
    "github": "ghp_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE",
    "gitlab": "glpat-FAKEFAKEFAKEFAKEFAKE",
    "slack": "xoxb-FAKE-1234567890-FAKE",
    "slack_hook": "https://hooks.slack.com/services/T0FAKE/B0FAKE/FAKEFAKEFAKE",
    "google": "AIzaFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAK",
    "google_oauth": "ya29.FAKEFAKEFAKEFAKEFAKEFAKE",
    "huggingface": "hf_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE",
    "npm": "npm_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE",
    "pypi": "pypi-AgEIcHlwaS5vcmc" + "FAKE" * 14,
    "prefixed_misc": "gsk_FAKEFAKEFAKEFAKEFAKEFAKE",
    "jwt": JWT,
    "auth_header": "Authorization: Basic FAKEFAKEFAKEFAKE",
    "bearer": "send it with bearer FAKEFAKEFAKEFAKEFAKE1234",
    "url_password": "redis://cache:FAKEpass@redis.internal:6379/0",
    "kv_password": "Server=db;Database=x;Password=FAKEpw42;",
    "env_assign": "export GITHUB_TOKEN=FAKEvalue42",
    "json_secret_field": 'config: {"client_secret": "FAKEvalue42"}',
}
SECRET_PARTS = {  # what must be gone from each sample (the rest may stay as context)
    "private_key": "MIIEFAKEkeyBODY",
    "aws_secret": "FAKEfakeFAKEfake",
    "auth_header": "FAKEFAKEFAKEFAKE",
    "bearer": "FAKEFAKEFAKEFAKEFAKE1234",
    "url_password": "FAKEpass",
    "kv_password": "FAKEpw42",
    "env_assign": "FAKEvalue42",
    "json_secret_field": "FAKEvalue42",
}
KEPT = [
    "PWD=/home/dana/src/invoicer",
    "commit dd5f7fcf899885ef3621060312820aa69158d87f",
    "uuid 04a54362-fd0c-4191-9709-985fe28ab17e",
    "msg_01NMFSLfqx8W6jnTP27jLhqr toolu_01hPcxfGBFViSE3BClhTRNph req_011CjZYdFqQnRRM4Z0o4QN7R",
    "call_nwoDpS77LOOvBITJD5jcDGoG 019feffa-b30e-7b74-8f34-251bcb968867",
    "....    [100%]\n4 passed in 0.31s",
    '"input_tokens": 21721, "cached_input_tokens": 19200, "total_tokens": 22752',
    "LOG_LEVEL=debug\nAPP_ENV=staging",
]


def test_every_rule_has_a_sample_and_the_packaged_rules_are_the_reference_ones() -> None:
    packaged = [rule.name for rule in default_redactor().rules]
    assert packaged == list(SAMPLES)
    reference = (FIXTURES / "redaction_rules.json").read_bytes()
    assert [r.pattern.pattern for r in Redactor.from_json(reference).rules] == [
        r.pattern.pattern for r in default_redactor().rules
    ]


def test_each_rule_removes_its_secret() -> None:
    for name, sample in SAMPLES.items():
        secret = SECRET_PARTS.get(name, sample)
        redacted = redact_text(f"before {sample} after")
        assert secret not in redacted, name
        assert "[REDACTED" in redacted, name
        assert redacted.startswith("before ") and redacted.endswith(" after"), name


def test_vendor_placeholders_are_typed() -> None:
    assert redact_text(SAMPLES["openai"]) == "[REDACTED:openai_key]"
    assert redact_text(SAMPLES["anthropic"]) == "[REDACTED:anthropic_key]"
    assert redact_text(f"AWS_SECRET_ACCESS_KEY={SECRETS['aws_secret']}") == (
        "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret]"
    )


def test_what_is_not_a_secret_is_kept() -> None:
    for text in KEPT:
        assert redact_text(text) == text


def test_values_under_secret_named_keys_go_and_token_counts_stay() -> None:
    tree = {
        "password": "abc",  # too short for any text rule
        "Authorization": "opaque",
        "api-key": "k1",
        "DB_PASSWORD": "pw",
        "access_token": "t",
        "credentials": {"user": "dana", "nested": ["x", 3]},
        "usage": {"input_tokens": 5, "max_tokens": 10, "total_token_usage": {"total_tokens": 7}},
        "PWD": "/home/dana",
        "note": f"key {SECRETS['openai']}",
        "empty_secret": "",
    }
    assert redact_tree(tree) == {
        "password": "[REDACTED]",
        "Authorization": "[REDACTED]",
        "api-key": "[REDACTED]",
        "DB_PASSWORD": "[REDACTED]",
        "access_token": "[REDACTED]",
        "credentials": {"user": "[REDACTED]", "nested": ["[REDACTED]", 3]},
        "usage": {"input_tokens": 5, "max_tokens": 10, "total_token_usage": {"total_tokens": 7}},
        "PWD": "/home/dana",
        "note": "key [REDACTED:openai_key]",
        "empty_secret": "",
    }


def test_secret_key_names() -> None:
    named = ["SESSION_SECRET", "client_secret", "passwd", "apiKey", "x-api-key", "refresh_token"]
    unnamed = ["input_tokens", "max_output_tokens", "token_count", "PWD", "cwd", "sessionId"]
    assert all(is_secret_key(k) for k in named)
    assert not any(is_secret_key(k) for k in unnamed)


def test_fields_with_no_intent_are_dropped() -> None:
    record = {
        "thinking": {"thinking": "plan", "signature": "sig"},
        "reasoning": {"summary": "s", "encrypted_content": "gAAA"},
        "result": {"filePath": "a.py", "originalFile": "whole file"},
        "image": {"type": "image", "source": {"type": "base64", "data": "iVBOR", "media": "png"}},
        "url": "data:image/png;base64,iVBORw0KGgo=",
    }
    assert strip_no_intent(record) == {
        "thinking": {"thinking": "plan"},
        "reasoning": {"summary": "s"},
        "result": {"filePath": "a.py"},
        "image": {"type": "image", "source": {"type": "base64", "media": "png"}},
        "url": "[image]",
    }


def fixture_records() -> list[object]:
    records: list[object] = []
    for path in sorted(FIXTURES.rglob("*.json*")):
        if path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            records.extend(json.loads(line) for line in lines if line.strip())
        elif path.name.endswith(".meta.json"):
            records.append(json.loads(path.read_text(encoding="utf-8")))
    return records


def test_every_planted_secret_leaves_every_string_of_every_fixture_record() -> None:
    records = fixture_records()
    before = "\n".join(strings(records))
    assert all(literal in before for literal in SECRETS.values())  # planted everywhere
    after = "\n".join(strings(redact_tree(records)))
    for name, literal in SECRETS.items():
        assert literal not in after, name


def test_a_second_pass_changes_nothing_on_the_fixtures() -> None:
    once = redact_tree(fixture_records())
    assert redact_tree(once) == once


FRAGMENTS = [*SAMPLES.values(), *SECRETS.values(), *KEPT, "password=", "Bearer ", "[REDACTED]"]
FRAGMENTS += ["=", ":", '"', "'", " ", "\n", ";", "@", "/", "x", "ABC_TOKEN", "export ", "→"]


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12))
def test_a_second_pass_changes_nothing(parts: list[str]) -> None:
    once = redact_text("".join(parts))
    assert redact_text(once) == once


def test_rules_load_from_their_json() -> None:
    rules = {"rules": [{"name": "x", "pattern": "(key=)\\w+", "replacement": "\\1[REDACTED:x]"}]}
    redactor = Redactor.from_json(json.dumps(rules))
    assert redactor.text("key=abc other") == "key=[REDACTED:x] other"


def test_a_chain_of_glued_secrets_is_redacted_whole_or_withheld() -> None:
    google, anthropic = "AIza" + "FAKE" * 8 + "FAK", "sk-ant-api03-" + "FAKE" * 6
    five = google * 4 + anthropic  # each needs the placeholder before it to open its boundary
    assert redact_text(five) == "[REDACTED:google_key]" * 4 + "[REDACTED:anthropic_key]"
    assert redact_text(google * 200) == UNSETTLED  # more than the passes: nothing half-done

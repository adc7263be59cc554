"""Price lookup: exact names, dated snapshots, free providers, and unknown models."""

from __future__ import annotations

from skopt.compiler.prices import lookup, table


def test_snapshot_names_take_the_longest_prefix() -> None:
    price = lookup("openai", "gpt-4o-mini-2024-07-18")
    assert price is not None and (price.input_usd, price.output_usd) == (0.15, 0.6)
    sonnet = lookup("anthropic", "claude-opus-4-1-20250805")
    assert sonnet is not None and sonnet.input_usd == 15.0


def test_variants_are_not_priced_as_their_base_model() -> None:
    assert lookup("openai", "gpt-4o-audio-preview") is None
    assert lookup("openai", "my-model") is None


def test_free_providers() -> None:
    for provider in ("sim", "local", "replay"):
        price = lookup(provider, None)
        assert price is not None and price.source == "free" and price.input_usd == 0


def test_table_is_dated() -> None:
    price = lookup("openai", "gpt-5")
    assert price is not None and price.source == f"table {table().as_of}"

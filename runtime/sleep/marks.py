"""The marks skopt leaves on the agent sessions it runs itself (replay, judge, reflect), so that
harvest never mines them (transcripts README §2.8, §3.3).

This module owns the three marks and the test for them: a sentinel first line in every prompt,
a scratch working directory whose name starts with `skopt-replay-`, and (Codex) the originator
`skopt_sleep`. The night writes them; harvest reads them. Any one of them makes a session
kind "self".
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath

SENTINEL = "<!-- skopt-internal:"  # opens the first line of every prompt skopt sends an agent
SCRATCH_PREFIX = "skopt-replay-"  # the scratch cwd: /tmp/skopt-replay-<id>/...
ORIGINATOR = "skopt_sleep"  # CODEX_INTERNAL_ORIGINATOR_OVERRIDE for skopt's Codex runs


def sentinel_line(detail: str) -> str:
    """The first line of a prompt skopt sends: `<!-- skopt-internal: replay v1 ... -->`."""
    return f"{SENTINEL} {detail} -->"


def is_scratch_cwd(cwd: str | None) -> bool:
    """A cwd inside a scratch dir, wherever the temp dir is (/tmp, /var/folders/.../T)."""
    if not cwd:
        return False
    return any(part.startswith(SCRATCH_PREFIX) for part in PurePath(cwd).parts)


def is_self_made(*, cwd: str | None, texts: Iterable[str], originator: str | None = None) -> bool:
    """Whether a session bears any of skopt's marks; `texts` are its user messages."""
    if originator == ORIGINATOR or is_scratch_cwd(cwd):
        return True
    return any(SENTINEL in text for text in texts)

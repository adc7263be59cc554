"""The hashes a plan is made from, and whether a saved plan is stale (and why).

A saved plan records hashes of the recipe (every file read, and the `--set` flags), the data,
the split assignment, the skill, the prompts, the prices, the model names and skopt's version.
`changes` lists, in words, every hash that no longer matches.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path

from skopt.compiler.overrides import COMMAND_LINE
from skopt.compiler.plan import EnvSettings, Hashes, Job, ModelSettings, SleepJob
from skopt.prompts import templates_hash

WHAT_CHANGED = {
    "recipe": "the recipe (or a file it imports, or a --set flag) changed",
    "data": "the env's data changed",
    "split": "the split assignment changed",
    "skill": "the initial skill changed",
    "prompts": "the prompt templates changed",
    "prices": "the prices changed",
    "models": "the models changed",
    "skopt": "skopt's version changed",
}


def version() -> str:
    try:
        return metadata.version("skopt")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


def _sha(parts: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _file(path: str | None) -> bytes:
    if path is None:
        return b"<none>"
    try:
        return Path(path).read_bytes()
    except OSError:
        return b"<missing>"


def hashes(
    recipe: str,
    sources: Mapping[str, str],
    sets: Sequence[str],
    envs: Sequence[EnvSettings],
    jobs: Sequence[Job],
    models: Sequence[ModelSettings],
    sleep: SleepJob | None = None,
) -> Hashes:
    """A sleep night's data are its sources, hashed as the roots they name: harvesting happens
    when the night runs, so what the folders hold is not part of the plan."""
    used_envs = {j.train.env for j in jobs}
    used_envs_settings = [e for e in envs if e.name in used_envs]
    skills = sorted(
        {j.train.skill or "" for j in jobs} | ({sleep.settings.skill} if sleep else set())
    )
    roots = [f"{s.kind}\0{s.root}".encode() for s in sleep.settings.sources] if sleep else []
    prompt_dirs = sorted({j.train.prompts or "" for j in jobs})
    return Hashes(
        recipe=_sha(
            [
                *(f"{p}\0{t}".encode() for p, t in sorted(_from_recipe(recipe, sources))),
                *(s.encode() for s in sets),
            ]
        ),
        data=_sha([*(_env_data(e) for e in used_envs_settings), *roots]),
        split=_sha(j.assignment_hash.encode() for j in jobs),
        skill=_sha(_file(s) if s else b"<empty>" for s in skills),
        prompts=_sha(
            [
                *(templates_hash(d or None).encode() for d in prompt_dirs),
                *(_file(e.prompt) for e in used_envs_settings),
            ]
        ),
        prices=_sha(
            json.dumps([m.name, m.price.model_dump() if m.price else None]).encode() for m in models
        ),
        models=_sha(json.dumps([m.name, m.provider, m.model, m.gguf]).encode() for m in models),
        skopt=hashlib.sha256(version().encode()).hexdigest(),
    )


def _from_recipe(recipe: str, sources: Mapping[str, str]) -> list[tuple[str, str]]:
    """Source texts keyed by their path from the recipe's folder, the same wherever skopt runs
    (the flags are hashed apart)."""
    folder = os.path.dirname(os.path.abspath(recipe))
    return [
        (os.path.relpath(os.path.abspath(path), folder), text)
        for path, text in sources.items()
        if path != COMMAND_LINE
    ]


def _env_data(env: EnvSettings) -> bytes:
    if env.kind == "synthetic":
        return json.dumps(env.kind_args, sort_keys=True).encode()
    files = [env.data] if env.data else [env.files[k] for k in sorted(env.files)]
    return b"\0".join(_file(f) for f in files)


# A sleep plan's data are its sources' roots, its skill the live file.
SLEEP_CHANGED = {"data": "the sources' roots changed", "skill": "the live skill changed"}


def changes(saved: Hashes, current: Hashes, sleep: bool = False) -> list[str]:
    """What changed between two sets of hashes, in words (a sleep plan's own words with
    `sleep`)."""
    old, new = saved.model_dump(), current.model_dump()
    words = {**WHAT_CHANGED, **SLEEP_CHANGED} if sleep else WHAT_CHANGED
    return [words[k] for k in old if old[k] != new[k]]

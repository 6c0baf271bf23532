"""Catalog databases: the service time of one commit in the database behind a catalog service.

PROVISIONAL: replaced by the measured module (studies/catalog_service).
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.errors import ConfigError


@dataclass(frozen=True)
class CatalogDatabase:
    name: str
    commit_median_ms: float
    commit_sigma: float
    commit_floor_ms: float
    concurrency: int
    source: str = ""


BUILT_IN = {
    "postgresql": CatalogDatabase("postgresql", 2.0, 0.4, 0.5, 8, "provisional"),
    "sqlite": CatalogDatabase("sqlite", 1.0, 0.5, 0.2, 1, "provisional"),
}


def catalog_database(name: str) -> CatalogDatabase:
    if name not in BUILT_IN:
        raise ConfigError("catalog_database", name, "one of " + ", ".join(BUILT_IN))
    return BUILT_IN[name]


def catalog_database_names() -> tuple[str, ...]:
    return tuple(BUILT_IN)

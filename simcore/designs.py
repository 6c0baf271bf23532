"""The commit designs users run, as named sets of config fields: what ``capacity --compare`` and the
architectures study put side by side (docs/architectures.md has each one's protocol and sources).

A design is data: the catalog, its metadata format or group commit, and the client whose retry settings
its commits use where the design has its own (DuckLake's extension, Delta Kernel). The Iceberg designs keep
the client the user asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from simcore.providers import Provider

# Clients whose commits are not Iceberg's: an Iceberg design given one of them takes the reference client.
NON_ICEBERG_CLIENTS = ("delta-rs", "ducklake", "delta-kernel")


@dataclass(frozen=True)
class Design:
    """One commit design: its name (``capacity --compare``'s ``design``), what it is, its config fields."""

    name: str
    summary: str
    fields: Mapping[str, object] = field(default_factory=dict)
    client: Optional[str] = None  # the design's own client preset; None: the one asked for
    writers_only: bool = False  # group commit: a committer per table, only for writers

    def applies_to(self, profile: Provider, writers: bool) -> bool:
        if self.writers_only and not writers:
            return False
        return self.fields.get("catalog") != "append" or profile.supports_append


GROUP_COMMIT_S = 10.0  # the study's and --compare's group-commit interval

DESIGNS = (
    Design("storage", "catalog in one object of the store, Iceberg v3 (a CAS of that object per commit)",
           {"catalog": "storage"}),
    Design("storage-v4", "catalog in one object, Iceberg v4 root manifests (no metadata file)",
           {"catalog": "storage", "metadata_format": "v4"}),
    Design("append", "catalog as a log object committed to by conditional appends",
           {"catalog": "append"}),
    Design("rest", "Iceberg REST catalog over PostgreSQL: a pointer per table, the server writes metadata.json",
           {"catalog": "rest"}),
    Design("rest-v4", "Iceberg REST catalog with v4 root manifests: no metadata file at all",
           {"catalog": "rest", "metadata_format": "v4"}),
    Design("ducklake", "DuckLake over PostgreSQL: one snapshot id for the lake, retries rewrite nothing",
           {"catalog": "ducklake"}, client="ducklake"),
    Design("unity", "Delta tables managed by Unity Catalog: staged commit, ratified as version v + 1, published",
           {"catalog": "unity"}, client="delta-kernel"),
    Design("storage-group", f"catalog in one object, one committer per table every {GROUP_COMMIT_S:g} s",
           {"catalog": "storage", "group_commit_s": GROUP_COMMIT_S}, writers_only=True),
    Design("rest-group", f"REST catalog, one committer per table every {GROUP_COMMIT_S:g} s",
           {"catalog": "rest", "group_commit_s": GROUP_COMMIT_S}, writers_only=True),
)


def design_names() -> tuple[str, ...]:
    return tuple(d.name for d in DESIGNS)


def design_fields(design: Design, client: Optional[str]) -> dict:
    """The config fields of ``design`` for a user who asked for ``client``."""
    fields = dict(design.fields)
    if design.client is not None:
        fields["client"] = design.client
    elif client in NON_ICEBERG_CLIENTS:
        fields["client"] = "reference"
    else:
        fields["client"] = client
    return fields


# The config fields any design sets besides the client: a stored config's values of them name its design.
DESIGN_FIELDS = tuple(dict.fromkeys(name for design in DESIGNS for name in design.fields))


def design_of(config: Mapping[str, object]) -> Optional[str]:
    """The name of the design a config (a ``SimConfig``'s fields, or a stored row) runs; None for no design.

    A design's fields must all match and the other design fields be unset (v3, no group commit); a design with
    a client of its own needs that client, an Iceberg design any client whose commits are Iceberg's. The inverse of
    ``design_fields``: ``design_of(build_config(design_fields(d, c)).to_dict()) == d.name``.
    """
    for design in DESIGNS:
        if any(config.get(name) != design.fields.get(name) for name in DESIGN_FIELDS):
            continue
        client = config.get("client")
        if client != design.client if design.client is not None else client in NON_ICEBERG_CLIENTS:
            continue
        return design.name
    return None

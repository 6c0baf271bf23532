"""Client presets: real clients' retry settings as named sets of SimConfig fields.

The presets are data (``clients.toml`` beside this module), not code per
client: each is a table of SimConfig fields. ``client_fields(name)`` gives a
preset's fields; ``apply_client(name, **fields)`` builds a config from a
preset with any field overridden. A config built this way carries the
preset's name in ``SimConfig.client`` as a label; the behaviour is entirely
in the fields, so ``reference`` (no fields) is today's behaviour and hash.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any, Mapping

from simcore.config import SimConfig
from simcore.errors import ConfigError

PRESETS_PATH = Path(__file__).with_name("clients.toml")
REFERENCE = "reference"


@functools.lru_cache(maxsize=1)
def presets() -> Mapping[str, Mapping[str, Any]]:
    """Every preset, by name, as read from ``clients.toml``."""
    with open(PRESETS_PATH, "rb") as handle:
        table = tomllib.load(handle)
    known = set(SimConfig.__dataclass_fields__)
    for name, fields in table.items():
        unknown = sorted(set(fields) - known)
        if unknown:  # a typo in the data file must not silently do nothing
            raise ConfigError(f"{PRESETS_PATH.name}[{name}].{unknown[0]}", fields[unknown[0]],
                              "a SimConfig field")
    return table


def client_names() -> tuple[str, ...]:
    return tuple(presets())


def client_fields(name: str) -> dict[str, Any]:
    """The SimConfig fields preset ``name`` sets (empty for ``reference``)."""
    table = presets()
    if name not in table:
        raise ConfigError("client", name, "one of " + ", ".join(table))
    return dict(table[name])


def apply_client(name: str, **fields: Any) -> SimConfig:
    """A config of preset ``name`` with ``fields`` overriding it (and the defaults).

    >>> apply_client("iceberg-java", provider="s3").retry
    4
    >>> apply_client("iceberg-java", retry=8).retry
    8
    >>> apply_client("reference", num_tables=10) == SimConfig(num_tables=10)
    True
    """
    merged = {**client_fields(name), **fields}
    return SimConfig(client=name, **merged)

"""Client presets: real clients' retry settings as named sets of SimConfig fields.

The presets are data (``clients.toml`` beside this module), not code per
client: each is a table of SimConfig fields. ``client_fields(name)`` gives a
preset's fields; ``simcore.builder.build_config(client=name, **fields)``
builds a config from a preset with any field overridden (and checks each
preset key is a config field, so a typo in the data file cannot silently do
nothing). A config built this way carries the preset's name in
``SimConfig.client`` as a label; the behaviour is entirely in the fields, so
``reference`` (no fields) is today's behaviour and hash.

This module knows the table only, not the config, so the config can
validate a client's name without an import circle.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path
from typing import Any, Mapping

from simcore.errors import ConfigError

PRESETS_PATH = Path(__file__).with_name("clients.toml")
REFERENCE = "reference"


@functools.lru_cache(maxsize=1)
def presets() -> Mapping[str, Mapping[str, Any]]:
    """Every preset, by name, as read from ``clients.toml``."""
    with open(PRESETS_PATH, "rb") as handle:
        return tomllib.load(handle)


def client_names() -> tuple[str, ...]:
    return tuple(presets())


def client_fields(name: str) -> dict[str, Any]:
    """The SimConfig fields preset ``name`` sets (empty for ``reference``)."""
    table = presets()
    if name not in table:
        raise ConfigError("client", name, "one of " + ", ".join(table))
    return dict(table[name])

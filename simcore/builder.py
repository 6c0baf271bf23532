"""One way to a SimConfig: from command-line flags, a grid point or a dict.

Every command, grid and test that builds a config from a client preset, a
latency model or a provider file goes through here, so the pieces are
applied in one order, once:

1. **the client preset** named by ``client`` (``simcore/clients.toml``) gives
   its fields; a value given for a field wins over the preset's. A preset's
   waits go with its retry policy: values that set the policy to
   ``immediate`` or None (retry at once) drop the preset's backoff settings
   too.
2. **the latency profile**: from flags, ``--provider``, ``--latency-model``
   and ``--provider-file`` resolve to one profile (``simcore.profiles.
   resolve_profile``); a file's content goes into ``provider_profile`` (the
   config carries the figures, not a path), the measured model into
   ``latency_model`` (``SimConfig`` fills in its profile).
3. **the values given**, then ``SimConfig.from_dict``, which checks every key
   is a field and validates the whole config.

``SimConfig(...)`` and ``SimConfig.from_dict`` stay the plain constructors
of a config whose fields are all given (a ``client`` there is a label only).

    >>> build_config(client="iceberg-java", provider="s3").retry
    4
    >>> build_config(client="iceberg-java", retry=8).retry
    8
    >>> build_config({"num_tables": 10}, client="reference") == SimConfig(num_tables=10)
    True
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

from simcore.clients import PRESETS_PATH, client_fields
from simcore.config import SimConfig
from simcore.errors import ConfigError
from simcore.input_files import read_text
from simcore.profiles import canonical_json, resolve_profile
from simcore.providers import Provider

# A preset's waits: dropped with its policy when the values ask for retries at once.
RETRY_WAIT_FIELDS = ("retry_policy", "backoff_base_ms", "backoff_multiplier", "backoff_cap_ms", "backoff_jitter",
                     "backoff_jitter_shape")
# Config fields whose command-line flag is named otherwise (``--table-dist``).
FLAG_DESTINATIONS = {"table_distribution": "table_dist", "metadata_format": "metadata"}
_FIELD_NAMES = tuple(field.name for field in dataclasses.fields(SimConfig))
CATALOG_DATABASE_MAX_BYTES = 64 * 1024  # a probed database's JSON is a few hundred bytes


def build_config(values: Optional[Mapping[str, Any]] = None, /, **fields: Any) -> SimConfig:
    """The validated config of ``values`` and ``fields`` (``fields`` win), a named client's preset under them.

    Raises:
        ConfigError: a field that is not a config field, a bad value, an
            unknown client, or a preset that names something not a field.
    """
    given = {**(values or {}), **fields}
    return _assemble(preset_fields(given.get("client")), {}, given)


def config_from_flags(args: Any, **fields: Any) -> SimConfig:
    """The config a command's parsed flags describe; ``fields`` add to (or replace) what the flags give.

    A flag counts when the command has it and it is not None (not given);
    its destination is the config field of the same name, or the one
    ``FLAG_DESTINATIONS`` names. ``--provider``, ``--latency-model`` and
    ``--provider-file`` resolve to one profile (step 2 above), and
    ``--throttle-object-writes`` applies that profile's documented
    per-object write limit to a storage catalog.
    """
    given = {name: getattr(args, FLAG_DESTINATIONS.get(name, name)) for name in _FIELD_NAMES
             if getattr(args, FLAG_DESTINATIONS.get(name, name), None) is not None}
    given.update(fields)
    database = given.get("catalog_database")
    if isinstance(database, str) and database.lower().endswith(".json"):  # a probed database's file: its content
        given["catalog_database"] = read_text(database, "catalog_database", CATALOG_DATABASE_MAX_BYTES,
                                              "catalog database JSON (probe-catalog --out)")
    preset = preset_fields(given.get("client"))
    provider_file, latency_model = getattr(args, "provider_file", None), given.pop("latency_model", None)
    profile = resolve_profile(given.pop("provider", None), latency_model, provider_file)
    latency = _latency_fields(profile, latency_model, provider_file)
    if getattr(args, "throttle_object_writes", False):
        if given.get("cas_throttle_per_s") is not None:
            raise ConfigError("cas_throttle_per_s", given["cas_throttle_per_s"],
                              "no value with --throttle-object-writes")
        given["cas_throttle_per_s"] = profile.object_writes_per_s if given.get("catalog") != "service" else None
    return _assemble(preset, latency, given)


def profile_fields(provider: Optional[str], latency_model: Optional[str], provider_file: Optional[str]) -> dict:
    """The config fields of a latency choice: ``provider`` and the measured model or a file's profile.

    For a choice made once for many configs (a sweep's ``--latency-model``
    or ``--provider-file``); a single config's flags go through
    ``config_from_flags``.
    """
    return _latency_fields(resolve_profile(provider, latency_model, provider_file), latency_model, provider_file)


def _latency_fields(profile: Provider, latency_model: Optional[str], provider_file: Optional[str]) -> dict:
    if provider_file is not None:  # the content, not the path: the hash names the figures
        return {"provider": profile.name, "provider_profile": canonical_json(profile)}
    return {"provider": profile.name, "latency_model": None if latency_model == "reference" else latency_model}


def preset_fields(client: Optional[str]) -> dict[str, Any]:
    """The fields preset ``client`` sets (none for None), each checked to be a config field."""
    if client is None:
        return {}
    fields = client_fields(client)
    for key, value in fields.items():
        if key not in _FIELD_NAMES:  # a typo in the data file must not silently do nothing
            raise ConfigError(f"{PRESETS_PATH.name}[{client}].{key}", value, "a SimConfig field")
    return fields


def _assemble(preset: Mapping[str, Any], latency: Mapping[str, Any], given: Mapping[str, Any]) -> SimConfig:
    """Steps 1 to 3 in order: the preset, the latency fields, the values given; then validation."""
    if "retry_policy" in given and given["retry_policy"] in (None, "immediate"):
        preset = {k: v for k, v in preset.items() if k not in RETRY_WAIT_FIELDS}
    return SimConfig.from_dict({**preset, **latency, **given})

"""Provider profile files (TOML): bring your own store, and the measured model's profiles.

A profile file holds the same figures as a built-in provider (``simcore.providers``),
grouped by operation; the measured model's terms are optional and default to
the reference's behaviour::

    name = "mystore"                  # what results call the provider
    description = "my bucket, eu-west-1"
    floor_ms = 10                     # no operation is faster than this

    [read]
    median_ms = 27
    sigma = 0.62
    observed_at = 1.0                 # optional: when a read sees the object (0 sent .. 1 returned)

    [write]                           # size-based: median = base_ms + ms_per_mib x MiB
    base_ms = 60
    ms_per_mib = 20
    sigma = 0.29

    [cas]                             # the conditional write
    median_ms = 61
    sigma = 0.14
    failed_multiplier = 1.0           # optional: a failed one answers after this x its latency (>= decided_at)
    contention_exponent = 0.0         # optional: median x c^exponent with c requests in flight
    contention_sigma = 0.0            # optional: sigma + this x ln(c)
    decided_at = 1.0                  # optional: when the object decides it (0 on arrival .. 1 as it answers)
    contention_in = "write"           # optional: what contention delays, the write or the read before it
    hold_ms = 0.0                     # optional: the object holds itself this long after a successful write's
                                      #   decision; a write that would succeed waits for it (0: no hold)
    failed_extra = "contended"        # optional: a failure's extra (failed_multiplier - 1) x latency is the
                                      #   write's contended latency, or "uncontended": drawn without the terms
    fitted_clients = [1, 2, 3, 4]     # optional: the client counts fit saw (written by fit; not simulated)

    [append]                          # optional: conditional append, same keys as [cas]
    median_ms = 21
    sigma = 0.25

    [cas.throttle]                    # optional: the object throttles this operation (also [append.throttle])
    writes_per_s = 2.0                # a token bucket: every conditional write admitted takes a token
    burst = 4.0                       # optional: the bucket's size (default 1)
    retry_max = 3                     # optional: the client resends a refused (429) write this often (default 0)
    retry_base_ms = 4000              # optional: the kth resend waits min(cap, base x multiplier^(k-1))
    retry_multiplier = 2.0            #   x (1 - jitter x U), U uniform in [0, 1)
    retry_cap_ms = 32000
    retry_jitter = 0.5
    counts = "writes"                 # optional: what takes a token: every write, or only one that would
                                      #   commit ("commits": a stale write is refused on its precondition first)

    [limits]                          # optional
    object_writes_per_s = 1.0         # documented per-object write limit (--throttle-object-writes uses it)

A bad file fails with one ``ConfigError`` line naming the field (``cas.sigma``),
its value and what is allowed. A config carries the profile's content, not
its path (``SimConfig.provider_profile``, canonical JSON), so the config hash
identifies the figures simulated and workers need no access to the file.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Optional

from simcore.errors import ConfigError
from simcore.providers import CONDITIONAL_OPERATIONS, PROVIDERS, OperationLatency, Provider, Throttle

# What a value may be. Every rule has an upper limit: a value past it is a typo or a unit error, and
# would overflow the lognormal draws (exp(50 x N(0,1))) or stall a run on one operation for years.
MAX_LATENCY_MS = 1e7  # about 2.8 hours for one request
MAX_SIGMA = 5.0  # a p99 e^11.6 (about 10^5) x the median already
MAX_RATE_PER_S = 1e6
_LATENCY = (f"a number of ms > 0 and <= {MAX_LATENCY_MS:g}", lambda v: 0 < v <= MAX_LATENCY_MS)
_LATENCY_OR_ZERO = (f"a number of ms >= 0 and <= {MAX_LATENCY_MS:g}", lambda v: 0 <= v <= MAX_LATENCY_MS)
_SIGMA = (f"a number > 0 and <= {MAX_SIGMA:g} (a lognormal's sigma)", lambda v: 0 < v <= MAX_SIGMA)
_SIGMA_GROWTH = (f"a number >= 0 and <= {MAX_SIGMA:g}", lambda v: 0 <= v <= MAX_SIGMA)
_RATE = (f"a number per second > 0 and <= {MAX_RATE_PER_S:g}", lambda v: 0 < v <= MAX_RATE_PER_S)
_FRACTION = ("a fraction in [0, 1]", lambda v: 0 <= v <= 1)
_MULTIPLIER = ("a number > 0 and <= 1000, and >= decided_at (a failure is answered no earlier than it is decided)",
               lambda v: 0 < v <= 1000)
_EXPONENT = ("a number in [-1, 5]", lambda v: -1 <= v <= 5)
_HOLD = (f"a number of ms >= 0 and <= {MAX_LATENCY_MS:g} (0: no hold)", lambda v: 0 <= v <= MAX_LATENCY_MS)
_CONTENTION_IN = ("write or read", lambda v: v in ("write", "read"))
_COUNTS = ("writes or commits", lambda v: v in ("writes", "commits"))
_FAILED_EXTRA = ("contended or uncontended", lambda v: v in ("contended", "uncontended"))
_WORD_RULES = (_CONTENTION_IN, _COUNTS, _FAILED_EXTRA)  # values that are words, not numbers
MAX_FITTED_CLIENTS = 1024  # as many clients as bench runs
_CLIENT_COUNTS = (f"a list of client counts, each a whole number in [1, {MAX_FITTED_CLIENTS}], increasing",
                  lambda v: isinstance(v, (list, tuple)) and len(v) > 0
                  and all(_is_number(c) and float(c).is_integer() and 1 <= c <= MAX_FITTED_CLIENTS for c in v)
                  and all(a < b for a, b in zip(v, v[1:])))
_BURST = (f"a number of tokens >= 1 and <= {MAX_RATE_PER_S:g}", lambda v: 1 <= v <= MAX_RATE_PER_S)
_BACKOFF_MULTIPLIER = ("a number >= 1 and <= 100", lambda v: 1 <= v <= 100)
_COUNT = ("a whole number >= 0 and <= 100", lambda v: 0 <= v <= 100 and float(v).is_integer())

# [cas] and [append]: key -> (OperationLatency attribute, rule, required); the same keys for both.
_CONDITIONAL_SCHEMA = {"median_ms": ("median_ms", _LATENCY, True), "sigma": ("sigma", _SIGMA, True),
                       "failed_multiplier": ("failed_multiplier", _MULTIPLIER, False),
                       "contention_exponent": ("contention_exponent", _EXPONENT, False),
                       "contention_sigma": ("contention_sigma", _SIGMA_GROWTH, False),
                       "decided_at": ("decided_at", _FRACTION, False),
                       "contention_in": ("contention_in", _CONTENTION_IN, False),
                       "hold_ms": ("hold_ms", _HOLD, False),
                       "failed_extra": ("failed_extra", _FAILED_EXTRA, False),
                       "fitted_clients": ("fitted_clients", _CLIENT_COUNTS, False)}
_SCHEMA: dict[str, dict[str, tuple[str, tuple, bool]]] = {
    # table -> key -> (Provider attribute, or OperationLatency's for [cas] and [append]; rule, required),
    # in the order a profile file lists them.
    "": {"floor_ms": ("floor_ms", _LATENCY_OR_ZERO, True)},
    "read": {"median_ms": ("read_median_ms", _LATENCY, True), "sigma": ("read_sigma", _SIGMA, True),
             "observed_at": ("read_observed_at", _FRACTION, False),
             "round_ms_per_read": ("read_round_ms_per_read", _LATENCY_OR_ZERO, False)},
    "write": {"base_ms": ("write_base_ms", _LATENCY, True), "ms_per_mib": ("write_ms_per_mib", _LATENCY_OR_ZERO, True),
              "sigma": ("write_sigma", _SIGMA, True)},
    **{operation: _CONDITIONAL_SCHEMA for operation in CONDITIONAL_OPERATIONS},
    "limits": {"object_writes_per_s": ("object_writes_per_s", _RATE, False)},
}
_OPTIONAL_TABLES = ("append", "limits")
# [cas.throttle] and [append.throttle]: key -> (Throttle field, rule, required).
_THROTTLE_SCHEMA = {"writes_per_s": ("writes_per_s", _RATE, True), "burst": ("burst", _BURST, False),
                    "retry_max": ("retry_max", _COUNT, False), "retry_base_ms": ("retry_base_ms", _LATENCY, False),
                    "retry_multiplier": ("retry_multiplier", _BACKOFF_MULTIPLIER, False),
                    "retry_cap_ms": ("retry_cap_ms", _LATENCY, False),
                    "retry_jitter": ("retry_jitter", _FRACTION, False),
                    "counts": ("counts", _COUNTS, False)}
# The optional terms' defaults (the reference's behaviour): left out of a profile's canonical form.
_DEFAULT_PROVIDER = Provider("x", "", 1.0, 0.0, 1.0, 0.0, 0.0, OperationLatency(1.0, 0.0), None, 0.0)
_DEFAULT_TERMS = OperationLatency(1.0, 0.0)
_DEFAULT_THROTTLE = Throttle(writes_per_s=1.0)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # matched whole (fullmatch): no trailing newline
NAME_ALLOWED = "a name of letters, digits, '_', '.', '-' (at most 64)"

LATENCY_MODELS = ("reference", "measured")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_name(name: Any, field: str = "name") -> str:
    """``name`` if a profile may be called so (what results call the provider), else a ConfigError on ``field``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(field, name, NAME_ALLOWED)
    return name


def profile_from_mapping(data: Mapping[str, Any], prefix: str = "") -> Provider:
    """A Provider from a profile's parsed content; ``prefix`` goes before every field name in errors."""
    if not isinstance(data, Mapping):
        raise ConfigError(prefix.rstrip(".") or "profile", data, "a table of profile fields")
    name = check_name(data.get("name"), prefix + "name")
    description = data.get("description", f"provider profile {name}")
    if not isinstance(description, str):
        raise ConfigError(prefix + "description", description, "a string")
    known_top = {"name", "description", *_SCHEMA[""], *(t for t in _SCHEMA if t)}
    for key in data:
        if key not in known_top:
            raise ConfigError(prefix + key, data[key], "one of the profile fields " + ", ".join(sorted(known_top)))
    values: dict[str, Any] = {"name": name, "description": description, "append": None}
    for table, keys in _SCHEMA.items():
        section = data if table == "" else data.get(table)
        where = prefix + (table + "." if table else "")
        if section is None:
            if table in _OPTIONAL_TABLES:
                continue
            raise ConfigError(prefix + table, None, f"a [{table}] table with " + ", ".join(
                k for k, (_, _, required) in keys.items() if required))
        if table and not isinstance(section, Mapping):
            raise ConfigError(prefix + table, section, f"a [{table}] table")
        if table not in CONDITIONAL_OPERATIONS:
            # The top level's other keys (name, tables) were checked above.
            values.update(_checked_fields(section, keys, where, f"[{table}]" if table else None))
            continue
        terms = _checked_fields(section, keys, where, f"[{table}]", allowed_tables=("throttle",))
        if "throttle" in section:
            throttle = section["throttle"]
            if not isinstance(throttle, Mapping):
                raise ConfigError(where + "throttle", throttle, "a table of " + ", ".join(_THROTTLE_SCHEMA))
            terms["throttle"] = Throttle(**_checked_fields(throttle, _THROTTLE_SCHEMA, where + "throttle.", "throttle"))
        values[table] = OperationLatency(**terms)
    for operation in CONDITIONAL_OPERATIONS:
        terms = values[operation]
        if terms is not None and terms.failed_multiplier < terms.decided_at:
            raise ConfigError(f"{prefix}{operation}.failed_multiplier", terms.failed_multiplier,
                              f"a number >= decided_at ({terms.decided_at:g}): a failure is answered no earlier "
                              "than decided")
    return Provider(**values)


def check_profile(provider: Provider, source: str) -> Provider:
    """``provider`` checked as a profile file of its figures would be (``profile_from_mapping``), for a profile
    made rather than read (``fit``'s); errors name ``source`` and the field."""
    return profile_from_mapping(profile_to_mapping(provider), prefix=f"{source}: ")


def _checked_fields(section: Mapping[str, Any], keys: Mapping[str, tuple[str, tuple, bool]], where: str,
                    label: Optional[str], allowed_tables: tuple[str, ...] = ()) -> dict[str, Any]:
    """{attribute: value} of the ``keys`` given in ``section``, each checked against its rule.

    ``label`` names the table in the error for a key it does not know (None:
    unknown keys are not this table's to judge); ``allowed_tables`` are
    sub-tables read separately.
    """
    if label is not None:
        for key in section:
            if key not in keys and key not in allowed_tables:
                raise ConfigError(where + key, section[key], f"one of the {label} keys " + ", ".join(keys))
    fields: dict[str, Any] = {}
    for key, (attribute, rule, required) in keys.items():
        allowed, ok = rule
        if key not in section:
            if required:
                raise ConfigError(where + key, None, allowed)
            continue
        value = section[key]
        if rule in _WORD_RULES or rule is _CLIENT_COUNTS:
            if isinstance(value, bool) or not ok(value) or (rule in _WORD_RULES and not isinstance(value, str)):
                raise ConfigError(where + key, value, allowed)
        elif not _is_number(value) or not ok(value):
            raise ConfigError(where + key, value, allowed)
        fields[attribute] = _stored(value, rule)
    return fields


def _stored(value: Any, rule: tuple) -> Any:
    """A field's value as profiles hold it: text as is, counts as int, every other number as float."""
    if isinstance(value, str):
        return value
    if rule is _CLIENT_COUNTS:
        return tuple(int(c) for c in value)
    return int(value) if rule is _COUNT else float(value)


def _non_default_fields(holder: Any, keys: Mapping[str, tuple[str, tuple, bool]], defaults: Any) -> dict[str, Any]:
    """{key: value} of ``holder``'s required fields and its optional ones away from ``defaults``."""
    out: dict[str, Any] = {}
    for key, (attribute, rule, required) in keys.items():
        value = getattr(holder, attribute)
        if value is None or (not required and value == getattr(defaults, attribute)):
            continue
        out[key] = _stored(value, rule)
    return out


def profile_to_mapping(provider: Provider) -> dict:
    """The profile's content as nested tables (the inverse of ``profile_from_mapping``).

    Optional terms at their reference default are left out, so a profile
    without them has one canonical form.
    """
    out: dict[str, Any] = {"name": provider.name, "description": provider.description}
    for table, keys in _SCHEMA.items():
        if table not in CONDITIONAL_OPERATIONS:
            section = _non_default_fields(provider, keys, _DEFAULT_PROVIDER)
        elif table == "append" and not provider.supports_append:
            continue
        else:
            terms = provider.conditional(table)
            section = _non_default_fields(terms, keys, _DEFAULT_TERMS)
            if terms.throttle is not None:
                section["throttle"] = _non_default_fields(terms.throttle, _THROTTLE_SCHEMA, _DEFAULT_THROTTLE)
        if table == "":
            out.update(section)
        elif section:
            out[table] = section
    return out


def canonical_json(provider: Provider) -> str:
    """The profile as compact, key-sorted JSON: the value ``SimConfig.provider_profile`` holds."""
    return json.dumps(profile_to_mapping(provider), sort_keys=True, separators=(",", ":"))


def profile_from_json(text: str, field: str = "provider_profile") -> Provider:
    if not isinstance(text, str):
        raise ConfigError(field, text, "a provider profile as JSON (from simcore.profiles.canonical_json)")
    return _profile_from_json(text, field)


@lru_cache(maxsize=256)  # configs parse their profile on every use; the text is immutable
def _profile_from_json(text: str, field: str) -> Provider:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: arrays or objects nested past Python's stack
        raise ConfigError(field, text, "a provider profile as JSON (from simcore.profiles.canonical_json)") from None
    return profile_from_mapping(data, prefix=field + ".")


MAX_PROFILE_BYTES = 2**20  # a profile is a few hundred bytes; its comments a few kB


def load_profile(path: str) -> Provider:
    """Read and check a profile file. Errors name the file and the field."""
    from simcore.input_files import read_text

    text = read_text(path, "provider_file", MAX_PROFILE_BYTES, "a TOML file")
    return profile_from_toml(text, path)


def profile_from_toml(text: str, source: str, field: str = "provider_file") -> Provider:
    """A profile file's text parsed and checked as ``load_profile`` checks a file; errors name ``source`` (the
    file, or what wrote the text) and the field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(field, source, f"valid TOML ({error})") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(field, source, "valid TOML (arrays or inline tables nest too deep for a profile, which "
                                         "nests one level)") from None
    return profile_from_mapping(data, prefix=f"{source}: ")


# What a TOML basic string must escape: the quote, the backslash and control characters other than tab.
_TOML_ESCAPED = re.compile(r'["\\\x00-\x08\x0a-\x1f\x7f]')
_TOML_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string: every other character (non-ASCII included) as it is, in UTF-8."""
    return '"' + _TOML_ESCAPED.sub(lambda m: _TOML_SHORT_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"),
                                   text) + '"'


def _toml_comment(line: str) -> str:
    """``line`` as a TOML comment: control characters other than tab, which a comment may not hold, escaped."""
    return "# " + re.sub(r"[\x00-\x08\x0a-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", line)


def _toml_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def dump_profile(provider: Provider, header: str = "") -> str:
    """The profile as a TOML file's text, with ``header`` as leading comments."""
    data = profile_to_mapping(provider)
    lines = [_toml_comment(line).rstrip() for line in header.splitlines()]
    tables = [k for k in data if isinstance(data[k], dict)]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for table in tables:
        scalars = {k: v for k, v in data[table].items() if not isinstance(v, dict)}
        lines += ["", f"[{table}]"] + [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
        for sub, values in data[table].items():
            if isinstance(values, dict):
                lines += ["", f"[{table}.{sub}]"] + [f"{k} = {_toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=None)
def measured_profiles() -> Mapping[str, Provider]:
    """The measured model's profiles, fitted to seed 000 by scripts/fit_measured.py."""
    folder = resources.files("simcore") / "measured"
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            provider = profile_from_mapping(tomllib.loads(entry.read_text()), prefix=f"measured/{entry.name}: ")
            out[provider.name] = provider
    return out


def measured_profile(provider: str) -> Provider:
    profiles = measured_profiles()
    if provider not in profiles:
        raise ConfigError("provider", provider, "a provider with a measured profile (" + ", ".join(profiles)
                          + ") for latency_model=measured")
    return profiles[provider]


def resolve_profile(provider: Optional[str], latency_model: Optional[str], provider_file: Optional[str]) -> Provider:
    """The profile a command simulates: a file's, the measured one, or the built-in (reference) one.

    ``latency_model`` None is the reference model. A provider file is the
    whole latency model, so it goes with the reference model only, and a
    ``provider`` given beside it must be the file's name.
    """
    model = latency_model or "reference"
    if model not in LATENCY_MODELS:
        raise ConfigError("latency_model", latency_model, "one of " + ", ".join(LATENCY_MODELS))
    if provider_file is not None:
        if model != "reference":
            raise ConfigError("latency_model", latency_model, "reference (the default) with --provider-file: "
                              "the file is the whole latency model")
        profile = load_profile(provider_file)
        if provider is not None and provider != profile.name:
            raise ConfigError("provider", provider, f"the provider file's name {profile.name!r} (or no --provider)")
        return profile
    if provider is None:
        raise ConfigError("provider", None, "one of " + ", ".join(PROVIDERS) + " (or --provider-file)")
    if model == "measured":
        return measured_profile(provider)
    if provider not in PROVIDERS:
        raise ConfigError("provider", provider, "one of " + ", ".join(PROVIDERS))
    return PROVIDERS[provider]

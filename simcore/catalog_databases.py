"""The SQL database behind a catalog, as a service: one commit's service time and how many it serves at once.

A REST catalog over a JDBC catalog (Iceberg's reference server, Polaris,
Lakekeeper) and DuckLake commit through a SQL database, so the database has a
ceiling of its own: it serves ``concurrency`` commit transactions at once, each
taking a floored lognormal service time (``commit_latency``), and queues the
rest. ``CatalogDatabase`` holds those four figures and where they came from.

The built-ins (``catalog_databases.toml`` beside this module) were measured
by ``studies/catalog_service`` on this project's machine; ``commit-sweeps
probe-catalog`` measures a user's own database and writes the JSON that
``catalog_database_from_json`` reads. ``fit_catalog_database`` is the one fit
both use:

- median: the median of one client's commit latencies;
- sigma: from the log-quantiles, (ln q84.13 - ln q15.87) / 2, a normal's
  +-1 standard deviation in log space;
- floor: the 1st percentile (a lower cut the lognormal's tail is raised to;
  the minimum alone would be one timer's luck);
- concurrency: Little's law, the commits per second at saturation (the client
  count that committed the most) times the median service time, rounded: how
  many it had in service at once. Only successful commits count: a DuckLake
  commit that lost on the snapshot id learns it at once on SQLite (a spin of
  cheap refusals) and after waiting for the winner on PostgreSQL, so neither
  measures the database's work.

Pure: reads only its own data file.
"""

from __future__ import annotations

import functools
import json
import math
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping, Sequence

from simcore.errors import ConfigError
from simcore.providers import Lognormal

DATABASES_PATH = Path(__file__).with_name("catalog_databases.toml")
MAX_CONCURRENCY = 1024
MAX_NAME_CHARS = 64
MAX_SOURCE_CHARS = 400
MIN_FIT_SAMPLES = 20  # fewer and the 16th and 84th percentiles are a handful of samples each
_SIGMA_QUANTILES = (15.865525393145708, 84.13447460685429)  # +-1 standard deviation of a normal, in percent
FLOOR_PERCENTILE = 1.0


@dataclass(frozen=True)
class CatalogDatabase:
    """A catalog's SQL database: one commit transaction's service time at one client, and its concurrency.

    Attributes:
        name: what the database is (``postgresql``, or the user's own name for theirs).
        commit_median_ms, commit_sigma, commit_floor_ms: the service time of one commit, a lognormal raised
            to the floor (``simcore.providers.Lognormal``'s form), measured at one client, so no queueing.
        concurrency: commits served at once before they queue (Little's law at saturation).
        source: one line: the study or probe and its date.
    """

    name: str
    commit_median_ms: float
    commit_sigma: float
    commit_floor_ms: float
    concurrency: int
    source: str

    def __post_init__(self):
        _check_text("name", self.name, MAX_NAME_CHARS)
        for field in ("commit_median_ms", "commit_sigma", "commit_floor_ms"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise ConfigError(field, value, "a finite number > 0")
        if self.commit_floor_ms > self.commit_median_ms:
            # A floor above the median would make most commits take the floor: not a floor but the median.
            raise ConfigError("commit_floor_ms", self.commit_floor_ms,
                              f"a number in (0, commit_median_ms = {self.commit_median_ms:g}]")
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int) \
                or not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise ConfigError("concurrency", self.concurrency, f"a whole number in [1, {MAX_CONCURRENCY}]")
        _check_text("source", self.source, MAX_SOURCE_CHARS)

    @property
    def commit_latency(self) -> Lognormal:
        """One commit's service time, in the simulator's latency form."""
        return Lognormal(median_ms=float(self.commit_median_ms), sigma=float(self.commit_sigma),
                         floor_ms=float(self.commit_floor_ms))

    @property
    def ceiling_cps(self) -> float:
        """The commits/s it serves when always busy: ``concurrency`` at once, each its mean service time."""
        return self.concurrency * 1000.0 / self.commit_latency.moments()[0]

    def to_json(self) -> str:
        """The JSON ``catalog_database_from_json`` reads: one object, exactly the fields."""
        return json.dumps(asdict(self), indent=1, allow_nan=False) + "\n"


def _check_text(field: str, value: Any, most: int) -> None:
    if not isinstance(value, str) or not value.strip() or not value.isprintable() or len(value) > most:
        raise ConfigError(field, value, f"one printable line of 1 to {most} characters")


FIELDS = tuple(field.name for field in fields(CatalogDatabase))


def catalog_database_from_mapping(values: Mapping[str, Any], where: str = "catalog database") -> CatalogDatabase:
    """A validated ``CatalogDatabase`` from its fields, each present once and no other key."""
    if not isinstance(values, Mapping):
        raise ConfigError(where, type(values).__name__, "an object with the fields " + ", ".join(FIELDS))
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise ConfigError(unknown[0], values[unknown[0]], "no such field; the fields are " + ", ".join(FIELDS))
    missing = [name for name in FIELDS if name not in values]
    if missing:
        raise ConfigError(missing[0], None, f"a value: {where} must give " + ", ".join(FIELDS))
    return CatalogDatabase(**{name: values[name] for name in FIELDS})


def catalog_database_from_json(text: str) -> CatalogDatabase:
    """The ``CatalogDatabase`` a probed JSON file holds (``probe-catalog --out``).

    >>> db = catalog_database_from_json(CatalogDatabase("mine", 2.0, 0.3, 1.5, 4, "probe 2026-12-02").to_json())
    >>> db.concurrency, round(db.ceiling_cps)
    (4, 1880)
    """
    try:
        values = json.loads(text, parse_constant=lambda name: math.nan)  # NaN, Infinity: refused as not finite
    except (json.JSONDecodeError, TypeError) as error:
        raise ConfigError("catalog_database", str(text)[:80], f"a JSON object ({error})") from None
    return catalog_database_from_mapping(values, "the JSON object")


@functools.lru_cache(maxsize=1)
def _built_ins() -> Mapping[str, CatalogDatabase]:
    with open(DATABASES_PATH, "rb") as handle:
        table = tomllib.load(handle)
    return {name: catalog_database_from_mapping({"name": name, **values}, f"[{name}]")
            for name, values in table.items()}


def catalog_database_names() -> tuple[str, ...]:
    return tuple(_built_ins())


def catalog_database(name: str) -> CatalogDatabase:
    """A built-in database by name (``postgresql``, ``sqlite``, ...), or a probed one's JSON content (a
    ``SimConfig.catalog_database`` that starts with ``{``: the figures, not a path, as a provider profile's)."""
    if name.lstrip().startswith("{"):
        return catalog_database_from_json(name)
    built_ins = _built_ins()
    if name not in built_ins:
        raise ConfigError("catalog_database", name, "one of " + ", ".join(built_ins))
    return built_ins[name]


def lognormal_fit(latencies_ms: Sequence[float]) -> tuple[float, float, float]:
    """(median, sigma, floor) of one client's latencies, the simple way (the module's docstring).

    >>> from statistics import NormalDist
    >>> median, sigma, floor = lognormal_fit([2 * math.exp(0.5 * NormalDist().inv_cdf((i + 0.5) / 200))
    ...                                       for i in range(200)])
    >>> round(median, 2), round(sigma, 2), floor < median
    (2.0, 0.5, True)
    """
    import numpy as np

    samples = np.asarray(latencies_ms, dtype=float)
    if samples.size < MIN_FIT_SAMPLES or not np.all(np.isfinite(samples)) or np.any(samples <= 0):
        raise ConfigError("latencies_ms", f"{samples.size} samples",
                          f"at least {MIN_FIT_SAMPLES} finite latencies > 0 from one client")
    low, high = np.percentile(samples, _SIGMA_QUANTILES)
    sigma = (math.log(high) - math.log(low)) / 2.0
    if sigma <= 0:
        raise ConfigError("latencies_ms", f"{samples.size} samples", "latencies that vary (sigma > 0)")
    return float(np.median(samples)), sigma, float(np.percentile(samples, FLOOR_PERCENTILE))


def littles_law_concurrency(commits_per_s: float, median_ms: float) -> int:
    """Commits in service at once: throughput x service time, rounded, at least 1.

    >>> littles_law_concurrency(2600.0, 1.6)
    4
    """
    if not (math.isfinite(commits_per_s) and commits_per_s > 0):
        raise ConfigError("commits_per_s", commits_per_s, "a finite rate > 0")
    return min(MAX_CONCURRENCY, max(1, round(commits_per_s * median_ms / 1000.0)))


def fit_catalog_database(name: str, one_client_latencies_ms: Sequence[float],
                         commits_per_s_by_clients: Mapping[int, float], source: str) -> CatalogDatabase:
    """The ``CatalogDatabase`` of one client's commit latencies and the commits/s at each client count
    (saturation: the count that committed the most)."""
    median, sigma, floor = lognormal_fit(one_client_latencies_ms)
    if not commits_per_s_by_clients:
        raise ConfigError("commits_per_s_by_clients", {}, "at least one client count's throughput")
    saturated = max(commits_per_s_by_clients.values())
    return CatalogDatabase(name=name, commit_median_ms=median, commit_sigma=sigma, commit_floor_ms=min(floor, median),
                           concurrency=littles_law_concurrency(saturated, median), source=source)

"""What a commit's object-store requests cost, at the store's list request prices (``request_prices.toml``).

Prices are per 1,000 requests in two classes, as every store bills them: writes (PUT, conditional writes,
LIST) and reads (GET, HEAD). A catalog service's own calls are not store requests and are not priced here.
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from simcore.config import SERVICE_CALL_CATALOGS, SimConfig, log_entry_commits
from simcore.errors import ConfigError

PRICES_PATH = Path(__file__).with_name("request_prices.toml")

# Request kinds (``requests_<kind>_per_commit``) that are object-store reads, and writes, in every catalog; the
# catalog's own read and CAS are the store's only where the catalog is an object of the store.
STORE_READS = ("manifest_list_read", "manifest_file_read", "table_metadata_read")
STORE_WRITES = ("manifest_list_write", "manifest_file_write", "table_metadata_write")


@dataclass(frozen=True)
class RequestPrices:
    """US dollars per 1,000 write-class and read-class requests, and where the figures come from."""

    write_per_1000: float
    read_per_1000: float
    source: str


@functools.lru_cache(maxsize=1)
def _table() -> Mapping[str, Mapping]:
    with open(PRICES_PATH, "rb") as handle:
        return tomllib.load(handle)


def list_prices(provider: str) -> Optional[RequestPrices]:
    """The cited list prices of a built-in store, None where none is cited."""
    entry = _table().get(provider)
    return None if entry is None else RequestPrices(**entry)


def parse_prices(text: str) -> RequestPrices:
    """``WRITE,READ`` dollars per 1,000 requests, as the command line gives them."""
    allowed = "WRITE,READ: two prices >= 0 in US dollars per 1,000 requests (e.g. 0.005,0.0004)"
    try:
        write, read = (float(part) for part in text.split(","))
    except ValueError:
        raise ConfigError("request_prices", text, allowed) from None
    if not (math.isfinite(write) and math.isfinite(read) and write >= 0 and read >= 0):
        raise ConfigError("request_prices", text, allowed)
    return RequestPrices(write, read, "given on the command line")


def store_requests(config: SimConfig, per_commit: Mapping[str, Optional[float]]) -> tuple[float, float]:
    """(write-class, read-class) object-store requests per commit, from a run's requests per commit by kind."""
    def total(kinds):
        return sum(per_commit.get(kind) or 0.0 for kind in kinds)

    writes, reads = total(STORE_WRITES), total(STORE_READS)
    if config.catalog not in SERVICE_CALL_CATALOGS:
        writes += per_commit.get("cas") or 0.0  # a conditional write (or append) of the catalog object
        catalog_reads = per_commit.get("catalog_read") or 0.0
        if log_entry_commits(config):
            writes += catalog_reads  # a log-entry commit's catalog read lists the log: a write-class request
        else:
            reads += catalog_reads
    return writes, reads


def cost_per_1000_commits(config: SimConfig, per_commit: Mapping[str, Optional[float]],
                          prices: RequestPrices) -> float:
    writes, reads = store_requests(config, per_commit)
    return writes * prices.write_per_1000 + reads * prices.read_per_1000

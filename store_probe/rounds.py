"""Rounds of reads sent at once: how much longer a round of K reads takes than one read.

delta-rs reads a table's log entries in rounds, every entry at once (docs/reference/clients.md, "delta-rs on the
model"); a round of 50 takes longer than one read by the store's work per request and the client's
connections, which the model carries as a profile's ``[read] round_ms_per_read``. The rounds are timed
with obstore, the Python binding of the Rust ``object_store`` crate that delta-rs itself uses: its
connection pool and HTTP stack, and no Python thread per read to make the client the bottleneck. Each
round comes from a fresh client after one read that opens its first connection, as each
``write_deltalake`` call opens the table anew and lists its log before it reads the entries.

All reads are of the probe's own object (its one object: nothing else is written).
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from dataclasses import dataclass
from typing import Optional

from store_probe.stores import CONNECTION_STRING_ENV, StoreError, _connection_parts
from store_probe.uri import StoreURI

ROUND_SIZES = (1, 8, 32, 64)  # reads in a round: one, a few entries, half and most of a checkpoint interval


@dataclass(frozen=True)
class Rounds:
    """What ``time_rounds`` measured: each size's round latencies (ms), and the client's own CPU."""

    latencies_ms: dict[int, list[float]]
    cpu_s: float
    wall_s: float

    @property
    def cpu_share(self) -> float:
        """The client's CPU time over the wall time of the rounds (of one core)."""
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0


def _client(uri: StoreURI, endpoint_url: Optional[str]):
    """A fresh object_store client for the URI's bucket, from the same settings as the probe's SDK clients."""
    from obstore.store import AzureStore, GCSStore, S3Store

    if uri.scheme == "s3":  # keys, region and session token from the AWS_* variables, as boto3 reads them
        return S3Store(uri.bucket, endpoint=endpoint_url, client_options=_http_options(endpoint_url),
                       region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1")
    if uri.scheme == "az":  # the account as the probe's Azure client finds it: the connection string first
        parts = _connection_parts(os.environ.get(CONNECTION_STRING_ENV, ""))
        endpoint = endpoint_url or parts.get("BlobEndpoint")
        return AzureStore(uri.bucket, account_name=parts.get("AccountName") or os.environ.get("AZURE_STORAGE_ACCOUNT"),
                          account_key=parts.get("AccountKey") or os.environ.get("AZURE_STORAGE_KEY"),
                          endpoint=endpoint, client_options=_http_options(endpoint))
    emulator = endpoint_url or os.environ.get("STORAGE_EMULATOR_HOST")
    if emulator:  # fake-gcs-server and the like take unsigned requests
        return GCSStore(uri.bucket, config={"base_url": emulator}, skip_signature=True,
                        client_options=_http_options(emulator))
    return GCSStore(uri.bucket)  # Google's application default credentials


def _http_options(endpoint: Optional[str]) -> dict:
    """object_store refuses plain HTTP unless told: an emulator's or a lab's endpoint may be http://."""
    return {"allow_http": True} if (endpoint or "").startswith("http://") else {}


async def _rounds(uri: StoreURI, endpoint_url: Optional[str], name: str, sizes, tries: int) -> dict[int, list]:
    import obstore

    out: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(tries):
        for size in sizes:
            client = _client(uri, endpoint_url)
            await obstore.get_async(client, name)  # the listing's read: the round finds one connection open
            start = time.perf_counter()
            await asyncio.gather(*(obstore.get_async(client, name) for _ in range(size)))
            out[size].append((time.perf_counter() - start) * 1000.0)
    return out


def time_rounds(uri: StoreURI, endpoint_url: Optional[str], name: str, tries: int,
                sizes: tuple[int, ...] = ROUND_SIZES) -> Rounds:
    """``tries`` rounds of each size (interleaved, so that a drift in the store reaches every size alike) of
    reads of ``name``, each from a fresh client. A read that fails raises StoreError."""
    from obstore.exceptions import BaseError

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, wall0 = usage.ru_utime + usage.ru_stime, time.monotonic()
    try:
        latencies = asyncio.run(_rounds(uri, endpoint_url, name, sizes, tries))
    except (BaseError, OSError, ValueError) as error:  # obstore's own classes; the message names the request
        # (Only the store's errors: ^C and SIGTERM, raised here by the command's handler, must reach it.)
        raise StoreError(f"a round of reads failed: {type(error).__name__}: {str(error).splitlines()[0]}") \
            from None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return Rounds(latencies, usage.ru_utime + usage.ru_stime - cpu0, time.monotonic() - wall0)

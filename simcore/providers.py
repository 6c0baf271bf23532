"""Object-store latency profiles: the measured numbers every simulation draws from.

Each operation's latency is lognormal with ``mu = ln(median)`` and the given
sigma, then raised to the provider's floor (its network round-trip minimum).
Writes are size-based: the median grows linearly with the object's size.
The figures are those of docs/reference/model.md (and of the reference simulator's provider
files), themselves fitted to the measurements in seeds 000 and 001.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Optional

MIB = 1024 * 1024
MANIFEST_LIST_BYTES = 10 * 1024
MANIFEST_FILE_BYTES = 100 * 1024
TABLE_METADATA_BYTES = 10 * 1024  # the corrected protocol's table-metadata file (the reference's size)
CATALOG_OBJECT_BYTES = 100  # a catalog object that points at table-metadata files (the reference's size)


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@dataclass(frozen=True)
class Lognormal:
    """A floored lognormal latency, in ms. ``sigma == 0`` means a fixed value."""

    median_ms: float
    sigma: float
    floor_ms: float = 0.0

    @property
    def mu(self) -> float:
        return math.log(self.median_ms)

    def moments(self) -> tuple[float, float, float]:
        """Mean, variance and third central moment of max(X, floor)."""
        if self.sigma == 0:
            return max(self.median_ms, self.floor_ms), 0.0, 0.0
        below = (math.log(self.floor_ms) - self.mu) / self.sigma if self.floor_ms > 0 else -math.inf
        raw = [self.floor_ms ** k * _normal_cdf(below)
               + math.exp(k * self.mu + (k * self.sigma) ** 2 / 2) * _normal_cdf(k * self.sigma - below)
               for k in (1, 2, 3)]
        mean = raw[0]
        return mean, raw[1] - mean ** 2, raw[2] - 3 * mean * raw[1] + 2 * mean ** 3

    @staticmethod
    def fixed(value_ms: float) -> "Lognormal":
        return Lognormal(median_ms=value_ms, sigma=0.0, floor_ms=0.0)


@dataclass(frozen=True)
class Throttle:
    """A store's throttle on conditional writes to one object, and its client's answer to a refusal.

    A token bucket of ``burst`` tokens refilled at ``writes_per_s``: every
    conditional write the object admits takes a token, successful or not
    (``counts = "writes"``), or only one that would commit, at its decision,
    while a stale one is refused on its precondition without touching the
    bucket (``"commits"``: the object's commit rate is what is limited); one
    that finds none is refused (HTTP 429, 503) after its round trip. The
    client library resends a refused write unchanged (same expected version)
    up to ``retry_max`` times (0: the refusal fails the op at once), the kth
    after waiting min(cap, base x multiplier^(k-1)) x (1 - jitter x U), U
    uniform in [0, 1). Seed 000's slow failed GCS CAS (7.1 s mean) and flat
    Azure CAS goodput (about 10 and 15 op/s at any client count) are what the
    measured profiles fit it to (docs/reference/profiles.md).
    """

    writes_per_s: float
    burst: float = 1.0
    retry_max: int = 0
    retry_base_ms: float = 1000.0
    retry_multiplier: float = 2.0
    retry_cap_ms: float = 32000.0
    retry_jitter: float = 0.0
    counts: str = "writes"


@dataclass(frozen=True)
class OperationLatency:
    """One conditional write's latency terms (a CAS, or a position-conditional append), as one record.

    ``median_ms`` and ``sigma`` are the lognormal of the write itself; the
    rest are the measured model's terms (docs/reference/profiles.md), whose defaults are
    the reference's behaviour, so a profile without them simulates as before.

    Attributes:
        median_ms, sigma: the write's lognormal latency (floored at the
            provider's ``floor_ms``).
        failed_multiplier: a failed write answers after this x the latency
            drawn for it, no earlier than decided (seed 000: failed GCS CAS
            and Azure appends are 13-36x slower than successful ones).
        contention_exponent, contention_sigma: with c conditional requests in
            flight on the object (this one included), the median is multiplied
            by c^exponent and the sigma grows by ``contention_sigma`` x ln(c)
            (seed 000's per-thread fits).
        decided_at: when the object decides the write, as a fraction of its
            latency (1: as it answers, the reference); the rest is the
            answer's way back, which contention can make long without failing
            the write.
        contention_in: what contention delays: the conditional ``write``
            itself, or the ``read`` before it, ahead of its observing the
            object (Azure's CAS: its slowest successful ops take seconds, so
            the delay cannot lie between observing the object and the
            decision, or they would fail).
        hold_ms: the object's commit hold: a write that would succeed (its
            expected version is current when decided) waits, still in flight,
            until the object has finished committing the previous successful
            one, which holds it for ``hold_ms`` after that one's decision; a
            write that would fail is answered without waiting. 0: no hold
            (the reference). Goodput is then at most 1000 / hold_ms op/s.
        failed_extra: what a failed write's extra answer time, (``failed_multiplier`` - 1)
            x a latency, is drawn as: ``contended``, the write's own latency,
            contention terms included (the reference, and the shipped
            profiles), or ``uncontended``, a draw of the write's lognormal
            without them, so that a failure's slow answer does not grow with
            the requests in flight (seed 000's failed Azure appends: 3.0-3.2 s
            at every count from 2 to 16 clients; docs/reference/profiles.md, "The measured model's terms").
        throttle: the object's throttle on these writes; None, no throttle
            (the reference).
        fitted_clients: the client counts of the measurements these terms
            were fitted to (``fit`` records them); None where unknown (the
            built-in profiles, and profile files written before they were
            recorded). ``bench`` and ``capacity`` say when they simulate more
            clients than that.
    """

    median_ms: float
    sigma: float
    failed_multiplier: float = 1.0
    contention_exponent: float = 0.0
    contention_sigma: float = 0.0
    decided_at: float = 1.0
    contention_in: str = "write"
    throttle: Optional[Throttle] = None
    hold_ms: float = 0.0
    failed_extra: str = "contended"
    fitted_clients: Optional[tuple[int, ...]] = None


CONDITIONAL_OPERATIONS = ("cas", "append")


@dataclass(frozen=True)
class Provider:
    """One object-store tier: read, size-based write, CAS and (optional) append.

    The two conditional writes each carry their whole latency model as one
    ``OperationLatency`` record (``cas``, ``append``); ``conditional(operation)``
    picks one by name.
    """

    name: str
    description: str
    read_median_ms: float
    read_sigma: float
    write_base_ms: float
    write_ms_per_mib: float
    write_sigma: float
    cas: OperationLatency
    append: Optional[OperationLatency]  # None: no conditional append
    floor_ms: float
    # Documented per-object write rate limit (writes/s), None where none is documented.
    object_writes_per_s: Optional[float] = None
    # The reference models its "instant" tier as a fixed latency for every
    # operation (its InstantStorageProvider ignores the lognormal figures).
    all_fixed: bool = False
    # When a read observes the object, as a fraction of its latency: 1 is
    # when it returns (the reference), 0 when it is sent (docs/reference/profiles.md).
    read_observed_at: float = 1.0
    # What each read beyond the first adds to a round of reads sent at once (ms): a round of K reads takes
    # a read's draw plus (K - 1) x this. The store's (and its client connections') per-request work, timed
    # by ``probe``; only delta-rs's call reads log entries in such rounds (docs/reference/clients.md). 0: a round
    # takes one read's time, whatever it holds.
    read_round_ms_per_read: float = 0.0

    def conditional(self, operation: str) -> OperationLatency:
        """The ``cas`` or ``append`` record."""
        if operation not in CONDITIONAL_OPERATIONS:
            raise ValueError(f"{operation!r} is not a conditional write; expected one of "
                             + ", ".join(CONDITIONAL_OPERATIONS))
        terms = self.append if operation == "append" else self.cas
        if terms is None:
            raise ValueError(f"{self.name} has no conditional append")
        return terms

    def with_conditional(self, operation: str, terms: OperationLatency) -> "Provider":
        """This provider with ``operation``'s record replaced by ``terms``."""
        if operation not in CONDITIONAL_OPERATIONS:
            raise ValueError(f"{operation!r} is not a conditional write")
        return replace(self, append=terms) if operation == "append" else replace(self, cas=terms)

    def read(self) -> Lognormal:
        if self.all_fixed:
            return Lognormal.fixed(self.floor_ms)
        return Lognormal(self.read_median_ms, self.read_sigma, self.floor_ms)

    def write(self, size_bytes: int) -> Lognormal:
        if self.all_fixed:
            return Lognormal.fixed(self.floor_ms)
        median = self.write_base_ms + self.write_ms_per_mib * size_bytes / MIB
        return Lognormal(median, self.write_sigma, self.floor_ms)

    def conditional_latency(self, operation: str) -> Lognormal:
        """The latency of a ``cas`` or ``append`` write, before the measured model's terms."""
        terms = self.conditional(operation)
        if self.all_fixed:
            return Lognormal.fixed(self.floor_ms)
        return Lognormal(terms.median_ms, terms.sigma, self.floor_ms)

    @property
    def supports_append(self) -> bool:
        return self.append is not None

    @property
    def has_measured_terms(self) -> bool:
        """Whether any timing term beyond the reference's lognormals is set (the measured model, a fitted file).

        Such a profile says where its store decides a conditional write and
        observes a read, from measurements; one without them is the
        reference's kind, to which the corrected protocol adds its own
        decision points (``simcore.engine.protocol_parameters``).
        """
        present = [terms for terms in (self.cas, self.append) if terms]
        plain = [OperationLatency(terms.median_ms, terms.sigma) for terms in present]
        # A throttle is the store's limit, not where it decides; which client counts a fit saw is a record
        # of the fit, not a latency term.
        return (self.read_observed_at != 1.0
                or [replace(t, throttle=None, fitted_clients=None) for t in present] != plain)


PROVIDERS: Mapping[str, Provider] = {
    p.name: p
    for p in (
        Provider("s3x", "AWS S3 Express One Zone", 2.5, 0.57, 6.5, 10, 0.24,
                 cas=OperationLatency(22, 0.22), append=OperationLatency(21, 0.25), floor_ms=1),
        Provider("s3", "AWS S3 Standard", 27, 0.62, 60, 20, 0.29,
                 cas=OperationLatency(61, 0.14), append=None, floor_ms=10),
        Provider("azurex", "Azure Blob Premium", 35, 0.08, 41, 15, 0.10,
                 cas=OperationLatency(64, 0.73), append=OperationLatency(70, 0.23), floor_ms=20),
        Provider("azure", "Azure Blob Standard", 38, 0.66, 45, 25, 0.50,
                 cas=OperationLatency(93, 0.82), append=OperationLatency(87, 0.28), floor_ms=20),
        Provider("gcp", "Google Cloud Storage", 200, 0.30, 200, 17, 0.30,
                 cas=OperationLatency(170, 0.91), append=None, floor_ms=80,
                 object_writes_per_s=1.0),  # seed 003: "~1 write/s throttling", as GCS documents
        # Cloudflare R2: no independent small-object latency is published. The figures are a vendor's benchmark
        # of 1 KB objects (Tigris, 2025-07-08; docs/architectures.md, "The store: Cloudflare R2"): writes p50
        # 197 ms, p90 340 ms (sigma ln(340/197)/1.2816); reads from its mixed phase, p50 606 ms, p90 681 ms. R2
        # documents at most one write a second to one key, 429 beyond: the catalog object's throttle.
        Provider("r2", "Cloudflare R2 (latency: a vendor's benchmark, an indication only)", 606, 0.09, 197, 20,
                 0.43, cas=OperationLatency(197, 0.43, throttle=Throttle(writes_per_s=1.0)), append=None,
                 floor_ms=10, object_writes_per_s=1.0),
        Provider("instant", "Idealised 1 ms store (tests, what-ifs)", 1, 0.1, 0.5, 0.1, 0.1,
                 cas=OperationLatency(1, 0.1), append=OperationLatency(1, 0.1), floor_ms=1, all_fixed=True),
    )
}

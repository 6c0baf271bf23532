"""What a catalog read and a catalog commit (the CAS) take, for each kind of catalog.

One home for the choice, which the engine draws from and the group
committer's pace (``simcore.workload``) is set by:

- ``storage``: the catalog is an object of the store; a read and a CAS are
  the store's.
- ``append``: a log object of the store, committed to by a conditional append.
- ``service``: a catalog service with a fixed latency per call.
- ``rest``, ``ducklake``, ``unity``: a catalog service over a database
  (``simcore.catalog_databases``): each call takes the database's commit
  service time plus the round trip to the service (a load is a transaction of
  the same database, so a read is drawn the same way).
"""

from __future__ import annotations

from simcore.catalog_databases import catalog_database
from simcore.config import SERVICE_CATALOGS, SimConfig
from simcore.providers import Lognormal


def catalog_latencies(config: SimConfig) -> tuple[Lognormal, Lognormal]:
    """(catalog read, catalog CAS) latencies of ``config``'s catalog, before any measured-model terms."""
    provider = config.latency_profile
    if config.catalog == "service":
        fixed = Lognormal.fixed(config.catalog_latency_ms)
        return fixed, fixed
    if config.catalog in SERVICE_CATALOGS:
        call = service_call(config)
        return call, call
    if config.catalog == "append":
        return provider.read(), provider.conditional_latency("append")
    return provider.read(), provider.conditional_latency("cas")


def service_call(config: SimConfig) -> Lognormal:
    """One call to a catalog service over a database: its commit service time, shifted by the round trip."""
    database = catalog_database(config.catalog_database)
    rtt = config.catalog_latency_ms
    return Lognormal(database.commit_median_ms + rtt, database.commit_sigma, database.commit_floor_ms + rtt)

"""dashboards: the results dashboard, built from the results store alone.

``python -m dashboards build --store URI --out DIR`` writes a self-contained
static site (no network needed to view it); ``python -m dashboards serve``
serves one, read-only, rebuilding it when the store changes. The views answer
what a storage engineer asks of the exp4 sweeps: the usable-throughput
frontier per provider and mix, success and latency heatmaps with low-success
cells marked, latency-vs-throughput curves, provider tables at 1 and 10
tables, seed spread, seed 001's published figures beside the store's, Zipf
per-rank breakdowns, and provenance.

Public API:

- ``read_store(uri)`` -> ``StoreSnapshot``; ``StoreError`` when unreadable.
- ``build_payload(snapshot)``: the page's data (pure).
- ``build_site(uri, out_dir)``: read, compute, write the site.
- ``curve_frontier(points)``, ``find_knee(points)``: usable throughput and knee.
"""

__version__ = "0.1.0"

from dashboards.frontier import USABLE_SUCCESS_THRESHOLD, CurveFrontier, curve_frontier, find_knee  # noqa: E402
from dashboards.payload import build_payload  # noqa: E402
from dashboards.site import build_site  # noqa: E402
from dashboards.store import StoreError, StoreSnapshot, read_store  # noqa: E402

__all__ = ["CurveFrontier", "StoreError", "StoreSnapshot", "USABLE_SUCCESS_THRESHOLD", "build_payload",
           "build_site", "curve_frontier", "find_knee", "read_store", "__version__"]

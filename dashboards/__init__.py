"""dashboards: the results dashboard, built from the results store alone.

``python -m dashboards build --store URI --out DIR`` writes a self-contained
static site (no network needed to view it); ``python -m dashboards serve``
serves one, read-only, rebuilding it when the store changes. The views answer
what a storage engineer asks of the exp4 sweeps: the usable-throughput
frontier per provider and mix, success and latency heatmaps with low-success
cells marked, latency-vs-throughput curves, provider tables at 1 and 10
tables, seed spread, seed 001's published figures beside the store's, Zipf
per-rank breakdowns, and provenance; and for issue 6: the knee search's
knees beside the grid's (with bracket and cost), the throttled GCS frontier,
the retry policies' differences, and CAS vs append catalogs.

Public API:

- ``read_store(uri)`` -> ``StoreSnapshot``; ``StoreError`` when unreadable.
- ``build_payload(snapshot)``: the page's data (pure).
- ``build_site(uri, out_dir)``: read, compute, write the site.
- ``curve_frontier(points)``, ``find_knee(points)``: usable throughput and knee.
- ``searched_knee(points)``: a searched curve's knee, bracket and cost (``dashboards.knee``).
- ``compare_variants(spec, studies, frontier_of)``: one experiment's variants side by side
  (``dashboards.variants``; each study declares its own, recorded in the store's plans).
"""

__version__ = "0.1.0"

from simcore.usable import USABLE_SUCCESS_THRESHOLD  # noqa: E402
from dashboards.frontier import CurveFrontier, curve_frontier, find_knee  # noqa: E402
from dashboards.knee import SearchedKnee, searched_knee  # noqa: E402
from dashboards.payload import build_payload  # noqa: E402
from dashboards.site import build_site  # noqa: E402
from dashboards.snapshot import StoreError, StoreSnapshot, read_store  # noqa: E402
from dashboards.variants import Comparison, compare_variants  # noqa: E402

__all__ = ["Comparison", "CurveFrontier", "SearchedKnee", "StoreError", "StoreSnapshot",
           "USABLE_SUCCESS_THRESHOLD", "build_payload", "build_site", "compare_variants", "curve_frontier",
           "find_knee", "read_store", "searched_knee", "__version__"]

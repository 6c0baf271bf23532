"""dashboards: the results dashboard (a static site, or served read-only), built from the results store alone."""

# Public API: read_store(uri) -> StoreSnapshot (StoreError when unreadable); build_payload(snapshot), the page's
# data (pure); build_site(uri, out_dir); curve_frontier(points), find_knee(points): usable throughput and knee;
# searched_knee(points): a searched curve's knee, bracket and cost; compare_variants(spec, studies, frontier_of):
# one experiment's variants side by side (each study declares its own, recorded in the store's plans).

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

"""JSON-ready numbers for the page: rounded, NaN-free, seed spreads as short lists.

Every number the page shows passes through here, so the page's data stays
small (4 significant digits) and valid JSON (no NaN or infinity).
"""

from __future__ import annotations

import math
from typing import Optional

from dashboards.points import Spread


def rounded(value, digits: int = 4):
    """JSON-safe number: None for missing or NaN, floats to ``digits`` significant digits."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{digits}g}")
    return value


def spread_json(spread: Optional[Spread], factor: float = 1.0):
    """A seed spread for the page (the payload schema's ``spread``), times ``factor`` (1e-3 for ms to s).

    ``{"mean", "sd" (sample std, null with one seed), "low", "high", "n" (seeds with a value)}``.
    """
    if spread is None:
        return None
    std = spread.std * factor if spread.std is not None else None
    return {"mean": rounded(spread.mean * factor), "sd": rounded(std), "low": rounded(spread.low * factor),
            "high": rounded(spread.high * factor), "n": spread.n}

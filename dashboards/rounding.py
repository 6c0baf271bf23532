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
    """[mean, sample std, min, max, seeds with a value], times ``factor`` (e.g. 1e-3 for ms to s)."""
    if spread is None:
        return None
    std = spread.std * factor if spread.std is not None else None
    return [rounded(spread.mean * factor), rounded(std), rounded(spread.low * factor), rounded(spread.high * factor),
            spread.n]

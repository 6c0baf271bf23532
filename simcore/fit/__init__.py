"""The profile fit (being split into one module per concept)."""

from simcore.fit.prior import *  # noqa: F401,F403

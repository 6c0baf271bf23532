"""What seed 000 says about its stores beyond its per-thread table (simcore/measured/seed000_conditional_writes.csv).

The shipped measured profiles (scripts/fit_measured.py) and the held-out check (studies/holdout) fit each store
with these.
"""

# The operations each store throttles on one object, fitted with the throttle model (``fit --throttle OP``):
# GCS's CAS (about one write per second, documented; seed 000's failed CAS take 7.1 s) and Azure's CAS (goodput
# flat at about 10 and 15 op/s from 1 to 16 clients, seeds 000 and 003).
SEED000_THROTTLED = {"gcp": ("cas",), "azure": ("cas",), "azurex": ("cas",)}

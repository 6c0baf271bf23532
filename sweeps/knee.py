"""Knee search: each curve's usable throughput to 2%, by bisection on Ray instead of a grid.

    python sweeps/knee.py --experiment exp4c [--quick] [--store URI] [--seeds N] [--duration-s S]

A curve is one experiment's grid with the inter-arrival scale left free
(provider or catalog latency, tables, mix). The grids of seed 001 read
the knee off ten scales, so between 2000 and 5000 ms, say, it is known
only to within a factor of 2.5; the search brackets it to 2% in rate with
about nine points per curve (see simcore/bisection.py and docs/reference/knee.md).
Rows go to the experiment ``<name>_knee`` of the same store.

The experiments it offers, and the few curves ``--quick`` searches of
each (fast enough for about a minute on two cores, still showing a fast
and a slow provider or catalog at one and at ten tables), are declared by
each grid (``Grid.knee_quick``) and collected in ``sweeps.catalog.KNEE_GRIDS``.
"""

import sys

if __name__ == "__main__":
    from commit_sweeps.knee_command import knee_main
    from sweeps.catalog import KNEE_GRIDS

    sys.exit(knee_main(KNEE_GRIDS))

"""Every grid of seed 001 in one fan-out: exp4a, exp4b, exp4c and the Zipf variants.

One fan-out rather than five scripts in a row: the cluster stays busy
across experiment boundaries and Ray starts once. The list is
``sweeps.catalog.SEED001`` (``commit-sweeps sweep all`` runs the same).
"""

import sys

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main
    from sweeps.catalog import SEED001

    sys.exit(sweep_main(list(SEED001)))

"""``python -m studies.knee_vs_grid``: runs knee_vs_grid.py with the flags given."""

import sys

from studies.knee_vs_grid.knee_vs_grid import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m studies.seed000_table``: runs bench_table.py with the flags given."""

import sys

from studies.seed000_table.bench_table import main

if __name__ == "__main__":
    sys.exit(main())

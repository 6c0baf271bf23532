"""``python -m studies.memory_bounds``: runs bounds.py with the flags given."""

import sys

from studies.memory_bounds.bounds import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m studies.published_repro``: runs published_repro.py with the flags given."""

import sys

from studies.published_repro.published_repro import main

if __name__ == "__main__":
    sys.exit(main())

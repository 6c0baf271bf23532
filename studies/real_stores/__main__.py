"""``python -m studies.real_stores``: runs real_stores.py with the flags given."""

import sys

from studies.real_stores.real_stores import main

if __name__ == "__main__":
    sys.exit(main())

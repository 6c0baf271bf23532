"""``python -m studies.designs``: runs designs.py with the flags given."""

import sys

from studies.designs.designs import main

if __name__ == "__main__":
    sys.exit(main())

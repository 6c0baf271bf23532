"""``python -m studies.faults``: runs faults.py with the flags given."""

import sys

from studies.faults.faults import main

if __name__ == "__main__":
    sys.exit(main())

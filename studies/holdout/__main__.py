"""``python -m studies.holdout``: runs holdout.py with the flags given."""

import sys

from studies.holdout.holdout import main

if __name__ == "__main__":
    sys.exit(main())

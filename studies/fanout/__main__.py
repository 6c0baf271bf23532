"""``python -m studies.fanout``: runs fanout.py with the flags given."""

import sys

from studies.fanout.fanout import main

if __name__ == "__main__":
    sys.exit(main())

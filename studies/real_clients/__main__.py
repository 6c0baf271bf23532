"""``python -m studies.real_clients``: runs real_clients.py with the flags given."""

import sys

from studies.real_clients.real_clients import main

if __name__ == "__main__":
    sys.exit(main())

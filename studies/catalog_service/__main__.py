"""``python -m studies.catalog_service``: runs catalog_service.py with the flags given."""

import sys

from studies.catalog_service.catalog_service import main

if __name__ == "__main__":
    sys.exit(main())

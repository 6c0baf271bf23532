"""``python -m ray_jobs status --store URI``: what a results store holds."""

import sys

from ray_jobs.cli import status_main

if __name__ == "__main__":
    sys.exit(status_main())

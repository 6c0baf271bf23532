"""``python -m ray_jobs status --store URI``: an entry point, the command line's (``commit_sweeps.status_command``)."""

import sys

from commit_sweeps.status_command import main

if __name__ == "__main__":
    sys.exit(main())

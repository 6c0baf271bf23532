"""``python -m simcore run|bench|fit``: an entry point, the command line's (``commit_sweeps.simcore_command``)."""
import sys

from commit_sweeps.simcore_command import main

sys.exit(main())

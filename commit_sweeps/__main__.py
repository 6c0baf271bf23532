import sys

from commit_sweeps.cli import main

sys.exit(main())

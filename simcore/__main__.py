import sys

from simcore.cli import main

sys.exit(main())

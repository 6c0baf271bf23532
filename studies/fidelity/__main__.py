"""``python -m studies.fidelity``: runs fidelity.py with the flags given."""

import sys

from studies.fidelity.fidelity import main

if __name__ == "__main__":
    sys.exit(main())

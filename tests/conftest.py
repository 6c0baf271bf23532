import os
import sys

# Make the repository root importable without installing (the README's test
# command installs it anyway) and let tests import their helpers (oracle).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (ROOT, os.path.join(ROOT, "tests")):
    if path not in sys.path:
        sys.path.insert(0, path)

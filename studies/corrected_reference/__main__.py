"""``python -m studies.corrected_reference``: the published reproduction's script on the reference's post-fix
figures (``studies/published_repro/published_repro.py --figures corrected``), with the flags given."""

import sys

from studies.published_repro.published_repro import main

if __name__ == "__main__":
    sys.exit(main(["--figures", "corrected", *sys.argv[1:]], prog="python -m studies.corrected_reference"))

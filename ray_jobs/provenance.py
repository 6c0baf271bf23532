"""Where a result came from: the simulator version and the git revision.

Both are looked up once, on the driver, and copied into every row. The git
revision is unknown (None) when the code does not run from a git checkout,
which is the case under ``ray job submit --working-dir .`` (``.git`` is not
uploaded); ``SWEEPS_GIT_REVISION`` supplies it there, or in an image.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import simcore

GIT_REVISION_ENV = "SWEEPS_GIT_REVISION"


@dataclass(frozen=True)
class Provenance:
    package_version: str
    git_revision: Optional[str]


def current_provenance() -> Provenance:
    return Provenance(package_version=simcore.__version__, git_revision=git_revision())


def git_revision(directory: Optional[Path] = None) -> Optional[str]:
    """``$SWEEPS_GIT_REVISION``, else the checkout's HEAD (``+dirty`` when tracked files
    differ from it), else None."""
    if os.environ.get(GIT_REVISION_ENV):
        return os.environ[GIT_REVISION_ENV]
    directory = directory or Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=directory,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    revision = head.stdout.strip()
    return revision + "+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else revision

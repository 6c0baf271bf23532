"""Where Numba keeps simcore's compiled kernels: in a folder named by the source's content, not its path.

Numba's own choice is the module's ``__pycache__`` folder, or a user-wide folder named after the module's
directory. A copy of the tree finds neither: ``ray job submit --working-dir .`` uploads the checkout without
``__pycache__`` and unpacks it under a new name, so every worker process of every job that runs the uploaded
copy would compile its kernels again (about a minute on 2 cores, each worker at once). Named by content, every
copy of the same source on a machine (the checkout, an upload, a second clone) shares one cache: what
``commit-sweeps prepare`` compiled once is loaded by all of them, and a different source gets a folder of
its own, so two trees never evict each other's kernels.

The folder sits under Numba's cache root: ``NUMBA_CACHE_DIR`` where set (Numba reads it), else the user's
cache directory (``~/.cache/numba`` on Linux). Where that cannot be written, Numba's own locators apply,
as before. Only functions of simcore's modules are placed here; every other cached function keeps Numba's
choice.
"""

from __future__ import annotations

import functools
import hashlib
import os

from numba.core import caching
from numba.core import config as numba_config
from numba.misc.appdirs import AppDirs

# The locator base class and the list Numba walks to place a cached function (named without the leading
# underscore from Numba 0.68 on).
_LOCATOR_BASE = getattr(caching, "_CacheLocator")
_CACHE_IMPL = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")


@functools.lru_cache(maxsize=None)
def _content_hash(path: str, mtime_ns: int, size: int) -> str:
    """The source's SHA-256 (keyed on its stat too, so a file edited while a process runs is hashed again)."""
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


class ContentKeyedLocator(_LOCATOR_BASE):
    """A simcore function's cache: ``<Numba's cache root>/simcore-<module>-<content hash>``."""

    def __init__(self, py_func, py_file: str):
        stat = os.stat(py_file)
        self._stamp = _content_hash(os.path.abspath(py_file), stat.st_mtime_ns, stat.st_size)
        self._lineno = py_func.__code__.co_firstlineno
        root = numba_config.CACHE_DIR or AppDirs(appname="numba", appauthor=False).user_cache_dir
        module = os.path.splitext(os.path.basename(py_file))[0]
        self._cache_path = os.path.join(root, f"simcore-{module}-{self._stamp[:16]}")

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        return self._stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        module = getattr(py_func, "__module__", "") or ""
        if not (module == "simcore" or module.startswith("simcore.")) or not os.path.isfile(py_file):
            return None
        locator = cls(py_func, py_file)
        try:
            locator.ensure_cache_path()
        except OSError:  # not writable here: Numba's own locators choose
            return None
        return locator


def install() -> None:
    """Put the locator first in Numba's list (idempotent). Call before any simcore kernel is decorated."""
    if ContentKeyedLocator not in _CACHE_IMPL._locator_classes:
        _CACHE_IMPL._locator_classes.insert(0, ContentKeyedLocator)

"""Numba's first start in a process, without the SciPy import simcore's kernels do not need.

The first compiled call in a process (a compile, or a load from the on-disk
cache) makes Numba load its CPU target: it imports its implementation of
every NumPy function it supports. One of them, ``numba.np.arraymath``,
asks at import whether SciPy's BLAS bindings are there by importing
``scipy.linalg``, which with SciPy 1.17 (a dependency, for fits) takes
about 0.2 s, more than the rest of a short run's start-up after the
imports. The answer only chooses how Numba compiles ``np.dot`` of two
vectors (BLAS or a plain loop); simcore's kernels call no BLAS function.

``start()`` loads the target with that one check answering "no BLAS", then
puts the check back: any Numba function compiled later that needs BLAS
(``np.linalg`` and the matrix products call the check again when they
compile) imports SciPy then, as before. Where ``scipy.linalg`` is already
loaded (a fit), or the target already is, it changes nothing.
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()
_started = False


def _no_blas() -> None:
    raise ImportError("simcore.jit_start: BLAS not looked up (simcore's kernels use none)")


def start() -> None:
    """Load Numba's CPU target once, before the first kernel call (idempotent, thread-safe)."""
    global _started
    if _started:
        return
    with _lock:
        if _started:
            return
        import numba.np.linalg as linalg
        from numba.core.registry import cpu_target

        check = linalg.ensure_blas
        if "numba.np.arraymath" not in sys.modules and "scipy.linalg" not in sys.modules:
            linalg.ensure_blas = _no_blas  # numba.np.arraymath binds this name when it is imported
        try:
            cpu_target.target_context.refresh()
        finally:
            linalg.ensure_blas = check
        _started = True

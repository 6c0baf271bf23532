"""While the simulator's kernel compiles (once per install), say so and show how long it has taken.

simcore's event loop is compiled by Numba into one of two variants
(``simcore.engine.KERNEL_VARIANTS``), and Numba's disk cache keeps each for
later processes. The first run after an install compiles the variant its
config needs, a minute or more on two cores; every later run loads it in
about a second. A command calls ``prepare_kernels`` with its configs before
it fans out, so the compile happens once, here, with a line saying so, and
the worker processes load the result instead of each compiling it.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Iterable, TextIO

from simcore.config import SimConfig
from simcore.engine import kernel_variant
from simcore.simulate import prepare_kernel

NOTICE_AFTER_S = 2.0  # a load from the disk cache takes about a second; longer than this is a compile
TICK_S = 15.0  # how often a compile in progress says it still is


def prepare_kernels(configs: Iterable[SimConfig], stream: TextIO = sys.stderr) -> None:
    """Compile or load every kernel variant ``configs`` need, saying so on ``stream`` while one compiles."""
    for variant in sorted({kernel_variant(config) for config in configs}):
        _prepare(variant, stream)


def _prepare(variant: str, stream: TextIO) -> None:
    done = threading.Event()
    started = time.monotonic()

    def tell():
        if done.wait(NOTICE_AFTER_S):
            return
        print(f"compiling the simulator's {variant} kernel: once per install, a minute or two on 2 cores "
              f"(later runs load it from Numba's cache in about a second)", file=stream, flush=True)
        while not done.wait(TICK_S):
            print(f"  still compiling the {variant} kernel: {time.monotonic() - started:.0f} s", file=stream,
                  flush=True)

    teller = threading.Thread(target=tell, name="kernel-compile-notice", daemon=True)
    teller.start()
    try:
        prepare_kernel(variant)
    finally:
        done.set()
        teller.join()
    elapsed = time.monotonic() - started
    if elapsed > NOTICE_AFTER_S:
        print(f"compiled the {variant} kernel in {elapsed:.0f} s", file=stream, flush=True)

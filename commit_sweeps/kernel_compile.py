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

import argparse
import subprocess
import sys
import threading
import time
from typing import Iterable, TextIO

from simcore.config import SimConfig
from simcore.engine import KERNEL_VARIANTS, kernel_variant
from simcore.simulate import prepare_kernel

PREPARE_HELP = ("compile every variant of the simulator's kernel now, side by side (once per install), so that "
                "the first answer of any command starts in seconds")

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


# -- ``commit-sweeps prepare``: every variant at install ------------------------------------------------------

def configure(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults()  # no flags: it compiles every variant


def run(args: argparse.Namespace, stream: TextIO = sys.stderr) -> int:
    """Compile (or load) every kernel variant, each in its own process so that they compile side by side."""
    started = time.monotonic()
    processes = {variant: subprocess.Popen([sys.executable, "-c",
                                            f"from simcore.simulate import prepare_kernel; prepare_kernel({variant!r})"])
                 for variant in KERNEL_VARIANTS}
    print(f"preparing the simulator's kernels ({', '.join(KERNEL_VARIANTS)}): a minute or two on 2 cores the first "
          f"time, about a second once Numba's cache holds them", file=stream, flush=True)
    failed = []
    for variant, process in processes.items():
        while True:
            try:
                code = process.wait(timeout=TICK_S)
                break
            except subprocess.TimeoutExpired:
                print(f"  still compiling: {time.monotonic() - started:.0f} s", file=stream, flush=True)
        if code != 0:
            failed.append(variant)
    if failed:
        print(f"prepare: compiling the {', '.join(failed)} kernel failed (see above)", file=stream, flush=True)
        return 1
    print(f"kernels ready in {time.monotonic() - started:.0f} s", file=stream, flush=True)
    return 0

"""What one delta-rs writer's own work costs per call: CPU and wall time by the entries since the checkpoint.

    eval "$(scripts/store-lab.sh env)"
    python -m studies.real_clients.delta_call_cpu [--calls 120] [--block 20] [--out FILE]

One writer alone appends a one-row batch with ``write_deltalake`` to a new, checkpointed table on the lab's S3
(as ``real_clients.py`` makes them), ``--calls`` times back to back, and prints for each block of
``--block`` calls the wall time and the process's CPU time (user and system, every thread) per call. A load reads
the entries since the last checkpoint (the table's version modulo 100, delta-rs's ``delta.checkpointInterval``
default), so the blocks show how the client's own work grows with them and falls back after a checkpoint. The
model times a call by its requests only (docs/reference/clients.md, "delta-rs on the model"); docs/reference/profiles.md ("The
writers' own CPU") has what this showed and why the model leaves it out. The blocks go to ``--out`` (default
``studies/real_clients/results/call-cpu-<date>.csv``).
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from dataclasses import dataclass

from simcore.errors import ConfigError
from commit_sweeps.flags import bad_input, positive_int
from studies.results import add_out_flags, command_line, out_path, write_csv


@dataclass(frozen=True)
class Block:
    """``calls`` calls made one after another, the first loading table version ``loaded_version``."""
    loaded_version: int
    calls: int
    wall_s: float
    user_s: float
    system_s: float

    def line(self) -> str:
        """One printed row: the entries since the checkpoint that the block's first and last call loaded (the
        version they loaded modulo 100), then its figures per call.

        >>> Block(loaded_version=100, calls=20, wall_s=19.2, user_s=0.67, system_s=0.16).line()
        'entries  0- 19: wall  960 ms, CPU  41.5 ms a call (user 33.5, system 8.0)'
        """
        first = self.loaded_version % 100
        last = (self.loaded_version + self.calls - 1) % 100
        per = 1000.0 / self.calls
        return (f"entries {first:2d}-{last:3d}: wall {self.wall_s * per:4.0f} ms, CPU {(self.user_s + self.system_s) * per:5.1f}"
                f" ms a call (user {self.user_s * per:.1f}, system {self.system_s * per:.1f})")


def measure(calls: int, block: int, progress=print) -> list[Block]:
    """Make the table, then ``calls`` calls in blocks of ``block``; each block as it ends goes to ``progress``."""
    from deltalake import write_deltalake

    from studies.real_clients.real_clients import _delta_table, lab_s3_uri, storage_options
    from studies.real_clients.writer_processes import one_row_batch

    options = storage_options()
    uri = f"{lab_s3_uri()}/delta-call-cpu-{uuid.uuid4().hex[:8]}"
    _delta_table(uri, options)  # version 0, checkpointed: the first call loads it, the next one version 1, ...
    version, blocks = 0, []
    for start in range(0, calls, block):
        count = min(block, calls - start)
        cpu0, wall0 = os.times(), time.monotonic()
        for seq in range(start, start + count):
            write_deltalake(uri, one_row_batch(0, seq), mode="append", storage_options=options)
        cpu1, wall1 = os.times(), time.monotonic()
        blocks.append(Block(version, count, wall1 - wall0, cpu1.user - cpu0.user, cpu1.system - cpu0.system))
        version += count
        progress(blocks[-1].line())
    return blocks


def main(argv=None) -> int:
    prog = "python -m studies.real_clients.delta_call_cpu"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=positive_int, default=120,
                        help="calls in all (default 120: past one checkpoint)")
    parser.add_argument("--block", type=positive_int, default=20, help="calls per printed row (default 20)")
    add_out_flags(parser, "one row per block, as CSV")
    args = parser.parse_args(argv)
    from studies.real_clients.real_clients import open_lab_store

    try:
        open_lab_store()  # one line, exit 2, when the lab's S3 is not there
    except ConfigError as error:
        return bad_input(error)
    out = out_path(args, "real_clients", "call-cpu", "csv")
    print(f"one delta-rs writer, {args.calls} calls back to back on the lab's S3, blocks of {args.block}")
    blocks = measure(args.calls, args.block)
    rows = [{"entries_since_checkpoint_first": b.loaded_version % 100,
             "entries_since_checkpoint_last": (b.loaded_version + b.calls - 1) % 100, "calls": b.calls,
             "wall_ms_per_call": 1000 * b.wall_s / b.calls, "user_ms_per_call": 1000 * b.user_s / b.calls,
             "system_ms_per_call": 1000 * b.system_s / b.calls} for b in blocks]
    write_csv(out, rows, command_line(prog, argv))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

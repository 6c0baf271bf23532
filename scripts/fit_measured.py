"""Refit the measured latency model: one profile per store of seed 000, into simcore/measured/.

    python scripts/fit_measured.py [--data ../shared/data/seed000_conditional_writes.csv] [--only s3,gcp]

Runs ``python -m simcore fit --table DATA --provider P`` for every store seed 000
measured (each store's CAS and, where measured, conditional append), keeping
the read, write and floor of the built-in profile of the same name. The fit is
deterministic (fixed seeds and starting points): rerunning it rewrites the
same files. docs/measured.md describes the model and shows the result.
"""

import argparse
import csv
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout

from simcore.cli import main  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "seed000_conditional_writes.csv"


def stores(path: pathlib.Path) -> list[str]:
    with open(path, newline="") as handle:
        return sorted({row["provider"] for row in csv.DictReader(handle)})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="seed 000's per-thread CSV")
    parser.add_argument("--only", default=None, help="comma list of stores to refit (default: all)")
    parser.add_argument("--max-evaluations", default="420", help="simulations per operation (default 420)")
    args = parser.parse_args()
    chosen = stores(pathlib.Path(args.data)) if args.only is None else args.only.split(",")
    for store in chosen:
        out = ROOT / "simcore" / "measured" / f"{store}.toml"
        status = main(["fit", "--table", args.data, "--provider", store, "--max-evaluations", args.max_evaluations,
                       "--out", str(out)])
        if status:
            sys.exit(status)

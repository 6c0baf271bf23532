"""Where a study keeps its results: dated CSV or JSON files in ``studies/<name>/results/``.

Every file carries the date it was made and the command that made it (a ``date`` and a ``command`` column on
each CSV row, fields of each JSON document), so a figure quoted elsewhere can be traced to its run. A study's
default file is named by what it holds and the day (``fit-1-4-2026-11-29.csv``); an existing file is replaced
only with ``--overwrite``, checked before the study starts (a long run never ends on a refused write).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

STUDIES = Path(__file__).resolve().parent


def results_dir(study: str) -> Path:
    """``studies/<study>/results``."""
    return STUDIES / study / "results"


def dated_name(stem: str, suffix: str, day: Optional[datetime.date] = None) -> str:
    """``stem-YYYY-MM-DD.suffix``, today's date by default.

    >>> dated_name("fit-1-4", "csv", datetime.date(2026, 11, 29))
    'fit-1-4-2026-11-29.csv'
    """
    return f"{stem}-{(day or datetime.date.today()).isoformat()}.{suffix}"


def command_line(prog: str, argv: Optional[Sequence[str]] = None) -> str:
    """The command as a user types it: ``prog`` and the arguments (``sys.argv[1:]`` by default).

    >>> command_line("python -m studies.holdout", ["--fit", "1,2,4", "--only", "s3:cas"])
    'python -m studies.holdout --fit 1,2,4 --only s3:cas'
    """
    words = list(sys.argv[1:] if argv is None else argv)
    return " ".join([prog, *(shlex.quote(word) for word in words)])


def add_out_flags(parser: argparse.ArgumentParser, what: str, aliases: Sequence[str] = ()) -> None:
    """``--out PATH`` (default: the study's dated file, ``what`` says what it holds; ``aliases`` are other names
    of the flag) and ``--overwrite``."""
    parser.add_argument("--out", *aliases, dest="out", default=None, metavar="PATH",
                        help=f"write {what} here (default: a dated file in this study's results/)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")


def out_path(args: argparse.Namespace, study: str, stem: str, suffix: str) -> Path:
    """The file to write: ``--out``, else the study's dated default. An existing one without ``--overwrite`` is
    bad input: one line naming it on stderr, exit status 2."""
    path = Path(args.out) if args.out else results_dir(study) / dated_name(stem, suffix)
    if path.exists() and not args.overwrite:
        print(f"error: out: {str(path)!r} is not allowed; expected a file that does not exist yet "
              "(or --overwrite to replace it)", file=sys.stderr)
        raise SystemExit(2)  # the exit status of bad input, as every command's
    return path


def _replace(path: Path, text: str) -> None:
    """Written whole beside ``path``, then renamed: a crash leaves the old file or none, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


def write_csv(path: Path, rows: Iterable[Mapping], command: str, day: Optional[datetime.date] = None) -> Path:
    """``rows`` as CSV, each led by its ``date`` and ``command``; columns in the order first seen."""
    stamp = {"date": (day or datetime.date.today()).isoformat(), "command": command}
    stamped = [{**stamp, **row} for row in rows]
    columns = list(dict.fromkeys(key for row in stamped for key in row)) or list(stamp)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(stamped)
    _replace(path, text.getvalue())
    return path


def write_json(path: Path, document: Mapping, command: str, day: Optional[datetime.date] = None) -> Path:
    """``document`` as JSON, led by its ``date`` and ``command``."""
    stamped = {"date": (day or datetime.date.today()).isoformat(), "command": command, **document}
    _replace(path, json.dumps(stamped, indent=1) + "\n")
    return path


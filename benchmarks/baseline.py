"""A guard's stored baselines: earlier figures, each with the commit, date, machine and command that measured it.

A guard measures a few figures (seconds, milliseconds), prints them beside every stored baseline taken with the
same settings, as a ratio (above 1.0: more than then), and with ``--save-baseline`` stores its measurement as
the baseline of the measured commit (replacing an older one of the same commit and settings). The baselines
live beside the guard, in ``benchmarks/<guard>_baseline.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
from typing import Optional


def add_baseline_flags(parser: argparse.ArgumentParser, default_path: str) -> None:
    parser.add_argument("--baseline", default=default_path, help="the guard's baseline file (default %(default)s)")
    parser.add_argument("--save-baseline", action="store_true",
                        help="store this measurement as the baseline of the measured commit")


def git_commit(tree: str) -> str:
    """The checkout's short commit, with ``-dirty`` when tracked files differ from it."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True,
                                check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=tree,
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("-dirty" if changed else "")


def machine() -> str:
    """The CPU model, core count, system and Python: what a figure depends on besides the code."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    except OSError:
        pass
    system = f"{platform.system()} {platform.release()}"
    return f"{model}, {os.cpu_count()} CPUs, {system}, Python {platform.python_version()}"


def load_baselines(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return json.load(handle)["baselines"]


def comparable(baselines: list[dict], settings: dict) -> list[dict]:
    """The baselines measured with these settings: only those say anything about this measurement."""
    return [b for b in baselines if b.get("settings") == settings]


def new_entry(tree: str, settings: dict, command: str, load_average: str, figures: dict,
              day: Optional[datetime.date] = None) -> dict:
    return {"commit": git_commit(tree), "date": (day or datetime.date.today()).isoformat(), "machine": machine(),
            "load_average": load_average, "command": command, "settings": settings, "figures": figures}


def save_baseline(path: str, what: str, entry: dict) -> None:
    """Store ``entry`` in the place of one of the same commit and settings (else last); written whole, then
    renamed, so a crash leaves the old file."""
    baselines = load_baselines(path)
    same = [i for i, b in enumerate(baselines) if (b["commit"], b.get("settings")) == (entry["commit"],
                                                                                      entry["settings"])]
    if same:
        baselines[same[0]] = entry
    else:
        baselines.append(entry)
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump({"what": what, "baselines": baselines}, handle, indent=1)
        handle.write("\n")
    os.replace(partial, path)


def ratio_table(figures: dict, baselines: list[dict], units: dict) -> list[str]:
    """One line per figure: now, then each baseline's figure and the ratio now / then; a line per baseline.

    >>> print("\\n".join(ratio_table({"p50_ms": 2.0}, [{"commit": "abc", "date": "2026-01-01", "machine": "m",
    ...                                                "figures": {"p50_ms": 4.0}}], {"p50_ms": "ms"})))
    figure                               now        abc  ratio
    p50_ms                            2.0 ms     4.0 ms   0.50
    baseline abc: measured 2026-01-01 on m
    """
    def cell(name, value):
        return "-" if value is None else f"{value:.{1 if units[name] in ('ms', 's') else 0}f} {units[name]}".strip()

    lines = [f"{'figure':28s} {'now':>11s}" + "".join(f" {b['commit']:>10s} {'ratio':>6s}" for b in baselines)]
    for name in figures:
        line = f"{name:28s} {cell(name, figures[name]):>11s}"
        for b in baselines:
            then = b["figures"].get(name)
            ratio = f"{figures[name] / then:.2f}" if then and figures[name] is not None else "-"
            line += f" {cell(name, then):>10s} {ratio:>6s}"
        lines.append(line)
    for b in baselines:
        busy = f", load average {b['load_average']}" if b.get("load_average") else ""
        lines.append(f"baseline {b['commit']}: measured {b['date']} on {b['machine']}{busy}")
    return lines


def compare_and_save(args: argparse.Namespace, tree: str, what: str, settings: dict, command: str,
                     load_average: str, figures: dict, units: dict) -> None:
    """Print ``figures`` against the comparable stored baselines; with ``--save-baseline``, store them."""
    baselines = comparable(load_baselines(args.baseline), settings)
    for line in ratio_table(figures, baselines, units):
        print(line)
    if not baselines:
        print(f"(no stored baseline with these settings in {args.baseline})")
    if args.save_baseline:
        entry = new_entry(tree, settings, command, load_average, figures)
        save_baseline(args.baseline, what, entry)
        print(f"stored as the baseline of {entry['commit']} in {args.baseline}")

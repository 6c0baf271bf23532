"""Seed 001's published figures against each of the reference's metric definitions.

    python -m studies.published_repro [--seeds 5] [--duration-s 3600] [--cache PATH]
                                      [--only exp4a,exp4c] [--write-data] [--markdown PATH] [--out FILE]
    python -m studies.corrected_reference [--markdown PATH] [--out FILE]     # = --figures corrected

``--figures published`` (the default) is seed 001 against the published
commit protocol (``SimConfig.protocol = "published"``, pinned here whatever
the product's default). ``--figures corrected`` is the reference's own
post-fix figures (``dashboards/data/endive_corrected.csv``) against the
corrected protocol, judged by the ``seed001`` metric set (the reference's
definitions).

For every figure it simulates the configuration(s) behind it with simcore
(a grid point, or for the knee figures the ten inter-arrival scales of its
curve), computes every metric set of ``simcore.metric_sets`` from the
*same* runs, and prints one line per figure: the published value, each
set's value (mean over seeds), and whether it lands within the printed
rounding (``=``: within half a unit of the last printed digit; ``~``:
within that plus two standard errors over the seeds; ``a``: within the
agreement targets with the reference; ``x``: further).

Runs are cached per (config, seed) in ``--cache`` (JSON lines, appended as
they finish), so an interrupted run resumes and a second run is instant.
Every figure's values go to ``--out`` (default
``studies/published_repro/results/figures-<date>.csv``, or
``studies/corrected_reference/results/`` with ``--figures corrected``), one
row per figure and metric set. ``--write-data`` writes
``dashboards/data/published_explained.json``, the per-figure numbers the
dashboard's published view shows; ``--markdown`` writes the per-figure
table as markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from dashboards.published import PUBLISHED_RESOURCE, PublishedFigure, describe, parse_published
from dashboards.published_explained import DATA_RESOURCE, TABLE_CONVOY_LABEL, SetValue, explain, rounding_half_unit
from simcore import SimConfig, metric_sets
from commit_sweeps.flags import add_seeds_flag
from simcore.simulate import run_seed
from simcore.usable import MeasuredPoint, find_knee, success_metric
from ray_jobs.knee_curves import seed_mean, seed_values
from sweeps.seed001 import INTER_ARRIVAL_SCALES_MS
from studies.results import add_out_flags, command_line, out_path, write_csv

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED_CSV = ROOT / "dashboards" / "data" / PUBLISHED_RESOURCE
CORRECTED_CSV = ROOT / "dashboards" / "data" / "endive_corrected.csv"
DATA_PATH = ROOT / "dashboards" / "data" / DATA_RESOURCE
MARKS = {"within rounding": "=", "within noise": "~", "within agreement": "a", "off": "x", "no usable point": "?"}

# published metric -> (metric-set key, factor to the published unit)
_POINT = {"fa_success_rate": ("fa_success_rate", 100.0), "vo_success_rate": ("vo_success_rate", 100.0),
          "fa_mean_latency": ("fa_commit_latency_mean_ms", 1.0), "vo_mean_latency": ("vo_commit_latency_mean_ms", 1.0)}
_KNEE = {"usable_throughput": ("throughput_cps", 1.0),
         "fa_mean_latency_at_knee": ("fa_commit_latency_mean_ms", 1e-3),
         "vo_mean_latency_at_knee": ("vo_commit_latency_mean_ms", 1e-3)}


@dataclass(frozen=True)
class Candidate:
    """One column: a metric set of ``simcore.metric_sets`` over runs of one model variant."""

    label: str
    metric_set: str
    vo_convoy: Optional[str] = None  # SimConfig.vo_convoy: None (the reference) or "table"
    protocol: str = "published"  # SimConfig.protocol: what seed 001's figures were made with


CANDIDATES = (
    Candidate("steady-state", metric_sets.STEADY_STATE),
    Candidate("heatmap", metric_sets.HEATMAP),
    Candidate("per-type", metric_sets.PER_TYPE),
    Candidate("seed001", metric_sets.SEED001),
    Candidate(TABLE_CONVOY_LABEL, metric_sets.SEED001, "table"),
)
# The reference's post-fix figures: its own metric definitions over the corrected protocol.
CORRECTED_CANDIDATES = (Candidate("corrected", metric_sets.SEED001, protocol="corrected"),)


def config_of(figure: PublishedFigure, scale_ms: float, duration_s: float,
              vo_convoy: Optional[str] = None, protocol: str = "published") -> SimConfig:
    service = figure.experiment in ("exp4a", "exp4b")
    # The convoy only changes VO (and MergeAppend) transactions: FA-only runs are shared. (SimConfig drops it
    # under the corrected protocol, whose convoy always counts the table's own commits.)
    convoy = vo_convoy if figure.fast_append_ratio < 1.0 else None
    return SimConfig(vo_convoy=convoy, protocol=protocol, provider=figure.provider, catalog="service" if service else "storage",
                     catalog_latency_ms=figure.catalog_latency_ms if service else None,
                     num_tables=figure.num_tables, table_distribution=figure.table_distribution,
                     zipf_alpha=figure.zipf_alpha, fast_append_ratio=figure.fast_append_ratio,
                     inter_arrival_scale_ms=float(scale_ms), duration_s=duration_s)


class RunCache:
    """Every metric set of each (config, seed), kept in a JSON-lines file."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: dict[tuple[str, int], dict] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    record = json.loads(line)
                    self.rows[(record["config_hash"], record["seed"])] = record["sets"]
        self.simulated = 0
        self.simulate_s = 0.0

    def sets(self, config: SimConfig, seed: int) -> dict:
        key = (config.config_hash, seed)
        if key not in self.rows:
            started = time.perf_counter()
            workload, outcome = run_seed(config, seed)
            sets = {name: metric_sets.summarize(name, config, workload, outcome) for name in metric_sets.METRIC_SETS}
            self.simulate_s += time.perf_counter() - started
            self.simulated += 1
            self.rows[key] = sets
            with self.path.open("a") as out:  # append as we go: nothing lost on a crash
                out.write(json.dumps({"config_hash": key[0], "seed": seed, "sets": sets}) + "\n")
        return self.rows[key]


@dataclass(frozen=True)
class Point:
    scale_ms: float
    values: dict  # metric-set key -> list of per-seed values


def _point(cache: RunCache, config: SimConfig, seeds, metric_set: str) -> dict:
    per_seed = [cache.sets(config, seed)[metric_set] for seed in seeds]
    return {key: [row[key] for row in per_seed] for key in metric_sets.KEYS}


def _sem(values) -> float:
    finite = seed_values(values)
    return statistics.stdev(finite) / math.sqrt(len(finite)) if len(finite) > 1 else 0.0


def _knee_success_key(config: SimConfig) -> str:
    """The success rate the usable rule reads (simcore.usable), as the metric set judges usability."""
    return "knee_" + success_metric(config)


def knee(points: list[Point], success_key: str):
    """The knee of seed-mean points under ``simcore.usable``'s rule (None when no point passes)."""
    return find_knee(points, lambda p: MeasuredPoint(p.scale_ms, seed_mean(p.values[success_key]),
                                                     seed_mean(p.values["throughput_cps"])))


def evaluate(figure: PublishedFigure, candidate: Candidate, cache: RunCache, seeds, duration_s: float) -> SetValue:
    def config(scale_ms):
        return config_of(figure, scale_ms, duration_s, candidate.vo_convoy, candidate.protocol)

    if figure.metric in _POINT:
        key, factor = _POINT[figure.metric]
        values = _point(cache, config(figure.inter_arrival_scale_ms), seeds, candidate.metric_set)[key]
        scale = figure.inter_arrival_scale_ms
    else:
        key, factor = _KNEE[figure.metric]
        points = [Point(s, _point(cache, config(s), seeds, candidate.metric_set)) for s in INTER_ARRIVAL_SCALES_MS]
        success_key = _knee_success_key(config(figure.inter_arrival_scale_ms or INTER_ARRIVAL_SCALES_MS[0]))
        curve = tuple((p.scale_ms, seed_mean(p.values[success_key]), seed_mean(p.values[key]) * factor) for p in points)
        best = knee(points, success_key)
        if best is None:
            return SetValue(candidate.label, None, None, None, len(seeds), curve)
        scaled = [v * factor for v in best.values[key]]
        return SetValue(candidate.label, seed_mean(scaled), _sem(scaled), best.scale_ms, len(seeds), curve)
    scaled = [v * factor for v in values]
    return SetValue(candidate.label, seed_mean(scaled), _sem(scaled), scale, len(seeds))


def _format(value, half_unit: float) -> str:
    if value is None or math.isnan(value):
        return "-"
    decimals = max(0, -int(math.floor(math.log10(half_unit * 2) + 1e-9)))
    return f"{value:.{decimals + 1}f}"


def main(argv=None, prog: str = "python -m studies.published_repro") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    add_seeds_flag(parser, default=5)
    parser.add_argument("--duration-s", type=float, default=3600.0)
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "published_repro.jsonl")
    parser.add_argument("--only", default="", help="comma list of experiments to evaluate (default: all)")
    parser.add_argument("--figures", choices=("published", "corrected"), default="published",
                        help="seed 001's published figures under the published protocol (default), or the "
                             "reference's post-fix figures under the corrected protocol")
    parser.add_argument("--write-data", action="store_true", help=f"write {DATA_PATH.relative_to(ROOT)}")
    parser.add_argument("--markdown", type=Path, help="write the per-figure table (markdown) here")
    add_out_flags(parser, "every figure's value under each metric set, as CSV")
    args = parser.parse_args(argv)
    seeds = args.seeds
    only = {e for e in args.only.split(",") if e}
    study = "corrected_reference" if args.figures == "corrected" else "published_repro"
    out = out_path(args, study, "-".join(["figures", *sorted(only)]), "csv")
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    cache = RunCache(args.cache)
    corrected = args.figures == "corrected"
    if corrected and args.write_data:
        parser.error("--write-data writes the published view's data: only with --figures published")
    candidates = CORRECTED_CANDIDATES if corrected else CANDIDATES
    raw = (CORRECTED_CSV if corrected else PUBLISHED_CSV).read_text()
    figures = parse_published(raw)
    printed = [line.split(",")[8] for line in raw.splitlines()[1:] if line.strip()]
    names = [candidate.label for candidate in candidates]
    print(f"{'figure':58s} {'metric':24s} {'pub':>7s} " + " ".join(f"{n:>20s}" for n in names), flush=True)
    entries, started = [], time.perf_counter()
    for figure, value_text in zip(figures, printed):
        if only and figure.experiment not in only:
            continue
        half_unit = rounding_half_unit(value_text)
        values = [evaluate(figure, candidate, cache, seeds, args.duration_s) for candidate in candidates]
        explanation = explain(figure, half_unit, values)
        entries.append(explanation)
        cells = []
        for value in values:
            verdict = explanation["sets"][value.metric_set]["verdict"]
            mark = MARKS[verdict]
            cells.append(f"{_format(value.value, half_unit):>18s} {mark}")
        print(f"{describe(figure)[:58]:58s} {figure.metric:24s} {value_text:>7s} " + " ".join(cells), flush=True)
    elapsed = time.perf_counter() - started
    tally = {name: {} for name in names}
    for entry in entries:
        for name in names:
            verdict = entry["sets"][name]["verdict"]
            tally[name][verdict] = tally[name].get(verdict, 0) + 1
    print(f"\n{len(entries)} figures, seeds {','.join(map(str, seeds))}, {args.duration_s:g} s simulated; "
          f"{cache.simulated} runs simulated now ({cache.simulate_s:.0f} s), the rest from {args.cache}; "
          f"{elapsed:.0f} s wall")
    for name in names:
        print(f"  {name:14s} " + ", ".join(f"{k}: {v}" for k, v in sorted(tally[name].items())))
    if args.write_data:
        payload = {"source": "studies/published_repro/published_repro.py", "seeds": list(seeds),
                   "duration_s": args.duration_s,
                   "candidates": [{"label": c.label, "metric_set": c.metric_set, "vo_convoy": c.vo_convoy}
                                  for c in CANDIDATES],
                   "figures": entries}
        tmp = DATA_PATH.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload, indent=1) + "\n")
        os.replace(tmp, DATA_PATH)
        print(f"wrote {DATA_PATH}")
    if args.markdown:
        args.markdown.write_text(markdown_table(entries, names, "reference (corrected)" if corrected else "published"))
        print(f"wrote {args.markdown}")
    given = argv if argv is not None else sys.argv[1:]
    command = command_line(prog, given[2:] if prog.endswith("corrected_reference") else given)
    write_csv(out, figure_rows(entries, names, seeds, args.duration_s), command)
    print(f"wrote {out}")
    return 0


def figure_rows(entries: list[dict], names, seeds, duration_s: float) -> list[dict]:
    """One row per figure and metric set: the printed value, the set's value, where its knee sits, the verdict."""
    rows = []
    for entry in entries:
        for name in names:
            cell = entry["sets"][name]
            rows.append({"figure": entry["where"], "metric": entry["metric"], "printed": entry["published"],
                         "metric_set": name, "value": cell["value"], "sem": cell.get("sem"),
                         "scale_ms": cell.get("scale_ms"), "verdict": cell["verdict"],
                         "seeds": ",".join(map(str, seeds)), "duration_s": duration_s})
    return rows


def markdown_table(entries: list[dict], names, reference: str = "published") -> str:
    lines = [f"| figure | metric | {reference} | " + " | ".join(names) + " |",
             "|---|---|---:|" + "---:|" * len(names)]
    for entry in entries:
        cells = []
        for name in names:
            cell = entry["sets"][name]
            text = "-" if cell["value"] is None else f"{cell['value']:.{cell['decimals']}f}"
            if cell.get("scale_ms") is not None and entry["metric"].endswith(("throughput", "at_knee")):
                text += f" @{cell['scale_ms']:g}"
            cells.append(f"{text} {MARKS[cell['verdict']]}")
        lines.append(f"| {entry['where']} | {entry['metric']} | {entry['published']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

"""Predicted vs measured on real stores: fit from 1-4 probed clients, predict 8, 12 and 16, probe them.

    scripts/store-lab.sh up                   # once; this script sets each store's delay itself
    python -m studies.real_stores [--stores s3,az,gs] [--duration-s 60] [--seeds 3] [--out FILE]

For each lab store (scripts/store-lab.sh), at a delay that puts one client
near a seed-000 store's op rate (a read then a conditional write, two round
trips on each store: S3 16 ms each way, about 68 ms a CAS, as seed 000's S3;
Azure 23 ms, about 104 ms; GCS 42 ms, about seed 000's GCS median of 173 ms),
+- half the delay of jitter (``--jitter-share``), it runs the user's three
commands:

1. ``commit-sweeps probe --clients 1-4 --out samples.csv``;
2. ``commit-sweeps fit --samples samples.csv --base <seed-000 store>``;
3. ``commit-sweeps bench --provider-file <fitted> --clients 8,12,16`` (predicted) and
   ``commit-sweeps probe --clients 8,12,16`` (measured),

then prints predicted beside measured: goodput, failure rate and p50, with
the targets (failure rate within 5 points, goodput within 10%), and writes
the same rows to ``--out`` (default
``studies/real_stores/results/comparison-<date>.csv``). Everything else a
run wrote (samples, profiles, JSON lines) stays in ``--work-dir``.
The lab's machine runs the servers and the clients together: each probe
line reports the clients' CPU share and lag, and a probe that its own
clients distort is refused rather than compared.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from commit_sweeps.flags import add_seeds_flag
from studies.results import add_out_flags, command_line, out_path, write_csv

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "scripts" / "store-lab.sh"
# store: (URI variable, endpoint variable, base profile, delay ms each way, what that delay aims at)
STORES = {
    "s3": ("STORE_LAB_S3_URI", "STORE_LAB_S3_ENDPOINT", "s3", 16, "seed 000's S3 CAS, 68 ms mean"),
    "az": ("STORE_LAB_AZ_URI", "STORE_LAB_AZ_ENDPOINT", "azure", 23, "seed 000's Azure CAS, 104 ms mean"),
    "gs": ("STORE_LAB_GS_URI", "STORE_LAB_GS_ENDPOINT", "gcp", 42, "seed 000's GCS CAS, 173 ms median"),
}
FAILURE_POINTS, GOODPUT_SHARE = 0.05, 0.10  # the targets: failure rate within 5 points, goodput within 10%
# Without jitter every request through the lab takes the same time, so clients that read the same version once
# stay in step: at 2-4 clients on Azurite and fake-gcs-server one of each 2, 3, 4 ops won (49-50%, 65%, 70-72%
# failed) and goodput stayed near the one-client rate, until the load of 8-16 clients on the shared cores broke
# the step (Azurite: 11.0 op/s at 4 clients, 15.4-16.2 at 8-16). No real store answers in lockstep (seed 000's
# one-client S3 op: p95 1.4 x p50), so the lab's delay gets +- this share of itself, uniform, each way
# (studies/real_stores/README.md).
JITTER_SHARE = 0.5


def _run(command: list[str], env: dict, log) -> str:
    print("$ " + " ".join(shlex.quote(part) for part in command), file=log, flush=True)
    answer = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    log.write(answer.stderr)
    if answer.returncode != 0:
        raise SystemExit(f"real_stores: {' '.join(command[:4])} ... exited {answer.returncode}: "
                         f"{answer.stderr.strip().splitlines()[-1] if answer.stderr.strip() else ''}")
    return answer.stdout


def _lab_env(delay_ms: int, jitter_ms: int, log) -> dict:
    _run(["bash", str(LAB), "up", "--delay-ms", str(delay_ms), "--jitter-ms", str(jitter_ms)], dict(os.environ), log)
    exports = _run(["bash", str(LAB), "env"], dict(os.environ), log)
    env = dict(os.environ)
    for line in exports.splitlines():
        for assignment in shlex.split(line.removeprefix("export ")):
            key, _, value = assignment.partition("=")
            env[key] = value
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def main(argv=None) -> int:
    prog = "python -m studies.real_stores"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="s3,az,gs", help="lab stores to compare (default s3,az,gs)")
    parser.add_argument("--duration-s", type=float, default=60.0, help="seconds probed per client count (default 60)")
    parser.add_argument("--fit-clients", default="1-4", help="client counts probed to fit (default 1-4)")
    parser.add_argument("--predict-clients", default="8,12,16", help="client counts predicted and probed")
    add_seeds_flag(parser)  # bench's seeds for the prediction
    parser.add_argument("--bench-duration-s", type=float, default=300.0, help="bench's simulated seconds (default 300)")
    parser.add_argument("--max-evaluations", type=int, default=None, help="fit's simulations per operation")
    jitter = parser.add_mutually_exclusive_group()
    jitter.add_argument("--jitter-share", type=float, default=JITTER_SHARE,
                        help=f"the lab's jitter each way as a share of its delay (default {JITTER_SHARE:g})")
    jitter.add_argument("--jitter-ms", type=int, default=None, help="or the lab's jitter, ms each way, for every store")
    parser.add_argument("--max-client-lag", default=None,
                        help="passed to probe: a share of the median op (default probe's); on a machine that runs "
                             "the lab's servers too, a looser value lets the comparison run, its lag in the table")
    parser.add_argument("--work-dir", default="real-stores", help="where samples, profiles and logs go")
    add_out_flags(parser, "the predicted and measured rows, as CSV")
    args = parser.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",")]
    unknown = [s for s in stores if s not in STORES]
    if unknown:
        print(f"error: stores: {unknown} is not allowed; expected some of {', '.join(STORES)}", file=sys.stderr)
        return 2
    if not 0 <= args.jitter_share <= 1:
        print(f"error: jitter_share: {args.jitter_share:g} is not allowed; expected a share in [0, 1] of the delay",
              file=sys.stderr)
        return 2
    out = out_path(args, "real_stores", "comparison", "csv")
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    rows = []
    with open(work / "log.txt", "a") as log:
        print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')} {command_line(prog, argv)}", file=log, flush=True)
        for store in stores:
            uri_var, endpoint_var, base, delay, aim = STORES[store]
            jitter = args.jitter_ms if args.jitter_ms is not None else round(args.jitter_share * delay)
            env = _lab_env(delay, jitter, log)
            probe = [python, "-m", "commit_sweeps", "probe", "--store-uri", env[uri_var], "--endpoint-url",
                     env[endpoint_var], "--duration-s", f"{args.duration_s:g}", "--json"] + (
                ["--max-client-lag", args.max_client_lag] if args.max_client_lag else [])
            samples, profile = work / f"{store}-samples.csv", work / f"{store}.toml"
            print(f"real_stores: {store}: {delay} +- {jitter} ms each way ({aim}); probing {args.fit_clients} "
                  f"clients", file=sys.stderr, flush=True)
            fitted_on = [json.loads(line) for line in
                         _run(probe + ["--clients", args.fit_clients, "--out", str(samples)], env, log).splitlines()]
            print(f"real_stores: {store}: fitting a profile", file=sys.stderr, flush=True)
            fit = [python, "-m", "commit_sweeps", "fit", "--samples", str(samples), "--base", base, "--name",
                   f"lab-{store}", "--out", str(profile), "--quiet"]
            _run(fit + (["--max-evaluations", str(args.max_evaluations)] if args.max_evaluations else []), env, log)
            predicted = [json.loads(line) for line in _run(
                [python, "-m", "commit_sweeps", "bench", "--provider-file", str(profile), "--operation", "cas",
                 "--clients", args.predict_clients, "--seeds", ",".join(map(str, args.seeds)),
                 "--duration-s", f"{args.bench_duration_s:g}", "--json"], env, log).splitlines()]
            print(f"real_stores: {store}: probing {args.predict_clients} clients", file=sys.stderr, flush=True)
            measured = [json.loads(line) for line in
                        _run(probe + ["--clients", args.predict_clients], env, log).splitlines()]
            with open(work / f"{store}.jsonl", "w") as out:
                for kind, lines in (("fitted_on", fitted_on), ("predicted", predicted), ("measured", measured)):
                    for line in lines:
                        out.write(json.dumps({"kind": kind, **line}) + "\n")
            one = fitted_on[0]
            for p, m in zip(predicted, measured):
                rows.append((store, f"{delay}+-{jitter}", one["goodput_ops"], p, m))
    print(_table(rows))
    write_csv(out, [comparison_row(*row) for row in rows], command_line(prog, argv))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def comparison_row(store: str, delay: str, one_client_ops: float, predicted: dict, measured: dict) -> dict:
    """One client count of one store: predicted beside measured, and whether the targets were met."""
    goodput_diff = predicted["goodput_ops"] / measured["goodput_ops"] - 1.0
    failure_diff = predicted["failure_rate"] - measured["failure_rate"]
    return {"store": store, "delay_ms": delay, "one_client_ops": one_client_ops, "clients": measured["clients"],
            "goodput_predicted": predicted["goodput_ops"], "goodput_measured": measured["goodput_ops"],
            "goodput_diff": goodput_diff, "failure_predicted": predicted["failure_rate"],
            "failure_measured": measured["failure_rate"], "failure_diff_points": 100 * failure_diff,
            "p50_predicted_ms": predicted["latency_p50_ms"], "p50_measured_ms": measured["latency_p50_ms"],
            "client_lag_p99_ms": measured["client_lag_p99_ms"], "client_cpu_share": measured["client_cpu_share"],
            "targets_met": abs(goodput_diff) <= GOODPUT_SHARE and abs(failure_diff) <= FAILURE_POINTS}


def _table(rows) -> str:
    head = ("store", "delay ms", "1-client op/s", "clients", "goodput pred", "goodput meas", "diff",
            "failed pred", "failed meas", "diff pts", "p50 pred", "p50 meas", "client lag p99", "client CPU",
            "targets")
    cells = [list(head)]
    for store, delay, one, p, m in rows:
        goodput_diff = p["goodput_ops"] / m["goodput_ops"] - 1.0
        failure_diff = p["failure_rate"] - m["failure_rate"]
        met = abs(goodput_diff) <= GOODPUT_SHARE and abs(failure_diff) <= FAILURE_POINTS
        cells.append([store, delay, f"{one:.2f}", str(m["clients"]), f"{p['goodput_ops']:.2f}",
                      f"{m['goodput_ops']:.2f}", f"{goodput_diff:+.1%}", f"{p['failure_rate']:.1%}",
                      f"{m['failure_rate']:.1%}", f"{failure_diff * 100:+.1f}", f"{p['latency_p50_ms']:.1f}",
                      f"{m['latency_p50_ms']:.1f}", f"{m['client_lag_p99_ms']:.1f} ms",
                      f"{m['client_cpu_share']:.0%}", "met" if met else "MISSED"])
    widths = [max(len(line[i]) for line in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in cells)


if __name__ == "__main__":
    sys.exit(main())

"""``fit``: write a provider profile (TOML) fitted to conditional-write measurements.

    python -m simcore fit --table seed000_conditional_writes.csv --provider s3 [--out s3.toml]
    python -m simcore fit --samples my_latencies.csv --base s3 --name mystore [--out mystore.toml]

``--table`` reads seed-000-style per-thread rows (provider, operation, clients,
success, fail, mean_ms, p50_ms, p95_ms, p99_ms); ``--samples`` reads one row
per measured op (operation, latency_ms, succeeded, clients, and optionally
read_ms, the op's read, which ``commit-sweeps probe`` times; and optionally
``write`` rows, one client's plain writes of a small object, which the probe
also times). The read, the size-based write and the floor come from ``--base``
(a built-in provider) or ``--base-file`` (a profile file), since a
conditional-write benchmark does not measure them, except the read where the
samples time one client's reads and the plain write where they have write
rows: those are then the measured ones (``--base-read`` and ``--base-write``
keep the base's); the conditional write(s) and the measured model's terms are
fitted
(``simcore.fit``, docs/reference/profiles.md). A subcommand module: ``configure``
adds its flags to a parser, ``run`` does the work and returns the exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import sys

from simcore.errors import ConfigError
from commit_sweeps.flags import EXIT_BAD_INPUT, EXIT_OK, bad_input, check_output_path, output_path

FIT_HELP = "write a provider profile (TOML) fitted to conditional-write measurements"


# What the fit's errors call the profile it makes (the file it writes must load as --provider-file loads one).
FITTED = "the fitted profile"

# The report's spread is that of the fits of this model the data find equally good, not the model's own error:
# where the store's mechanism is not the model's, every such fit can miss together (seed 000's Azure Premium CAS
# fitted on 1,5,6,8: all 48 put 16 clients at 64.5-69.3% failed, the store 72.2%; docs/reference/profiles.md).
DETERMINATION_TITLE = ("How well the data determine the terms (equally good fits of this model, and what they predict; "
                       "the model's own error is not in these ranges)")

# The loss (simcore.fit.scoring.mismatch) is, per client count, squared deviations in tolerance units: failure rate
# in 2-point units, goodput in 3% units, median latency in 15% units, and looser ones for the tail. A fit 10% off in
# goodput and 5 points off in failure rate at every count, the tolerance docs/accuracy.md holds fits to, has
# (ln 1.1 / 0.03)^2 + (5 / 2)^2 = 16.3 from those two alone: a loss below GOOD_FIT_LOSS is inside it on average.
# Seed 000's measured profiles fitted at 0.3-14 and are within it in all 128 cells (docs/accuracy.md).
GOOD_FIT_LOSS = 16.0
CLOSE_FIT_LOSS = 1.0  # on average within one tolerance unit of every measured figure

# What each term in the report means, in the names simcore.fit.determination gives them.
TERM_MEANINGS = {
    "write median ms": "the conditional write's own median latency",
    "write sigma": "its spread (lognormal sigma)",
    "decided at": "when in the write's round trip the store decides it (0 as it arrives, 1 as it answers)",
    "failed x": "a failed write's latency over a successful one's",
    "contention exponent": "how the write slows with the conditional requests in flight (median x c^exponent)",
    "contention sigma": "how its spread grows with them (per ln c)",
    "read observed at": "when in the read's round trip it sees the object (0 as sent, 1 as it returns)",
    "writes/s": "the object's write throttle, tokens per second",
    "burst": "the throttle's bucket size",
    "resends": "how often the client library resends a refused write",
    "resend wait ms": "its first wait before a resend",
    "wait x": "the growth of that wait per resend",
    "token per commit": "1: only a write that would commit takes a token; 0: every write does",
    "commit hold ms": "how long the object holds itself after each successful write",
    "failed extra uncontended": "a failure's extra time is drawn without the contention terms",
}


def fit_verdict(operation: str, loss: float) -> str:
    """Whether ``operation``'s fit is good, in words, against the stated thresholds."""
    if loss <= CLOSE_FIT_LOSS:
        return (f"{operation}: fit loss {loss:.2f}: a close fit (at most {CLOSE_FIT_LOSS:g}: on average within one "
                f"tolerance unit of the measurements at each client count, e.g. 2 points of failure rate or 3% of "
                f"goodput)")
    if loss <= GOOD_FIT_LOSS:
        return (f"{operation}: fit loss {loss:.2f}: a good fit (at most {GOOD_FIT_LOSS:g}, what a fit 10% off in "
                f"goodput and 5 points off in failure rate at every client count would score; lower is closer)")
    return (f"{operation}: fit loss {loss:.2f}: a poor fit (above {GOOD_FIT_LOSS:g}, what a fit 10% off in goodput "
            f"and 5 points off in failure rate at every client count would score): the profile misses the "
            f"measurements by more than docs/accuracy.md's tolerance; measure each count longer, say whether the "
            f"store throttles (--throttle OP), or read its answers as rough")


def term_legend(reports) -> list[str]:
    """One line per term the report names: what it is."""
    named = [name for report in reports for name in report.terms]
    return [f"  {name}: {TERM_MEANINGS[name]}" for name in dict.fromkeys(named) if name in TERM_MEANINGS]


def configure(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--table", metavar="CSV", help="seed-000-style per-thread table (one row per client count)")
    source.add_argument("--samples", metavar="CSV",
                        help="measured ops, one per row: operation (cas|append), latency_ms, succeeded, clients, "
                             "and optionally read_ms (the op's read, which probe times: the profile's read then "
                             "comes from one client's reads); rows of operation write (one client's plain writes, "
                             "which probe also times) give the profile's plain write")
    parser.add_argument("--provider", default=None,
                        help="the table's provider column to fit (with --table); also the default --base and name")
    parser.add_argument("--base", default=None, metavar="PROVIDER",
                        help="built-in provider whose read (unless the samples time it), write and floor figures "
                             "the profile keeps")
    parser.add_argument("--base-file", default=None, metavar="PATH", help="or a profile file to take them from")
    parser.add_argument("--base-read", action="store_true",
                        help="with --samples that time the reads (read_ms): keep the base's read latency anyway")
    parser.add_argument("--base-write", action="store_true",
                        help="with --samples that time plain writes (write rows): keep the base's write latency "
                             "anyway")
    parser.add_argument("--name", default=None, help="the profile's name (default: --provider)")
    parser.add_argument("--description", default=None, help="one line describing the store")
    parser.add_argument("--observed-at", type=float, default=None, metavar="F",
                        help="fix when reads observe the object (0 sent .. 1 returned); default: fitted")
    parser.add_argument("--failed-ratio", action="append", default=[], metavar="OP=R",
                        help="mean failed / mean successful op latency of operation OP (cas, append), all client "
                             "counts pooled, where only that aggregate is known (seed 000 section 8); repeatable")
    parser.add_argument("--throttle", action="append", default=[], choices=("cas", "append"), metavar="OP",
                        help="the store throttles operation OP (cas, append) on one object (GCS, Azure CAS): fit a "
                             "token bucket and the client's resends of refused writes instead of the contention "
                             "terms (on fewer than 6 client counts it fits a bucket of every write and one of "
                             "commits only and keeps one, and the failed write's multiplier too: "
                             "docs/reference/profiles.md); repeatable")
    parser.add_argument("--max-evaluations", type=int, default=None, metavar="N",
                        help="simulations per operation fitted (default 492; for a throttled one 5040 a kind of "
                             "bucket, which sets the generations: with the population rounded up to a power of "
                             "two, 5,376 simulations, 9,728 on fewer than 6 client counts)")
    parser.add_argument("--out", type=output_path, default=None, metavar="PATH",
                        help="write the TOML here (default: print it)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _base(args):
    from simcore.profiles import load_profile
    from simcore.providers import PROVIDERS

    if args.base_file is not None:
        if args.base is not None:
            raise ConfigError("base", args.base, "no value with --base-file")
        return load_profile(args.base_file)
    name = args.base or args.provider
    if name not in PROVIDERS or PROVIDERS[name].all_fixed:
        raise ConfigError("base", name, "a built-in provider (" + ", ".join(p for p in PROVIDERS if p != "instant")
                          + ") or --base-file, for the read and write figures")
    return PROVIDERS[name]


def _default_description(args, base, reads, writes) -> str:
    """What the profile describes unless ``--description`` says: a probed store is the store that was probed,
    with the base named for the figures the samples do not time (not the base's own description)."""
    if args.samples is None:
        return base.description
    from_base = [what for what, measured in (("read", reads), ("write", writes)) if measured is None] + ["floor"]
    kept = ", ".join(from_base[:-1]) + " and " + from_base[-1] if len(from_base) > 1 else from_base[0]
    return (f"a store probed into {os.path.basename(args.samples)} (commit-sweeps probe); {kept} from the "
            f"{args.base_file or base.name} base ({base.description})")


def _is_utf8(text: str) -> bool:
    """False for text holding bytes that were not UTF-8 (Python keeps them in argv as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    from simcore import fit
    from simcore.profiles import check_name, check_profile, dump_profile, profile_from_toml

    try:
        for flag, what in (("base_read", "reads"), ("base_write", "writes")):
            if getattr(args, flag) and args.samples is None:
                raise ConfigError(flag, True, f"only with --samples (a table times no {what})")
        if args.table is not None:
            if args.provider is None:
                raise ConfigError("provider", None, "the provider whose rows of --table to fit")
            measurements, reads, writes = fit.read_table(args.table, args.provider), None, None
            rounds = None
        else:
            samples = fit.read_samples_file(args.samples)
            measurements = samples.stats
            reads = None if args.base_read else samples.read  # --base-read: the base's read, as for a table
            writes = None if args.base_write else samples.write
            rounds = samples.round_ms_per_read
        if args.observed_at is not None and not 0 <= args.observed_at <= 1:
            raise ConfigError("observed_at", args.observed_at, "a fraction in [0, 1]")
        if args.max_evaluations is not None and args.max_evaluations < 3:
            raise ConfigError("max_evaluations", args.max_evaluations, "an integer >= 3")
        base = _base(args)
        failed_ratios = {}
        for item in args.failed_ratio:
            operation, _, value = item.partition("=")
            try:
                ratio = float(value)
            except ValueError:
                ratio = math.nan
            if operation not in ("cas", "append") or not ratio > 0:
                raise ConfigError("failed_ratio", item, "OP=R with OP cas or append and R > 0, e.g. cas=1.22")
            failed_ratios[operation] = ratio
        name = args.name or args.provider or base.name
        description = args.description or _default_description(args, base, reads, writes)
        for field, text in (("name", name), ("description", description)):
            if text is not None and not _is_utf8(text):  # the profile is written in UTF-8
                raise ConfigError(field, text, "text in UTF-8 (this holds bytes that are not)")
        check_name(name, "name" if args.name else "provider")  # the profile's name: what results call the store
        # What the samples measured goes into the profile as it is: checked before minutes of fitting.
        check_profile(fit.starting_profile(base, name=name, description=args.description, read=reads, write=writes,
                                           round_ms_per_read=rounds), FITTED)
        if args.out is not None:
            check_output_path(args.out)
    except ConfigError as error:
        return bad_input(error)
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    report: dict = {}
    try:
        profile, losses = fit.fit_profile(base, measurements, name=name, description=description,
                                          observed_at=args.observed_at, max_evaluations=args.max_evaluations,
                                          failed_ratios=failed_ratios, throttled=tuple(args.throttle),
                                          read=reads, write=writes, round_ms_per_read=rounds,
                                          progress=progress, report=report)
    except ConfigError as error:
        return bad_input(error)
    # How well the data determined the terms: on stderr with the progress lines, and kept in the file.
    determined = [line for operation in losses for line in report[operation].lines()]
    legend = term_legend(report[operation] for operation in losses)
    verdicts = [fit_verdict(operation, loss) for operation, loss in losses.items()]
    if progress:
        progress(DETERMINATION_TITLE)
        for line in determined + (["What the terms are:"] + legend if legend else []) + verdicts:
            progress(line)
        progress(f"described as: {description}" + ("" if args.description else " (--description names the store)"))
    source = args.table or args.samples
    flags = [f"--{key.replace('_', '-')} {shlex.quote(str(value))}" for key, value in vars(args).items()
             if key in ("table", "samples", "provider", "base", "base_file", "name", "observed_at", "max_evaluations")
             and value is not None] + [f"--failed-ratio {item}" for item in args.failed_ratio] + [
        f"--throttle {op}" for op in args.throttle] + [f"--{flag.replace('_', '-')}" for flag in
                                                        ("base_read", "base_write") if getattr(args, flag)]
    measured = [f"{what} from the samples (one client's {m.samples} {what}s: median {m.median_ms:.3g} "
                f"ms, sigma {m.sigma:.3g})" for what, m in (("read", reads), ("write", writes)) if m is not None]
    rest = [what for what, m in (("read", reads), ("write", writes)) if m is None] + ["floor"]
    if rounds is not None:
        measured.append(f"a round of reads sent at once from the samples ({', '.join(map(str, samples.rounds))} "
                        f"reads: {rounds:.3g} ms more for each read past the first)")
    kept = "; ".join(measured + [(", ".join(rest[:-1]) + " and " + rest[-1]) if len(rest) > 1 else rest[0]])
    kept = kept[0].upper() + kept[1:]
    header = (f"Provider profile {name}, fitted by: python -m simcore fit {' '.join(flags)}\n"
              f"Measurements: {os.path.basename(source)} ({', '.join(f'{op} at {len(s)} client counts' for op, s in measurements.items())}).\n"
              f"{kept} from {args.base_file or base.name}; conditional writes and terms fitted\n"
              f"(docs/reference/profiles.md). Fit loss per operation: "
              + ", ".join(f"{op} {loss:.2f}" for op, loss in losses.items())
              + "\n" + "\n".join(verdicts)
              + f"\n{DETERMINATION_TITLE}:\n"
              + "\n".join(determined + (["What the terms are:"] + legend if legend else [])))
    text = dump_profile(profile, header)
    try:  # never a file that --provider-file would refuse: a fitted term past a profile's limits is refused here
        profile_from_toml(text, FITTED, field="fit")
    except ConfigError as error:
        return bad_input(error)
    if args.out is None:
        sys.stdout.write(text)
    else:
        partial = args.out + ".partial"
        try:
            with open(partial, "w") as handle:
                handle.write(text)
            os.replace(partial, args.out)  # never a torn profile under the final name
        except OSError as error:
            with contextlib.suppress(OSError):
                os.remove(partial)
            print(f"error: out: {args.out!r} cannot be written ({error.strerror})", file=sys.stderr)
            return EXIT_BAD_INPUT
        if progress:
            progress(f"wrote {args.out}")
    return EXIT_OK

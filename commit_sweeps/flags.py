"""The flags every command shares, each defined once, and how a command reports bad input.

Every command (``python -m simcore run|bench|fit``, ``commit-sweeps ...``,
``python sweeps/<experiment>.py``, ``python -m dashboards``, the benchmarks)
adds a shared flag by calling its function here, so ``--seeds 3`` means
seeds 1, 2, 3 everywhere and a default, a help line or a check cannot drift
between two copies. A command declares only the flags that are its own.

One function per group, as Helm's ``addValueOptionsFlags``:

- ``add_store_flag``: ``--store URI`` (default ``$SWEEPS_STORE``, else ``./results``);
- ``add_seeds_flag``: ``--seeds`` (a count N = seeds 1..N, or a list and
  ranges ``1,2,3``, ``4-6``), parsed by ``parse_seeds`` as it is read;
- ``add_duration_flag``: ``--duration-s``;
- ``add_catalog_flags``, ``add_retry_flags``, ``add_maintenance_flags``:
  the setup of one config (``simulate`` and ``capacity``);
- ``add_provider_flag``, ``add_latency_flags``, ``add_client_flag``: the
  store's profile (``--provider``, ``--latency-model``, ``--provider-file``)
  and the client preset (``--client``); ``simcore.builder.config_from_flags``
  turns them into a config;
- ``add_protocol_flag``: ``--protocol corrected|published``, the commit
  protocol (``SimConfig.protocol``; every command that simulates);
- ``add_object_write_throttle_flag``: ``--throttle-object-writes``, the
  profile's documented per-object write limit on the catalog object
  (``simulate`` and ``capacity``, whose configs come from flags);
- ``add_search_range_flags``: ``--min-scale-ms``, ``--max-scale-ms``,
  ``--tolerance``, whose defaults are ``simcore.bisection.SearchRange``'s;
- ``add_max_memory_flag``: ``--max-memory``; ``memory_limit`` and
  ``given_memory_limit``: the limit it or ``$SIMCORE_MAX_MEMORY`` sets, read
  here for simcore, which reads no environment variable.

Exit status: ``EXIT_OK`` 0, ``EXIT_FAILED`` 1 (some work failed),
``EXIT_BAD_INPUT`` 2 (nothing was run), ``EXIT_INTERRUPTED`` 130. Bad input
is one line, ``error: <field>: <value> is not allowed; expected <what>``:
``OneLineParser`` makes argparse's own errors one line too.

Every ``--out`` is read as ``output_path`` (its spelling) and checked with
``check_output_path`` (what it names: no device, FIFO, socket or directory,
in a folder that takes a file) before the command does any work.

Pure argparse and that one look at the file system: no Ray, no results store, nothing that runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import stat
import sys
import tempfile
from typing import Optional

from simcore import bounds
from simcore.bisection import SearchRange
from simcore.clients import REFERENCE, client_names
from simcore.catalog_databases import catalog_database_names
from simcore.config import (CATALOG_BACKENDS, DEFAULT_CATALOG_LATENCY_MS, DEFAULT_PROTOCOL,
                            DEFAULT_SERVICE_ROUND_TRIP_MS, METADATA_FORMATS, METADATA_WRITERS, PROTOCOLS,
                            TABLE_DISTRIBUTIONS, V4_CATALOGS)
from simcore.errors import ConfigError
from simcore.providers import PROVIDERS
from simcore.redaction import redact

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130

STORE_ENV = "SWEEPS_STORE"
DEFAULT_STORE = "./results"
DEFAULT_SEEDS = 3
DEFAULT_DURATION_S = 3600.0
MAX_SEEDS = 100_000
SEEDS_HELP = ("a count N (seeds 1..N), or a list of seeds and ranges such as 1,2,3 or 4-6 "
              "(the same in every command)")


# -- bad input: one line, exit status 2 ---------------------------------------------------------------

class UsageError(Exception):
    """argparse refused the command line (``OneLineParser``); the message is one line."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors raise ``UsageError`` instead of printing the usage: the command prints one line."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse hook
        raise UsageError(message)


def bad_input(error: Exception) -> int:
    """Print ``error`` as the one line of bad input; the exit status to return."""
    print(f"error: {redact(str(error))}", file=sys.stderr)  # a value it quotes may be a URI with credentials
    return EXIT_BAD_INPUT


# -- values --------------------------------------------------------------------------------------------

def integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected an integer") from None


def output_path(text: str) -> str:
    """A path to write to: non-empty and printable, so every message that names it is one line.

    Only its spelling is checked here, as it is read; what it names is ``check_output_path``'s, when the
    command starts."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected a path in UTF-8") from None
    if not text or not text.isprintable():
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected a non-empty path without "
                                         f"control characters")
    return text


# What an output path may not be, by the kind of file it names (``os.stat``'s, through symbolic links): writing
# there would replace a device node or block on a FIFO, and as root ``os.replace`` swaps /dev/null for a file.
_SPECIAL_FILES = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                  (stat.S_ISSOCK, "a socket"))


def check_output_path(path: str, *, field: str = "out", directory: bool = False) -> None:
    """Refuse, as a ConfigError naming ``field``, an output path that cannot take what the command writes.

    The one check of every ``--out``, made before any work starts. A file output (``directory=False``) must
    be a regular file or a new name, in an existing folder where this user can create a file: that is tried
    (a temporary file, written and removed), since a folder on a full disk or in /proc passes ``os.access``.
    A directory output (``directory=True``, the dashboard's site) may be anything but a device, a FIFO or a
    socket: the command that fills it says what else is wrong.
    """
    allowed = ("a directory path (one that exists or a new one)" if directory else
               "a regular file path in an existing folder this user can write (or a new one there)")
    try:
        kind = os.stat(path).st_mode
    except FileNotFoundError:
        kind = None
    except OSError as error:  # a path through a file, a loop of links, a name too long
        raise ConfigError(field, path, f"{allowed} ({error.strerror})") from None
    if kind is not None:
        for is_kind, name in _SPECIAL_FILES:
            if is_kind(kind):
                raise ConfigError(field, path, f"{allowed} (this is {name})")
    if directory:
        return
    if kind is not None and stat.S_ISDIR(kind):
        raise ConfigError(field, path, f"{allowed} (this is a directory)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(field, path, f"{allowed} ({folder} does not exist)")
    if kind is not None and not os.access(path, os.W_OK):
        raise ConfigError(field, path, f"{allowed} (this user cannot write it)")
    try:
        handle, trial = tempfile.mkstemp(prefix=".write-check-", dir=folder)
    except OSError as error:
        raise ConfigError(field, path, f"{allowed} (a file cannot be made in {folder}: {error.strerror})") from None
    try:
        os.write(handle, b"x")  # a full disk refuses the first byte
    except OSError as error:
        raise ConfigError(field, path, f"{allowed} ({folder} takes no data: {error.strerror})") from None
    finally:
        os.close(handle)
        os.remove(trial)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected an integer >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; expected an integer >= 1")
    return value


def number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected a number") from None


def parse_seeds(text: str) -> tuple[int, ...]:
    """The seeds a ``--seeds`` value names, in every command alike.

    A bare number N means seeds 1..N (how many); a value with a comma or a
    range names the seeds themselves. A single seed other than 1 is
    written as a one-seed range (``7-7``) or with a trailing comma (``7,``).

    >>> parse_seeds("3"), parse_seeds("1,2,3"), parse_seeds("4-6,9"), parse_seeds("7,")
    ((1, 2, 3), (1, 2, 3), (4, 5, 6, 9), (7,))
    """
    allowed = SEEDS_HELP
    text = str(text).strip()
    try:
        if text.isdigit():
            count = int(text)
            if not 1 <= count <= MAX_SEEDS:
                raise ValueError
            return tuple(range(1, count + 1))
        seeds: list[int] = []
        for part in (part.strip() for part in text.split(",")):
            if not part:
                continue
            low, _, high = part.partition("-")
            first, last = int(low), int(high or low)
            if first < 0 or last < first or last > bounds.MAX_SEED or len(seeds) + last - first + 1 > MAX_SEEDS:
                raise ValueError
            seeds.extend(range(first, last + 1))
    except ValueError:
        raise ConfigError("seeds", text,
                          allowed + f", at most {MAX_SEEDS:,} seeds, each <= {bounds.MAX_SEED}") from None
    if not seeds:
        raise ConfigError("seeds", text, allowed)
    if len(set(seeds)) != len(seeds):
        raise ConfigError("seeds", text, "distinct seeds")
    return tuple(seeds)


class SeedsAction(argparse.Action):
    """``--seeds`` read with ``parse_seeds``: the namespace holds the tuple of seeds.

    A bad value is refused as the line ``seeds: <value> is not allowed;
    expected ...``, the same in every command.
    """

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            seeds = parse_seeds(values)
        except ConfigError as error:
            raise argparse.ArgumentError(None, str(error)) from None
        setattr(namespace, self.dest, seeds)


# -- the shared flags ------------------------------------------------------------------------------------

def default_store_uri() -> str:
    """``$SWEEPS_STORE`` when set, else ``./results``: where ``--store`` points unless given."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def add_store_flag(parser: argparse.ArgumentParser, *, when_unset: Optional[str] = None) -> None:
    """``--store URI``: the results store a command reads or fills.

    ``when_unset``: for a benchmark that makes a store of its own when none
    is named; the flag's value is then None unless given, and this text
    says what happens.
    """
    now = redact(default_store_uri()).replace("%", "%%")  # argparse %-formats help: a %2F would break --help
    default = (f"default ${STORE_ENV} if set, else {DEFAULT_STORE}; now {now}" if when_unset is None
               else f"default: {when_unset}")
    parser.add_argument("--store", default=default_store_uri() if when_unset is None else None, metavar="URI",
                        help=f"results store: a directory or a pyarrow URI such as s3://bucket/prefix ({default})")


def add_seeds_flag(parser: argparse.ArgumentParser, *, required: bool = False, default: int = DEFAULT_SEEDS) -> None:
    """``--seeds``: required, or the seeds 1..``default`` (a benchmark whose seeds cost more may take fewer)."""
    parser.add_argument("--seeds", action=SeedsAction, required=required, metavar="SEEDS",
                        default=None if required else tuple(range(1, default + 1)),
                        help=SEEDS_HELP if required else f"{SEEDS_HELP} (default {default})")


def add_duration_flag(parser: argparse.ArgumentParser, *, default_s: float = DEFAULT_DURATION_S,
                      warm_up: bool = True, what: str = "simulated seconds per run") -> None:
    """``--duration-s S``; ``warm_up``: the runs are catalog simulations, whose steady-state window needs time;
    ``what``: what the seconds are (``probe``'s are measured, not simulated)."""
    note = "; must exceed twice the warm-up, 1800 s with the default runtime" if warm_up else ""
    parser.add_argument("--duration-s", type=number, default=default_s, metavar="S",
                        help=f"{what} (default {default_s:g}){note}")


def add_provider_flag(parser: argparse.ArgumentParser) -> None:
    """``--provider``: the object store simulated (a built-in one, or the name in ``--provider-file``)."""
    parser.add_argument("--provider", default=None,
                        help="object store: " + ", ".join(PROVIDERS) + " (or the name in --provider-file)")


def add_catalog_flags(parser: argparse.ArgumentParser, *, catalog_default: Optional[str] = None) -> None:
    """The catalog setup of one config: catalog, tables, the transaction mix and real conflicts.

    ``catalog_default``: None makes ``--catalog`` required.
    """
    parser.add_argument("--catalog", required=catalog_default is None, default=catalog_default,
                        help="catalog back-end: " + ", ".join(CATALOG_BACKENDS)
                             + " (append: conditional-append log, s3x/azurex/azure)"
                             + (f"; default {catalog_default}" if catalog_default else ""))
    parser.add_argument("--catalog-latency-ms", type=number, default=None,
                        help=f"service: the fixed read/CAS latency (default {DEFAULT_CATALOG_LATENCY_MS:g}); "
                             f"rest, ducklake, unity: the round trip to the catalog service, added to each call "
                             f"(default {DEFAULT_SERVICE_ROUND_TRIP_MS:g})")
    parser.add_argument("--catalog-database", default=None, metavar="NAME|FILE",
                        help="rest, ducklake, unity: the database behind the catalog service, whose commit time "
                             "and concurrency bound it: " + ", ".join(catalog_database_names())
                             + " (default postgresql, for ducklake postgresql-ducklake), or the JSON file "
                               "probe-catalog --out wrote (docs/architectures.md)")
    parser.add_argument("--metadata", default=None, choices=METADATA_FORMATS,
                        help="Iceberg table metadata: v3 (default: metadata.json and a manifest list) or v4 (a root "
                             "manifest per attempt, leaf manifests reused, no metadata file; catalogs "
                             + ", ".join(V4_CATALOGS) + ")")
    parser.add_argument("--rest-metadata-writer", default=None, choices=METADATA_WRITERS,
                        help="rest: who writes the new metadata file, the server (default: the reference server, "
                             "Polaris, Lakekeeper) or the client (Glue, S3 Tables, JDBC)")
    parser.add_argument("--num-tables", type=integer, required=True, help="tables sharing the catalog object (>= 1)")
    parser.add_argument("--table-dist", default="uniform", help="table choice: " + " or ".join(TABLE_DISTRIBUTIONS))
    parser.add_argument("--fast-append-ratio", type=number, required=True,
                        help="share of FastAppend transactions; the rest are ValidatedOverwrite")
    parser.add_argument("--merge-append-ratio", type=number, default=0.0, help="share of MergeAppend (default 0)")
    parser.add_argument("--real-conflict-probability", type=number, default=0.0,
                        help="chance a VO aborts on a same-table conflict (default 0)")


def add_retry_flags(parser: argparse.ArgumentParser) -> None:
    """``--retry`` and ``--retry-budget-ms``: override the client preset's."""
    parser.add_argument("--retry", type=integer, default=None,
                        help="retries after the first attempt (default: the client's; reference 10)")
    parser.add_argument("--retry-budget-ms", type=number, default=None,
                        help="total retry time after which a commit gives up (default: the client's; reference none)")


def add_maintenance_flags(parser: argparse.ArgumentParser) -> None:
    """``--maintenance-jobs`` and ``--maintenance-interval-s``: compactions beside a writer workload."""
    parser.add_argument("--maintenance-jobs", type=integer, default=None,
                        help="maintenance jobs (validated overwrites) beside the writers")
    parser.add_argument("--maintenance-interval-s", type=number, default=None, help="each maintenance job's interval")


def add_group_commit_flag(parser: argparse.ArgumentParser) -> None:
    """``--group-commit-s S``: writers hand their files to one committer per table (writers only)."""
    parser.add_argument("--group-commit-s", type=number, default=None, metavar="S",
                        help="writers hand their files to one committer per table, which commits every S seconds "
                             "(0: as soon as its previous commit lands); docs/architectures.md")


def add_latency_flags(parser: argparse.ArgumentParser, *, variant: bool = False) -> None:
    """``--latency-model`` and ``--provider-file``; ``variant``: a sweep's, whose rows go to another experiment."""
    parser.add_argument("--latency-model", default="reference", metavar="MODEL",
                        help="reference (default: the reference simulator's provider table) or measured "
                             "(fitted to seed 000; docs/reference/profiles.md)"
                             + ("; rows go to <experiment>-measured" if variant else ""))
    parser.add_argument("--provider-file", default=None, metavar="PATH",
                        help="a provider profile (TOML) to simulate instead of "
                             + ("the grid's providers (docs/reference/profiles.md); rows go to <experiment>-profile-<name>"
                                if variant else "a built-in one (docs/reference/profiles.md)"))


def add_client_flag(parser: argparse.ArgumentParser, *, variant: bool = False) -> None:
    """``--client NAME``: a client preset's retry settings; ``variant``: a sweep's, as ``add_latency_flags``."""
    where = ("every point uses its retry settings; rows go to <experiment>-client-<name>" if variant
             else "the retry flags override its fields")
    parser.add_argument("--client", default=REFERENCE, metavar="NAME",
                        help=f"client preset: {', '.join(client_names())} (default {REFERENCE}, as the reference "
                             f"simulator; docs/reference/clients.md); {where}")


def add_protocol_flag(parser: argparse.ArgumentParser, *, default: Optional[str] = DEFAULT_PROTOCOL) -> None:
    """``--protocol``: the commit protocol simulated (``SimConfig.protocol``), the corrected one by default.

    ``default=None``: the command picks it (``simulate --metric-set seed001`` reproduces seed 001 with
    the published protocol).
    """
    parser.add_argument("--protocol", default=default, choices=PROTOCOLS,
                        help="commit protocol: corrected (default"
                             + ("" if default is not None else " unless --metric-set seed001, then published")
                             + ": the reference as its author corrected it in 2026, more I/O per attempt; "
                               "docs/reference/model.md) or published (as seed 001's figures were made)")


def add_object_write_throttle_flag(parser: argparse.ArgumentParser) -> None:
    """``--throttle-object-writes``: the profile's documented per-object write limit on the catalog object
    (``cas_throttle_per_s``; ``simcore.builder.config_from_flags`` reads the flag)."""
    parser.add_argument("--throttle-object-writes", action="store_true",
                        help="apply the provider's documented per-object write limit to the catalog object "
                             "(GCS: 1 write/s; others: none; docs/reference/variants.md)")


def add_search_range_flags(parser: argparse.ArgumentParser) -> None:
    """``--min-scale-ms``, ``--max-scale-ms`` and ``--tolerance``: the range a knee search probes."""
    default = SearchRange()
    parser.add_argument("--min-scale-ms", type=number, default=None, metavar="MS",
                        help=f"fastest inter-arrival scale searched, the heaviest load (default "
                             f"{default.min_scale_ms:g}; {COMPARE_MIN_SCALE_MS:g} with --compare)")
    parser.add_argument("--max-scale-ms", type=number, default=default.max_scale_ms, metavar="MS",
                        help=f"slowest inter-arrival scale searched, the lightest load (default "
                             f"{default.max_scale_ms:g})")
    parser.add_argument("--tolerance", type=number, default=default.tolerance, metavar="F",
                        help=f"bracket the knee to this relative width in rate (default {default.tolerance:g} "
                             f"= {100 * default.tolerance:g}%%)")


# capacity --compare searches heavier loads by default: a catalog service takes hundreds of commits a second.
COMPARE_MIN_SCALE_MS = 4.0


def search_range_of(args: argparse.Namespace, *, min_scale_ms: Optional[float] = None) -> SearchRange:
    """The ``SearchRange`` of ``add_search_range_flags``'s flags (a SearchRangeError when it is not one);
    ``min_scale_ms``: the default heaviest load where the flag is not given (else the range's own)."""
    fastest = args.min_scale_ms if args.min_scale_ms is not None else min_scale_ms
    if fastest is None:
        fastest = SearchRange().min_scale_ms
    return SearchRange(fastest, args.max_scale_ms, args.tolerance)


def given_memory_limit(max_memory: Optional[str] = None) -> Optional[tuple[int, str]]:
    """(bytes, where it came from) of the memory limit the user set: ``--max-memory`` (``max_memory``), else
    ``$SIMCORE_MAX_MEMORY``; None when neither is set (each machine that simulates then takes its own default,
    ``simcore.bounds.memory_limit()``)."""
    if max_memory is not None:
        return bounds.memory_limit(max_memory)
    if os.environ.get(bounds.MEMORY_LIMIT_ENV):
        return bounds.memory_limit(os.environ[bounds.MEMORY_LIMIT_ENV], bounds.MEMORY_LIMIT_ENV,
                                   f"${bounds.MEMORY_LIMIT_ENV}")
    return None


def memory_limit(max_memory: Optional[str] = None) -> tuple[int, str]:
    """(bytes, where it came from) of the work bounds' memory limit: the one the user set (``given_memory_limit``),
    else half of this machine's memory. A bad size is a ConfigError naming the flag or the variable."""
    return given_memory_limit(max_memory) or bounds.memory_limit()


def add_max_memory_flag(parser: argparse.ArgumentParser) -> None:
    """``--max-memory SIZE``: the work bounds' memory limit (``simcore.bounds``)."""
    parser.add_argument("--max-memory", default=None, metavar="SIZE",
                        help=f"refuse runs (and a sweep's plan) estimated to need more memory than this, e.g. 8G "
                             f"(default ${bounds.MEMORY_LIMIT_ENV} if set, else half this machine's memory)")


# -- a long command stopped by a signal (probe, probe-catalog) -----------------------------------------------

# The signals that stop a command that must clean up first: ^C, kill, and a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    """Raised by ``raise_interrupted`` where a stop signal arrives; its text is the signal's name."""


def raise_interrupted(signum, frame):
    """A signal handler: turn a stop signal into ``Interrupted``, so that the command's clean-up runs."""
    raise Interrupted(signal.Signals(signum).name)


@contextlib.contextmanager
def stop_signals_interrupt():
    """Within: every stop signal raises ``Interrupted`` (``raise_interrupted``); on the way out, the handlers before."""
    previous = {s: signal.signal(s, raise_interrupted) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for stop_signal, handler in previous.items():
            signal.signal(stop_signal, handler)


def ignore_stop_signals() -> None:
    """From now on no stop signal can end a clean-up half-way: each is ignored."""
    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, signal.SIG_IGN)

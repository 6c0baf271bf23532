"""Hostile input on every flag of every command: exit 0 or 2, one line, bounded memory.

The flags are not listed here: they are read from ``commit_sweeps.cli.build_parser()``,
so a new subcommand or flag is fed bad values the day it is added. All this file
knows is ``BASE_COMMANDS``, one small valid command per subcommand, into which one
flag at a time is given a bad value (negative, zero, NaN, infinities, huge, empty,
not a number, control characters, bytes that are not UTF-8). Whatever the value,
the command must end with exit status 0 (the value was good) or 2 (refused) and,
when refused, say so in one line without a traceback, and never grow by more than
``PEAK_GROWTH_LIMIT_KB``. Beside it, ``KNOWN_HOSTILE_INPUTS``: whole commands whose input is
wrong in a way one flag at a time cannot reach (a combination of flags, a bad input file, a busy
port), each with the exit status it must end with.

How a case runs, and why:

- **In a forked copy of this process** (``run_isolated``): no new interpreter and no
  re-import (the parent has the simulator compiled, see ``warm_up``), yet each case
  has its own peak memory (``os.wait4``'s ``ru_maxrss``, which in one long-lived
  process would only ever show the largest case so far), its own working directory,
  environment and patches, and a case that runs away is killed by a deadline and an
  address-space limit instead of taking the shared machine down with it. A value the
  parser itself refuses (about a third of them) is found in this process first
  (``refused_by_parser``): nothing of the command has run, so there is nothing to isolate.
- **As a UTF-8 terminal would**: stdout strict UTF-8, stderr with backslash escapes
  (Python's own choice for stderr), both on file descriptors 1 and 2, so a worker
  process's traceback is seen too.
- **With the memory bound of the product**: ``SIMCORE_MAX_MEMORY=1G``, so a value
  that turns out valid still runs within a bound the assertion can hold it to.
- **Stopping where long work would start** (``work_would_start``): a sweep, a knee
  search or ``capacity --ray-address`` that got past its checks would start Ray, and
  ``dashboard serve`` would serve until stopped; there the case stops and counts as
  accepted (exit 0).

Each flag gets every value of ``HOSTILE_VALUES`` and ``GENERATED_PER_FLAG`` generated
ones, the same on every run; ``HOSTILE_INPUT_EXAMPLES=50 pytest tests/test_hostile_input.py``
tries 50 fresh ones per flag. ``KNOWN_FAILING_FLAGS`` and the known inputs' reasons
mark what is known to fail (strict xfail: when it passes, the suite says to drop the mark).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Optional, Sequence
from unittest import mock
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st

from commit_sweeps.cli import build_parser, main
from probe_servers import MotoServer, free_port, special_file
from store_fixtures import contract_row, write_store_file

REPO = Path(__file__).resolve().parents[1]
MEASURED_TABLE = str(REPO / "simcore" / "measured" / "seed000_conditional_writes.csv")
S3_PROFILE = REPO / "simcore" / "measured" / "s3.toml"

# One tiny valid command per subcommand (path within `commit-sweeps`), each well under a few seconds.
# Relative paths resolve in the case's own directory, which holds a copy of a one-row store as `store`.
BASE_COMMANDS: Mapping[str, Sequence[str]] = {
    "simulate": ["--provider", "s3", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
                 "--inter-arrival-scale-ms", "500", "--duration-s", "1900", "--seeds", "1", "--json"],
    "sweep": ["exp4c", "--quick", "--seeds", "1", "--duration-s", "1900", "--store", "store"],
    "knee": ["--experiment", "exp4c", "--quick", "--seeds", "1", "--duration-s", "1900", "--store", "store"],
    "capacity": ["--provider", "s3", "--num-tables", "10", "--fast-append-ratio", "0.9", "--seeds", "1",
                 "--duration-s", "1900", "--workers", "1", "--min-scale-ms", "500", "--max-scale-ms", "1000",
                 "--tolerance", "0.5", "--json"],
    "bench": ["--provider", "s3", "--operation", "cas", "--clients", "1-2", "--duration-s", "30", "--seeds", "1",
              "--json"],
    # --observed-at fixed: a third of the fit's grid.
    "fit": ["--table", MEASURED_TABLE, "--provider", "s3", "--observed-at", "0", "--max-evaluations", "3", "--quiet"],
    # Stops where it would first reach the store (work_would_start): the flags' checks all come before.
    "probe": ["--store-uri", "s3://bucket/p", "--endpoint-url", "http://127.0.0.1:9", "--clients", "1",
              "--duration-s", "2", "--out", "samples.csv", "--json"],
    # Stops where it would first reach the database (work_would_start), after every flag's check.
    "probe-catalog": ["--dsn", "sqlite:///catalog.db", "--clients", "1-2", "--duration-s", "2",
                      "--out", "catalog.json", "--quiet"],
    "prepare": [],  # loads the kernels the warm-up compiled
    "status": ["--store", "store"],
    "dashboard build": ["--store", "store", "--out", "site"],
    "dashboard serve": ["--store", "store", "--port", "0", "--quiet"],
    "dashboard compare": ["--store", "store"],
}

# The bad values every flag gets (hypothesis adds generated ones of the same kinds).
HOSTILE_VALUES = (
    "-1", "0", "1e-9", "nan", "inf", "-inf", "1e308", str(10**40), "", "abc",
    "\x1b[2J\r\n\t\x7f",              # control characters, a newline among them
    os.fsdecode(b"\xff\xfe"),          # not UTF-8: what Python makes of such bytes in argv
)

CASE_ENV = {"SIMCORE_MAX_MEMORY": "1G"}
CASE_ENV_REMOVED = ("RAY_ADDRESS", "SWEEPS_STORE")
PEAK_GROWTH_LIMIT_KB = 1_500_000          # above the product's 1G bound, with room for the interpreter
ADDRESS_SPACE_HEADROOM_BYTES = 4 * 2**30  # a runaway allocation fails here, not on the shared machine
# A case whose value switches on a part of the simulator's kernel that the warm-up did not run compiles it first:
# tens of seconds where Numba's on-disk cache is empty (a fresh clone), more on a loaded machine. A runaway case
# still ends here, and fails.
CASE_TIMEOUT_S = 180.0
# docs/guide/sweeps.md: a refused sweep or knee search says why in one line, then "Nothing was run."
DOCUMENTED_TRAILERS = ("Nothing was run.",)


# -- the commands and their flags, read from the parser ----------------------------------------------------

@dataclass(frozen=True)
class Flag:
    """One value-taking argument of one subcommand."""

    command: str            # "simulate", "dashboard serve"
    name: str               # "--duration-s", or a positional's dest
    positional: bool

    def __str__(self) -> str:
        return f"{self.command} {self.name}"


def leaf_parsers(parser: argparse.ArgumentParser, path: tuple = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every runnable subcommand, as ("dashboard serve", its parser)."""
    groups = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not groups:
        yield " ".join(path), parser
        return
    for group in groups:
        seen = set()
        for name, sub in group.choices.items():
            if id(sub) not in seen:  # an alias is the same parser
                seen.add(id(sub))
                yield from leaf_parsers(sub, path + (name,))


def value_flags(command: str, parser: argparse.ArgumentParser) -> list[Flag]:
    """The arguments of ``parser`` that take a value (not --help, not switches)."""
    flags = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
            continue
        if action.nargs == 0:  # store_true and friends take no value
            continue
        positional = not action.option_strings
        name = action.dest if positional else max(action.option_strings, key=len)
        flags.append(Flag(command, name, positional))
    return flags


PARSER = build_parser()
COMMANDS = dict(leaf_parsers(PARSER))
FLAGS = [flag for command, parser in COMMANDS.items() for flag in value_flags(command, parser)]


def _action(flag: Flag) -> argparse.Action:
    parser = COMMANDS[flag.command]
    if flag.positional:
        return next(a for a in parser._actions if not a.option_strings and a.dest == flag.name)
    return next(a for a in parser._actions if flag.name in a.option_strings)


def _without(tokens: Sequence[str], action: argparse.Action) -> list[str]:
    """``tokens`` with every occurrence of the option ``action`` and its values removed."""
    kept, i = [], 0
    while i < len(tokens):
        token = tokens[i]
        if token in action.option_strings:
            i += 1
            if action.nargs in (None, 1, "?"):
                i += 1
            elif isinstance(action.nargs, int):
                i += action.nargs
            else:  # "+" / "*": up to the next option
                while i < len(tokens) and not tokens[i].startswith("-"):
                    i += 1
            continue
        if any(token.startswith(option + "=") for option in action.option_strings):
            i += 1
            continue
        kept.append(token)
        i += 1
    return kept


def base_command(command: str) -> list[str]:
    if command not in BASE_COMMANDS:
        pytest.fail(f"`commit-sweeps {command}` has no base command: add a tiny valid one to BASE_COMMANDS in "
                    f"{Path(__file__).name} (seconds at most), so its flags are fed hostile values too")
    return list(BASE_COMMANDS[command])


def substituted(flag: Flag, value: str) -> list[str]:
    """The argv of ``flag``'s base command with ``flag`` given ``value`` instead (and nothing that excludes it)."""
    parser = COMMANDS[flag.command]
    tokens = base_command(flag.command)
    action = _action(flag)
    positionals = [a for a in parser._actions if not a.option_strings and a.nargs != 0
                   and not isinstance(a, argparse._SubParsersAction)]
    # The base names its positionals first; everything after them is options.
    head = 0
    for positional in positionals:
        if positional.nargs in ("+", "*"):
            while head < len(tokens) and not tokens[head].startswith("-"):
                head += 1
        elif positional.nargs != "?" or (head < len(tokens) and not tokens[head].startswith("-")):
            head += 1 if positional.nargs in (None, "?") else positional.nargs
    options = tokens[head:]
    if flag.positional:
        if len(positionals) > 1:
            pytest.fail(f"{flag}: the substitution knows one positional per command; teach it more")
        # After "--", a value that starts with "-" is still the positional's value.
        return [*flag.command.split(), *options, "--", value]
    options = _without(options, action)
    for group in parser._mutually_exclusive_groups:
        if action in group._group_actions:
            for other in group._group_actions:
                if other is not action:
                    options = _without(options, other)
    if action.nargs in (None, 1, "?", "+", "*"):
        given_value = [f"{flag.name}={value}"]  # "=" so that "-inf" reaches the flag, not the parser
    else:
        given_value = [flag.name, *[value] * action.nargs]
    return [*flag.command.split(), *tokens[:head], *options, *given_value]


# -- running one case ----------------------------------------------------------------------------------------

class WorkWouldStart(BaseException):
    """Raised where long work would begin: the input was accepted. A BaseException, so no handler of the
    product (``except Exception``) mistakes it for a failure."""


# The fits the cases ask for, by everything a fit's result depends on: a value given to a flag the fit does not read
# (its name, description, output) reuses the base command's fit, which the warm-up made in the parent, instead of
# refitting (seconds each, most of this file's time). The fit's own inputs (``--max-evaluations``,
# ``--observed-at``, the table) key a fit of their own. The profile is renamed as the product names it.
_FITS: dict = {}


def _fit_once(real):
    from dataclasses import replace

    from simcore.fit.profile import starting_profile

    def fit_profile(base, measurements, *, name=None, description=None, progress=None, report=None, **inputs):
        key = repr((base, measurements, sorted(inputs.items())))
        if key not in _FITS:
            made = {}
            profile, losses = real(base, measurements, name=name, description=description, progress=progress,
                                   report=made, **inputs)
            _FITS[key] = (profile, losses, made)
        profile, losses, made = _FITS[key]
        named = starting_profile(base, name=name, description=description, read=inputs.get("read"),
                                 write=inputs.get("write"), round_ms_per_read=inputs.get("round_ms_per_read"))
        if report is not None:
            report.update(made)
        return replace(profile, name=named.name, description=named.description), dict(losses)

    return fit_profile


def work_would_start() -> contextlib.ExitStack:
    """Patches that stop a case where it would start Ray or begin serving; undone when the stack closes.

    The one place that knows where long work starts: if a command starts it elsewhere (or
    ``dashboards.server`` serves differently), move the patch here.
    """
    import ray

    import simcore.fit
    import store_probe.catalog_sql
    import store_probe.stores
    import dashboards.server
    import ray_jobs.connect

    def refuse(*args, **kwargs):
        raise WorkWouldStart()

    real_make_server = dashboards.server.make_server

    def make_server_that_stops(*args, **kwargs):
        # The server is made (so the address, port and store are checked), but not run.
        server = real_make_server(*args, **kwargs)
        server.serve_forever = refuse
        return server

    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch.object(simcore.fit, "fit_profile", _fit_once(simcore.fit.fit_profile)))
    stack.enter_context(mock.patch.object(ray_jobs.connect, "connect_ray", refuse))
    stack.enter_context(mock.patch.object(ray, "init", refuse))
    stack.enter_context(mock.patch.object(dashboards.server, "make_server", make_server_that_stops))
    stack.enter_context(mock.patch.object(store_probe.stores, "open_store", refuse))  # probe's network
    stack.enter_context(mock.patch.object(store_probe.catalog_sql, "connect", refuse))  # probe-catalog's database
    return stack


def call_main(argv: Sequence[str]) -> tuple[int, bool]:
    """(exit status, whether long work would have started) of ``commit-sweeps argv``, as the console script
    would exit: an uncaught exception prints its traceback and exits 1."""
    with work_would_start():
        try:
            return int(main(list(argv)) or 0), False
        except WorkWouldStart:
            return 0, True
        except SystemExit as stop:
            if stop.code is None or isinstance(stop.code, int):
                return int(stop.code or 0), False
            print(stop.code, file=sys.stderr)
            return 1, False
        except BaseException:  # noqa: B036 - exactly what the console script would show
            traceback.print_exc()
            return 1, False
        finally:
            sys.stdout.flush()
            sys.stderr.flush()


@dataclass(frozen=True)
class Outcome:
    argv: tuple
    status: Optional[int]      # None: killed at the deadline
    stdout: str
    stderr: str
    peak_growth_kb: int
    work_would_start: bool
    seconds: float

    def describe(self) -> str:
        lines = self.stderr.rstrip("\n").split("\n")
        if len(lines) > 10:  # a traceback: where it began and what it ended in
            lines = [*lines[:3], f"... {len(lines) - 9} lines ...", *lines[-6:]]
        shown = "\n      ".join(lines)
        return (f"commit-sweeps {' '.join(map(ascii, self.argv))}\n    exit {self.status}"
                f"{' (work would start)' if self.work_would_start else ''}, peak +{self.peak_growth_kb / 1e6:.2f} GB,"
                f" {self.seconds:.1f} s\n    stderr: {shown}")


def _resident_kb() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _virtual_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def case_environment(env: Mapping[str, str]) -> dict:
    """A case's environment: this process's, without CASE_ENV_REMOVED, with ``env`` over it."""
    return {**{name: value for name, value in os.environ.items() if name not in CASE_ENV_REMOVED}, **env}


def _child(argv: Sequence[str], cwd: Path, env: Mapping[str, str], result: Path) -> None:
    """In the forked child: isolate, run, record; never returns to pytest."""
    status = 1
    try:
        # The peak is measured from here: a forked child starts with only the parent's private pages resident.
        (cwd / ".start_kb").write_text(str(_resident_kb()))
        os.setpgid(0, 0)  # its own group, so a deadline stops any worker processes it started too
        os.chdir(cwd)
        environment = case_environment(env)
        os.environ.clear()
        os.environ.update(environment)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _virtual_bytes() + ADDRESS_SPACE_HEADROOM_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
        for fd, name in ((1, ".stdout"), (2, ".stderr")):
            target = os.open(cwd / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        stdin = os.open(os.devnull, os.O_RDONLY)
        os.dup2(stdin, 0)
        sys.stdin = open(0, closefd=False)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="strict",
                                      line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        status, started = call_main(argv)
        result.write_text(f"{status} {int(started)}")
    except BaseException:  # noqa: B036 - nothing may escape into the parent's pytest
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        os._exit(status if 0 <= status < 256 else 1)


def _exits_within(pid: int, timeout_s: float) -> bool:
    """Whether child ``pid`` exits within ``timeout_s`` (left to be reaped): woken the instant it does, through
    a pidfd (Linux 5.3), where polling would add its interval to each of some two thousand short cases."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here: poll
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            time.sleep(0.005)
        return False
    try:
        return bool(select.select([pidfd], [], [], timeout_s)[0])
    finally:
        os.close(pidfd)


def run_isolated(argv: Sequence[str], cwd: Path, env: Optional[Mapping[str, str]] = None,
                 timeout_s: float = CASE_TIMEOUT_S) -> Outcome:
    """Run ``commit-sweeps argv`` in a forked copy of this process, in ``cwd``; see the module docstring."""
    result = cwd / ".result"
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(argv, cwd, {**CASE_ENV, **(env or {})}, result)
    killed = not _exits_within(pid, timeout_s)
    if killed:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    _, _, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - started
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # a worker process the case left behind
    status, would_start = None, False
    if not killed:
        recorded = result.read_text().split() if result.exists() else []
        status, would_start = (int(recorded[0]), recorded[1] == "1") if recorded else (1, False)
    read = lambda name: (cwd / name).read_bytes().decode("utf-8", "backslashreplace") if (cwd / name).exists() else ""
    stderr = read(".stderr") + (f"\n[killed after {timeout_s:.0f} s]" if killed else "")
    start_kb = int(read(".start_kb") or _resident_kb())
    return Outcome(tuple(argv), status, read(".stdout"), stderr, max(0, usage.ru_maxrss - start_kb),
                   would_start, seconds)


def refused_by_parser(argv: Sequence[str], cwd: Path) -> Optional[Outcome]:
    """The outcome of a case that ``commit-sweeps``' parser refuses, found in this process; None where the
    parser accepts it (``run_isolated`` runs it then). Before a command's own code runs, a refusal starts
    nothing and allocates next to nothing, so it needs no fork: main() would parse the same way first. It is
    parsed as a case runs (in its directory, its environment, stdout strict UTF-8 and stderr with backslash
    escapes); anything but the parser's exit goes to the fork, which shows it as the console script would."""
    started = time.monotonic()
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", line_buffering=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", line_buffering=True)
    with mock.patch.dict(os.environ, case_environment(CASE_ENV), clear=True), _working_directory(cwd), \
            contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            PARSER.parse_args(list(argv))
            return None
        except SystemExit as stop:
            status = stop.code
        except Exception:  # noqa: BLE001 - the fork shows what this was
            return None
        finally:
            stdout.flush()
            stderr.flush()
    if not isinstance(status, int):
        return None
    return Outcome(tuple(argv), status, out.getvalue().decode("utf-8", "backslashreplace"),
                   err.getvalue().decode("utf-8", "backslashreplace"), 0, False, time.monotonic() - started)


def problems(outcome: Outcome) -> list[str]:
    """What is wrong with an outcome under the hostile-input rules (empty: it held)."""
    found = []
    if outcome.status is None:
        found.append(f"still running after {CASE_TIMEOUT_S:g} s (stopped)")
    elif outcome.status not in (0, 2):
        found.append(f"exit status {outcome.status}, expected 0 (accepted) or 2 (refused)")
    if "Traceback" in outcome.stderr:
        found.append("a traceback on stderr")
    if outcome.status == 2:
        lines = [line for line in outcome.stderr.rstrip("\n").split("\n")
                 if line.strip() and line.strip() not in DOCUMENTED_TRAILERS]
        if len(lines) != 1:
            found.append(f"{len(lines)} lines on stderr, expected one")
    if outcome.peak_growth_kb > PEAK_GROWTH_LIMIT_KB:
        found.append(f"peak memory grew by {outcome.peak_growth_kb / 1e6:.2f} GB (limit "
                     f"{PEAK_GROWTH_LIMIT_KB / 1e6:.1f} GB)")
    return found


# -- fixtures --------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _working_directory(path) -> Iterator[None]:
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


@pytest.fixture(scope="module")
def store_template(tmp_path_factory) -> Path:
    """A one-row store, copied into every case (a case may heal, clean or write it)."""
    directory = tmp_path_factory.mktemp("hostile") / "store"
    row = contract_row("exp4c", {"provider": "s3", "num_tables": 1, "inter_arrival_scale_ms": 100.0}, 1,
                       {"success_rate": 1.0, "throughput_cps": 1.0})
    write_store_file(str(directory), "exp4c", [row])
    return directory


def warm_up(store_template: Path) -> None:
    """Run each base command once in this process, so every forked case starts with the simulator compiled and
    Ray Tune imported, as a user's second command would. ``dashboard serve`` is left out: it starts threads,
    and a fork should not copy a process with threads."""
    with tempfile.TemporaryDirectory() as scratch, mock.patch.dict(os.environ, CASE_ENV), \
            _working_directory(scratch), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        shutil.copytree(store_template, Path(scratch) / "store")
        for command in ("simulate", "bench", "capacity", "fit", "sweep", "knee", "status", "dashboard build"):
            if command in BASE_COMMANDS:
                call_main([*command.split(), *BASE_COMMANDS[command]])


@pytest.fixture(scope="module")
def warmed(store_template) -> Path:
    """The store template, once this process is warmed up (``warm_up``)."""
    warm_up(store_template)
    return store_template


@contextlib.contextmanager
def case_directory(store_template: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="hostile-case-") as scratch:
        shutil.copytree(store_template, Path(scratch) / "store")
        (Path(scratch) / "catalog.db").touch()  # probe-catalog's database (an empty file is an empty SQLite one)
        yield Path(scratch)


# -- the property: every flag, every kind of bad value -----------------------------------------------------------

def _argv_safe(text: str) -> bool:
    return "\x00" not in text  # no process can receive a NUL inside an argument


# Generated values are extreme, as HOSTILE_VALUES are: a plausible value (2 seeds, a 5 ms gap) is not hostile, and
# running the work it asks for is what the base commands already do.
HOSTILE = st.one_of(
    st.floats(max_value=0.0).map(repr),                                   # negative, zero, -inf
    st.floats(min_value=0.0, max_value=1e-3, exclude_min=True).map(repr),  # tiny, subnormal
    st.floats(min_value=1e12).map(repr),                                   # huge, inf
    st.just("nan"),
    st.integers(max_value=-1).map(str),
    st.integers(min_value=2**31).map(str),                                 # past 32-bit counts
    st.sampled_from(["-", "+", "1e-320", "0x10", "1_000", " 1 ", "1,2", "1-", "-0", "\u221e", "\uff11"]),
    st.text(max_size=8).filter(_argv_safe),
    st.binary(min_size=1, max_size=6).map(os.fsdecode).filter(_argv_safe),
)
GENERATED_PER_FLAG = 1
EXPLORE_ENV = "HOSTILE_INPUT_EXAMPLES"

# Flags known to fail on the values named, deterministically; remove an entry once it passes (strict: the suite
# says so).
KNOWN_FAILING_FLAGS: dict[str, str] = {}  # "<command> --flag": why it still fails (an xfail, strict)


def with_every_hostile_value(test):
    """Every value of HOSTILE_VALUES as an explicit example: each flag always gets all of them."""
    for value in reversed(HOSTILE_VALUES):
        test = example(value=value)(test)
    return test


def hostile_settings(flag: Flag):
    """``GENERATED_PER_FLAG`` generated values per flag beside the explicit ones, the same each run (seeded by the
    flag's name) so that CI repeats itself; ``HOSTILE_INPUT_EXAMPLES=N`` tries N fresh random values instead."""
    explore = os.environ.get(EXPLORE_ENV)

    def apply(test):
        test = settings(max_examples=int(explore or GENERATED_PER_FLAG), deadline=None, database=None,
                        suppress_health_check=[HealthCheck.too_slow])(test)
        return test if explore else seed(zlib.crc32(str(flag).encode()))(test)
    return apply


def test_every_subcommand_has_a_tiny_valid_base_command(warmed):
    for command in COMMANDS:
        with case_directory(warmed) as cwd:
            outcome = run_isolated([*command.split(), *base_command(command)], cwd, timeout_s=30)
        assert outcome.status == 0 and "Traceback" not in outcome.stderr, outcome.describe()
        assert outcome.seconds < 30, f"the base command of {command} should take seconds: {outcome.describe()}"
        if command in ("sweep", "knee", "dashboard serve"):
            assert outcome.work_would_start, (f"{command} got past work_would_start's patches: move them to where "
                                              f"it now starts Ray or serves")
    assert not set(BASE_COMMANDS) - set(COMMANDS), "BASE_COMMANDS names a command that no longer exists"


@pytest.mark.parametrize("flag", [
    pytest.param(flag, id=str(flag), marks=[pytest.mark.xfail(strict=True, reason=KNOWN_FAILING_FLAGS[str(flag)])]
                 if str(flag) in KNOWN_FAILING_FLAGS else []) for flag in FLAGS])
def test_every_flag_takes_hostile_values_in_one_line(warmed, flag):
    @hostile_settings(flag)
    @given(value=HOSTILE)
    @with_every_hostile_value
    def takes(value):
        with case_directory(warmed) as cwd:
            argv = substituted(flag, value)
            outcome = refused_by_parser(argv, cwd) or run_isolated(argv, cwd)
        found = problems(outcome)
        assert not found, f"{'; '.join(found)}\n  {outcome.describe()}"

    takes()


def test_a_case_s_peak_memory_is_its_own(warmed):
    # The memory rule is only as good as the measurement: a heavier run must show as heavier.
    command = [*BASE_COMMANDS["simulate"]]
    light, heavy = ([*command, "--inter-arrival-scale-ms", scale] for scale in ("500", "3"))
    with case_directory(warmed) as cwd:
        light = run_isolated(["simulate", *light], cwd)
        heavy = run_isolated(["simulate", *heavy], cwd)
    assert light.status == heavy.status == 0
    assert heavy.peak_growth_kb > light.peak_growth_kb + 30_000, (light.peak_growth_kb, heavy.peak_growth_kb)
    assert KNOWN_FAILING_FLAGS.keys() <= {str(flag) for flag in FLAGS}, "a known failure names no flag"


def test_every_flag_is_found_and_substituted():
    names = {str(flag) for flag in FLAGS}
    for known in ("simulate --duration-s", "capacity --workers", "bench --clients", "fit --max-evaluations",
                  "dashboard serve --refresh-s", "dashboard build --out", "sweep experiments", "knee --experiment"):
        assert known in names
    flag = next(f for f in FLAGS if str(f) == "fit --samples")
    argv = substituted(flag, "x.csv")
    assert "--table" not in argv and argv[-1] == "--samples=x.csv"
    flag = next(f for f in FLAGS if str(f) == "sweep experiments")
    assert substituted(flag, "-1")[-2:] == ["--", "-1"] and "exp4c" not in substituted(flag, "-1")
    flag = next(f for f in FLAGS if str(f) == "capacity --workers")
    argv = substituted(flag, "-3")
    assert argv.count("--workers") == 0 and argv[-1] == "--workers=-3"


# -- the property for credentials: a URI's secret is never shown ---------------------------------------------

# Every flag that takes a store or an endpoint, read from the parser as the flags above are.
URI_FLAGS = [flag for flag in FLAGS if flag.name in ("--store", "--store-uri", "--endpoint-url")]
URI_BUCKET = "hostile-bucket"
ACCESS_KEY = "AKIAHOSTILEEXAMPLE"
# Any printable characters a secret may hold, "/", "+", "@", "%", quotes among them; never whitespace.
URI_SECRETS = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=12, max_size=40) \
    .map(lambda text: "Qz" + text)
URI_SHAPES = ("keys", "raw keys", "secret query", "unreachable", "endpoint keys", "sas")


@pytest.fixture(scope="module")
def uri_server():
    """A real S3-compatible server (moto), so that a credentialed URI can point at a store that answers."""
    server = MotoServer()
    server.client().create_bucket(Bucket=URI_BUCKET)
    yield server
    server.stop()


def credentialed(shape: str, secret: str, host: str) -> str:
    """A URI of ``shape`` that carries ``secret``: keys in its user information, or a secret in its query."""
    encoded = quote(secret, safe="")
    prefix = f"case-{uuid.uuid4().hex[:12]}"
    endpoint = f"endpoint_override={host}&scheme=http&region=us-east-1"
    return {"keys": f"s3://{ACCESS_KEY}:{encoded}@{URI_BUCKET}/{prefix}?{endpoint}",
            "raw keys": f"s3://{ACCESS_KEY}:{secret}@{URI_BUCKET}/{prefix}?{endpoint}",
            "secret query": f"s3://{URI_BUCKET}/{prefix}?{endpoint}&secret_key={encoded}",
            "unreachable": f"s3://{ACCESS_KEY}:{encoded}@{URI_BUCKET}/{prefix}?endpoint_override=127.0.0.1:"
                           f"{free_port()}&scheme=http&region=us-east-1",
            "endpoint keys": f"http://{ACCESS_KEY}:{encoded}@{host}",
            "sas": f"https://account.blob.core.windows.net/{URI_BUCKET}?sv=2024-11-04&sp=rw&sig={encoded}"}[shape]


def with_every_uri_shape(test):
    """Each shape as an explicit example, with a secret that holds what URIs quote or escape."""
    for shape in reversed(URI_SHAPES):
        test = example(secret="Qzw/Jal+rX@Ut%nFE?MI#K7'MD\"ENG&sig=x", shape=shape)(test)
    return test


@pytest.mark.parametrize("flag", [pytest.param(flag, id=str(flag)) for flag in URI_FLAGS])
def test_every_uri_flag_never_shows_the_credentials_of_its_uri(warmed, uri_server, flag):
    host = uri_server.endpoint.split("://", 1)[1]

    @hostile_settings(flag)
    @given(secret=URI_SECRETS, shape=st.sampled_from(URI_SHAPES))
    @with_every_uri_shape
    def never_shown(secret, shape):
        with case_directory(warmed) as cwd:
            outcome = run_isolated(substituted(flag, credentialed(shape, secret, host)), cwd,
                                   {"AWS_EC2_METADATA_DISABLED": "true"})
            site = "".join(path.read_text(errors="replace") for path in (cwd / "site").glob("*")
                           if path.is_file()) if (cwd / "site").is_dir() else ""
        found = problems(outcome)
        for spelling in {secret, quote(secret, safe=""), ACCESS_KEY}:
            for where, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr), ("the site", site)):
                if spelling in text:
                    found.append(f"{where} shows {spelling!r}")
        assert not found, f"{'; '.join(found)}\n  {outcome.describe()}"

    never_shown()


# -- known hostile inputs: combinations of flags, bad input files, a busy port ----------------------------------

SIMULATE_WRITERS = ["simulate", "--provider", "s3", "--catalog", "storage", "--num-tables", "10",
                    "--fast-append-ratio", "0.9", "--seeds", "1"]
CAPACITY = ["capacity", "--provider", "s3", "--num-tables", "10", "--fast-append-ratio", "0.9", "--seeds", "1",
            "--duration-s", "1900"]
BENCH = ["bench", "--provider", "s3", "--operation", "cas", "--clients", "1-16", "--seeds", "1"]
FIT = ["fit", "--quiet", "--max-evaluations", "3", "--observed-at", "0", "--provider", "s3"]

PROBE = ["probe", *BASE_COMMANDS["probe"]]
OUT_COMMANDS = {"probe": PROBE, "fit": [*FIT, "--table", MEASURED_TABLE, "--out", "p.toml"],
                "dashboard build": ["dashboard", "build", *BASE_COMMANDS["dashboard build"]]}


def _out_at(argv: Sequence[str], path: str) -> list[str]:
    return _replaced(argv, "--out", path)


def _replaced(argv: Sequence[str], flag: str, value: str) -> list[str]:
    """``argv`` with ``flag``'s value replaced."""
    argv = list(argv)
    argv[argv.index(flag) + 1] = value
    return argv


def _provider_file(cwd: Path, edit: Optional[tuple] = None, raw: Optional[bytes] = None) -> str:
    """A copy of the shipped s3 profile with one value changed: edit = (section or None, key, new value)."""
    if raw is not None:
        (cwd / "provider.toml").write_bytes(raw)
        return "provider.toml"
    if edit is None:
        return "/dev/zero"
    section, key, value = edit
    lines, current = [], None
    for line in S3_PROFILE.read_text().splitlines():
        if line.startswith("["):
            current = line.strip("[]")
        elif current == section and line.split("=")[0].strip() == key:
            line = f"{key} = {value}"
        lines.append(line)
    (cwd / "provider.toml").write_text("\n".join(lines) + "\n")
    return "provider.toml"


def _table(cwd: Path, edit) -> str:
    import csv

    with open(MEASURED_TABLE, newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["provider"] == "s3"]
    rows, encoding = edit(rows)
    if isinstance(rows, bytes):
        (cwd / "table.csv").write_bytes(rows)
        return "table.csv"
    with open(cwd / "table.csv", "w", newline="", encoding=encoding) as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return "table.csv"


def _edit_row(index, **changes):
    def edit(rows):
        rows = [dict(row) for row in rows]
        rows[index].update(changes)
        return rows, "utf-8"
    return edit


def _oversized(cwd: Path) -> str:
    with open(cwd / "big.csv", "wb") as handle:
        handle.truncate(65 * 2**20)  # sparse: above the 64 MiB an input table may be, no disk used
    return "big.csv"


BUSY_PORT = "a port something listens on"


class BusyPort:
    """A port something already listens on (the dashboard's default, 8080, often is)."""

    def __enter__(self) -> int:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen()
        return self.socket.getsockname()[1]

    def __exit__(self, *exc) -> None:
        self.socket.close()


def _with_provider(command, *edit, raw=None):
    return lambda cwd: [*command, "--provider-file", _provider_file(cwd, edit or None, raw)]


SWEEP = ["sweep", "exp4c", "--quick", "--seeds", "1", "--duration-s", "1900", "--store", "store"]
SIMULATE = ["simulate", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
            "--inter-arrival-scale-ms", "500", "--duration-s", "1900", "--seeds", "1"]
PROVIDER_FILE_COMMANDS = {"simulate": SIMULATE, "capacity": [*CAPACITY[:1], *CAPACITY[3:], "--workers", "1"],
                          "bench": BENCH[:1] + BENCH[3:], "sweep": SWEEP}
PROVIDER_FILE_EDITS = {"sigma = 50": ("read", "sigma", "50"), "sigma = 1e6": ("read", "sigma", "1e6"),
                       "sigma = 0": ("read", "sigma", "0"), "read.median_ms = 1e300": ("read", "median_ms", "1e300"),
                       "floor_ms = 1e308": (None, "floor_ms", "1e308")}

# (id, argv maker (given the case directory), expected status, extra environment, xfail reason or None)
KNOWN_HOSTILE_INPUTS = [
    # writer workloads go through the memory bound
    ("simulate writers 1e9", lambda cwd: [*SIMULATE_WRITERS, "--writers", "1000000000", "--commit-interval-s", "60"],
     2, None, None),
    ("simulate commit interval 1e-9",
     lambda cwd: [*SIMULATE_WRITERS, "--writers", "10", "--commit-interval-s", "1e-9"], 2, None, None),
    ("simulate maintenance interval 1e-9",
     lambda cwd: [*SIMULATE_WRITERS, "--writers", "10", "--commit-interval-s", "60", "--maintenance-jobs", "2",
                  "--maintenance-interval-s", "1e-9"], 2, None, None),
    ("capacity writers at 0.001 s", lambda cwd: [*CAPACITY, "--writers-at-interval-s", "0.001", "--workers", "1"],
     2, None, None),  # refused in the parent: the same bound met in a worker would end in its traceback
    # capacity checks its bounds in the parent, before its workers start
    ("capacity workers -3", lambda cwd: [*CAPACITY, "--workers", "-3"], 2, None, None),
    ("capacity workers 0", lambda cwd: [*CAPACITY, "--workers", "0"], 2, None, None),
    ("capacity num tables 1e9", lambda cwd: [*_replaced(CAPACITY, "--num-tables", "1000000000"), "--workers", "1"],
     2, None, None),
    ("capacity duration 1e9", lambda cwd: [*_replaced(CAPACITY, "--duration-s", "1e9"), "--workers", "1"], 2, None,
     None),
    ("capacity memory 50M", lambda cwd: [*CAPACITY, "--workers", "1"], 2, {"SIMCORE_MAX_MEMORY": "50M"},
     None),
    # bench duration
    ("bench duration 1e12", lambda cwd: [*BENCH, "--duration-s", "1e12"], 2, None, None),
    # provider-file magnitudes and non-regular files, in every command that takes one
    *[(f"{command} {label}", _with_provider(argv, *edit), 2, None, None)
      for label, edit in PROVIDER_FILE_EDITS.items() for command, argv in PROVIDER_FILE_COMMANDS.items()],
    *[(f"{command} /dev/zero", _with_provider(argv), 2, None, None)
      for command, argv in PROVIDER_FILE_COMMANDS.items()],
    # fit --table validates as much as --samples
    ("fit negative mean", lambda cwd: [*FIT, "--table", _table(cwd, _edit_row(0, mean_ms="-5"))], 2, None, None),
    ("fit no success at one client",
     lambda cwd: [*FIT, "--table", _table(cwd, _edit_row(0, success="0", fail="5"))], 2, None, None),
    ("fit negative count", lambda cwd: [*FIT, "--table", _table(cwd, _edit_row(2, fail="-3"))], 2, None, None),
    ("fit wrong columns",
     lambda cwd: [*FIT, "--table", _table(cwd, lambda rows: ([{k: v for k, v in r.items() if k != "p95_ms"}
                                                              for r in rows], "utf-8"))], 2, None, None),
    ("fit duplicate rows", lambda cwd: [*FIT, "--table", _table(cwd, lambda rows: (rows + [rows[3]], "utf-8"))],
     2, None, None),
    ("fit table /dev/zero", lambda cwd: [*FIT, "--table", "/dev/zero"], 2, None, None),
    ("fit oversized table", lambda cwd: [*FIT, "--table", _oversized(cwd)], 2, None, None),
    # fit --out is checked before the fit
    ("fit out is a directory", lambda cwd: [*FIT, "--table", MEASURED_TABLE, "--out", "."], 2, None, None),
    ("fit out folder missing", lambda cwd: [*FIT, "--table", MEASURED_TABLE, "--out", "no/such/p.toml"],
     2, None, None),
    # encodings
    ("fit table with a byte-order mark", lambda cwd: [*FIT, "--table", _table(cwd, lambda rows: (rows, "utf-8-sig"))],
     0, None, None),
    ("fit table not UTF-8",
     lambda cwd: [*FIT, "--table", _table(cwd, lambda rows: (b"provider,operation,clients\ns3\xff,cas,1\n", None))],
     2, None, None),
    ("simulate provider file with a byte-order mark",
     _with_provider(SIMULATE, raw=b"\xef\xbb\xbf" + S3_PROFILE.read_bytes()), 0, None, None),
    ("simulate provider file not UTF-8",
     _with_provider(SIMULATE, raw=S3_PROFILE.read_bytes().replace(b"AWS", b"AWS\xff")), 2, None, None),
    # dashboard serve
    ("serve refresh nan", lambda cwd: ["dashboard", "serve", "--store", "store", "--port", "0", "--refresh-s", "nan"],
     2, None, None),
    ("serve unresolvable host",
     lambda cwd: ["dashboard", "serve", "--store", "store", "--port", "0", "--host", "no-such-host.invalid"],
     2, None, None),
    ("serve busy port", BUSY_PORT, 2, None, None),
    # every --out refuses what is not a file (a folder, for dashboard build) to write, before any work
    *[(f"{command} out {kind.lower()}", lambda cwd, argv=argv, kind=kind: _out_at(argv, special_file(cwd, kind)), 2,
       None, None) for command, argv in OUT_COMMANDS.items() for kind in ("CHAR", "FIFO", "SOCKET")],
    *[(f"{command} out /proc/version", lambda cwd, argv=argv: _out_at(argv, "/proc/version"), 2, None, None)
      for command, argv in OUT_COMMANDS.items() if command != "dashboard build"],
    # probe: one racer proves nothing; control characters would be dropped from the address, not refused
    ("probe race writers 1", lambda cwd: [*PROBE, "--race-writers", "1"], 2, None, None),
    ("probe store uri with a newline", lambda cwd: _replaced(PROBE, "--store-uri", "s3://bucket/p\nq"), 2, None,
     None),
    ("probe endpoint with a tab", lambda cwd: _replaced(PROBE, "--endpoint-url", "http://127.0.0.1:9\t"), 2, None,
     None),
]


@pytest.mark.parametrize("make_argv, expected, env", [
    pytest.param(make, expected, env, id=case_id,
                 marks=[pytest.mark.xfail(strict=True, reason=reason)] if reason else [])
    for case_id, make, expected, env, reason in KNOWN_HOSTILE_INPUTS])
def test_known_hostile_inputs_end_with_their_exit_status(warmed, make_argv, expected, env):
    with case_directory(warmed) as cwd, contextlib.ExitStack() as stack:
        if make_argv == BUSY_PORT:
            argv = ["dashboard", "serve", "--store", "store", "--port", str(stack.enter_context(BusyPort()))]
        else:
            argv = make_argv(cwd)
        outcome = run_isolated(argv, cwd, env)
    found = problems(outcome)
    if outcome.status != expected or outcome.work_would_start:
        found.append(f"expected exit {expected}" + (" before any work" if expected == 2 else ""))
    assert not found, f"{'; '.join(found)}\n  {outcome.describe()}"


# -- small inputs that ask for much, overflow, or give a profile no command loads -----------------------------

FIT_SAMPLES = ["fit", "--quiet", "--max-evaluations", "3", "--observed-at", "0", "--base", "s3", "--name", "mine"]
SAMPLES_HEADER = "operation,latency_ms,succeeded,clients"


def _samples(cwd: Path, text: str, header: str = SAMPLES_HEADER) -> str:
    (cwd / "samples.csv").write_text(f"{header}\ncas,50,1,1\ncas,60,1,2\ncas,60,0,2\n{text}")
    return "samples.csv"


def _wide_samples(cwd: Path) -> str:
    """3.3 MB: a header of 3,000 more columns over 300,000 short rows (a row of 3,004 fields each, read whole)."""
    header = SAMPLES_HEADER + "," + ",".join(f"x{i}" for i in range(3000))
    return _samples(cwd, "".join(f"cas,{50 + i % 7},1,{1 + i % 4}\n" for i in range(300_000)), header)


def _closed_port() -> int:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        return unused.getsockname()[1]  # closed again: nothing listens there


def _deep_profile(cwd: Path) -> str:
    (cwd / "deep.toml").write_text('name = "deep"\nx = ' + "[" * 50_000 + "]" * 50_000 + "\n")
    return "deep.toml"


SMALL_BUT_HOSTILE = [
    ("fit samples of 3,000 extra columns", lambda cwd: [*FIT_SAMPLES, "--samples", _wide_samples(cwd)]),
    ("fit samples at 1e9 clients", lambda cwd: [*FIT_SAMPLES, "--samples", _samples(cwd, "cas,60,1,1000000000\n")]),
    ("fit table at 1e8 clients", lambda cwd: [*FIT, "--table", _table(cwd, _edit_row(1, clients="1e8"))]),
    ("fit table clients inf", lambda cwd: [*FIT, "--table", _table(cwd, _edit_row(1, clients="inf"))]),
    ("fit table success 1e400", lambda cwd: [*FIT, "--table", _table(cwd, _edit_row(1, success="1e400"))]),
    ("fit samples clients 1.9", lambda cwd: [*FIT_SAMPLES, "--samples", _samples(cwd, "cas,60,1,1.9\n")]),
    ("fit samples clients 2.5", lambda cwd: [*FIT_SAMPLES, "--samples", _samples(cwd, "cas,60,1,2.5\n")]),
    ("fit samples latency 1e300", lambda cwd: [*FIT_SAMPLES, "--samples", _samples(cwd, "cas,1e300,1,2\n")]),
    ("fit name with a quote, a newline and [read]",
     lambda cwd: [*_replaced(FIT_SAMPLES, "--name", 'my"store\n[read]'), "--samples", _samples(cwd, "")]),
    ("simulate provider file nested 50k deep", lambda cwd: [*SIMULATE, "--provider-file", _deep_profile(cwd)]),
    ("capacity ray address garbage", lambda cwd: [*CAPACITY, "--workers", "1", "--ray-address", "garbage"]),
    ("capacity ray address with nothing there",
     lambda cwd: [*CAPACITY, "--workers", "1", "--ray-address", f"127.0.0.1:{_closed_port()}"]),
]


@pytest.mark.parametrize("make_argv", [pytest.param(make, id=case_id) for case_id, make in SMALL_BUT_HOSTILE])
def test_small_inputs_that_ask_for_much_are_refused_in_one_line(warmed, make_argv):
    with case_directory(warmed) as cwd:
        outcome = run_isolated(make_argv(cwd), cwd)
    found = problems(outcome)
    if outcome.status != 2 or outcome.work_would_start:
        found.append("expected exit 2 before any work")
    assert not found, f"{'; '.join(found)}\n  {outcome.describe()}"

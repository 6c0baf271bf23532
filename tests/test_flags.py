"""The shared flags have one definition each (commit_sweeps/flags.py) and mean the same in every command."""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path

import pytest

from commit_sweeps.flags import (DEFAULT_SEEDS, EXIT_BAD_INPUT, OneLineParser, SeedsAction, UsageError,
                           add_seeds_flag, default_store_uri, parse_seeds)

ROOT = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = ("simcore", "ray_jobs", "dashboards", "sweeps", "commit_sweeps", "store_probe", "benchmarks",
                  "scripts", "studies")
SIMULATE = ["--provider", "s3", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
            "--inter-arrival-scale-ms", "100"]
BENCH = ["--provider", "s3", "--operation", "cas", "--clients", "1"]
CAPACITY = ["--provider", "s3", "--num-tables", "1", "--fast-append-ratio", "1"]


def _sources():
    for folder in SOURCE_FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _capacity_parser():
    from commit_sweeps import capacity_command

    parser = OneLineParser(prog="python -m ray_jobs.capacity")
    capacity_command.configure(parser)
    return parser


@functools.lru_cache(maxsize=1)
def _commands():
    """(name, parser, the arguments it needs besides the shared flags) of every command (built once: slow)."""
    from commit_sweeps.cli import build_parser as commit_sweeps
    from commit_sweeps import knee_command as knee_cli, sweep_command as cli
    from commit_sweeps.simcore_command import build_parser as simcore
    from sweeps import exp4c
    from sweeps.catalog import KNEE_GRIDS

    return [
        ("python -m simcore run", simcore(), ["run", *SIMULATE]),
        ("python -m simcore bench", simcore(), ["bench", *BENCH]),
        ("python -m ray_jobs.capacity", _capacity_parser(), CAPACITY),
        ("commit-sweeps simulate", commit_sweeps(), ["simulate", *SIMULATE]),
        ("commit-sweeps bench", commit_sweeps(), ["bench", *BENCH]),
        ("commit-sweeps capacity", commit_sweeps(), ["capacity", *CAPACITY]),
        ("commit-sweeps sweep", commit_sweeps(), ["sweep", "exp4c"]),
        ("commit-sweeps knee", commit_sweeps(), ["knee", "--experiment", "exp4c"]),
        ("python sweeps/exp4c.py", cli.build_parser([exp4c.GRID]), []),
        ("python sweeps/knee.py", knee_cli.build_parser(KNEE_GRIDS), ["--experiment", "exp4c"]),
    ]


def _action(parser: argparse.ArgumentParser, argv, flag: str) -> argparse.Action:
    """The action of ``flag`` in the (sub)command ``argv`` selects."""
    for action in parser._actions:
        if flag in action.option_strings:
            return action
        if isinstance(action, argparse._SubParsersAction) and argv and argv[0] in action.choices:
            return _action(action.choices[argv[0]], argv[1:], flag)
    raise AssertionError(f"no {flag}")


def test_each_shared_flag_is_defined_once_in_the_whole_code_base():
    for flag in ("--store", "--seeds", "--latency-model", "--provider-file", "--client", "--duration-s",
                 "--min-scale-ms", "--max-scale-ms", "--tolerance", "--max-memory"):
        places = [f"{path.relative_to(ROOT)}:{number}" for path in _sources()
                  for number, line in enumerate(path.read_text().splitlines(), 1)
                  if f'add_argument("{flag}"' in line or f"add(\"{flag}\"" in line]
        if flag in ("--duration-s",):  # benchmarks keep their own; every command takes the shared one
            places = [place for place in places if not place.startswith(("benchmarks/", "scripts/", "studies/"))]
        assert places == [places[0]] and places[0].startswith("commit_sweeps/flags.py:"), (flag, places)


def test_exit_codes_and_the_one_line_parser_have_one_home():
    names = re.compile(r"^\s*(EXIT_\w+|USAGE_ERROR)(\s*,\s*\w+)*\s*=|^class _?\w*Parser\(argparse\.ArgumentParser\)")
    places = [f"{path.relative_to(ROOT)}:{number}" for path in _sources() if path.parts[-2] != "benchmarks"
              for number, line in enumerate(path.read_text().splitlines(), 1) if names.search(line)]
    assert [place.split(":")[0] for place in places] == ["commit_sweeps/flags.py", "commit_sweeps/flags.py"], places


@pytest.mark.parametrize("value, seeds", [("3", (1, 2, 3)), ("1,2,3", (1, 2, 3)), ("1-3", (1, 2, 3)),
                                          ("4-6", (4, 5, 6)), ("7,", (7,))])
def test_seeds_mean_the_same_in_every_command(value, seeds):
    assert parse_seeds(value) == seeds
    for name, parser, argv in _commands():
        assert isinstance(_action(parser, argv, "--seeds"), SeedsAction), name
        assert parser.parse_args([*argv, "--seeds", value]).seeds == seeds, name


def test_every_command_with_a_seeds_default_has_the_one_default():
    for name, parser, argv in _commands():
        if not _action(parser, argv, "--seeds").required:
            assert parser.parse_args(argv).seeds == tuple(range(1, DEFAULT_SEEDS + 1)), name


def test_a_bad_seeds_value_is_one_line_naming_the_field_in_every_command(capsys):
    for name, parser, argv in _commands():
        if isinstance(parser, OneLineParser):
            with pytest.raises(UsageError, match=r"^seeds: '0' is not allowed; expected a count N"):
                parser.parse_args([*argv, "--seeds", "0"])
        else:  # argparse's own report: the usage, then the same line
            with pytest.raises(SystemExit) as exited:
                parser.parse_args([*argv, "--seeds", "0"])
            assert exited.value.code == EXIT_BAD_INPUT
            last = capsys.readouterr().err.splitlines()[-1]
            assert ("error: seeds: '0' is not allowed; expected a count N (seeds 1..N), or a list of seeds and "
                    "ranges such as 1,2,3 or 4-6 (the same in every command), at most 100,000 seeds, each <= "
                    "18446744073709551615") in last


def test_the_latency_model_defaults_to_reference_everywhere():
    for name, parser, argv in _commands():
        args = parser.parse_args([*argv, "--seeds", "1"])
        assert (args.latency_model, args.provider_file) == ("reference", None), name


def test_the_store_defaults_to_sweeps_store_else_results_in_every_command(monkeypatch):
    from commit_sweeps.cli import build_parser

    monkeypatch.delenv("SWEEPS_STORE", raising=False)
    assert default_store_uri() == "./results"
    monkeypatch.setenv("SWEEPS_STORE", "s3://bucket/sweeps")
    assert default_store_uri() == "s3://bucket/sweeps"
    parser = build_parser()
    for argv in (["sweep", "exp4c"], ["knee", "--experiment", "exp4c"], ["status"], ["dashboard", "build"],
                 ["dashboard", "serve"], ["dashboard", "compare"]):
        assert parser.parse_args(argv).store == "s3://bucket/sweeps", argv
        assert parser.parse_args([*argv, "--store", "/elsewhere"]).store == "/elsewhere", argv


def test_the_search_range_flags_default_to_search_range():
    from simcore.bisection import SearchRange
    from commit_sweeps.flags import search_range_of

    for name, parser, argv in _commands():
        if name.endswith(("capacity", "knee", "knee.py")):
            assert search_range_of(parser.parse_args(argv)) == SearchRange(), name
            assert _action(parser, argv, "--tolerance").default == SearchRange().tolerance


def test_help_cites_only_documents_that_exist():
    for name, parser, argv in _commands():
        command = parser
        for word in argv:
            sub = next((a for a in command._actions if isinstance(a, argparse._SubParsersAction)), None)
            if sub is None or word not in sub.choices:
                break
            command = sub.choices[word]
        for cited in re.findall(r"(?:docs|studies)/[\w./-]+\.md", command.format_help()):
            assert (ROOT / cited).is_file(), (name, cited)


def test_a_benchmark_may_count_fewer_seeds_by_default():
    parser = argparse.ArgumentParser()
    add_seeds_flag(parser, default=2)
    assert parser.parse_args([]).seeds == (1, 2) and parser.parse_args(["--seeds", "5-6"]).seeds == (5, 6)

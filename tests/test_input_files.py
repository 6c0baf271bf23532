"""Input files a user names (measurement CSVs, provider profiles) are checked before any work: a
one-line error names the field, the file and why, for every way such a file can be wrong."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from fit_inputs import run_fit, write_rows

from commit_sweeps.simcore_command import main
from simcore.fit import read_samples, read_table

TABLE = Path(__file__).resolve().parents[1] / "simcore" / "measured" / "seed000_conditional_writes.csv"


def _s3_rows() -> list[dict]:
    with open(TABLE, newline="") as handle:
        return [row for row in csv.DictReader(handle) if row["provider"] == "s3"]




def test_a_spreadsheets_byte_order_mark_is_read_as_written(tmp_path):
    plain = read_table(str(write_rows(tmp_path / "plain.csv", _s3_rows())), "s3")
    marked = read_table(str(write_rows(tmp_path / "bom.csv", _s3_rows(), encoding="utf-8-sig")), "s3")
    assert marked == plain and (tmp_path / "bom.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    samples = tmp_path / "samples.csv"
    samples.write_bytes(b"\xef\xbb\xbfoperation,latency_ms,succeeded,clients\ncas,50,1,1\ncas,60,0,1\n")
    assert read_samples(str(samples))["cas"][0].successes == 1


@pytest.mark.parametrize("flag", ["--table", "--samples"])
def test_invalid_utf8_is_named_with_its_file_and_line(capsys, tmp_path, flag):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"operation,latency_ms,succeeded,clients,provider\ncas,5,1,1,s3\ncas,5\xff,1,1,s3\n")
    status, err = run_fit(capsys, flag, str(bad), "--provider", "s3")
    assert status == 2 and len(err) == 1 and "line 3 has the byte 0xff, which is not UTF-8" in err[0] and "bad.csv" in err[0]


@pytest.mark.parametrize("path", ["/dev/zero", "DIR", "FIFO"])
def test_files_that_are_not_regular_are_refused_before_reading(capsys, tmp_path, path):
    if path == "DIR":
        path = str(tmp_path)
    elif path == "FIFO":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    status, err = run_fit(capsys, "--table", path, "--provider", "s3")
    assert status == 2 and len(err) == 1 and "regular file" in err[0]
    status = main(["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio",
                   "1", "--inter-arrival-scale-ms", "100", "--seeds", "1", "--provider-file", path])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "provider_file" in err[0] and "regular file" in err[0]


def test_an_oversized_file_is_refused_by_its_size(capsys, tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "wb") as handle:
        handle.truncate(65 * 2**20)  # sparse: no disk used
    status, err = run_fit(capsys, "--samples", str(big))
    assert status == 2 and len(err) == 1 and "at most 64 MiB" in err[0]


@pytest.mark.parametrize("out", ["DIR", "MISSING"])
def test_fit_out_is_checked_before_the_fit_and_leaves_nothing(capsys, tmp_path, out):
    target = str(tmp_path) if out == "DIR" else str(tmp_path / "no" / "such" / "p.toml")
    status, err = run_fit(capsys, "--table", str(TABLE), "--provider", "s3", "--out", target)
    assert status == 2 and len(err) == 1 and err[0].startswith("error: out: ")
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.parametrize("nesting", ["[", "{a = "])
def test_a_provider_file_nested_past_pythons_stack_is_one_line(capsys, tmp_path, nesting):
    deep = tmp_path / "deep.toml"
    closing = "]" if nesting == "[" else "}"
    deep.write_text(f'name = "deep"\nx = {nesting * 50_000}1{closing * 50_000}\n')
    status = main(["run", "--catalog", "storage", "--num-tables", "1", "--fast-append-ratio", "1",
                   "--inter-arrival-scale-ms", "100", "--seeds", "1", "--provider-file", str(deep)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith("error: provider_file: ") and "nest too deep" in err[0], err


@pytest.mark.parametrize("description", ['a "quoted"\nline [read]', "tab\there, bell \x07, del \x7f", "emoji \U0001F600"])
def test_a_profile_written_with_any_description_loads_back(tmp_path, description):
    from dataclasses import replace

    from simcore.profiles import dump_profile, load_profile
    from simcore.providers import PROVIDERS

    profile = replace(PROVIDERS["s3"], name="mine", description=description)
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(profile, f"made from {description}\nsecond line\x0c\x01"), encoding="utf-8")
    loaded = load_profile(str(path))
    assert loaded.description == description and loaded.name == "mine"

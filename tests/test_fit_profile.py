"""A whole profile fitted from samples (simcore/fit/profile.py): where the samples time one client's reads, plain
writes or rounds of reads, the profile's read, plain write and cost of a read in a round come from them."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from commit_sweeps.simcore_command import main
from simcore.fit import SAMPLE_WRITE_BYTES, read_samples_file
from simcore.profiles import load_profile
from simcore.providers import PROVIDERS


def _samples_file(path, rows) -> None:
    """A samples file with the probe's columns (``read_ms`` included) holding ``rows``."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["operation", "latency_ms", "succeeded", "clients", "read_ms"])
        writer.writerows(rows)


def test_fit_takes_the_read_latency_from_samples_that_time_one_clients_reads(tmp_path, capsys):
    path = tmp_path / "samples.csv"
    rng = np.random.default_rng(5)
    _samples_file(path, [("cas", f"{r + 50.0:.3f}", int(clients == 1 or i % 2 == 0), clients,
                          f"{r:.3f}" if clients == 1 else "")
                         for clients in (1, 2) for i, r in enumerate(40.0 * np.exp(0.05 * rng.standard_normal(300)))])
    out = tmp_path / "mine.toml"
    assert main(["fit", "--samples", str(path), "--base", "s3", "--max-evaluations", "9", "--out", str(out),
                 "--quiet"]) == 0
    mine = load_profile(str(out))
    assert mine.read_median_ms == pytest.approx(40.0, rel=0.02) and mine.read_sigma == pytest.approx(0.05, abs=0.01)
    assert mine.floor_ms == PROVIDERS["s3"].floor_ms  # the base's 10 ms floor is below every read
    assert "Read from the samples (one client's 300 reads" in out.read_text()
    kept = tmp_path / "kept.toml"
    assert main(["fit", "--samples", str(path), "--base", "s3", "--base-read", "--max-evaluations", "9",
                 "--out", str(kept), "--quiet"]) == 0
    assert load_profile(str(kept)).read_median_ms == PROVIDERS["s3"].read_median_ms
    # A read longer than its whole op is refused, naming the line.
    path.write_text("operation,latency_ms,succeeded,clients,read_ms\ncas,50,1,1,20\ncas,50,1,1,60\n")
    assert main(["fit", "--samples", str(path), "--base", "s3", "--quiet"]) == 2
    assert "samples.csv:3: read_ms" in capsys.readouterr().err


def test_fit_takes_the_plain_write_from_samples_that_time_one_clients_writes(tmp_path, capsys):
    path = tmp_path / "samples.csv"
    rng = np.random.default_rng(6)
    writes = 25.0 * np.exp(0.1 * rng.standard_normal(200))
    _samples_file(path, [*(("write", f"{w:.3f}", 1, 1, "") for w in writes),
                         *(("cas", f"{60.0 + i % 7:.3f}", int(clients == 1 or i % 2 == 0), clients, "")
                           for clients in (1, 2) for i in range(200))])
    samples = read_samples_file(str(path))
    assert samples.read is None and samples.write.samples == 200
    assert [s.clients for s in samples.stats["cas"]] == [1, 2]  # the write rows are no client count of an op
    out = tmp_path / "mine.toml"
    assert main(["fit", "--samples", str(path), "--base", "s3", "--max-evaluations", "9", "--out", str(out),
                 "--quiet"]) == 0
    mine, base = load_profile(str(out)), PROVIDERS["s3"]
    # At the probe's 4 KiB the profile's write is the measured median; the base's per-MiB slope is kept.
    assert mine.write(SAMPLE_WRITE_BYTES).median_ms == pytest.approx(float(np.median(writes)), rel=0.02)
    assert mine.write_ms_per_mib == base.write_ms_per_mib and mine.write_sigma == pytest.approx(0.1, abs=0.02)
    assert mine.read_median_ms == base.read_median_ms  # these samples time no reads
    text = out.read_text()
    assert "Write from the samples (one client's 200 writes" in text and "read and floor from s3" in text
    kept = tmp_path / "kept.toml"
    assert main(["fit", "--samples", str(path), "--base", "s3", "--base-write", "--max-evaluations", "9",
                 "--out", str(kept), "--quiet"]) == 0
    assert load_profile(str(kept)).write(SAMPLE_WRITE_BYTES) == base.write(SAMPLE_WRITE_BYTES)
    # A write row at two clients, or one the store refused, is refused naming the line.
    for row in ("write,20,1,2,", "write,20,0,1,"):
        path.write_text(f"operation,latency_ms,succeeded,clients,read_ms\ncas,50,1,1,\n{row}\n")
        assert main(["fit", "--samples", str(path), "--base", "s3", "--quiet"]) == 2
        assert "samples.csv:3: write" in capsys.readouterr().err
    # Write rows alone are no measurement to fit.
    path.write_text("operation,latency_ms,succeeded,clients\nwrite,20,1,1\n")
    assert main(["fit", "--samples", str(path), "--base", "s3", "--quiet"]) == 2
    assert "at least one cas or append sample row" in capsys.readouterr().err


def test_fit_takes_the_cost_of_a_read_in_a_round_from_samples_that_time_rounds(tmp_path, capsys):
    # Rounds of 1, 16 and 64 reads sent at once: 40 ms, plus 0.5 ms for each read past the first, jittered.
    path = tmp_path / "samples.csv"
    rng = np.random.default_rng(7)
    _samples_file(path, [*(("round", f"{40.0 + 0.5 * (k - 1) + rng.normal(0, 1):.3f}", 1, k, "")
                           for k in (1, 16, 64) for _ in range(30)),
                         *(("cas", f"{60.0 + i % 7:.3f}", int(clients == 1 or i % 2 == 0), clients, "")
                           for clients in (1, 2) for i in range(200))])
    samples = read_samples_file(str(path))
    assert sorted(samples.rounds) == [1, 16, 64] and samples.round_ms_per_read == pytest.approx(0.5, abs=0.05)
    assert [s.clients for s in samples.stats["cas"]] == [1, 2]  # a round's reads are no client count of an op
    out = tmp_path / "mine.toml"
    assert main(["fit", "--samples", str(path), "--base", "s3", "--max-evaluations", "9", "--out", str(out),
                 "--quiet"]) == 0
    assert load_profile(str(out)).read_round_ms_per_read == pytest.approx(samples.round_ms_per_read, rel=1e-9)
    assert "round of reads sent at once from the samples (1, 16, 64 reads" in out.read_text()
    # Rounds of one size give no cost per read: the profile keeps none (a round takes one read's time).
    path.write_text("operation,latency_ms,succeeded,clients\nround,40,1,8\ncas,50,1,1\ncas,55,1,2\n")
    assert read_samples_file(str(path)).round_ms_per_read is None
    # A round the store did not answer is refused, naming the line.
    path.write_text("operation,latency_ms,succeeded,clients\ncas,50,1,1\nround,40,0,8\n")
    assert main(["fit", "--samples", str(path), "--base", "s3", "--quiet"]) == 2
    assert "samples.csv:3: round" in capsys.readouterr().err

"""The held-out check (studies/holdout/holdout.py), the fitted client counts a profile records, the extrapolation
notice of bench and capacity, and the fit's report of how well the data determine its terms."""

from __future__ import annotations

import pathlib
import re
import sys
from dataclasses import replace

import pytest

from simcore import SimConfig
from commit_sweeps.simcore_command import main
from simcore.errors import ConfigError
from simcore.fit import read_table
from simcore.profiles import canonical_json, dump_profile, load_profile, profile_from_json
from simcore.providers import PROVIDERS

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # studies/, as a checkout runs them

from studies.holdout import holdout  # noqa: E402
from ray_jobs.capacity import extrapolation  # noqa: E402

SEED000 = str(REPO_ROOT / "simcore" / "measured" / "seed000_conditional_writes.csv")
SHIPPED_S3 = REPO_ROOT / "simcore" / "measured" / "s3.toml"


def _fitted_on(counts, name="mine"):
    base = replace(PROVIDERS["s3"], name=name)
    return base.with_conditional("cas", replace(base.cas, fitted_clients=tuple(counts)))


def test_the_fitted_client_counts_round_trip_through_the_file_and_the_config(tmp_path):
    profile = _fitted_on([1, 2, 3, 4])
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(profile))
    assert "fitted_clients = [1, 2, 3, 4]" in path.read_text()
    loaded = load_profile(str(path))
    assert loaded == profile and loaded.cas.fitted_clients == (1, 2, 3, 4)
    assert profile_from_json(canonical_json(profile)) == profile
    config = SimConfig(provider="mine", provider_profile=canonical_json(profile))
    assert config.latency_profile.cas.fitted_clients == (1, 2, 3, 4)


@pytest.mark.parametrize("value", ["[]", "[0, 1]", "[3, 1]", "[1, 1]", "[1.5]", '"1-4"', "[true]"])
def test_bad_fitted_client_counts_name_the_field(tmp_path, value):
    text = dump_profile(PROVIDERS["s3"]).replace("[cas]\n", f"[cas]\nfitted_clients = {value}\n")
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_profile(str(path))
    assert error.value.field == f"{path}: cas.fitted_clients"


def test_old_profiles_load_unchanged_and_say_nothing(tmp_path, capsys):
    old = load_profile(str(SHIPPED_S3))  # written before the record existed
    assert old.cas.fitted_clients is None
    assert "fitted_clients" not in canonical_json(old)
    assert main(["bench", "--provider-file", str(SHIPPED_S3), "--operation", "cas", "--clients", "1-8",
                 "--seeds", "1", "--duration-s", "10", "--json"]) == 0
    assert "extrapolate" not in capsys.readouterr().err


def test_bench_says_when_it_extrapolates_beyond_the_fitted_counts(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(_fitted_on([1, 2, 4])))
    common = ["bench", "--provider-file", str(path), "--operation", "cas", "--seeds", "1", "--duration-s", "10"]
    assert main(common + ["--clients", "1-4"]) == 0  # 3 lies between fitted counts: no note
    assert "extrapolate" not in capsys.readouterr().err
    assert main(common + ["--clients", "2,6,8", "--json"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "extrapolate" in line]
    assert len(notes) == 1 and "(1, 2, 4)" in notes[0] and "6, 8" in notes[0]
    assert "extrapolate" not in captured.out  # the JSON lines are unchanged


def test_capacity_says_when_its_answer_lies_beyond_the_fitted_counts():
    config = SimConfig(provider="mine", provider_profile=canonical_json(_fitted_on([1, 2, 3, 4])))
    busy = {"usable_throughput_cps": 20.0, "commit_latency_p50_ms": 400.0}  # about 8 commit at once
    note = extrapolation(config, busy)
    assert note and "8.0 transactions commit at once" in note and "(1, 2, 3, 4)" in note
    assert extrapolation(config, {"usable_throughput_cps": 5.0, "commit_latency_p50_ms": 400.0}) is None
    assert extrapolation(config, {"usable_throughput_cps": None, "commit_latency_p50_ms": None}) is None
    assert extrapolation(SimConfig(provider="s3"), busy) is False  # no record: no key, no line


def test_the_holdout_scorer_fits_on_few_counts_and_scores_the_rest(capsys, tmp_path):
    assert holdout.main(["--fit", "1-3", "--only", "s3:cas", "--seeds", "1", "--duration-s", "20",
                         "--max-evaluations", "3", "--out", str(tmp_path / "cells.csv")]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert re.search(r"^s3 cas: fitted in \d+ s$", captured.err, re.M)  # each operation's fit reports its own time
    row = next(line for line in out.splitlines() if line.startswith("| s3 cas |"))
    within, held = (int(x) for x in row.split("|")[2].split("/"))
    assert held == 13 and 0 <= within <= 13  # 16 client counts, 3 of them fitted
    assert "**all**" in out
    assert holdout.main(["--fit", "2-4"]) == 2  # no one-client row: nothing to fit the write to
    assert "fit" in capsys.readouterr().err


def test_scoring_an_append_alone_still_fits_its_stores_cas_first(monkeypatch, capsys, tmp_path):
    # A whole run fits the CAS first, which fixes when reads observe the object for the append too
    # (fit_profile); --only STORE:append must fit what the whole run fits, and score only the append.
    fitted_ops = []

    def fake_fit_store(store, measured, fitted, max_evaluations=None, progress=None):
        fitted_ops.append((store, sorted(measured)))
        return PROVIDERS[store]

    monkeypatch.setattr(holdout, "fit_store", fake_fit_store)
    assert holdout.main(["--fit", "1-3", "--only", "s3x:append", "--seeds", "1", "--duration-s", "5",
                         "--out", str(tmp_path / "cells.csv")]) == 0
    assert fitted_ops == [("s3x", ["append", "cas"])]
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| s3x")]
    assert [row.split("|")[1].strip() for row in rows] == ["s3x append"]


def test_the_scorer_holds_goodput_within_10_percent_and_failures_within_5_points():
    measured = read_table(SEED000, "s3")["cas"]
    cells = [holdout.Cell(16, 15.0, 16.4, 0.90, 0.94), holdout.Cell(15, 15.0, 16.6, 0.90, 0.90),
             holdout.Cell(14, 15.0, 15.0, 0.90, 0.96)]
    assert [c.within for c in cells] == [True, False, False]
    text = holdout.drift(cells)
    assert "failure 6 points high at 14 clients" in text and "goodput 11% high at 15 clients" in text
    exact = holdout.held_out_cells(PROVIDERS["s3"], "cas", measured[:3], [1, 2], [1], 10.0)
    assert [c.clients for c in exact] == [3] and exact[0].measured_goodput == measured[2].goodput_ops


def test_a_known_store_gives_rows_as_a_per_thread_table_holds_them():
    # Seed 000's S3 CAS rows at 1 and 2 clients, the one-client row cut to 20 s of measuring time (T =
    # successes x mean): the known store's rows are the shipped measured profile simulated that long.
    rows = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 2]
    one = rows[0]
    rows = [replace(one, successes=int(20_000 / one.mean_ms))] + rows[1:]
    known = holdout.known_store_table("s3", {"cas": rows}, seed=1)["cas"]
    assert [s.clients for s in known] == [1, 2]
    assert all(s.failed_mean_ms is None for s in known)  # a per-thread table times no failed op
    seconds = known[0].successes * known[0].mean_ms / 1000.0  # T, recovered as read_table recovers it
    assert [s.goodput_ops for s in known] == pytest.approx([s.successes / seconds for s in known])
    assert known[1].failures > 0 and known[0].failures == 0  # two clients race; one does not
    assert holdout.known_store_table("s3", {"cas": rows}, seed=1)["cas"] == known
    assert holdout.known_store_table("s3", {"cas": rows}, seed=2)["cas"] != known
    longer = holdout.known_store_table("s3", {"cas": rows}, seed=1, time_x=3.0)["cas"]
    assert longer[0].successes == pytest.approx(3 * known[0].successes, rel=0.1)  # three times the ops
    assert holdout.main(["--fit", "1-3", "--only", "s3:cas", "--known-store", "-1"]) == 2
    assert holdout.main(["--fit", "1-3", "--only", "s3:cas", "--known-store-time-x", "10"]) == 2  # no known store

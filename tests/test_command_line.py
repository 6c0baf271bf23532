"""`commit-sweeps`: one command line over every user action, the older entry points kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commit_sweeps.cli import COMMANDS, build_parser, main
from commit_sweeps.simcore_command import main as simcore_main

REPO_ROOT = Path(__file__).resolve().parents[1]
SIMULATE = ["--provider", "s3x", "--catalog", "storage", "--num-tables", "2", "--fast-append-ratio", "0.9",
            "--inter-arrival-scale-ms", "500", "--duration-s", "1900", "--json"]


def test_help_lists_every_user_action(capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for name in ("simulate", "sweep", "knee", "capacity", "bench", "probe", "probe-catalog", "fit", "status",
                 "dashboard", "prepare"):
        assert name in out
    assert [command.name for command in COMMANDS] == ["simulate", "sweep", "knee", "capacity", "bench", "probe",
                                                      "probe-catalog", "fit", "status", "dashboard", "prepare"]


@pytest.mark.parametrize("command", [command.name for command in COMMANDS])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert "usage: commit-sweeps " + command in capsys.readouterr().out


def test_simulate_is_python_m_simcore_run(capsys):
    assert main(["simulate", *SIMULATE, "--seeds", "2"]) == 0
    via_console = capsys.readouterr().out
    assert simcore_main(["run", *SIMULATE, "--seeds", "1,2"]) == 0
    assert capsys.readouterr().out == via_console
    assert [json.loads(line)["seed"] for line in via_console.splitlines()] == [1, 2]


def test_seeds_mean_the_same_in_every_command():
    parser = build_parser()
    sweep = parser.parse_args(["sweep", "exp4c", "--seeds", "3"])
    knee = parser.parse_args(["knee", "--experiment", "exp4c", "--seeds", "3"])
    listed = parser.parse_args(["sweep", "exp4c", "--seeds", "1,2,3"])
    ranged = parser.parse_args(["knee", "--experiment", "exp4c", "--seeds", "1-3"])
    assert sweep.seeds == knee.seeds == listed.seeds == ranged.seeds == (1, 2, 3)


def test_bad_input_exits_2_before_anything_runs(tmp_path, capsys):
    assert main(["sweep", "exp4c", "--duration-s", "1000", "--store", str(tmp_path / "store")]) == 2
    assert "duration_s: 1000.0 is not allowed" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()
    with pytest.raises(SystemExit) as exited:
        main(["sweep", "no_such_experiment"])
    assert exited.value.code == 2


def test_a_value_argparse_refuses_is_one_line_naming_the_flag(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["capacity", "--num-tables", "abc", "--fast-append-ratio", "0.9"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "commit-sweeps capacity: error: argument --num-tables: 'abc' is not allowed; expected an integer "
        "(see commit-sweeps capacity --help)"]
    with pytest.raises(SystemExit):
        main(["dashboard"])
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_the_console_script_and_the_old_entry_points_run(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "SWEEPS_STORE")}
    bin_dir = Path(sys.executable).parent
    console = subprocess.run([str(bin_dir / "commit-sweeps"), "status", "--store", str(tmp_path)],
                             capture_output=True, text=True, timeout=120, env=env)
    legacy = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", str(tmp_path)],
                            capture_output=True, text=True, timeout=120, env=env, cwd=REPO_ROOT)
    assert console.returncode == legacy.returncode == 0
    assert console.stdout.splitlines()[0] == legacy.stdout.splitlines()[0]
    script = subprocess.run([sys.executable, "sweeps/exp4c.py", "--help"], capture_output=True, text=True,
                            timeout=120, env=env, cwd=REPO_ROOT)
    assert script.returncode == 0 and "--seeds SEEDS" in script.stdout


def test_bench_is_python_m_simcore_bench(capsys):
    flags = ["--provider", "s3", "--operation", "cas", "--clients", "1-2", "--duration-s", "60", "--seeds", "2",
             "--json"]
    assert main(["bench", *flags]) == 0
    via_console = capsys.readouterr().out
    assert simcore_main(["bench", *flags[:-3], "--seeds", "1,2", "--json"]) == 0
    assert capsys.readouterr().out == via_console
    assert [json.loads(line)["clients"] for line in via_console.splitlines()] == [1, 2]


def test_a_client_preset_reaches_every_point_of_a_sweep_as_its_own_experiment():
    from ray_jobs.grid import Grid
    from ray_jobs.latency_variant import client_variant, latency_variant

    grid = Grid("exp", swept={"inter_arrival_scale_ms": [100.0, 500.0]}, fixed={"provider": "s3"})
    variant = client_variant("exp", "iceberg-java", latency_variant("exp", "reference", None))
    assert variant.apply(grid).experiment == "exp-client-iceberg-java"
    configs = grid.configs(**variant.overrides)
    assert {(c.client, c.retry, c.retry_policy) for c in configs} == {("iceberg-java", 4, "backoff")}
    assert client_variant("exp", "reference", latency_variant("exp", "reference", None)).overrides == {}
    parser = build_parser()
    assert parser.parse_args(["sweep", "exp4c", "--client", "delta-rs"]).client == "delta-rs"
    assert parser.parse_args(["knee", "--experiment", "exp4c", "--client", "delta-rs"]).client == "delta-rs"


def test_an_unknown_client_exits_2_before_anything_runs(tmp_path, capsys):
    assert main(["sweep", "exp4c", "--client", "nosuch", "--store", str(tmp_path / "store")]) == 2
    assert "client: 'nosuch' is not allowed" in capsys.readouterr().err


def test_a_reader_that_stops_early_gets_no_traceback():
    # 60 seeds of JSON lines overflow the pipe, so the writer meets the closed pipe.
    command = [str(Path(sys.executable).parent / "commit-sweeps"), "simulate", *SIMULATE, "--seeds", "60"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0
    assert json.loads(first)["seed"] == 1
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_the_table_heading_states_the_load_the_config_offers():
    from simcore import SimConfig
    from commit_sweeps.simulate_command import render_table

    writers = SimConfig.from_dict({"writers": 50, "commit_interval_s": 60.0, "duration_s": 1900.0})
    assert ", 50 writer(s) every 60 s, corrected protocol, 1900 s" in render_table(writers, [])
    assert "inter-arrival" not in render_table(writers, [])
    open_loop = SimConfig(inter_arrival_scale_ms=500.0, duration_s=1900.0)
    assert ", inter-arrival 500 ms lognormal, corrected protocol, 1900 s" in render_table(open_loop, [])


def test_the_object_write_throttle_flag_is_defined_once_and_taken_by_every_command_that_builds_configs_from_flags():
    sources = [p for p in REPO_ROOT.rglob("*.py") if ".venv" not in p.parts and "tests" not in p.parts]
    places = [f"{p.relative_to(REPO_ROOT)}" for p in sources if '"--throttle-object-writes"' in p.read_text()]
    assert places == ["commit_sweeps/flags.py"], places
    parser = build_parser()
    for command in (["simulate", *SIMULATE, "--seeds", "1"],
                    ["capacity", "--provider", "gcp", "--num-tables", "10", "--fast-append-ratio", "0.9"]):
        assert parser.parse_args([*command, "--throttle-object-writes"]).throttle_object_writes is True


# -- fit's words: whether its fit is good, what its terms are, what store it describes --------------------------

@pytest.mark.parametrize("loss, word", [(0.53, "a close fit"), (3.05, "a good fit"), (14.04, "a good fit"),
                                        (30.0, "a poor fit")])
def test_fit_says_whether_its_fit_is_good_against_a_stated_threshold(loss, word):
    from commit_sweeps.fit_command import GOOD_FIT_LOSS, fit_verdict

    verdict = fit_verdict("cas", loss)
    assert verdict.startswith(f"cas: fit loss {loss:.2f}: {word} (")
    assert f"{GOOD_FIT_LOSS:g}" in verdict or word == "a close fit"


def test_the_good_fit_threshold_is_the_accuracy_pages_tolerance_in_loss_units():
    import math

    from commit_sweeps.fit_command import GOOD_FIT_LOSS

    at_tolerance = (math.log(1.10) / 0.03) ** 2 + (5 / 2) ** 2  # 10% goodput and 5 points, scoring's units
    assert GOOD_FIT_LOSS <= at_tolerance < GOOD_FIT_LOSS + 1
    for shipped in ("s3", "s3x", "azure", "azurex", "gcp"):  # all 128 of seed 000's cells within tolerance
        header = (REPO_ROOT / "simcore" / "measured" / f"{shipped}.toml").read_text()
        losses = [float(x) for x in header.split("Fit loss per operation:")[1].splitlines()[0].replace(",", " ").split()
                  if x.replace(".", "").isdigit()]
        assert losses and all(loss <= GOOD_FIT_LOSS for loss in losses), (shipped, losses)


def test_every_term_the_fit_reports_is_explained():
    from dataclasses import replace

    from commit_sweeps.fit_command import TERM_MEANINGS
    from simcore.fit import term_values
    from simcore.profiles import load_profile
    from simcore.providers import PROVIDERS

    throttled = load_profile(str(REPO_ROOT / "simcore" / "measured" / "gcp.toml"))
    held = PROVIDERS["s3"].with_conditional("cas", replace(PROVIDERS["s3"].cas, hold_ms=5.0,
                                                           failed_extra="uncontended"))
    for profile in (PROVIDERS["s3"], throttled, held):
        assert set(term_values(profile, "cas")) <= set(TERM_MEANINGS)


def test_a_probed_profile_is_described_as_the_store_probed_not_as_its_base():
    from types import SimpleNamespace

    from commit_sweeps.fit_command import _default_description
    from simcore.providers import PROVIDERS

    args = SimpleNamespace(samples="/data/minio.csv", base_file=None)
    described = _default_description(args, PROVIDERS["s3"], reads=object(), writes=None)
    assert described == ("a store probed into minio.csv (commit-sweeps probe); write and floor from the s3 base "
                         "(AWS S3 Standard)")
    assert not described.startswith(PROVIDERS["s3"].description)
    table = SimpleNamespace(samples=None, base_file=None)  # seed 000's rows are the base store's own
    assert _default_description(table, PROVIDERS["s3"], None, None) == "AWS S3 Standard"


def test_the_store_labs_default_delay_is_stated_and_is_not_zero(tmp_path):
    script = str(REPO_ROOT / "scripts" / "store-lab.sh")
    usage = subprocess.run(["bash", script, "help"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "--delay-ms MS (default 16, each way)" in usage.stderr
    # Jitter up to the delay is allowed: 16 ms passes the check with the default delay (0 would refuse it),
    # and the lab then stops at the Python check (PYTHON=false) before it builds or starts anything.
    env = {**os.environ, "PYTHON": "false", "STORE_LAB_DIR": str(tmp_path / "lab")}
    up = subprocess.run(["bash", script, "up", "--jitter-ms", "16"], capture_output=True, text=True, timeout=60,
                        env=env)
    assert up.returncode == 2 and "jitter_ms" not in up.stderr, up.stderr
    assert "cannot import boto3" in up.stderr or "'curl' is not on PATH" in up.stderr
    assert not (tmp_path / "lab").exists()

def test_a_long_bench_says_how_long_before_it_simulates_anything(capsys, monkeypatch):
    import simcore.bench

    class Stopped(Exception):
        pass

    def first_simulation(*args):
        raise Stopped(capsys.readouterr().err)  # what stderr held when the first simulation began

    monkeypatch.setattr(simcore.bench, "_closed_loop", first_simulation)
    with pytest.raises(Stopped) as stopped:
        main(["bench", "--provider", "s3", "--operation", "cas", "--clients", "1-1024", "--duration-s", "300",
              "--seeds", "1"])
    (line,) = str(stopped.value).splitlines()
    assert line.startswith("bench: 1024 client count(s) x 1 seed(s) x 300 s, at most about 3.6e+09 ops to simulate: "
                           "estimated ") and line.endswith(" min; progress follows as client counts finish"), line


def test_bench_reports_progress_as_client_counts_finish(capsys, monkeypatch):
    from commit_sweeps import bench_command

    monkeypatch.setattr(bench_command, "PROGRESS_FROM_S", 0.0)
    monkeypatch.setattr(bench_command, "PROGRESS_EVERY_S", 0.0)
    assert main(["bench", "--provider", "s3", "--operation", "cas", "--clients", "1-3", "--duration-s", "20",
                 "--seeds", "1", "--json"]) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0].startswith("bench: 3 client count(s) x 1 seed(s) x 20 s, at most about ")
    assert [line.split(" client counts done")[0] for line in err[1:4]] == ["bench: 1/3", "bench: 2/3", "bench: 3/3"]
    assert "left" in err[1] and err[3].endswith("elapsed")
    assert len(captured.out.splitlines()) == 3  # the results on stdout, as without progress


def test_a_short_bench_prints_no_progress(capsys):
    assert main(["bench", "--provider", "s3", "--operation", "cas", "--clients", "1-2", "--duration-s", "20",
                 "--seeds", "1", "--json"]) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("bench: ")]

"""The sweep scripts: their grids are exactly seed 001's (docs/reference/glossary.md), and bad input stops them early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import ray

from commit_sweeps.sweep_command import sweep_main
from ray_jobs import Grid, GridError, Treatment, View
from sweeps import exp4a, exp4a_zipf, exp4b, exp4b_zipf, exp4c
from sweeps.catalog import EXPERIMENTS, KNEE_GRIDS, SEED001

REPO_ROOT = Path(__file__).resolve().parents[1]
INTER_ARRIVAL_SCALES_MS = {20, 50, 100, 200, 300, 400, 500, 1000, 2000, 5000}
TABLE_COUNTS = {1, 2, 5, 10, 20, 50}


def values(configs, field):
    return {getattr(c, field) for c in configs}


def test_exp4a_is_fa_only_s3_with_a_catalog_service():
    configs = exp4a.GRID.configs()
    assert len(configs) == 240
    assert values(configs, "provider") == {"s3"} and values(configs, "catalog") == {"service"}
    assert values(configs, "fast_append_ratio") == {1.0}
    assert values(configs, "num_tables") == TABLE_COUNTS
    assert values(configs, "catalog_latency_ms") == {1, 10, 50, 120}
    assert values(configs, "inter_arrival_scale_ms") == INTER_ARRIVAL_SCALES_MS
    assert values(configs, "table_distribution") == {"uniform"} and values(configs, "duration_s") == {3600}


def test_exp4b_is_exp4a_with_a_90_10_mix():
    configs = exp4b.GRID.configs()
    assert len(configs) == 240 and values(configs, "fast_append_ratio") == {0.9}
    as_exp4a = {c.replace(fast_append_ratio=1.0).config_hash for c in configs}
    assert as_exp4a == {c.config_hash for c in exp4a.GRID.configs()}


def test_exp4c_sweeps_providers_tables_mixes_and_load_on_a_storage_catalog():
    configs = exp4c.GRID.configs()
    assert len(configs) == 900
    assert values(configs, "catalog") == {"storage"} and values(configs, "catalog_latency_ms") == {None}
    assert values(configs, "provider") == {"s3x", "s3", "azurex", "azure", "gcp"}
    assert values(configs, "num_tables") == TABLE_COUNTS
    assert values(configs, "fast_append_ratio") == {1.0, 0.9, 0.5}
    assert values(configs, "inter_arrival_scale_ms") == INTER_ARRIVAL_SCALES_MS


@pytest.mark.parametrize("zipf, base", [(exp4a_zipf, exp4a), (exp4b_zipf, exp4b)])
def test_zipf_grids_are_their_base_grid_with_zipf_alpha_1_5(zipf, base):
    configs = zipf.GRID.configs()
    assert len(configs) == 240
    assert values(configs, "table_distribution") == {"zipf"} and values(configs, "zipf_alpha") == {1.5}
    as_uniform = {c.replace(table_distribution="uniform", zipf_alpha=None).config_hash for c in configs}
    assert as_uniform == {c.config_hash for c in base.GRID.configs()}


def test_all_runs_every_grid_once():
    names = [g.experiment for g in SEED001]
    assert names == ["exp4a", "exp4b", "exp4c", "exp4a_zipf", "exp4b_zipf"]


@pytest.mark.parametrize("grid", SEED001, ids=lambda g: g.experiment)
def test_quick_is_a_small_subset_of_the_same_grid(grid):
    full = {c.config_hash for c in grid.configs()}
    quick = {c.config_hash for c in grid.configs(quick=True)}
    assert quick < full and 10 <= len(quick) <= 100


def test_duration_override_applies_to_every_config():
    assert values(exp4c.GRID.configs(quick=True, duration_s=2000), "duration_s") == {2000.0}


@pytest.mark.parametrize("script", ["exp4a", "exp4b", "exp4c", "exp4a_zipf", "exp4b_zipf", "all", "clients", "writers",
                                    "architectures"])
def test_every_script_has_the_same_flags(script):
    result = subprocess.run([sys.executable, f"sweeps/{script}.py", "--help"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    for flag in ("--seeds", "--duration-s", "--store", "--quick", "--max-parallel"):
        assert flag in result.stdout


# -- bad input: a clear error before anything runs ----------------------------

BAD_VALUES = [
    ("provider", "s4", "provider: 's4' is not allowed; expected one of s3x, s3, azurex, azure, gcp, r2, instant"),
    ("inter_arrival_scale_ms", -5, "inter_arrival_scale_ms: -5.0 is not allowed; expected a number > 0 (ms)"),
    ("num_tables", 0, "num_tables: 0 is not allowed; expected an integer >= 1"),
]


@pytest.mark.parametrize("field, bad, message", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_a_bad_grid_value_stops_the_sweep_before_anything_runs(tmp_path, capsys, field, bad, message):
    swept = {"provider": ["s3x", "s3"], "num_tables": [1, 10], "inter_arrival_scale_ms": [100, 1000]}
    swept[field] = list(swept[field]) + [bad]
    grid = Grid("bad_grid", swept=swept, fixed={"catalog": "storage"})
    store = tmp_path / "store"
    assert sweep_main([grid], ["--store", str(store), "--seeds", "1"]) == 2
    error = capsys.readouterr().err
    assert f"bad_grid: {message}" in error and "Nothing was run." in error
    assert not store.exists()  # the store was not touched
    assert not ray.is_initialized()  # and no Ray was started


def test_grid_points_are_named_in_the_error():
    grid = Grid("g", swept={"provider": ["s3", "nope"], "num_tables": [3]})
    with pytest.raises(GridError) as caught:
        grid.configs()
    assert (caught.value.field, caught.value.value) == ("provider", "nope")
    assert "(grid point provider='nope', num_tables=3)" in str(caught.value)


def test_grid_declarations_are_checked():
    with pytest.raises(GridError, match="quick.num_tables: 7 is not allowed; expected one of its swept values"):
        Grid("g", swept={"num_tables": [1, 2]}, quick={"num_tables": [7]})
    with pytest.raises(GridError, match="tables: .* expected one of the config fields"):
        Grid("g", swept={"tables": [1, 2]}).configs()
    with pytest.raises(GridError, match="num_tables: \\[\\] is not allowed; expected at least one swept value"):
        Grid("g", swept={"num_tables": []})
    with pytest.raises(GridError, match="experiment: '_x' is not allowed"):
        Grid("_x", swept={"num_tables": [1]})
    with pytest.raises(GridError, match="knee_quick.num_tables: 7 is not allowed; expected one of its swept values"):
        Grid("g", swept={"num_tables": [1, 2]}, knee_quick={"num_tables": [7]})
    with pytest.raises(GridError, match="view: kind: 'Throttle view' is not allowed"):
        View("Throttle view", anchor="t", nav="T", title="T")
    with pytest.raises(GridError, match="view: title: '' is not allowed; expected a non-empty text"):
        View("treatment-frontier", anchor="t", nav="T", title="")


def test_a_derived_grid_keeps_the_study_declaration():
    view = View("treatment-frontier", anchor="demo", nav="Demo", title="Demo")
    base = Grid("base", swept={"num_tables": [1, 10], "retry_policy": [None, "backoff"]},
                compares=Treatment("retry_policy"), knee_quick={"num_tables": [1]}, view=view)
    derived = base.derive("other", provider="gcp")
    assert (derived.compares, derived.knee_quick, derived.view) == (base.compares, base.knee_quick, view)
    assert base.derive("third", knee_quick={"num_tables": [10]}).knee_quick == {"num_tables": (10,)}


# -- the catalog: every grid file, found, not listed ---------------------------------------------------------

# The knee search's quick curves as sweeps/knee.py's table had them before each grid declared its own.
KNEE_QUICK = {
    "exp4c": {"provider": ("s3x", "s3"), "num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    "exp4a": {"num_tables": (1, 10), "catalog_latency_ms": (10, 50)},
    "exp4b": {"num_tables": (1, 10), "catalog_latency_ms": (10,)},
    "exp4a_zipf": {"num_tables": (1, 10), "catalog_latency_ms": (10, 50)},
    "exp4b_zipf": {"num_tables": (1, 10), "catalog_latency_ms": (10,)},
    "gcs_throttle": {"num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    "retry_policies": {"provider": ("s3x",), "num_tables": (1,), "fast_append_ratio": (0.9,)},
    "append_catalog": {"provider": ("s3x",), "num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    "latency_models": {"num_tables": (1, 10), "fast_append_ratio": (1.0, 0.9)},
    "architectures": {"provider": ("s3",), "num_tables": (10,), "fast_append_ratio": (1.0,)},
}


def test_the_catalog_holds_every_grid_file_seed_001_first():
    assert list(EXPERIMENTS)[:5] == ["exp4a", "exp4b", "exp4c", "exp4a_zipf", "exp4b_zipf"]
    assert sorted(EXPERIMENTS) == sorted(["exp4a", "exp4b", "exp4c", "exp4a_zipf", "exp4b_zipf", "gcs_throttle",
                                          "retry_policies", "append_catalog", "latency_models", "clients", "writers",
                                          "writers_maintenance", "architectures"])
    assert EXPERIMENTS["exp4c"] is exp4c.GRID


def test_the_knee_search_offers_the_grids_that_declare_its_quick_curves():
    assert {name: dict(grid.quick) for name, grid in KNEE_GRIDS.items()} == KNEE_QUICK
    for name, grid in KNEE_GRIDS.items():  # the same curves as the experiment's grid, only another quick subset
        assert grid.experiment == name and grid.swept == EXPERIMENTS[name].swept
        assert grid.fixed == EXPERIMENTS[name].fixed


STUDY_FILE = """
from ray_jobs import Grid, Treatment, View

GRID = Grid(
    experiment="demo_study",
    description="demo_study: one grid file is the whole study",
    fixed={"catalog": "storage", "provider": "s3x"},
    swept={"retry_policy": (None, "backoff"), "num_tables": (1, 10), "inter_arrival_scale_ms": (100, 1000)},
    quick={"num_tables": (1,)},
    knee_quick={"num_tables": (1,)},
    compares=Treatment("retry_policy", baseline=None, labels=((None, "immediate"),)),
    view=View("treatment-colours", anchor="demo", nav="Demo", title="A demo study", lead="Made by `one file`."),
)
"""


def test_a_study_is_one_grid_file(tmp_path):
    """A new file beside the grids appears in the sweep command, the knee search and the page, and nowhere else."""
    (tmp_path / "demo_study.py").write_text(STUDY_FILE)
    code = f"""
import sys
import sweeps
sweeps.__path__.append({str(tmp_path)!r})  # as if demo_study.py sat in sweeps/
from commit_sweeps.cli import build_parser
from sweeps.catalog import EXPERIMENTS, KNEE_GRIDS
from dashboards.registry import VIEWS
from dashboards.site import render_page
assert "demo_study" in EXPERIMENTS and "demo_study" in KNEE_GRIDS
(demo,) = [view for view in VIEWS if view.id == "demo"]
assert demo.kind == "treatment-colours" and demo.experiments == ("demo_study",)
page = render_page('<!-- registry: nav -->|<!-- registry: sections -->|<!-- registry: scripts -->')
assert '<a href="#demo">Demo</a>' in page and '<div id="demo-body">' in page and "<code>one file</code>" in page
build_parser().parse_args(["sweep", "--help"])
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr
    assert "demo_study" in result.stdout  # listed by `commit-sweeps sweep --help`


@pytest.mark.parametrize("flags, message", [
    (["--duration-s", "-5"], "exp4c: duration_s: -5.0 is not allowed; expected a number of seconds > 2 x the warm-up"),
    (["--duration-s", "1000"], "exp4c: duration_s: 1000.0 is not allowed"),
    # --seeds is refused as in every command (commit_sweeps.flags): the field, the value, what is allowed.
    (["--seeds", "0"], "error: seeds: '0' is not allowed; expected a count N (seeds 1..N)"),
    (["--seeds", "10000000"], "error: seeds: '10000000' is not allowed"),
    (["--max-parallel", "-1"], "--max-parallel: -1 is not allowed; expected an integer >= 1"),
])
def test_bad_flags_exit_2_naming_the_value(tmp_path, flags, message):
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "SWEEPS_STORE")}
    result = subprocess.run([sys.executable, "sweeps/exp4c.py", "--store", str(tmp_path / "store"), *flags],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / "store").exists()


# -- the closing lines: commands the user's shell can run as printed -----------

def _summary():
    """A finished sweep's summary with nothing in it: what ``format_summary`` reads."""
    from types import SimpleNamespace

    return SimpleNamespace(counts=[], total=0, run=0, skipped=0, failed=0, wall_s=0.0, scan_s=0.0, fanout_s=0.0,
                           batches=0, simulate_s=0.0, write_s=0.0, files_written=0, failures=[], unreadable=[],
                           interrupted=False, ok=True)


def _venv(folder: Path, with_script: bool = True) -> Path:
    """A venv's bin folder as the README's setup leaves it: a python link and the console script (which
    prints its arguments here, standing in for the real one)."""
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    if with_script:
        script = bin_dir / "commit-sweeps"
        script.write_text('#!/bin/sh\necho "ran $*"\n')
        script.chmod(0o755)
    return bin_dir


def _closing_commands(text: str) -> dict[str, str]:
    return {line.split(":", 1)[0]: line.split(":", 1)[1].split("   (then")[0].strip()
            for line in text.splitlines() if line.startswith(("Status:", "Dashboard:"))}


def test_the_closing_lines_run_as_printed_from_a_shell_without_the_venv_on_path(tmp_path, monkeypatch):
    from commit_sweeps.sweep_command import format_summary

    bin_dir = _venv(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the README's command never activates the venv
    commands = _closing_commands(format_summary(_summary(), "./results"))
    assert commands == {"Status": ".venv/bin/commit-sweeps status --store ./results",
                        "Dashboard": ".venv/bin/commit-sweeps dashboard serve --store ./results"}
    for command in commands.values():
        ran = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin"})
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.startswith("ran ")


def test_the_closing_lines_use_the_bare_name_when_the_shell_finds_this_script(tmp_path, monkeypatch):
    from commit_sweeps.sweep_command import format_summary

    bin_dir = _venv(tmp_path)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")  # an activated venv
    store = str(tmp_path / "results")
    assert _closing_commands(format_summary(_summary(), store))["Status"] == f"commit-sweeps status --store {store}"


def test_without_a_console_script_the_closing_lines_run_the_module(tmp_path, monkeypatch):
    from commit_sweeps.sweep_command import console_command

    bin_dir = _venv(tmp_path / "elsewhere", with_script=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert console_command() == f"{bin_dir / 'python'} -m commit_sweeps"

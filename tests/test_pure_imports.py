"""The pure modules import, and the dashboard builds, where Ray cannot be imported.

The store, its schema, the grid and the lease never touch Ray, and neither
do the grid files (``sweeps.catalog``) or ``commit-sweeps dashboard``: a
machine that only reads a store needs pyarrow, not Ray. Each check runs in
a fresh interpreter whose ``ray`` is blocked: ``sys.modules["ray"] = None``
(and the same for the submodules the code base uses) makes ``import ray``
raise, and a finder refuses any other ``ray.*``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLOCK_RAY = textwrap.dedent("""
    import sys
    for name in ("ray", "ray.tune", "ray.tune.search", "ray.tune.logger", "ray.util", "ray.exceptions"):
        sys.modules[name] = None  # `import ray` raises ImportError from here on

    class _NoRay:
        def find_spec(self, name, path=None, target=None):
            if name == "ray" or name.startswith("ray."):
                raise ImportError(f"{name} is blocked: this check runs without Ray")
            return None

    sys.meta_path.insert(0, _NoRay())
""")

# Everything `commit-sweeps dashboard`, `commit-sweeps status` and a store reader import, and the pure core of ray_jobs.
PURE_MODULES = (
    "ray_jobs", "ray_jobs.store", "ray_jobs.schema", "ray_jobs.grid", "ray_jobs.lease", "ray_jobs.status",
    "sweeps.catalog", "dashboards", "commit_sweeps.dashboard_command", "dashboards.registry", "dashboards.site",
    "dashboards.payload", "dashboards.server", "dashboards.report", "dashboards.snapshot", "commit_sweeps.flags",
    "commit_sweeps.status_command",
)


def run_without_ray(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK_RAY + textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})


def test_ray_is_really_blocked():
    result = run_without_ray("""
        for name in ("ray", "ray.tune", "ray.dag"):
            try:
                __import__(name)
            except ImportError:
                continue
            raise SystemExit(f"{name} imported")
        print("ok")
    """)
    assert result.returncode == 0, result.stderr


def test_the_pure_modules_import_without_ray():
    result = run_without_ray(f"""
        import importlib
        for name in {PURE_MODULES!r}:
            importlib.import_module(name)
        from ray_jobs import Grid, GridError, ResultsStore, RESULTS_SCHEMA, Treatment, View
        from sweeps.catalog import EXPERIMENTS, KNEE_GRIDS, SEED001
        assert EXPERIMENTS and KNEE_GRIDS and SEED001
        loaded = sorted(name for name, module in sys.modules.items() if name.split(".")[0] == "ray" and module)
        assert not loaded, loaded
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_importing_ray_jobs_loads_none_of_its_modules():
    """The package's public names load on first use, so a grid file costs the grid alone."""
    result = run_without_ray("""
        import ray_jobs
        assert not [name for name in sys.modules if name.startswith("ray_jobs.")], sorted(sys.modules)
        from ray_jobs import Grid
        assert "ray_jobs.grid" in sys.modules and not [name for name in sys.modules if name.startswith("commit_sweeps")]
        import sweeps.catalog
        assert not [name for name in sys.modules if name.startswith("commit_sweeps")]
        print("ok")
    """)
    assert result.returncode == 0, result.stderr


def test_the_dashboard_builds_without_ray(tmp_path):
    from store_fixtures import contract_row, write_store_file

    store, site = tmp_path / "store", tmp_path / "site"
    write_store_file(str(store), "exp4c", [contract_row("exp4c", {"provider": "s3", "inter_arrival_scale_ms": 100.0}, 1,
                                                        {"success_rate": 1.0, "throughput_cps": 1.0})])
    result = run_without_ray(f"""
        from commit_sweeps.cli import main
        code = main(["dashboard", "build", "--store", {str(store)!r}, "--out", {str(site)!r}])
        assert code == 0, code
        assert not [name for name, module in sys.modules.items() if name.split(".")[0] == "ray" and module]
    """)
    assert result.returncode == 0, result.stderr
    assert "Built the dashboard" in result.stdout
    assert (site / "index.html").exists() and (site / "data.js").exists()

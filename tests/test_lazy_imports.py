"""A run loads only what it uses, so that it starts fast, and what it skips still works when asked for.

Each check runs in a fresh interpreter, since what a process has imported
is the thing under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                            timeout=600, env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_run_loads_neither_pyarrow_nor_scipy_linalg():
    out = _python("""
        import json, sys
        from simcore import SimConfig, simulate
        row, = simulate(SimConfig(provider="s3", num_tables=2, inter_arrival_scale_ms=200, duration_s=1900), [3])
        print(json.dumps({"pyarrow": "pyarrow" in sys.modules, "scipy.linalg": "scipy.linalg" in sys.modules,
                          "committed": row["n_committed"]}))
    """)
    loaded = json.loads(out)
    assert loaded["committed"] > 0
    assert loaded == {"pyarrow": False, "scipy.linalg": False, "committed": loaded["committed"]}


def test_numba_blas_still_loads_scipy_when_a_later_function_needs_it():
    # jit_start answers "no BLAS" only while Numba's target loads; a later np.linalg compile looks again.
    out = _python("""
        import sys
        import numba
        import numpy as np
        from simcore import jit_start
        jit_start.start()
        before = "scipy.linalg" in sys.modules
        inverse = numba.njit(lambda a: np.linalg.inv(a))(np.array([[2.0, 0.0], [0.0, 4.0]]))  # compiles now
        print(before, "scipy.linalg" in sys.modules, bool(np.allclose(inverse, [[0.5, 0.0], [0.0, 0.25]])))
    """)
    assert out.split() == ["False", "True", "True"]


def test_the_transactions_table_still_loads_pyarrow_itself():
    out = _python("""
        from simcore import SimConfig, simulate_transactions
        table = simulate_transactions(SimConfig(provider="s3", num_tables=2, inter_arrival_scale_ms=200,
                                                duration_s=1900), 3)
        print(type(table).__module__, table.num_rows > 0)
    """)
    assert out.split() == ["pyarrow.lib", "True"]

"""simcore's kernels are cached by their source's content: a copy of the tree loads what the original compiled.

Each step runs in its own interpreter (Numba's cache is read once per function and process), on a private
NUMBA_CACHE_DIR, with a one-line kernel imported under a simcore module name from a file at a path of its own,
as a Ray job's uploaded working directory holds a copy of simcore at a new path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from numba.core import caching

from simcore import kernel_cache

KERNEL = """
import numba

@numba.njit(cache=True)
def plus_one(x):
    return x + {step}
"""

RUN = """
import importlib.util, json, sys
import simcore.kernel_cache
simcore.kernel_cache.install()
spec = importlib.util.spec_from_file_location("simcore.kernel_cache_probe", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
value = module.plus_one(1)
stats = module.plus_one.stats
print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def _copy(tmp_path: Path, name: str, step: int = 1) -> Path:
    path = tmp_path / name / "simcore" / "kernel_cache_probe.py"
    path.parent.mkdir(parents=True)
    path.write_text(KERNEL.format(step=step))
    return path


def _run(kernel: Path, cache: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN, str(kernel)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_copy_at_another_path_loads_the_kernel_the_original_compiled(tmp_path):
    cache = tmp_path / "cache"
    assert _run(_copy(tmp_path, "checkout"), cache) == {"value": 2, "hits": 0, "misses": 1}
    assert _run(_copy(tmp_path, "upload"), cache) == {"value": 2, "hits": 1, "misses": 0}
    # Different source: a folder of its own, compiled afresh, and the first copy's kernel still there.
    assert _run(_copy(tmp_path, "edited", step=2), cache) == {"value": 3, "hits": 0, "misses": 1}
    assert _run(_copy(tmp_path, "second-upload"), cache) == {"value": 2, "hits": 1, "misses": 0}
    assert len([p for p in cache.iterdir() if p.name.startswith("simcore-kernel_cache_probe-")]) == 2


def test_only_simcore_functions_are_placed_by_content(tmp_path):
    kernel_cache.install()
    kernel_cache.install()
    locators = [cls for cls in caching.CacheImpl._locator_classes if cls is kernel_cache.ContentKeyedLocator]
    assert len(locators) == 1

    source = tmp_path / "elsewhere.py"
    source.write_text("def f():\n    return 1\n")
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    function = namespace["f"]
    function.__module__ = "some_other_package.elsewhere"
    assert kernel_cache.ContentKeyedLocator.from_function(function, str(source)) is None
    function.__module__ = "simcore.elsewhere"
    located = kernel_cache.ContentKeyedLocator.from_function(function, str(source))
    assert located is not None and Path(located.get_cache_path()).name.startswith("simcore-elsewhere-")

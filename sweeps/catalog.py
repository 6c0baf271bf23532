"""Every experiment the sweeps declare, found in one place: the grid files of this package.

A grid file is a module of ``sweeps`` that declares ``GRID`` (one
experiment) or ``GRIDS`` (several): the grid carries the whole study, its
points, quick subsets, treatment and dashboard view (``ray_jobs.grid``).
Adding a study is adding one such file; nothing else lists it. The other
modules here (``all``, ``knee``, ``seed001``, this one) declare neither.

- ``EXPERIMENTS``: name -> grid, seed 001's first (in ``SEED001_EXPERIMENTS``
  order), then the others by file name: the order ``--help`` lists them in.
- ``SEED001``: seed 001's experiment-4 grids, what ``all`` runs.
- ``KNEE_GRIDS``: name -> grid whose quick subset is the knee search's, for
  every grid that declares one (``Grid.knee_quick``).

Pure: importing the catalog imports the grid files and nothing of Ray or
the command line.
"""

from __future__ import annotations

import importlib
import pkgutil

import sweeps
from ray_jobs.grid import Grid
from sweeps.seed001 import SEED001_EXPERIMENTS


def _declared_grids() -> list[Grid]:
    """Every grid the package's modules declare, by module name, in declaration order within a module."""
    grids, home = [], {}
    for module_info in sorted(pkgutil.iter_modules(sweeps.__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{sweeps.__name__}.{module_info.name}")
        declared = getattr(module, "GRIDS", None)
        if declared is None:
            declared = [module.GRID] if hasattr(module, "GRID") else []
        for grid in declared:
            if not isinstance(grid, Grid):
                raise TypeError(f"{module.__name__}: GRID(S) holds {grid!r}; expected ray_jobs.grid.Grid values")
            if grid.experiment in home and home[grid.experiment] != module.__name__:
                raise ValueError(f"experiment {grid.experiment!r} is declared twice: in {home[grid.experiment]} "
                                 f"and in {module.__name__}")
            if grid.experiment not in home:
                home[grid.experiment] = module.__name__
                grids.append(grid)
    return grids


def _catalog() -> dict:
    declared = {grid.experiment: grid for grid in _declared_grids()}
    missing = [name for name in SEED001_EXPERIMENTS if name not in declared]
    if missing:
        raise ValueError(f"sweeps.seed001.SEED001_EXPERIMENTS names {missing}, which no grid file declares")
    ordered = {name: declared[name] for name in SEED001_EXPERIMENTS}
    ordered.update((name, grid) for name, grid in declared.items() if name not in ordered)
    return ordered


EXPERIMENTS = _catalog()
SEED001 = tuple(EXPERIMENTS[name] for name in SEED001_EXPERIMENTS)
KNEE_GRIDS = {name: grid.derive(name, quick=grid.knee_quick)
              for name, grid in EXPERIMENTS.items() if grid.knee_quick is not None}

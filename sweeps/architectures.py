"""architectures: every open-loop commit design on each store, against table count (8,190 configs).

The commit designs users run (``simcore.designs``; docs/architectures.md has
each one's protocol and sources) side by side: the catalog as one object of
the store (Iceberg v3 and v4), as a conditional-append log, an Iceberg REST
catalog (v3 and v4), DuckLake and Unity Catalog, on s3, s3x, azure, azurex,
gcp and r2, at 1 to 20 tables, FA only and 90/10 FA/VO. A design the store
cannot run (``Design.applies_to``: append needs conditional appends) is
skipped; the group-commit designs are for writers, not open-loop load.

A design is a set of config fields (catalog, metadata_format, client), so
each stored row names its design through them: ``simcore.designs.design_of``
reads it back, and the dashboard's "Commit designs" view draws one line per
design. The designs' knees lie 20 times apart (at 10 tables on S3, a storage
catalog near 200 ms inter-arrival, DuckLake near 10 ms), so the scales run from
2 ms, where every design fails, to 5000 ms, at most 1.5 apart; the knee search
refines them (``python sweeps/knee.py --experiment architectures``).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from typing import Any, Optional

from ray_jobs.grid import Grid, View
from simcore.designs import DESIGNS, design_fields
from simcore.providers import PROVIDERS

STORES = ("s3", "s3x", "azure", "azurex", "gcp", "r2")
TABLE_COUNTS = (1, 2, 5, 10, 20)
FAST_APPEND_RATIOS = (1.0, 0.9)
# 2 ms fails for every design (a catalog database's ceiling is 100-200 c/s); a 1-1.5-2-3-5-7 ladder above it.
INTER_ARRIVAL_SCALES_MS = (2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000,
                           3000, 5000)
QUICK_INTER_ARRIVAL_SCALES_MS = (20, 50, 100, 200, 500, 2000)
OPEN_LOOP_DESIGNS = tuple(design for design in DESIGNS if not design.writers_only)


def _design_axes(designs) -> dict:
    """The config fields the designs set, each with the values they take (in declaration order)."""
    names = []
    for design in designs:
        names += [name for name in design_fields(design, None) if name not in names]
    return {name: tuple(dict.fromkeys(design_fields(design, None).get(name) for design in designs)) for name in names}


@dataclasses.dataclass(frozen=True)
class DesignGrid(Grid):
    """A grid whose points are commit designs crossed with the other swept fields, where the design applies.

    The design fields (``catalog``, ``metadata_format``, ``client``) are
    swept fields like the others, so the quick subsets, the knee search's
    curve labels and the store's columns see them; but a point takes one
    design's values of them together, never a cross of two designs, and a
    design is left out on a store it does not apply to.

    Attributes:
        designs: the ``simcore.designs.Design`` values swept.
        client: the client preset asked for (``--client``): the Iceberg
            designs take it, DuckLake and Unity keep their own
            (``simcore.designs.design_fields``).
    """

    designs: tuple = ()
    client: Optional[str] = None

    def points(self, quick: bool = False) -> list[dict]:
        axes = {name: (self.quick.get(name, values) if quick else values) for name, values in self.swept.items()}
        chosen = _design_axes(self.designs)
        design_axes = {name: axes.pop(name) for name in chosen if name in axes}
        points = []
        for design in self.designs:
            own = design_fields(design, None)
            if any(own.get(name) not in values for name, values in design_axes.items()):
                continue  # a quick subset that leaves this design out
            fields = {name: value for name, value in design_fields(design, self.client).items() if name in design_axes}
            for combination in itertools.product(*axes.values()):
                point = dict(zip(axes, combination))
                provider = PROVIDERS.get(point.get("provider", self.fixed.get("provider")))
                if provider is not None and not design.applies_to(provider, writers=False):
                    continue
                points.append({**fields, **point})
        return points

    def configs(self, quick: bool = False, **overrides: Any):
        if "client" in overrides:  # the Iceberg designs take the client asked for, the others keep theirs
            return dataclasses.replace(self, client=overrides.pop("client")).configs(quick, **overrides)
        return super().configs(quick, **overrides)

    def derive(self, experiment: str, **kwargs: Any) -> "DesignGrid":
        base = super().derive(experiment, **kwargs)
        return DesignGrid(**{field.name: getattr(base, field.name) for field in dataclasses.fields(Grid)},
                          designs=self.designs, client=self.client)


GRID = DesignGrid(
    experiment="architectures",
    description="architectures: every open-loop commit design x store x tables x FA share x inter-arrival",
    swept={
        **_design_axes(OPEN_LOOP_DESIGNS),
        "provider": STORES,
        "num_tables": TABLE_COUNTS,
        "fast_append_ratio": FAST_APPEND_RATIOS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    designs=OPEN_LOOP_DESIGNS,
    # Every design (append on s3x, the others on s3 and s3x) at one and ten tables, FA only, from 20 ms: a heavier
    # load costs seconds a run, and the fastest designs' knees are for the full grid or the knee search to place.
    quick={"provider": ("s3", "s3x"), "num_tables": (1, 10), "fast_append_ratio": (1.0,),
           "inter_arrival_scale_ms": QUICK_INTER_ARRIVAL_SCALES_MS},
    # The knee search's quick curves: every design valid on S3 at ten tables, FA only.
    knee_quick={"provider": ("s3",), "num_tables": (10,), "fast_append_ratio": (1.0,)},
    view=View("designs", anchor="designs", nav="Commit designs", title="Commit designs",
              lead="The commit designs users run (docs/architectures.md), one line each: the usable-throughput "
                   "frontier of each design on each store against table count, per mix "
                   "(`commit-sweeps sweep architectures`).",
              expects="every open-loop design on s3, s3x, azure, azurex, gcp and r2",
              legend="One colour per design; append runs only on the stores with conditional appends. Hollow: a "
                     "lower bound; cross: no point above the threshold. The table ranks the designs per curve."),
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))

"""A sweep grid: fixed config fields plus the cartesian product of swept values.

Sweep scripts declare a ``Grid``; this module turns it into validated
``SimConfig`` values. Every config of a grid is built (and so validated by
simcore) before anything is scheduled, so a bad value stops the sweep at
once with the field, the value and what is allowed, instead of failing
hours later on a worker.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Optional, Sequence

from simcore import ConfigError, SimConfig
from simcore.builder import build_config


class GridError(ValueError):
    """A grid declaration or one of its points is invalid.

    ``field``, ``value`` and ``allowed`` describe the first offending value;
    ``point`` is the grid point where it was found (None for declaration errors).
    """

    def __init__(self, experiment: str, field: str, value: Any, allowed: str,
                 point: Optional[Mapping[str, Any]] = None):
        self.experiment = experiment
        self.field = field
        self.value = value
        self.allowed = allowed
        self.point = dict(point) if point is not None else None
        message = f"{experiment}: {field}: {value!r} is not allowed; expected {allowed}"
        if point:
            message += " (grid point " + ", ".join(f"{k}={v!r}" for k, v in point.items()) + ")"
        super().__init__(message)


@dataclass(frozen=True)
class Treatment:
    """What a study compares: one swept field whose values are the variants, and its baseline.

    Declared once, beside the grid; the sweep records it in the store's
    plan (``_sweep.json``), where the dashboard finds it.

    Args:
        field: the swept config field whose values are the variants.
        baseline: the value the others are compared with (the reference's
            behaviour); ``None`` for a field left unset.
        companions: fields whose values follow from ``field``'s (a retry
            policy's backoff settings): part of a variant, not a reason to
            tell two apart.
        labels: (value, text) pairs naming the values for people; a value
            without one is shown as it is.
    """

    field: str
    baseline: Any = None
    companions: tuple = ()
    labels: tuple = ()

    def record(self) -> dict:
        return {"field": self.field, "baseline": self.baseline, "companions": list(self.companions),
                "labels": [[value, text] for value, text in self.labels]}


@dataclass(frozen=True)
class Grid:
    """One experiment's grid.

    Args:
        experiment: the experiment's name; also its folder in the results store.
        swept: config field -> the values it takes; the grid is the cartesian
            product, in this order (the last field varies fastest).
        fixed: config fields that are the same at every point.
        quick: config field -> a subset of its swept values, for ``--quick``:
            a small, representative run of the same experiment. Swept fields
            not named here keep all their values.
        description: one line for ``--help``.
        compares: for a study, the swept field it compares and the baseline
            value (see ``Treatment``); None for a plain experiment.

    Example:
        >>> grid = Grid("demo", swept={"num_tables": [1, 10], "inter_arrival_scale_ms": [100, 1000]},
        ...             fixed={"provider": "s3x"}, quick={"num_tables": [10]})
        >>> len(grid.configs()), len(grid.configs(quick=True))
        (4, 2)
    """

    experiment: str
    swept: Mapping[str, Sequence[Any]]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    quick: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    description: str = ""
    compares: Optional[Treatment] = None

    def __post_init__(self) -> None:
        # Freeze the mappings so a declared grid cannot drift after import.
        object.__setattr__(self, "swept", MappingProxyType({k: tuple(v) for k, v in self.swept.items()}))
        object.__setattr__(self, "fixed", MappingProxyType(dict(self.fixed)))
        object.__setattr__(self, "quick", MappingProxyType({k: tuple(v) for k, v in self.quick.items()}))
        name = self.experiment
        if not isinstance(name, str) or not name or "/" in name or name[0] in "._":
            raise GridError(str(name), "experiment", name,
                            "a non-empty name without '/' that does not start with '.' or '_'")
        for field_name, values in self.swept.items():
            if not values:
                raise GridError(name, field_name, list(values), "at least one swept value")
            if field_name in self.fixed:
                raise GridError(name, field_name, self.fixed[field_name], "a field that is either fixed or swept, not both")
        if self.compares is not None and self.compares.field not in self.swept:
            raise GridError(name, "compares.field", self.compares.field,
                            f"one of the swept fields {list(self.swept)}")
        for field_name, values in self.quick.items():
            if field_name not in self.swept:
                raise GridError(name, f"quick.{field_name}", list(values), f"one of the swept fields {list(self.swept)}")
            if not values:
                raise GridError(name, f"quick.{field_name}", list(values), "at least one value")
            for value in values:
                if value not in self.swept[field_name]:
                    raise GridError(name, f"quick.{field_name}", value,
                                    f"one of its swept values {list(self.swept[field_name])}")

    def points(self, quick: bool = False) -> list[dict]:
        """The swept values of every grid point, in declaration order."""
        axes = {name: (self.quick.get(name, values) if quick else values) for name, values in self.swept.items()}
        return [dict(zip(axes, combination)) for combination in itertools.product(*axes.values())]

    def configs(self, quick: bool = False, **overrides: Any) -> tuple[SimConfig, ...]:
        """Every config of the grid (or of its quick subset), validated.

        Args:
            quick: only the quick subset.
            **overrides: fields set at every point (e.g. ``duration_s``),
                replacing fixed or swept values.

        Raises:
            GridError: the first point that is not a valid ``SimConfig``.
        """
        configs, seen = [], set()
        for point in self.points(quick):
            values = {**self.fixed, **point, **overrides}
            try:
                config = build_config(values)  # a point's ``client`` names a preset
            except ConfigError as error:
                raise GridError(self.experiment, error.field, error.value, error.allowed, point) from error
            except TypeError as error:  # e.g. an unhashable or non-scalar value
                raise GridError(self.experiment, "grid", point, f"scalar config values ({error})", point) from error
            if config.config_hash not in seen:  # two points that normalise to one config run once
                seen.add(config.config_hash)
                configs.append(config)
        return tuple(configs)

    def derive(self, experiment: str, *, description: str = "",
               quick: Optional[Mapping[str, Sequence[Any]]] = None, **fixed: Any) -> "Grid":
        """A copy under another name, with more (or other) fixed fields and optionally
        another quick subset; the swept values stay the same."""
        return Grid(experiment=experiment, swept=dict(self.swept), fixed={**self.fixed, **fixed},
                    quick=dict(self.quick if quick is None else quick),
                    description=description or self.description, compares=self.compares)

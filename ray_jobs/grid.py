"""A sweep grid: fixed config fields plus the cartesian product of swept values.

Sweep scripts declare a ``Grid``; this module turns it into validated
``SimConfig`` values. Every config of a grid is built (and so validated by
simcore) before anything is scheduled, so a bad value stops the sweep at
once with the field, the value and what is allowed, instead of failing
hours later on a worker.

A grid is also the whole declaration of a study: beside its points it
carries its quick subsets (the sweep's and the knee search's), what it
compares (``Treatment``) and where the dashboard shows it (``View``), so
adding a study is one file in ``sweeps/`` (``sweeps.catalog`` finds it).
Pure: no Ray, no I/O.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Optional, Sequence

from simcore import ConfigError, SimConfig
from simcore.builder import build_config

_SLUG = re.compile(r"[a-z][a-z0-9-]*")  # a view's kind and anchor: safe as an HTML id, a class and a file name


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
class View:
    """Where the dashboard shows a study: one section of the page, drawn by one kind of chart.

    The dashboard's registry (``dashboards.registry``) places the section
    among the page's views by its kind and hands this record to the kind's
    script, which draws the grid's experiment(s) from the payload; no
    script names an experiment.

    Args:
        kind: the kind of chart, e.g. ``"treatment-frontier"`` (a script
            ``dashboards/static/view-<kind>.js``; ``dashboards.registry.KINDS``
            lists them and what each draws).
        anchor: the section's id in the page (``#throttle``), also the
            prefix of its elements' ids and classes (``throttle-chart``).
            Grids that name the same anchor share one section (``writers``
            and ``writers_maintenance``).
        nav: the section's name in the page's table of contents.
        title: the section's heading (the page numbers it).
        lead: the paragraph under the heading; text in `backticks` is code.
        expects: what a complete study holds, for the note shown while only
            part of it is in the store ("unthrottled and throttled runs").
        legend: the note under the charts; ``{baseline}`` is replaced by the
            baseline variant's label.
        short_labels: (treatment value, text) pairs, for legends and column
            heads where the treatment's labels are too long.
    """

    kind: str
    anchor: str
    nav: str
    title: str
    lead: str = ""
    expects: str = ""
    legend: str = ""
    short_labels: tuple = ()

    def __post_init__(self) -> None:
        for name in ("kind", "anchor"):
            value = getattr(self, name)
            if not isinstance(value, str) or not _SLUG.fullmatch(value):
                raise GridError("view", name, value, "lower-case letters, digits and '-', starting with a letter")
        for name in ("nav", "title"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise GridError("view", name, getattr(self, name), "a non-empty text")


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
        knee_quick: config field -> a subset of its swept values: the curves
            ``commit-sweeps knee --quick`` searches (the inter-arrival scale
            is the search's, so only the curve fields matter). None: the
            knee search does not offer this experiment.
        view: where the dashboard shows the study (``View``); None for an
            experiment the page's own views cover.

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
    knee_quick: Optional[Mapping[str, Sequence[Any]]] = None
    view: Optional[View] = None

    def __post_init__(self) -> None:
        # Freeze the mappings so a declared grid cannot drift after import.
        object.__setattr__(self, "swept", MappingProxyType({k: tuple(v) for k, v in self.swept.items()}))
        object.__setattr__(self, "fixed", MappingProxyType(dict(self.fixed)))
        object.__setattr__(self, "quick", MappingProxyType({k: tuple(v) for k, v in self.quick.items()}))
        if self.knee_quick is not None:
            object.__setattr__(self, "knee_quick",
                               MappingProxyType({k: tuple(v) for k, v in self.knee_quick.items()}))
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
        self._check_subset("quick", self.quick)
        if self.knee_quick is not None:
            self._check_subset("knee_quick", self.knee_quick)
        if self.view is not None and not isinstance(self.view, View):
            raise GridError(name, "view", self.view, "a ray_jobs.grid.View or None")

    def _check_subset(self, label: str, subset: Mapping[str, Sequence[Any]]) -> None:
        """Each field of ``subset`` is swept, and each of its values one of the swept ones."""
        for field_name, values in subset.items():
            if field_name not in self.swept:
                raise GridError(self.experiment, f"{label}.{field_name}", list(values),
                                f"one of the swept fields {list(self.swept)}")
            if not values:
                raise GridError(self.experiment, f"{label}.{field_name}", list(values), "at least one value")
            for value in values:
                if value not in self.swept[field_name]:
                    raise GridError(self.experiment, f"{label}.{field_name}", value,
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
               quick: Optional[Mapping[str, Sequence[Any]]] = None,
               knee_quick: Optional[Mapping[str, Sequence[Any]]] = None, **fixed: Any) -> "Grid":
        """A copy under another name, with more (or other) fixed fields and optionally
        other quick subsets; the swept values, the treatment and the view stay the same."""
        knee = self.knee_quick if knee_quick is None else knee_quick
        return Grid(experiment=experiment, swept=dict(self.swept), fixed={**self.fixed, **fixed},
                    quick=dict(self.quick if quick is None else quick),
                    description=description or self.description, compares=self.compares,
                    knee_quick=None if knee is None else dict(knee), view=self.view)

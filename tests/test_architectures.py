"""The architectures study: every open-loop commit design on each store, its rows naming their design, and the
dashboard's "Commit designs" entry built from the store alone."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from dashboards.payload import build_payload
from dashboards.snapshot import read_store
from simcore.builder import build_config
from simcore.designs import DESIGNS, design_fields, design_of
from simcore.providers import PROVIDERS
from sweeps.architectures import GRID, INTER_ARRIVAL_SCALES_MS, OPEN_LOOP_DESIGNS, STORES, DesignGrid
from sweeps.catalog import EXPERIMENTS, KNEE_GRIDS

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "dashboards" / "static" / "payload.schema.json")
                    .read_text())


def _pairs(configs) -> Counter:
    return Counter((design_of(config.to_dict()), config.provider) for config in configs)


def test_every_open_loop_design_runs_on_each_store_it_applies_to():
    expected = {(design.name, store) for design in DESIGNS if not design.writers_only for store in STORES
                if design.applies_to(PROVIDERS[store], writers=False)}
    configs = GRID.configs()
    pairs = _pairs(configs)
    assert set(pairs) == expected
    assert ("append", "s3") not in pairs and ("append", "s3x") in pairs and ("append", "r2") not in pairs
    per_curve = len((1, 2, 5, 10, 20)) * len((1.0, 0.9)) * len(INTER_ARRIVAL_SCALES_MS)
    assert set(pairs.values()) == {per_curve} and len(configs) == len(expected) * per_curve == 8190
    assert {c.num_tables for c in configs} == {1, 2, 5, 10, 20}
    assert {c.fast_append_ratio for c in configs} == {1.0, 0.9}
    assert {c.inter_arrival_scale_ms for c in configs} == set(map(float, INTER_ARRIVAL_SCALES_MS))
    assert EXPERIMENTS["architectures"] is GRID and GRID.view.kind == "designs"


@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: d.name)
@pytest.mark.parametrize("client", [None, "iceberg-java", "delta-rs"])
def test_a_stored_config_names_its_design(design, client):
    extra = {"writers": 10, "commit_interval_s": 60.0} if design.writers_only else {"inter_arrival_scale_ms": 100}
    config = build_config({**design_fields(design, client), "provider": "s3x", "num_tables": 2, **extra})
    assert design_of(config.to_dict()) == design.name


def test_a_config_of_no_design_names_none():
    assert design_of(build_config({"catalog": "service", "provider": "s3"}).to_dict()) is None
    assert design_of(build_config({"catalog": "storage", "client": "delta-rs", "provider": "s3"}).to_dict()) is None


def test_quick_runs_every_design_on_two_stores_and_the_client_flag_keeps_the_designs_own():
    quick = GRID.configs(quick=True)
    assert {name for name, _ in _pairs(quick)} == {design.name for design in OPEN_LOOP_DESIGNS}
    assert {c.provider for c in quick} == {"s3", "s3x"} and len(quick) < 200
    # --client: the Iceberg designs take it; DuckLake and Unity keep their own clients.
    java = GRID.configs(quick=True, client="iceberg-java")
    assert _pairs(java) == _pairs(quick)
    assert {c.client for c in java if c.catalog == "ducklake"} == {"ducklake"}
    assert {c.client for c in java if c.catalog in ("storage", "rest", "append")} == {"iceberg-java"}


def test_the_knee_search_searches_each_design_on_s3_at_ten_tables():
    from ray_jobs.knee_curves import curves_from_grid

    knee = KNEE_GRIDS["architectures"]
    assert isinstance(knee, DesignGrid) and knee.swept == GRID.swept
    curves = curves_from_grid(knee, quick=True)
    assert sorted(design_of(curve.template.to_dict()) for curve in curves) == sorted(
        design.name for design in OPEN_LOOP_DESIGNS if design.name != "append")
    assert all("provider=s3 num_tables=10" in curve.label for curve in curves)
    assert isinstance(GRID.derive("other", duration_s=2000.0), DesignGrid)


def _rows(designs, providers=("s3x", "s3")):
    """Hand-made rows: each design's curve passes up to a load its design sets, so the ranking is known."""
    from store_fixtures import contract_row

    knee_ms = {"storage": 200, "append": 100, "rest": 50, "ducklake": 10}
    rows = []
    for name in designs:
        design = next(d for d in DESIGNS if d.name == name)
        for provider in providers:
            if not design.applies_to(PROVIDERS[provider], writers=False):
                continue
            for tables in (1, 10):
                for scale in (10, 50, 200, 1000):
                    config = {**design_fields(design, None), "provider": provider, "num_tables": tables,
                              "inter_arrival_scale_ms": scale}
                    success = 1.0 if scale >= knee_ms[name] else 0.5
                    for seed in (1, 2):
                        rows.append(contract_row("architectures", config, seed,
                                                 {"success_rate": success, "throughput_cps": 800.0 / scale}))
    return rows


def test_the_designs_entry_names_each_design_and_its_study(tmp_path):
    from store_fixtures import write_store_file

    write_store_file(str(tmp_path), "architectures", _rows(("storage", "append", "rest", "ducklake")))
    payload = build_payload(read_store(str(tmp_path)))
    jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
    entry = payload["designs"]["architectures"]
    assert [d["id"] for d in entry["designs"]] == ["storage", "append", "rest", "ducklake"]  # simcore.designs order
    assert entry["sweep"] == "commit-sweeps sweep architectures" and entry["ignored"] == []
    assert entry["knee_command"] == "commit-sweeps knee --experiment architectures --duration-s 3600"
    studies = {study["id"]: study for study in payload["studies"]}
    assert {studies[d["study"]]["catalog"] for d in entry["designs"]} == {"storage", "append", "rest", "ducklake"}
    curves = {(c["p"], c["t"], c["m"]): c["s"] for c in entry["curves"]}
    assert set(curves) == {(p, t, "1") for p in ("s3", "s3x") for t in (1, 10)}
    # append runs on s3x only; a catalog service's series carries its round trip.
    assert curves[("s3", 10, "1")] == {"storage": "s3", "rest": "s3@1ms", "ducklake": "s3@1ms"}
    assert curves[("s3x", 10, "1")]["append"] == "s3x"
    usable = {}
    for design in entry["designs"]:
        series = curves[("s3", 10, "1")].get(design["id"])
        (curve,) = [c for c in studies[design["study"]]["curves"] if (c["s"], c["t"]) == (series, 10)] if series else [{}]
        usable[design["id"]] = (curve.get("usable"), curve.get("usable_source"))
    assert usable == {"storage": (4.0, "grid"), "append": (None, None), "rest": (16.0, "grid"), "ducklake": (80.0, "grid")}


def test_without_architectures_rows_the_entry_is_empty_and_names_the_sweep(tmp_path):
    from store_fixtures import contract_row, write_store_file

    write_store_file(str(tmp_path), "exp4c", [contract_row("exp4c", {"inter_arrival_scale_ms": 100.0}, 1,
                                                           {"success_rate": 1.0, "throughput_cps": 2.0})])
    payload = build_payload(read_store(str(tmp_path)))
    jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert payload["designs"] == {"architectures": {
        "experiment": "architectures", "sweep": "commit-sweeps sweep architectures", "knee_command": None,
        "designs": [], "ignored": [], "curves": []}}

"""CatalogDatabase: the built-ins load and are plausible, and every bad value is refused naming its field."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import pytest

from simcore.catalog_databases import CatalogDatabase, catalog_database, catalog_database_from_json, \
    catalog_database_names, fit_catalog_database
from simcore.errors import ConfigError

GOOD = dict(name="mine", commit_median_ms=2.0, commit_sigma=0.4, commit_floor_ms=1.0, concurrency=4,
            source="commit-sweeps probe-catalog 2026-12-02")


def test_the_built_ins_are_postgresql_and_sqlite_with_plausible_figures():
    assert {"postgresql", "sqlite"} <= set(catalog_database_names())
    for name in catalog_database_names():
        database = catalog_database(name)
        assert database.name == name
        assert 0.01 < database.commit_median_ms < 1000
        assert 0 < database.commit_sigma < 5
        assert 1 <= database.concurrency <= 1024
        assert "studies/catalog_service" in database.source and "2026" in database.source
        assert database.ceiling_cps > 0


def test_an_unknown_database_names_the_field_and_the_built_ins():
    with pytest.raises(ConfigError) as refused:
        catalog_database("oracle")
    assert refused.value.field == "catalog_database"
    assert "postgresql" in str(refused.value) and "sqlite" in str(refused.value)


@pytest.mark.parametrize("field, value", [
    ("name", ""), ("name", "two\nlines"), ("name", 7),
    ("commit_median_ms", 0.0), ("commit_median_ms", -1.0), ("commit_median_ms", math.nan),
    ("commit_median_ms", math.inf), ("commit_median_ms", "2"), ("commit_median_ms", True),
    ("commit_sigma", 0.0), ("commit_sigma", math.inf),
    ("commit_floor_ms", 0.0), ("commit_floor_ms", 3.0),  # above the median
    ("concurrency", 0), ("concurrency", 1025), ("concurrency", 2.5), ("concurrency", 4.0), ("concurrency", True),
    ("source", ""), ("source", "x" * 401),
])
def test_each_bad_value_is_refused_naming_its_field(field, value):
    with pytest.raises(ConfigError) as refused:
        CatalogDatabase(**{**GOOD, field: value})
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ") and "expected" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_the_json_form_round_trips():
    database = CatalogDatabase(**GOOD)
    assert catalog_database_from_json(database.to_json()) == database
    assert json.loads(database.to_json()) == asdict(database)


@pytest.mark.parametrize("text, field", [
    (json.dumps({**GOOD, "extra": 1}), "extra"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "concurrency"}), "concurrency"),
    (json.dumps(GOOD).replace("2.0", "NaN"), "commit_median_ms"),
    (json.dumps(GOOD).replace("0.4", "Infinity"), "commit_sigma"),
    ("[1, 2]", "the JSON object"),
    ("{not json", "catalog_database"),
])
def test_a_bad_probed_file_is_refused_naming_the_field(text, field):
    with pytest.raises(ConfigError) as refused:
        catalog_database_from_json(text)
    assert refused.value.field == field


def test_the_fit_takes_median_sigma_floor_from_one_client_and_concurrency_by_littles_law():
    from statistics import NormalDist

    one_client = [3.0 * math.exp(0.25 * NormalDist().inv_cdf((i + 0.5) / 400)) for i in range(400)]
    database = fit_catalog_database("pg", one_client, {1: 330.0, 4: 1000.0, 8: 1300.0, 16: 1200.0}, "test")
    assert database.commit_median_ms == pytest.approx(3.0, rel=0.01)
    assert database.commit_sigma == pytest.approx(0.25, rel=0.02)
    assert 0 < database.commit_floor_ms < database.commit_median_ms
    assert database.concurrency == round(1300.0 * 3.0 / 1000.0)  # the most commits/s x the median


def test_too_few_samples_are_refused_naming_them():
    with pytest.raises(ConfigError) as refused:
        fit_catalog_database("pg", [1.0, 2.0, 3.0], {1: 100.0}, "test")
    assert refused.value.field == "latencies_ms"

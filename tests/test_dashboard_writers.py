"""The writers view's data: max writers per setup and interval, from a hand-made store."""

import json
from pathlib import Path

import jsonschema
import pytest

from dashboards.payload import build_payload
from dashboards.snapshot import read_store
from store_fixtures import contract_row, write_store_file


def writer_rows(experiment, interval_s, curve, **fields):
    """{writers: (success, throughput)} of one setup, seed 1."""
    base = {"provider": "s3", "catalog": "storage", "num_tables": 10, "fast_append_ratio": 1.0,
            "commit_interval_s": float(interval_s), **fields}
    return [contract_row(experiment, {**base, "writers": count}, 1,
                         {"success_rate": success, "throughput_cps": throughput, "writer_lag_p99_s": 0.5})
            for count, (success, throughput) in curve.items()]


def test_max_writers_per_interval_and_no_curve_studies_from_writers(tmp_path):
    # 60 s: 200 writers pass, 500 fail. 300 s: 1000 pass, 2000 fail. Iceberg Java at 60 s: 100 pass, 200 fail.
    rows = (writer_rows("writers", 60, {100: (1.0, 1.67), 200: (0.97, 3.3), 500: (0.80, 6.0)})
            + writer_rows("writers", 300, {500: (1.0, 1.67), 1000: (0.99, 3.3), 2000: (0.90, 5.5)})
            + writer_rows("writers", 60, {100: (0.99, 1.67), 200: (0.94, 3.1)}, client="iceberg-java"))
    write_store_file(str(tmp_path), "writers", rows)
    payload = build_payload(read_store(str(tmp_path)))
    assert payload["studies"] == []  # writer points are not inter-arrival curves
    by_setup = {(w["client"], w["interval_s"]): w for w in payload["writers"]}
    assert set(by_setup) == {("reference", 60), ("reference", 300), ("iceberg-java", 60)}
    sixty = by_setup[("reference", 60)]
    assert (sixty["max_writers"], sixty["failing_writers"], sixty["status"]) == (200, 500, "found")
    assert (sixty["s"], sixty["t"], sixty["m"], sixty["maintenance_jobs"]) == ("s3", 10, "1", 0)
    assert sixty["points"][1] == [200, pytest.approx(0.97), pytest.approx(3.3), pytest.approx(0.5), None]
    assert by_setup[("reference", 300)]["max_writers"] == 1000
    assert by_setup[("iceberg-java", 60)]["max_writers"] == 100
    # The page contract declares the section (and the wasted-work metrics).
    schema = json.loads((Path(__file__).resolve().parents[1] / "dashboards/static/payload.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(payload)), schema, cls=jsonschema.Draft202012Validator)

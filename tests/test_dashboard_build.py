"""Building the site: studies and gaps, the published comparison, and the CLI's messages."""

import json
import os
import re
import subprocess
import sys
from urllib.parse import quote

import pytest

from dashboards.payload import build_payload
from dashboards.points import group_points
from dashboards.published import parse_published
from dashboards.site import SITE_FILES, STATIC_FILES, build_site
from dashboards.snapshot import read_store
from dashboards.studies import group_studies
from store_fixtures import contract_row, write_store_file
from test_store import (URI_SECRET, bare_aws_env, credentialed_uri, s3_endpoint,  # noqa: F401 (fixtures)
                        without_aws_environment)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def row(experiment="exp4c", seed=1, metrics=None, **config_fields):
    config = {"provider": "s3", "num_tables": 1, "inter_arrival_scale_ms": 100.0, **config_fields}
    return contract_row(experiment, config, seed, metrics or {"success_rate": 1.0, "throughput_cps": 1.0})


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "dashboards", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": ROOT, **(env or {})}, timeout=120)


def load_data_script(site_dir):
    text = (site_dir / "data.js").read_text()
    prefix = "window.DASHBOARD_DATA = "
    assert text.startswith(prefix) and text.rstrip().endswith(";")
    return json.loads(text[len(prefix):].rstrip().rstrip(";"))


def test_a_partial_sweep_lists_exactly_what_is_missing(tmp_path):
    rows = [row(provider=provider, num_tables=tables, inter_arrival_scale_ms=scale)
            for provider in ("s3x", "s3") for tables in (1, 10) for scale in (50.0, 100.0, 500.0)
            if not (provider == "s3" and tables == 10 and scale < 500)]
    write_store_file(str(tmp_path), "exp4c", rows)
    (study,) = group_studies(group_points(read_store(str(tmp_path)).rows))
    assert study.series[0].id == "s3" and len(study.series) == 2
    assert study.tables == (1, 10) and study.scales == (50.0, 100.0, 500.0)
    assert sorted(study.missing) == [("s3", 10, "1", 50.0), ("s3", 10, "1", 100.0)]
    payload = build_payload(read_store(str(tmp_path)))
    assert any("2 of 12 grid points are missing" in warning for warning in payload["warnings"])


def test_an_experiment_mixing_durations_becomes_separate_studies(tmp_path):
    rows = [row(duration_s=3600.0, num_tables=tables) for tables in (1, 2, 5)] + [row(duration_s=1900.0)]
    write_store_file(str(tmp_path), "exp4c", rows)
    studies = group_studies(group_points(read_store(str(tmp_path)).rows))
    assert [(s.id, s.label, len(s.points)) for s in studies] == [
        ("exp4c", "exp4c (duration_s=3600)", 3), ("exp4c~2", "exp4c (duration_s=1900)", 1)]


def test_service_catalog_series_are_cas_latencies(tmp_path):
    rows = [row("exp4a", catalog="service", catalog_latency_ms=latency) for latency in (1.0, 10.0, 120.0)]
    write_store_file(str(tmp_path), "exp4a", rows)
    (study,) = group_studies(group_points(read_store(str(tmp_path)).rows))
    assert [(s.id, s.label) for s in study.series] == [
        ("s3@1ms", "CAS 1 ms"), ("s3@10ms", "CAS 10 ms"), ("s3@120ms", "CAS 120 ms")]


def test_published_point_figures_match_the_same_grid_point(tmp_path):
    metrics = {"success_rate": 0.2, "throughput_cps": 3.0, "fa_success_rate": 0.187,
               "fa_commit_latency_mean_ms": 1089.0}
    rows = [row("exp4a", seed=seed, metrics=metrics, catalog="service", catalog_latency_ms=10.0,
                inter_arrival_scale_ms=20.0, protocol="published") for seed in (1, 2)]
    write_store_file(str(tmp_path), "exp4a", rows)
    published = {(entry["metric"], entry["s"], entry["t"], entry["x"]): entry
                 for entry in build_payload(read_store(str(tmp_path)))["published"] if entry["experiment"] == "exp4a"}
    success = published[("fa_success_rate", "s3@10ms", 1, 20)]
    assert success["published"] == 18.7 and success["simulated"] == pytest.approx(18.7)
    assert success["n_seeds"] == 2 and success["status"] == "ok"
    assert published[("fa_mean_latency", "s3@10ms", 1, 20)]["simulated"] == pytest.approx(1089.0)
    assert published[("fa_success_rate", "s3@10ms", 50, 20)]["status"] == "not in store"
    assert published[("fa_success_rate", "s3@50ms", 1, 20)]["status"] == "not in store"


def test_zipf_figures_look_in_the_zipf_experiment():
    figures = parse_published("experiment,provider,catalog_latency_ms,table_dist,num_tables,fast_append_ratio,"
                              "inter_arrival_scale_ms,metric,value,unit\n"
                              "exp4a,s3,50,zipf1.5,50,1.0,20,fa_success_rate,43.4,pct\n")
    assert figures[0].table_distribution == "zipf" and figures[0].zipf_alpha == 1.5


def test_a_malformed_published_line_names_its_line():
    with pytest.raises(ValueError, match="line 2"):
        parse_published("experiment,provider\nexp4c,s3\n")


def test_build_writes_a_self_contained_site(tmp_path):
    store = tmp_path / "store"
    write_store_file(str(store), "exp4c", [row(provider=p) for p in ("s3", "gcp")])
    result = run_cli("build", "--store", str(store), "--out", str(tmp_path / "site"))
    assert result.returncode == 0, result.stderr
    assert "2 rows in 1 study (exp4c)" in result.stdout
    assert sorted(os.listdir(tmp_path / "site")) == sorted(SITE_FILES)
    data = load_data_script(tmp_path / "site")
    assert [s["id"] for s in data["studies"]] == ["exp4c"]
    for name in STATIC_FILES:
        text = (tmp_path / "site" / name).read_text()
        # No network at page-load time: nothing but the SVG namespace names a URL.
        assert re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text.replace("http://www.w3.org/2000/svg", "")) == []
        assert "@import" not in text


def test_build_defaults_to_sweeps_store(tmp_path):
    write_store_file(str(tmp_path / "store"), "exp4c", [row()])
    result = run_cli("build", "--out", str(tmp_path / "site"), env={"SWEEPS_STORE": str(tmp_path / "store")})
    assert result.returncode == 0, result.stderr
    assert load_data_script(tmp_path / "site")["store"]["uri"] == str(tmp_path / "store")


def test_an_empty_store_builds_a_page_that_says_so(tmp_path):
    (tmp_path / "store").mkdir()
    result = run_cli("build", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "site"))
    assert result.returncode == 0
    assert "holds no results yet" in result.stderr
    data = load_data_script(tmp_path / "site")
    assert data["studies"] == [] and data["store"]["rows"] == 0


def test_an_unreadable_store_is_one_clear_line_not_a_traceback(tmp_path):
    result = run_cli("build", "--store", str(tmp_path / "missing"), "--out", str(tmp_path / "site"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip() == f"error: cannot read the results store {str(tmp_path / 'missing')!r}: " \
                                    f"no such directory: {tmp_path / 'missing'}"
    assert not (tmp_path / "site").exists()


def test_build_site_returns_the_payload_it_wrote(tmp_path):
    write_store_file(str(tmp_path / "store"), "exp4c", [row()])
    site = build_site(str(tmp_path / "store"), str(tmp_path / "site"))
    assert load_data_script(tmp_path / "site") == json.loads(json.dumps(site.payload))
    assert site.filters["experiment"] == frozenset({"exp4c"})
    assert site.filters["tables"] == frozenset({"1"})


def test_an_unwritable_output_is_one_clear_line(tmp_path):
    write_store_file(str(tmp_path / "store"), "exp4c", [row()])
    (tmp_path / "a-file").write_text("not a directory")
    result = run_cli("build", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "a-file"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stderr.startswith("error: --out: cannot write the site")


# -- a store URI with credentials: never on the page, never printed ----------------------------------------

def test_a_store_uri_s_credentials_reach_neither_the_page_nor_the_terminal(s3_endpoint, bare_aws_env, tmp_path,
                                                                          request):
    import http.client
    import threading

    from dashboards.server import make_server
    from simcore.redaction import redact

    uri = credentialed_uri(s3_endpoint, request.node.name)
    write_store_file(uri, "exp4c", [row(provider="s3")])
    built = subprocess.run([sys.executable, "-m", "commit_sweeps", "dashboard", "build", "--store", uri, "--out",
                            str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                           env=without_aws_environment(), timeout=120)
    assert built.returncode == 0, built.stderr
    assert f"Built the dashboard of {redact(uri)}: 1 rows" in built.stdout
    assert load_data_script(tmp_path / "site")["store"]["uri"] == redact(uri)
    served = make_server(uri, port=0, refresh_s=0, quiet=True, log=lambda message: None)
    thread = threading.Thread(target=served.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", served.server_address[1], timeout=10)
        connection.request("GET", "/data.js")
        page = connection.getresponse().read().decode()
        connection.close()
    finally:
        served.shutdown()
        served.server_close()
    assert json.dumps(redact(uri)) in page
    site = "".join(path.read_text() for path in (tmp_path / "site").iterdir())
    for shown in (built.stdout + built.stderr, site, page):
        for secret in (URI_SECRET, quote(URI_SECRET, safe=""), "testing:"):
            assert secret not in shown


def test_dashboard_serve_prints_the_store_without_its_credentials(s3_endpoint, request):
    uri = credentialed_uri(s3_endpoint, request.node.name)
    process = subprocess.Popen([sys.executable, "-m", "commit_sweeps", "dashboard", "serve", "--store", uri, "--port",
                                "0", "--quiet"], cwd=ROOT, env=without_aws_environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=20)
    assert line.startswith("Serving the dashboard of s3://***@results-bucket/"), line + errors
    assert URI_SECRET not in line + errors and quote(URI_SECRET, safe="") not in line + errors

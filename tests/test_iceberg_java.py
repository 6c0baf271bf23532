"""The Iceberg Java writer harness against real catalogs: a JdbcCatalog on SQLite with a local warehouse, and the
harness's REST server (Iceberg's CatalogHandlers) over one, two writers for a few seconds each.

Skipped unless ``java`` and ``mvn`` are on PATH. The harness is built by scripts/build-iceberg-writers.sh and
cached per pom and sources (a cold build, empty ~/.m2, took about 20 s here; later runs reuse the jar)."""

import pytest

from studies.real_clients import iceberg_java

if not iceberg_java.java_available():
    pytest.skip("java and mvn are not on PATH (apt-get install openjdk-17-jdk maven)", allow_module_level=True)


@pytest.fixture(scope="module")
def classpath():
    return iceberg_java.harness_classpath()


def _jdbc(tmp_path):
    return iceberg_java.Catalog("jdbc", f"jdbc:sqlite:{tmp_path / 'catalog.db'}", str(tmp_path / "warehouse"))


def _check(classpath, catalog, attempts, expected):
    assert len(attempts) == expected
    returned = [a for a in attempts if not a.raised]
    assert returned and all(a.retries >= 0 for a in returned)  # each from its commit's CommitReport
    landed = sum(iceberg_java.snapshot_counts(classpath, catalog, ["t0"]).values())
    assert landed >= len(returned)  # every returned FastAppend is a snapshot of the table


def test_two_writer_threads_on_a_sqlite_jdbc_catalog_commit_and_report_attempts(classpath, tmp_path):
    catalog = _jdbc(tmp_path)
    iceberg_java.create_tables(classpath, catalog, ["t0"])
    attempts, cpu_s, _, _ = iceberg_java.run_writers(classpath, catalog, ["t0"], [0.05, 0.1], 0.5, 3.0, "threads")
    _check(classpath, catalog, attempts, 12)
    assert cpu_s > 0


def test_two_writer_jvms_on_the_rest_server_commit_through_catalog_handlers(classpath, tmp_path):
    with iceberg_java.RestServer(classpath, _jdbc(tmp_path), tmp_path / "server.log") as uri:
        catalog = iceberg_java.Catalog("rest", uri)
        iceberg_java.create_tables(classpath, catalog, ["t0"])
        attempts, _, _, _ = iceberg_java.run_writers(classpath, catalog, ["t0"], [0.05, 0.1], 0.5, 3.0, "processes")
        _check(classpath, catalog, attempts, 12)


def test_the_jdbc_catalogs_conditional_update_is_timed_alone(classpath, tmp_path):
    assert 0 < iceberg_java.time_jdbc_cas(classpath, f"jdbc:sqlite:{tmp_path / 'cas.db'}", rounds=20) < 1000


def test_a_harness_command_that_fails_is_one_line(classpath):
    from studies.real_clients.errors import SetupError

    with pytest.raises(SetupError, match="iceberg-java: create exited 2: .*--catalog: 'nosuch' is not allowed"):
        iceberg_java.run_command(classpath, "create", "--catalog", "nosuch", "--uri", "x", "--namespace", "n",
                                 "--tables", "t")

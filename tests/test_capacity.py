"""The capacity command: its search on synthetic curves, its answer's keys, its input errors."""

import json
from concurrent.futures import Future

import pytest

from commit_sweeps import capacity_command
from ray_jobs import capacity
from ray_jobs.search import SeedRun
from simcore import SimConfig
from simcore.bisection import SearchRange
from simcore.metrics import REQUEST_KINDS


def _synthetic_submit(knee_rate_cps: float, calls: list):
    """A curve whose success falls below 95% above knee_rate_cps offered commits/s (writers: per interval)."""

    def submit(config: SimConfig, seed: int) -> Future:
        offered = (config.writers / config.commit_interval_s if config.writers
                   else 1000.0 / config.inter_arrival_scale_ms)
        calls.append((offered, seed))
        row = {"seed": seed, "throughput_cps": offered, "success_rate": 1.0 if offered <= knee_rate_cps else 0.5,
               "vo_success_rate": float("nan")}
        future = Future()
        future.set_result(SeedRun(row))
        return future

    return submit


def test_search_brackets_a_synthetic_knee_to_the_tolerance_with_every_seed_near_it():
    calls = []
    search, step = capacity.capacity_search(SimConfig(), None, SearchRange(20, 5000, 0.02),
                                            _synthetic_submit(9.0, calls), seeds=[1, 2, 3], slots=2)
    assert step.status == "found" and step.within_tolerance
    knee = step.knee.throughput_cps
    assert 9.0 / 1.02 <= knee <= 9.0
    assert step.failing.throughput_cps > 9.0
    # Screening probes ran one seed; only probes within the screened bracket ran all three.
    far = {offered for offered, seed in calls if abs(offered / 9.0 - 1) > 0.25}
    assert far and all(seed == 1 for offered, seed in calls if offered in far)
    result = capacity.answer(search, step, simulations=len(calls), wall_s=1.0)
    assert result["usable_throughput_cps"] == pytest.approx(knee)
    assert result["bracket"][0] == pytest.approx(knee) and result["bracket"][1] > knee


def test_writers_search_answers_a_whole_number_of_writers():
    calls = []
    base = SimConfig(writers=1, commit_interval_s=60.0)
    search, step = capacity.capacity_search(base, 60.0, SearchRange(60_000 / 20_000, 60_000, 0.02),
                                            _synthetic_submit(5.0, calls), seeds=[1, 2], slots=2)
    result = capacity.answer(search, step, simulations=len(calls), wall_s=1.0)
    # 5 commits/s at one commit a minute each: 300 writers pass, 301 fail.
    assert 294 <= result["max_writers"] <= 300 and result["bracket"][1] > result["max_writers"]
    assert len({(o, s) for o, s in calls}) == len(calls)  # no (writers, seed) simulated twice


def test_capacity_json_answer_on_a_real_simulation(capsys):
    code = capacity_command.main(["--provider", "s3", "--num-tables", "2", "--fast-append-ratio", "0.9",
                                  "--client", "iceberg-java", "--seeds", "2", "--tolerance", "0.1",
                                  "--duration-s", "1900", "--workers", "1", "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("usable_throughput_cps", "bracket", "success_rate", "commit_latency_p50_ms",
                "commit_latency_p99_ms", "requests_per_commit", "simulations", "wall_s"):
        assert key in result
    assert result["usable_throughput_cps"] > 0 and result["success_rate"] > 0.95
    assert result["success_metric"] == "vo_success_rate"  # the mix has VO: the usable rule reads VO success
    assert set(result["requests_per_commit"]) == set(REQUEST_KINDS)
    assert result["requests_per_commit"]["cas"] >= 1.0 and result["simulations"] >= 4


@pytest.mark.parametrize("argv, field", [
    (["--client", "iceberg-rust"], "client"),
    (["--seeds", "0"], "seeds"),
    (["--tolerance", "5"], "tolerance"),
    (["--maintenance-jobs", "2"], "maintenance_jobs"),
    (["--latency-model", "mystery"], "latency_model"),
    (["--provider", "s4"], "provider"),
])
def test_bad_input_exits_2_naming_the_field(argv, field, capsys):
    code = capacity_command.main(["--provider", "s3", "--num-tables", "10", "--fast-append-ratio", "0.9", *argv])
    assert code == 2
    assert capsys.readouterr().err.startswith(f"error: {field}")


def test_capacity_is_a_commit_sweeps_subcommand(capsys):
    from commit_sweeps.cli import main

    code = main(["capacity", "--provider", "s3", "--num-tables", "1", "--fast-append-ratio", "1.0", "--seeds", "1",
                 "--tolerance", "0.2", "--duration-s", "1900", "--workers", "1", "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["usable_throughput_cps"] > 0 and result["seeds"] == [1]


@pytest.mark.slow
def test_capacity_on_ray_gives_the_local_answer(capsys, monkeypatch):
    # "local" starts an embedded Ray: the same rounds, the same simulations, hence the same answer.
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    argv = ["--provider", "s3", "--num-tables", "1", "--fast-append-ratio", "1.0", "--seeds", "2", "--tolerance", "0.2",
            "--duration-s", "1900", "--workers", "2", "--json"]
    assert capacity_command.main(argv) == 0
    local = json.loads(capsys.readouterr().out)
    assert capacity_command.main(argv + ["--ray-address", "local"]) == 0
    on_ray = json.loads(capsys.readouterr().out)
    import os

    assert "RAY_ADDRESS" not in os.environ
    for key in ("usable_throughput_cps", "bracket", "success_rate", "requests_per_commit", "simulations"):
        assert on_ray[key] == local[key], key


# -- a named Ray cluster: refused in one line unless it answers ---------------------------------------------

CAPACITY = ["--provider", "s3", "--num-tables", "10", "--fast-append-ratio", "0.9", "--seeds", "1", "--workers", "1"]


def _capacity_on(address: str, capsys) -> tuple[int, list[str], float]:
    import time

    started = time.monotonic()
    code = capacity_command.main([*CAPACITY, "--ray-address", address])
    return code, capsys.readouterr().err.strip().splitlines(), time.monotonic() - started


@pytest.mark.parametrize("address", ["garbage", "1e308", "http://head:8265", "head:99999", "", "ray://"])
def test_what_is_no_ray_address_is_refused_in_one_line(address, capsys):
    code, err, _ = _capacity_on(address, capsys)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: ray_address: {address!r} is not allowed; expected a Ray cluster's address")


def test_an_address_where_nothing_listens_is_refused_at_once(capsys):
    import socket

    with socket.socket() as closed:  # a port nothing listens on: bound, never listened
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        code, err, seconds = _capacity_on(f"127.0.0.1:{port}", capsys)
    assert code == 2 and len(err) == 1 and seconds < 10, (err, seconds)
    assert f"expected a Ray cluster that answers there within 10 s (127.0.0.1:{port}: Connection refused)" in err[0]


@pytest.mark.parametrize("answer", [None, b"HTTP/1.1 400 Bad Request\r\n\r\n"], ids=["silent", "not-grpc"])
def test_a_server_that_does_not_answer_as_ray_is_refused_within_the_timeout(answer, capsys, monkeypatch):
    import socket
    import threading

    from ray_jobs import connect

    monkeypatch.setattr(connect, "RAY_CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        accepted = []

        def serve():
            connection, _ = server.accept()
            accepted.append(connection)
            if answer is not None:
                connection.recv(100)
                connection.sendall(answer)

        threading.Thread(target=serve, daemon=True).start()
        code, err, seconds = _capacity_on(f"127.0.0.1:{port}", capsys)
        for connection in accepted:
            connection.close()
    assert code == 2 and len(err) == 1 and seconds < 5, (err, seconds)
    why = "no answer from" if answer is None else "does not answer as a Ray cluster's GCS"
    assert "expected a Ray cluster that answers there within 1 s (" in err[0] and why in err[0], err

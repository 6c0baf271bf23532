"""The capacity command: its search on synthetic curves, its answer's keys, its input errors."""

import argparse
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
    assert result["load"] == "open_loop" and result["offered_cps"] >= result["usable_throughput_cps"] * 0.9
    assert result["accuracy"]["kind"] == "reference_profile" and result["accuracy"]["client"]["kind"] == "client_preset"
    text = capacity_command.render(SimConfig(provider="s3", num_tables=2, fast_append_ratio=0.9, client="iceberg-java"),
                                   result)
    assert "None" not in text and "how far to trust it: reference profile" in text
    assert f"p99 {capacity_command._ms(result['commit_latency_p99_ms'])}" in text.splitlines()[1]


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


# -- the printed answer and its --json: every figure says what it is -----------------------------------------

def _answer(knee_rate_cps: float, base: SimConfig = SimConfig(), interval_s=None, search_range=None,
            through=None):
    """The answer of a synthetic search: success falls below 95% above knee_rate_cps offered commits/s;
    ``through(offered)``: the commits/s that get through (default: all that are offered)."""
    calls = []
    search_range = search_range or (SearchRange(20, 5000, 0.02) if interval_s is None
                                    else SearchRange(interval_s * 1000 / 20_000, interval_s * 1000, 0.02))
    submit = _synthetic_submit(knee_rate_cps, calls)

    def offered_through(config, seed):
        future = submit(config, seed)
        if through is not None:
            row = dict(future.result().row)
            row["throughput_cps"] = through(row["throughput_cps"])
            future = Future()
            future.set_result(SeedRun(row))
        return future

    search, step = capacity.capacity_search(base, interval_s, search_range, offered_through, seeds=[1], slots=2)
    result = capacity.answer(search, step, simulations=len(calls), wall_s=1.0, search_range=search_range)
    result["accuracy"] = capacity_command.accuracy(base)
    return result


def test_an_answer_past_the_search_range_says_it_is_a_lower_bound_and_prints_no_none():
    result = _answer(1000.0)  # passes at the heaviest load searched, 20 ms
    assert result["status"] == "above_search_range" and result["lower_bound"] and result["next_load"] is None
    text = capacity_command.render(SimConfig(), result)
    assert "None" not in text
    headline = text.splitlines()[1]
    assert headline.startswith(f"usable throughput: at least {result['usable_throughput_cps']:.3f} commits/s: "
                               f"the search's range ends here (the heaviest load searched, inter-arrival 20 ms")
    assert "lower --min-scale-ms" in headline
    assert "next load tried" not in text
    assert json.loads(json.dumps(result))["bracket"][1] is None  # JSON keeps null; the text never shows it


@pytest.mark.parametrize("interval_s", [None, 60.0])
def test_no_usable_load_and_a_found_one_print_no_python(interval_s):
    base = SimConfig(writers=1, commit_interval_s=interval_s) if interval_s else SimConfig()
    for knee in (0.0001, 5.0):
        text = capacity_command.render(base, _answer(knee, base, interval_s))
        assert "None" not in text and "nan" not in text, text
    nothing = capacity_command.render(base, _answer(0.0001, base, interval_s)).splitlines()[1]
    assert "none usable" in nothing and "fails" in nothing


def test_the_headline_shows_the_commit_latency_at_the_answer():
    result = _answer(5.0)
    result.update(commit_latency_p50_ms=750.0, commit_latency_p99_ms=87_300.0)
    headline = capacity_command.render(SimConfig(), result).splitlines()[1]
    assert headline == (f"usable throughput: {result['usable_throughput_cps']:.3f} commits/s, "
                        f"commit latency p50 750 ms, p99 87 s")


def test_a_failing_load_that_commits_less_says_why_with_offered_and_through():
    # Past 5 c/s offered the store gets only 4.5 c/s through (a throttled object: gcp's measured profile).
    base = SimConfig(provider="gcp", latency_model="measured")
    result = _answer(5.0, base, through=lambda offered: offered if offered <= 5.0 else 4.5)
    failing = result["next_load"]
    assert failing["offered_cps"] > result["offered_cps"]  # heavier offered ...
    assert failing["throughput_cps"] < result["usable_throughput_cps"]  # ... yet less through
    line = next(l for l in capacity_command.render(base, result).splitlines() if l.startswith("next load tried"))
    assert f"{failing['offered_cps']:.2f} c/s offered, {failing['throughput_cps']:.3f} c/s through" in line
    assert "a heavier load, yet fewer commits through" in line and "write throttle" in line


def test_the_open_loop_and_writers_answers_say_which_load_each_is():
    open_loop = capacity_command.render(SimConfig(), _answer(5.0))
    assert "load: open-loop arrivals" in open_loop and "whether or not earlier ones have committed" in open_loop
    base = SimConfig(writers=1, commit_interval_s=60.0)
    writers = capacity_command.render(base, _answer(5.0, base, 60.0))
    assert "closed-loop writers" in writers and "waits for that commit before its next" in writers
    headline = writers.splitlines()[1]
    assert headline.startswith("max writers at one commit every 60 s: ") and " fail), commit latency p50" in headline


def test_the_search_line_says_what_its_bracket_means():
    text = capacity_command.render(SimConfig(), _answer(5.0))
    line = next(l for l in text.splitlines() if l.startswith("search:"))
    assert "in rate" not in line and "bracketed" not in line
    assert line.startswith("search: found; the failing load offers ") and "(asked: within 2%)" in line


def test_capacity_takes_the_documented_object_write_throttle():
    parser = capacity_command.OneLineParser()
    capacity_command.configure(parser)
    args = parser.parse_args(["--provider", "gcp", "--num-tables", "10", "--fast-append-ratio", "0.9",
                              "--throttle-object-writes"])
    base = capacity_command._base_config(args)
    assert base.cas_throttle_per_s == 1.0  # GCS's documented 1 write/s
    assert "catalog object throttled to 1 writes/s" in capacity_command.render(base, _answer(5.0, base))
    args = parser.parse_args(["--provider", "s3", "--num-tables", "10", "--fast-append-ratio", "0.9",
                              "--throttle-object-writes"])
    assert capacity_command._base_config(args).cas_throttle_per_s is None  # S3 documents no such limit


def test_a_writers_answer_beyond_the_fitted_counts_says_it_extrapolates():
    from dataclasses import replace

    from simcore.profiles import canonical_json
    from simcore.providers import PROVIDERS

    profile = PROVIDERS["s3"].with_conditional("cas", replace(PROVIDERS["s3"].cas, fitted_clients=(1, 2, 3, 4)))
    base = SimConfig(provider="s3", provider_profile=canonical_json(profile), writers=1, commit_interval_s=60.0)
    note = capacity.extrapolation(base, {"max_writers": 110, "throughput_cps": 1.8, "commit_latency_p50_ms": 5000})
    assert note.startswith("this profile (s3 cas) was fitted on 1-4 clients (1, 2, 3, 4)")
    assert "so 110 writers is an extrapolation" in note
    assert capacity.extrapolation(base, {"max_writers": 3, "throughput_cps": 0.05,
                                         "commit_latency_p50_ms": 300}) is None  # 0.015 at once: one client's case
    text = "\n".join(capacity_command.accuracy_lines(capacity_command.accuracy(base, note)))
    assert "profile file:" in text and "so 110 writers is an extrapolation" in text


# -- how far to trust an answer: docs/accuracy.md's figures, per kind -----------------------------------------

def _accuracy_page():
    from pathlib import Path

    return (Path(__file__).resolve().parents[1] / "docs" / "accuracy.md").read_text()


def _anchors(markdown: str) -> set[str]:
    import re

    return {re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in markdown.splitlines() if line.startswith("#")}


@pytest.mark.parametrize("fields, kind, page", [
    ({"provider": "s3"}, "reference_profile", "#reference-profiles"),
    ({"provider": "gcp", "latency_model": "measured"}, "measured_profile", "#measured-profiles"),
    ({"provider_file": "simcore/measured/s3.toml"}, "profile_file", "#your-probed-store"),
])
def test_every_answer_says_how_far_to_trust_it_from_docs_accuracy(fields, kind, page):
    import re
    from pathlib import Path

    from commit_sweeps.accuracy import accuracy
    from simcore.builder import config_from_flags
    from types import SimpleNamespace

    flags = {"provider": None, "latency_model": "reference", "provider_file": None, "client": "iceberg-java"}
    flags.update({k: (str(Path(__file__).resolve().parents[1] / v) if k == "provider_file" else v)
                  for k, v in fields.items()})
    args = SimpleNamespace(**flags)
    result = accuracy(config_from_flags(args, num_tables=10, fast_append_ratio=0.9))
    assert result["kind"] == kind and result["page"] == f"docs/accuracy.md{page}"
    assert result["client"]["page"] == "docs/accuracy.md#client-presets"
    page_text = _accuracy_page()
    assert {result["page"].split("#")[1], result["client"]["page"].split("#")[1]} <= _anchors(page_text)
    for statement in (result["statement"], result["client"]["statement"]):
        for figure in re.findall(r"[+-]?\d+(?:\.\d+)?%?", statement):
            assert figure in page_text, (figure, statement)  # every figure quoted is on the page


def test_every_client_preset_and_store_kind_has_a_statement_with_its_figures_on_the_page():
    import re

    from commit_sweeps.accuracy import _CLIENTS, _PROFILES, client_trust
    from simcore.clients import client_names

    page_text = _accuracy_page()
    for name in client_names():
        trust = client_trust(SimConfig(client=name))
        assert (trust is None) == (name == "reference")
    for statement in [*_CLIENTS.values(), *(t.statement for t in _PROFILES.values())]:
        for figure in re.findall(r"[+-]?\d+(?:\.\d+)?%?", statement):
            assert figure in page_text, (figure, statement)
    assert {t.page.split("#")[1] for t in _PROFILES.values()} <= _anchors(page_text)

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


REQUIRED = ["--provider", "s3", "--num-tables", "1", "--fast-append-ratio", "1"]


def test_writers_search_range_defaults_to_the_most_writers_the_interval_allows():
    parser = argparse.ArgumentParser()
    capacity_command.configure(parser)
    short = parser.parse_args([*REQUIRED, "--writers-at-interval-s", "1"])
    assert capacity_command._search_range(short).min_scale_ms == pytest.approx(1.0)  # 1,000 writers, 1 ms apart
    assert short.max_writers == 1000
    long = parser.parse_args([*REQUIRED, "--writers-at-interval-s", "60"])
    assert capacity_command._search_range(long).min_scale_ms == pytest.approx(60_000 / capacity_command.DEFAULT_MAX_WRITERS)


def test_too_many_writers_for_the_interval_is_one_line_naming_the_flag(capsys):
    code = capacity_command.main([*REQUIRED, "--writers-at-interval-s", "1", "--max-writers", "5000"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "max_writers" in err[0] and "5000" in err[0] and "<= 1000" in err[0]

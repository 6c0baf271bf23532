"""The kernel compiles into two variants, the plain loop and the general one, and both give the draws a loop
compiled for exactly the parts a config uses would give; a command says so while one compiles."""

from __future__ import annotations

import io
import itertools
import time

import pytest

import simcore.engine as engine
from commit_sweeps import kernel_compile
from simcore import simulate
from simcore.builder import build_config
from simcore.simulate import prepare_kernel

CLIENTS = ("reference", "iceberg-java", "pyiceberg", "iceberg-go", "delta-rs", "ducklake")


def test_every_preset_profile_and_protocol_takes_one_of_two_variants():
    seen = set()
    for client, provider, protocol, model in itertools.product(CLIENTS, ("s3", "s3x", "azure", "azurex", "gcp"),
                                                               ("corrected", "published"), ("reference", "measured")):
        config = build_config(dict(provider=provider, client=client, protocol=protocol, latency_model=model,
                                   num_tables=10, fast_append_ratio=0.9))
        features = engine.kernel_features(engine.protocol_parameters(config), False)
        variant = engine.kernel_variant(config)
        seen.add(variant)
        if variant == "plain":
            assert features == (None,) * len(features)
            assert not any(engine.kernel_parts(engine.protocol_parameters(config), False))
        else:
            assert all(isinstance(flag, bool) for flag in features) and any(features)
    assert seen == set(engine.KERNEL_VARIANTS)


def test_a_writers_config_takes_the_general_variant():
    config = build_config(dict(provider="s3", protocol="published", writers=10, commit_interval_s=30))
    assert engine.kernel_variant(config) == "general"


@pytest.mark.parametrize("fields", [dict(provider="s3", num_tables=5, fast_append_ratio=0.5),
                                    dict(provider="gcp", num_tables=2, fast_append_ratio=1.0)])
def test_the_general_loop_with_every_part_off_draws_what_the_plain_loop_draws(monkeypatch, fields):
    config = build_config(dict(protocol="published", duration_s=1801, inter_arrival_scale_ms=300, **fields))
    assert engine.kernel_variant(config) == "plain"
    plain = simulate(config, seeds=[1, 2])
    monkeypatch.setattr(engine, "kernel_features", lambda params, chains: (False,) * len(engine.kernel_parts(params, chains)))
    general = simulate(config, seeds=[1, 2])
    assert repr(general) == repr(plain)


def test_a_prepared_variant_is_the_one_a_run_takes():
    prepare_kernel("general")
    compiled = set(engine._event_loop.signatures)
    config = build_config(dict(provider="azure", client="iceberg-java", latency_model="measured", num_tables=3,
                               inter_arrival_scale_ms=2000))
    simulate(config, seeds=[3])
    assert set(engine._event_loop.signatures) == compiled  # nothing compiled for the real run


def test_an_unknown_variant_is_refused_in_one_line():
    with pytest.raises(Exception, match="variant: 'fast' is not allowed"):
        prepare_kernel("fast")


def test_a_long_compile_is_announced_and_ticks_and_a_fast_load_says_nothing(monkeypatch):
    monkeypatch.setattr(kernel_compile, "NOTICE_AFTER_S", 0.05)
    monkeypatch.setattr(kernel_compile, "TICK_S", 0.05)
    monkeypatch.setattr(kernel_compile, "prepare_kernel", lambda variant: time.sleep(0.3))
    out = io.StringIO()
    kernel_compile.prepare_kernels([build_config(dict(provider="s3"))], stream=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("compiling the simulator's general kernel: once per install")
    assert any(line.strip().startswith("still compiling the general kernel:") for line in lines)
    assert lines[-1].startswith("compiled the general kernel in")
    monkeypatch.setattr(kernel_compile, "prepare_kernel", lambda variant: None)
    quiet = io.StringIO()
    kernel_compile.prepare_kernels([build_config(dict(provider="s3", protocol="published"))], stream=quiet)
    assert quiet.getvalue() == ""

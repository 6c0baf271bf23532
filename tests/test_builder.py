"""One config builder (simcore/builder.py): the preset, the profile and the values, in one order, once."""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from simcore import ConfigError, SimConfig
from simcore import clients
from simcore.builder import RETRY_WAIT_FIELDS, build_config, config_from_flags, profile_fields
from simcore.clients import client_fields, client_names
from simcore.profiles import canonical_json, dump_profile, measured_profile
from simcore.providers import PROVIDERS, OperationLatency

# Hashes of configs built before the builder (and the protocol field) existed: building them here, with the
# protocol they were made with, must not move them. The corrected protocol is new content, with hashes of its own.
PUBLISHED = {"protocol": "published"}
PINNED = {
    "cadae543bfc061b2": lambda: SimConfig(**PUBLISHED),
    "fa7f579e0cd758a6": lambda: build_config(client="iceberg-java", provider="s3", **PUBLISHED),
    "0bb8cf40cabdacbc": lambda: build_config({"client": "iceberg-go", "provider": "azure", "num_tables": 3},
                                             **PUBLISHED),
    "13e7c78880b00d8d": lambda: SimConfig(provider="gcp", latency_model="measured", **PUBLISHED),
    "c29c22bf76c813a4": lambda: build_config(provider="azure", catalog="append", latency_model="measured",
                                             **PUBLISHED),
    "51e5ede65770d0e2": lambda: SimConfig(catalog="service", **PUBLISHED),
    "afdb3457acf6e0d7": lambda: SimConfig(provider="s3", provider_profile=canonical_json(PROVIDERS["s3"]),
                                          **PUBLISHED),
    "cadae543bfc061b2 ": lambda: SimConfig(protocol=None),  # a stored config without the field
    "711eafcb3c6964fb": lambda: SimConfig(),  # the default, corrected
}


def _flags(**values) -> argparse.Namespace:
    """A command's parsed flags: the ones ``python -m simcore run`` always has, then ``values``."""
    defaults = dict(provider=None, latency_model="reference", provider_file=None, client="reference",
                    catalog="storage", num_tables=2, table_dist="uniform", fast_append_ratio=0.9,
                    inter_arrival_scale_ms=500.0, duration_s=1900.0)
    return argparse.Namespace(**{**defaults, **values})


@pytest.mark.parametrize("expected", sorted(PINNED))
def test_config_hashes_are_what_they_were(expected):
    assert PINNED[expected]().config_hash == expected.strip()


@pytest.mark.parametrize("client", client_names())
def test_a_preset_fills_what_the_values_do_not_give(client):
    fields = client_fields(client)
    assert build_config(client=client, num_tables=3) == SimConfig(**{**fields, "client": client, "num_tables": 3})
    assert build_config({"client": client, "retry": 7}).retry == 7  # a value given wins over the preset


def test_from_dict_takes_the_values_as_they_are():
    # The validating constructor the builder ends in: a client is a label there, the preset is the builder's.
    assert SimConfig.from_dict({"client": "iceberg-java"}) == SimConfig(client="iceberg-java")
    assert SimConfig.from_dict({"client": "iceberg-java"}).retry_policy is None
    with pytest.raises(ConfigError) as error:
        SimConfig.from_dict({"retyr": 3})
    assert error.value.field == "retyr"


def test_retrying_at_once_drops_the_presets_waits_with_its_policy():
    config = build_config(client="iceberg-java", retry_policy="immediate")
    assert config.retry_policy is None and config.backoff_base_ms is None and config.backoff_jitter_shape is None
    assert config.retry == 4 and config.retry_rewrite == "manifest_list"  # the rest of the preset stays
    assert set(RETRY_WAIT_FIELDS) & set(client_fields("iceberg-java")) == set(RETRY_WAIT_FIELDS)
    with pytest.raises(ConfigError) as error:  # a wait given with it is still refused
        build_config(client="iceberg-java", retry_policy="immediate", backoff_base_ms=50.0)
    assert error.value.field == "backoff_base_ms"


def test_a_preset_naming_no_config_field_fails_loudly(monkeypatch):
    monkeypatch.setattr(clients, "presets", lambda: {"typo": {"retyr": 3}})
    with pytest.raises(ConfigError) as error:
        build_config(client="typo")
    assert error.value.field == "clients.toml[typo].retyr"


def test_flags_and_a_dict_build_the_same_config():
    flags = _flags(provider="s3", client="iceberg-java", retry=6, table_dist="zipf")
    assert config_from_flags(flags) == build_config(client="iceberg-java", provider="s3", retry=6, catalog="storage",
                                                     num_tables=2, table_distribution="zipf", fast_append_ratio=0.9,
                                                     inter_arrival_scale_ms=500.0, duration_s=1900.0)
    assert config_from_flags(flags, num_tables=5).num_tables == 5  # a caller's fields win over the flags


def test_the_latency_flags_resolve_to_one_profile(tmp_path):
    measured = config_from_flags(_flags(provider="gcp", latency_model="measured"))
    assert measured.latency_model == "measured" and measured.latency_profile == measured_profile("gcp")
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(replace(PROVIDERS["s3x"], name="mine")))
    from_file = config_from_flags(_flags(provider_file=str(path)))
    assert (from_file.provider, from_file.latency_model) == ("mine", None)
    assert from_file.latency_profile.cas == PROVIDERS["s3x"].cas  # the content, not the path
    assert profile_fields(None, "reference", str(path)) == {"provider": "mine",
                                                           "provider_profile": from_file.provider_profile}
    for flags, field in ((_flags(provider_file=str(path), latency_model="measured"), "latency_model"),
                         (_flags(provider_file=str(path), provider="s3"), "provider"),
                         (_flags(), "provider"),
                         (_flags(provider="s3", latency_model="fitted"), "latency_model")):
        with pytest.raises(ConfigError) as error:
            config_from_flags(flags)
        assert error.value.field == field


def test_the_preset_is_checked_before_the_profile():
    with pytest.raises(ConfigError) as error:
        config_from_flags(_flags(client="iceberg-rust", provider="s4"))
    assert error.value.field == "client"


def test_the_documented_object_write_limit_applies_to_a_storage_catalog_only():
    gcp = _flags(provider="gcp", throttle_object_writes=True)
    assert config_from_flags(gcp).cas_throttle_per_s == PROVIDERS["gcp"].object_writes_per_s == 1.0
    assert config_from_flags(_flags(provider="s3", throttle_object_writes=True)).cas_throttle_per_s is None
    assert config_from_flags(gcp, catalog="service").cas_throttle_per_s is None
    with pytest.raises(ConfigError) as error:
        config_from_flags(_flags(provider="gcp", throttle_object_writes=True, cas_throttle_per_s=3.0))
    assert error.value.field == "cas_throttle_per_s"


def test_a_provider_keeps_each_conditional_write_as_one_record():
    s3x = PROVIDERS["s3x"]
    assert s3x.conditional("cas") is s3x.cas and s3x.conditional("append") is s3x.append
    assert (s3x.cas.median_ms, s3x.cas.sigma, s3x.append.median_ms) == (22, 0.22, 21)
    assert PROVIDERS["s3"].append is None and not PROVIDERS["s3"].supports_append
    with pytest.raises(ValueError, match="no conditional append"):
        PROVIDERS["s3"].conditional("append")
    faster = s3x.with_conditional("cas", OperationLatency(10.0, 0.1))
    assert faster.cas.median_ms == 10.0 and faster.append is s3x.append

"""The per-figure explanation of seed 001's published tables (dashboards/published_explained.py)."""

import pytest

from dashboards.published import PublishedFigure, load_published
from dashboards.published_explained import (NO_USABLE, OFF, PREFERRED_LABEL, STEADY_STATE_LABEL, VERDICTS,
                                            WITHIN_AGREEMENT, WITHIN_NOISE, WITHIN_ROUNDING, SetValue,
                                            agreement_gap, attempt_floors_ms, explain, explanation_for,
                                            figure_key, load_explained, rounding_half_unit, verdict)


def _figure(**changes):
    fields = dict(experiment="exp4c", provider="azure", catalog_latency_ms=None, table_distribution="uniform",
                  zipf_alpha=None, num_tables=10, fast_append_ratio=1.0, inter_arrival_scale_ms=None,
                  metric="usable_throughput", value=3.7, unit="cps")
    fields.update(changes)
    return PublishedFigure(**fields)


def test_every_published_figure_has_an_explanation():
    explained = load_explained()
    figures = load_published()
    labels = [candidate["label"] for candidate in explained["candidates"]]
    assert STEADY_STATE_LABEL in labels and PREFERRED_LABEL in labels
    assert len({figure_key(f) for f in figures}) == len(figures), "two published figures share a key"
    for figure in figures:
        entry = explanation_for(figure, explained)
        assert entry is not None, f"no explanation for {figure_key(figure)}"
        assert entry["published"] == figure.value  # the data file is not stale against the CSV
        assert set(entry["sets"]) == set(labels)
        assert all(cell["verdict"] in VERDICTS for cell in entry["sets"].values())
        assert entry["explanation"].startswith(("Reproduced by", "Not reproduced"))
        assert entry["best"] in labels


def test_rounding_half_unit_follows_the_printed_digits():
    assert rounding_half_unit("14.9") == pytest.approx(0.05)
    assert rounding_half_unit("0.11") == pytest.approx(0.005)
    assert rounding_half_unit("1089") == pytest.approx(0.5)


def test_verdicts_are_tiered():
    assert verdict(14.9, 0.05, 14.93, 0.0, "cps") == WITHIN_ROUNDING
    assert verdict(14.9, 0.05, 15.0, 0.03, "cps") == WITHIN_NOISE
    assert verdict(14.9, 0.05, 15.2, 0.01, "cps") == WITHIN_AGREEMENT   # 3% of 14.9 is 0.447
    assert verdict(14.9, 0.05, 16.4, 0.01, "cps") == OFF
    assert verdict(14.9, 0.05, None, None, "cps") == NO_USABLE
    assert agreement_gap(68.1, "pct") == pytest.approx(2.0)            # 2 points of success
    assert agreement_gap(1000.0, "ms") == pytest.approx(50.0)          # 5% of a mean latency


def test_a_knee_on_the_threshold_is_explained_by_its_deciding_point():
    figure = _figure()
    curve = ((50.0, 0.76, 11.2), (100.0, 0.953, 7.10), (200.0, 0.998, 3.72))
    entry = explain(figure, 0.05, [SetValue(STEADY_STATE_LABEL, 4.09, 0.01, 200.0, 3),
                                   SetValue(PREFERRED_LABEL, 7.10, 0.02, 100.0, 3, curve)])
    assert entry["sets"][PREFERRED_LABEL]["verdict"] == OFF
    text = entry["explanation"]
    assert text.startswith("Not reproduced")
    assert "value at 200 ms (3.72)" in text and "picks 100 ms" in text and "95.30%" in text


def test_a_reproduced_figure_names_its_set_and_the_steady_state_gap():
    entry = explain(_figure(provider="s3x", value=14.9), 0.05,
                    [SetValue(STEADY_STATE_LABEL, 16.44, 0.02, 50.0, 3),
                     SetValue(PREFERRED_LABEL, 14.93, 0.02, 50.0, 3)])
    assert entry["best"] == PREFERRED_LABEL
    assert entry["explanation"].startswith(
        f"Reproduced by seed 001's definition, '{PREFERRED_LABEL}' (14.93 vs 14.9, within rounding)")
    assert "+10.3%" in entry["explanation"]


def test_latency_floors_back_the_unreachable_captions():
    one_table = attempt_floors_ms(_figure(provider="azurex", num_tables=1, metric="fa_mean_latency", unit="ms",
                                          fast_append_ratio=0.9, inter_arrival_scale_ms=5000.0, value=147.0))
    attempt, with_retry = one_table
    assert 190 < attempt < 215 and with_retry > 2 * attempt    # a 1-table retry redoes the manifests
    assert attempt_floors_ms(_figure(experiment="exp4a", provider="s3", catalog_latency_ms=10.0)) is None


def test_the_page_payload_carries_each_figures_explanation():
    from dashboards.payload import _published_json
    from dashboards.published import Comparison
    figures = load_published()
    rows = _published_json([Comparison(f, f.metric, None, None, None, None, 0, "not in store") for f in figures],
                           load_explained())
    assert len(rows) == len(figures)
    for row in rows:
        assert row["explanation"] and row["definition"]["label"] == PREFERRED_LABEL
        assert row["definition"]["verdict"] in VERDICTS
    reproduced = sum(row["definition"]["verdict"] in ("within rounding", "within noise", "within agreement")
                     for row in rows)
    assert reproduced >= 100  # studies/published_repro/README.md: 106 of 117 with 5 seeds

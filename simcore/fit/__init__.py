"""Fit a provider profile to conditional-write measurements (docs/reference/profiles.md).

One module per step of the fit:

- ``samples``: the measurement files (seed 000's per-thread table, a probe's samples) and the stats of one
  client count that every step compares (``ClientStats``). The probe writes its samples with this module's
  column and operation names.
- ``write_fit``: the conditional write's latency at one client, where nothing contends (read + write matches
  the one-client op).
- ``scoring``: the benchmark simulated at the measured client counts, and the loss that compares it with them.
- ``contention``: the contention terms of a store that does not throttle (``fit_operation``).
- ``throttle``: the token bucket and client resends of a store that throttles writes to one object
  (``fit_throttled_operation``).
- ``prior``: among fits equally good on a few client counts, the one whose goodput changes least beyond them.
- ``determination``: how well the data determined the terms (the report ``fit`` prints).
- ``profile``: a whole profile, operation by operation (``fit_profile``).

Every public name is importable from ``simcore.fit`` itself.
"""

from simcore.fit.contention import (CONTENTION_FIT_EVALUATIONS, FEW_COUNTS_FAILED_EXTRA, FLAT_ROWS_CHANGE,
                                    FREE_DECISION_MIN_COUNTS, HOLD_SEEDS, HOLD_SHARES, SLOW_FAILURE_MULTIPLIER,
                                    fit_operation, with_terms)
from simcore.fit.determination import (NEAR_BEST_FITS, Determination, determination, term_key, term_values,
                                       with_fitted_clients)
from simcore.fit.prior import (FAILURE_LINE_TOLERANCE, FAILURE_TOLERANCE, GAP_TOLERANCE, PRIOR_AT_CLIENTS,
                               PRIOR_BELOW_COUNTS, RECHECK_FITS, RECHECK_LOSS, RECHECK_SEEDS, TREND_TOLERANCE,
                               competitor_odds_rate, gap_counts, gap_failure_rates, goodput_change, least_change_fit,
                               least_change_index, near_failure_line, prior_clients, prior_prediction, two_seed_stats,
                               uses_prior)
from simcore.fit.profile import fit_profile, starting_profile, with_measured_read, with_measured_write
from simcore.fit.samples import (MAX_CSV_BYTES, MAX_CSV_COLUMNS, MAX_FIT_CLIENTS, MAX_SAMPLE_ROWS, MAX_TABLE_ROWS,
                                 SAMPLE_COLUMNS, SAMPLE_READ_COLUMN,
                                 SAMPLE_ROUND_OPERATION, SAMPLE_WRITE_BYTES, SAMPLE_WRITE_OPERATION, TABLE_COLUMNS,
                                 ClientStats, MeasuredLatency, Samples, measured_latency, measuring_time_s,
                                 read_samples, read_samples_file, read_table, round_ms_per_read, summarise,
                                 with_recovered_goodput)
from simcore.fit.scoring import (FIT_CLIENTS, NEAR_BEST_LOSS, compared_rows, failed_to_success_ratio, mismatch,
                                 simulated_stats)
from simcore.fit.throttle import (FEW_COUNTS_FAILED_MULTIPLIER, ODDS_LINE_FROM_CLIENTS, REFUSAL_TAIL, THROTTLE_BOUNDS,
                                  THROTTLE_FIT_EVALUATIONS, THROTTLE_FIT_SECONDS, THROTTLE_POPULATION,
                                  binds_at_one_client, continued_change, continued_failure_rate, drains_write_bucket,
                                  expected_write_bucket_change, expected_write_bucket_failure, fit_throttled_operation,
                                  kept_kind, kinds_failure_line)
from simcore.fit.write_fit import READ_SHARE_CAP, capped_read, fit_write
from simcore.seed000 import SEED000_THROTTLED  # study data: kept importable here for the scripts that fit seed 000

__all__ = [
    # samples
    "ClientStats", "MeasuredLatency", "Samples", "MAX_CSV_BYTES", "MAX_CSV_COLUMNS", "MAX_FIT_CLIENTS",
    "MAX_SAMPLE_ROWS", "MAX_TABLE_ROWS", "TABLE_COLUMNS", "SAMPLE_COLUMNS",
    "SAMPLE_READ_COLUMN", "SAMPLE_WRITE_OPERATION", "SAMPLE_WRITE_BYTES", "SAMPLE_ROUND_OPERATION", "summarise",
    "read_table", "read_samples", "read_samples_file", "measuring_time_s", "with_recovered_goodput",
    "measured_latency", "round_ms_per_read",
    # write_fit
    "READ_SHARE_CAP", "fit_write", "capped_read",
    # scoring
    "FIT_CLIENTS", "NEAR_BEST_LOSS", "simulated_stats", "failed_to_success_ratio", "mismatch", "compared_rows",
    # determination
    "NEAR_BEST_FITS", "Determination", "determination", "term_values", "term_key", "with_fitted_clients",
    # prior
    "PRIOR_BELOW_COUNTS", "PRIOR_AT_CLIENTS", "RECHECK_FITS", "RECHECK_LOSS", "RECHECK_SEEDS", "TREND_TOLERANCE",
    "FAILURE_TOLERANCE", "GAP_TOLERANCE", "FAILURE_LINE_TOLERANCE", "prior_clients", "near_failure_line",
    "uses_prior", "least_change_fit", "least_change_index", "gap_counts", "competitor_odds_rate",
    "gap_failure_rates", "goodput_change", "prior_prediction", "two_seed_stats",
    # contention
    "CONTENTION_FIT_EVALUATIONS", "FREE_DECISION_MIN_COUNTS", "HOLD_SHARES", "FEW_COUNTS_FAILED_EXTRA",
    "SLOW_FAILURE_MULTIPLIER", "FLAT_ROWS_CHANGE", "HOLD_SEEDS", "with_terms", "fit_operation",
    # throttle
    "THROTTLE_FIT_EVALUATIONS", "THROTTLE_BOUNDS", "FEW_COUNTS_FAILED_MULTIPLIER", "THROTTLE_POPULATION",
    "THROTTLE_FIT_SECONDS", "REFUSAL_TAIL", "ODDS_LINE_FROM_CLIENTS", "binds_at_one_client", "continued_change",
    "continued_failure_rate", "drains_write_bucket", "expected_write_bucket_change", "expected_write_bucket_failure",
    "fit_throttled_operation", "kinds_failure_line", "kept_kind",
    # profile
    "fit_profile", "starting_profile", "with_measured_read", "with_measured_write",
    # study data
    "SEED000_THROTTLED",
]

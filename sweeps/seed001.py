"""Values shared by the experiment 4 grids of seed 001 (see docs/reference/glossary.md, "Experiments").

Every exp4 grid sweeps the same inter-arrival scales and table counts; the
quick subsets pick, from each, a few values that still show the curve: a
saturated point, the knee region and an unloaded point.
"""

INTER_ARRIVAL_SCALES_MS = (20, 50, 100, 200, 300, 400, 500, 1000, 2000, 5000)
TABLE_COUNTS = (1, 2, 5, 10, 20, 50)
CATALOG_LATENCIES_MS = (1, 10, 50, 120)  # the catalog service's CAS and read latency in exp4a/4b
PROVIDERS = ("s3x", "s3", "azurex", "azure", "gcp")
FAST_APPEND_RATIOS = (1.0, 0.9, 0.5)  # FA-only, 90/10 and 50/50 FA/VO mixes
ZIPF_ALPHA = 1.5

QUICK_INTER_ARRIVAL_SCALES_MS = (100, 500, 2000)
QUICK_TABLE_COUNTS = (1, 10)

# Seed 001's experiment-4 grids, in the order ``sweeps/all.py`` (and ``commit-sweeps sweep all``) runs them.
SEED001_EXPERIMENTS = ("exp4a", "exp4b", "exp4c", "exp4a_zipf", "exp4b_zipf")

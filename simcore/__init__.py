"""simcore: the simulator of optimistic commits to a catalog held in one object-store object, a library."""

# The public API (everything else is internal):
# - SimConfig: the frozen, validated description of one experiment point.
# - build_config(values, **fields): a SimConfig from a dict or grid point, a named client's preset filled under
#   the values (simcore.builder: the one way configs are built).
# - ConfigError: raised for any out-of-range value; names field, value, allowed.
# - simulate(config, seeds): one summary dict per seed; simulate_transactions(config, seed): the per-transaction
#   Arrow table.
# - usable_throughput(points): highest throughput with success above 95% (simcore.usable holds the whole rule).
# - PROVIDERS: the object-store latency profiles.
# - metric_sets: other named ways to summarize a run (the reference's heatmap and per-type paths, and seed001,
#   the one seed 001's tables were read with); metric_sets.simulate(name, config, seeds).
# simcore parses no command line and reads no environment variable: commit_sweeps does, and passes values in.

from simcore import metric_sets
from simcore.builder import build_config
from simcore.config import SimConfig
from simcore.errors import ConfigError
from simcore.providers import PROVIDERS
from simcore.simulate import simulate, simulate_transactions
from simcore.usable import usable_throughput

__version__ = "0.1.0"

__all__ = ["ConfigError", "PROVIDERS", "SimConfig", "build_config", "metric_sets", "simulate", "simulate_transactions",
           "usable_throughput", "__version__"]

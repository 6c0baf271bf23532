"""What ``--latency-model``, ``--provider-file`` and ``--client`` (``commit_sweeps.flags``) do to a sweep or knee search.

A sweep under another latency model is another experiment in the store:
``exp4c`` under the measured model is ``exp4c-measured``, under a profile file
``exp4c-profile-<name>``, so its rows never mix with the reference rows of
``exp4c`` (readers that group by experiment stay right) and a
reference-vs-measured comparison reads two experiments side by side. Every
config carries its latency model and profile content (``SimConfig.latency_model``,
``provider_profile``), so the config hash changes with the profile's figures.
A client preset other than ``reference`` is a variant the same way:
``exp4c-client-iceberg-java``, every point with that client's retry fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ray_jobs.grid import Grid, GridError

MEASURED_SUFFIX = "-measured"
PROFILE_SUFFIX = "-profile-"
CLIENT_SUFFIX = "-client-"


@dataclass(frozen=True)
class LatencyVariant:
    """The experiment-name suffix and the config fields a latency choice sets on every point."""

    suffix: str
    overrides: Mapping[str, Any]

    def apply(self, grid: Grid) -> Grid:
        """The grid under this latency choice: renamed (the overrides go to ``configs``)."""
        if not self.suffix:
            return grid
        return grid.derive(grid.experiment + self.suffix)


def latency_variant(experiment: str, latency_model: Optional[str], provider_file: Optional[str]) -> LatencyVariant:
    """Raises GridError (exit 2 before anything runs) for an unknown model or a bad file."""
    from simcore import ConfigError
    from simcore.builder import profile_fields
    from simcore.profiles import LATENCY_MODELS

    try:
        if provider_file is not None:
            fields = profile_fields(None, latency_model, provider_file)
            return LatencyVariant(PROFILE_SUFFIX + fields["provider"], fields)
        if latency_model not in LATENCY_MODELS:
            raise ConfigError("latency_model", latency_model, "one of " + ", ".join(LATENCY_MODELS))
    except ConfigError as error:
        raise GridError(experiment, error.field, error.value, error.allowed) from error
    if latency_model == "measured":
        return LatencyVariant(MEASURED_SUFFIX, {"latency_model": "measured"})
    return LatencyVariant("", {})


def client_variant(experiment: str, client: Optional[str], variant: LatencyVariant) -> LatencyVariant:
    """``variant`` with the client preset's fields on every point (none for ``reference``)."""
    from simcore.clients import client_names

    if client in (None, "reference"):
        return variant
    if client not in client_names():
        raise GridError(experiment, "client", client, "one of " + ", ".join(client_names()))
    return LatencyVariant(variant.suffix + CLIENT_SUFFIX + client, {**variant.overrides, "client": client})

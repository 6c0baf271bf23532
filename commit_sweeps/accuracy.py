"""How far to trust an answer, in plain words: the figures of docs/accuracy.md for the kind of answer asked.

An answer is a simulation on a latency profile with a client's retry settings; how close it comes to a real
store and client has been measured per kind of profile and per client preset. ``accuracy`` picks the
statements that apply to one config (the profile's, the client preset's, and a profile fitted on fewer
client counts than the answer needs) and names the section of docs/accuracy.md that holds the evidence.
``capacity`` prints them under its answer and puts them in its ``--json`` as ``accuracy``.

The figures are copied from docs/accuracy.md, the one place they are measured and dated; a test checks
that every figure quoted here is on that page, so a new measurement there shows up here as a failing test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from simcore import SimConfig
from simcore.clients import REFERENCE

PAGE = "docs/accuracy.md"


@dataclass(frozen=True)
class Trust:
    """One statement of how far to trust an answer: its kind, the words, the page section with the evidence."""

    kind: str
    statement: str
    page: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "statement": self.statement, "page": self.page}

    def line(self) -> str:
        return f"{self.statement} (see {self.page})"


_PROFILES = {
    "reference_profile": Trust(
        "reference_profile",
        "reference profile: within the reference simulator's seed noise (no disagreement in 142 compared "
        "metrics); not a real store's figure (in seed 000's benchmark only 6 of 128 cells are within tolerance)",
        f"{PAGE}#reference-profiles"),
    "measured_profile": Trust(
        "measured_profile",
        "measured profile: it matches seed 000's benchmark (128 of 128 cells within 10% goodput and 5 points of "
        "failure rate), but no catalog answer on it has been compared with a real catalog, so this is an "
        "extrapolation; read its p99 latencies as rough",
        f"{PAGE}#measured-profiles"),
    "profile_file": Trust(
        "profile_file",
        "profile file: fitted on 3 or 4 probed client counts, most fits predict the counts they did not see "
        "within 10% goodput and 5 points of failure rate (94.6% of held-out cells), some a fifth to a third off; "
        "fit's report says how much its rows leave open",
        f"{PAGE}#your-probed-store"),
    "idealised_store": Trust(
        "idealised_store",
        "idealised 1 ms store: a what-if with no real store behind it; only the protocol is modelled",
        f"{PAGE}#reference-profiles"),
}

_CLIENTS = {
    "delta-rs": "client delta-rs: real delta-rs writers on the lab's S3 sustained the largest writer count this "
                "model gave to within 20% (+0% to +17%); retries per commit near the onset of contention only "
                "roughly",
    "pyiceberg": "client pyiceberg: real PyIceberg writers sustained the largest writer count to within 20% "
                 "(+0% to +17%); retries per commit do not match (real writers stay near one retry a commit)",
    "ducklake": "client ducklake: real DuckLake writers retried within 15% of this model, but fewer of their commits "
                "landed (2.5-7 points): the largest writer count it gives was a third too high",
    "iceberg-java": "client iceberg-java: real Iceberg Java writers through a REST server and a JdbcCatalog "
                    "sustained the largest writer count this model gave to within a quarter (-25% to +0%: the "
                    "measured count or one writer fewer) and as many of their commits landed (within 6 points); "
                    "retries per commit within 20% at 6 of 8 points through the server, the model's up to 43% "
                    "low on the JdbcCatalog; not run on a catalog in one object",
}


def profile_trust(config: SimConfig) -> Trust:
    """What the profile's kind has been checked against: reference, measured, a profile file or the ideal store."""
    if config.latency_model == "measured":  # checked first: the config carries the measured profile's figures too
        return _PROFILES["measured_profile"]
    if config.provider_profile is not None:
        return _PROFILES["profile_file"]
    if config.provider == "instant":
        return _PROFILES["idealised_store"]
    return _PROFILES["reference_profile"]


def client_trust(config: SimConfig) -> Optional[Trust]:
    """What the client preset has been checked against; None for the reference's own settings."""
    name = config.client
    if name is None or name == REFERENCE:
        return None
    statement = _CLIENTS.get(name, f"client {name}: its retry settings are read from the client's source, but no "
                                   f"real {name} client has been run against the model: nothing measured on top "
                                   f"of the profile's error")
    return Trust("client_preset", statement, f"{PAGE}#client-presets")


_DESIGNS = {
    "rest": "an Iceberg REST catalog",
    "ducklake": "DuckLake",
    "unity": "Unity Catalog's managed Delta commits",
}

# What the designs run against a real implementation showed (studies/real_clients, docs/accuracy.md).
_MEASURED_DESIGNS = {
    ("rest", "client"): "real Iceberg Java writers on a JdbcCatalog (this design) sustained its writer counts to "
                        "within a quarter (one writer more than it gives at 2 s and 4 s), with up to 43% more "
                        "retries than it gives",
    ("rest", None): "real Iceberg Java writers through a REST server (Iceberg's CatalogHandlers) sustained its "
                    "writer counts to within 13% (+0%, one writer more at 4 s), with retries within 20% at 6 of "
                    "8 points; other clients' commits through it are not traced",
    ("ducklake", None): "real DuckLake writers retried within 15% of it, but its largest writer count was a third "
                        "too high",
}


def design_trust(config: SimConfig) -> Optional[Trust]:
    """What the commit design has been checked against; None for the catalog in one object (Iceberg v3)."""
    parts = []
    if config.catalog in _DESIGNS:
        parts.append(_DESIGNS[config.catalog])
    if config.metadata_format == "v4":
        parts.append("Iceberg v4's root manifest (a proposal, not yet released)")
    if config.group_commit_s is not None:
        parts.append("group commit")
    if not parts:
        return None
    database = (f"; its catalog database's commit time and concurrency are {config.catalog_database}'s as "
                f"measured on loopback (docs/architectures.md)" if config.catalog_database
                and not config.catalog_database.lstrip().startswith("{") else "")
    measured = _MEASURED_DESIGNS.get((config.catalog, config.rest_metadata_writer))
    if measured is not None and config.metadata_format is None and config.group_commit_s is None:
        checked = f"; {measured}"
    else:
        checked = ", but no real implementation has been run against it yet"
    return Trust("design", f"design {', '.join(parts)}: its protocol is read from the sources and held to the "
                           f"oracle{checked}{database}",
                 f"{PAGE}#commit-designs")


def accuracy(config: SimConfig, extrapolation: Optional[str] = None) -> dict:
    """The ``accuracy`` of an answer on ``config``: the profile's ``kind``, ``statement`` and ``page``, the
    client preset's (``client``) where one is named, and ``extrapolation``, the line saying the answer lies
    beyond the client counts the profile was fitted on, where it does."""
    out = profile_trust(config).to_json()
    client = client_trust(config)
    if client is not None:
        out["client"] = client.to_json()
    design = design_trust(config)
    if design is not None:
        out["design"] = design.to_json()
    if extrapolation:
        out["extrapolation"] = extrapolation
    return out


def accuracy_lines(accuracy_json: dict) -> list[str]:
    """The printed form of ``accuracy``: one line per statement, the first headed."""
    lines = [f"how far to trust it: {Trust(**{k: accuracy_json[k] for k in ('kind', 'statement', 'page')}).line()}"]
    for part in ("client", "design"):
        if part in accuracy_json:
            lines.append("  " + Trust(**accuracy_json[part]).line())
    if accuracy_json.get("extrapolation"):
        lines.append("  " + accuracy_json["extrapolation"])
    return lines

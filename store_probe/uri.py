"""The ``--store-uri`` of ``probe``: which store, which bucket or container, which prefix. Pure.

    s3://bucket/prefix      Amazon S3 or an S3-compatible store (MinIO, Ceph, moto)
    az://container/prefix   Azure Blob Storage (or Azurite)
    gs://bucket/prefix      Google Cloud Storage (or fake-gcs-server)

The probe's own object goes under the prefix, named uniquely per run
(``object_name``), so two probes of one bucket never share an object.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urlsplit

from simcore.errors import ConfigError
from simcore.redaction import redact

SCHEMES = {"s3": "S3", "az": "Azure Blob", "gs": "GCS"}
# S3's and GCS's bucket rules (3-63 of a-z 0-9 . -) and Azure's container rule (3-63 of a-z 0-9 -) share this
# shape; the store itself has the last word.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
_ALLOWED = "s3://bucket/prefix, az://container/prefix or gs://bucket/prefix"


@dataclass(frozen=True)
class StoreURI:
    scheme: str  # s3, az or gs
    bucket: str  # the bucket (S3, GCS) or container (Azure)
    prefix: str  # "" or a key prefix without leading or trailing slash

    @property
    def store_name(self) -> str:
        return SCHEMES[self.scheme]

    def __str__(self) -> str:
        return f"{self.scheme}://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")

    def object_name(self, token: Optional[str] = None) -> str:
        """The key of this run's one object: unique per run unless ``token`` is given."""
        name = f"commit-sweeps-probe-{token or uuid.uuid4().hex}"
        return f"{self.prefix}/{name}" if self.prefix else name


def parse_store_uri(text: str) -> StoreURI:
    """``s3://bucket/prefix`` and the like; anything else is a ConfigError naming the field.

    >>> parse_store_uri("s3://lab/probes/")
    StoreURI(scheme='s3', bucket='lab', prefix='probes')
    >>> str(parse_store_uri("gs://b-1"))
    'gs://b-1'
    """
    if not str(text).isprintable():  # urlsplit drops a newline or a tab silently: s3://lab/p\nq would be prefix pq
        raise ConfigError("store_uri", text, f"{_ALLOWED} without control characters")
    try:
        parts = urlsplit(str(text))
    except ValueError:
        raise ConfigError("store_uri", text, _ALLOWED) from None
    scheme = parts.scheme.lower()
    if "@" in parts.netloc or redact(str(text)) != str(text):  # ConfigError shows the value redacted
        raise ConfigError("store_uri", text, f"{_ALLOWED} without credentials: credentials in the URI are not "
                                             f"accepted; give them through the SDK's usual chain (its environment "
                                             f"variables, a profile, a role)")
    if scheme not in SCHEMES:
        raise ConfigError("store_uri", text, f"{_ALLOWED} (unknown scheme {parts.scheme or '(none)'!r})")
    if parts.query or parts.fragment or not _BUCKET.match(parts.netloc or ""):
        raise ConfigError("store_uri", text, f"{_ALLOWED} with a bucket name of 3-63 lowercase letters, digits, "
                                             "dots and dashes")
    prefix = parts.path.strip("/")
    if "//" in prefix or not prefix.isprintable():
        raise ConfigError("store_uri", text, f"{_ALLOWED} with a prefix of printable path segments")
    return StoreURI(scheme, parts.netloc, prefix)

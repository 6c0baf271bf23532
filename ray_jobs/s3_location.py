"""Where an ``s3://`` results store's requests go, read from its URI as pyarrow reads it. Pure.

The store's files go through pyarrow (``ray_jobs.store``), which reads the
URI's own settings::

    s3://[KEY:SECRET@]bucket[/prefix][?endpoint_override=host:port][&scheme=http][&region=R]
                                     [&tls_ca_file_path=PATH][&tls_verify_certificates=false]

The lease (``ray_jobs.lease``) needs conditional PUTs, which pyarrow does
not make, so it speaks to S3 through boto3; ``s3_location`` gives it the
same bucket, key prefix (the path without the query), endpoint, region and
keys, so that both reach the same objects on the same server. Settings the
URI leaves out come from the usual AWS environment for both
(``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union
from urllib.parse import parse_qsl, unquote, urlsplit

SCHEME = "s3://"


@dataclass(frozen=True)
class S3Location:
    """An ``s3://`` store URI's parts. The keys are left out of ``repr``: a repr is printed in tracebacks."""

    bucket: str
    prefix: str  # the store's key prefix, "" for the bucket's root; no trailing "/"
    endpoint_url: Optional[str] = None  # None: boto3's own (AWS, or $AWS_ENDPOINT_URL)
    region: Optional[str] = None
    use_ssl: bool = True
    verify: Union[bool, str, None] = None  # False: certificates not checked; a path: the CA bundle
    access_key: Optional[str] = field(default=None, repr=False)
    secret_key: Optional[str] = field(default=None, repr=False)

    def key(self, name: str) -> str:
        """The object key of ``name`` (a path within the store)."""
        return f"{self.prefix}/{name}" if self.prefix else name

    def client_options(self) -> dict:
        """Keyword arguments of ``boto3.client("s3", ...)`` that reach this store as pyarrow does."""
        from botocore.config import Config

        options: dict = {"use_ssl": self.use_ssl}
        if self.endpoint_url is not None:
            # pyarrow addresses buckets by path on an endpoint it is given (a MinIO or moto has no bucket names).
            options.update(endpoint_url=self.endpoint_url, config=Config(s3={"addressing_style": "path"}))
        if self.region is not None:
            options["region_name"] = self.region
        if self.verify is not None:
            options["verify"] = self.verify
        if self.access_key is not None:
            options.update(aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key or "")
        return options


def s3_location(uri: str) -> S3Location:
    """The parts of an ``s3://`` store URI (one pyarrow has opened: its query holds only what pyarrow takes).

    >>> where = s3_location("s3://lab/results/?endpoint_override=127.0.0.1:9000&scheme=http&region=eu-west-1")
    >>> where.bucket, where.prefix, where.endpoint_url, where.region
    ('lab', 'results', 'http://127.0.0.1:9000', 'eu-west-1')
    >>> s3_location("s3://K:S%2F1@lab").key("_lease/exp4c.json"), s3_location("s3://K:S%2F1@lab").secret_key
    ('_lease/exp4c.json', 'S/1')
    """
    if not uri.startswith(SCHEME):
        raise ValueError(f"not an {SCHEME} URI")
    parts = urlsplit(uri)
    settings = dict(parse_qsl(parts.query, keep_blank_values=True))
    scheme = settings.get("scheme") or "https"
    endpoint = settings.get("endpoint_override") or None
    if endpoint is not None and "://" not in endpoint:
        endpoint = f"{scheme}://{endpoint}"
    verify: Union[bool, str, None] = None
    if settings.get("tls_verify_certificates", "").lower() in ("false", "0"):
        verify = False
    elif settings.get("tls_ca_file_path"):
        verify = settings["tls_ca_file_path"]
    # As pyarrow: the path after the bucket, percent-decoded, one leading "/" and any trailing ones dropped.
    path = unquote(parts.path).rstrip("/")
    return S3Location(bucket=unquote(parts.netloc.rpartition("@")[2]),
                      prefix=path[1:] if path.startswith("/") else path,
                      endpoint_url=endpoint, region=settings.get("region") or None, use_ssl=scheme != "http",
                      verify=verify,
                      access_key=unquote(parts.username) if parts.username is not None else None,
                      secret_key=unquote(parts.password) if parts.password is not None else None)

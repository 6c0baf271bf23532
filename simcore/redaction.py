"""Credentials out of everything a person or a page is shown: ``redact``. Pure; imports nothing of the project.

A URI can carry credentials. pyarrow reads ``s3://KEY:SECRET@bucket/prefix``
as the store's keys, and a signed URL carries them in its query (an Azure
SAS's ``sig=...``, S3's ``X-Amz-Signature=...``). Messages, progress lines,
status output, table headers and the dashboard's payload show store URIs,
and the errors of pyarrow and the SDKs quote them back; each of them goes
through ``redact`` first, so a secret reaches no terminal, log or page.

It lives at the bottom of simcore, below ``errors``, so that every package
(simcore, ray_jobs, dashboards, commit_sweeps) can use it without importing
one another.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"

# A query parameter is secret when its name holds one of these (any case): access_key, secret_key,
# session_token, X-Amz-Signature, X-Amz-Credential, AWSAccessKeyId, sig, password, ...
_SECRET_WORDS = ("secret", "token", "key", "password", "passwd", "pwd", "sig", "credential", "auth", "access")
# An Azure shared access signature's other fields: together with sig they are the grant.
_SAS_FIELDS = frozenset({"sv", "ss", "srt", "sp", "se", "st", "spr", "sip", "sr", "sdd", "skoid", "sktid", "skt",
                         "ske", "sks", "skv", "saoid", "suoid", "scid"})
# A URI in running text: a scheme, "://", then everything up to the next whitespace. Quotes and brackets
# stay inside the match on purpose: a password may hold them, and a match that is too long only hides more.
# Only the punctuation that ends it (a closing quote, a colon, a full stop) is left outside.
_URI = re.compile(r"(?<![A-Za-z0-9+.-])(?P<uri>[A-Za-z][A-Za-z0-9+.-]*://\S*?)(?P<end>[\'\")\]}>,;.:]*)(?=\s|$)")
_PARAMETER = re.compile(r"(?P<lead>^|[?&;#])(?P<name>[^=&;#?]*)=(?P<value>[^&;#]*)")
# Secrets shorter than this are masked where they stand in a URI but not searched for in other text:
# replacing every "ab" of a message would destroy it and protect nothing.
_MIN_SEARCHED = 4


def redact(text: str, *sources: str) -> str:
    """``text`` with the credentials of every URI in it replaced by ``***``.

    In each URI, the user information (``user:password@``) and the values of
    secret query parameters are masked. A library's error may also quote a
    secret outside any URI (a bucket "name" it could not parse, a decoded
    key): every credential that ``sources`` (the URIs the text may quote)
    carry is masked wherever it appears, percent-decoded too.

    >>> redact("s3://AKIA:wJal%2Fr@lab/results?endpoint_override=127.0.0.1:9000&scheme=http")
    's3://***@lab/results?endpoint_override=127.0.0.1:9000&scheme=http'
    >>> redact("https://acct.blob.core.windows.net/c?sv=2024-01-01&sig=abc%3D")
    'https://acct.blob.core.windows.net/c?sv=***&sig=***'
    >>> redact("Invalid bucket name \\"AKIA:wJal/r@lab\\"", "s3://AKIA:wJal%2Fr@lab/results")
    'Invalid bucket name "***@lab"'
    >>> redact("./results")
    './results'
    """
    text = str(text)
    for secret in sorted({s for source in sources for s in _secrets(str(source))}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    if "://" not in text:
        return text
    return _URI.sub(lambda match: _redact_uri(match["uri"]) + match["end"], text)


def _redact_uri(uri: str) -> str:
    scheme, _, rest = uri.partition("://")
    userinfo, at, rest = rest.rpartition("@")  # the last "@": a raw "/" or "@" in a password stays in the mask
    if at and userinfo:
        rest = f"{MASK}@{rest}"
    else:
        rest = uri[len(scheme) + 3:]
    start = _query_start(rest)
    if start < 0:
        return f"{scheme}://{rest}"
    return f"{scheme}://{rest[:start]}" + _PARAMETER.sub(_masked_parameter, rest[start:])


def _query_start(rest: str) -> int:
    """Where the query (or, without one, the fragment) begins in what follows the scheme, or -1."""
    found = [i for i in (rest.find("?"), rest.find("#")) if i >= 0]
    return min(found) if found else -1


def _masked_parameter(match: re.Match) -> str:
    if not _is_secret(match["name"]):
        return match.group(0)
    return f"{match['lead']}{match['name']}={MASK}"


def _is_secret(name: str) -> bool:
    name = unquote(name).strip().lower()
    return name in _SAS_FIELDS or any(word in name for word in _SECRET_WORDS)


def _secrets(source: str) -> set[str]:
    """The credentials ``source`` carries, in every spelling a message may quote them in."""
    if "://" not in source:
        return set()
    rest = source.partition("://")[2]
    userinfo, at, tail = rest.rpartition("@")
    found = set()
    if at:
        found.add(userinfo)
        found.update(userinfo.split(":", 1))
    start = _query_start(tail if at else rest)
    if start >= 0:
        found.update(m["value"] for m in _PARAMETER.finditer((tail if at else rest)[start:]) if _is_secret(m["name"]))
    spelled = set()
    for secret in found:
        spelled.update((secret, unquote(secret), repr(secret)[1:-1], repr(unquote(secret))[1:-1]))
    return {secret for secret in spelled if len(secret) >= _MIN_SEARCHED}

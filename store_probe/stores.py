"""One adapter per object store, each over the store's own SDK: the requests a probe client makes.

    S3      boto3: GET, then PUT with If-Match (cas); PUT with If-None-Match: * (create);
            append: PUT with WriteOffsetBytes (S3 Express One Zone's conditional append).
    Azure   azure-storage-blob: download, then upload with If-Match (cas); append blobs:
            append_block with the append-position condition (append).
    GCS     google-cloud-storage: download (its generation), then upload with
            ifGenerationMatch (cas); GCS has no conditional append.

``put`` is a plain (unconditional) write, as a commit writes its data and
metadata files. On S3 every PUT goes in one round trip, without boto3's
``Expect: 100-continue`` (which waits a second round trip before the body):
delta-rs's object_store sends its conditional create so (traced on the store
lab), and Azure's and GCS's SDKs send none, so a read-then-write costs two
round trips on each store, as the model's read and conditional write are.

Every adapter makes one attempt per request (the SDK's retries are off): a
probe measures the store, and a retried request would hide a refusal or
double a latency. ``write`` and ``append`` answer True (the store took it)
or False (it refused the condition: 412, or 409 where S3 reports a
concurrent conditional write that way); any other answer raises
``StoreError``. ``open_store`` checks the endpoint, the bucket and the
credentials first and turns what is wrong into a ``ConfigError`` naming it
(exit 2). Credentials come from each SDK's usual chain and are never printed.
"""

from __future__ import annotations

import os
from typing import Optional

from simcore.errors import ConfigError
from simcore.redaction import redact
from store_probe.uri import StoreURI

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 30.0
# The most a read may bring back: the probe's object is a few KB (its cas writes 1 KB; an append object is read
# only by its length). A store that answers more is refused, not read into memory.
MAX_READ_BYTES = 2**20


class StoreError(RuntimeError):
    """A request failed in a way that is neither success nor a refused condition (a 500, a timeout).

    Its message is redacted: an SDK's error may quote a signed URL."""

    def __init__(self, message: str = ""):
        super().__init__(redact(message))


class Store:
    """The requests a probe makes on one object. Subclasses: one per SDK."""

    label = "store"
    supports_append = False

    def __init__(self, uri: StoreURI, endpoint_url: Optional[str]):
        self.uri = uri
        self.endpoint_url = endpoint_url

    def describe(self) -> str:
        """How the store is named in every message: the URI and, where given, the endpoint."""
        return redact(f"{self.label} store {self.uri}" + (f" at {self.endpoint_url}" if self.endpoint_url else ""))

    def check(self) -> None:
        """Raise ConfigError when the endpoint, the bucket or the credentials are not usable."""
        raise NotImplementedError

    def create(self, name: str, data: bytes, append: bool = False) -> bool:
        """Create the object only if it does not exist (If-None-Match: *); False when it exists."""
        raise NotImplementedError

    def read(self, name: str) -> str:
        """Read the object: its version (ETag, generation) to write against."""
        raise NotImplementedError

    def read_data(self, name: str) -> bytes:
        raise NotImplementedError

    def write(self, name: str, version: str, data: bytes) -> bool:
        """Overwrite the object only if it is still at ``version``."""
        raise NotImplementedError

    def put(self, name: str, data: bytes) -> None:
        """Write the object unconditionally (a plain write); StoreError when the store does not take it."""
        if not self._put(name, data):
            raise StoreError("a plain write was refused as if it were conditional (409/412)")

    def _put(self, name: str, data: bytes) -> bool:
        """The plain write through the adapter's conditional-write path (its one mapping of the SDK's answers),
        with no condition."""
        raise NotImplementedError

    def length(self, name: str) -> int:
        """The object's length: the position to append at."""
        raise NotImplementedError

    def append(self, name: str, position: int, data: bytes) -> bool:
        """Append only if the object is still ``position`` bytes long."""
        raise ConfigError("operation", "append", f"cas ({self.label} has no conditional append)")

    def delete(self, name: str) -> None:
        """Delete the object; no error if it is already gone."""
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        raise NotImplementedError


def _too_large(size: Optional[int] = None) -> StoreError:
    """``size``: the length the answer gave; None where the body was cut off at the bound."""
    said = f"{size} bytes, more than" if size is not None else "more than"
    return StoreError(f"a read of the probe's object answered {said} the {MAX_READ_BYTES:,} bytes a read may "
                      f"bring back (the object holds a few KB)")


class _BoundedBuffer:
    """A file to download into that refuses (StoreError) more than ``MAX_READ_BYTES``: a GCS download writes
    each chunk as it arrives, so a body too large is stopped at the first chunk past the bound."""

    def __init__(self):
        self.chunks: list[bytes] = []
        self.size = 0

    def write(self, data) -> int:
        self.size += len(data)
        if self.size > MAX_READ_BYTES:
            raise _too_large()
        self.chunks.append(bytes(data))
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        """Back to the start (all a download asks, when the store sends a body again whole); nothing else."""
        if (offset, whence) != (0, 0):
            raise OSError("only seek(0) is supported")
        self.chunks, self.size = [], 0
        return 0

    def getvalue(self) -> bytes:
        return b"".join(self.chunks)


def _unreachable(store: Store, error: Exception) -> ConfigError:
    return ConfigError("endpoint_url", store.endpoint_url or "(the SDK's default)",
                       f"a reachable {store.label} endpoint ({type(error).__name__})")


# -- S3 ------------------------------------------------------------------------------------------------

class S3Store(Store):
    label = "S3"
    supports_append = True  # only where the store honours WriteOffsetBytes; the atomicity proof finds out

    def __init__(self, uri: StoreURI, endpoint_url: Optional[str]):
        super().__init__(uri, endpoint_url)
        import boto3
        import botocore.handlers
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError

        config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=CONNECT_TIMEOUT_S,
                        read_timeout=READ_TIMEOUT_S, max_pool_connections=4,
                        s3={"addressing_style": "path"} if endpoint_url else None)
        try:
            self.client = boto3.session.Session().client("s3", endpoint_url=endpoint_url, config=config)
            # One round trip per PUT (the module's docstring).
            self.client.meta.events.unregister("before-call.s3", botocore.handlers.add_expect_header)
        except BotoCoreError as error:  # a named profile that does not exist, a bad config file
            raise ConfigError("credentials", "(from boto3's chain)", f"a usable AWS configuration ({error})") \
                from None

    def check(self) -> None:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, EndpointConnectionError

        try:
            self.client.head_bucket(Bucket=self.uri.bucket)
        except NoCredentialsError:
            raise ConfigError("credentials", "(none found)", "S3 credentials in boto3's usual chain "
                                                            "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, "
                                                            "a role)") from None
        except EndpointConnectionError as error:
            raise _unreachable(self, error) from None
        except ClientError as error:
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 404:
                raise ConfigError("store_uri", str(self.uri), f"an existing bucket ({self.uri.bucket} does not "
                                                              f"exist at {self.describe()})") from None
            if status in (401, 403):
                raise ConfigError("credentials", "(from boto3's chain)", f"credentials {self.describe()} accepts "
                                                                        f"(it answered {status})") from None
            raise ConfigError("store_uri", str(self.uri), f"a bucket {self.describe()} answers "
                                                          f"(it answered {status})") from None
        except BotoCoreError as error:
            raise _unreachable(self, error) from None

    def _conditional(self, **put) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.put_object(Bucket=self.uri.bucket, **put)
            return True
        except ClientError as error:
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in (409, 412):
                return False
            raise StoreError(f"PUT answered {status} {error.response.get('Error', {}).get('Code')}") from None
        except BotoCoreError as error:
            raise StoreError(f"PUT failed: {type(error).__name__}") from None

    def _get(self, name: str) -> dict:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.uri.bucket, Key=name)
        except (ClientError, BotoCoreError) as error:
            raise StoreError(f"GET failed: {error}") from None

    def create(self, name: str, data: bytes, append: bool = False) -> bool:
        return self._conditional(Key=name, Body=data, IfNoneMatch="*")

    def _read(self, name: str) -> tuple[dict, bytes]:
        """GET the object: (the answer, its body), the body read in chunks up to ``MAX_READ_BYTES``."""
        from botocore.exceptions import BotoCoreError

        answer = self._get(name)
        body = answer["Body"]
        if (answer.get("ContentLength") or 0) > MAX_READ_BYTES:
            body.close()
            raise _too_large(answer["ContentLength"])
        chunks, size = [], 0
        try:
            # Read to the end (an empty chunk), as a plain read() would: the connection then goes back to the pool.
            while chunk := body.read(min(64 * 1024, MAX_READ_BYTES + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_READ_BYTES:
                    body.close()
                    raise _too_large()
        except BotoCoreError as error:  # the body broke off or timed out
            raise StoreError(f"GET failed reading the body: {type(error).__name__}") from None
        return answer, b"".join(chunks)

    def read(self, name: str) -> str:
        return self._read(name)[0]["ETag"]

    def _put(self, name: str, data: bytes) -> bool:
        return self._conditional(Key=name, Body=data)

    def read_data(self, name: str) -> bytes:
        return self._read(name)[1]

    def write(self, name: str, version: str, data: bytes) -> bool:
        return self._conditional(Key=name, Body=data, IfMatch=version)

    def length(self, name: str) -> int:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return int(self.client.head_object(Bucket=self.uri.bucket, Key=name)["ContentLength"])
        except (ClientError, BotoCoreError) as error:
            raise StoreError(f"HEAD failed: {error}") from None

    def append(self, name: str, position: int, data: bytes) -> bool:
        return self._conditional(Key=name, Body=data, WriteOffsetBytes=position)

    def exists(self, name: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.uri.bucket, Key=name)
            return True
        except ClientError as error:
            if error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404:
                return False
            raise StoreError(f"HEAD failed: {error}") from None

    def delete(self, name: str) -> None:
        self.client.delete_object(Bucket=self.uri.bucket, Key=name)


# -- Azure Blob ----------------------------------------------------------------------------------------

CONNECTION_STRING_ENV = "AZURE_STORAGE_CONNECTION_STRING"


def _connection_parts(text: str) -> dict:
    """``AccountName=...;AccountKey=...;BlobEndpoint=...`` as a dict (keys as written)."""
    return dict(part.split("=", 1) for part in text.split(";") if "=" in part)


def _check_account_key(key: str, where: str) -> None:
    """An account key is base64: say so by name, before a request, rather than as a signing failure (decoded
    as the SDK decodes it when it signs, so exactly the keys it cannot sign with are refused)."""
    import base64
    import binascii

    try:
        base64.b64decode(key)
    except (binascii.Error, ValueError) as error:
        raise ConfigError("credentials", where, f"an Azure storage account key in base64 (this one is not: "
                                                f"{error})") from None


def _refuse_large_get(response) -> None:
    """azure-core's ``raw_response_hook``: runs once an answer's headers are in, before its body is read (the
    SDK would read a whole download into memory)."""
    if response.http_request.method == "GET":
        size = response.http_response.headers.get("Content-Length")
        if size is not None and size.isdigit() and int(size) > MAX_READ_BYTES:
            raise _too_large(int(size))


class AzureStore(Store):
    label = "Azure Blob"
    supports_append = True

    def __init__(self, uri: StoreURI, endpoint_url: Optional[str]):
        super().__init__(uri, endpoint_url)
        from azure.storage.blob import BlobServiceClient

        options = dict(retry_total=0, connection_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S,
                       raw_response_hook=_refuse_large_get)
        connection = os.environ.get(CONNECTION_STRING_ENV)
        if connection and not endpoint_url:
            key = _connection_parts(connection).get("AccountKey")
            if key is not None:
                _check_account_key(key, f"the AccountKey of ${CONNECTION_STRING_ENV}")
            try:
                service = BlobServiceClient.from_connection_string(connection, **options)
            except ValueError as error:  # never echoed: a connection string holds the account key
                raise ConfigError("credentials", f"${CONNECTION_STRING_ENV}",
                                  f"a connection string such as AccountName=NAME;AccountKey=KEY;BlobEndpoint=URL "
                                  f"(the SDK refused it: {error})") from None
        else:
            account_url = endpoint_url or (f"https://{os.environ['AZURE_STORAGE_ACCOUNT']}.blob.core.windows.net"
                                           if os.environ.get("AZURE_STORAGE_ACCOUNT") else None)
            if account_url is None:
                raise ConfigError("credentials", "(none found)", f"${CONNECTION_STRING_ENV}, or --endpoint-url "
                                                                "with $AZURE_STORAGE_ACCOUNT and $AZURE_STORAGE_KEY")
            service = BlobServiceClient(account_url, credential=self._credential(connection), **options)
        self.container = service.get_container_client(uri.bucket)

    @staticmethod
    def _credential(connection: Optional[str]):
        parts = _connection_parts(connection) if connection else {}
        name = parts.get("AccountName") or os.environ.get("AZURE_STORAGE_ACCOUNT")
        key = parts.get("AccountKey") or os.environ.get("AZURE_STORAGE_KEY")
        if name and key:
            _check_account_key(key, f"the AccountKey of ${CONNECTION_STRING_ENV}" if parts.get("AccountKey")
                               else "$AZURE_STORAGE_KEY")
            return {"account_name": name, "account_key": key}
        try:  # Entra ID through azure-identity's usual chain, where that package is installed
            from azure.identity import DefaultAzureCredential
        except ImportError:
            raise ConfigError("credentials", "(none found)", f"${CONNECTION_STRING_ENV}, $AZURE_STORAGE_ACCOUNT "
                                                            "with $AZURE_STORAGE_KEY, or azure-identity installed")
        return DefaultAzureCredential()

    def check(self) -> None:
        from azure.core.exceptions import (ClientAuthenticationError, HttpResponseError, ResourceNotFoundError,
                                           ServiceRequestError)

        try:
            self.container.get_container_properties()
        except ResourceNotFoundError:
            raise ConfigError("store_uri", str(self.uri), f"an existing container ({self.uri.bucket} does not "
                                                          f"exist at {self.describe()})") from None
        except ClientAuthenticationError as error:
            # No status: the request was never sent (the key could not sign it, a token could not be had).
            cause = (f"it answered {error.status_code}" if error.status_code is not None else
                     f"no request could be signed: {type(error).__name__}: {str(error.message).splitlines()[0]}")
            raise ConfigError("credentials", "(from the connection string or environment)",
                              f"credentials {self.describe()} accepts ({cause})") from None
        except ServiceRequestError as error:
            raise _unreachable(self, error) from None
        except HttpResponseError as error:
            raise ConfigError("store_uri", str(self.uri), f"a container {self.describe()} answers "
                                                          f"(it answered {error.status_code})") from None

    def _blob(self, name: str):
        return self.container.get_blob_client(name)

    def _conditional(self, call) -> bool:
        from azure.core.exceptions import AzureError, HttpResponseError, ResourceExistsError, ResourceModifiedError

        try:
            call()
            return True
        except (ResourceModifiedError, ResourceExistsError):
            return False
        except HttpResponseError as error:
            if error.status_code in (409, 412):
                return False
            raise StoreError(f"write answered {error.status_code} {error.error_code}") from None
        except AzureError as error:
            raise StoreError(f"write failed: {type(error).__name__}") from None

    def create(self, name: str, data: bytes, append: bool = False) -> bool:
        from azure.core import MatchConditions

        blob = self._blob(name)
        if append:
            return self._conditional(lambda: blob.create_append_blob(match_condition=MatchConditions.IfMissing))
        return self._conditional(lambda: blob.upload_blob(data, overwrite=False))

    def read(self, name: str) -> str:
        return self._download(name)[0]

    def _download(self, name: str) -> tuple[str, bytes]:
        """(ETag, body) of the object; a body over ``MAX_READ_BYTES`` is refused by ``_refuse_large_get``
        before it is read, and by the size the download reports."""
        from azure.core.exceptions import AzureError

        try:
            download = self._blob(name).download_blob()
            if download.size > MAX_READ_BYTES:
                raise _too_large(download.size)
            return download.properties.etag, download.readall()
        except AzureError as error:
            raise StoreError(f"read failed: {type(error).__name__}") from None

    def read_data(self, name: str) -> bytes:
        return self._download(name)[1]

    def write(self, name: str, version: str, data: bytes) -> bool:
        from azure.core import MatchConditions

        blob = self._blob(name)
        return self._conditional(lambda: blob.upload_blob(data, overwrite=True, etag=version,
                                                          match_condition=MatchConditions.IfNotModified))

    def _put(self, name: str, data: bytes) -> bool:
        blob = self._blob(name)
        return self._conditional(lambda: blob.upload_blob(data, overwrite=True))

    def length(self, name: str) -> int:
        from azure.core.exceptions import AzureError

        try:
            return int(self._blob(name).get_blob_properties().size)
        except AzureError as error:
            raise StoreError(f"read failed: {type(error).__name__}") from None

    def append(self, name: str, position: int, data: bytes) -> bool:
        blob = self._blob(name)
        return self._conditional(lambda: blob.append_block(data, appendpos_condition=position))

    def exists(self, name: str) -> bool:
        return bool(self._blob(name).exists())

    def delete(self, name: str) -> None:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            self._blob(name).delete_blob()
        except ResourceNotFoundError:
            pass


# -- GCS -----------------------------------------------------------------------------------------------

CREDENTIALS_FILE_ENV = "GOOGLE_APPLICATION_CREDENTIALS"


def _google_cause(error: Exception) -> str:
    """google-auth's reason, in one line: its message, then the error underneath it (a JSON error's position,
    the fields missing), never the file's content."""
    parts = [str(error.args[0])] if error.args else [type(error).__name__]
    parts += [f"{type(cause).__name__}: {cause}" for cause in error.args[1:2] if isinstance(cause, Exception)]
    return " ".join(": ".join(parts).split())

class GCSStore(Store):
    label = "GCS"

    def __init__(self, uri: StoreURI, endpoint_url: Optional[str]):
        super().__init__(uri, endpoint_url)
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import storage

        try:
            client = storage.Client(client_options={"api_endpoint": endpoint_url} if endpoint_url else None)
        except DefaultCredentialsError as error:
            allowed = ("Google application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud auth "
                       "application-default login), or $STORAGE_EMULATOR_HOST for an emulator")
            if os.environ.get(CREDENTIALS_FILE_ENV):  # a file was named: what is wrong with it is the cause
                raise ConfigError("credentials", f"${CREDENTIALS_FILE_ENV}={os.environ[CREDENTIALS_FILE_ENV]}",
                                  f"a credentials file Google's SDK can load ({_google_cause(error)})") from None
            raise ConfigError("credentials", "(none found)", allowed) from None
        self.bucket = client.bucket(uri.bucket)
        self.timeout = (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)

    def check(self) -> None:
        from google.api_core import exceptions
        from google.auth.exceptions import GoogleAuthError
        import requests

        try:
            self.bucket.reload(timeout=self.timeout, retry=None)
        except exceptions.NotFound:
            raise ConfigError("store_uri", str(self.uri), f"an existing bucket ({self.uri.bucket} does not "
                                                          f"exist at {self.describe()})") from None
        except (exceptions.Unauthorized, exceptions.Forbidden, GoogleAuthError) as error:
            raise ConfigError("credentials", "(from Google's default chain)",
                              f"credentials {self.describe()} accepts ({type(error).__name__})") from None
        except requests.exceptions.RequestException as error:
            raise _unreachable(self, error) from None
        except exceptions.GoogleAPIError as error:
            raise ConfigError("store_uri", str(self.uri), f"a bucket {self.describe()} answers "
                                                          f"({type(error).__name__})") from None

    def _upload(self, name: str, data: bytes, generation: Optional[int]) -> bool:
        from google.api_core import exceptions
        import requests

        try:
            self.bucket.blob(name).upload_from_string(data, if_generation_match=generation, retry=None,
                                                      timeout=self.timeout)
            return True
        except exceptions.PreconditionFailed:
            return False
        except (exceptions.GoogleAPIError, requests.exceptions.RequestException) as error:
            raise StoreError(f"upload failed: {type(error).__name__}") from None

    def create(self, name: str, data: bytes, append: bool = False) -> bool:
        return self._upload(name, data, 0)  # generation 0: only if no live object exists

    def read(self, name: str) -> str:
        from google.api_core import exceptions
        import requests

        blob = self.bucket.blob(name)
        self._download(blob)
        try:
            if blob.generation is None:  # an emulator that sends no x-goog-generation header: ask for it
                blob.reload(retry=None, timeout=self.timeout)
        except (exceptions.GoogleAPIError, requests.exceptions.RequestException) as error:
            raise StoreError(f"read failed: {type(error).__name__}") from None
        return str(blob.generation)

    def _download(self, blob) -> bytes:
        """``download_as_bytes``'s request, into a buffer that stops at ``MAX_READ_BYTES``."""
        from google.api_core import exceptions
        import requests

        buffer = _BoundedBuffer()
        try:
            blob.download_to_file(buffer, retry=None, timeout=self.timeout)
        except (exceptions.GoogleAPIError, requests.exceptions.RequestException) as error:
            raise StoreError(f"read failed: {type(error).__name__}") from None
        return buffer.getvalue()

    def read_data(self, name: str) -> bytes:
        return self._download(self.bucket.blob(name))

    def write(self, name: str, version: str, data: bytes) -> bool:
        return self._upload(name, data, int(version))

    def _put(self, name: str, data: bytes) -> bool:
        return self._upload(name, data, None)  # no generation: unconditional

    def exists(self, name: str) -> bool:
        return bool(self.bucket.blob(name).exists(retry=None, timeout=self.timeout))

    def delete(self, name: str) -> None:
        from google.api_core import exceptions

        try:
            self.bucket.blob(name).delete(retry=None, timeout=self.timeout)
        except exceptions.NotFound:
            pass


ADAPTERS = {"s3": S3Store, "az": AzureStore, "gs": GCSStore}


def open_store(uri: StoreURI, endpoint_url: Optional[str]) -> Store:
    """An adapter for ``uri``'s store (not yet checked: call ``check``)."""
    return ADAPTERS[uri.scheme](uri, endpoint_url)

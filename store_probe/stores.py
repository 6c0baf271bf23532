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

    def read(self, name: str) -> str:
        answer = self._get(name)
        answer["Body"].read()
        return answer["ETag"]

    def _put(self, name: str, data: bytes) -> bool:
        return self._conditional(Key=name, Body=data)

    def read_data(self, name: str) -> bytes:
        return self._get(name)["Body"].read()

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


class AzureStore(Store):
    label = "Azure Blob"
    supports_append = True

    def __init__(self, uri: StoreURI, endpoint_url: Optional[str]):
        super().__init__(uri, endpoint_url)
        from azure.storage.blob import BlobServiceClient

        options = dict(retry_total=0, connection_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S)
        connection = os.environ.get(CONNECTION_STRING_ENV)
        if connection and not endpoint_url:
            service = BlobServiceClient.from_connection_string(connection, **options)
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
            raise ConfigError("credentials", "(from the connection string or environment)",
                              f"credentials {self.describe()} accepts (it answered {error.status_code})") from None
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
        from azure.core.exceptions import AzureError

        try:
            download = self._blob(name).download_blob()
            download.readall()
        except AzureError as error:
            raise StoreError(f"read failed: {type(error).__name__}") from None
        return download.properties.etag

    def read_data(self, name: str) -> bytes:
        return self._blob(name).download_blob().readall()

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

class GCSStore(Store):
    label = "GCS"

    def __init__(self, uri: StoreURI, endpoint_url: Optional[str]):
        super().__init__(uri, endpoint_url)
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import storage

        try:
            client = storage.Client(client_options={"api_endpoint": endpoint_url} if endpoint_url else None)
        except DefaultCredentialsError:
            raise ConfigError("credentials", "(none found)", "Google application default credentials "
                                                            "(GOOGLE_APPLICATION_CREDENTIALS, gcloud auth "
                                                            "application-default login), or $STORAGE_EMULATOR_HOST "
                                                            "for an emulator") from None
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
        try:
            blob.download_as_bytes(retry=None, timeout=self.timeout)
            if blob.generation is None:  # an emulator that sends no x-goog-generation header: ask for it
                blob.reload(retry=None, timeout=self.timeout)
        except (exceptions.GoogleAPIError, requests.exceptions.RequestException) as error:
            raise StoreError(f"read failed: {type(error).__name__}") from None
        return str(blob.generation)

    def read_data(self, name: str) -> bytes:
        return self.bucket.blob(name).download_as_bytes(retry=None, timeout=self.timeout)

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

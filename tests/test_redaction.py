"""``simcore.redaction.redact``: no credential of a URI survives it, and nothing else is changed."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.errors import ConfigError
from simcore.redaction import MASK, redact


@pytest.mark.parametrize("uri, shown", [
    ("s3://AKIAEXAMPLE:wJalrXUtnFEMI@lab/results", "s3://***@lab/results"),
    ("s3://AKIAEXAMPLE:wJal%2FrXUtn@lab/results?endpoint_override=127.0.0.1:9000&scheme=http&region=eu-west-1",
     "s3://***@lab/results?endpoint_override=127.0.0.1:9000&scheme=http&region=eu-west-1"),
    ("s3://AKIAEXAMPLE:wJal/rXU+tn@lab/results", "s3://***@lab/results"),  # an unencoded "/" of a secret key
    ("http://user:p@ss@host:9000/x", "http://***@host:9000/x"),  # an unencoded "@" too
    ("http://onlyuser@host", "http://***@host"),
    ("https://acct.blob.core.windows.net/c/b?sv=2024-11-04&ss=b&sp=rw&se=2030-01-01&sig=AbC%2Bd%3D",
     "https://acct.blob.core.windows.net/c/b?sv=***&ss=***&sp=***&se=***&sig=***"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AKIA%2F2024&X-Amz-Signature=ff00&x=1",
     "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=***&X-Amz-Signature=***&x=1"),
    ("s3://lab/p?access_key=A1&secret_key=S1&session_token=T1&db_password=P1&apikey=K1&region=r",
     "s3://lab/p?access_key=***&secret_key=***&session_token=***&db_password=***&apikey=***&region=r"),
    ("gs://bucket/a#access_token=xyz", "gs://bucket/a#access_token=***"),
])
def test_credentials_in_a_uri_are_masked_and_the_rest_kept(uri, shown):
    assert redact(uri) == shown
    assert redact(shown) == shown  # once is enough: redacting again changes nothing


@pytest.mark.parametrize("text", [
    "./results", "/abs/store", "s3://lab/results", "s3://lab/results?endpoint_override=h:1&scheme=http",
    "file:///tmp/store", "az://container/prefix", "mail me@example.com", "ratio 3:1 @ 5 ms", "",
    "http://127.0.0.1:8080/index.html?experiment=exp4c",
])
def test_text_without_credentials_is_unchanged(text):
    assert redact(text) == text


def test_uris_in_running_text_are_masked_and_the_text_around_them_kept():
    text = ("error: store: 's3://K:S3CRET@lab/p' cannot be opened (see http://u:PW0RD@proxy:3128/), "
            "or \"az://c/p?sig=S1GNATURE\".")
    assert redact(text) == ("error: store: 's3://***@lab/p' cannot be opened (see http://***@proxy:3128/), "
                            "or \"az://c/p?sig=***\".")


def test_a_secret_a_library_quotes_outside_any_uri_is_masked_given_its_source():
    uri = "s3://AKIAEXAMPLE:wJal%2FrXUtn@lab/results?endpoint_override=127.0.0.1:9&scheme=http"
    # botocore's words when a URI's user information reached it as part of a bucket name: decoded, no scheme.
    message = 'Invalid bucket name "AKIAEXAMPLE:wJal/rXUtn@lab": Bucket name must match the regex'
    shown = redact(message, uri)
    assert "wJal" not in shown and "AKIAEXAMPLE" not in shown and shown.endswith("must match the regex")
    assert redact("no secret here", uri) == "no secret here"


def test_a_config_error_never_shows_a_credential_but_keeps_the_value():
    uri = "s3://AKIAEXAMPLE:wJalrXUtnFEMI@lab/p"
    error = ConfigError("store_uri", uri, "a URI without credentials")
    assert "wJalrXUtnFEMI" not in str(error) and "AKIAEXAMPLE" not in str(error)
    assert str(error) == "store_uri: 's3://***@lab/p' is not allowed; expected a URI without credentials"
    assert error.value == uri  # for the code that handles it; only the message is redacted
    assert str(ConfigError("seeds", 7, "seeds <= 5")) == "seeds: 7 is not allowed; expected seeds <= 5"


# -- the property: whatever the secret and wherever it sits, it is not in what redact returns -------------------

SECRET = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="@"),
                 min_size=8, max_size=24).map(lambda text: "Zq" + text)  # never all punctuation
SECRET_PARAMETERS = ("access_key", "secret_key", "session_token", "sig", "X-Amz-Signature", "password",
                     "AccountKey", "client_secret", "token")


def _uris(secret: str, parameter: str) -> list[str]:
    encoded = quote(secret, safe="")
    return [f"s3://AKIA:{encoded}@lab/results?endpoint_override=127.0.0.1:9000&scheme=http",
            f"s3://AKIA:{secret}@lab/results",  # written without percent-encoding
            f"s3://{encoded}@lab/results",
            f"https://acct.blob.core.windows.net/c?sv=2024&{parameter}={encoded}",
            f"http://127.0.0.1:9000/x?region=us-east-1&{parameter}={encoded}&scheme=http"]


@settings(max_examples=200, deadline=None)
@given(secret=SECRET, parameter=st.sampled_from(SECRET_PARAMETERS),
       around=st.sampled_from(["{}", "'{}'", '"{}"', "error: {}: boom", "({}).", "store {} cannot be opened"]))
def test_no_generated_secret_survives(secret, parameter, around):
    for uri in _uris(secret, parameter):
        text = around.format(uri)
        for shown in (redact(text), redact(text, uri), str(ConfigError("store", uri, "x"))):
            assert quote(secret, safe="") not in shown, (text, shown)
            if uri.count(secret) and secret not in around:  # written raw: the raw secret must go too
                assert secret not in shown, (text, shown)
        assert MASK in redact(text)

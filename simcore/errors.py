"""The error every bad value raises: ``ConfigError``, naming the field, the value and what is allowed.

It lives below every other simcore module (it imports only the pure
``simcore.redaction``), so the config, the client presets, the provider
profiles and the command line can all raise it without importing one
another. Its message never shows a credential: a URI among the values
(``--store s3://KEY:SECRET@...``) is shown redacted.
"""

from __future__ import annotations

from typing import Any

from simcore.redaction import redact


class ConfigError(ValueError):
    """A config value is out of range. ``field`` names the offending field."""

    def __init__(self, field: str, value: Any, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        shown = redact(value, value) if isinstance(value, str) else value
        super().__init__(redact(f"{field}: {shown!r} is not allowed; expected {allowed}"))

    def __reduce__(self):
        # Rebuilt from its parts, so the same one line reaches the user from a worker process or a Ray task.
        return self.__class__, (self.field, self.value, self.allowed)

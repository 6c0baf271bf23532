"""A route through the store lab's latency proxy to a server a run starts itself (``scripts/store-lab.sh up``).

The REST catalog's writers reach its server across the network, and the server sits beside its database, as a
deployed catalog does: ``with LabRoute(port) as proxied_port:`` adds a toxiproxy proxy on 127.0.0.1 in front of
``port``, with the lab's delay and jitter each way (``STORE_LAB_TOXIPROXY``, ``STORE_LAB_DELAY_MS``,
``STORE_LAB_JITTER_MS`` from ``eval "$(scripts/store-lab.sh env)"``), and removes it on exit.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
import uuid

from studies.real_clients.errors import SetupError


def lab_proxy_api(environ=os.environ) -> str | None:
    """The lab's toxiproxy API (``http://127.0.0.1:PORT``), or None when no lab runs."""
    return environ.get("STORE_LAB_TOXIPROXY") or None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LabRoute:
    """``with LabRoute(port) as proxied:`` 127.0.0.1:``proxied`` reaches 127.0.0.1:``port`` with the lab's delay."""

    def __init__(self, upstream_port: int, environ=os.environ):
        api = lab_proxy_api(environ)
        if api is None:
            raise SetupError("lab route: STORE_LAB_TOXIPROXY is not set; run eval \"$(scripts/store-lab.sh env)\"")
        self.api, self.upstream_port = api.rstrip("/"), upstream_port
        self.delay_ms = int(environ.get("STORE_LAB_DELAY_MS", "0"))
        self.jitter_ms = int(environ.get("STORE_LAB_JITTER_MS", "0"))
        self.name = f"route_{uuid.uuid4().hex[:8]}"
        self.port = 0

    def _call(self, method: str, path: str, body: dict | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except (urllib.error.URLError, OSError) as error:
            raise SetupError(f"lab route: toxiproxy at {self.api} refused {method} {path}: {error}") from None

    def __enter__(self) -> int:
        self.port = _free_port()
        self._call("POST", "/proxies", {"name": self.name, "listen": f"127.0.0.1:{self.port}",
                                        "upstream": f"127.0.0.1:{self.upstream_port}"})
        if self.delay_ms or self.jitter_ms:
            for stream in ("upstream", "downstream"):
                self._call("POST", f"/proxies/{self.name}/toxics",
                           {"name": f"delay_{stream}", "type": "latency", "stream": stream,
                            "attributes": {"latency": self.delay_ms, "jitter": self.jitter_ms}})
        return self.port

    def __exit__(self, *exc) -> None:
        try:
            self._call("DELETE", f"/proxies/{self.name}")
        except SetupError:
            pass  # the lab went down first: nothing left to remove

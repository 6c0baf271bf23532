"""moto's S3 server (``python -m moto.server``'s arguments) with each write under one lock: an atomic store.

moto checks a conditional write's precondition and then writes, without a lock between them, so on a loaded
machine two writers on one version can both win: `commit-sweeps probe` then rightly refuses it. The probe's
tests need a store whose conditional writes are atomic, as the stores they stand for are; reads stay concurrent.
"""

from __future__ import annotations

import threading

import moto.server
from moto.moto_server.werkzeug_app import DomainDispatcherApplication

_writes = threading.Lock()
_dispatch = DomainDispatcherApplication.__call__


def _one_write_at_a_time(self, environ, start_response):
    if environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
        return _dispatch(self, environ, start_response)
    with _writes:
        return list(_dispatch(self, environ, start_response))  # the whole answer made under the lock


DomainDispatcherApplication.__call__ = _one_write_at_a_time

if __name__ == "__main__":
    moto.server.main()

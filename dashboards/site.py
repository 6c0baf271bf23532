"""Assemble the static site: the page, its scripts, and the data they draw.

The site is a handful of files with no outside references (no CDN, no
fonts, no network calls), so it works opened from disk, served by
``python -m dashboards serve``, or copied anywhere. The data travels as
``data.js`` (``window.DASHBOARD_DATA = {...}``) rather than a JSON file
fetched at run time, because browsers refuse ``fetch`` from ``file://``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from typing import Mapping

from dashboards.payload import build_payload, filter_values
from dashboards.snapshot import StoreSnapshot, read_store

# The page's scripts, in load order (index.html lists them so): the core, then one file per view.
SCRIPT_FILES = ("charts.js", "page.js", "variants.js", "view-frontier.js", "view-heatmaps.js", "view-curves.js",
                "view-tables.js", "view-spread.js", "view-published.js", "view-zipf.js", "view-knee.js",
                "view-throttle.js", "view-retry.js", "view-append.js", "view-provenance.js", "main.js")
STATIC_FILES = ("index.html", "style.css") + SCRIPT_FILES
DATA_FILE = "data.js"
SITE_FILES = STATIC_FILES + (DATA_FILE,)


@dataclass(frozen=True)
class Site:
    """A built site held in memory.

    Attributes:
        files: file name -> content, exactly the files of the site.
        filters: URL filter name -> the values this site knows.
        payload: the data the page draws.
        build_s: seconds spent reading the store and computing.
    """

    files: Mapping[str, bytes]
    filters: Mapping[str, frozenset]
    payload: Mapping
    build_s: float


def data_script(payload: Mapping) -> bytes:
    # allow_nan=False: a NaN slipping through would make the script invalid.
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return ("window.DASHBOARD_DATA = " + text + ";\n").encode("ascii")


def render_site(snapshot: StoreSnapshot) -> Site:
    """Compute the payload of ``snapshot`` and the site's files, in memory."""
    started = time.perf_counter()
    payload = build_payload(snapshot)
    static = resources.files("dashboards").joinpath("static")
    files = {name: static.joinpath(name).read_bytes() for name in STATIC_FILES}
    files[DATA_FILE] = data_script(payload)
    filters = {name: frozenset(values) for name, values in filter_values(payload).items()}
    return Site(files=files, filters=filters, payload=payload, build_s=time.perf_counter() - started)


def write_site(site: Site, out_dir: str) -> str:
    """Write the site's files into ``out_dir`` (created if needed); returns index.html's path.

    Each file is written to a temporary name and renamed into place, so a
    browser or server reading the directory never sees half a file. Other
    files in ``out_dir`` are left alone.
    """
    os.makedirs(out_dir, exist_ok=True)
    for name, content in site.files.items():
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=out_dir)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
            os.chmod(temporary, 0o644)
            os.replace(temporary, os.path.join(out_dir, name))
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    return os.path.join(out_dir, "index.html")


def build_site(store_uri: str, out_dir: str) -> Site:
    """Read the store at ``store_uri`` and write its dashboard into ``out_dir``.

    Raises:
        StoreError: the store cannot be read.
    """
    started = time.perf_counter()
    snapshot = read_store(store_uri)
    site = render_site(snapshot)
    write_site(site, out_dir)
    return Site(files=site.files, filters=site.filters, payload=site.payload,
                build_s=time.perf_counter() - started)

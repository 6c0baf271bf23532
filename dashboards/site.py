"""Assemble the static site: the page, its scripts, and the data they draw.

The site is a handful of files with no outside references (no CDN, no
fonts, no network calls), so it works opened from disk, served by
``python -m dashboards serve``, or copied anywhere. The data travels as
``data.js`` (``window.DASHBOARD_DATA = {...}``) rather than a JSON file
fetched at run time, because browsers refuse ``fetch`` from ``file://``.

index.html is rendered from ``static/index.html`` and the page's registry
(``dashboards.registry``): its table of contents, one numbered section per
view and the script tags, so the list of views and scripts is kept once.
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from typing import Mapping

from dashboards.payload import build_payload, filter_values
from dashboards.registry import SCRIPTS, VIEWS, PageView
from dashboards.snapshot import StoreSnapshot, read_store

PAGE_FILE = "index.html"  # rendered from static/index.html and the registry
STATIC_FILES = (PAGE_FILE, "style.css") + SCRIPTS
DATA_FILE = "data.js"
SITE_FILES = STATIC_FILES + (DATA_FILE,)
# Where the registry's parts go in static/index.html (each once).
_SLOTS = ("<!-- registry: nav -->", "<!-- registry: sections -->", "<!-- registry: scripts -->")


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


def _text_html(text: str) -> str:
    """Escaped text; `backticks` become code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text, quote=False))


def render_page(template: str, views=VIEWS, scripts=SCRIPTS) -> str:
    """index.html: ``template`` with the table of contents, one numbered section per view, and the scripts."""
    for slot in _SLOTS:
        if template.count(slot) != 1:
            raise ValueError(f"static/index.html: expected {slot} once, found it {template.count(slot)} times")
    nav = "\n".join(f'    <a href="#{view.id}">{_text_html(view.nav)}</a>' for view in views)
    sections = "\n".join(_section_html(number, view) for number, view in enumerate(views, start=1))
    tags = "\n".join(f'<script src="{name}"></script>' for name in (DATA_FILE,) + tuple(scripts))
    for slot, part in zip(_SLOTS, (nav, sections, tags)):
        template = template.replace(slot, part)
    return template


def _section_html(number: int, view: PageView) -> str:
    lead = f'\n    <p class="lead">{_text_html(view.lead)}</p>' if view.lead else ""
    return (f'  <section id="{view.id}">\n    <h2>{number}. {_text_html(view.title)}</h2>{lead}\n'
            f'    <div id="{view.id}-body"></div>\n  </section>')


def render_site(snapshot: StoreSnapshot) -> Site:
    """Compute the payload of ``snapshot`` and the site's files, in memory."""
    started = time.perf_counter()
    payload = build_payload(snapshot)
    static = resources.files("dashboards").joinpath("static")
    files = {name: static.joinpath(name).read_bytes() for name in STATIC_FILES if name != PAGE_FILE}
    files[PAGE_FILE] = render_page(static.joinpath(PAGE_FILE).read_text(encoding="utf-8")).encode("utf-8")
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

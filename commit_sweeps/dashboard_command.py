"""``commit-sweeps dashboard build|serve|compare`` (also ``python -m dashboards ...``).

    commit-sweeps dashboard build --store ./results --out ./site
    commit-sweeps dashboard serve --store ./results [--host 127.0.0.1] [--port 8080]
    commit-sweeps dashboard compare --store ./results [--experiment retry_policies]

``--store`` defaults to ``$SWEEPS_STORE``, else ``./results``. A store that
cannot be read, or an output folder that cannot be written, ends the command
with a one-line reason (exit status 2), not a traceback; an empty store
builds a page that says so.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Optional, Sequence

from simcore.errors import ConfigError
from simcore.redaction import redact
from dashboards.site import render_site, write_site
from dashboards.snapshot import StoreError, read_store
from ray_jobs.knee_curves import knee_experiment_name
from commit_sweeps.flags import EXIT_BAD_INPUT, add_store_flag, bad_input, check_output_path, default_store_uri, \
    output_path


DASHBOARD_HELP = "build, serve or compare the results dashboard of a results store"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dashboards",
                                     description="Build or serve the results dashboard of a results store.")
    configure(parser)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    """The dashboard's subcommands: ``python -m dashboards ...`` and ``commit-sweeps dashboard ...``."""
    commands = parser.add_subparsers(dest="dashboard_command", required=True)

    build = commands.add_parser("build", help="write a self-contained static site")
    add_store_flag(build)
    build.add_argument("--out", default="./site", type=output_path, help="directory to write the site into (default ./site)")

    serve = commands.add_parser("serve", help="serve the dashboard over HTTP (read-only)")
    add_store_flag(serve)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8080, help="TCP port (default 8080; 0 picks a free one)")
    serve.add_argument("--refresh-s", type=float, default=5.0,
                       help="look for store changes at most this often, in seconds; -1 never (default 5)")
    serve.add_argument("--quiet", action="store_true", help="do not log each request")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="also answer requests whose Host header is NAME (repeatable); on loopback only "
                            "loopback names are answered, elsewhere any unless names are given")

    compare = commands.add_parser("compare", help="print the variant comparisons (throttle, retry policies, "
                                                  "append catalog) as text")
    add_store_flag(compare)
    compare.add_argument("--experiment", action="append", metavar="NAME",
                         help="only this study (repeatable; default: every study the store holds, e.g. "
                              "gcs_throttle, retry_policies, append_catalog)")


def _summary(site) -> str:
    store = site.payload["store"]
    studies = site.payload["studies"]
    text = (f"{store['rows']} rows in {len(studies)} "
            f"{'study' if len(studies) == 1 else 'studies'} ({', '.join(s['label'] for s in studies) or 'none'})")
    if store["skipped_files"]:
        text += f"; skipped {len(store['skipped_files'])} unreadable file(s)"
        for item in store["skipped_files"]:  # reported once: a quarantined file is out of the way next time
            where = f"; moved to {item['quarantined_to']}" if item.get("quarantined_to") else "; left in place"
            print(f"warning: {item['path']}: {item['reason']}{where}", file=sys.stderr)
    return text


def _build(args) -> int:
    store = args.store or default_store_uri()
    shown = redact(store, store)  # the store as printed: its credentials masked
    # dashboards.site.build_site's steps, one at a time: a failure reading is the store's, only one writing
    # is --out's (a store that refuses its keys is not a site folder that cannot be written).
    started = time.perf_counter()
    try:
        check_output_path(args.out, directory=True)
    except ConfigError as error:
        return bad_input(error)
    try:
        snapshot = read_store(store)
    except OSError as error:  # read_store raises StoreError for what it foresees
        raise StoreError(f"cannot read the results store {shown!r}: {error}") from None
    site = render_site(snapshot)
    try:
        write_site(site, args.out)
    except OSError as error:
        print(f"error: --out: cannot write the site to {args.out!r}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"Built the dashboard of {shown}: {_summary(site)}, in {time.perf_counter() - started:.2f} s.")
    if not site.payload["studies"]:
        print(f"note: the store {shown} holds no results yet; the page says so.", file=sys.stderr)
    print(f"Open {os.path.abspath(os.path.join(args.out, 'index.html'))}")
    return 0


def _serve(args) -> int:
    from dashboards.server import listen_error, make_server  # only serving needs the server

    if not 0 <= args.port <= 65535:
        print(f"error: --port: {args.port} is not allowed; expected 0..65535", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not (math.isfinite(args.refresh_s) and (args.refresh_s >= 0 or args.refresh_s == -1)):
        print(f"error: --refresh-s: {args.refresh_s} is not allowed; expected a number of seconds >= 0 "
              f"(0: look at the store on every page request), or -1 for never", file=sys.stderr)
        return EXIT_BAD_INPUT
    store = args.store or default_store_uri()
    shown = redact(store, store)  # the store as printed: its credentials masked
    try:
        server = make_server(store, host=args.host, port=args.port, refresh_s=args.refresh_s, quiet=args.quiet,
                             log=lambda message: print(message, file=sys.stderr, flush=True),
                             allowed_hosts=args.allow_host)
    except OSError as error:
        print(f"error: {listen_error(args.host, args.port, error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (UnicodeError, TypeError):  # the socket layer cannot encode the name ("encoding of hostname failed")
        print(f"error: --host: {args.host!r} is not allowed; expected a host name or address", file=sys.stderr)
        return EXIT_BAD_INPUT
    host, port = server.server_address[:2]
    shown_host = f"[{host}]" if ":" in host else host
    print(f"Serving the dashboard of {shown} ({_summary(server.dashboard_state.site)}) "
          f"at http://{shown_host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _compare(args) -> int:
    from dashboards.report import comparisons_of, format_comparison, format_searched, searched_knees, summary_line

    store = args.store or default_store_uri()
    shown = redact(store, store)  # the store as printed: its credentials masked
    snapshot = read_store(store)
    comparisons = comparisons_of(snapshot, args.experiment)
    if not comparisons:
        wanted = ", ".join(args.experiment) if args.experiment else "any study"
        print(f"note: the store {shown} holds no runs of {wanted}; fill one with e.g. "
              f"commit-sweeps sweep retry_policies --quick (commit-sweeps sweep --help lists them)", file=sys.stderr)
        return 0
    snapshot_summaries = {summary.experiment: summary for summary in snapshot.knee_summaries}
    blocks = []
    for comparison in comparisons:
        blocks.append(format_comparison(comparison) + "\n  " + summary_line(comparison))
        summary = snapshot_summaries.get(knee_experiment_name(comparison.spec.experiment))
        if summary is not None and summary.content is not None:
            blocks.append(format_searched(comparison, searched_knees(comparison, summary.content)))
    print("\n\n".join(blocks))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    commands = {"build": _build, "serve": _serve, "compare": _compare}
    try:
        return commands[args.dashboard_command](args)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT

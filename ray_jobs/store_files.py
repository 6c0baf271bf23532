"""What the results store's files must be, and what healing does about those that are not: pure functions.

A data file is named ``part-<keys>-<content>.parquet`` (``keys_digest``, ``content_digest``); its rows must
belong under that name (``key_problem``); of files holding the same keys the later-finished is kept
(``superseded``), and a file every row of which another holds identically is a copy (``copies``); a plan
must have a plan's shape (``plan_problem``) and no document nests deeper than ours (``depth``). The I/O that
applies these lives in ``ray_jobs.store``.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta, timezone
from typing import Optional

import pyarrow as pa
import pyarrow.compute as pc

from ray_jobs.schema import KEY_COLUMNS

FUTURE_SLACK = timedelta(days=1)  # clocks differ; a finished_at further ahead than this is forged or broken
MAX_DOCUMENT_DEPTH = 32  # plans and summaries nest a few levels; deeper is not one of ours


def depth(value, limit: int = MAX_DOCUMENT_DEPTH + 1) -> int:
    """How deeply ``value`` nests lists and mappings, counted up to ``limit``."""
    depth, level = 0, [value]
    while level and depth < limit:
        children = []
        for item in level:
            if isinstance(item, dict):
                children += item.values()
            elif isinstance(item, list):
                children += item
        if not children:
            break
        depth, level = depth + 1, children
    return depth


def plan_problem(plan) -> Optional[str]:
    """Why ``plan`` is not a sweep plan as ``SweepPlan.record`` writes one, or None."""
    if not isinstance(plan, dict):
        return f"not a sweep plan: a JSON {type(plan).__name__}, expected an object"
    seeds, hashes = plan.get("seeds"), plan.get("config_hashes")
    if not isinstance(seeds, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        return "not a sweep plan: 'seeds' is not a list of integers"
    if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
        return "not a sweep plan: 'config_hashes' is not a list of strings"
    return None



def superseded(tables: dict[str, pa.Table]) -> set[str]:
    """The verified files that a later-finished verified file of the same keys (the same ``part-<keys>`` stem) replaces.

    A writer replaces a file by writing the new one and then deleting the old; killed in
    between, it leaves both. Which one is newer is read from the rows (``finished_at``), never
    from the files' modification times, which a copy, an rsync or a restore resets. A file is
    superseded only when, key by key, the kept file's row finished later or is the same row;
    a file holding any row newer than the kept one's (or a different row finished at the same
    instant) is kept too, so deleting never loses a row, and readers still pick the latest row
    per key. Only verified files take part: a damaged or empty file under the same stem is
    quarantined, never counted as the newer copy.
    """
    by_stem: dict[tuple[str, str], list[str]] = {}
    for path in tables:
        by_stem.setdefault((path.rsplit("/", 1)[0], name_parts(path)[0]), []).append(path)
    superseded = set()
    for group in by_stem.values():
        if len(group) < 2:
            continue
        rows = {path: rows_by_key(tables[path]) for path in group}
        latest = {path: max((finished for finished, _ in rows[path].values()), default=None) for path in group}
        kept = max(group, key=lambda path: (latest[path] is not None, latest[path] or 0, path))
        for path in group:
            if path != kept and all(replaced_by(row, rows[kept].get(key)) for key, row in rows[path].items()):
                superseded.add(path)
    return superseded


def rows_by_key(table: pa.Table) -> dict[tuple, tuple]:
    """key -> (finished_at, the whole row as comparable text)."""
    keys = zip(*(table.column(name).to_pylist() for name in KEY_COLUMNS))
    return {key: (row["finished_at"], repr(sorted(row.items()))) for key, row in zip(keys, table.to_pylist())}


def replaced_by(row: tuple, kept: Optional[tuple]) -> bool:
    """Whether the kept file's row for the same key makes ``row`` redundant: it finished later, or is identical."""
    return kept is not None and (kept[0] > row[0] or kept[1] == row[1])


def copies(tables: dict[str, pa.Table]) -> set[str]:
    """Verified files every row of which another verified file holds too, identical.

    These are the files a merge (``ResultsStore.merge_files``) replaced, left behind by a writer
    killed after writing the merged file and before deleting them. Deleting one changes nothing
    any reader returns. Smaller files are judged first, so of two files only the smaller can be
    the copy; a row that differs in any value (another writer's, a forged one) keeps its file.
    """
    keys_of = {path: list(zip(*(table.column(name).to_pylist() for name in KEY_COLUMNS)))
               for path, table in tables.items()}
    holders: dict[tuple, list[str]] = {}
    for path, keys in keys_of.items():
        for key in keys:
            holders.setdefault(key, []).append(path)
    shared = {key for key, paths in holders.items() if len(paths) > 1}
    if not shared:
        return set()  # the usual case: no key in two files, nothing more to read
    shared_rows: dict[str, dict] = {}

    def rows_of(path: str) -> dict:
        """key -> the row as comparable text, for ``path``'s rows whose keys are shared."""
        if path not in shared_rows:
            picked = tables[path].filter(pa.array([key in shared for key in keys_of[path]])).to_pylist()
            shared_rows[path] = {tuple(row[name] for name in KEY_COLUMNS): repr(sorted(row.items()))
                                 for row in picked}
        return shared_rows[path]

    copies: set[str] = set()
    candidates = sorted({path for key in shared for path in holders[key]}, key=lambda p: (tables[p].num_rows, p))
    for path in candidates:
        keys = keys_of[path]
        if len(set(keys)) != len(keys) or any(key not in shared for key in keys):
            continue  # some row is only here
        mine = rows_of(path)
        if all(any(rows_of(other)[key] == row for other in holders[key] if other != path and other not in copies)
               for key, row in mine.items()):
            copies.add(path)
    return copies



def same_kind(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a column of type ``actual`` may be read as ``expected`` (a lossless widening at most)."""
    if actual == expected:
        return True
    for check in (pa.types.is_integer, pa.types.is_floating, pa.types.is_timestamp):
        if check(expected):
            return check(actual) or (check is pa.types.is_floating and pa.types.is_integer(actual))
    if pa.types.is_string(expected):
        return pa.types.is_string(actual) or pa.types.is_large_string(actual)
    if pa.types.is_boolean(expected):
        return pa.types.is_boolean(actual)
    if pa.types.is_list(expected):
        return (pa.types.is_list(actual) or pa.types.is_large_list(actual)) \
            and same_kind(actual.value_type, expected.value_type)
    return False



def slug(reason: str) -> str:
    """A short name for why a file failed, for its quarantined name."""
    for prefix, slug in (("not written by", "foreign"), ("content does not match", "digest"), ("too large", "size"),
                         ("not a ", "document"), ("JSON", "document"),
                         ("missing columns", "schema"), ("column ", "schema"), ("rows break", "schema"),
                         ("keys:", "keys")):
        if reason.startswith(prefix):
            return slug
    return "undecodable"


def key_problem(path: str, rows: pa.Table) -> Optional[str]:
    """Why the verified rows of ``path`` do not belong under its name, or None."""
    experiment = path.rsplit("/", 2)[-2]
    names = set(rows.column("experiment").to_pylist())
    if names - {experiment}:
        return f"keys: rows of experiment(s) {sorted(names - {experiment})} in the folder of {experiment!r}"
    stem, _ = name_parts(path)
    if stem != f"part-{keys_digest(rows)}":
        return "keys: the rows' keys do not match the keys digest in the file's name"
    latest = pc.max(rows.column("finished_at")).as_py() if rows.num_rows else None
    if latest is not None and latest > datetime.now(timezone.utc) + FUTURE_SLACK:
        return f"keys: finished_at {latest.isoformat()} is in the future"
    return None



def keys_digest(rows: pa.Table) -> str:
    keys = zip(*(rows.column(name).to_pylist() for name in KEY_COLUMNS))
    text = "\n".join(f"{experiment}/{config_hash}/{seed}" for experiment, config_hash, seed in keys)
    return hashlib.sha256(text.encode()).hexdigest()[:20]



CONTENT_DIGEST_HEX = 32
NAME_WITH_DIGEST = re.compile(r"^(?P<stem>.+)-(?P<digest>[0-9a-f]{%d})\.parquet$" % CONTENT_DIGEST_HEX)


def content_digest(data: pa.Buffer) -> str:
    return hashlib.sha256(memoryview(data)).hexdigest()[:CONTENT_DIGEST_HEX]


def name_parts(path: str) -> tuple[str, Optional[str]]:
    """(stem, content digest) of a data file name; digest None for files named otherwise."""
    name = path.rsplit("/", 1)[-1]
    match = NAME_WITH_DIGEST.match(name)
    if match is None:
        return name[: -len(".parquet")], None
    return match["stem"], match["digest"]


def latest_per_key(rows: pa.Table) -> pa.Table:
    """One row per key: the one with the latest finished_at."""
    if rows.num_rows == 0:
        return rows
    order = pc.sort_indices(rows, sort_keys=[(name, "ascending") for name in KEY_COLUMNS]
                            + [("finished_at", "descending")])
    ordered = rows.take(order)
    keep, previous = [], None
    for key in zip(*(ordered.column(name).to_pylist() for name in KEY_COLUMNS)):
        keep.append(key != previous)
        previous = key
    return ordered.filter(pa.array(keep))

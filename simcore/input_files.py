"""Reading a user's input file (a measurements CSV, a provider profile) safely, before any work.

Every file a user names goes through ``read_text``, so each command refuses
the same things in the same one line: a path that is not a regular file
(``/dev/zero``, a FIFO, a directory: reading one could never end, or end
only after gigabytes), a file larger than its kind ever needs to be, and
bytes that are not UTF-8 (named with the file and the line of the first bad
byte). A UTF-8 byte-order mark, which spreadsheets write when they save
"CSV UTF-8", is accepted and dropped, so the first column's name is read as
written.
"""

from __future__ import annotations

import os
import stat

from simcore.errors import ConfigError

BYTE_ORDER_MARK = b"\xef\xbb\xbf"


def read_text(path: str, field: str, max_bytes: int, kind: str) -> str:
    """The text of the regular file ``path``, at most ``max_bytes`` long.

    Args:
        path: the file the user named.
        field: the flag or field named in errors (``table``, ``provider_file``).
        max_bytes: the largest file accepted.
        kind: what the file should be, for errors (``a CSV file``).

    Raises:
        ConfigError: one line naming the field, the path and why.
    """
    try:
        status = os.stat(path)  # before opening: opening a FIFO would wait for a writer
        if stat.S_ISDIR(status.st_mode) or not stat.S_ISREG(status.st_mode):
            what = "a directory" if stat.S_ISDIR(status.st_mode) else "not one"
            raise ConfigError(field, path, f"{kind} (a regular file; this is {what})")
        if status.st_size > max_bytes:
            raise ConfigError(field, path, f"{kind} of at most {max_bytes // 2**20} MiB "
                                           f"(this one is {status.st_size / 2**20:.1f} MiB)")
        with open(path, "rb") as handle:
            # As large as the file, not the limit: read(n) allocates n bytes first, whatever the file holds.
            data = handle.read(min(status.st_size, max_bytes) + 1)
            if len(data) > status.st_size:  # it grows while being read: up to one byte past the limit
                data += handle.read(max_bytes + 1 - len(data))
    except OSError as error:
        raise ConfigError(field, path, f"a readable {kind.removeprefix('a ')} ({error.strerror})") from None
    if len(data) > max_bytes:  # it grew while being read
        raise ConfigError(field, path, f"{kind} of at most {max_bytes // 2**20} MiB")
    if data.startswith(BYTE_ORDER_MARK):
        data = data[len(BYTE_ORDER_MARK):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(field, path, f"{kind} in UTF-8 (line {line} has the byte "
                                       f"0x{data[error.start]:02x}, which is not UTF-8)") from None

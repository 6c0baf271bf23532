"""The proof a store must pass before a probe measures it: its conditional writes are atomic.

A store whose conditional write is not a compare-and-swap would make every
figure the probe reports wrong (no refusals, or two winners for one
version), so the probe refuses it, by name, before measuring:

1. create-if-absent: creating the probe's object with If-None-Match: * (GCS:
   generation 0) succeeds once and is refused the second time;
2. a stale version is refused: a write (or append) against the version (or
   length) read before the last successful one is refused;
3. one winner: ``writers`` clients, each with its own connection, read the
   same version, meet at a barrier and write against it at once; exactly
   one write may succeed, in every one of ``rounds`` rounds, and the object
   then holds the winner's bytes (or, appending, grew by one append).

A proxy or gateway that drops the condition headers fails step 1 or 2; a
store that checks the condition and then writes without a lock fails
step 3 when two writes fall in that gap.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from simcore.errors import ConfigError
from store_probe.stores import Store, StoreError

RACE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Proof:
    """What the proof saw: the rounds raced and the winners of each."""

    rounds: int
    writers: int
    winners: tuple[int, ...]


def _refuse(store: Store, what: str) -> ConfigError:
    return ConfigError("store_uri", store.describe(), f"a store whose conditional writes are atomic: {what}; "
                                                      "the probe measures only such a store")


def prove(stores: Sequence[Store], name: str, operation: str, rounds: int, progress: Callable[[str], None]) -> Proof:
    """Raise ConfigError unless ``stores`` (one per racing writer, ``stores[0]`` also for the checks) behave
    atomically on ``name``, which must not exist yet and exists (created by the proof) afterwards."""
    store = stores[0]
    append = operation == "append"
    try:
        if not store.create(name, b"0" * 64, append=append):
            raise _refuse(store, f"creating a new object with If-None-Match: * was refused ({name})")
        if store.create(name, b"1" * 64, append=append):
            raise _refuse(store, "creating an object that exists with If-None-Match: * succeeded (the store or a "
                                 "proxy on the way ignores the condition)")
        if append:
            position = store.length(name)
            if not store.append(name, position, b"a" * 16):
                raise _refuse(store, f"an append at the object's length ({position}) was refused")
            if store.append(name, position, b"b" * 16):
                raise _refuse(store, f"an append at a stale position ({position}, the object is "
                                     f"{position + 16} bytes) succeeded: no conditional append")
        else:
            version = store.read(name)
            if not store.write(name, version, b"2" * 64):
                raise _refuse(store, "a write against the version just read was refused")
            if store.write(name, version, b"3" * 64):
                raise _refuse(store, "a write against a stale version succeeded (the store or a proxy on the way "
                                     "ignores If-Match)")
        winners = []
        for round_ in range(1, rounds + 1):
            before = store.length(name) if append else 0
            won = _race(stores, name, append, round_)
            winners.append(len(won))
            if len(won) != 1:
                raise _refuse(store, f"{len(won)} of {len(stores)} concurrent writers on one version won in round "
                                     f"{round_} of {rounds}")
            if append:
                if store.length(name) != before + len(_body(round_, won[0])):
                    raise _refuse(store, f"after round {round_} the object did not grow by exactly one append")
            else:
                data = store.read_data(name)
                if data != _body(round_, won[0]):
                    raise _refuse(store, f"after round {round_} the object holds bytes no winner wrote")
        progress(f"probe: {store.describe()}: conditional writes are atomic (stale version refused; one winner of "
                 f"{len(stores)} concurrent writers in each of {rounds} rounds)")
        return Proof(rounds, len(stores), tuple(winners))
    except StoreError as error:
        what = "appends (a conditional append at the object's length)" if append else "writes"
        raise ConfigError("store_uri", store.describe(), f"a store that answers conditional {what} ({error})") \
            from None


def _body(round_: int, writer: int) -> bytes:
    return f"round {round_} writer {writer} ".encode().ljust(64, b".")


def _race(stores: Sequence[Store], name: str, append: bool, round_: int) -> list[int]:
    """One round: every writer reads the object, then all write against what they read at once. The winners."""
    start = threading.Barrier(len(stores))
    results: list = [None] * len(stores)

    def writer(index: int) -> None:
        try:
            store = stores[index]
            seen = store.length(name) if append else store.read(name)
            start.wait(timeout=RACE_TIMEOUT_S)
            results[index] = (store.append(name, seen, _body(round_, index)) if append
                              else store.write(name, seen, _body(round_, index)))
        except BaseException as error:  # handed to the caller below
            results[index] = error
            start.abort()

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(RACE_TIMEOUT_S)
    for result in results:
        if isinstance(result, StoreError):
            raise result
        if isinstance(result, BaseException) or result is None:
            raise StoreError(f"a racing writer did not finish ({result!r})")
    return [i for i, won in enumerate(results) if won]

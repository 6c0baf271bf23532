"""``commit-sweeps probe``: seed 000's conditional-write benchmark against a real object store.

Pure parts (no network, no SDK): ``uri`` (the ``--store-uri`` grammar) and
``samples`` (ops to the samples CSV ``fit --samples`` reads and to ``bench
--json``'s keys). I/O at the edges: ``stores`` (one adapter per SDK),
``atomicity`` (the proof a store must pass before it is measured),
``clients`` (the client processes and their own overhead) and ``command``
(flags, progress, clean-up).
"""

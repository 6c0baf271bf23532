"""sweeps: one file per study, each a grid declaration (``ray_jobs.grid.Grid``).

Run one with ``python sweeps/exp4c.py --help``; ``sweeps/all.py`` runs
seed 001's grids in one fan-out and ``sweeps/knee.py`` searches knees.
``sweeps.catalog`` finds every grid file, so a new study is one new file
here. The fan-out, the store and the flags live in ray_jobs.
"""

"""sweeps: one runnable script per experiment of seed 001, each a grid declaration.

Run one with ``python sweeps/exp4c.py --help``; ``sweeps/all.py`` runs every
grid in one fan-out. The fan-out, the store and the flags live in ray_jobs.
"""

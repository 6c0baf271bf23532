"""sweeps: one grid declaration per study (a ray_jobs Grid), each file also the script that sweeps it."""

# python sweeps/exp4c.py --help; sweeps/all.py runs seed 001's grids in one fan-out, sweeps/knee.py searches
# knees; sweeps.catalog finds every grid file, so a new study is one new file here.

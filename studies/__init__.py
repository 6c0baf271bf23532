"""Evidence: one package per study, each run as ``python -m studies.<name>`` from the repository root.

A study holds its script(s) and ``results/``, the dated CSV or JSON files its runs wrote
(``studies/results.py``); its README says what it asks and what the last run found.
"""

"""Lab stores (MinIO, Azurite, fake-gcs-server): predicted from a fit of 1-4 clients vs probed.

Run from the repository root:

    python -m studies.real_stores [flags]
"""

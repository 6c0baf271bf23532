"""Delta-rs and PyIceberg writers on the lab's S3: predicted vs measured.

Run from the repository root:

    python -m studies.real_clients [flags]
    python -m studies.real_clients.request_trace [flags]
    python -m studies.real_clients.delta_call_cpu [flags]
"""

"""``python -m dashboards build|serve|compare``: an entry point (``commit_sweeps.dashboard_command``)."""

from commit_sweeps.dashboard_command import main

raise SystemExit(main())

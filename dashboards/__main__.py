"""``python -m dashboards``: see ``dashboards.cli``."""

from dashboards.cli import main

raise SystemExit(main())

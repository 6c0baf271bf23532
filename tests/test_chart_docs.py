"""The chart's values table (charts/sweep-cluster/README.md) is what helm-docs makes of values.yaml.

helm-docs is built by scripts/install-helm-docs.sh at a pinned version (another version may lay the
table out differently). Like helm for the other chart tests, it is found through $HELM_DOCS, then
PATH, then that script's cache; without it these tests skip on a developer machine and fail in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from test_chart_support import CHART_DIR, REPO_ROOT, built_tool, missing_tool

HELM_DOCS_VERSION = "v1.14.2"   # keep in step with scripts/install-helm-docs.sh
README = CHART_DIR / "README.md"
ROW = re.compile(r"^\| (?P<key>[^ |]+) \| (?P<type>[^|]+) \| (?P<default>.*) \| (?P<description>.*) \|$")


def cached_helm_docs() -> Path:
    tools_dir = os.environ.get("SWEEPS_TOOLS_DIR")
    if not tools_dir:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        tools_dir = str(Path(cache) / "commit-sweeps" / "tools")
    return Path(tools_dir) / f"helm-docs-{HELM_DOCS_VERSION}" / "bin" / "helm-docs"


def helm_docs_binary() -> str:
    for candidate in (os.environ.get("HELM_DOCS") or built_tool("helm-docs"), shutil.which("helm-docs"),
                      str(cached_helm_docs())):
        if candidate and os.access(candidate, os.X_OK):
            version = subprocess.run([candidate, "--version"], capture_output=True, text=True).stdout
            if HELM_DOCS_VERSION.lstrip("v") in version:
                return candidate
    missing_tool(f"helm-docs {HELM_DOCS_VERSION} not found ($HELM_DOCS, PATH, {cached_helm_docs()}); "
                 f"install it with: scripts/install-helm-docs.sh")


def test_the_committed_values_table_is_what_helm_docs_generates():
    result = subprocess.run([helm_docs_binary(), "--dry-run", "--log-level", "error",
                             "--chart-search-root", str(CHART_DIR.parent), "--chart-to-generate", str(CHART_DIR)],
                            capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == README.read_text(), (
        "charts/sweep-cluster/README.md is out of date with values.yaml; regenerate it with "
        "$(scripts/install-helm-docs.sh) --chart-search-root charts")


def leaf_keys(values, prefix=""):
    """Dotted keys helm-docs lists: leaves, and maps or lists given as a whole (empty or documented)."""
    keys = set()
    for key, value in values.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            keys |= leaf_keys(value, dotted + ".")
        else:
            keys.add(dotted)
    return keys


def test_every_value_has_a_documented_row():
    rows = {}
    for line in README.read_text().splitlines():
        match = ROW.match(line)
        if match and match["key"] != "Key":
            rows[match["key"]] = match
    assert rows, "no values table in charts/sweep-cluster/README.md"
    undocumented = sorted(key for key, row in rows.items() if not row["description"].strip())
    assert not undocumented, f"values without a `# --` comment: {undocumented}"
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    # Maps documented as a whole (podSecurityContext) are one row; every other leaf has its own.
    missing = sorted(key for key in leaf_keys(values)
                     if key not in rows and not any(key.startswith(row + ".") for row in rows))
    assert not missing, f"values missing from the table: {missing}"


def test_the_kubernetes_guide_links_the_values_table():
    assert "charts/sweep-cluster/README.md" in (REPO_ROOT / "docs" / "guide" / "kubernetes.md").read_text()

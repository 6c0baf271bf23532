"""The chart on a real Kubernetes: scripts/e2e-cluster.sh, and the scripts it is made of.

The end-to-end run builds the image, starts a one-node cluster (scripts/local-cluster.sh), installs
the chart, runs sweeps and tears everything down. It needs root, podman and Debian's Kubernetes
parts, and takes longer than the suite's budget, so it runs only when asked
(SWEEPS_E2E_CLUSTER=1) and otherwise skips saying how to run it; docs/guide/kubernetes.md records its
last result. The checks below it run everywhere.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from test_chart_support import REPO_ROOT

SCRIPTS = ["build-image.sh", "install-kube.sh", "install-helm-docs.sh", "local-cluster.sh", "e2e-cluster.sh"]
RESULT_LINE = re.compile(r"^e2e-cluster: ok rows=(\d+) install_ready_s=([\d.]+) sweep_s=([\d.]+)$")


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_scripts_parse(script):
    result = subprocess.run(["bash", "-n", str(REPO_ROOT / "scripts" / script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_local_cluster_refuses_an_unknown_command_with_its_usage():
    result = subprocess.run([str(REPO_ROOT / "scripts" / "local-cluster.sh"), "start"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "usage:" in result.stderr and "up|down" in result.stderr


def test_the_last_recorded_run_is_in_the_docs():
    docs = (REPO_ROOT / "docs" / "guide" / "kubernetes.md").read_text()
    recorded = [line.strip().strip("`") for line in docs.splitlines() if "e2e-cluster: ok rows=" in line]
    assert any(RESULT_LINE.match(line) for line in recorded), "docs/guide/kubernetes.md records no e2e-cluster result line"


@pytest.mark.slow
def test_the_chart_end_to_end_on_a_real_cluster():
    if os.environ.get("SWEEPS_E2E_CLUSTER") != "1":
        pytest.skip("the real-cluster run needs root, podman and Debian's etcd/containerd/runc/CNI and takes "
                    "longer than the suite's budget: run scripts/e2e-cluster.sh (or SWEEPS_E2E_CLUSTER=1 pytest "
                    "tests/test_e2e_cluster.py); its last result is in docs/guide/kubernetes.md")
    result = subprocess.run([str(REPO_ROOT / "scripts" / "e2e-cluster.sh")], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=3 * 3600)
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    match = RESULT_LINE.match(last)
    assert match and int(match[1]) > 0, last

"""Shared helpers of the chart tests: find helm, render the chart, pick objects out of the result.

The chart tests call the real helm binary. It is found through $HELM, then the build scripts/test.sh
started (waited for), then PATH, then the cache that scripts/install-helm.sh fills. Without it the tests skip on a developer machine, and fail
in CI (CI=true), where a missing tool must never pass silently.

This module holds no tests; the chart test modules import it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable, Optional, Sequence

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
CHART_DIR = REPO_ROOT / "charts" / "sweep-cluster"
CI_VALUES_DIR = CHART_DIR / "ci"
CI_VALUES_FILES = sorted(CI_VALUES_DIR.glob("*-values.yaml"))
# The KubeRay RayCluster CRD, kept with the tests as data (see tests/data/README.md).
RAYCLUSTER_CRD = REPO_ROOT / "tests" / "data" / "crds" / "ray.io_rayclusters.yaml"
HELM_VERSION = "v3.22.0"
# Every render names the Kubernetes version it renders for: a helm built with a plain `go install`
# assumes 1.20, which the chart (1.25 or newer) refuses, and results should not depend on the build.
RENDER_KUBE_VERSION = "1.33.0"
RELEASE = "sweeps"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing_tool(message: str) -> None:
    """Skip on a developer machine, fail in CI: CI must never pass by not running a check."""
    if in_ci():
        pytest.fail(f"{message} (CI=true, so this fails instead of skipping)")
    pytest.skip(message)


def cached_helm_path() -> Path:
    """Where scripts/install-helm.sh puts helm (keep the two in step)."""
    tools_dir = os.environ.get("SWEEPS_TOOLS_DIR")
    if not tools_dir:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        tools_dir = str(Path(cache) / "commit-sweeps" / "tools")
    return Path(tools_dir) / f"helm-{HELM_VERSION}" / "bin" / "helm"


# scripts/test.sh starts the suite while helm and helm-docs may still be building (minutes, the first time on a
# machine): it names a directory where each build leaves <tool>.rc (its exit status) and <tool>.out (the
# binary's path). A test that needs the tool waits for its build here instead of the whole suite waiting.
TOOL_BUILDS_ENV = "SWEEPS_TOOL_BUILDS"
TOOL_BUILD_WAIT_S = 1200.0


def built_tool(tool: str) -> Optional[str]:
    """The path a tool build that scripts/test.sh started gives, once it has ended; None where none was started.
    A build that failed fails the test that needs it, with the build's last words."""
    builds = os.environ.get(TOOL_BUILDS_ENV)
    if not builds:
        return None
    rc_file, out_file = Path(builds) / f"{tool}.rc", Path(builds) / f"{tool}.out"
    if not out_file.exists() and not rc_file.exists():
        return None
    deadline = time.monotonic() + TOOL_BUILD_WAIT_S
    while not rc_file.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the {tool} build scripts/test.sh started did not end within {TOOL_BUILD_WAIT_S:.0f} s")
        time.sleep(1.0)
    if rc_file.read_text().strip() != "0":
        log = (Path(builds) / f"{tool}.log")
        tail = log.read_text()[-2000:] if log.exists() else ""
        pytest.fail(f"building {tool} failed (scripts/install-{tool}.sh): {tail}")
    return out_file.read_text().strip()


def find_helm() -> Optional[str]:
    explicit = os.environ.get("HELM") or built_tool("helm")
    if explicit:
        if not os.access(explicit, os.X_OK):
            pytest.fail(f"HELM={explicit!r} is not an executable file")
        return explicit
    on_path = shutil.which("helm")
    if on_path:
        return on_path
    cached = cached_helm_path()
    return str(cached) if os.access(cached, os.X_OK) else None


def helm_binary() -> str:
    helm = find_helm()
    if helm is None:
        missing_tool(f"helm not found ($HELM, PATH, {cached_helm_path()}); "
                     f"install it with: scripts/install-helm.sh")
    return helm


def run_helm(args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([helm_binary(), *args], capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def value_args(values_files: Iterable[Path] = (), set_values: Iterable[str] = (),
               set_strings: Iterable[str] = ()) -> list:
    args = []
    for path in values_files:
        args += ["-f", str(path)]
    for item in set_values:
        args += ["--set", item]
    for item in set_strings:
        args += ["--set-string", item]
    return args


def template_args(values_files: Iterable[Path] = (), set_values: Iterable[str] = (),
                  set_strings: Iterable[str] = (), chart_dir: Path = CHART_DIR) -> list:
    return ["template", RELEASE, str(chart_dir), "--namespace", "sweeps-ns",
            "--kube-version", RENDER_KUBE_VERSION, *value_args(values_files, set_values, set_strings)]


def render(values_files: Iterable[Path] = (), set_values: Iterable[str] = (),
           set_strings: Iterable[str] = ()) -> list:
    """The chart's objects as dicts, as `helm install` would create them."""
    result = run_helm(template_args(values_files, set_values, set_strings))
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def render_error(values_files: Iterable[Path] = (), set_values: Iterable[str] = (),
                 set_strings: Iterable[str] = ()) -> str:
    """helm's error message for values that must be refused (fails the test if helm accepts them)."""
    result = run_helm(template_args(values_files, set_values, set_strings), check=False)
    assert result.returncode != 0, "helm accepted values it should refuse"
    return result.stderr


def render_notes(values_files: Iterable[Path] = (), set_values: Iterable[str] = ()) -> str:
    """The NOTES.txt text `helm install` prints for these values.

    `helm template` skips NOTES.txt and `helm install --dry-run` needs a cluster, so this renders
    the named template NOTES.txt consists of through a throwaway probe manifest in a copy of the
    chart.
    """
    notes_file = (CHART_DIR / "templates" / "NOTES.txt").read_text().strip()
    assert notes_file == '{{ include "sweep-cluster.notes" . }}', \
        "NOTES.txt should only include the sweep-cluster.notes template this helper renders"
    with tempfile.TemporaryDirectory() as scratch:
        chart_copy = Path(scratch) / CHART_DIR.name
        shutil.copytree(CHART_DIR, chart_copy)
        (chart_copy / "templates" / "notes-probe.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-probe\n"
            "data:\n  notes: {{ include \"sweep-cluster.notes\" . | toJson }}\n")
        result = run_helm(template_args(values_files, set_values, chart_dir=chart_copy)
                          + ["--show-only", "templates/notes-probe.yaml"])
    return yaml.safe_load(result.stdout)["data"]["notes"]


def by_kind(objects: Iterable[dict], kind: str) -> list:
    return [obj for obj in objects if obj["kind"] == kind]


def named(objects: Iterable[dict], kind: str, name: str) -> dict:
    matches = [obj for obj in objects if obj["kind"] == kind and obj["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind} {name}, found {len(matches)}"
    return matches[0]


def pod_templates(objects: Iterable[dict]) -> list:
    """(owner description, pod template) for every pod the objects would create."""
    templates = []
    for obj in objects:
        name = f"{obj['kind']}/{obj['metadata']['name']}"
        if obj["kind"] == "Deployment":
            templates.append((name, obj["spec"]["template"]))
        elif obj["kind"] == "RayCluster":
            templates.append((f"{name} head", obj["spec"]["headGroupSpec"]["template"]))
            for group in obj["spec"]["workerGroupSpecs"]:
                templates.append((f"{name} {group['groupName']}", group["template"]))
    return templates


def all_containers(pod_template: dict) -> list:
    spec = pod_template["spec"]
    return list(spec.get("initContainers", [])) + list(spec["containers"])


def env_of(container: dict) -> dict:
    """A container's literal environment variables as a dict."""
    return {item["name"]: item.get("value") for item in container.get("env", [])}


def mebibytes(quantity: str) -> int:
    """A Mi/Gi quantity (the forms the chart emits) in mebibytes."""
    if quantity.endswith("Gi"):
        return int(quantity[:-2]) * 1024
    assert quantity.endswith("Mi"), f"unexpected quantity {quantity!r}"
    return int(quantity[:-2])

"""The image (Dockerfile, .dockerignore), the kind config and the docs agree with the chart.

No container engine runs here, so the Dockerfile is checked as text: a pinned base, versions inside
pyproject.toml's ranges and equal to what the chart announces, a non-root user the chart's
securityContext matches, wget for the probes, the project installed. The kind quickstart's files
and commands are checked against the chart they drive.
"""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from test_chart_support import CHART_DIR, REPO_ROOT, named, render

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()
DOCKERIGNORE = [line.strip() for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
DEFAULTS = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
DOCS = (REPO_ROOT / "docs" / "guide" / "kubernetes.md").read_text()


def dockerfile_arg(name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", DOCKERFILE, re.MULTILINE)
    assert match, f"Dockerfile has no ARG {name}=<default>"
    return match.group(1)


def project_requirement(name: str) -> Requirement:
    for line in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(line)
        if requirement.name == name:
            return requirement
    raise AssertionError(f"pyproject.toml does not depend on {name}")


def instructions():
    """(instruction, argument) pairs of the Dockerfile, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE)
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            yield keyword.upper(), rest.strip()


def test_base_image_is_a_pinned_python_inside_the_projects_range():
    (base,) = [argument for keyword, argument in instructions() if keyword == "FROM"]
    assert base == "${PYTHON_IMAGE}"
    image = dockerfile_arg("PYTHON_IMAGE")
    match = re.fullmatch(r"python:(3)\.(\d+)\.(\d+)-slim-([a-z]+)", image)
    assert match, f"{image} should name an exact Python patch release and Debian release"
    python_version = f"{match.group(1)}.{match.group(2)}.{match.group(3)}"
    assert python_version in SpecifierSet(PYPROJECT["project"]["requires-python"])


@pytest.mark.parametrize("package, arg", [("ray", "RAY_VERSION"), ("numpy", "NUMPY_VERSION"),
                                          ("numba", "NUMBA_VERSION"), ("pyarrow", "PYARROW_VERSION")])
def test_pinned_packages_lie_inside_the_projects_ranges(package, arg):
    version = dockerfile_arg(arg)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{arg}={version} is not an exact version"
    assert version in project_requirement(package).specifier
    assert f'"{package}' in DOCKERFILE and f"=={{{arg}}}" in DOCKERFILE.replace("$", "")


def test_image_ray_version_is_the_one_the_chart_announces():
    assert dockerfile_arg("RAY_VERSION") == DEFAULTS["rayVersion"]
    assert "ray.__version__ == '${RAY_VERSION}'" in DOCKERFILE, "the build should verify the Ray it installed"


def test_image_runs_as_the_non_root_user_the_chart_expects():
    users = [argument for keyword, argument in instructions() if keyword == "USER"]
    assert users, "the image must not run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, "a numeric user lets Kubernetes enforce runAsNonRoot"
    security = DEFAULTS["podSecurityContext"]
    assert (int(uid), int(gid)) == (security["runAsUser"], security["runAsGroup"])


def test_image_has_wget_for_the_probes_and_installs_the_project():
    runs = [argument for keyword, argument in instructions() if keyword == "RUN"]
    assert any("apt-get install" in run and "wget" in shlex.split(run) for run in runs)
    copies = [argument for keyword, argument in instructions() if keyword == "COPY"]
    workdir = [argument for keyword, argument in instructions() if keyword == "WORKDIR"][-1]
    assert f". {workdir}" in copies
    assert any(re.search(r"\bpip install \.(\s|$)", run) for run in runs)


@pytest.mark.parametrize("path", [".git", ".venv", "results", "__pycache__", "site", "artifacts"])
def test_dockerignore_keeps_repository_state_out_of_the_build(path):
    assert any(pattern.strip("/*") == path or pattern == f"**/{path}" for pattern in DOCKERIGNORE), path
    # Files the build needs stay in: pyproject.toml reads README.md, `pip install .` the packages.
    for needed in ("README.md", "pyproject.toml", "simcore", "ray_jobs", "dashboards", "sweeps", "commit_sweeps",
                   "store_probe"):
        assert needed not in DOCKERIGNORE


def test_chart_app_version_is_the_project_version_and_the_default_image_is_this_one():
    assert CHART["appVersion"] == PYPROJECT["project"]["version"]
    assert DEFAULTS["image"] == {"repository": "sweeps", "tag": "", "pullPolicy": "IfNotPresent"}
    assert f"docker build -t sweeps:{CHART['appVersion']} ." in DOCKERFILE
    assert f"docker build -t sweeps:{CHART['appVersion']} ." in DOCS


def test_kind_config_is_one_node_of_the_default_cluster():
    config = yaml.safe_load((REPO_ROOT / "charts" / "kind-config.yaml").read_text())
    assert (config["kind"], config["apiVersion"]) == ("Cluster", "kind.x-k8s.io/v1alpha4")
    # `kind load docker-image` without --name loads into the cluster named "kind".
    assert "name" not in config
    # The default ReadWriteOnce results claim is shared only by pods on one node.
    assert [node["role"] for node in config["nodes"]] == ["control-plane"]
    assert DEFAULTS["store"]["pvc"]["accessMode"] == "ReadWriteOnce"


def docs_commands(prefix: str) -> list:
    """Commands starting with `prefix` in the docs' shell code blocks."""
    blocks = re.findall(r"```(?:sh|bash|shell|console)?\n(.*?)```", DOCS, re.DOTALL)
    lines = [line.strip() for block in blocks for line in re.sub(r"\\\n\s*", " ", block).splitlines()]
    return [line.split("  #")[0].strip() for line in lines if line.startswith(prefix)]


def test_the_docs_quickstart_installs_what_the_chart_renders():
    installs = docs_commands("helm install ")
    assert installs, "docs/guide/kubernetes.md shows no helm install"
    services = set()
    for command in installs:
        words = shlex.split(command)
        assert words[2] == "sweeps" and words[3] == "charts/sweep-cluster", command
        set_values = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
        objects = render(set_values=set_values)
        services |= {service["metadata"]["name"] for service in objects if service["kind"] == "Service"}
    forwards = docs_commands("kubectl port-forward ")
    assert forwards
    for command in forwards:
        target = shlex.split(command)[2]
        assert target.startswith("svc/") and target[4:] in services, f"{command}: no such Service"
    submit = docs_commands("ray job submit ")
    assert "ray job submit --address http://127.0.0.1:8265 --working-dir . -- python sweeps/exp4c.py" in submit
    head = named(render(), "Deployment", "sweeps-head")
    assert "--dashboard-port=8265" in head["spec"]["template"]["spec"]["containers"][0]["args"]


def test_the_docs_cover_cleanup_and_every_troubleshooting_case():
    lowered = DOCS.lower()
    assert "kind delete cluster" in DOCS and "helm uninstall sweeps" in DOCS
    for topic in ("imagepullbackoff", "oomkilled", "/dev/shm", "version mismatch", "port-forward",
                  "working directory", "authenticationerror"):
        assert topic in lowered, f"docs/guide/kubernetes.md does not cover {topic}"

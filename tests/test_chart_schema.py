"""values.schema.json and values.yaml of charts/sweep-cluster.

The schema must turn a typo or a wrong type into a refusal that names the value, and values.yaml
must document every value it defines and define every value the schema allows.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from test_chart_support import CHART_DIR, render, render_error

SCHEMA = json.loads((CHART_DIR / "values.schema.json").read_text())
VALUES_TEXT = (CHART_DIR / "values.yaml").read_text()
DEFAULTS = yaml.safe_load(VALUES_TEXT)


@pytest.mark.parametrize("setting, location, key", [
    ("modee=static", "''", "modee"),
    ("head.cpus=2", "'/head'", "cpus"),
    ("worker.replica=3", "'/worker'", "replica"),
    ("worker.waitForHead.cpuu=1", "'/worker/waitForHead'", "cpuu"),
    ("store.pvc.sise=5Gi", "'/store/pvc'", "sise"),
    ("dashboard.service.typ=NodePort", "'/dashboard/service'", "typ"),
    ("probes.readiness.periodSecond=3", "'/probes/readiness'", "periodSecond"),
])
def test_unknown_keys_are_refused_naming_where_and_what(setting, location, key):
    message = render_error(set_values=[setting])
    assert f"at {location}" in message and f"'{key}' not allowed" in message, message


@pytest.mark.parametrize("set_values, set_strings, location, expected", [
    ([], ["worker.replicas=two"], "/worker/replicas", "want integer"),
    ([], ["worker.cpu=2"], "/worker/cpu", "want integer"),
    (["mode=operator"], [], "/mode", "'static', 'kuberay'"),
    ([], ["worker.memory=2GB"], "/worker/memory", "does not match pattern"),
    ([], ["head.objectStoreMemory=0Mi"], "/head/objectStoreMemory", "does not match pattern"),
    (["ports.gcs=70000"], [], "/ports/gcs", "maximum: got 70,000, want 65,535"),
    ([], ["jobApi.exposeOutsideCluster=yes"], "/jobApi/exposeOutsideCluster", "want boolean"),
    ([], ["jobApi.allowUnauthenticatedExposure=yes"], "/jobApi/allowUnauthenticatedExposure", "want boolean"),
    (["jobApi.serviceType=External"], [], "/jobApi/serviceType", "'ClusterIP', 'NodePort', 'LoadBalancer'"),
    (["dashboard.service.nodePort=8080"], [], "/dashboard/service/nodePort", "minimum: got 8,080, want 30,000"),
    ([], ["image.tag=latest"], "/image/tag", "not"),
    (["store.type=s3"], [], "/store/type", "'pvc', 'objectStore'"),
    ([], ["store.objectStore.uri=bucket/prefix"], "/store/objectStore/uri", "does not match pattern"),
    (["head.numCpus=-1"], [], "/head/numCpus", "minimum"),
    ([], ["head.cpu=lots"], "/head/cpu", "does not match pattern"),
])
def test_mistyped_values_are_refused_naming_the_value(set_values, set_strings, location, expected):
    message = render_error(set_values=set_values, set_strings=set_strings)
    assert f"at '{location}'" in message and expected in message, message


def test_well_formed_alternatives_are_accepted():
    objects = render(set_values=["head.cpu=2", "worker.cpu=3", "ports.gcs=6380", "dashboard.service.type=NodePort",
                                 "dashboard.service.nodePort=30080", "store.pvc.storageClassName=fast"],
                     set_strings=["head.cpu=1500m", "worker.memory=6Gi", "worker.objectStoreMemory=3072Mi"])
    worker = next(obj for obj in objects if obj["metadata"]["name"] == "sweeps-worker")
    assert worker["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "3", "memory": "6Gi"}


# Kubernetes objects given whole: values.yaml sets some of their fields, the schema types them all.
WHOLE_OBJECTS = ("podSecurityContext", "containerSecurityContext")


def schema_keys(node, prefix=""):
    """Dotted paths of every property the schema defines (following $ref and allOf)."""
    if "$ref" in node:
        node = SCHEMA["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    for part in node.get("allOf", []):
        yield from schema_keys(part, prefix)
    for name, child in node.get("properties", {}).items():
        path = f"{prefix}{name}"
        yield path
        whole = path in WHOLE_OBJECTS or (child.get("type") == "object" and "properties" not in child
                                          and "$ref" not in child)
        if not whole:
            yield from schema_keys(child, path + ".")


def value_keys(values, prefix=""):
    for name, value in values.items():
        path = f"{prefix}{name}"
        yield path
        if isinstance(value, dict) and path not in WHOLE_OBJECTS:
            yield from value_keys(value, path + ".")


def test_every_schema_property_has_a_default_in_values_yaml_and_back():
    defined = set(value_keys(DEFAULTS))
    allowed = set(schema_keys(SCHEMA)) - {"global"}
    assert allowed - defined == set(), "schema properties missing from values.yaml"
    assert defined - allowed == set(), "values.yaml keys the schema does not allow"


def documented_keys(text):
    """Dotted paths of values.yaml keys, each with whether a `# --` comment documents it.

    A key is documented by a `# --` comment block right above it, or by being inside a mapping
    that is documented as a whole (such as podSecurityContext).
    """
    stack = []  # (indent, path, documented)
    comment_block = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            comment_block = []
            continue
        if stripped.startswith("#"):
            comment_block.append(stripped)
            continue
        match = re.match(r"^(\s*)([A-Za-z][A-Za-z0-9]*):", line)
        if not match:
            comment_block = []
            continue  # list items and continuation lines
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([entry[1] for entry in stack] + [match.group(2)])
        inherited = any(entry[2] for entry in stack)
        documented = any(comment.startswith("# --") for comment in comment_block) or inherited
        stack.append((indent, match.group(2), documented))
        comment_block = []
        yield path, documented, line.rstrip().endswith(":")


def test_every_value_in_values_yaml_is_documented():
    undocumented = [path for path, documented, is_parent in documented_keys(VALUES_TEXT)
                    if not documented and not is_parent]
    assert undocumented == []
    # The check sees the real file: it finds the values it should.
    seen = {path for path, _, _ in documented_keys(VALUES_TEXT)}
    assert {"mode", "head.numCpus", "worker.waitForHead.memory", "store.pvc.accessMode"} <= seen

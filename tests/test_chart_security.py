"""The chart's locks: Ray token authentication on by default, and a NetworkPolicy around the Ray pods.

What the real cluster shows (a submission without the token refused, one with it run) is in
scripts/e2e-cluster.sh; these tests check what the chart renders for every setting.
"""

from __future__ import annotations

import base64

import pytest

from test_chart_support import (CI_VALUES_DIR, all_containers, by_kind, named, pod_templates, render, render_error,
                                render_notes)

RAY_CONTAINERS = ("ray-head", "ray-worker")


def ray_containers(objects):
    found = []
    for owner, template in pod_templates(objects):
        for container in all_containers(template):
            if container["name"] in RAY_CONTAINERS:
                found.append((owner, container, template))
    return found


def env_entries(container):
    return {item["name"]: item for item in container.get("env", [])}


@pytest.mark.parametrize("mode_values", [[], [CI_VALUES_DIR / "kuberay-values.yaml"]], ids=["static", "kuberay"])
def test_every_ray_container_runs_token_auth_with_the_one_generated_token(mode_values):
    objects = render(mode_values)
    secret = named(objects, "Secret", "sweeps-ray-token")
    token = base64.b64decode(secret["data"]["token"]).decode()
    assert len(token) == 48 and token.isalnum()
    found = ray_containers(objects)
    assert {container["name"] for _, container, _ in found} == set(RAY_CONTAINERS)
    for owner, container, _ in found:
        env = env_entries(container)
        assert env["RAY_AUTH_MODE"]["value"] == "token", owner
        assert env["RAY_AUTH_TOKEN"]["valueFrom"] == {
            "secretKeyRef": {"name": "sweeps-ray-token", "key": "token"}}, owner


def test_two_renders_make_two_tokens():
    # `helm template` cannot look up the installed Secret, so each render is a fresh install; a
    # constant token would be the same in every cluster that installs the chart.
    first = named(render(), "Secret", "sweeps-ray-token")["data"]["token"]
    second = named(render(), "Secret", "sweeps-ray-token")["data"]["token"]
    assert first != second


def test_a_named_secret_is_used_and_none_is_created():
    objects = render(set_values=["auth.existingSecret=my-token", "auth.secretKey=ray"])
    assert by_kind(objects, "Secret") == []
    for owner, container, _ in ray_containers(objects):
        assert env_entries(container)["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"] == {
            "name": "my-token", "key": "ray"}, owner


def test_auth_disabled_states_it_and_passes_no_token():
    objects = render(set_values=["auth.mode=disabled"])
    assert by_kind(objects, "Secret") == []
    for owner, container, _ in ray_containers(objects):
        env = env_entries(container)
        assert env["RAY_AUTH_MODE"]["value"] == "disabled", owner
        assert "RAY_AUTH_TOKEN" not in env, owner


def test_the_dashboard_gets_no_token():
    objects = render()
    dashboard = named(objects, "Deployment", "sweeps-dashboard")
    for container in all_containers(dashboard["spec"]["template"]):
        assert "RAY_AUTH_TOKEN" not in env_entries(container)


def selects(selector, labels):
    """Whether a LabelSelector (matchLabels and In expressions, what the chart writes) selects labels."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In"
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


@pytest.mark.parametrize("mode_values", [[], [CI_VALUES_DIR / "kuberay-values.yaml"]], ids=["static", "kuberay"])
def test_the_network_policy_covers_the_ray_pods_and_admits_only_the_release(mode_values):
    objects = render(mode_values)
    policy = named(objects, "NetworkPolicy", "sweeps-ray")
    spec = policy["spec"]
    assert spec["policyTypes"] == ["Ingress"]
    for owner, template in pod_templates(objects):
        labels = template["metadata"]["labels"]
        is_ray = any(c["name"] in RAY_CONTAINERS for c in template["spec"]["containers"])
        assert selects(spec["podSelector"], labels) == is_ray, owner
        if is_ray:
            # Every Ray pod of the release is an admitted source (workers reach the head and each other).
            [rule] = spec["ingress"]
            assert "ports" not in rule
            assert any(selects(peer["podSelector"], labels) for peer in rule["from"]), owner
    # A pod of another release with otherwise identical labels is not admitted.
    stranger = {"app.kubernetes.io/name": "sweep-cluster", "app.kubernetes.io/instance": "other"}
    assert not any(selects(peer.get("podSelector", {}), stranger) for peer in spec["ingress"][0]["from"])
    assert all(set(peer) == {"podSelector"} for peer in spec["ingress"][0]["from"])


def test_the_network_policy_can_be_turned_off_and_extended():
    assert by_kind(render(set_values=["networkPolicy.enabled=false"]), "NetworkPolicy") == []
    extra = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ray-system"}}}
    objects = render(set_values=["networkPolicy.extraIngressFrom[0].namespaceSelector.matchLabels"
                                 ".kubernetes\\.io/metadata\\.name=ray-system"])
    assert extra in named(objects, "NetworkPolicy", "sweeps-ray")["spec"]["ingress"][0]["from"]


def test_a_published_job_api_is_admitted_on_its_port_alone():
    objects = render([CI_VALUES_DIR / "loadbalancer-values.yaml"],
                     set_values=["jobApi.loadBalancerSourceRanges={203.0.113.0/24}"])
    rules = named(objects, "NetworkPolicy", "sweeps-ray")["spec"]["ingress"]
    assert len(rules) == 2
    assert rules[1] == {"ports": [{"protocol": "TCP", "port": 8265}],
                        "from": [{"ipBlock": {"cidr": "203.0.113.0/24"}}]}


def test_notes_show_how_ray_job_submit_passes_the_token():
    notes = render_notes()
    assert "export RAY_AUTH_MODE=token" in notes
    assert ("export RAY_AUTH_TOKEN=$(kubectl -n sweeps-ns get secret sweeps-ray-token "
            "-o jsonpath='{.data.token}' | base64 -d)") in notes
    assert "RAY_AUTH_TOKEN" not in render_notes(set_values=["auth.mode=disabled"])


def test_a_published_job_api_warning_names_the_auth_mode():
    published = [CI_VALUES_DIR / "nodeport-values.yaml"]
    assert "holds the Ray token" in render_notes(published)
    assert "has no authentication" in render_notes(published, ["auth.mode=disabled",
                                                                "jobApi.allowUnauthenticatedExposure=true"])


UNAUTHENTICATED_EXPOSURE = ["auth.mode=disabled", "jobApi.serviceType=LoadBalancer", "jobApi.exposeOutsideCluster=true"]


@pytest.mark.parametrize("service_type", ["LoadBalancer", "NodePort"])
def test_an_unauthenticated_published_job_api_fails_to_render_with_one_line(service_type):
    message = render_error(set_values=["auth.mode=disabled", f"jobApi.serviceType={service_type}",
                                       "jobApi.exposeOutsideCluster=true"])
    # One line from the chart; helm itself may add its "Use --debug flag" hint below it.
    lines = [line for line in message.strip().splitlines() if line and not line.startswith("Use --debug")]
    assert len(lines) == 1, message
    assert "auth.mode" in message and "disabled" in message and service_type in message
    assert "jobApi.allowUnauthenticatedExposure=true" in message and "any code" in message


def test_an_unauthenticated_published_job_api_renders_only_when_confirmed_by_name():
    objects = render(set_values=UNAUTHENTICATED_EXPOSURE + ["jobApi.allowUnauthenticatedExposure=true"])
    assert named(objects, "Service", "sweeps-head-jobs")["spec"]["type"] == "LoadBalancer"
    # The confirmation changes nothing else: token auth with a published API, or auth off inside the
    # cluster, render as before without it.
    assert named(render(set_values=UNAUTHENTICATED_EXPOSURE[1:]), "Service", "sweeps-head-jobs")
    assert by_kind(render(set_values=["auth.mode=disabled"]), "Secret") == []

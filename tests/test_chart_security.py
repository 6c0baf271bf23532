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


# --- Values that weaken the chart's security: refused unless their one allowance is set ---

EVERY_ALLOWANCE = ["security.allowPrivileged=true", "security.allowRoot=true", "security.allowOpenNetwork=true",
                   "jobApi.allowUnauthenticatedExposure=true"]
PUBLISHED_JOB_API = ["jobApi.serviceType=LoadBalancer", "jobApi.exposeOutsideCluster=true"]


def one_line_refusal(message):
    """The chart's refusal, checked to be one line (helm may add its "Use --debug flag" hint below it)."""
    lines = [line for line in message.strip().splitlines() if line and not line.startswith("Use --debug")]
    assert len(lines) == 1, message
    return lines[0]


def ray_env_names(objects):
    """Names of the environment variables the chart sets on each Ray container, by container name."""
    return {container["name"]: [item["name"] for item in container.get("env", [])]
            for _, container, _ in ray_containers(objects)}


def test_the_reviewed_bypass_an_extra_ray_auth_mode_on_the_head_is_refused():
    # The chart sets RAY_AUTH_MODE=token; a second entry would come last and win in Kubernetes.
    message = one_line_refusal(render_error(set_values=PUBLISHED_JOB_API + [
        "head.extraEnv[0].name=RAY_AUTH_MODE", "head.extraEnv[0].value=disabled"]))
    assert message.startswith("Error: execution error") and 'head.extraEnv[0].name: "RAY_AUTH_MODE"' in message
    assert "set by the chart itself (from auth.mode)" in message and "change auth.mode instead" in message


@pytest.mark.parametrize("mode_values", [[], [CI_VALUES_DIR / "kuberay-values.yaml"]], ids=["static", "kuberay"])
@pytest.mark.parametrize("component, container", [("head", "ray-head"), ("worker", "ray-worker")])
def test_extra_env_can_never_repeat_a_variable_the_chart_sets(mode_values, component, container):
    # Every name the chart renders, with the store's AWS_* variables on; even with every allowance set.
    values = mode_values + [CI_VALUES_DIR / "objectstore-values.yaml"]
    names = ray_env_names(render(values))[container]
    assert {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "SWEEPS_STORE", "AWS_ENDPOINT_URL", "AWS_REGION",
            "RAY_USAGE_STATS_ENABLED"} <= set(names)
    for index, name in enumerate(names):
        extra = [f"{component}.extraEnv[0].name=OTHER", f"{component}.extraEnv[1].name={name}",
                 f"{component}.extraEnv[1].value=x"]
        message = one_line_refusal(render_error(values, set_values=EVERY_ALLOWANCE + extra))
        assert f'{component}.extraEnv[1].name: "{name}" is set by the chart itself' in message, message


def test_ray_auth_variables_stay_the_charts_even_when_it_does_not_set_them():
    # auth.mode disabled sets no RAY_AUTH_TOKEN, and the chart never sets RAY_AUTH_TOKEN_PATH: Ray's
    # authentication follows auth.* alone.
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        message = one_line_refusal(render_error(set_values=["auth.mode=disabled", f"worker.extraEnv[0].name={name}"]))
        assert f'worker.extraEnv[0].name: "{name}"' in message and "auth.mode" in message


def test_extra_env_can_not_name_a_variable_twice():
    message = one_line_refusal(render_error(set_strings=[
        "head.extraEnv[0].name=RAY_LOG_TO_STDERR", "head.extraEnv[0].value=1",
        "head.extraEnv[1].name=RAY_LOG_TO_STDERR", "head.extraEnv[1].value=0"]))
    assert 'head.extraEnv[1].name: "RAY_LOG_TO_STDERR" is already set by head.extraEnv[0]' in message
    # Names of their own, once each, are added after the chart's.
    objects = render(set_strings=["head.extraEnv[0].name=RAY_LOG_TO_STDERR", "head.extraEnv[0].value=1"])
    names = ray_env_names(objects)["ray-head"]
    assert names[-1] == "RAY_LOG_TO_STDERR" and names.count("RAY_AUTH_MODE") == 1


# Each weakening the review found, the field its refusal names, and the one allowance that accepts it.
WEAKENINGS = {
    "privileged": (["containerSecurityContext.privileged=true"],
                   "containerSecurityContext.privileged: true", "security.allowPrivileged"),
    "pod-root": (["podSecurityContext.runAsUser=0", "podSecurityContext.runAsNonRoot=false"],
                 "podSecurityContext.runAsUser: 0", "security.allowRoot"),
    "container-root": (["containerSecurityContext.runAsUser=0", "containerSecurityContext.runAsNonRoot=false"],
                       "containerSecurityContext.runAsUser: 0", "security.allowRoot"),
    "capabilities": (["containerSecurityContext.capabilities.add={SYS_ADMIN}",
                      "containerSecurityContext.allowPrivilegeEscalation=true"],
                     "containerSecurityContext.allowPrivilegeEscalation: true", "security.allowPrivileged"),
    "no-auth-no-policy": (["auth.mode=disabled", "networkPolicy.enabled=false"],
                          "networkPolicy.enabled: false", "security.allowOpenNetwork"),
    "open-ip-block": (["networkPolicy.extraIngressFrom[0].ipBlock.cidr=0.0.0.0/0"],
                      'networkPolicy.extraIngressFrom[0].ipBlock.cidr: "0.0.0.0/0"', "security.allowOpenNetwork"),
}


@pytest.mark.parametrize("name", WEAKENINGS)
def test_a_weakening_is_refused_in_one_line_naming_the_value_and_its_allowance(name):
    settings, field, allowance = WEAKENINGS[name]
    message = one_line_refusal(render_error(set_values=settings))
    assert field in message and f"set {allowance}=true to accept the risk" in message, message
    assert "Allowed: " in message


@pytest.mark.parametrize("name", WEAKENINGS)
def test_the_other_allowances_do_not_accept_a_weakening(name):
    settings, field, allowance = WEAKENINGS[name]
    others = [item for item in EVERY_ALLOWANCE if not item.startswith(allowance + "=")]
    assert field in render_error(set_values=settings + others)


@pytest.mark.parametrize("name", WEAKENINGS)
def test_an_accepted_weakening_renders_and_the_notes_open_with_a_warning_naming_it(name):
    settings, field, allowance = WEAKENINGS[name]
    objects = render(set_values=settings + [f"{allowance}=true"])
    assert pod_templates(objects)
    notes = render_notes(set_values=settings + [f"{allowance}=true"])
    head, _, rest = notes.partition("The sweep cluster sweeps is starting")
    assert rest, notes
    assert head.startswith("#####") and "WARNING" in head and f"relaxed by {allowance}=true" in head
    assert f"- {field}" in head and f"(accepted by {allowance})" in head


def test_the_capability_and_the_escalation_each_need_the_allowance():
    message = render_error(set_values=["containerSecurityContext.capabilities.add={SYS_ADMIN}"])
    assert 'containerSecurityContext.capabilities.add: ["SYS_ADMIN"]' in message
    objects = render(set_values=WEAKENINGS["capabilities"][0] + ["security.allowPrivileged=true"])
    for owner, template in pod_templates(objects):
        for container in all_containers(template):
            assert container["securityContext"]["capabilities"]["add"] == ["SYS_ADMIN"], owner
            assert container["securityContext"]["allowPrivilegeEscalation"] is True, owner


def write_values(tmp_path, text):
    path = tmp_path / "values.yaml"
    path.write_text(text)
    return [path]


@pytest.mark.parametrize("settings, field", [
    # Removing a safe default is a weakening too (helm drops a key set to null).
    (["containerSecurityContext.allowPrivilegeEscalation=null"], "containerSecurityContext.allowPrivilegeEscalation"),
    (["containerSecurityContext.capabilities.drop=null"], "containerSecurityContext.capabilities.drop"),
    (["containerSecurityContext=null"], "containerSecurityContext.allowPrivilegeEscalation"),
    (["podSecurityContext.seccompProfile=null", "containerSecurityContext.seccompProfile=null"],
     "containerSecurityContext.seccompProfile.type: unset"),
    (["podSecurityContext.runAsNonRoot=null", "containerSecurityContext.runAsNonRoot=null"],
     "podSecurityContext.runAsNonRoot: unset"),
    (["podSecurityContext.seccompProfile.type=Unconfined"], "podSecurityContext.seccompProfile.type"),
    (["containerSecurityContext.appArmorProfile.type=Unconfined"], "containerSecurityContext.appArmorProfile.type"),
    (["containerSecurityContext.procMount=Unmasked"], "containerSecurityContext.procMount"),
    (["podSecurityContext.seLinuxOptions.type=spc_t"], "podSecurityContext.seLinuxOptions.type"),
    (["podAnnotations.container\\.apparmor\\.security\\.beta\\.kubernetes\\.io/ray-head=unconfined"],
     "podAnnotations.container.apparmor.security.beta.kubernetes.io/ray-head"),
    # Wide ranges split in parts, and IPv6's everything.
    (["networkPolicy.extraIngressFrom[0].ipBlock.cidr=0.0.0.0/1"], "extraIngressFrom[0].ipBlock.cidr"),
    (["networkPolicy.extraIngressFrom[0].ipBlock.cidr=10.1.0.0/16",
      "networkPolicy.extraIngressFrom[1].ipBlock.cidr=::/0"], "extraIngressFrom[1].ipBlock.cidr"),
], ids=lambda item: item if isinstance(item, str) else None)
def test_the_other_ways_around_the_baseline_are_refused(settings, field):
    assert field in one_line_refusal(render_error(set_values=settings))


@pytest.mark.parametrize("peer, scope", [
    ("{namespaceSelector: {}}", "every namespace"),
    ("{namespaceSelector: {}, podSelector: {}}", "every namespace"),
    ("{podSelector: {}}", "the release's namespace"),
])
def test_an_extra_ingress_peer_that_selects_everyone_is_refused(tmp_path, peer, scope):
    values = write_values(tmp_path, f"networkPolicy:\n  extraIngressFrom:\n    - {peer}\n")
    message = one_line_refusal(render_error(values))
    assert f"admits every pod of {scope}" in message and "security.allowOpenNetwork=true" in message


def test_narrow_values_need_no_allowance_and_the_notes_stay_quiet(tmp_path):
    values = write_values(tmp_path, """\
networkPolicy:
  extraIngressFrom:
    - ipBlock: {cidr: 10.0.0.0/8}
    - ipBlock: {cidr: "fd00::/8"}
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ray-system}}
    - {namespaceSelector: {}, podSelector: {matchLabels: {app: monitor}}}
containerSecurityContext:
  capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
""")
    objects = render(values, set_values=["auth.mode=disabled"])
    assert len(named(objects, "NetworkPolicy", "sweeps-ray")["spec"]["ingress"][0]["from"]) == 5
    notes = render_notes(values, ["auth.mode=disabled"])
    assert notes.startswith("The sweep cluster sweeps is starting") and "WARNING" not in notes
    # Token auth without a NetworkPolicy is fine: reaching a port is not enough to run code.
    assert by_kind(render(set_values=["networkPolicy.enabled=false"]), "NetworkPolicy") == []


def test_an_allowance_that_accepts_nothing_is_called_out():
    notes = render_notes(set_values=["security.allowRoot=true"])
    assert notes.startswith("#####") and "security.allowRoot=true accepts nothing these values do" in notes


@pytest.mark.parametrize("setting, location, expected", [
    ("containerSecurityContext.privilegd=true", "'/containerSecurityContext'", "'privilegd' not allowed"),
    ("podSecurityContext.hostNetwork=true", "'/podSecurityContext'", "'hostNetwork' not allowed"),
    ("security.allowRooot=true", "'/security'", "'allowRooot' not allowed"),
    ("networkPolicy.extraIngressFrom[0].ipBlock.cidr=anywhere", "'/networkPolicy/extraIngressFrom/0/ipBlock/cidr'",
     "does not match pattern"),
])
def test_the_schema_refuses_mistyped_security_values(setting, location, expected):
    message = render_error(set_values=[setting])
    assert f"at {location}" in message and expected in message, message

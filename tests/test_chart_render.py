"""The Helm chart charts/sweep-cluster: lint, render, validate, and what the rendered objects say.

Every ci/*-values.yaml file is linted with `helm lint --strict` and rendered; every rendered
built-in object is validated strictly (unknown fields rejected) against the Kubernetes schemas of
the oldest Kubernetes the chart supports and of the newest that kubernetes-validate knows, and the
RayCluster against the KubeRay CRD's openAPIV3Schema, made strict the same way. The remaining
tests read the rendered objects the way the kubelet and the KubeRay operator would.
"""

from __future__ import annotations

import copy
import re

import jsonschema
import kubernetes_validate
import pytest
import yaml

from test_chart_support import (CHART_DIR, CI_VALUES_DIR, CI_VALUES_FILES, RAYCLUSTER_CRD, all_containers, by_kind,
                                env_of, mebibytes, missing_tool, named, pod_templates, render, render_error,
                                render_notes, run_helm, value_args, RENDER_KUBE_VERSION)

CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
DEFAULTS = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
OLDEST_KUBERNETES = CHART["kubeVersion"].lstrip(">=").split("-")[0]
KUBERNETES_VERSIONS = sorted({OLDEST_KUBERNETES, kubernetes_validate.latest_version()})
# The Ray head command the sweeps, the docs and the image rely on (DESIGN.md); the chart may add
# sizing flags between them, but these appear in this order.
DOCUMENTED_HEAD_COMMAND = ["ray", "start", "--head", "--num-cpus=0", "--port=6379", "--dashboard-host=0.0.0.0",
                           "--dashboard-port=8265", "--ray-client-server-port=10001", "--block"]
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def ci_values(name: str):
    return CI_VALUES_DIR / f"{name}-values.yaml"


def ray_containers(objects):
    """(owner, container) for the Ray head and worker containers, in either mode."""
    found = []
    for owner, template in pod_templates(objects):
        for container in template["spec"]["containers"]:
            if container["name"] in ("ray-head", "ray-worker"):
                found.append((owner, container, template))
    return found


def command_of(container):
    return list(container.get("command", [])) + list(container.get("args", []))


def is_subsequence(needle, haystack):
    remaining = iter(haystack)
    return all(any(token == item for item in remaining) for token in needle)


# ---------------------------------------------------------------------------------------------
# Lint and schema validation of every ci/*-values.yaml


def test_ci_values_files_cover_every_mode_store_and_service_type():
    combined = [yaml.safe_load(path.read_text()) or {} for path in CI_VALUES_FILES]
    modes = {values.get("mode", DEFAULTS["mode"]) for values in combined}
    stores = {values.get("store", {}).get("type", DEFAULTS["store"]["type"]) for values in combined}
    service_types = {values.get("dashboard", {}).get("service", {}).get("type", "ClusterIP") for values in combined}
    service_types |= {values.get("jobApi", {}).get("serviceType", "ClusterIP") for values in combined}
    assert modes == {"static", "kuberay"}
    assert stores == {"pvc", "objectStore"}
    assert service_types == {"ClusterIP", "NodePort", "LoadBalancer"}
    assert any(values.get("store", {}).get("pvc", {}).get("existingClaim") for values in combined)


@pytest.mark.parametrize("values_file", CI_VALUES_FILES, ids=lambda path: path.name)
def test_helm_lint_strict_passes(values_file):
    result = run_helm(["lint", "--strict", str(CHART_DIR), "--kube-version", RENDER_KUBE_VERSION,
                       *value_args([values_file])])
    assert "0 chart(s) failed" in result.stdout


def strict_crd_schema():
    """The RayCluster CRD's v1 openAPIV3Schema, with unknown fields rejected.

    The API server prunes unknown fields of a structural schema silently; a test should flag them
    instead, as kubernetes-validate --strict does for built-in kinds.
    """
    if not RAYCLUSTER_CRD.exists():
        missing_tool(f"the KubeRay CRD is not at {RAYCLUSTER_CRD}")
    crd = yaml.safe_load(RAYCLUSTER_CRD.read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])

    def close(node):
        if isinstance(node, dict):
            if (node.get("type") == "object" and "properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


@pytest.fixture(scope="module")
def raycluster_validator():
    schema = strict_crd_schema()
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize("values_file", CI_VALUES_FILES, ids=lambda path: path.name)
def test_every_rendered_object_is_valid_against_the_kubernetes_schemas(values_file, raycluster_validator):
    objects = render([values_file])
    assert objects
    for obj in objects:
        where = f"{values_file.name}: {obj['kind']}/{obj['metadata']['name']}"
        if obj["kind"] == "RayCluster":
            errors = sorted(raycluster_validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
            assert not errors, f"{where}: " + "; ".join(
                f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
            continue
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                pytest.fail(f"{where} is invalid for Kubernetes {version}: "
                            f"{'/'.join(map(str, error.path))}: {error.message}")


def test_strict_raycluster_schema_rejects_an_unknown_field(raycluster_validator):
    # The validation above would be worthless if the strict schema let typos through.
    raycluster = by_kind(render([ci_values("kuberay")]), "RayCluster")[0]
    assert raycluster_validator.is_valid(raycluster)
    raycluster["spec"]["workerGroupSpecs"][0]["maxReplica"] = 3
    assert not raycluster_validator.is_valid(raycluster)


@pytest.mark.parametrize("values_file", CI_VALUES_FILES, ids=lambda path: path.name)
def test_names_and_labels_are_valid_and_selectors_are_stable(values_file):
    objects = render([values_file])
    for obj in objects:
        name = obj["metadata"]["name"]
        assert len(name) <= 63 and DNS_LABEL.match(name), name
        labels = obj["metadata"]["labels"]
        for key in ("helm.sh/chart", "app.kubernetes.io/name", "app.kubernetes.io/instance",
                    "app.kubernetes.io/component", "app.kubernetes.io/version", "app.kubernetes.io/managed-by"):
            assert key in labels, f"{obj['kind']}/{name} lacks label {key}"
        assert all(len(v) <= 63 and LABEL_VALUE.match(v) for v in labels.values()), labels
    for deployment in by_kind(objects, "Deployment"):
        selector = deployment["spec"]["selector"]["matchLabels"]
        pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= pod_labels.items()
        # A Deployment's selector is immutable: nothing that changes on upgrade may be in it.
        assert set(selector) == {"app.kubernetes.io/name", "app.kubernetes.io/instance",
                                 "app.kubernetes.io/component"}
    pods = [template["metadata"]["labels"] for _, template in pod_templates(objects)]
    for service in by_kind(objects, "Service"):
        selector = service["spec"]["selector"]
        matching = [labels for labels in pods if selector.items() <= labels.items()]
        if "ray.io/cluster" in selector:
            continue  # selects the head pod KubeRay labels; checked in the kuberay tests
        assert len(matching) == 1, f"Service {service['metadata']['name']} selects {len(matching)} pod templates"


# ---------------------------------------------------------------------------------------------
# The defaults: mode static


@pytest.fixture(scope="module")
def default_objects():
    return render()


def test_default_objects_are_the_static_cluster(default_objects):
    kinds = sorted((obj["kind"], obj["metadata"]["name"]) for obj in default_objects)
    assert kinds == [("Deployment", "sweeps-dashboard"), ("Deployment", "sweeps-head"), ("Deployment", "sweeps-worker"),
                     ("NetworkPolicy", "sweeps-ray"), ("PersistentVolumeClaim", "sweeps-results"),
                     ("Secret", "sweeps-ray-token"), ("Service", "sweeps-dashboard"), ("Service", "sweeps-head")]


def test_head_runs_the_documented_ray_start_command_with_no_cpus(default_objects):
    head = named(default_objects, "Deployment", "sweeps-head")
    container = head["spec"]["template"]["spec"]["containers"][0]
    command = command_of(container)
    assert is_subsequence(DOCUMENTED_HEAD_COMMAND, command), command
    assert command[-1] == "--block"
    assert head["spec"]["replicas"] == 1 and head["spec"]["strategy"]["type"] == "Recreate"
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"gcs": 6379, "dashboard": 8265, "client": 10001}


def test_workers_join_the_head_service_with_their_cpu_count(default_objects):
    worker = named(default_objects, "Deployment", "sweeps-worker")
    container = worker["spec"]["template"]["spec"]["containers"][0]
    command = command_of(container)
    assert command[:2] == ["ray", "start"] and command[-1] == "--block"
    assert "--address=sweeps-head:6379" in command
    assert f"--num-cpus={DEFAULTS['worker']['cpu']}" in command
    assert worker["spec"]["replicas"] == DEFAULTS["worker"]["replicas"]


def test_workers_wait_for_the_head_before_joining(default_objects):
    worker = named(default_objects, "Deployment", "sweeps-worker")
    (wait,) = worker["spec"]["template"]["spec"]["initContainers"]
    script = " ".join(command_of(wait))
    # It polls the head Service's health endpoint until it answers, then lets the worker start.
    assert "until wget" in script and "http://sweeps-head:8265/api/gcs_healthz" in script


def test_ray_containers_use_equal_requests_and_limits_and_a_memory_backed_shm(default_objects):
    for owner, container, template in ray_containers(default_objects):
        component = "head" if container["name"] == "ray-head" else "worker"
        resources = container["resources"]
        assert resources["requests"] == resources["limits"], owner
        assert resources["limits"]["memory"] == DEFAULTS[component]["memory"]
        assert str(resources["limits"]["cpu"]) == str(DEFAULTS[component]["cpu"])
        volumes = {volume["name"]: volume for volume in template["spec"]["volumes"]}
        mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
        shm = volumes[mounts["/dev/shm"]]["emptyDir"]
        assert shm["medium"] == "Memory"
        object_store_mi = mebibytes(DEFAULTS[component]["objectStoreMemory"])
        flag = next(arg for arg in command_of(container) if arg.startswith("--object-store-memory="))
        assert int(flag.split("=")[1]) == object_store_mi * 2**20
        # Ray uses /dev/shm only if it has room for the whole object store; 10 % more is headroom.
        assert object_store_mi <= mebibytes(shm["sizeLimit"]) <= object_store_mi * 1.1 + 1
        assert volumes[mounts["/tmp/ray"]] == {"name": mounts["/tmp/ray"], "emptyDir": {}}


def test_ray_containers_have_readiness_and_liveness_probes(default_objects):
    for owner, container, _ in ray_containers(default_objects):
        for probe_name in ("readinessProbe", "livenessProbe"):
            probe = " ".join(container[probe_name]["exec"]["command"])
            assert "http://127.0.0.1:52365/api/local_raylet_healthz" in probe, owner
            if container["name"] == "ray-head":
                assert "http://127.0.0.1:8265/api/gcs_healthz" in probe
        assert f"--dashboard-agent-listen-port={DEFAULTS['ports']['dashboardAgent']}" in command_of(container)


@pytest.mark.parametrize("values_file", CI_VALUES_FILES, ids=lambda path: path.name)
def test_every_container_is_sized_and_locked_down(values_file):
    objects = render([values_file])
    for raycluster in by_kind(objects, "RayCluster"):
        autoscaler = raycluster["spec"]["autoscalerOptions"]
        assert autoscaler["resources"]["requests"] == autoscaler["resources"]["limits"]
        assert autoscaler["securityContext"]["allowPrivilegeEscalation"] is False
    for owner, template in pod_templates(objects):
        pod_security = template["spec"]["securityContext"]
        assert pod_security["runAsNonRoot"] is True and pod_security["runAsUser"] != 0, owner
        assert pod_security["seccompProfile"] == {"type": "RuntimeDefault"}, owner
        assert template["spec"]["enableServiceLinks"] is False, owner
        for container in all_containers(template):
            where = f"{owner} {container['name']}"
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["limits"]), where
            if container["name"] == "ray-worker" and values_file.name == "local-cluster-values.yaml":
                # worker.cpuRequest: a lower CPU request, the rest as everywhere else.
                assert resources["requests"]["memory"] == resources["limits"]["memory"], where
                assert resources["requests"]["cpu"] == "500m", where
            else:
                assert resources["requests"] and resources["requests"] == resources["limits"], where
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, where
            assert security["capabilities"]["drop"] == ["ALL"], where
            assert security["seccompProfile"] == {"type": "RuntimeDefault"}, where
            assert security.get("privileged", False) is False, where


def test_image_tag_defaults_to_the_app_version(default_objects):
    images = {container["image"] for _, template in pod_templates(default_objects)
              for container in all_containers(template)}
    assert images == {f"sweeps:{CHART['appVersion']}"}
    pinned = render(set_strings=["image.tag=0.0.9", "image.repository=registry.example.com/sweeps"])
    images = {container["image"] for _, template in pod_templates(pinned) for container in all_containers(template)}
    assert images == {"registry.example.com/sweeps:0.0.9"}


def test_long_names_are_cut_to_63_characters_and_stay_distinct():
    objects = render(set_values=["fullnameOverride=" + "a" * 30 + "-" + "b" * 32])
    names = [obj["metadata"]["name"] for obj in objects]
    assert all(len(name) <= 63 and DNS_LABEL.match(name) for name in names), names
    assert len(set((obj["kind"], obj["metadata"]["name"]) for obj in objects)) == len(objects)
    assert {name.rsplit("-", 1)[-1] for name in names} == {"head", "worker", "dashboard", "results", "ray", "token"}
    # The worker's head address and wait follow the cut name.
    worker = next(obj for obj in objects if obj["metadata"]["name"].endswith("-worker"))
    head_service = next(obj for obj in by_kind(objects, "Service") if obj["metadata"]["name"].endswith("-head"))
    assert f"--address={head_service['metadata']['name']}:6379" in command_of(
        worker["spec"]["template"]["spec"]["containers"][0])


def test_long_names_in_kuberay_mode_leave_room_for_the_names_kuberay_derives():
    long_name = "a" * 30 + "-" + "b" * 32
    objects = render(set_values=[f"fullnameOverride={long_name}", "mode=kuberay", "jobApi.serviceType=NodePort",
                                 "jobApi.exposeOutsideCluster=true"])
    (raycluster,) = by_kind(objects, "RayCluster")
    name = raycluster["metadata"]["name"]
    # KubeRay names the head Service <name>-head-svc, which must stay a 63-character DNS label.
    assert len(name) <= 40 and long_name.startswith(name)
    assert len(f"{name}-head-svc") <= 63
    jobs = next(obj for obj in by_kind(objects, "Service") if obj["metadata"]["name"].endswith("-head-jobs"))
    assert jobs["spec"]["selector"]["ray.io/cluster"] == name


# ---------------------------------------------------------------------------------------------
# Services: nothing leaves the cluster unless asked, and the job API only with a confirmation


def test_services_are_cluster_ip_by_default(default_objects):
    services = by_kind(default_objects, "Service")
    assert {service["spec"]["type"] for service in services} == {"ClusterIP"}
    head = named(default_objects, "Service", "sweeps-head")
    assert {port["name"]: port["port"] for port in head["spec"]["ports"]} == {
        "gcs": 6379, "dashboard": 8265, "client": 10001}


def test_publishing_the_job_api_needs_an_explicit_confirmation():
    for service_type in ("NodePort", "LoadBalancer"):
        message = render_error(set_values=[f"jobApi.serviceType={service_type}"])
        assert "jobApi.serviceType" in message and service_type in message
        assert "jobApi.exposeOutsideCluster=true" in message and "any code" in message


@pytest.mark.parametrize("name", ["nodeport", "loadbalancer"])
def test_a_published_job_api_exposes_port_8265_alone(name):
    objects = render([ci_values(name)])
    outside = [service for service in by_kind(objects, "Service") if service["spec"]["type"] != "ClusterIP"]
    jobs = named(objects, "Service", "sweeps-head-jobs")
    assert [port["port"] for port in jobs["spec"]["ports"]] == [8265]
    for service in outside:
        # The control store and Ray client ports have no authentication: never published.
        assert not {port["port"] for port in service["spec"]["ports"]} & {6379, 10001, 52365}
    values = yaml.safe_load(ci_values(name).read_text())
    if values["jobApi"]["serviceType"] == "NodePort":
        assert jobs["spec"]["ports"][0]["nodePort"] == values["jobApi"]["nodePort"]
        dashboard = named(objects, "Service", "sweeps-dashboard")
        assert dashboard["spec"]["ports"][0]["nodePort"] == values["dashboard"]["service"]["nodePort"]
    else:
        assert jobs["spec"]["loadBalancerSourceRanges"] == values["jobApi"]["loadBalancerSourceRanges"]


# ---------------------------------------------------------------------------------------------
# The results store


def store_containers(objects):
    """Every container that reads or writes the store: Ray head, Ray workers, dashboard."""
    found = [(owner, container, template) for owner, container, template in ray_containers(objects)]
    for deployment in by_kind(objects, "Deployment"):
        template = deployment["spec"]["template"]
        for container in template["spec"]["containers"]:
            if container["name"] == "dashboard":
                found.append((f"Deployment/{deployment['metadata']['name']}", container, template))
    return found


@pytest.mark.parametrize("name", ["static", "kuberay", "pvc"])
def test_the_results_claim_is_mounted_by_head_workers_and_dashboard(name):
    values = yaml.safe_load(ci_values(name).read_text())
    pvc_values = {**DEFAULTS["store"]["pvc"], **values.get("store", {}).get("pvc", {})}
    objects = render([ci_values(name)])
    claim = named(objects, "PersistentVolumeClaim", "sweeps-results")
    assert claim["spec"]["accessModes"] == [pvc_values["accessMode"]]
    assert claim["spec"]["resources"]["requests"]["storage"] == pvc_values["size"]
    assert claim["spec"].get("storageClassName") == pvc_values["storageClassName"]
    kept = claim["metadata"].get("annotations", {}).get("helm.sh/resource-policy") == "keep"
    assert kept == pvc_values["keepOnUninstall"]
    containers = store_containers(objects)
    assert {container["name"] for _, container, _ in containers} == {"ray-head", "ray-worker", "dashboard"}
    for owner, container, template in containers:
        assert env_of(container)["SWEEPS_STORE"] == pvc_values["mountPath"], owner
        claims = {volume["name"]: volume["persistentVolumeClaim"]["claimName"]
                  for volume in template["spec"]["volumes"] if "persistentVolumeClaim" in volume}
        mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
        assert claims[mounts[pvc_values["mountPath"]]] == "sweeps-results", owner


def test_an_existing_claim_is_used_and_none_is_created():
    objects = render([ci_values("existing-claim")])
    assert not by_kind(objects, "PersistentVolumeClaim")
    for owner, _, template in store_containers(objects):
        claims = [volume["persistentVolumeClaim"]["claimName"] for volume in template["spec"]["volumes"]
                  if "persistentVolumeClaim" in volume]
        assert claims == ["team-sweep-results"], owner


def test_an_object_store_needs_no_volume_and_gets_credentials_from_the_named_secret():
    objects = render([ci_values("objectstore")])
    assert not by_kind(objects, "PersistentVolumeClaim")
    containers = store_containers(objects)
    assert len(containers) == 3
    for owner, container, template in containers:
        env = env_of(container)
        assert env["SWEEPS_STORE"] == "s3://sweep-results/exp4", owner
        assert env["AWS_ENDPOINT_URL"] == "http://minio.minio.svc:9000"
        assert env["AWS_REGION"] == "us-east-1"
        assert container["envFrom"] == [{"secretRef": {"name": "sweeps-s3"}}], owner
        assert not any("persistentVolumeClaim" in volume for volume in template["spec"].get("volumes", []))
        assert template["spec"]["serviceAccountName"] == "sweeps-writer"
        assert template["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    dashboard = named(objects, "Deployment", "sweeps-dashboard")["spec"]["template"]["spec"]["containers"][0]
    assert command_of(dashboard)[:4] == ["python", "-m", "dashboards", "serve"]
    assert command_of(dashboard)[command_of(dashboard).index("--store") + 1] == "s3://sweep-results/exp4"


def test_an_object_store_without_a_uri_is_refused():
    message = render_error(set_values=["store.type=objectStore"])
    assert "store.objectStore.uri" in message and "s3://" in message


def test_dashboard_serves_the_store_on_its_port_and_can_be_turned_off(default_objects):
    dashboard = named(default_objects, "Deployment", "sweeps-dashboard")["spec"]["template"]["spec"]["containers"][0]
    command = command_of(dashboard)
    assert command[:4] == ["python", "-m", "dashboards", "serve"]
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert command[command.index("--port") + 1] == "8080"
    assert dashboard["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    without = render(set_values=["dashboard.enabled=false"])
    assert not [obj for obj in without if "dashboard" in obj["metadata"]["name"]]


def test_an_object_store_larger_than_half_the_memory_is_refused():
    message = render_error(set_strings=["worker.memory=1Gi", "worker.objectStoreMemory=768Mi"])
    assert "worker.objectStoreMemory" in message and "768Mi" in message and "512Mi" in message


# ---------------------------------------------------------------------------------------------
# Mode kuberay


def test_kuberay_mode_renders_one_raycluster_with_autoscaling_bounds():
    values = yaml.safe_load(ci_values("kuberay").read_text())
    objects = render([ci_values("kuberay")])
    assert [obj["metadata"]["name"] for obj in by_kind(objects, "Deployment")] == ["sweeps-dashboard"]
    assert [obj["metadata"]["name"] for obj in by_kind(objects, "Service")] == ["sweeps-dashboard"]
    (raycluster,) = by_kind(objects, "RayCluster")
    spec = raycluster["spec"]
    assert raycluster["apiVersion"] == "ray.io/v1"
    assert spec["rayVersion"] == DEFAULTS["rayVersion"]
    assert spec["enableInTreeAutoscaling"] is True
    assert spec["autoscalerOptions"]["upscalingMode"] == values["autoscaler"]["upscalingMode"]
    assert spec["autoscalerOptions"]["idleTimeoutSeconds"] == values["autoscaler"]["idleTimeoutSeconds"]
    head_params = spec["headGroupSpec"]["rayStartParams"]
    assert head_params["num-cpus"] == "0" and head_params["dashboard-host"] == "0.0.0.0"
    assert spec["headGroupSpec"]["serviceType"] == "ClusterIP"
    (group,) = spec["workerGroupSpecs"]
    assert (group["minReplicas"], group["replicas"], group["maxReplicas"]) == (0, 1, 8)
    assert group["rayStartParams"]["num-cpus"] == str(values["worker"]["cpu"])
    assert group["rayStartParams"]["object-store-memory"] == str(2 * 2**30)
    worker = group["template"]["spec"]["containers"][0]
    assert worker["resources"]["limits"] == {"cpu": "4", "memory": "8Gi"}


def test_kuberay_replicas_outside_the_bounds_are_refused():
    message = render_error(set_values=["mode=kuberay", "worker.replicas=9", "worker.maxReplicas=4"])
    assert "worker.replicas" in message and "9" in message and "worker.maxReplicas (4)" in message


def test_kuberay_job_service_selects_the_head_pod_kuberay_labels():
    objects = render([ci_values("loadbalancer")])
    jobs = named(objects, "Service", "sweeps-head-jobs")
    (raycluster,) = by_kind(objects, "RayCluster")
    assert jobs["spec"]["selector"] == {"ray.io/cluster": raycluster["metadata"]["name"], "ray.io/node-type": "head"}


# ---------------------------------------------------------------------------------------------
# NOTES.txt


def test_notes_give_the_port_forward_and_submit_steps_for_cluster_ip():
    notes = render_notes()
    assert "kubectl -n sweeps-ns port-forward svc/sweeps-head 8265:8265" in notes
    assert ("ray job submit --address http://127.0.0.1:8265 --working-dir . -- python sweeps/exp4c.py"
            in notes)
    assert "kubectl -n sweeps-ns port-forward svc/sweeps-dashboard 8080:8080" in notes
    assert "WARNING" not in notes
    assert "rollout status deployment/sweeps-head" in notes


def test_notes_warn_when_the_job_api_is_published():
    notes = render_notes([ci_values("nodeport")])
    assert "WARNING" in notes and "runs any code" in notes
    assert "get svc sweeps-head-jobs -o jsonpath='{.spec.ports[0].nodePort}'" in notes
    assert "ray job submit --address $RAY_API_SERVER_ADDRESS" in notes
    assert "port-forward svc/sweeps-head " not in notes


def test_notes_in_kuberay_mode_name_the_operator_head_service():
    notes = render_notes([ci_values("kuberay")])
    assert "port-forward svc/sweeps-head-svc 8265:8265" in notes
    assert "get raycluster sweeps" in notes

"""The chart's CPU requests: its pods fit a two-CPU node (the local cluster's, scripts/local-cluster.sh), a
worker may request less CPU than its limit, and KubeRay's workers take the same request.
"""

from __future__ import annotations

from test_chart_support import CI_VALUES_DIR, all_containers, named, pod_templates, render

LOCAL_VALUES = CI_VALUES_DIR / "local-cluster-values.yaml"


def millicpus(quantity) -> int:
    text = str(quantity)
    return int(text[:-1]) if text.endswith("m") else int(float(text) * 1000)


def pod_requests(template) -> int:
    """CPU the scheduler reserves for a pod: the larger of its containers' sum and any init container."""
    spec = template["spec"]
    main = sum(millicpus(c["resources"]["requests"]["cpu"]) for c in spec["containers"])
    init = max((millicpus(c["resources"]["requests"]["cpu"]) for c in spec.get("initContainers", [])), default=0)
    return max(main, init)


def test_the_local_cluster_values_fit_two_workers_on_a_two_cpu_node():
    # The defaults ask 1 + 2 x 2 + 0.5 CPUs, so on a 2-CPU node (a laptop's kind, the local
    # cluster) the workers stay Pending with "Insufficient cpu".
    objects = render([LOCAL_VALUES], set_values=["worker.replicas=2"])
    total = 0
    for owner, template in pod_templates(objects):
        replicas = next(obj for obj in objects if f"{obj['kind']}/{obj['metadata']['name']}" == owner)["spec"].get(
            "replicas", 1)
        total += replicas * pod_requests(template)
    assert total <= 1800, f"{total}m of CPU requests leave too little of a 2-CPU node for the kubelet and system"


def test_a_worker_cpu_request_lowers_only_the_request():
    objects = render([LOCAL_VALUES])
    worker = named(objects, "Deployment", "sweeps-worker")["spec"]["template"]
    [ray_worker] = worker["spec"]["containers"]
    assert ray_worker["resources"]["requests"]["cpu"] == "500m"
    assert ray_worker["resources"]["limits"]["cpu"] == "1"
    # Ray still runs worker.cpu tasks at once on it.
    assert "--num-cpus=1" in ray_worker["args"]
    # By default requests equal limits (Guaranteed QoS), for every container.
    for _, template in pod_templates(render()):
        for container in all_containers(template):
            assert container["resources"]["requests"] == container["resources"]["limits"], container["name"]


def test_kuberay_workers_take_the_cpu_request_too():
    objects = render([CI_VALUES_DIR / "kuberay-values.yaml", LOCAL_VALUES])
    raycluster = next(obj for obj in objects if obj["kind"] == "RayCluster")
    [group] = raycluster["spec"]["workerGroupSpecs"]
    [container] = group["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["cpu"] == "500m"
    assert container["resources"]["limits"]["cpu"] == "1"

"""Reading snapshots: formats, folders, stdin, every PodGroup dialect, and located errors."""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import re
from pathlib import Path

import pytest

from gangplan.errors import InputError, Position
from gangplan.loader import Limits, load_snapshot, locate, read_bounded, read_documents
from gangplan.model import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Origin,
    PodGroupAPI,
    PodPhase,
    SortRule,
    Taint,
    Toleration,
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative file names, so error messages show them exactly as given."""
    monkeypatch.chdir(tmp_path)


def write(name: str, text: str | bytes) -> str:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return name


def error(paths: list[str], **options: object) -> str:
    with pytest.raises(InputError) as caught:
        load_snapshot(paths, **options)  # type: ignore[arg-type]
    assert caught.value.exit_code == 2
    assert "\n" not in str(caught.value)
    return str(caught.value)


NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n"
NODE_N = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
POD_P = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
POD_GROUP = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n"
POD_GROUP += "spec:\n"

# What `kubectl get nodes,pods -A -o yaml` prints, trimmed: keys sorted, kind after items.
KUBECTL_LIST = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      node.alpha.kubernetes.io/ttl: "0"
    creationTimestamp: "2024-05-01T10:00:00Z"
    labels:
      kubernetes.io/hostname: gpu-1
      network.topology/tor: tor-1
    name: gpu-1
    resourceVersion: "123"
    uid: node-uid-1
  spec:
    podCIDR: 10.0.0.0/24
    taints:
    - effect: NoSchedule
      key: nvidia.com/gpu
      value: present
  status:
    allocatable:
      cpu: 95500m
      ephemeral-storage: 1000Gi
      memory: 1056454472Ki
      nvidia.com/gpu: "8"
      pods: "110"
    capacity:
      cpu: "96"
      memory: 1056556872Ki
      nvidia.com/gpu: "8"
      pods: "110"
    conditions:
    - lastHeartbeatTime: "2024-05-01T10:00:00Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    nodeInfo:
      kubeletVersion: v1.30.0
- apiVersion: v1
  kind: Node
  metadata:
    name: cpu-1
  spec:
    unschedulable: true
  status:
    capacity:
      cpu: "4"
      memory: 16Gi
    conditions:
    - status: "False"
      type: MemoryPressure
    - status: Unknown
      type: Ready
- apiVersion: v1
  kind: Pod
  metadata:
    creationTimestamp: "2024-05-01T10:05:00Z"
    labels:
      scheduling.x-k8s.io/pod-group: train
    name: train-0
    namespace: ml
    ownerReferences:
    - apiVersion: batch/v1
      blockOwnerDeletion: true
      controller: true
      kind: Job
      name: train
      uid: job-uid
    uid: pod-uid-1
  spec:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: network.topology/tor
              operator: In
              values: [tor-1, tor-2]
            - key: gpu-count
              operator: Gt
              values: ["4"]
            matchFields:
            - key: metadata.name
              operator: NotIn
              values: [cpu-1]
          - matchExpressions:
            - key: spare
              operator: Exists
    containers:
    - image: trainer:1
      name: main
      resources:
        limits:
          cpu: "4"
          nvidia.com/gpu: "1"
        requests:
          cpu: "2"
          memory: 8Gi
    initContainers:
    - name: setup
      resources:
        requests:
          cpu: "6"
    - name: proxy
      restartPolicy: Always
      resources:
        requests:
          cpu: 100m
    nodeSelector:
      pool: gpu
    overhead:
      cpu: 250m
    priority: 1000
    priorityClassName: high
    tolerations:
    - effect: NoSchedule
      key: nvidia.com/gpu
      operator: Exists
    - effect: NoExecute
      key: node.kubernetes.io/not-ready
      operator: Exists
      tolerationSeconds: 300
    - key: dedicated
      value: ml
  status:
    phase: Pending
- apiVersion: v1
  kind: Pod
  metadata:
    name: web
    namespace: default
  spec:
    containers:
    - name: web
      resources: {}
    nodeName: cpu-1
  status:
    phase: Running
- apiVersion: v1
  kind: Service
  metadata:
    name: kubernetes
kind: List
metadata:
  resourceVersion: ""
"""


def test_kubectl_list() -> None:
    snapshot = load_snapshot([write("dump.yaml", KUBECTL_LIST)])
    cpu, gpu = snapshot.nodes  # by name, whatever the order of the dump
    assert gpu.name == "gpu-1"
    assert gpu.labels == {"kubernetes.io/hostname": "gpu-1", "network.topology/tor": "tor-1"}
    assert gpu.allocatable == {
        "cpu": 95500,
        "ephemeral-storage": 1000 * 2**30,
        "memory": 1056454472 * 1024,
        "nvidia.com/gpu": 8,
        "pods": 110,
    }
    assert gpu.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert (gpu.ready, gpu.unschedulable) == (True, False)
    assert gpu.origin == Origin("dump.yaml", 0, ("items", 0))
    # capacity when allocatable is absent; 110 pods when the node does not say
    assert cpu.allocatable == {"cpu": 4000, "memory": 16 * 2**30, "pods": 110}
    assert (cpu.ready, cpu.unschedulable) == (False, True)

    train, web = snapshot.pods
    assert (train.namespace, train.name, train.uid) == ("ml", "train-0", "pod-uid-1")
    assert train.creation_timestamp == "2024-05-01T10:05:00Z"
    assert train.labels == {"scheduling.x-k8s.io/pod-group": "train"}
    assert [(o.kind, o.name, o.controller) for o in train.owners] == [("Job", "train", True)]
    (main,) = train.containers
    # a limit without a request is the request (API-server defaulting); a request wins
    assert main.name == "main"
    assert main.requests == {"cpu": 2000, "memory": 8 * 2**30, "nvidia.com/gpu": 1}
    assert [(c.name, c.requests, c.restart_policy) for c in train.init_containers] == [
        ("setup", {"cpu": 6000}, None),
        ("proxy", {"cpu": 100}, "Always"),
    ]
    assert train.overhead == {"cpu": 250}
    assert train.node_selector == {"pool": "gpu"}
    assert train.node_affinity == NodeSelector(
        (
            NodeSelectorTerm(
                (
                    NodeSelectorRequirement("network.topology/tor", "In", ("tor-1", "tor-2")),
                    NodeSelectorRequirement("gpu-count", "Gt", ("4",)),
                ),
                (NodeSelectorRequirement("metadata.name", "NotIn", ("cpu-1",)),),
            ),
            NodeSelectorTerm((NodeSelectorRequirement("spare", "Exists"),)),
        )
    )
    assert train.tolerations == (
        Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
        Toleration("dedicated", "Equal", "ml", ""),
    )
    assert (train.priority, train.priority_class_name) == (1000, "high")
    assert (train.node_name, train.phase) == (None, PodPhase.PENDING)
    assert (web.key, web.node_name, web.phase) == ("default/web", "cpu-1", PodPhase.RUNNING)
    assert web.containers[0].requests == {}
    assert web.origin == Origin("dump.yaml", 0, ("items", 3))
    assert snapshot.skipped_kinds == {"Service": 1}


def test_kubectl_json_list() -> None:
    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "2"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "a"},
            "spec": {"priority": 5},
        },
    ]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4)
    snapshot = load_snapshot([write("dump.json", text)])
    assert [n.name for n in snapshot.nodes] == ["n1"]
    assert snapshot.nodes[0].allocatable == {"cpu": 2000, "pods": 110}
    assert snapshot.pods[0].key == "a/p" and snapshot.pods[0].priority == 5
    assert snapshot.pods[0].origin == Origin("dump.json", 0, ("items", 1))


def test_a_nodes_own_pod_limit_is_kept() -> None:
    """The kubelet reports its --max-pods as allocatable pods (250 on many GPU nodes); 110,
    the kubelet's default, stands in only for a node that does not say (DESIGN)."""
    text = NODE.format(name="big") + "status: {allocatable: {cpu: '2', pods: '250'}}\n"
    (node,) = load_snapshot([write("big.yaml", text)]).nodes
    assert node.allocatable == {"cpu": 2000, "pods": 250}


def test_every_taint_of_a_node_is_kept() -> None:
    """Each taint repels pods on its own (a pod must tolerate all of a node's NoSchedule and
    NoExecute taints): a GPU node dedicated to a team carries two."""
    text = TAINT + "  - {key: nvidia.com/gpu, effect: NoSchedule}\n  - {key: dedicated, value: ml, effect: NoExecute}\n"
    (node,) = load_snapshot([write("taints.yaml", text)]).nodes
    assert node.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"), Taint("dedicated", "ml", "NoExecute"))


def test_multi_document_yaml() -> None:
    text = (
        "# a cluster\n---\n"
        + NODE.format(name="a")
        + "---\n---\n# nothing here\n---\n"
        + "apiVersion: v1\nkind: PodList\nitems:\n- "
        + NODE.format(name="b").replace("\n", "\n  ").rstrip()
        + "\n---\n"
        + NODE.format(name="c")
    )
    snapshot = load_snapshot([write("multi.yaml", text)])
    assert [(n.name, n.origin.document, n.origin.path) for n in snapshot.nodes] == [
        ("a", 0, ()),
        ("b", 3, ("items", 0)),
        ("c", 4, ()),
    ]
    assert all(n.ready for n in snapshot.nodes)  # no conditions at all: hand-written, Ready


def test_folder_is_read_recursively_in_path_order() -> None:
    write("snap/b.yaml", NODE.format(name="b"))
    write("snap/a/z.yml", NODE.format(name="az"))
    write("snap/c.json", '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}}')
    write("snap/a.yaml", NODE.format(name="a"))
    write("snap/notes.txt", "not read")
    write("snap/.hidden.yaml", "not: read")
    write("snap/.git/config.yaml", "not: read")
    snapshot = load_snapshot(["snap", write("last.yaml", NODE.format(name="last"))])
    assert {n.name: n.origin.file for n in snapshot.nodes} == {
        "a": str(Path("snap/a.yaml")), "az": str(Path("snap/a/z.yml")), "b": str(Path("snap/b.yaml")),
        "c": str(Path("snap/c.json")), "last": "last.yaml",
    }
    # component by component, as kubectl -R walks a folder: snap/a/ before snap/a.yaml
    write("snap/a.yaml", NODE.format(name="az"))
    assert error(["snap"]) == f"{Path('snap/a.yaml')}:3:18: duplicate Node az (first at {Path('snap/a/z.yml')}:3:18)"


def test_the_plan_depends_on_the_nodes_not_their_order() -> None:
    """Nodes are kept by name: a dump split or shuffled differently gave other bindings."""
    names = ["n3", "n1", "n2"]
    text = "---\n".join(NODE.format(name=name) for name in names)
    forward = load_snapshot([write("f.yaml", text)])
    backward = load_snapshot([write("b.yaml", "---\n".join(NODE.format(name=name) for name in reversed(names)))])
    assert [n.name for n in forward.nodes] == [n.name for n in backward.nodes] == ["n1", "n2", "n3"]


def test_stdin() -> None:
    stdin = (NODE.format(name="a") + "---\n" + NODE.format(name="b")).encode()
    snapshot = load_snapshot(["-", write("c.yaml", NODE.format(name="c"))], stdin=stdin)
    assert [(n.name, n.origin.file) for n in snapshot.nodes] == [
        ("a", "<stdin>"),
        ("b", "<stdin>"),
        ("c", "c.yaml"),
    ]
    bad = b"apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n    gpu: 8\n"
    assert error(["-"], stdin=bad) == (
        "<stdin>:6:10: metadata.labels.gpu: expected a string (quote it), got 8"
    )


def test_scheduler_plugins_pod_groups() -> None:
    text = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: train
  namespace: ml
  uid: pg-uid
  creationTimestamp: 2024-05-01T10:00:00Z
spec:
  minMember: 4
  minResources:
    cpu: "8"
    nvidia.com/gpu: 4
  scheduleTimeoutSeconds: 60
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: legacy}
spec: {minMember: 0}
"""
    train, legacy = load_snapshot([write("pg.yaml", text)]).pod_groups
    assert (train.key, train.api) == ("ml/train", PodGroupAPI.SCHEDULER_PLUGINS)
    assert train.min_member == 4
    assert train.min_resources == {"cpu": 8000, "nvidia.com/gpu": 4}
    assert train.schedule_timeout_seconds == 60
    assert (train.uid, train.creation_timestamp) == ("pg-uid", "2024-05-01T10:00:00Z")
    spec = train.raw["spec"]
    assert isinstance(spec, dict) and spec["minResources"]["nvidia.com/gpu"] == 4
    assert (legacy.key, legacy.api, legacy.min_member) == (
        "default/legacy",
        PodGroupAPI.SCHEDULER_PLUGINS_LEGACY,
        0,
    )
    assert legacy.schedule_timeout_seconds is None and legacy.min_resources == {}


def test_volcano_pod_groups() -> None:
    text = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: job1, namespace: ml}
spec:
  minMember: 3
  minTaskMember: {ps: 1, worker: 2}
  minResources: {cpu: 1500m, memory: 1Gi}
  queue: research
  priorityClassName: high
  subGroup: pair
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: job2, namespace: ml}
spec: {subGroup: pair}
"""
    job1, job2 = load_snapshot([write("vc.yaml", text)]).pod_groups
    assert job1.api is PodGroupAPI.VOLCANO
    assert (job1.min_member, dict(job1.min_task_member)) == (3, {"ps": 1, "worker": 2})
    assert job1.min_resources == {"cpu": 1500, "memory": 2**30}
    assert (job1.queue, job1.priority_class_name, job1.sub_group) == ("research", "high", "pair")
    # Volcano defaults only the queue (CRD and webhook); an absent minMember is Go's 0
    assert (job2.min_member, job2.queue, job2.sub_group) == (0, "default", "pair")
    assert job2.priority_class_name is None


def test_volcano_min_resources_as_its_job_controller_writes_them() -> None:
    """Volcano's job controller fills minResources from the quota evaluator; every PodGroup it
    made was 'minResources count/pods cannot be met' (user review G). Its scheduler reads
    resource names only: requests.nvidia.com/gpu (the evaluator's only GPU key) asks nothing
    (review 18 M F8; gangplan had read requests.X as X)."""
    text = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: job, namespace: ml}
spec:
  minMember: 3
  minResources: {count/pods: "3", cpu: "3", limits.cpu: "6", limits.memory: 12Gi, memory: 6Gi, pods: "3",
    requests.cpu: "3", requests.memory: 6Gi, requests.nvidia.com/gpu: "4"}
"""
    (job,) = load_snapshot([write("vc.yaml", text)]).pod_groups
    assert job.min_resources == {"cpu": 3000, "memory": 6 * 2**30, "pods": 3}
    bad = text.replace('cpu: "3", limits', 'cpu: "x", limits')
    assert error([write("vc.yaml", bad)]).startswith("vc.yaml:6:40: spec.minResources.cpu: 'x' is not a quantity")


GODEL = """\
apiVersion: {api}
kind: PodGroup
metadata:
  generation: 1
  name: nginx
spec:
  minMember: 100
  scheduleTimeoutSeconds: 3000
  priorityClassName: batch
  affinity:
    podGroupAffinity:
      preferred:
      - topologyKey: tce.kubernetes.io/nettoripv6
      required:
      - topologyKey: tce.kubernetes.io/netminipodipv6
      nodeSelector:
        nodeSelectorTerms:
          - matchExpressions:
            - key: tor
              operator: In
              values:
              - tor-0-1-7
      sortRules:
      - order: Descending
        resource: GPU
        dimension: Capacity
      - order: Descending
        resource: MEM
        dimension: Available
      - {{resource: Memory, order: Ascending}}
      - {{resource: CPU, order: Ascending}}
"""


@pytest.mark.parametrize("api", [PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE])
def test_godel_pod_groups(api: PodGroupAPI) -> None:
    (group,) = load_snapshot([write("godel.yaml", GODEL.format(api=api.value))]).pod_groups
    assert (group.api, group.key, group.min_member) == (api, "default/nginx", 100)
    assert (group.schedule_timeout_seconds, group.priority_class_name) == (3000, "batch")
    assert group.required_topology == ("tce.kubernetes.io/netminipodipv6",)
    assert group.preferred_topology == ("tce.kubernetes.io/nettoripv6",)
    assert group.node_selector == NodeSelector(
        (NodeSelectorTerm((NodeSelectorRequirement("tor", "In", ("tor-0-1-7",)),)),)
    )
    assert group.sort_rules == (
        SortRule("GPU", "Capacity", "Descending"),
        SortRule("Memory", "Available", "Descending"),
        SortRule("Memory", "Capacity", "Ascending"),
        SortRule("CPU", "Capacity", "Ascending"),
    )


def test_godel_terms_beside_an_empty_pod_group_affinity_are_read_and_marked() -> None:
    """Seed 003's third example indents its terms beside an empty podGroupAffinity: gangplan reads
    them there and marks the group (planning warns). Beside a podGroupAffinity that has terms
    they are fields Godel's CRD does not define (Affinity holds only podGroupAffinity), which
    the API server prunes: the terms inside are the group's."""
    seed = GODEL.format(api=PodGroupAPI.GODEL_BYTEDANCE.value).replace("\n      ", "\n    ")  # terms out by one level
    (group,) = load_snapshot([write("seed.yaml", seed)]).pod_groups
    assert group.affinity_beside
    assert (group.required_topology, group.preferred_topology) == (
        ("tce.kubernetes.io/netminipodipv6",), ("tce.kubernetes.io/nettoripv6",)
    )
    assert len(group.sort_rules) == 4 and group.node_selector is not None
    stray = GODEL.format(api=PodGroupAPI.GODEL.value) + "    required:\n    - topologyKey: kubernetes.io/hostname\n"
    (group,) = load_snapshot([write("stray.yaml", stray)]).pod_groups
    assert not group.affinity_beside and group.required_topology == ("tce.kubernetes.io/netminipodipv6",)


def test_priority_classes_and_topologies() -> None:
    text = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000000
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PriorityClass
metadata: {name: low}
value: -10
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: dc}
spec:
  levels:
  - nodeLabel: cloud.com/block
  - nodeLabel: cloud.com/rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata: {name: kai}
spec:
  levels: [{nodeLabel: zone}]
"""
    snapshot = load_snapshot([write("prio.yaml", text)])
    assert [(p.name, p.value, p.global_default) for p in snapshot.priority_classes] == [
        ("high", 1000000, True),
        ("low", -10, False),
    ]
    assert [(t.name, t.levels) for t in snapshot.topologies] == [
        ("dc", ("cloud.com/block", "cloud.com/rack", "kubernetes.io/hostname")),
        ("kai", ("zone",)),
    ]


def test_workload_priority_classes_are_read_apart_from_priority_classes() -> None:
    """Kueue's own kind, at both versions it serves; a PriorityClass of the same name is
    another object, not a duplicate."""
    text = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: prod}
value: 5000
description: production
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: dev}
value: -3
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: prod}
value: 10
"""
    snapshot = load_snapshot([write("wpc.yaml", text)])
    assert [(c.name, c.value, c.origin.document) for c in snapshot.workload_priority_classes] == [
        ("prod", 5000, 0),
        ("dev", -3, 1),
    ]
    assert [(p.name, p.value) for p in snapshot.priority_classes] == [("prod", 10)]
    assert not snapshot.skipped_kinds
    twice = text + "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: dev}\nvalue: 1\n"
    with pytest.raises(InputError, match="duplicate WorkloadPriorityClass dev"):
        load_snapshot([write("twice.yaml", twice)])


def test_a_file_of_workload_priority_classes_alone_is_objects_found() -> None:
    """`kubectl get workloadpriorityclasses -o yaml` on its own is a snapshot with something in it,
    not "no Kubernetes objects found" (kills dropping the kind from load_snapshot's emptiness test)."""
    text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: prod}\nvalue: 5000\n"
    snapshot = load_snapshot([write("wpc-only.yaml", text)])
    assert [(c.name, c.value) for c in snapshot.workload_priority_classes] == [("prod", 5000)]


def test_other_kinds_are_counted_not_refused() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {x: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: kai}
spec: {minMember: "whatever: not read"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
---
apiVersion: topology.example.com/v1
kind: Topology
metadata: {name: t}
"""
    snapshot = load_snapshot([write("other.yaml", text)])
    assert snapshot.skipped_kinds == {
        "ConfigMap": 2,
        "PodGroup (scheduling.run.ai/v2alpha2)": 1,
        "Deployment (apps/v1, its pod template names no pod group; --gang NAME=FILE plans it as one gang)": 1,
        "Topology (topology.example.com/v1)": 1,
    }
    assert not (snapshot.nodes or snapshot.pods or snapshot.pod_groups)


def test_yaml_conveniences() -> None:
    """Unquoted timestamps stay as written; anchors, merge keys and `*` in strings are fine;
    a `{` that is not JSON is a YAML flow mapping."""
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  creationTimestamp: 2024-05-01T10:05:00Z
  labels: &labels {app: web, tier: "front"}
  annotations:
    <<: *labels
    query: a=1&b=2
    sign: =
"""
    (pod,) = load_snapshot([write("conv.yaml", text)]).pods
    assert pod.creation_timestamp == "2024-05-01T10:05:00Z"
    assert pod.annotations == {"app": "web", "tier": "front", "query": "a=1&b=2", "sign": "="}
    flow = "{apiVersion: v1, kind: Node, metadata: {name: flow}}\n"
    assert load_snapshot([write("flow.json", flow)]).nodes[0].name == "flow"


def test_pod_bound_to_a_node_that_is_gone_is_fine_once_finished() -> None:
    text = POD_P + "spec: {nodeName: old}\nstatus: {phase: Succeeded}\n"
    (pod,) = load_snapshot([write("done.yaml", text)]).pods
    assert (pod.node_name, pod.phase) == ("old", PodPhase.SUCCEEDED)


def test_empty_strings_are_unset_as_in_kubernetes() -> None:
    """Go's zero value: a pod with namespace "" is in the default namespace, nodeName "" is not
    bound (kube-scheduler picks pods with len(NodeName) == 0), priorityClassName "" names no
    class (the admission plugin then takes the global default), uid "" was never created."""
    text = POD_P.replace("{name: p}", "{name: p, namespace: '', uid: ''}")
    text += "spec: {nodeName: '', priorityClassName: ''}\n"
    (pod,) = load_snapshot([write("empty.yaml", text)]).pods
    assert (pod.key, pod.node_name, pod.priority_class_name, pod.uid) == ("default/p", None, None, None)
    group = POD_GROUP.replace("  name: g\n", "  name: g\n  namespace: ''\n  uid: ''\n") + "  minMember: 1\n"
    (read,) = load_snapshot([write("group.yaml", group)]).pod_groups
    assert (read.key, read.uid, read.manifest) == ("default/g", None, True)  # a manifest, to be created


def test_same_name_in_other_namespaces_is_not_a_duplicate() -> None:
    text = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\n"
        for ns in ("a", "b")
    )
    text += "---\n" + POD_GROUP.replace("name: g", "name: p") + "  minMember: 1\n"
    snapshot = load_snapshot([write("ns.yaml", text)])
    assert [p.key for p in snapshot.pods] == ["a/p", "b/p"]
    assert [g.key for g in snapshot.pod_groups] == ["default/p"]



def test_a_pod_and_a_pod_group_may_share_a_name() -> None:
    """Names are unique per kind and namespace: a single-pod job's PodGroup is often named as
    its pod, and the two are different objects, not duplicates."""
    text = POD_P.replace("{name: p}", "{name: train}") + "---\n" + POD_GROUP.replace("name: g", "name: train") + "  minMember: 1\n"
    snapshot = load_snapshot([write("same.yaml", text)])
    assert [p.key for p in snapshot.pods] == [g.key for g in snapshot.pod_groups] == ["default/train"]


@pytest.mark.parametrize("api", ["kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1alpha1", "kai.scheduler/v1alpha1"])
def test_every_topology_version_in_the_design_is_read(api: str) -> None:
    """DESIGN's input table: Kueue's Topology at v1beta2, v1beta1 and v1alpha1, and KAI's (the same shape)."""
    text = f"apiVersion: {api}\nkind: Topology\nmetadata: {{name: dc}}\nspec:\n  levels: [{{nodeLabel: rack}}, {{nodeLabel: kubernetes.io/hostname}}]\n"
    (topology,) = load_snapshot([write("t.yaml", text)]).topologies
    assert (topology.name, topology.levels) == ("dc", ("rack", "kubernetes.io/hostname"))


@pytest.mark.parametrize("key", ["rack\x1b[31m", "a b", "<b>", "/rack"])
def test_a_topology_level_must_be_a_label_key(key: str) -> None:
    """Kueue's CRD holds nodeLabel to a qualified name, as a node's label keys are held; a
    level key with an escape in it went to the terminal raw in `topology`'s first line."""
    text = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: dc}\nspec:\n"
        f"  levels: [{{nodeLabel: zone}}, {{nodeLabel: {json.dumps(key)}}}]\n"
    )
    said = error([write("t.yaml", text)])
    assert said.startswith("t.yaml:5:") and f"spec.levels[1].nodeLabel: label key {key!r}" in said, said


# --- input errors: each names FILE:LINE:COL of the offending field -------------------------


def test_missing_file_and_empty_folder() -> None:
    assert error(["nope.yaml"]) == "nope.yaml: no such file or directory"
    write("empty/readme.txt", "hello")
    assert error(["empty"]) == "empty: no .yaml, .yml or .json files in this directory"


def test_binary_files() -> None:
    assert error([write("nul.yaml", b"apiVersion: v1\n\x00\x01")]) == (
        "nul.yaml: not a text file (it contains NUL bytes)"
    )
    assert error([write("latin1.yaml", "name: café\n".encode("latin-1"))]) == (
        "latin1.yaml: not a text file (it is not UTF-8)"
    )
    assert error(["-"], stdin=b"\xff\xfd") == "<stdin>: not a text file (it is not UTF-8)"
    assert error([write("snap.json.gz", gzip.compress(b'{"kind": "List", "items": []}'))]) == (
        "snap.json.gz: not a text file (it is gzip-compressed: zcat it into gangplan's stdin, -)"
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_a_byte_order_mark_are_read(encoding: str) -> None:
    """Windows PowerShell's `kubectl get -o yaml > snap.yaml` writes UTF-16 with a BOM; YAML allows it."""
    text = NODE.format(name="a") + "---\n" + NODE.format(name="b") + "status: {allocatable: {cpu: [4]}}\n"
    bom = codecs.BOM_UTF16_BE if encoding == "utf-16-be" else b""  # the other codecs write their own
    path = write("wide.yaml", bom + text.encode(encoding))
    assert error([path]) == f"{path}:8:29: status.allocatable.cpu: expected a quantity such as 500m, 2, 1.5 or 4Gi, got a list"
    snapshot = load_snapshot([write("wide.yaml", bom + NODE.format(name="a").encode(encoding))])
    assert [n.name for n in snapshot.nodes] == ["a"]
    for encoding in ("utf-16-le", "utf-16-be"):
        assert error([write("wide.yaml", "name: a".encode(encoding))]) == (
            "wide.yaml: not a text file (it looks like UTF-16 without a byte-order mark; save it as UTF-8)"
        )
    # Binary data that opens with a NUL is no UTF-16 (a user review's file said it was).
    for data in (b"\x00\x01\x02binary", b"\x00\x00\x00\x01" + bytes(range(256))):
        assert error([write("bin.yaml", data)]) == "bin.yaml: not a text file (it contains NUL bytes)"


def test_size_and_document_limits() -> None:
    path = write("big.yaml", NODE.format(name="a"))
    assert error([path], limits=Limits(max_file_bytes=20)) == (
        "big.yaml: file is larger than the limit of 20 bytes (raise it with --max-file-size)"
    )
    assert error(["-"], stdin=b"x" * 21, limits=Limits(max_file_bytes=20)) == (
        "<stdin>: file is larger than the limit of 20 bytes (raise it with --max-file-size)"
    )
    three = "---\n".join(NODE.format(name=name) for name in "abc")
    assert error([write("three.yaml", three)], limits=Limits(max_documents=2)) == (
        "three.yaml:9:1: more than 2 YAML documents in the input "
        "(raise the limit with --max-documents)"
    )


def test_alias_bombs() -> None:
    levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for name, previous in zip("bcdefghij", "abcdefghi"):
        levels.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 10) + "]")
    bomb = "\n".join(levels) + "\n"
    # lines 2-5 add 123,440 nodes; each *e on line 6 adds 111,111: the 8th passes 10**6
    assert error([write("lol.yaml", bomb)]) == (
        "lol.yaml:6:29: YAML aliases expand to more than 1000000 nodes (alias bomb?)"
    )
    # [*a x 10] on line 2: each *a is 11 nodes, so the 10th alias (column 35) passes 100
    assert error(["lol.yaml"], limits=Limits(max_expanded_nodes=100)) == (
        "lol.yaml:2:35: YAML aliases expand to more than 100 nodes (alias bomb?)"
    )
    assert error(["lol.yaml"], limits=Limits(max_aliases=3)) == (
        "lol.yaml:2:17: more than 3 YAML aliases (alias bomb?)"
    )
    # Few nodes, much text: a 1 MiB string repeated 17 times is 17 MiB once written back out.
    text = "s: &s " + "x" * 2**20 + "\nt: [" + ", ".join(["*s"] * 17) + "]\n"
    assert error([write("long.yaml", text)]) == (
        "long.yaml:2:69: YAML aliases expand to more than 16777216 characters of text (alias bomb?)"
    )


NOT_AN_OBJECT = "expected a Kubernetes object (a mapping with apiVersion and kind)"
MISSING_STRING = "required field is missing (expected a non-empty string)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just a string\n", f"1:1: {NOT_AN_OBJECT}"),
        ("- a\n- b\n", f"1:1: {NOT_AN_OBJECT}"),
        (NODE.format(name="a") + "---\n42\n", f"5:1: {NOT_AN_OBJECT}"),
        (
            "apiVersion: v1\nkind: List\nitems:\n- "
            + NODE.format(name="a").replace("\n", "\n  ").rstrip()
            + "\n- text\n",
            f"7:3: {NOT_AN_OBJECT}",
        ),
        (
            "apiVersion: v1\nkind: NodeList\nitems: {a: 1}\n",
            "3:8: items: expected a list of objects in a NodeList",
        ),
        (
            NODE.format(name="a") + "---\napiVersion: v1\nmetadata: {name: b}\n",
            f"5:1: kind: {MISSING_STRING}",
        ),
        ("kind: Node\nmetadata: {name: b}\n", f"1:1: apiVersion: {MISSING_STRING}"),
        ("apiVersion: 1\nkind: Node\n", "1:13: apiVersion: expected a non-empty string, got 1"),
        (
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: [a, b\n  labels: {}\n",
            "5:9: not valid YAML: did not find expected ',' or ']'"
            " (while parsing a flow sequence at line 4)",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n labels: {}\n",
            "5:2: not valid YAML: did not find expected key",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: !!python/object:os.system {}\n",
            "3:11: not valid YAML: could not determine a constructor for the tag"
            " 'tag:yaml.org,2002:python/object:os.system'",
        ),
        (
            "apiVersion: v1\nkind: Node\nname: \x07\n",
            "3:7: not valid YAML: character #x0007 is not allowed"
            " (control characters are not allowed)",
        ),
    ],
)
def test_malformed_documents(text: str, message: str) -> None:
    assert error([write("doc.yaml", text)]) == f"doc.yaml:{message}"


def test_deep_nesting_is_refused_not_a_crash() -> None:
    """libyaml's C composer would overflow the C stack on this and kill the interpreter. The
    libyaml PyYAML 6.0.4 bundles refuses it itself, at the 1,001st level: the same message,
    with where (older ones: the RecursionError guard, without)."""
    deep = "[" * 100_000 + "]" * 100_000
    message = "nested too deeply to be a Kubernetes object"
    assert re.fullmatch(rf"deep\.yaml(:1:1003)?: {message}", error([write("deep.yaml", f"a: {deep}\n")]))
    assert error([write("deep.json", f'{{"a": {deep}}}')]) == f"deep.json: {message}"
    assert re.fullmatch(rf"block\.yaml(:1:\d+)?: {message}", error([write("block.yaml", "- " * 5000 + "x\n")]))


def test_invalid_json() -> None:
    assert error([write("bad.json", '{"apiVersion": "v1" "kind": "Node"}')]) == (
        "bad.json:1:21: not valid JSON: Expecting ',' delimiter"
    )


def test_error_inside_json_is_located() -> None:
    text = (
        '{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": [\n'
        '    {"apiVersion": "v1", "kind": "Node",'
        ' "metadata": {"name": "n1", "labels": {"gpu": 8}}}\n'
        "  ]\n}\n"
    )
    assert error([write("dump.json", text)]) == (
        "dump.json:5:87: metadata.labels.gpu: expected a string (quote it), got 8"
    )


def test_no_objects() -> None:
    assert error([write("empty.yaml", "")]) == "empty.yaml: no Kubernetes objects found"
    write("comments.yaml", "# nothing\n---\n")
    write("list.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
    assert error(["empty.yaml", "comments.yaml", "list.yaml"]) == "no Kubernetes objects found"


VOLCANO = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v}\nspec:\n"
TAINT = NODE_N + "spec:\n  taints:\n"
TOLERATION = POD_P + "spec:\n  tolerations:\n"
AFFINITY = POD_P + """\
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: tor
"""
REQUIRED = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
EXPRESSION = f"{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0]"
GODEL_PG = GODEL.format(api=PodGroupAPI.GODEL.value)


@pytest.mark.parametrize("api", [a.value for a in PodGroupAPI if a.value.startswith("scheduling.")])
@pytest.mark.parametrize("spec", ["spec: {scheduleTimeoutSeconds: 5}\n", "spec:\n  minMember:\n", "spec: {}\n", ""])
def test_a_pod_group_without_min_member_has_min_member_0(api: str, spec: str) -> None:
    """No dialect's CRD requires or defaults minMember and every Go type omits a 0, so a dump
    of a group whose minMember is 0 has none: it is read as 0, not refused (which stopped the
    whole run) nor taken as 1 (Volcano's webhook defaults only the queue)."""
    text = f"apiVersion: {api}\nkind: PodGroup\nmetadata: {{name: g, namespace: d}}\n" + spec
    (group,) = load_snapshot([write("g.yaml", text)]).pod_groups
    assert (group.api.value, group.min_member) == (api, 0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            POD_GROUP + '  minMember: "three"\n',
            '6:14: spec.minMember: expected a non-negative integer, got "three"',
        ),
        (POD_GROUP + "  minMember: -1\n", "6:14: spec.minMember: expected a non-negative integer"),
        (POD_GROUP + "  minMember: 2.0\n", "6:14: spec.minMember: expected a non-negative integer"),
        # JSON's true is no int32 to the API server's decoder, though Python's bool is an int.
        (POD_GROUP + "  minMember: true\n", "6:14: spec.minMember: expected a non-negative integer, got true"),
        (POD_P + "spec:\n  priority: false\n", "5:13: spec.priority: expected an integer, got false"),
        # A required string is a non-empty one (a taint's key is a qualified name, never "").
        (TAINT + '  - {key: "", effect: NoSchedule}\n', '6:11: spec.taints[0].key: expected a non-empty string, got ""'),
        # scheduler-plugins' CRD: +kubebuilder:validation:Minimum=0 on scheduleTimeoutSeconds
        (
            POD_GROUP + "  minMember: 1\n  scheduleTimeoutSeconds: -1\n",
            "7:27: spec.scheduleTimeoutSeconds: expected a non-negative integer, got -1",
        ),
        (
            POD_GROUP + "  minMember: 1\n  minResources:\n    cpu: 1.2.3\n",
            "8:10: spec.minResources.cpu: '1.2.3' is not a quantity",
        ),
        (
            POD_GROUP + "  minMember: 1\n  minResources:\n    nvidia.com/gpu: true\n",
            '8:21: spec.minResources["nvidia.com/gpu"]: expected a quantity',
        ),
        (
            POD_GROUP + "  minMember: 1\n  minResources:\n    cpu: [4]\n",
            "8:10: spec.minResources.cpu: expected a quantity such as 500m, 2, 1.5 or 4Gi, got a list",
        ),
        (
            POD_GROUP + "  minMember: 1\n  minResources: [cpu]\n",
            "7:17: spec.minResources: expected a mapping, got a list",
        ),
        (
            "apiVersion: scheduling.volcano.sh/v1alpha1\nkind: PodGroup\n",
            "1:13: apiVersion: PodGroup scheduling.volcano.sh/v1alpha1 is not supported; "
            "expected scheduling.volcano.sh/v1beta1",
        ),
        (
            VOLCANO + "  minTaskMember:\n    worker: two\n",
            '6:13: spec.minTaskMember.worker: expected a non-negative integer, got "two"',
        ),
        # A PodGroup's status is read (a finished group needs no member), so it is checked too.
        (POD_GROUP + "  minMember: 1\nstatus: Running\n", '7:9: status: expected a mapping, got "Running"'),
        (VOLCANO + "  minMember: 1\nstatus: [Completed]\n", "6:9: status: expected a mapping, got a list"),
        (
            GODEL_PG.replace("resource: GPU", "resource: Disk"),
            "25:19: spec.affinity.podGroupAffinity.sortRules[0].resource: "
            'expected one of CPU, GPU, Memory, MEM, got "Disk"',
        ),
        (
            # Godel's CRD requires order and resource (review 18 I F4: read as Ascending / CPU).
            GODEL_PG.replace("- order: Descending\n        resource: GPU", "- resource: GPU", 1),
            "24:9: spec.affinity.podGroupAffinity.sortRules[0].order: required field is missing "
            "(expected one of Ascending, Descending)",
        ),
        (
            GODEL_PG.replace("        resource: GPU\n", "", 1),
            "24:9: spec.affinity.podGroupAffinity.sortRules[0].resource: required field is missing "
            "(expected one of CPU, GPU, Memory, MEM)",
        ),
        (
            GODEL_PG.replace("- topologyKey: tce.kubernetes.io/netminipodipv6", "- {}"),
            f"15:9: spec.affinity.podGroupAffinity.required[0].topologyKey: {MISSING_STRING}",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: x\n",
            f"4:3: metadata.name: {MISSING_STRING}",
        ),
        ("apiVersion: v1\nkind: Pod\nspec: {}\n", f"1:1: metadata.name: {MISSING_STRING}"),
        (
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n    gpu: yes\n",
            "6:10: metadata.labels.gpu: expected a string (quote it), got true",
        ),
        (
            NODE_N + "spec: {unschedulable: 'true'}\n",
            '4:23: spec.unschedulable: expected true or false, got "true"',
        ),
        (
            NODE_N + "status:\n  allocatable:\n    nvidia.com/gpu: lots\n",
            "6:21: status.allocatable[\"nvidia.com/gpu\"]: 'lots' is not a quantity",
        ),
        (
            TAINT + "  - key: gpu\n    effect: NoSchedul\n",
            "7:13: spec.taints[0].effect: "
            'expected one of NoSchedule, PreferNoSchedule, NoExecute, got "NoSchedul"',
        ),
        (TAINT + "  - effect: NoSchedule\n", f"6:5: spec.taints[0].key: {MISSING_STRING}"),
        # A taint's effect is required (core validation): none is not NoSchedule.
        (
            TAINT + "  - key: gpu\n",
            "6:5: spec.taints[0].effect: required field is missing "
            "(expected one of NoSchedule, PreferNoSchedule, NoExecute)",
        ),
        (
            POD_P + 'spec:\n  priority: "100"\n',
            '5:13: spec.priority: expected an integer, got "100"',
        ),
        (
            POD_P + "status:\n  phase: Done\n",
            "5:10: status.phase: "
            'expected one of Pending, Running, Succeeded, Failed, Unknown, got "Done"',
        ),
        (
            POD_P + "spec:\n  containers:\n  - name: c\n"
            "    resources:\n      limits: {memory: 1x}\n",
            "8:24: spec.containers[0].resources.limits.memory: '1x' is not a quantity",
        ),
        (
            POD_P + "spec:\n  containers: {}\n",
            "5:15: spec.containers: expected a list, got a mapping",
        ),
        (
            POD_P + "spec:\n  containers:\n  - name: c\n    ports: 1.5\n",
            "7:12: spec.containers[0].ports: expected a list, got 1.5",
        ),
        (
            POD_P + "spec:\n  initContainers:\n  - name: s\n    restartPolicy: Always\n    ports: [80]\n",
            "8:13: spec.initContainers[0].ports[0]: expected a mapping, got 80",
        ),
        (
            TOLERATION + '  - key: gpu\n    operator: Exists\n    value: "yes"\n',
            "8:12: spec.tolerations[0].value: must be empty when operator is Exists",
        ),
        (
            TOLERATION + "  - key: gpu\n    operator: In\n",
            "7:15: spec.tolerations[0].operator: "
            'expected one of Equal, Exists (or empty), got "In"',
        ),
        (
            TOLERATION + "  - effect: NoSchedule\n",
            "6:5: spec.tolerations[0].operator: "
            "must be Exists when key is empty (tolerate every taint)",
        ),
        (
            TOLERATION + "  - key: gpu\n    effect: Never\n",
            "7:13: spec.tolerations[0].effect: expected one of NoSchedule, PreferNoSchedule, "
            'NoExecute (or empty), got "Never"',
        ),
        (
            AFFINITY + "            operator: Equals\n",
            f"11:23: {EXPRESSION}.operator: "
            'expected one of In, NotIn, Exists, DoesNotExist, Gt, Lt, got "Equals"',
        ),
        (
            AFFINITY + "            operator: Exists\n            values: [a]\n",
            f"12:21: {EXPRESSION}.values: must be empty with operator Exists",
        ),
        (
            AFFINITY + "            operator: In\n",
            f"10:13: {EXPRESSION}.values: operator In needs at least one value",
        ),
        (
            AFFINITY + "            operator: NotIn\n",
            f"10:13: {EXPRESSION}.values: operator NotIn needs at least one value",
        ),
        (
            AFFINITY + "            operator: DoesNotExist\n            values: [a]\n",
            f"12:21: {EXPRESSION}.values: must be empty with operator DoesNotExist",
        ),
        (
            AFFINITY + "            operator: Gt\n            values: []\n",
            f"12:21: {EXPRESSION}.values: operator Gt needs exactly one value",
        ),
        (
            AFFINITY + "            operator: Lt\n            values: ['1', '2']\n",
            f"12:21: {EXPRESSION}.values: operator Lt needs exactly one value",
        ),
        (
            AFFINITY + "            operator: NotIn\n            values: [1]\n",
            f"12:22: {EXPRESSION}.values[0]: expected a string (quote it), got 1",
        ),
        (
            AFFINITY.split("        - matchExpressions:")[0],
            f"8:9: {REQUIRED}.nodeSelectorTerms: required field is missing (expected a list)",
        ),
    ],
)
def test_bad_fields_are_located(text: str, message: str) -> None:
    found = error([write("obj.yaml", text)])
    assert found.startswith(f"obj.yaml:{message}"), found


def test_duplicates_name_the_first() -> None:
    one = POD_GROUP + "  minMember: 1\n"
    assert error([write("a.yaml", one), write("b.yaml", one)]) == (
        "b.yaml:4:9: duplicate PodGroup default/g (first at a.yaml:4:9)"
    )
    # Both can exist in a cluster (two resources), but no output could tell them apart.
    two = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: g\n"
    assert error([write("a.yaml", one), write("b.yaml", two)]) == (
        "b.yaml:4:9: PodGroup default/g is given as scheduling.volcano.sh/v1beta1 and as scheduling.x-k8s.io/v1alpha1 "
        "(first at a.yaml:4:9): gangplan knows a group by namespace and name only; plan each scheduler's groups in "
        "a run of its own"
    )
    nodes = NODE.format(name="n1") + "---\n" + NODE.format(name="n1")
    assert error([write("nodes.yaml", nodes)]) == (
        "nodes.yaml:7:18: duplicate Node n1 (first at nodes.yaml:3:18)"
    )


def test_a_pod_bound_to_a_node_the_snapshot_lacks_is_kept() -> None:
    """`kubectl get nodes -l ...` dumps some nodes and every pod: the loader keeps the pod as
    it is; planning says what it makes of it (tests/test_cli.py)."""
    text = NODE.format(name="n1") + "---\napiVersion: v1\nkind: Pod\n"
    text += "metadata:\n  name: p\nspec:\n  nodeName: n9\n"
    [pod] = load_snapshot([write("bound.yaml", text)]).pods
    assert (pod.key, pod.node_name) == ("default/p", "n9")


def test_locate_falls_back_to_the_nearest_field() -> None:
    text = "a: 1\n---\nbase: &base\n  x: 1\nobj:\n  <<: *base\n  y:\n    - 1\n    - 2\n"
    path = write("loc.yaml", text)
    assert locate(Origin(path, 1), ("obj", "y", 1)) == Position(path, 9, 7)
    assert locate(Origin(path, 1), ("obj", "x")) == Position(path, 4, 6)  # through the merge key
    assert locate(Origin(path, 1), ("obj", "z", "deeper")) == Position(path, 6, 3)
    assert locate(Origin(path, 1, ("obj",)), ("y", 7)) == Position(path, 8, 5)
    assert locate(Origin(path, 5)) == Position(path)
    assert locate(Origin("gone.yaml")) == Position("gone.yaml")


def test_an_explicit_timestamp_tag_stays_a_string_even_when_pyyaml_cannot_parse_it(tmp_path: Path) -> None:
    """PyYAML's timestamp constructor raised AttributeError on "!!timestamp 2001-12-14x" (its
    resolver's pattern and its parser's disagree): an internal error on bad input, found by
    the fuzzer. Explicit timestamps now stay strings, like implicit ones."""
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, creationTimestamp: %s}\nstatus: {allocatable: {cpu: '4'}}\n"
    path = tmp_path / "n.yaml"
    path.write_text(node % "!!timestamp 2024-01-01T00:00:00Z")
    assert load_snapshot([str(path)]).nodes[0].name == "n1"
    path.write_text(node % "!!timestamp 2001-12-14x")
    assert load_snapshot([str(path)]).nodes[0].name == "n1"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, !!timestamp 2001-12-14metadata: {name: p}}\n")
    with pytest.raises(InputError, match="metadata"):
        load_snapshot([str(path)])


def test_a_list_inside_a_list_is_flattened_as_kubectl_does() -> None:
    items: list[object] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}},
    ]
    inner = {"apiVersion": "v1", "kind": "List", "items": items}
    path = write("nested.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [inner]}, indent=1))
    snapshot = load_snapshot([path])
    assert [n.name for n in snapshot.nodes] == ["n1"] and not snapshot.skipped_kinds
    (pod,) = snapshot.pods
    assert pod.origin == Origin(path, 0, ("items", 0, "items", 1))
    assert locate(pod.origin, ("metadata", "name")).line == 25
    items.append(7)
    path = write("nested.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [inner]}, indent=1))
    assert error([path]).endswith(f"{path}:41:5: expected a Kubernetes object (a mapping with apiVersion and kind)")


def test_typed_lists_name_their_items_kind_as_the_api_server_leaves_it_out() -> None:
    """`kubectl get --raw /api/v1/nodes` gives a NodeList whose items carry no kind or apiVersion."""
    nodes = {"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "7"}, "items": [
        {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2"}}}]}
    groups = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroupList", "items": [
        {"metadata": {"name": "g", "namespace": "d"}, "spec": {"minMember": 2}}]}
    snapshot = load_snapshot([write("nodes.json", json.dumps(nodes)), write("groups.json", json.dumps(groups))])
    assert [n.name for n in snapshot.nodes] == ["n1"] and snapshot.nodes[0].allocatable["cpu"] == 2000
    (group,) = snapshot.pod_groups
    assert (group.key, group.min_member, group.api) == ("d/g", 2, PodGroupAPI.SCHEDULER_PLUGINS)
    # A plain List names no kind for them: its items must name their own.
    path = write("plain.json", json.dumps({**nodes, "kind": "List"}))
    assert error([path]) == f"{path}:1:86: kind: required field is missing (expected a non-empty string)"


def test_a_json_stream_is_read_as_kubectl_reads_it() -> None:
    """One `kubectl get -o json` per namespace in a loop, or JSON Lines: concatenated values,
    each an object (was: 'not valid JSON: Extra data'); an error in the second is located."""
    first = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}'
    second = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}, "status": {"allocatable": {"cpu": "%s"}}}'
    snapshot = load_snapshot([write("stream.json", first + "\n" + second % "2" + "\n")])
    assert [n.name for n in snapshot.nodes] == ["a", "b"] and snapshot.nodes[1].allocatable["cpu"] == 2000
    assert [n.origin.document for n in snapshot.nodes] == [0, 1]
    bad = write("stream.json", first + "\n  " + (second % "2").replace('"2"', "[2]") + "\n")
    assert error([bad]) == "stream.json:2:101: status.allocatable.cpu: expected a quantity such as 500m, 2, 1.5 or 4Gi, got a list"
    assert error([write("stream.json", first + "\n{\"kind\": }\n")]) == "stream.json:2:10: not valid JSON: Expecting value"


def test_pod_level_resources_are_read_with_requests_defaulted_from_limits() -> None:
    text = POD_P + "spec:\n  resources:\n    limits: {cpu: '2', memory: 4Gi, nvidia.com/gpu: '1'}\n    requests: {memory: 1Gi}\n"
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert pod.pod_level_requests == {"cpu": 2000, "memory": 2**30}  # cpu, memory and hugepages may be set there
    assert error([write("p.yaml", text.replace("memory: 1Gi", "memory: lots"))]).startswith(
        "p.yaml:7:24: spec.resources.requests.memory: 'lots' is not a quantity"
    )


def test_pod_level_hugepages_are_requests_too() -> None:
    """Since Kubernetes 1.34, spec.resources may set hugepages-<size> besides cpu and memory
    (component-helpers' IsSupportedPodLevelResource); they were dropped, so a pod was planned
    on a node without the hugepages it asks for."""
    text = POD_P + "spec:\n  resources:\n    limits: {hugepages-2Mi: 4Mi, memory: 10Mi, example.com/nic: '1'}\n"
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert pod.pod_level_requests == {"hugepages-2Mi": 4 * 2**20, "memory": 10 * 2**20}


def test_a_pod_level_limit_is_the_request_only_for_what_no_container_asks() -> None:
    """KEP-2837's defaulting: where a container asks for a resource (or limits it, which
    makes its request) the pod-level request is the containers' aggregate, not the pod-level
    limit; a hand-written manifest with a 4-cpu pod limit and 1-cpu containers asks 1 cpu
    (review 19 R F1: it was read as 4, and check failed a gang that fits)."""
    text = POD_P + (
        "spec:\n  resources:\n    limits: {cpu: '4', memory: 4Gi}\n"
        "  containers:\n  - name: a\n    resources: {requests: {cpu: '1'}}\n"
        "  initContainers:\n  - name: i\n    resources: {limits: {ephemeral-storage: 1Gi}}\n"
    )
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert pod.pod_level_requests == {"memory": 4 * 2**30}
    (pod,) = load_snapshot([write("p.yaml", text.replace("requests: {cpu: '1'}", "limits: {memory: 1Gi}"))]).pods
    assert pod.pod_level_requests == {"cpu": 4000}


def test_an_init_containers_request_keeps_the_pod_level_limit_from_being_the_request() -> None:
    """KEP-2837's defaulting (defaultPodRequests) sets a pod-level request from the containers'
    aggregate, init containers included, wherever any asks; only a resource none asks for
    takes the pod-level limit. An init container asking 1 cpu makes the pod ask 1, not 4."""
    text = POD_P + (
        "spec:\n  resources:\n    limits: {cpu: '4', memory: 4Gi}\n  containers: [{name: a}]\n"
        "  initContainers:\n  - {name: i, resources: {requests: {cpu: '1'}}}\n"
    )
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert pod.pod_level_requests == {"memory": 4 * 2**30}


def test_a_container_being_resized_holds_the_most_of_spec_and_status() -> None:
    """In-place resize (beta, on by default since Kubernetes 1.33): kube-scheduler counts the
    most of the spec's requests, the status' and what the kubelet allocated; with the resize
    Infeasible, not the spec's. A resize down not yet applied had been counted at the spec's
    1 cpu while the container still held 3 (review 19 R F6)."""
    text = POD_P + (
        "spec:\n  nodeName: n1\n  containers:\n  - {name: a, resources: {requests: {cpu: '1', memory: 1Gi}}}\n"
        "  - {name: b, resources: {requests: {cpu: '1'}}}\n"
        "status:\n  phase: Running\n  containerStatuses:\n"
        "  - {name: a, allocatedResources: {cpu: '2'}, resources: {requests: {cpu: '3'}}}\n"
        "  - {name: b, allocatedResources: {cpu: '5'}}\n"
    )
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert [c.requests for c in pod.containers] == [{"cpu": 3000, "memory": 2**30}, {"cpu": 1000}]
    infeasible = text.replace("  phase: Running\n", "  phase: Running\n  conditions: [{type: PodResizePending, status: 'True', reason: Infeasible}]\n")
    infeasible = infeasible.replace("requests: {cpu: '1', memory: 1Gi}", "requests: {cpu: '6', memory: 1Gi}")
    (pod,) = load_snapshot([write("p.yaml", infeasible)]).pods
    assert pod.containers[0].requests == {"cpu": 3000}


def test_only_a_sidecars_status_changes_an_init_containers_request() -> None:
    """component-helpers' AggregateContainerRequests (what kube-scheduler's NodeResourcesFit
    counts) reads an init container's status only when it is a sidecar (restartPolicy Always):
    a regular init container cannot be resized, and its spec is what it asks, Infeasible or not.
    gangplan read initContainerStatuses for every init container."""
    text = POD_P + (
        "spec:\n  nodeName: n1\n  containers: [{name: a}]\n  initContainers:\n"
        "  - {name: setup, resources: {requests: {cpu: '6'}}}\n"
        "  - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: '1'}}}\n"
        "status:\n  phase: Running\n  initContainerStatuses:\n"
        "  - {name: setup, allocatedResources: {cpu: '8'}, resources: {requests: {cpu: '1'}}}\n"
        "  - {name: proxy, allocatedResources: {cpu: '2'}, resources: {requests: {cpu: '3'}}}\n"
    )
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert [(c.name, c.requests) for c in pod.init_containers] == [("setup", {"cpu": 6000}), ("proxy", {"cpu": 3000})]
    infeasible = text.replace("  phase: Running\n", "  phase: Running\n  conditions: [{type: PodResizePending, status: 'True', reason: Infeasible}]\n")
    (pod,) = load_snapshot([write("p.yaml", infeasible.replace("cpu: '1'}}}\nstatus", "cpu: '4'}}}\nstatus"))]).pods
    assert [(c.name, c.requests) for c in pod.init_containers] == [("setup", {"cpu": 6000}), ("proxy", {"cpu": 3000})]


def test_a_resize_is_infeasible_only_when_its_pod_says_so() -> None:
    """component-helpers' IsPodResizeInfeasible: the PodResizePending condition's reason must be
    Infeasible (Deferred will be retried: the spec still counts); before Kubernetes 1.33 the
    pod said it in status.resize, which a dump from such a cluster carries."""
    spec = "spec:\n  nodeName: n1\n  containers:\n  - {name: a, resources: {requests: {cpu: '6', memory: 1Gi}}}\n"
    status = "status:\n  phase: Running\n  containerStatuses:\n  - {name: a, allocatedResources: {cpu: '2'}, resources: {requests: {cpu: '3'}}}\n"
    deferred = "  conditions: [{type: PodResizePending, status: 'True', reason: Deferred}]\n"
    (pod,) = load_snapshot([write("p.yaml", POD_P + spec + status + deferred)]).pods
    assert pod.containers[0].requests == {"cpu": 6000, "memory": 2**30}
    (pod,) = load_snapshot([write("p.yaml", POD_P + spec + status + "  resize: Infeasible\n")]).pods
    assert pod.containers[0].requests == {"cpu": 3000}


def test_a_container_may_ask_for_hugepages() -> None:
    """hugepages-<size> is a standard container resource (IsStandardContainerResourceName), and
    its limit is its request as for any other resource."""
    text = POD_P + "spec:\n  containers:\n  - {name: a, resources: {limits: {hugepages-2Mi: 4Mi, memory: 1Gi}}}\n"
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert pod.containers[0].requests == {"hugepages-2Mi": 4 * 2**20, "memory": 2**30}


def test_a_sidecar_being_resized_holds_the_most_of_spec_and_status_too() -> None:
    """component-helpers' AggregateContainerRequests reads initContainerStatuses for restartable
    (sidecar) init containers as for app containers: a sidecar resized up from 1 cpu to 2,
    not yet applied to its spec, holds 2."""
    text = POD_P + (
        "spec:\n  nodeName: n1\n  containers: [{name: a}]\n"
        "  initContainers:\n  - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: '1'}}}\n"
        "status:\n  phase: Running\n"
        "  initContainerStatuses:\n  - {name: proxy, allocatedResources: {cpu: '2'}, resources: {requests: {cpu: '2'}}}\n"
    )
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert [(c.name, c.requests) for c in pod.init_containers] == [("proxy", {"cpu": 2000})]


def test_a_godel_group_in_phase_timeout_is_read_as_timed_out() -> None:
    text = GODEL.format(api="scheduling.godel.kubewharf.io/v1alpha1")
    (group,) = load_snapshot([write("g.yaml", text + "status: {phase: Timeout}\n")]).pod_groups
    assert group.timed_out
    (group,) = load_snapshot([write("g.yaml", text + "status: {phase: Pending}\n")]).pod_groups
    assert not group.timed_out


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    """Review 18 O F7 / L F4: a folder and a file inside it, or ./x and x, read the file twice:
    every object a "duplicate" of itself at the same line."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "node.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    snapshot = load_snapshot([str(folder), str(folder / "node.yaml"), f"{folder}/./node.yaml"])
    assert [n.name for n in snapshot.nodes] == ["n1"]


# --- Kubernetes' own limits, at the edge: exactly at a limit is accepted, one past is refused ---


def _labelled_node(key: str, value: str) -> str:
    return f"apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n    {json.dumps(key)}: {json.dumps(value)}\n"


def test_label_keys_and_values_are_held_to_the_api_servers_rules_at_their_edges() -> None:
    """apimachinery's IsQualifiedName and IsValidLabelValue: a key's name and a value are at
    most 63 characters, a key's name is not empty, and its prefix is a DNS-1123 subdomain
    (lowercase). A label the API server refuses cannot come from a cluster; one it accepts
    must not be refused (a dump with 63-character values is ordinary: hashes, job names)."""
    longest = "a" * 62 + "z"  # 63
    for key, value in ((longest, "v"), ("example.com/" + longest, "v"), ("k", longest), ("k", "")):
        (node,) = load_snapshot([write("n.yaml", _labelled_node(key, value))]).nodes
        assert node.labels == {key: value}
    for key, value, what in (
        (longest + "a", "v", "label key"),
        ("example.com/" + longest + "a", "v", "label key"),
        ("k", longest + "a", "label value"),
        ("example.com/", "v", "label key"),
        ("Example.com/rack", "v", "its prefix must be a DNS subdomain"),
        ("example_com/rack", "v", "its prefix must be a DNS subdomain"),
        ("/rack", "v", "its prefix must be a DNS subdomain"),
    ):
        message = error([write("n.yaml", _labelled_node(key, value))])
        assert message.startswith("n.yaml:6:") and what in message, (key, value, message)


def test_object_names_and_namespaces_are_held_to_kubernetes_rules_at_their_edges() -> None:
    """A Node's or Pod's name is a DNS-1123 subdomain of at most 253 characters, a namespace a
    DNS-1123 label of at most 63 (apimachinery's IsDNS1123Subdomain and IsDNS1123Label)."""
    name = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])  # 253
    namespace = "n" * 63
    text = NODE.format(name=name) + f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
    snapshot = load_snapshot([write("long.yaml", text)])
    assert [n.name for n in snapshot.nodes] == [name] and [p.key for p in snapshot.pods] == [f"{namespace}/{name}"]
    assert "254 characters, more than 253" in error([write("long.yaml", NODE.format(name=name + "e"))])
    too_wide = text.replace(f"namespace: {namespace}", f"namespace: {namespace}n")
    assert "64 characters, more than 63" in error([write("long.yaml", too_wide)])
    # lowercase only, the first character too ("Gpu-1" is what a hand-written snapshot says),
    # and each dot-separated part starts and ends with a letter or digit
    for bad in ("Gpu-1", "gpu-", "gpu-.rack-1", "gpu.-rack"):
        assert "lowercase letters" in error([write("bad.yaml", NODE.format(name=bad))]), bad


def test_a_creation_time_is_kept_as_the_api_server_keeps_it() -> None:
    """metav1.Time reads RFC 3339 with Go's time.Parse, which takes fractional seconds the layout
    does not show, and writes it back in UTC, whole seconds (the fraction dropped, not rounded):
    queue order compares these strings, so 12:00:00.999+02:00 must be 10:00:00Z."""
    text = POD_P.replace("{name: p}", "{name: p, creationTimestamp: '2024-05-01T12:00:00.999+02:00'}")
    (pod,) = load_snapshot([write("p.yaml", text)]).pods
    assert pod.creation_timestamp == "2024-05-01T10:00:00Z"


def _unmodelled(spec: dict[str, object]) -> tuple[str, ...]:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}], **spec}}
    (read,) = load_snapshot([write("p.json", json.dumps(pod))]).pods
    return read.unmodelled


def test_each_hard_rule_gangplan_does_not_model_is_kept_with_the_pod() -> None:
    """A Binding bypasses kube-scheduler's filters, so the rules they check that gangplan does not
    model are kept to warn about. Required pod affinity is modelled now (semantics warns of the
    terms it does not model), so it is read into terms and no longer among them; an empty list of
    required terms requires nothing. Host ports are modelled too."""
    anchor = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    assert _unmodelled({"affinity": {"podAffinity": {required: [anchor]}}}) == ()
    assert _unmodelled({"affinity": {"podAffinity": {required: []}, "podAntiAffinity": {required: []}}}) == ()
    assert _unmodelled({"hostNetwork": True, "containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}) == ()


def _host_ports(spec: dict[str, object]) -> list[tuple[int, str, str]]:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    (read,) = load_snapshot([write("p.json", json.dumps(pod))]).pods
    return [(p.port, p.protocol, p.ip) for p in read.host_ports]


def test_the_host_ports_nodeports_holds_are_read() -> None:
    """What kube-scheduler's NodePorts holds on a pod's node (GetHostPorts): app containers' and
    sidecars' ports with a hostPort (0 is none), protocol TCP and address 0.0.0.0 unless given;
    under hostNetwork the API server sets each hostPort to its containerPort. A plain init
    container has exited before the pod runs, and a port given twice is held once."""
    sidecar = {"name": "proxy", "restartPolicy": "Always", "ports": [{"containerPort": 15001, "hostPort": 15001}]}
    setup = {"name": "setup", "ports": [{"containerPort": 81, "hostPort": 81}]}
    app = {"name": "a", "ports": [
        {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
        {"containerPort": 80, "hostPort": 8080}, {"containerPort": 90, "hostPort": 0}, {"containerPort": 91},
    ]}
    twice = {"name": "b", "ports": [{"containerPort": 80, "hostPort": 8080}]}
    assert _host_ports({"containers": [app, twice], "initContainers": [sidecar, setup]}) == [
        (53, "UDP", "10.0.0.1"), (8080, "TCP", "0.0.0.0"), (15001, "TCP", "0.0.0.0"),
    ]
    assert _host_ports({"hostNetwork": True, "containers": [app]}) == [
        (53, "UDP", "10.0.0.1"), (90, "TCP", "0.0.0.0"), (91, "TCP", "0.0.0.0"), (8080, "TCP", "0.0.0.0"),
    ]


def test_a_volcano_network_topology_without_a_tier_is_no_hard_rule() -> None:
    """Volcano's scheduler holds a job to a hard network topology only with a highest tier
    (JobInfo.IsHardTopologyMode is false without highestTierAllowed): an empty networkTopology
    asks nothing, one with a tier asks what gangplan does not model."""
    text = VOLCANO + "  minMember: 1\n  networkTopology: {}\n"
    (group,) = load_snapshot([write("v.yaml", text)]).pod_groups
    assert group.unmodelled == ()
    (group,) = load_snapshot([write("v.yaml", text.replace("{}", "{highestTierAllowed: 2}"))]).pod_groups
    assert group.unmodelled == ("Volcano networkTopology (mode hard; HyperNode tiers)",)


# --- where errors inside List items point (hand-made mutation audit of loader.py) ----------


def _at(text: str, line: int, needle: str) -> int:
    """The 1-based column of ``needle`` on 1-based ``line`` of ``text``: counted from the text."""
    return text.splitlines()[line - 1].index(needle) + 1


def test_a_duplicate_across_two_lists_in_one_file_names_the_first_in_the_first_list() -> None:
    """Each document of a stream has its own List items: where the second List's items are
    written must not stand for the first's once both are read (a duplicate is found then)."""
    item = "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: {name}\n"
    first = "apiVersion: v1\nkind: List\nitems:\n" + item.format(name="a")
    second = "# the second List\napiVersion: v1\nkind: List\nitems:\n" + item.format(name="b") + item.format(name="a")
    text = first + "---\n" + second
    # the first List's a is on line 7; the second List's b on line 16, its a on line 20
    assert error([write("two.yaml", text)]) == "two.yaml:20:11: duplicate Node a (first at two.yaml:7:11)"


def test_a_flow_list_followed_by_another_block_sequence_is_located_in_its_own_items() -> None:
    """Only a List's own ``items`` say where its items are written: a block sequence under
    another key of the same List must not stand for items written in flow style."""
    text = (
        "apiVersion: v1\nkind: List\n"
        "items: [{apiVersion: v1, kind: Node, metadata: {name: a, labels: {gpu: 8}}}]\n"
        "notes:\n- {apiVersion: v1, kind: Node}\n"
    )
    assert error([write("flow.yaml", text)]) == (
        f"flow.yaml:3:{_at(text, 3, '8')}: metadata.labels.gpu: expected a string (quote it), got 8"
    )


# --- stdin, sizes and names at their edges (hand-made mutation audit of loader.py) ---------


def test_stdin_with_nothing_in_it_is_named_as_stdin() -> None:
    """Errors name stdin "<stdin>", never "-", the argument that stands for it."""
    assert error(["-"], stdin=b"") == "<stdin>: no Kubernetes objects found"


def test_a_plan_on_stdin_is_held_to_the_file_size_limit() -> None:
    """README: the size limit covers "each input file, stdin and plan file"."""
    with pytest.raises(InputError) as caught:
        read_documents("-", limits=Limits(max_file_bytes=20), stdin=b"kind: List\nitems: []\n")
    assert str(caught.value) == "<stdin>: file is larger than the limit of 20 bytes (raise it with --max-file-size)"


def test_a_file_exactly_at_the_size_limit_is_read() -> None:
    """The limit is the largest size accepted: "file is larger than the limit" is said only of
    a larger one, whether the file is named or piped."""
    text = NODE.format(name="a")
    exact = Limits(max_file_bytes=len(text.encode()))
    assert [n.name for n in load_snapshot([write("exact.yaml", text)], limits=exact).nodes] == ["a"]
    assert [n.name for n in load_snapshot(["-"], stdin=text.encode(), limits=exact).nodes] == ["a"]


class _Trickle(io.RawIOBase):
    """A pipe that hands over one byte per read, as a slow writer's pipe may."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk, self.data = self.data[: min(size, 1)], self.data[min(size, 1) :]
        return chunk


def test_a_stream_read_piece_by_piece_is_read_whole_up_to_one_byte_past_the_limit() -> None:
    """read_bounded's contract: at most limit + 1 bytes, the one more telling that the input
    is too big; however few bytes each read of a pipe gives."""
    assert read_bounded(_Trickle(b"0123456789"), 20) == b"0123456789"
    assert read_bounded(_Trickle(b"x" * 30), 20) == b"x" * 21
    assert error(["-"], stdin=read_bounded(_Trickle(b"x" * 30), 20), limits=Limits(max_file_bytes=20)) == (
        "<stdin>: file is larger than the limit of 20 bytes (raise it with --max-file-size)"
    )


def test_a_nodes_namespace_is_not_held_to_the_namespace_rules() -> None:
    """A Node is cluster-scoped: the API server clears a namespace written on one
    (apiserver: EnsureObjectNamespaceMatchesRequestNamespace), so no namespace of a Node can reach an output."""
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: a, namespace: Not_A_Label}\n"
    assert [(n.name) for n in load_snapshot([write("node.yaml", text)]).nodes] == ["a"]


def test_an_api_version_that_is_a_list_is_bad_input_not_a_crash() -> None:
    """A list (or mapping) where apiVersion or kind's string belongs is refused in one line,
    at the field (DESIGN 5), before names are checked."""
    for value in ("[v1]", "{v: 1}"):
        found = error([write("doc.yaml", f"apiVersion: {value}\nkind: Node\nmetadata: {{name: a}}\n")])
        assert found.startswith("doc.yaml:1:13: apiVersion: expected a non-empty string"), found
    found = error([write("doc.yaml", "apiVersion: v1\nkind: [Node]\nmetadata: {name: a}\n")])
    assert found.startswith("doc.yaml:2:7: kind: expected a non-empty string"), found


def test_a_file_whose_last_document_is_empty_is_not_an_empty_input() -> None:
    """empty_inputs (the CLI's "no Kubernetes objects in it" warning) names inputs with no
    object in any document; a trailing `---` and a comment leave the objects before them."""
    text = NODE.format(name="a") + "---\n# the end\n"
    snapshot = load_snapshot([write("trailing.yaml", text), write("nothing.yaml", "# nothing\n---\n")])
    assert [n.name for n in snapshot.nodes] == ["a"]
    assert snapshot.empty_inputs == ("nothing.yaml",)


def test_init_containers_and_overhead_are_held_to_the_quantity_bound() -> None:
    """README: quantities of one resource over all pods stay within 2^60; an init container's
    request and a pod's overhead are requests too, and the error names their own field (and
    counts cpu in millicores, as Kubernetes' quantities do, memory in bytes)."""
    huge = str(2**61)
    quote = "'"  # where the quoted quantity starts
    init = POD_P + f"spec:\n  initContainers:\n  - name: setup\n    resources: {{requests: {{cpu: '{huge}'}}}}\n"
    found = error([write("init.yaml", init)])
    assert found.startswith(f"init.yaml:7:{_at(init, 7, quote)}: spec.initContainers[0].resources.requests.cpu: ") and found.endswith("2^60 millicores"), found
    overhead = POD_P + f"spec:\n  overhead: {{memory: '{huge}'}}\n"
    found = error([write("overhead.yaml", overhead)])
    assert found.startswith(f"overhead.yaml:5:{_at(overhead, 5, quote)}: spec.overhead.memory: ") and "2^60" in found and "millicores" not in found, found


def test_a_path_through_a_file_is_said_in_the_style_of_the_other_read_errors() -> None:
    """Read errors are said as "no such file or directory" is: lower case, after the name."""
    write("f.yaml", NODE.format(name="a"))
    assert error(["f.yaml/x.yaml"]) == "f.yaml/x.yaml: cannot read: not a directory"


def test_a_utf8_byte_order_mark_is_not_part_of_the_text() -> None:
    """README: files are UTF-8 (a byte-order mark is allowed before UTF-8, as before UTF-16
    and UTF-32: JSON's RFC 8259 lets a parser ignore it). A JSON stream, as a kubectl loop
    prints it, is then read as JSON still."""
    first = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}'
    second = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}}'
    text = codecs.BOM_UTF8 + (first + "\n" + second + "\n").encode()
    assert [n.name for n in load_snapshot([write("bom.json", text)]).nodes] == ["a", "b"]
    bad = codecs.BOM_UTF8 + b"apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {gpu: 8}}\n"
    assert error([write("bom.yaml", bad)]) == f"bom.yaml:3:{_at(bad.decode('utf-8-sig'), 3, '8')}: metadata.labels.gpu: expected a string (quote it), got 8"


def test_a_file_to_skip_in_a_folder_is_not_read() -> None:
    """README: the plan `verify` reads from a folder it is given is not also read as part of
    its snapshot; named by another spelling of its path, it is still the same file."""
    write("cluster/node.yaml", NODE.format(name="a"))
    write("cluster/plan.yaml", "not: [a, snapshot")
    snapshot = load_snapshot(["cluster"], skip=["./cluster/plan.yaml"])
    assert [n.name for n in snapshot.nodes] == ["a"]


def test_a_namespace_is_said_to_be_a_label_and_a_name_a_subdomain() -> None:
    """The message says which rule was broken: a namespace is a DNS-1123 label (no dots), a
    Pod's or Node's name a DNS-1123 subdomain (apimachinery's ValidateNamespaceName and
    IsDNS1123Subdomain)."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s}\n"
    found = error([write("ns.yaml", pod % ("p", "team.a"))])
    assert found.startswith(f'ns.yaml:3:{_at(pod % ("p", "team.a"), 3, "team.a")}: metadata.namespace: "team.a" is not a valid Pod namespace: expected a DNS-1123 label'), found
    found = error([write("name.yaml", pod % ("P", "team"))])
    assert found.startswith(f'name.yaml:3:{_at(pod % ("P", "team"), 3, "P")}: metadata.name: "P" is not a valid Pod name: expected a DNS-1123 subdomain'), found


def test_a_plan_file_holds_at_most_the_document_limit() -> None:
    """--max-documents bounds a plan file too: as many documents as the limit are read, one
    more is refused."""
    two = "kind: List\nitems: []\n---\nkind: List\nitems: []\n"
    assert len(read_documents(write("two.yaml", two), limits=Limits(max_documents=2))) == 2
    with pytest.raises(InputError) as caught:
        read_documents(write("three.yaml", two + "---\nkind: List\n"), limits=Limits(max_documents=2))
    assert str(caught.value) == "three.yaml: more than 2 YAML documents (raise the limit with --max-documents)"


def test_the_first_lone_surrogate_escape_is_the_one_located() -> None:
    """The error points at the first \\u escape that is not the high half of a high-then-low
    pair written together: after a low half, a low half is lone too; a pair split by other
    text is two lone halves."""
    message = "a \\u escape writes half of a UTF-16 surrogate pair, which is not a character"
    node = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "annotations": {"a": "%s"}}}\n'
    for value, first in (
        ("\\udc00\\udc01 then \\udd02", "\\udc00"),
        ("\\ud83d then \\ude80 then \\udc00", "\\ud83d"),
    ):
        text = node % value
        assert error([write("lone.json", text)]) == f"lone.json:1:{text.index(first) + 1}: {message}"


def test_a_json_array_with_a_syntax_error_is_said_to_be_bad_json() -> None:
    """A file that starts with [ is JSON as much as one that starts with {: its syntax error
    is JSON's, where JSON's decoder finds it."""
    assert error([write("bad.json", '[{"kind": "Node"} {"kind": "Pod"}]')]) == (
        "bad.json:1:19: not valid JSON: Expecting ',' delimiter"
    )


def test_a_lone_surrogate_is_located_past_an_escaped_backslash_that_looks_like_one() -> None:
    """JSON reads "\\\\ud800" as a backslash and the letters ud800 (RFC 8259: \\\\ is an escaped
    reverse solidus), not as an escape: the error points at the real lone \\udc00, where the
    offending escape is written (DESIGN 5: FILE:LINE:COL of what is wrong)."""
    node = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "annotations": {"doc": "%s", "a": "%s"}}}\n'
    text = node % ("write \\\\ud800 for a lone half", "\\udc00")
    message = "a \\u escape writes half of a UTF-16 surrogate pair, which is not a character"
    assert error([write("literal.json", text)]) == f"literal.json:1:{text.index(chr(92) + 'udc00') + 1}: {message}"


def test_what_only_looks_like_a_lone_surrogate_escape_loads() -> None:
    """Loading looks for a lone surrogate only in files with something like its escape, then in
    the strings read: an escaped backslash before ud800, and a whole pair, are text."""
    pod = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"doc": "%s"}}, "spec": {}}\n'
    for written, read in (("write \\\\ud800 for a lone half", "write \\ud800 for a lone half"), ("\\ud83d\\ude80", "\U0001f680")):
        (loaded,) = load_snapshot([write("fine.json", pod % written)]).pods
        assert loaded.annotations == {"doc": read}


def test_a_typed_lists_item_keeps_the_api_version_it_names() -> None:
    """A typed list fills in only what its items leave out (README: items "which carry no
    kind, take it from the list"): an item naming its own apiVersion is read as that one."""
    groups = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroupList", "items": [
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": {"name": "g", "namespace": "d"}, "spec": {"minMember": 2}}]}
    (group,) = load_snapshot([write("groups.json", json.dumps(groups))]).pod_groups
    assert (group.key, group.api) == ("d/g", PodGroupAPI.VOLCANO)



def test_a_file_rewritten_in_place_is_located_in_its_new_text() -> None:
    """A file the walk leaves to the composer (a merge key on the way) is composed once and
    kept; rewritten since, with the same size, its errors are found in what it says now."""
    first = "base: &b {x: 1}\napiVersion: v1\nkind: Node\nmetadata:\n  <<: *b\n  name: a\n  labels: {gpu: 8}\n"
    moved = "base: &b {x: 1}\napiVersion: v1\nkind: Node\nmetadata:\n  <<: *b\n  labels: {gpu: 8}\n  name: a\n"
    assert len(first) == len(moved)
    message = "metadata.labels.gpu: expected a string (quote it), got 8"
    assert error([write("merged.yaml", first)]) == f"merged.yaml:7:{_at(first, 7, '8')}: {message}"
    write("merged.yaml", moved)
    written = Path("merged.yaml").stat().st_mtime_ns
    os.utime("merged.yaml", ns=(written, written + 10**9))  # a later write: a coarse file clock could give both one mtime
    assert error(["merged.yaml"]) == f"merged.yaml:6:{_at(moved, 6, '8')}: {message}"


def test_a_list_item_in_a_file_changed_since_it_was_read_is_found_in_the_file_as_it_is() -> None:
    """Where the items were written when the file was read does not hold once it has changed
    (the length differs): the place is found in the file as it is now, even when the old
    offsets happen to frame a whole item of the new text."""
    header = "apiVersion: v1\nkind: List\nitems:\n"
    block = "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: {name}\n"
    a, c = block.format(name="a"), block.format(name="c")
    flow = "- {apiVersion: v1, kind: Node, metadata: {name: b}}"
    flow += " " * (len(a) - len(flow) - 1) + "\n"  # as long as a block item, on one line
    assert len(flow) == len(a) == len(c)
    write("changed.yaml", header + a + c)
    read_documents("changed.yaml")
    write("changed.yaml", header + flow + a + c)  # a second look at the cluster: one more node first
    # items[1] is now a, from line 5; its name on line 8
    assert locate(Origin("changed.yaml", 0, ("items", 1)), ("metadata", "name")) == Position("changed.yaml", 8, 11)


def test_an_error_in_a_json_item_after_another_on_the_same_line_is_located() -> None:
    """A JSON List whose items share a line that is not the first: the second item's column
    counts from that line's start, not from the file's."""
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},
             {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": {"gpu": 8}}}]
    text = '{\n "apiVersion": "v1", "kind": "List", "items": ' + json.dumps(items) + "}\n"
    assert error([write("line.json", text)]) == (
        f"line.json:2:{_at(text, 2, '8')}: metadata.labels.gpu: expected a string (quote it), got 8"
    )


def test_locate_one_past_the_last_item_falls_back_to_the_sequence() -> None:
    """locate falls back to the nearest enclosing node that exists: an index one past the
    end is no more there than one far past it."""
    text = "a: 1\n---\nbase: &base\n  x: 1\nobj:\n  <<: *base\n  y:\n    - 1\n    - 2\n"
    path = write("loc.yaml", text)
    assert locate(Origin(path, 1, ("obj",)), ("y", 2)) == Position(path, 8, 5)


def test_with_several_mappings_merged_the_earlier_ones_keys_win() -> None:
    """YAML's merge key (yaml.org/type/merge.html): "Keys in mapping nodes earlier in the
    sequence override keys specified in later mapping nodes", as with one-letter keys here
    already; so `<<: [*team, *site]` takes the team's labels, and an error in them is
    located in the team's mapping."""
    text = (
        "team: &team {labels: {owner: ml}}\nsite: &site {labels: {owner: infra}}\n"
        "apiVersion: v1\nkind: Node\nmetadata:\n  <<: [*team, *site]\n  name: n\n"
    )
    (node,) = load_snapshot([write("merged.yaml", text)]).nodes
    assert node.labels == {"owner": "ml"}
    bad = text.replace("{owner: ml}", "{owner: 8}")
    assert error([write("merged.yaml", bad)]) == f"merged.yaml:1:{_at(bad, 1, '8')}: metadata.labels.owner: expected a string (quote it), got 8"


def test_the_merge_key_specs_example_gives_equal_mappings_with_long_keys() -> None:
    """yaml.org/type/merge.html's example, its keys made longer than one character (PyYAML
    6.0.4 kept the last merged value of such keys; yaml/pyyaml#953): a written key wins, then
    the earliest mapping of a ``<<`` sequence, and a merged mapping's own keys win over what
    it merges itself."""
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  apiVersion: v1\n  metadata: {name: anchors}\n"
        "  data:\n    center: &CENTER {width: '1', height: '2'}\n    left: &LEFT {width: '0', height: '2'}\n"
        "    big: &BIG {radius: '10'}\n    small: &SMALL {radius: '1'}\n    wide: &WIDE {<<: *LEFT, width: '1'}\n"
    )
    merges = (
        "width: '1', height: '2', radius: '10'",
        "<<: *CENTER, radius: '10'",
        "<<: [*CENTER, *BIG]",
        "<<: [*BIG, *LEFT, *SMALL], width: '1'",
        "<<: [*WIDE, *BIG, *SMALL]",
    )
    for i, labels in enumerate(merges):
        text += f"- {{kind: Node, apiVersion: v1, metadata: {{name: n{i}, labels: {{{labels}, shape: center-big}}}}}}\n"
    nodes = load_snapshot([write("merge.yaml", text)]).nodes
    assert [dict(n.labels) for n in nodes] == [{"width": "1", "height": "2", "radius": "10", "shape": "center-big"}] * 5


def test_a_mapping_that_merges_itself_is_its_own_keys() -> None:
    """``labels: &l {x: "1", <<: *l}`` merges nothing it does not already have, as PyYAML reads
    it: the Node loads with its one label, as before merge keys followed YAML's order, not
    'nested too deeply' (go-yaml refuses such an anchor; gangplan keeps PyYAML's reading)."""
    text = 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: &l {x: "1", <<: *l}\n'
    (node,) = load_snapshot([write("itself.yaml", text)]).nodes
    assert node.labels == {"x": "1"}

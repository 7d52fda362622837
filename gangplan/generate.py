"""Synthetic cluster snapshots for tests, benchmarks and what-ifs (``gangplan generate``).

``generate`` returns one ``v1`` ``List`` in the form ``kubectl get nodes,pods,podgroups,
priorityclasses -A -o json`` prints, ready for ``json.dumps`` or a YAML dumper:

- Nodes of a bigPod > miniPod > tor > node topology (seed 003), labelled
  ``network.example.com/{bigpod,minipod,tor}`` with values unique along the path
  (``bp-0``, ``mp-0-1``, ``tor-0-1-7``), ``kubernetes.io/hostname``,
  ``node.kubernetes.io/instance-type`` and ``pool``. Flavours are drawn per tor (so tors are
  homogeneous), sticky per miniPod; a share of GPU tors is tainted
  ``<gpu>=present:NoSchedule``; a tiny share of nodes is cordoned or NotReady, and a few
  have lost a GPU (allocatable one below capacity).
- Running pods (``spec.nodeName``, phase Running) that hold about ``utilisation`` of the
  GPUs: whole-node jobs on a run of nodes of a tor and partial-node pods, plus a few
  Succeeded pods that hold nothing. They belong to no PodGroup.
- PriorityClasses, one per ``priorities`` entry.
- ``groups`` pending PodGroups with their pods, in three dialects: scheduler-plugins,
  Volcano (with a queue) and Godel (``scheduling.orchestration.bytedance.com/v1alpha1``);
  only Godel expresses topology, so every group with a required or preferred term is a
  Godel group.

Distributions (all from one ``random.Random(seed)``; nothing depends on hash order, so the
same arguments give identical output):

- gang size: ``2**k`` pods with P(k) proportional to 0.6**k, k up to log2(max_gang); one
  in five sizes of 4 and above is moved to a non-power of two between the neighbouring
  powers (e.g. 24 instead of 32). About 40% single pods, a median of 2 pods and a mean of
  about 8 (max_gang 256), like the heavy tail of the public traces (AcmeTrace: median one
  GPU per job, mean 6 to 27, max 1024+).
- GPUs per pod: mostly 1 for single pods, mostly 8 (a whole node) for gangs above 8 pods;
  1, 2, 4 and 8 common, 3 and 6 rare; capped at the node size of the group's flavour. CPU
  and memory are proportional to the flavour's per-GPU share (100%, 75% or 50% of it).
- group flavour: weighted by the GPUs each flavour has in the cluster.
- minMember = size, except one group in ten of size 2+ that is elastic (quorum between
  size // 2, at least 1, and size - 1).
- priority: the first (highest) class for about one group in five, the rest evenly.
- topology: a required term with probability ``required_share`` (tor or miniPod, whichever
  the gang can plausibly fill at most half of; bigPod when it is bigger than half a
  miniPod), a preferred term with probability ``preferred_share`` (the levels below the
  required one, largest first: [minipod, tor], or [tor] alone), sortRules for one Godel
  group with affinity in four. With ``hostname_share`` (0 by default) that share of the
  required terms of gangs that fit on one node of their flavour are on
  ``kubernetes.io/hostname`` instead (all pods on one node; no preferred term below it),
  drawn from a stream of their own: the share changes those terms and nothing else.
- selectors: with probability ``selector_share`` a group selects nodes: half of the Godel
  groups through the group's ``nodeSelector`` (instance type), every other group through
  its pods' ``nodeSelector`` on ``pool``. With probability ``toleration_share`` a group's
  pods tolerate the GPU taint.
- running load: each tor draws a uniform fill level, all scaled by one factor so that the
  cluster total is round(u * GPUs) exactly (at u = 0.5 tors range from nearly empty to
  full; busier clusters have more full tors); within a tor 50-100% of it is whole-node
  jobs on a run of its free nodes (from a random one, round the tor's end; the tor is the
  lowest level, so where in it does not matter), the rest 1/2/4-GPU pods packed onto the
  other nodes.

``traces.trace_nodes`` reads the node inventory of a public trace (research and study use
only: read it at run time, never ship it) and ``generate(nodes_from=...)`` lays the generated
topology over it. The traces have no topology and no gangs: both are synthetic.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import math
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .kube import label_problem

__all__ = [
    "BIGPOD",
    "DEFAULT_FLAVOURS",
    "Flavour",
    "INSTANCE_TYPE",
    "MINIPOD",
    "NodeSpec",
    "POOL",
    "TOR",
    "generate",
]

BIGPOD = "network.example.com/bigpod"
MINIPOD = "network.example.com/minipod"
TOR = "network.example.com/tor"
HOSTNAME = "kubernetes.io/hostname"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
POOL = "pool"

SP_API = "scheduling.x-k8s.io/v1alpha1"
VOLCANO_API = "scheduling.volcano.sh/v1beta1"
GODEL_API = "scheduling.orchestration.bytedance.com/v1alpha1"
SP_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
GODEL_GROUP_ANNOTATION = "godel.bytedance.com/pod-group-name"

KI, MI, GI, TI = 2**10, 2**20, 2**30, 2**40

_UID_NAMESPACE = uuid.UUID("0b6c1f55-3f0e-4d8e-9a4e-1c2f6a7d9e31")
_NODES_BORN = 1_704_067_200  # 2024-01-01T00:00:00Z
_RUNNING_FROM = 1_717_891_200  # 2024-06-09T00:00:00Z
_PENDING_FROM = 1_718_265_600  # 2024-06-13T08:00:00Z

_CPU_UNITS = 8  # a CPU-only node is cut into eighths where a GPU node is cut into GPUs
_CORDONED_SHARE = 0.004
_NOT_READY_SHARE = 0.002
_DEGRADED_SHARE = 0.002  # a GPU fell off the bus: allocatable one below capacity
_SUCCEEDED_SHARE = 0.1  # partly used nodes that also hold a finished pod
_ELASTIC_SHARE = 0.1
_SORT_RULES_SHARE = 0.25
_SIZE_DECAY = 0.6
_NON_POWER_SHARE = 0.2
_TOR_STICKINESS = 0.75  # a tor takes its miniPod's flavour this often

_POOLS = (("training", 0.6), ("batch", 0.25), ("inference", 0.15))
_NAMESPACES = ("llm", "vision", "speech", "recsys", "research", "rl", "data")
_QUEUES = (("default", 0.3), ("training", 0.5), ("research", 0.2))
_JOB_KINDS = ("pretrain", "sft", "rlhf", "distill", "finetune", "sweep", "ablation", "evalset")
_SERVICE_KINDS = ("notebook", "inference", "eval-shard")
_IMAGES = {
    "sp": "nvcr.io/nvidia/pytorch:24.05-py3",
    "volcano": "registry.example.com/vision/mmdet:3.3.0",
    "godel": "registry.example.com/llm/megatron:24.04",
    "run": "nvcr.io/nvidia/pytorch:24.05-py3",
    "service": "vllm/vllm-openai:v0.4.3",
}
_SCHEDULERS = {
    "sp": "scheduler-plugins-scheduler",
    "volcano": "volcano",
    "godel": "godel-scheduler",
}
# GPUs per pod by gang size: (weights over 1, 2, 3, 4, 6, 8)
_GPU_CHOICES = (1, 2, 3, 4, 6, 8)
_GPU_WEIGHTS_SINGLE = (0.50, 0.15, 0.02, 0.12, 0.03, 0.18)
_GPU_WEIGHTS_SMALL = (0.20, 0.15, 0.00, 0.20, 0.03, 0.42)
_GPU_WEIGHTS_LARGE = (0.05, 0.05, 0.00, 0.15, 0.00, 0.75)
_REQUEST_SHARES = ((1.0, 0.5), (0.75, 0.3), (0.5, 0.2))
_SORT_RULE_SETS = (
    (("GPU", "Available", "Ascending"),),
    (("GPU", "Available", "Descending"), ("CPU", "Capacity", "Ascending")),
    (("MEM", "Available", "Descending"),),
    (("CPU", "Capacity", "Ascending"),),
)


# ---------------------------------------------------------------- node flavours


@dataclass(frozen=True, slots=True)
class Flavour:
    """A kind of node: its capacity (allocatable is derived, as a kubelet reserves it).

    ``weight`` is the flavour's relative share of tors in a generated topology.
    """

    instance_type: str
    cpu: int  # millicores
    memory: int  # bytes
    gpus: int = 0
    gpu_product: str = ""
    weight: float = 1.0

    @property
    def allocatable_cpu(self) -> int:
        """Millicores left after kube/system reservations (GKE's table)."""
        m = self.cpu
        parts = (min(m, 1000), min(max(m - 1000, 0), 1000), min(max(m - 2000, 0), 2000))
        reserved = (24 * parts[0] + 4 * parts[1] + 2 * parts[2] + max(m - 4000, 0)) // 400
        return m - reserved

    @property
    def allocatable_memory(self) -> int:
        """Bytes left after reservations and the 100Mi eviction threshold, in whole Ki."""
        b = self.memory
        gib4 = 4 * GI
        parts = (
            min(b, gib4),
            min(max(b - gib4, 0), gib4),
            min(max(b - 2 * gib4, 0), 2 * gib4),
            min(max(b - 4 * gib4, 0), 112 * GI),
            max(b - 128 * GI, 0),
        )
        reserved = (25 * parts[0] + 20 * parts[1] + 10 * parts[2] + 6 * parts[3] + 2 * parts[4])
        return (b - reserved // 100 - 100 * MI) // KI * KI

    @property
    def units(self) -> int:
        """Slots a node is cut into: its GPUs, or eighths of a CPU-only node."""
        return self.gpus or _CPU_UNITS

    @property
    def cpu_per_unit(self) -> int:
        return max(100, self.allocatable_cpu // self.units // 100 * 100)

    @property
    def memory_per_unit(self) -> int:
        return max(256 * MI, self.allocatable_memory // self.units // (256 * MI) * (256 * MI))


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One real node of an inventory: its name and its flavour."""

    name: str
    flavour: Flavour


DEFAULT_FLAVOURS: tuple[Flavour, ...] = (
    Flavour("gpu-h100x8-192c-2t", 192_000, 2 * TI, 8, "NVIDIA-H100-80GB-HBM3", weight=0.5),
    Flavour("gpu-a100x8-96c-1t", 96_000, 1 * TI, 8, "NVIDIA-A100-SXM4-80GB", weight=0.3),
    Flavour("gpu-l40sx4-64c-512g", 64_000, 512 * GI, 4, "NVIDIA-L40S", weight=0.2),
)


# ---------------------------------------------------------------- small helpers


def _ts(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


_BORN_AT = _ts(_NODES_BORN)
_READY_AT = _ts(_NODES_BORN + 600)
_LOST_AT = _ts(_PENDING_FROM - 3 * 3600)


def _cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _memory(value: int) -> str:
    for suffix, size in (("Ti", TI), ("Gi", GI), ("Mi", MI), ("Ki", KI)):
        if value % size == 0:
            return f"{value // size}{suffix}"
    return str(value)


_Table = tuple[tuple[Any, ...], list[float]]


def _table(items: Sequence[Any], weights: Sequence[float]) -> _Table:
    """Items with cumulative weights, for repeated draws."""
    return tuple(items), list(itertools.accumulate(weights))


def _pick(rng: random.Random, table: _Table) -> Any:
    return rng.choices(table[0], cum_weights=table[1])[0]


def _pairs(pairs: Sequence[tuple[Any, float]]) -> _Table:
    return _table([item for item, _ in pairs], [weight for _, weight in pairs])


_POOL_TABLE = _pairs(_POOLS)
_QUEUE_TABLE = _pairs(_QUEUES)
_SHARE_TABLE = _pairs(_REQUEST_SHARES)
_DIALECT_TABLE = _table(("sp", "volcano", "godel"), (0.45, 0.45, 0.1))
_GPU_TABLES = tuple(
    _table(_GPU_CHOICES, w)
    for w in (_GPU_WEIGHTS_SINGLE, _GPU_WEIGHTS_SMALL, _GPU_WEIGHTS_LARGE)
)
_SIZE_TABLES: dict[int, _Table] = {}


def _gang_size(rng: random.Random, max_gang: int) -> int:
    """Heavy-tailed: 2**k with P(k) ~ 0.6**k, one in five of 4+ moved off the power of two."""
    top = max_gang.bit_length() - 1
    table = _SIZE_TABLES.get(top)
    if table is None:
        weights = list(itertools.accumulate([1.0] * (top + 1), lambda w, _: w * _SIZE_DECAY))
        table = _SIZE_TABLES[top] = _table(range(top + 1), weights)
    size = 1 << _pick(rng, table)
    if size >= 4 and rng.random() < _NON_POWER_SHARE:
        size = rng.randint(size // 2 + 1, size - 1)
    return size


def _unit_split(rng: random.Random, units: int) -> list[int]:
    """Pod sizes that add up to ``units``: powers of two, sometimes halved."""
    out = []
    while units:
        size = 1 << (units.bit_length() - 1)
        if size > 1 and rng.random() < 0.3:
            size //= 2
        out.append(size)
        units -= size
    return out


def _fills(rng: random.Random, caps: list[int], target: int) -> list[int]:
    """Integer fill per bin, each within its cap, summing to ``target`` exactly.

    Each bin draws a uniform level; the levels are scaled by one factor (found by
    bisection) so that the capped total meets the target: at 50% the bins range from
    nearly empty to full, busier clusters have more full bins. Only IEEE arithmetic on
    ``random()`` draws is used (no libm), so the result is the same on every machine.
    """
    total = sum(caps)
    target = max(0, min(target, total))
    if target == 0:
        return [0] * len(caps)
    if target == total:
        return list(caps)
    levels = [rng.random() + 1e-9 for _ in caps]
    lo, hi = 0.0, 1.0
    while sum(min(c, hi * w * c) for c, w in zip(caps, levels)) < target:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if sum(min(c, mid * w * c) for c, w in zip(caps, levels)) < target:
            lo = mid
        else:
            hi = mid
    exact = [min(c, hi * w * c) for c, w in zip(caps, levels)]
    fills = [min(c, int(x)) for c, x in zip(caps, exact)]
    missing = target - sum(fills)
    if missing < 0:  # hi overshoots by a hair: take back from the fullest fractions
        order = sorted(range(len(caps)), key=lambda i: (exact[i] - fills[i], i))
        for i in order:
            if missing == 0:
                break
            if fills[i] > 0:
                fills[i] -= 1
                missing += 1
    order = list(range(len(caps)))
    rng.shuffle(order)
    while missing > 0:
        for i in order:
            if missing == 0:
                break
            if fills[i] < caps[i]:
                fills[i] += 1
                missing -= 1
    return fills


# ---------------------------------------------------------------- the builder


class _Node:
    __slots__ = ("name", "flavour", "units", "bigpod", "minipod", "tor", "pool", "tainted",
                 "cordoned", "ready")

    def __init__(self, name: str, flavour: Flavour) -> None:
        self.name = name
        self.flavour = flavour
        self.units = flavour.units
        self.bigpod = self.minipod = self.tor = self.pool = ""
        self.tainted = self.cordoned = False
        self.ready = True


class _Builder:
    def __init__(self, seed: int, gpu_resource: str, priorities: Sequence[tuple[str, int]],
                 max_gang: int, taint_share: float) -> None:
        self.rng = random.Random(seed)
        self.node_terms = random.Random(f"{seed}/hostname")  # its own stream: see gangs()
        self.taint_share = taint_share
        self._uid_prefix = _UID_NAMESPACE.bytes + f"{seed}/".encode()
        self._per_unit: dict[Flavour, tuple[int, int]] = {}
        self._node_sizes: dict[Flavour, tuple[dict[str, str], dict[str, str]]] = {}
        self.gpu = gpu_resource
        self.priorities = [(name, value) for name, value in priorities]
        self.priority_table = _table(
            self.priorities, [1.0] + [4.0 / max(1, len(priorities) - 1)] * (len(priorities) - 1)
        )
        self.max_gang = max_gang
        self.nodes: list[_Node] = []
        self.tors: list[list[_Node]] = []
        self.pods: list[dict[str, Any]] = []
        self.pod_groups: list[dict[str, Any]] = []
        self.tolerate_gpu = {"key": gpu_resource, "operator": "Exists", "effect": "NoSchedule"}

    def uid(self, kind: str, namespace: str, name: str) -> str:
        """``uuid.uuid5`` of the object's identity, computed without the UUID class (a
        generated dump holds ~100,000 objects)."""
        digest = bytearray(hashlib.sha1(
            self._uid_prefix + f"{kind}/{namespace}/{name}".encode()
        ).digest()[:16])
        digest[6] = (digest[6] & 0x0F) | 0x50
        digest[8] = (digest[8] & 0x3F) | 0x80
        h = digest.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def priority(self) -> tuple[str, int]:
        return _pick(self.rng, self.priority_table)

    # ------------------------------------------------------------ topology

    def layout_generated(self, shape: Sequence[int], flavours: Sequence[Flavour]) -> None:
        rng = self.rng
        table = _table(flavours, [f.weight for f in flavours])
        width = [len(str(max(d - 1, 0))) for d in shape]
        for b in range(shape[0]):
            for m in range(shape[1]):
                primary = _pick(rng, table)
                pool = _pick(rng, _POOL_TABLE)
                for t in range(shape[2]):
                    flavour = (
                        primary
                        if rng.random() < _TOR_STICKINESS
                        else _pick(rng, table)
                    )
                    tor = []
                    for n in range(shape[3]):
                        name = (
                            f"node-{b:0{width[0]}d}-{m:0{width[1]}d}-{t:0{width[2]}d}"
                            f"-{n:0{width[3]}d}"
                        )
                        tor.append(_Node(name, flavour))
                    self._place_tor(tor, b, m, t, pool)

    def layout_inventory(self, specs: Sequence[NodeSpec], shape: Sequence[int]) -> None:
        """Real nodes, grouped by flavour (first appearance order), filled tor after tor;
        a tor never mixes flavours. shape[1:] gives the fan-out; bigPods follow from the
        inventory's size."""
        rng = self.rng
        first: dict[Flavour, int] = {}
        for spec in specs:
            first.setdefault(spec.flavour, len(first))
        ordered = sorted(range(len(specs)), key=lambda i: (first[specs[i].flavour], i))
        tors: list[list[_Node]] = []
        for i in ordered:
            spec = specs[i]
            if not tors or len(tors[-1]) == shape[3] or tors[-1][0].flavour != spec.flavour:
                tors.append([])
            tors[-1].append(_Node(spec.name, spec.flavour))
        pool = ""
        for index, tor in enumerate(tors):
            m_all, t = divmod(index, shape[2])
            b, m = divmod(m_all, shape[1])
            if t == 0:
                pool = _pick(rng, _POOL_TABLE)
            self._place_tor(tor, b, m, t, pool)

    def _place_tor(self, tor: list[_Node], b: int, m: int, t: int, pool: str) -> None:
        rng = self.rng
        tainted = bool(tor[0].flavour.gpus) and rng.random() < self.taint_share
        for node in tor:
            node.bigpod, node.minipod, node.tor = f"bp-{b}", f"mp-{b}-{m}", f"tor-{b}-{m}-{t}"
            node.pool = pool
            node.tainted = tainted
            draw = rng.random()
            node.cordoned = draw < _CORDONED_SHARE
            node.ready = not (_CORDONED_SHARE <= draw < _CORDONED_SHARE + _NOT_READY_SHARE)
            if node.flavour.gpus > 1 and rng.random() < _DEGRADED_SHARE:
                node.units -= 1
        self.tors.append(tor)
        self.nodes.extend(tor)

    def node_object(self, node: _Node) -> dict[str, Any]:
        f = node.flavour
        labels = {
            BIGPOD: node.bigpod,
            MINIPOD: node.minipod,
            TOR: node.tor,
            HOSTNAME: node.name,
            INSTANCE_TYPE: f.instance_type,
            "kubernetes.io/os": "linux",
            POOL: node.pool,
        }
        sizes = self._node_sizes.get(f)
        if sizes is None:
            sizes = self._node_sizes[f] = (
                {"cpu": _cpu(f.cpu), "memory": f"{f.memory // KI}Ki", "pods": "110"},
                {"cpu": _cpu(f.allocatable_cpu), "memory": f"{f.allocatable_memory // KI}Ki",
                 "pods": "110"},
            )
        capacity, allocatable = dict(sizes[0]), dict(sizes[1])  # no shared sub-objects
        if f.gpus:
            labels["nvidia.com/gpu.product"] = f.gpu_product
            capacity[self.gpu] = str(f.gpus)
            allocatable[self.gpu] = str(node.units)
        spec: dict[str, Any] = {}
        taints = []
        if node.tainted:
            taints.append({"key": self.gpu, "value": "present", "effect": "NoSchedule"})
        if node.cordoned:
            spec["unschedulable"] = True
            taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if not node.ready:
            taints.append({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"})
            taints.append({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"})
            ready = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                     "lastTransitionTime": _LOST_AT}
        else:
            ready = {"type": "Ready", "status": "True", "reason": "KubeletReady",
                     "lastTransitionTime": _READY_AT}
        if taints:
            spec["taints"] = taints
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": node.name,
                "uid": self.uid("Node", "", node.name),
                "creationTimestamp": _BORN_AT,
                "labels": labels,
            },
            "spec": spec,
            "status": {"allocatable": allocatable, "capacity": capacity, "conditions": [ready]},
        }

    # ------------------------------------------------------------ pods

    def requests(self, flavour: Flavour, units: int, share: float = 1.0) -> dict[str, int]:
        """``units`` slots of a ``flavour`` node, scaled by ``share``: millicores rounded
        down to 100m, memory to 256Mi."""
        per_unit = self._per_unit.get(flavour)
        if per_unit is None:
            per_unit = self._per_unit[flavour] = (flavour.cpu_per_unit, flavour.memory_per_unit)
        cpu = max(100, int(units * per_unit[0] * share) // 100 * 100)
        memory = max(256 * MI, int(units * per_unit[1] * share) // (256 * MI) * (256 * MI))
        out = {"cpu": cpu, "memory": memory}
        if flavour.gpus:
            out[self.gpu] = units
        return out

    def quantities(self, amounts: dict[str, int], count: int = 1) -> dict[str, str]:
        """``count`` times ``amounts``, written as the API server writes quantities."""
        out = {}
        for key, value in amounts.items():
            value *= count
            if key == "cpu":
                out[key] = _cpu(value)
            elif key == "memory":
                out[key] = _memory(value)
            else:
                out[key] = str(value)
        return out

    def pod(
        self,
        namespace: str,
        name: str,
        created: int,
        requests: dict[str, str],
        priority: tuple[str, int],
        image: str,
        scheduler: str = "default-scheduler",
        node: str | None = None,
        phase: str = "Pending",
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None,
        tolerate: bool = False,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "name": name,
            "namespace": namespace,
            "uid": self.uid("Pod", namespace, name),
            "creationTimestamp": _ts(created),
        }
        if labels:
            meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
        limits = {k: v for k, v in requests.items() if k != "cpu"}
        container = {
            "name": "main",
            "image": image,
            "resources": {"requests": dict(requests), "limits": limits},
        }
        spec: dict[str, Any] = {
            "containers": [container],
            "priorityClassName": priority[0],
            "priority": priority[1],
            "schedulerName": scheduler,
        }
        if node is not None:
            spec["nodeName"] = node
        if node_selector:
            spec["nodeSelector"] = dict(node_selector)
        if tolerate:
            spec["tolerations"] = [dict(self.tolerate_gpu)]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": spec,
            "status": {"phase": phase},
        }

    # ------------------------------------------------------------ running load

    def fill(self, utilisation: float) -> None:
        """Running pods holding ``utilisation`` of the units (GPUs; eighths of CPU nodes)."""
        rng = self.rng
        for has_gpus in (True, False):
            tors = [tor for tor in self.tors if bool(tor[0].flavour.gpus) == has_gpus]
            caps = [sum(n.units for n in tor) for tor in tors]
            fills = _fills(rng, caps, round(utilisation * sum(caps)))
            for tor, fill in zip(tors, fills):
                if fill:
                    self._fill_tor(tor, fill)

    def _fill_tor(self, tor: list[_Node], fill: int) -> None:
        rng = self.rng
        size = tor[0].flavour.units
        whole_share = rng.choice((0.5, 0.75, 0.9, 1.0)) if size > 1 else 1.0
        full = [i for i, n in enumerate(tor) if n.units == size]
        wanted = min(len(full), int(fill * whole_share) // size)
        whole: list[_Node] = []
        if wanted:
            start = rng.randrange(len(full))
            whole = [tor[full[(start + k) % len(full)]] for k in range(wanted)]
            whole.sort(key=lambda n: n.name)
            left = whole[:]
            while left:
                count = min(len(left), _gang_size(rng, self.max_gang))
                self._running_job(left[:count])
                left = left[count:]
        taken = {id(n) for n in whole}
        others = [n for n in tor if id(n) not in taken]
        rng.shuffle(others)
        remaining = fill - wanted * size
        room_after = sum(n.units for n in others)
        for node in others:
            if remaining == 0:
                break
            room_after -= node.units
            take = min(remaining, node.units, rng.randint(1, node.units))
            take = max(take, remaining - room_after)
            remaining -= take
            for units in _unit_split(rng, take):
                self._running_service(node, units, "Running")
            if take < node.units and rng.random() < _SUCCEEDED_SHARE:
                self._running_service(node, 1, "Succeeded")
        assert remaining == 0

    def _running_job(self, nodes: list[_Node]) -> None:
        rng = self.rng
        index = len(self.pods)
        job = f"job-{index:06d}"
        namespace = rng.choice(_NAMESPACES)
        priority = self.priority()
        created = _RUNNING_FROM + rng.randint(0, 3 * 86400)
        flavour = nodes[0].flavour
        requests = self.quantities(self.requests(flavour, flavour.units))
        for j, node in enumerate(nodes):
            self.pods.append(
                self.pod(namespace, f"{job}-{j}", created, requests, priority, _IMAGES["run"],
                         node=node.name, phase="Running", labels={"job-name": job},
                         tolerate=node.tainted)
            )

    def _running_service(self, node: _Node, units: int, phase: str) -> None:
        rng = self.rng
        kind = rng.choice(_SERVICE_KINDS)
        name = f"{kind}-{len(self.pods):06d}"
        requests = self.quantities(self.requests(node.flavour, units))
        self.pods.append(
            self.pod(rng.choice(_NAMESPACES), name, _RUNNING_FROM + rng.randint(0, 3 * 86400),
                     requests, self.priority(), _IMAGES["service"],
                     node=node.name, phase=phase, labels={"app": kind},
                     tolerate=node.tainted)
        )

    # ------------------------------------------------------------ pending gangs

    def gangs(
        self,
        groups: int,
        shape: Sequence[int],
        selector_share: float,
        toleration_share: float,
        required_share: float,
        preferred_share: float,
        hostname_share: float = 0.0,
    ) -> None:
        rng = self.rng
        gpu_nodes = [n for n in self.nodes if n.flavour.gpus]
        candidates = gpu_nodes or self.nodes
        per_flavour: dict[Flavour, int] = {}
        pools_of: dict[Flavour, list[str]] = {}
        for n in candidates:
            per_flavour[n.flavour] = per_flavour.get(n.flavour, 0) + n.flavour.units
            listed = pools_of.setdefault(n.flavour, [])
            if n.pool not in listed:
                listed.append(n.pool)
        flavour_table = _table(list(per_flavour), list(per_flavour.values()))
        pool_weight = dict(_POOLS)
        pool_tables = {
            f: _table(pools, [pool_weight.get(p, 0.1) for p in pools])
            for f, pools in pools_of.items()
        }
        tor_nodes, minipod_nodes = shape[3], shape[2] * shape[3]
        width = len(str(max(groups - 1, 0)))
        created = _PENDING_FROM
        for i in range(groups):
            created += rng.randint(5, 90)
            flavour = _pick(rng, flavour_table)
            size = _gang_size(rng, self.max_gang)
            table = _GPU_TABLES[0 if size == 1 else 1 if size <= 8 else 2]
            units = min(_pick(rng, table), flavour.units)
            share = _pick(rng, _SHARE_TABLE)
            requests = self.requests(flavour, units, share)
            min_member = size
            if size >= 2 and rng.random() < _ELASTIC_SHARE:
                min_member = rng.randint(max(1, size // 2), size - 1)
            priority = self.priority()
            namespace = rng.choice(_NAMESPACES)
            name = f"{rng.choice(_JOB_KINDS)}-{i:0{width}d}"

            required = rng.random() < required_share
            preferred = rng.random() < preferred_share
            affinity: dict[str, Any] = {}
            if required or preferred:
                dialect = "godel"
                needed = -(-size // max(1, flavour.units // units))  # nodes it needs
                below = [MINIPOD, TOR]
                if required:
                    if needed > minipod_nodes // 2:
                        level = BIGPOD
                    elif needed <= tor_nodes // 2 and rng.random() < 0.4:
                        level = TOR
                    else:
                        level = MINIPOD
                    affinity["required"] = [{"topologyKey": level}]
                    below = below[below.index(level) + 1:] if level != BIGPOD else below
                if preferred and below:
                    keys = below if len(below) == 1 or rng.random() < 0.7 else below[1:]
                    affinity["preferred"] = [{"topologyKey": k} for k in keys]
                if rng.random() < _SORT_RULES_SHARE:
                    affinity["sortRules"] = [
                        {"resource": r, "dimension": d, "order": o}
                        for r, d, o in rng.choice(_SORT_RULE_SETS)
                    ]
                # Drawn apart, so that the share changes these terms and nothing else.
                if required and needed == 1 and hostname_share and self.node_terms.random() < hostname_share:
                    affinity["required"] = [{"topologyKey": HOSTNAME}]
                    affinity.pop("preferred", None)
            else:
                dialect = _pick(rng, _DIALECT_TABLE)
            node_selector = None
            if rng.random() < selector_share:
                if dialect == "godel" and rng.random() < 0.5:
                    affinity["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": INSTANCE_TYPE, "operator": "In",
                         "values": [flavour.instance_type]}]}]}
                else:
                    node_selector = {POOL: _pick(rng, pool_tables[flavour])}
            tolerate = bool(flavour.gpus) and rng.random() < toleration_share
            self._gang(dialect, namespace, name, size, min_member, created, requests, priority,
                       affinity, node_selector, tolerate)

    def _gang(
        self,
        dialect: str,
        namespace: str,
        name: str,
        size: int,
        min_member: int,
        created: int,
        amounts: dict[str, int],
        priority: tuple[str, int],
        affinity: dict[str, Any],
        node_selector: dict[str, str] | None,
        tolerate: bool,
    ) -> None:
        rng = self.rng
        stamp = _ts(created)
        image, scheduler = _IMAGES[dialect], _SCHEDULERS[dialect]
        requests = self.quantities(amounts)
        if dialect == "volcano":
            group_uid = self.uid("Job.batch.volcano.sh", namespace, name)
            group = f"{name}-{group_uid}"
        else:
            group = name
        for j in range(size):
            if dialect == "sp":
                pod_name = f"{name}-worker-{j}"
                labels = {SP_GROUP_LABEL: group, "training.kubeflow.org/job-name": name,
                          "training.kubeflow.org/replica-index": str(j)}
                annotations = None
            elif dialect == "volcano":
                pod_name = f"{name}-worker-{j}"
                labels = {"volcano.sh/job-name": name, "volcano.sh/task-spec": "worker"}
                annotations = {VOLCANO_GROUP_ANNOTATION: group, "volcano.sh/task-spec": "worker"}  # where Volcano reads it
            else:
                pod_name = f"{name}-{j}"
                labels = {"job-name": name}
                annotations = {GODEL_GROUP_ANNOTATION: group}
            self.pods.append(
                self.pod(namespace, pod_name, created + 1, requests, priority, image,
                         scheduler=scheduler, labels=labels, annotations=annotations,
                         node_selector=node_selector, tolerate=tolerate)
            )
        spec: dict[str, Any] = {"minMember": min_member}
        if dialect == "volcano":
            spec["minTaskMember"] = {"worker": min_member}
            spec["minResources"] = self.quantities(amounts, min_member)
            spec["queue"] = _pick(rng, _QUEUE_TABLE)
            spec["priorityClassName"] = priority[0]
            api = VOLCANO_API
        elif dialect == "sp":
            spec["scheduleTimeoutSeconds"] = rng.choice((600, 1800, 3600))
            if rng.random() < 0.3:
                spec["minResources"] = self.quantities(amounts, min_member)
            api = SP_API
        else:
            spec["priorityClassName"] = priority[0]
            spec["scheduleTimeoutSeconds"] = rng.choice((600, 1800, 3000, 3600))
            if affinity:
                spec["affinity"] = {"podGroupAffinity": affinity}
            api = GODEL_API
        self.pod_groups.append({
            "apiVersion": api,
            "kind": "PodGroup",
            "metadata": {
                "name": group,
                "namespace": namespace,
                "uid": self.uid("PodGroup", namespace, group),
                "creationTimestamp": stamp,
            },
            "spec": spec,
        })


# ---------------------------------------------------------------- the entry point


def flavour_problem(flavour: Flavour) -> str | None:
    """Why the generator cannot write nodes of ``flavour``, or None.

    Its instance type and GPU product are label values, or gangplan (and the API server)
    refuse the Nodes. A node is cut into ``units`` slots of at least 100m CPU and 256Mi
    memory (``requests``), so a flavour whose allocatable holds fewer would get running
    pods over-committing it, or a negative allocatable memory.
    """
    if not all(isinstance(v, int) for v in (flavour.cpu, flavour.memory, flavour.gpus)):
        return "cpu, memory and gpus must be integers"
    if flavour.cpu <= 0 or flavour.memory <= 0 or flavour.gpus < 0:
        return "cpu and memory must be positive and gpus at least 0"
    if not flavour.instance_type:
        return "its instance type must not be empty"
    for key, value in ((INSTANCE_TYPE, flavour.instance_type),
                       ("nvidia.com/gpu.product", flavour.gpu_product)):
        if flavour.gpus or key == INSTANCE_TYPE:
            if (problem := label_problem(key, value)) is not None:
                return problem
    units = flavour.units
    if flavour.allocatable_cpu < units * 100 or flavour.allocatable_memory < units * 256 * MI:
        return (
            f"its allocatable ({_cpu(max(flavour.allocatable_cpu, 0))} CPU, "
            f"{_memory(flavour.allocatable_memory) if flavour.allocatable_memory > 0 else '0'} "
            f"memory after the kubelet's reservations) is too small for {units} "
            f"slot{'s' if units != 1 else ''} of at least 100m CPU and 256Mi memory"
        )
    return None


def _check_flavours(flavours: Sequence[Flavour], weighted: bool) -> None:
    """UsageError naming the first flavour the generator cannot write (see flavour_problem),
    one instance type given two shapes (the Godel groups' nodeSelector picks a flavour by its
    instance type), or, when the weights are drawn from, a weight that is not a positive
    finite number or weights whose sum is not finite (``random.choices`` refuses them)."""
    shapes: dict[str, Flavour] = {}
    for flavour in flavours:
        problem = flavour_problem(flavour)
        if problem is None and weighted and not (
            isinstance(flavour.weight, (int, float)) and 0 < flavour.weight < math.inf
        ):
            problem = f"its weight must be a positive finite number, got {flavour.weight!r}"
        if problem is not None:
            raise UsageError(f"flavour {flavour.instance_type!r}: {problem}")
        other = shapes.setdefault(flavour.instance_type, flavour)
        if (other.cpu, other.memory, other.gpus, other.gpu_product) != (
            flavour.cpu, flavour.memory, flavour.gpus, flavour.gpu_product
        ):
            raise UsageError(f"flavour {flavour.instance_type!r} is given two different shapes")
    if weighted and not math.isfinite(sum(f.weight for f in flavours)):
        raise UsageError("the flavours' weights must have a finite sum")


def _extended_resource_problem(name: str) -> str | None:
    """Why ``name`` is not an extended resource a Node and a container may carry, or None.

    The API server's rule: a domain-prefixed qualified name outside kubernetes.io and not
    ``requests.*``. ``memory`` or ``cpu`` would overwrite the Node's own capacity with its GPU
    count; an unprefixed ``gpu`` makes Pods the API server and gangplan refuse.
    """
    prefix, slash, _ = name.partition("/")
    if not slash or label_problem(name, "") is not None:
        return "must be a domain-prefixed resource name like nvidia.com/gpu"
    if prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io") or name.startswith("requests."):
        return "must be an extended resource, outside the kubernetes.io domain"
    return None


def _share(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
        raise UsageError(f"{name} must be a number between 0 and 1, got {value!r}")


def generate(
    *,
    shape: tuple[int, ...] = (4, 4, 8, 16),
    groups: int = 100,
    seed: int = 0,
    utilisation: float = 0.5,
    flavours: Sequence[Flavour] = DEFAULT_FLAVOURS,
    selector_share: float = 0.1,
    toleration_share: float = 0.2,
    required_share: float = 0.3,
    preferred_share: float = 0.4,
    priorities: Sequence[tuple[str, int]] = (("high", 1000), ("normal", 100), ("low", 10)),
    max_gang: int = 256,
    gpu_resource: str = "nvidia.com/gpu",
    taint_share: float = 0.25,
    nodes_from: Sequence[NodeSpec | Flavour] | None = None,
    topology: bool = False,
    hostname_share: float = 0.0,
) -> dict[str, Any]:
    """A synthetic snapshot: one ``v1`` ``List`` of Nodes, Pods, PodGroups, PriorityClasses.

    ``shape`` is (bigPods, miniPods per bigPod, tors per miniPod, nodes per tor). With
    ``nodes_from`` (real nodes from ``traces.trace_nodes``, or bare Flavours, one per node) the
    nodes are those, grouped by flavour and filled tor after tor with ``shape[3]`` nodes
    per tor, ``shape[2]`` tors per miniPod and ``shape[1]`` miniPods per bigPod; the
    number of bigPods follows from the inventory (``shape[0]`` and ``flavours`` are
    ignored). ``taint_share`` is the share of GPU tors tainted
    ``<gpu_resource>=present:NoSchedule``; ``topology`` adds a Kueue Topology object naming
    the three levels (without it, levels come from the groups' terms). The distributions
    behind the other arguments are in the module docstring. Same arguments, same output;
    bad arguments raise UsageError.

    The objects share no sub-objects, so a YAML dumper writes no anchors, and nothing in
    them is a cycle: ``json.dumps`` or ``yaml.safe_dump`` writes them as they are.
    """
    if len(shape) != 4 or not all(isinstance(d, int) and d >= 1 for d in shape):
        raise UsageError(
            "shape must be four positive integers (bigPods, miniPods per bigPod, tors per "
            f"miniPod, nodes per tor), got {shape!r}"
        )
    if not isinstance(groups, int) or groups < 0:
        raise UsageError(f"groups must be a non-negative integer, got {groups!r}")
    if not isinstance(max_gang, int) or max_gang < 1:
        raise UsageError(f"max_gang must be a positive integer, got {max_gang!r}")
    for share_name, value in (
        ("utilisation", utilisation),
        ("selector_share", selector_share),
        ("toleration_share", toleration_share),
        ("required_share", required_share),
        ("preferred_share", preferred_share),
        ("taint_share", taint_share),
        ("hostname_share", hostname_share),
    ):
        _share(share_name, value)
    names = [name for name, _ in priorities]
    if not priorities or len(set(names)) != len(names) or not all(names):
        raise UsageError("priorities must be one or more (name, value) pairs with distinct names")
    if not all(isinstance(v, int) for _, v in priorities):
        raise UsageError("priority values must be integers")
    if not gpu_resource:
        raise UsageError("gpu_resource must not be empty")
    if (problem := _extended_resource_problem(gpu_resource)) is not None:
        raise UsageError(f"gpu_resource {problem}, got {gpu_resource!r}")

    # The objects hold no cycles, yet the collector would rescan them again and again as they
    # grow: on a 20,000-node snapshot that doubles the time (the loader does the same).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(
            shape, groups, seed, utilisation, flavours, selector_share, toleration_share,
            required_share, preferred_share, priorities, max_gang, gpu_resource, taint_share,
            nodes_from, topology, hostname_share,
        )
    finally:
        if collecting:
            gc.enable()


def _build(
    shape: Sequence[int],
    groups: int,
    seed: int,
    utilisation: float,
    flavours: Sequence[Flavour],
    selector_share: float,
    toleration_share: float,
    required_share: float,
    preferred_share: float,
    priorities: Sequence[tuple[str, int]],
    max_gang: int,
    gpu_resource: str,
    taint_share: float,
    nodes_from: Sequence[NodeSpec | Flavour] | None,
    topology: bool,
    hostname_share: float,
) -> dict[str, Any]:
    builder = _Builder(seed, gpu_resource, priorities, max_gang, taint_share)
    if nodes_from is not None:
        specs: list[NodeSpec] = []
        width = len(str(max(len(nodes_from) - 1, 0)))
        for index, item in enumerate(nodes_from):
            if not isinstance(item, NodeSpec):
                item = NodeSpec(f"node-{index:0{width}d}", item)
            specs.append(item)
        if not specs:
            raise UsageError("nodes_from is empty")
        _check_flavours(list(dict.fromkeys(s.flavour for s in specs)), weighted=False)
        if len({s.name for s in specs}) != len(specs):
            raise UsageError("nodes_from names a node twice")
        builder.layout_inventory(specs, shape)
    else:
        if not flavours:
            raise UsageError("flavours must be one or more")
        _check_flavours(flavours, weighted=True)
        builder.layout_generated(shape, flavours)
    builder.fill(utilisation)
    builder.gangs(groups, shape, selector_share, toleration_share, required_share, preferred_share, hostname_share)

    def key(obj: dict[str, Any]) -> tuple[str, str]:
        meta = obj["metadata"]
        return meta.get("namespace", ""), meta["name"]

    items: list[dict[str, Any]] = [builder.node_object(n) for n in builder.nodes]
    items.sort(key=key)
    builder.pods.sort(key=key)
    items += builder.pods
    builder.pod_groups.sort(key=lambda o: (o["apiVersion"], *key(o)))
    items += builder.pod_groups
    for name, value in priorities:
        items.append({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name, "uid": builder.uid("PriorityClass", "", name),
                         "creationTimestamp": _ts(_NODES_BORN)},
            "value": value,
            "preemptionPolicy": "PreemptLowerPriority",
            "description": f"{name} priority (generated)",
        })
    if topology:
        items.append({
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Topology",
            "metadata": {"name": "network"},
            "spec": {"levels": [{"nodeLabel": k} for k in (BIGPOD, MINIPOD, TOR, HOSTNAME)]},
        })
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}

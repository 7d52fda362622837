"""The input model: what gangplan knows of a cluster snapshot, free of files and YAML.

These are faithful, validated copies of the Kubernetes fields gangplan reads. Rules
(eligibility, request sums, group membership) are applied by ``semantics`` and, again and
independently, by ``verify``; nothing here interprets the objects beyond parsing.

Amounts are integers: millicores for ``cpu``, whole units for every other resource.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

Resources = Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an object was read: the file, the YAML document, and the path inside it.

    ``path`` leads from the document root to the object (``("items", 3)`` for a List item),
    so an error about a field can be located later without keeping positions for every field.
    """

    file: str
    document: int = 0
    path: tuple[str | int, ...] = ()


NOWHERE = Origin("<built-in>")


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str  # "" with operator Exists tolerates every taint
    operator: str  # Equal | Exists
    value: str
    effect: str  # "" tolerates every effect


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Requirements ANDed; a term with none matches no node (as in Kubernetes)."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Terms ORed; an empty list of terms matches no node."""

    terms: tuple[NodeSelectorTerm, ...]


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """A required pod affinity or anti-affinity term (requiredDuringSchedulingIgnoredDuringExecution)."""

    match_labels: Mapping[str, str] | None  # None: no labelSelector, which selects no pod
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    namespaces: tuple[str, ...] | None = None  # None: a namespaceSelector (any namespace may match)
    topology_key: str = ""
    every_namespace: bool = False  # namespaceSelector {}: every namespace, which needs no Namespace labels


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """A topologySpreadConstraint with ``whenUnsatisfiable: DoNotSchedule`` (kube-scheduler's
    PodTopologySpread filter); ScheduleAnyway is a preference, which gangplan does not plan by."""

    selector: PodAffinityTerm  # labelSelector, matchLabelKeys folded in; the pod's namespace; topologyKey
    max_skew: int
    min_domains: int = 1
    node_affinity_policy: str = "Honor"  # Honor | Ignore: whether E holds only nodes the pod's node filters pass
    node_taints_policy: str = "Ignore"  # Honor | Ignore: whether E holds only nodes whose taints it tolerates


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]
    allocatable: Resources
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True
    origin: Origin = NOWHERE


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    requests: Resources
    restart_policy: str | None = None  # "Always" marks a sidecar init container


class PodPhase(str, Enum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class OwnerReference:
    kind: str
    name: str
    controller: bool = False


@dataclass(frozen=True, slots=True)
class HostPort:
    """A port a pod binds on its node's network (``hostPort``, or every container port under
    ``hostNetwork``), as kube-scheduler's NodePorts filter keeps it: no two pods on a node may
    bind one protocol and port on the same address, and ``0.0.0.0`` is every address."""

    port: int
    protocol: str = "TCP"  # TCP | UDP | SCTP
    ip: str = "0.0.0.0"  # hostIP; empty is 0.0.0.0


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    uid: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Resources = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_affinity: NodeSelector | None = None  # requiredDuringSchedulingIgnoredDuringExecution
    tolerations: tuple[Toleration, ...] = ()
    priority: int | None = None
    priority_class_name: str | None = None
    node_name: str | None = None
    phase: PodPhase = PodPhase.PENDING
    creation_timestamp: str = ""
    owners: tuple[OwnerReference, ...] = ()
    origin: Origin = NOWHERE
    # A pod that does not exist yet (expanded from a Gang, a Volcano Job or --gang workloads):
    # the v1 Pod object to create, output with spec.nodeName instead of a Binding.
    manifest: Mapping[str, object] | None = None
    scheduling_gates: tuple[str, ...] = ()  # spec.schedulingGates names
    deleting: bool = False  # metadata.deletionTimestamp is set
    unmodelled: tuple[str, ...] = ()  # hard scheduling rules it asks that gangplan does not model
    anti_affinity: tuple[PodAffinityTerm, ...] = ()  # required podAntiAffinity terms
    affinity: tuple[PodAffinityTerm, ...] = ()  # required podAffinity terms
    # spec.resources (pod-level resources, on by default since Kubernetes 1.34): requests,
    # defaulted from limits, of the resources it may set (cpu, memory).
    pod_level_requests: Resources = field(default_factory=dict)
    host_ports: tuple[HostPort, ...] = ()
    spread: tuple[TopologySpreadConstraint, ...] = ()  # DoNotSchedule topologySpreadConstraints
    # A pod its Kueue group will have, which Kueue's TAS holds room for before it exists (fast
    # admission): planned, so the room is held, and in no output.
    to_come: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class PodGroupAPI(str, Enum):
    """The dialect a PodGroup was written in; each has its own apiVersion."""

    SCHEDULER_PLUGINS = "scheduling.x-k8s.io/v1alpha1"
    SCHEDULER_PLUGINS_LEGACY = "scheduling.sigs.k8s.io/v1alpha1"
    VOLCANO = "scheduling.volcano.sh/v1beta1"
    GODEL = "scheduling.godel.kubewharf.io/v1alpha1"
    GODEL_BYTEDANCE = "scheduling.orchestration.bytedance.com/v1alpha1"
    KUEUE_POD_GROUP = "kueue.x-k8s.io/pod-group"  # plain pods, no object: label + total count
    POD = "v1/Pod"  # a pending pod with no PodGroup: a group of one
    GANG = "extensions/v1beta1"  # seed 002's Gang: pods plus replicated templates
    VOLCANO_JOB = "batch.volcano.sh/v1alpha1"  # a Volcano Job: tasks x replicas
    MANIFESTS = "gangplan.io/gang"  # --gang NAME=FILE,...: workloads made one gang


# What a group with no PodGroup object is called beside a PodGroup of its namespace/name:
# plan's table and report, diff, check and warnings name it `ns/name (pod)` so.
IMPLICIT_KINDS = {PodGroupAPI.POD.value: "pod", PodGroupAPI.KUEUE_POD_GROUP.value: "Kueue pod group"}


@dataclass(frozen=True, slots=True)
class SortRule:
    """Godel sort rule; resource is normalised to CPU, GPU or Memory."""

    resource: str = "CPU"
    dimension: str = "Capacity"  # Capacity | Available
    order: str = "Ascending"  # Ascending | Descending


@dataclass(frozen=True, slots=True)
class PodGroup:
    namespace: str
    name: str
    api: PodGroupAPI
    min_member: int
    min_resources: Resources = field(default_factory=dict)
    min_task_member: Mapping[str, int] = field(default_factory=dict)
    queue: str = ""
    priority_class_name: str | None = None
    sub_group: str = ""
    schedule_timeout_seconds: int | None = None
    required_topology: tuple[str, ...] = ()  # topologyKeys of required terms
    preferred_topology: tuple[str, ...] = ()  # topologyKeys of preferred terms, largest first
    node_selector: NodeSelector | None = None  # Godel podGroupAffinity.nodeSelector
    sort_rules: tuple[SortRule, ...] = ()
    affinity_beside: bool = False  # Godel terms written beside podGroupAffinity, not inside it
    timed_out: bool = False  # Godel's final phase Timeout: its scheduler takes its pods no more
    finished: bool = False  # status.phase Completed (Volcano) or Finished: its job ran to the end
    creation_timestamp: str = ""
    uid: str | None = None
    raw: Mapping[str, object] = field(default_factory=dict)  # the object as given, for -o status
    origin: Origin = NOWHERE
    unmodelled: tuple[str, ...] = ()  # hard scheduling rules it asks that gangplan does not model

    @property
    def manifest(self) -> bool:
        """Written to be created (no uid, no status), not read from a cluster: its pods may
        not exist yet because nothing has made them."""
        return self.uid is None and not self.raw.get("status")

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    origin: Origin = NOWHERE


@dataclass(frozen=True, slots=True)
class WorkloadPriorityClass:
    """Kueue's priority for queueing a Workload, apart from its pods' own: named by a label
    on the pods, it wins over their PriorityClass in Kueue's order."""

    name: str
    value: int
    origin: Origin = NOWHERE


@dataclass(frozen=True, slots=True)
class Topology:
    """A Kueue/KAI Topology: node label keys, largest level first."""

    name: str
    levels: tuple[str, ...]
    origin: Origin = NOWHERE


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything read from the inputs, in input order."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pod_groups: tuple[PodGroup, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    topologies: tuple[Topology, ...] = ()
    workload_priority_classes: tuple[WorkloadPriorityClass, ...] = ()
    skipped_kinds: Mapping[str, int] = field(default_factory=dict)
    empty_inputs: tuple[str, ...] = ()  # files with no document at all (a `kubectl get` that failed?)

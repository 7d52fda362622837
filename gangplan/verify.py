"""The independent verifier: does a placement obey every rule of DESIGN section 3?

Every rule is derived here again, from the snapshot alone, and none of it is shared with the
solver or with ``semantics``: a mistake in the planner's reading of Kubernetes would otherwise
be repeated by the check that is meant to catch it. Only the model, the plan and quantity
formatting are imported.

Where Kubernetes and a looser reading differ, this module follows Kubernetes (toleration
matching, label-selector parsing, ``matchFields``, the init-container and sidecar request
rules), so that a plan it accepts is one the real scheduler would accept too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from gangplan.model import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodGroup,
    PodGroupAPI,
    PodPhase,
    Snapshot,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from gangplan.plan import Claim, Placement
from gangplan.quantity import format_alike, plural

__all__ = [
    "MINIMUM_RULES",
    "Violation",
    "VerificationSummary",
    "Verification",
    "verify",
    "format_verification",
    "format_spans",
]

_GROUP_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
_GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
_GODEL_GROUP = "godel.bytedance.com/pod-group-name"
_KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
_KUEUE_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
_KUEUE_FAST = "kueue.x-k8s.io/pod-group-fast-admission"  # present, whatever its value: admitted before all pods exist
_VOLCANO_TASK = "volcano.sh/task-spec"
_KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
_KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
_KUEUE_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # what Go's strconv.ParseBool reads as true
_NODE_LEVEL = "node"
_HOSTNAME = "kubernetes.io/hostname"  # the node itself: below every level, always there

_FINISHED = (PodPhase.SUCCEEDED, PodPhase.FAILED)
_KUEUE_GATES = "kueue.x-k8s.io/"  # lifted when Kueue admits the workload: planned through
_KUBELET_MAX_PODS = 110  # --max-pods default; restated here, not imported: the verifier shares no rule code
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_INT64 = re.compile(r"[+-]?[0-9]+")
# IsValidLabelValue, which labels.NewRequirement checks each value of every operator against.
_LABEL_VALUE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule; ``subject`` is a pod key, a node name or a group key. ``partner``: the
    other placed pod, where the rule is broken between two the plan places ('' otherwise), so
    a caller that knows it leaves one of them unchecked can tell the pair from the rest;
    ``terms``, for anti-affinity between them, every term that breaks it, each (the key of
    the pod carrying it, its index in that pod's anti-affinity), and for a topology spread
    constraint, the pod's constraints alike to the one broken (their indexes in its spread):
    one that leaves a term of a pod unchecked can tell whether its others break it too. Not
    shown."""

    rule: str
    subject: str
    message: str
    partner: str = ""
    terms: tuple[tuple[str, int], ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class VerificationSummary:
    """What was checked, so a clean result can be told apart from an empty plan."""

    placements: int = 0  # entries in the plan, valid or not
    pods_placed: int = 0  # distinct pending pods of the snapshot that the plan places
    groups_with_placements: int = 0  # groups (groups of one included) with a placed pod
    nodes_used: int = 0  # existing nodes receiving at least one placed pod


@dataclass(frozen=True, slots=True)
class Verification:
    violations: tuple[Violation, ...] = ()
    summary: VerificationSummary = field(default_factory=VerificationSummary)
    # group key -> {level key: distinct domains its running + placed members occupy, for each
    # of the levels given to verify, then "node": distinct nodes}; every PodGroup or Kueue
    # plain-pod group with a placed pod, in snapshot order. Members on nodes outside the
    # topology at a level occupy no domain there; members on unknown nodes are left out.
    spans: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def rules(self) -> frozenset[str]:
        """The rule ids that were broken, for callers that only need to know which."""
        return frozenset(v.rule for v in self.violations)


def format_verification(verification: Verification) -> list[str]:
    """One line per violation, in the order found; empty when the plan is valid."""
    return [f"{v.rule} {v.subject}: {v.message}" for v in verification.violations]


def format_spans(verification: Verification) -> list[str]:
    """One line per group, by name (not input order): ``ns/g spans <level> <domains>, ..., node <nodes>``."""
    return [
        f"{group} spans " + ", ".join(f"{level} {count}" for level, count in spans.items())
        for group, spans in sorted(verification.spans.items())
    ]


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        total[resource] = total.get(resource, 0) + amount


def _pod_requests(pod: Pod) -> dict[str, int]:
    """Kubernetes' PodRequests: sidecars run beside the containers, init containers before.

    A non-sidecar init container runs next to the sidecars started before it; a sidecar's
    own start-up peak is the sum of the sidecars up to it. The pod needs the larger of the
    long-running total and every such peak, resource by resource, or the pod-level request
    where ``spec.resources`` sets one, plus overhead; and one
    ``pods`` slot whatever its containers say, as the scheduler counts pods, not requests.
    """
    long_running: dict[str, int] = {}
    for container in pod.containers:
        _add(long_running, container.requests)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod.init_containers:
        if container.restart_policy == "Always":
            _add(long_running, container.requests)
            _add(sidecars, container.requests)
            peak = dict(sidecars)
        else:
            peak = dict(sidecars)
            _add(peak, container.requests)
        for resource, amount in peak.items():
            init_peak[resource] = max(init_peak.get(resource, 0), amount)
    effective = dict(long_running)
    for resource, amount in init_peak.items():
        effective[resource] = max(effective.get(resource, 0), amount)
    effective.update(pod.pod_level_requests)  # spec.resources wins for what it sets
    _add(effective, pod.overhead)
    effective["pods"] = 1
    return effective


def _is_running(pod: Pod) -> bool:
    return pod.node_name is not None and pod.phase not in _FINISHED


def _is_pending(pod: Pod) -> bool:
    return pod.node_name is None and pod.phase not in _FINISHED


def _tolerates(toleration: Toleration, taint: Taint) -> bool:
    """corev1 Toleration.ToleratesTaint, including its quirks (an empty key with Equal)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return False


def _int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): Python's int() would also take spaces and '1_0'."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _label_requirement_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    """labels.Requirement.Matches; one Kubernetes would refuse to build matches nothing."""
    present = req.key in labels
    value = labels.get(req.key, "")
    op = req.operator
    if any(len(v) > 63 or not _LABEL_VALUE.fullmatch(v) for v in req.values):
        return False
    if op in ("In", "NotIn"):
        if not req.values:
            return False
        if op == "In":
            return present and value in req.values
        return not present or value not in req.values
    if op in ("Exists", "DoesNotExist"):
        if req.values:
            return False
        return present if op == "Exists" else not present
    if op in ("Gt", "Lt"):
        if len(req.values) != 1:
            return False
        bound = _int64(req.values[0])
        if bound is None or not present:
            return False
        actual = _int64(value)
        if actual is None:
            return False
        return actual > bound if op == "Gt" else actual < bound
    return False


def _field_requirement_matches(req: NodeSelectorRequirement, node: Node) -> bool:
    """Node fields are only metadata.name, with In / NotIn of exactly one value."""
    if req.key != "metadata.name" or len(req.values) != 1:
        return False
    if req.operator == "In":
        return node.name == req.values[0]
    if req.operator == "NotIn":
        return node.name != req.values[0]
    return False


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False
    return all(_label_requirement_matches(r, node.labels) for r in term.match_expressions) and all(
        _field_requirement_matches(r, node) for r in term.match_fields
    )


def _selector_matches(selector: NodeSelector, node: Node) -> bool:
    return any(_term_matches(term, node) for term in selector.terms)


def _describe_requirement(req: NodeSelectorRequirement, node: Node, is_field: bool) -> str:
    values = ",".join(req.values)
    if is_field:
        have = f"metadata.name={node.name}" if req.key == "metadata.name" else f"no field {req.key}"
    elif req.key in node.labels:
        have = f"{req.key}={node.labels[req.key]}"
    else:
        have = f"no label {req.key}"
    return f"{req.key} {req.operator} [{values}] (node has {have})"


def _describe_mismatch(selector: NodeSelector, node: Node) -> str:
    """Why each term fails, so a reader sees which requirement to fix."""
    if not selector.terms:
        return "the selector has no terms, which matches no node"
    reasons = []
    for index, term in enumerate(selector.terms, 1):
        if not term.match_expressions and not term.match_fields:
            reasons.append(f"term {index} has no requirements, which matches no node")
            continue
        failing = [
            _describe_requirement(r, node, False)
            for r in term.match_expressions
            if not _label_requirement_matches(r, node.labels)
        ] + [
            _describe_requirement(r, node, True)
            for r in term.match_fields
            if not _field_requirement_matches(r, node)
        ]
        reasons.append(f"term {index}: " + "; ".join(failing))
    return " | ".join(reasons)


def _eligibility(pod: Pod, node: Node, group: PodGroup | None) -> list[Violation]:
    found: list[Violation] = []
    subject = pod.key
    if not node.ready:
        found.append(Violation("node-not-ready", subject, f"node {node.name} is not Ready"))
    if node.unschedulable:
        found.append(
            Violation("unschedulable", subject, f"node {node.name} is cordoned (unschedulable)")
        )
    for taint in node.taints:
        if taint.effect not in _BLOCKING_EFFECTS:
            continue
        if not any(_tolerates(t, taint) for t in pod.tolerations):
            found.append(
                Violation(
                    "taint",
                    subject,
                    f"node {node.name} has taint {taint.key}={taint.value}:{taint.effect} "
                    "that the pod does not tolerate",
                )
            )
    for key, wanted in pod.node_selector.items():
        if node.labels.get(key) != wanted:
            have = f"{key}={node.labels[key]}" if key in node.labels else f"no label {key}"
            found.append(
                Violation(
                    "node-selector",
                    subject,
                    f"nodeSelector {key}={wanted} does not match node {node.name} ({have})",
                )
            )
    if pod.node_affinity is not None and not _selector_matches(pod.node_affinity, node):
        found.append(
            Violation(
                "node-affinity",
                subject,
                f"required node affinity does not match node {node.name}: "
                + _describe_mismatch(pod.node_affinity, node),
            )
        )
    if group is not None and group.node_selector is not None:
        if not _selector_matches(group.node_selector, node):
            found.append(
                Violation(
                    "group-node-selector",
                    subject,
                    f"PodGroup {group.key} nodeSelector does not match node {node.name}: "
                    + _describe_mismatch(group.node_selector, node),
                )
            )
    return found


@dataclass
class _Gang:
    """A PodGroup or a Kueue plain-pod group: members that must reach their minimums together."""

    key: str
    min_member: int
    pod_group: PodGroup | None = None
    members: list[Pod] = field(default_factory=list)


def _named_groups(pod: Pod) -> Iterable[str]:
    for key in _GROUP_LABELS:
        yield pod.labels.get(key, "")
    for key in _GROUP_ANNOTATIONS:
        yield pod.annotations.get(key, "")
    yield pod.annotations.get(_GODEL_GROUP, "")
    yield pod.labels.get(_GODEL_GROUP, "")


def _gangs(snapshot: Snapshot) -> tuple[dict[str, _Gang], dict[str, str]]:
    """Every gang in snapshot order, and the gang key of each member pod (by pod key).

    A pod naming several groups joins the first named one that exists, in the order the keys
    are listed in DESIGN section 1; a PodGroup object wins over a Kueue plain-pod group.
    """
    gangs: dict[str, _Gang] = {}
    for group in snapshot.pod_groups:
        gangs.setdefault(group.key, _Gang(group.key, group.min_member, group))
    kueue: dict[str, _Gang] = {}
    member_of: dict[str, str] = {}
    for pod in snapshot.pods:
        if pod.key in member_of:
            continue
        named = (f"{pod.namespace}/{name}" for name in _named_groups(pod) if name)
        target = next((key for key in named if key in gangs), None)
        if target is not None:
            gangs[target].members.append(pod)
            member_of[pod.key] = target
            continue
        name = pod.labels.get(_KUEUE_GROUP, "")
        total = pod.annotations.get(_KUEUE_TOTAL, "")
        if name and _INT64.fullmatch(total):  # Kueue reads it with Go's strconv.Atoi
            key = f"kueue:{pod.namespace}/{name}"
            gang = kueue.setdefault(key, _Gang(f"{pod.namespace}/{name}", 0))
            gang.min_member = max(gang.min_member, int(total))
            gang.members.append(pod)
            member_of[pod.key] = key
    for gang in kueue.values():
        if any(_KUEUE_FAST in p.annotations for p in gang.members):
            # Kueue starts a fast-admitted group with the runnable pods it has.
            runnable = sum(1 for p in gang.members if p.phase != PodPhase.FAILED and not (p.deleting and not p.node_name))
            gang.min_member = min(gang.min_member, runnable) or gang.min_member
    gangs.update(kueue)
    return gangs, member_of


def _role(pod: Pod) -> str:
    """The task Volcano's getTaskID reads: from the annotation alone."""
    return pod.annotations.get(_VOLCANO_TASK, "")


# The rules a group's members must meet together: a List without some of a plan's pods, or a
# newer snapshot, can break them where every pod's own placement still holds.
MINIMUM_RULES = frozenset({"min-member", "min-resources", "min-task-member", "job-group"})

# Where Succeeded members count toward minMember while the group has pods to place: Volcano
# (its ready tasks) and Kueue (a pod group admitted whole; its gangs here have no PodGroup).
# kube-scheduler's framework never sees them: its pod informer leaves Succeeded and Failed out.
_SUCCEEDED_COUNTS = {PodGroupAPI.VOLCANO, PodGroupAPI.VOLCANO_JOB}


def _shortfalls(gang: _Gang, placed: set[str]) -> list[tuple[str, str]]:
    """(rule, message) for each minimum the gang misses with its running and placed members,
    and its succeeded ones where they count (Failed ones never do). A PodGroup its controller
    calls Completed or Finished, none of whose pods waits, misses none: its job ran to the
    end, though its pods may be gone from the snapshot."""
    group = gang.pod_group
    if group is not None and group.finished and not any(_is_pending(p) for p in gang.members):
        return []
    # A scheduler judges the quorum only while it has a pod to bind (not gated, not being deleted).
    bindable = any(
        _is_pending(p) and not p.deleting and all(g.startswith(_KUEUE_GATES) for g in p.scheduling_gates)
        for p in gang.members
    )
    finished_count = group is None or group.api in _SUCCEEDED_COUNTS or not bindable
    counted = [
        p for p in gang.members
        if _is_running(p) or (finished_count and p.phase == PodPhase.SUCCEEDED) or p.key in placed
    ]
    running = sum(1 for p in counted if _is_running(p))
    succeeded = sum(1 for p in counted if p.phase == PodPhase.SUCCEEDED)
    found: list[tuple[str, str]] = []
    if len(counted) < gang.min_member:
        found.append(
            (
                "min-member",
                f"{len(counted)} of minMember {gang.min_member} (running {running} + "
                + (f"succeeded {succeeded} + " if succeeded else "")
                + f"placed {len(counted) - running - succeeded})",
            )
        )
    if group is None:
        return found
    if group.min_resources:
        total: dict[str, int] = {}
        for pod in counted:
            _add(total, _pod_requests(pod))
        for resource in sorted(group.min_resources):
            need = group.min_resources[resource]
            have = total.get(resource, 0)
            if have < need:
                shown = format_alike(resource, [have, need])
                found.append(
                    (
                        "min-resources",
                        f"{resource}: running, succeeded and placed members request {shown[0]} < minResources {shown[1]}",
                    )
                )
    # Volcano checks task minimums only when minMember is at least their sum.
    checked_tasks = group.min_task_member if gang.min_member >= sum(group.min_task_member.values()) else {}
    per_task = Counter(_role(p) for p in counted) if checked_tasks else Counter()
    for task in sorted(checked_tasks):
        need = group.min_task_member[task]
        have = per_task[task]
        if have < need:
            found.append(
                (
                    "min-task-member",
                    f"task {task}: {have} running, succeeded and placed < minTaskMember {need}",
                )
            )
    return found


def verify(
    snapshot: Snapshot,
    placements: Sequence[Placement],
    levels: Sequence[str] = (),
    claims: Iterable[Claim] | None = None,
    objects: bool = False,
) -> Verification:
    """Check ``placements`` against ``snapshot``; the result lists every rule they break.

    A placement whose pod is unknown, not pending or already placed is reported and then left
    out of every other check, so one mistake is reported once. A pod placed on an unknown node
    still counts for its group (the plan means it to run) but for no node's capacity, and for
    no topology domain.

    ``levels`` are the topology level label keys, largest first, as the caller resolved them
    (DESIGN section 2); they define the domains of the topology checks and of ``spans``.

    ``claims``: what a Plan says of each group (placed, pending pods scheduled, pending pods),
    checked against its own placements and the snapshot, so a Plan cannot call a group placed
    that it does not place.

    ``objects``: the placements are API objects to apply (a List of Bindings and Pods), so a
    Binding of a pod that is still to be created is one the API server refuses.
    """
    violations: list[Violation] = []
    pods: dict[str, Pod] = {}
    for known_pod in snapshot.pods:
        pods.setdefault(known_pod.key, known_pod)
    nodes: dict[str, Node] = {}
    for known_node in snapshot.nodes:
        nodes.setdefault(known_node.name, known_node)
    gangs, member_of = _gangs(snapshot)

    placed: dict[str, str] = {}  # pod key -> node name, first valid placement only
    for placement in placements:
        key = placement.pod
        pod = pods.get(key)
        if pod is None:
            violations.append(Violation("unknown-pod", key, "no such pod in the snapshot"))
            continue
        if placement.uid and pod.uid and placement.uid != pod.uid:
            violations.append(
                Violation(
                    "unknown-pod",
                    key,
                    f"the plan places uid {placement.uid}, the snapshot's pod has uid {pod.uid}",
                )
            )
            continue
        if not _is_pending(pod):
            state = f"bound to {pod.node_name}" if pod.node_name else f"phase {pod.phase.value}"
            violations.append(Violation("not-pending", key, f"the pod is not pending ({state})"))
            continue
        if why := _unschedulable(pod, gangs, member_of):
            violations.append(Violation("not-schedulable", key, why))
            continue
        if placement.manifest is not None and (why := _created(placement.manifest, pod)):
            violations.append(Violation("pod-object", key, why))
            continue
        if objects and placement.manifest is None and pod.manifest is not None:
            why = "a Binding for a pod that does not exist yet (the API server answers NotFound); create it as a Pod with spec.nodeName"
            violations.append(Violation("pod-object", key, why))
            continue
        if objects and placement.manifest is None and pod.scheduling_gates:
            # A Plan may place a pod Kueue holds (bound once admitted); a Binding of it now is refused.
            gates = ", ".join(pod.scheduling_gates)
            why = f"a Binding for a gated pod (scheduling gates {gates}): the API server answers Conflict until they are lifted"
            violations.append(Violation("not-schedulable", key, why))
            continue
        if key in placed:
            violations.append(
                Violation(
                    "duplicate",
                    key,
                    f"placed again on {placement.node}; first placed on {placed[key]}",
                )
            )
            continue
        placed[key] = placement.node
        node = nodes.get(placement.node)
        if node is None:
            violations.append(
                Violation("unknown-node", key, f"node {placement.node} is not in the snapshot")
            )
            continue
        gang = gangs.get(member_of.get(key, ""))
        violations.extend(_eligibility(pod, node, gang.pod_group if gang else None))

    violations.extend(_capacity(snapshot, nodes, pods, placed))
    violations.extend(_host_ports(snapshot, nodes, pods, placed))
    violations.extend(_anti_affinity(snapshot, nodes, pods, placed))
    violations.extend(_pod_affinity(snapshot, nodes, pods, placed))
    violations.extend(_topology_spread(snapshot, nodes, pods, placed))
    placed_keys = set(placed)
    violations.extend(_group_checks(snapshot, gangs, placed_keys))
    topology_violations, spans = _topology_checks(
        snapshot, gangs, member_of, nodes, placed, tuple(levels)
    )
    violations.extend(topology_violations)
    violations.extend(_room_to_come(snapshot, nodes, pods, placed, gangs, tuple(levels)))
    if claims is not None:
        violations.extend(_claim_checks(claims, gangs, member_of, pods, placed))

    summary = VerificationSummary(
        placements=len(placements),
        pods_placed=len(placed),
        groups_with_placements=len({member_of.get(key, f"pod:{key}") for key in placed_keys}),
        nodes_used=len({n for n in placed.values() if n in nodes}),
    )
    return Verification(tuple(violations), summary, spans)


def _room_to_come(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
    gangs: Mapping[str, _Gang],
    levels: Sequence[str],
) -> list[Violation]:
    """Kueue's TAS admits a fast-admitted group that has fewer runnable pods than its total
    count, none of them bound yet (bound, it was admitted before), only where the whole count
    fits, and holds that room for the pods to come: after the
    plan, the Topology's nodes (those with every level) in the domain of its required level
    that its pods are in (all of them, with a preferred level alone, or unconstrained) must
    take that many more pods shaped as its first runnable pod by name (Kueue's PodSet), each
    on a node that passes that pod's filters, room counted node by node. Each group is checked
    alone: room that two such groups would share counts for each."""
    found: list[Violation] = []
    used: dict[str, dict[str, int]] | None = None
    for gang in gangs.values():
        if gang.pod_group is not None or not any(_KUEUE_FAST in p.annotations for p in gang.members):
            continue
        runnable = sorted(
            (p for p in gang.members if p.phase != PodPhase.FAILED and not (p.deleting and not p.node_name)),
            key=lambda p: p.name,
        )
        counts = [int(t) for p in gang.members if _INT64.fullmatch(t := p.annotations.get(_KUEUE_TOTAL, ""))]
        to_come = max(counts, default=0) - len(runnable)
        required, preferred = (_binding(keys, levels) for keys in _kueue_terms(gang))
        tas = required or preferred or True in _unconstrained(gang)
        admitted = any(p.node_name for p in runnable)  # a bound pod: Kueue admitted it before
        there = [placed[p.key] for p in gang.members if p.key in placed]
        if to_come <= 0 or admitted or not tas or not there:
            continue
        if used is None:
            used = {}
            for pod in snapshot.pods:
                if _is_running(pod) and pod.node_name is not None and pod.node_name in nodes:
                    _add(used.setdefault(pod.node_name, {}), _pod_requests(pod))
            for key, node_name in placed.items():
                if node_name in nodes:
                    _add(used.setdefault(node_name, {}), _pod_requests(pods[key]))
        first = runnable[0]
        shape = _pod_requests(first)
        inside = [n for n in nodes.values() if all(k in n.labels for k in levels)]  # the Topology's nodes
        where = "the topology"
        if required:
            k = required[0]
            values = {v for n in there if (v := _domain_of(nodes, n, k)) is not None}
            inside = [n for n in inside if _node_domain(n, k) in values]
            where = ", ".join(f"{k}={v}" for v in sorted(values)) or f"no {k}"
        fits = 0
        for node in inside:
            if _eligibility(first, node, None):
                continue
            here = used.get(node.name, {})
            free = {r: node.allocatable.get(r, _KUBELET_MAX_PODS if r == "pods" else 0) - here.get(r, 0) for r in shape}
            fits += max(0, min((free[r] // want for r, want in shape.items() if want > 0), default=0))
        if fits < to_come:
            like = f"{fits} pod like {first.name} fits" if fits == 1 else f"{fits} pods like {first.name} fit"
            found.append(Violation(
                "kueue-tas-room", gang.key,
                f"Kueue's TAS holds room for its {to_come} pods to come (fast admission, "
                f"{max(counts)} in all, {len(runnable)} there) in {where}, where {like} after the plan",
            ))
    return found


def inter_pod_violations(snapshot: Snapshot, placed: Mapping[str, str]) -> list[Violation]:
    """``verify``'s checks of what a placement asks of the pods around it, alone: required pod
    affinity, required anti-affinity between the placed pods, and topology spread, of
    ``placed`` (pod key -> node name, the pods pending in ``snapshot``). diff holds an earlier
    plan's placements to them against a newer snapshot, whose running pods may have gone or
    come, as verify would (anti-affinity against running pods it weighs on its own)."""
    pods: dict[str, Pod] = {}
    for known_pod in snapshot.pods:
        pods.setdefault(known_pod.key, known_pod)
    nodes: dict[str, Node] = {}
    for known_node in snapshot.nodes:
        nodes.setdefault(known_node.name, known_node)
    return [*_pod_affinity(snapshot, nodes, pods, placed), *_placed_apart(nodes, pods, placed), *_topology_spread(snapshot, nodes, pods, placed)]


def claim_violations(snapshot: Snapshot, placements: Sequence[Placement], claims: Iterable[Claim]) -> tuple[Violation, ...]:
    """Only the claim checks of :func:`verify`, for placements already known to keep every
    rule (the planner's own, after its check): what a Plan says of its groups must agree with
    what the verifier derives."""
    pods: dict[str, Pod] = {}
    for pod in snapshot.pods:
        pods.setdefault(pod.key, pod)
    gangs, member_of = _gangs(snapshot)
    placed = {p.pod: p.node for p in placements}
    return tuple(_claim_checks(claims, gangs, member_of, pods, placed))


def _created(given: Mapping[str, object], pod: Pod) -> str:
    """Why a Pod object given to place ``pod`` is not the one to create, or "": the checks
    here hold for the snapshot's pod, so a Pod asking for more, or elsewhere, is refused."""
    if pod.manifest is None:
        return "a Pod object for a pod the snapshot already has: kubectl create fails (AlreadyExists); bind it with a Binding"
    fields = [
        part for part in ("apiVersion", "kind", "metadata", "spec")
        if given.get(part) != pod.manifest.get(part)
    ]
    if fields:
        return f"the Pod to create is not the one its workload makes ({', '.join(fields)} {'differs' if len(fields) == 1 else 'differ'})"
    return ""


def _unschedulable(pod: Pod, gangs: Mapping[str, _Gang], member_of: Mapping[str, str]) -> str:
    """Why a pending pod may not be bound at all, or "" when it may."""
    if pod.deleting or any(not g.startswith(_KUEUE_GATES) for g in pod.scheduling_gates):
        why = "being deleted" if pod.deleting else f"scheduling gates {', '.join(pod.scheduling_gates)}"
        return f"the API server binds no such pod: {why}"
    group = gangs[member_of[pod.key]].pod_group if pod.key in member_of else None
    if group is not None and group.timed_out:
        return f"PodGroup {group.key} is in phase Timeout: Godel schedules it no more"
    return ""


def _claim_checks(
    claims: Iterable[Claim],
    gangs: Mapping[str, _Gang],
    member_of: Mapping[str, str],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    def form(gang: _Gang) -> str:
        return "kueue" if gang.pod_group is None else ""

    def group_of(key: str) -> tuple[str, str]:  # (form, key): a pod of no group is a group of one
        return (form(gangs[member_of[key]]), gangs[member_of[key]].key) if key in member_of else ("pod", key)

    counts: dict[tuple[str, str], int] = {}
    for key in placed:
        counts[group_of(key)] = counts.get(group_of(key), 0) + 1
    schedulable: dict[tuple[str, str], int] = {}  # its pending pods that may be bound
    for key, pod in pods.items():
        if _is_pending(pod) and not _unschedulable(pod, gangs, member_of):
            schedulable[group_of(key)] = schedulable.get(group_of(key), 0) + 1
    by_key = {(form(gang), gang.key): gang for gang in gangs.values()}
    found = []
    for claim in claims:
        group = claim.group
        # A Plan written by hand may not say which form a group takes: the one the snapshot has.
        known = [f for f in ("", "kueue", "pod") if (f, group) in by_key or (f == "pod" and group in pods and group not in member_of)]
        kind = claim.form if claim.form in known or not known else known[0]
        if kind not in known:
            found.append(Violation("outcome", group, "the plan names a group the snapshot does not have"))
            continue
        count = counts.get((kind, group), 0)
        if count != claim.scheduled or (not claim.placed and count):
            said = f"placed, {claim.scheduled} scheduled" if claim.placed else f"not placed, {claim.scheduled} scheduled"
            found.append(Violation("outcome", group, f"the plan says {said}; its placements place {count}"))
        elif claim.placed and not count:
            # With no placement, no other check looks at the group: a placed one must reach its minimums.
            short = _shortfalls(by_key[kind, group], set(placed)) if kind != "pod" else [("min-member", "a pending pod the plan does not place")]
            found.extend(Violation("outcome", group, f"the plan says placed, but {rule}: {text}") for rule, text in short)
        have = schedulable.get((kind, group), 0)
        if claim.pending is not None and claim.pending != have:
            found.append(
                Violation(
                    "outcome",
                    group,
                    f"the plan says {claim.pending} pending; the snapshot has {have} pending pods of it that may be bound",
                )
            )
    return found


def _capacity(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    """Running usage plus placed requests against allocatable, per node that receives pods.

    Like the scheduler's Fit filter, a resource is checked only when the placed pods request
    some of it: a node already over-committed by its running pods in memory still takes a
    pod that asks for no memory. ``pods`` is always requested, so always checked.
    """
    arriving, running_here = _sharing(snapshot, nodes, placed, lambda key: True)
    found: list[Violation] = []
    for node_name, node in nodes.items():
        if node_name not in arriving:
            continue
        demand: dict[str, int] = {}
        for key in arriving[node_name]:
            _add(demand, _pod_requests(pods[key]))
        running: dict[str, int] = {}
        for pod in running_here.get(node_name, ()):
            _add(running, _pod_requests(pod))
        for resource in sorted(demand):
            if demand[resource] <= 0:
                continue
            # A node that does not say how many pods it takes takes the kubelet's default maxPods.
            allocatable = node.allocatable.get(resource, _KUBELET_MAX_PODS if resource == "pods" else 0)
            total = running.get(resource, 0) + demand[resource]
            if total > allocatable:
                now, placed_here, after, room = format_alike(
                    resource, [running.get(resource, 0), demand[resource], total, allocatable]
                )
                found.append(
                    Violation(
                        "capacity",
                        node_name,
                        f"{resource}: running {now} + placed {placed_here} = {after} > allocatable {room}",
                    )
                )
    return found


def _sharing(
    snapshot: Snapshot, nodes: Mapping[str, Node], placed: Mapping[str, str], checked: Callable[[str], bool]
) -> tuple[dict[str, list[str]], dict[str, list[Pod]]]:
    """Per node, the placed pods ``checked`` picks, by key, and the running pods beside them."""
    arriving: dict[str, list[str]] = {}
    for key in sorted(placed):
        if placed[key] in nodes and checked(key):
            arriving.setdefault(placed[key], []).append(key)
    running: dict[str, list[Pod]] = {}
    if arriving:
        for pod in snapshot.pods:
            if _is_running(pod) and pod.node_name in arriving:
                running.setdefault(pod.node_name, []).append(pod)
    return arriving, running


def _host_ports(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    """kube-scheduler's NodePorts, pod by pod as it binds them: a placed pod's (protocol, port)
    may not be bound on its node already, by a running pod or one placed before it, on the
    same hostIP or where either is 0.0.0.0 (every address)."""
    arriving, running = _sharing(snapshot, nodes, placed, lambda key: bool(pods[key].host_ports))
    found: list[Violation] = []
    for node_name, keys in sorted(arriving.items()):
        # (ip, protocol, port, pod key) of the ports bound there
        held = [(p.ip or "0.0.0.0", p.protocol or "TCP", p.port, pod.key) for pod in running.get(node_name, ()) for p in pod.host_ports]
        for key in keys:
            for port in pods[key].host_ports:
                ip, protocol = port.ip or "0.0.0.0", port.protocol or "TCP"
                clash = next(
                    (
                        (other_ip, holder)
                        for other_ip, other_protocol, number, holder in held
                        if (other_protocol, number) == (protocol, port.port)
                        and (ip == other_ip or "0.0.0.0" in (ip, other_ip))
                    ),
                    None,
                )
                if clash is not None:
                    found.append(
                        Violation(
                            "host-port",
                            key,
                            f"hostPort {port.port}/{protocol} on {ip} is bound on node {node_name} already "
                            f"(on {clash[0]}, by pod {clash[1]})",
                        )
                    )
            held.extend((p.ip or "0.0.0.0", p.protocol or "TCP", p.port, key) for p in pods[key].host_ports)
    return found


def _on_node(term: PodAffinityTerm) -> bool:
    """The anti-affinity terms verify checks at kubernetes.io/hostname (the node itself), in
    the namespaces the term names or in all (``namespaceSelector: {}``); another
    namespaceSelector needs Namespace labels a snapshot lacks, and is warned about."""
    known = term.namespaces is not None or term.every_namespace
    return term.topology_key == _HOSTNAME and known and term.match_labels is not None


def _in_domains(term: PodAffinityTerm) -> bool:
    """The anti-affinity terms verify checks at a topologyKey wider than the node, in
    namespaces known as ``_on_node`` takes them."""
    known = term.namespaces is not None or term.every_namespace
    return term.topology_key != _HOSTNAME and known and term.match_labels is not None


def _checked(term: PodAffinityTerm) -> bool:
    """The anti-affinity terms verify holds placed pods to, at any topologyKey: those whose
    namespaces it can read."""
    return _on_node(term) or _in_domains(term)


def _term_selects(term: PodAffinityTerm, pod: Pod) -> bool:
    """metav1.LabelSelector over the term's namespaces; no labelSelector selects nothing."""
    if term.match_labels is None:
        return False
    if not term.every_namespace and (term.namespaces is None or pod.namespace not in term.namespaces):
        return False
    return all(pod.labels.get(k) == v for k, v in term.match_labels.items()) and all(
        _label_requirement_matches(r, pod.labels) for r in term.match_expressions
    )


def _anti_affinity(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    """kube-scheduler's InterPodAffinity for required anti-affinity, both ways, as the plan
    stands once bound: a placed pod may not share its node with a running pod its term
    selects, or whose term selects it (at a wider topologyKey, ``_domain_anti_affinity``);
    nor its node, or its domain of a term's key, with another placed pod (``_placed_apart``).
    By subject, so a pod's lines stand together."""
    if not any(pod.anti_affinity for pod in snapshot.pods):
        return []  # most snapshots: no pair to look at
    arriving, running = _sharing(snapshot, nodes, placed, lambda key: True)
    found = _domain_anti_affinity(snapshot, nodes, pods, placed)
    for node_name, keys in sorted(arriving.items()):
        here = [pods[key] for key in keys]
        if not any(p.anti_affinity for p in here) and not any(p.anti_affinity for p in running.get(node_name, ())):
            continue
        for pod in here:
            for other in running.get(node_name, ()):
                if any(_on_node(t) and _term_selects(t, other) for t in pod.anti_affinity):
                    found.append(Violation("pod-anti-affinity", pod.key, f"its anti-affinity selects pod {other.key}, running on node {node_name}"))
                elif any(_on_node(t) and _term_selects(t, pod) for t in other.anti_affinity):
                    found.append(Violation("pod-anti-affinity", pod.key, f"pod {other.key}, running on node {node_name}, has anti-affinity that selects it"))
    found += _placed_apart(nodes, pods, placed)
    return sorted(found, key=lambda v: v.subject)


def _placed_apart(nodes: Mapping[str, Node], pods: Mapping[str, Pod], placed: Mapping[str, str]) -> list[Violation]:
    """Required anti-affinity between two placed pods, at any topologyKey K: whichever is bound
    second, kube-scheduler refuses it (the incoming pod's terms against the bound pods, and the
    bound pods' terms against it), so a pair on nodes of one value of K (at
    kubernetes.io/hostname, one node) where a term of either selects the other breaks it, in
    any order of binding. A node without K is in no domain; a term selecting its own pod asks
    nothing of it. Each pair once, the later pod by key its subject. Placed pods are looked up
    per domain and label: pods kept one to a node or zone, as a valid plan has them, cost a
    lookup each, not a scan of the plan."""
    carriers = [
        key for key in sorted(placed)
        if key in pods and placed[key] in nodes and any(map(_checked, pods[key].anti_affinity))
    ]
    if not carriers:
        return []

    def value(node_name: str, k: str) -> str | None:
        return _domain_of(nodes, node_name, k)

    keys = sorted({t.topology_key for c in carriers for t in pods[c].anti_affinity if _checked(t)})
    within: dict[tuple[str, str], list[str]] = {}  # (K, value) -> the placed pods there, by key
    for key in sorted(placed):
        if key in pods and placed[key] in nodes:
            for k in keys:
                if (v := value(placed[key], k)) is not None:
                    within.setdefault((k, v), []).append(key)
    labelled: dict[tuple[str, str], dict[tuple[str, str], list[str]]] = {}  # per domain, by label, made when asked

    def selected(term: PodAffinityTerm, domain: tuple[str, str]) -> list[str]:
        there = within.get(domain, [])
        if term.match_labels and len(there) > 1:
            if domain not in labelled:
                index: dict[tuple[str, str], list[str]] = {}
                for key in there:
                    for item in pods[key].labels.items():
                        index.setdefault(item, []).append(key)
                labelled[domain] = index
            there = min((labelled[domain].get(item, []) for item in term.match_labels.items()), key=len)
        return [key for key in there if _term_selects(term, pods[key])]

    chosen: dict[tuple, list[str]] = {}  # (selector, K, value) -> the placed pods it selects there
    pairs: set[tuple[str, str]] = set()  # (later, earlier) by key
    for carrier in carriers:
        for term in filter(_checked, pods[carrier].anti_affinity):
            if (v := value(placed[carrier], term.topology_key)) is None:
                continue
            asked = (_selector(term), term.topology_key, v)
            if asked not in chosen:
                chosen[asked] = selected(term, (term.topology_key, v))
            for other in chosen[asked]:
                if other != carrier:
                    pairs.add((max(carrier, other), min(carrier, other)))
    return [_apart_violation(nodes, pods, placed, later, earlier) for later, earlier in sorted(pairs)]


def _apart_violation(nodes: Mapping[str, Node], pods: Mapping[str, Pod], placed: Mapping[str, str], key: str, other: str) -> Violation:
    """The violation of placed pod ``key`` beside placed pod ``other``, by the first term that
    breaks it: one both carry and match on the node (a gang kept one to a node), else the
    pod's own, else the other's."""
    pod, partner, node_name, beside = pods[key], pods[other], placed[key], placed[other]

    def value(node: str, k: str) -> str | None:
        return _domain_of(nodes, node, k)

    def breaks(term: PodAffinityTerm, selected: Pod) -> bool:
        if not _checked(term) or not _term_selects(term, selected):
            return False
        return (there := value(node_name, term.topology_key)) is not None and there == value(beside, term.topology_key)

    if node_name == beside and any(
        _on_node(t) and t in partner.anti_affinity and _term_selects(t, pod) and _term_selects(t, partner) for t in pod.anti_affinity
    ):
        said = f"placed on node {node_name} beside pod {other}, which carries its anti-affinity term and matches it"
    elif (term := next((t for t in pod.anti_affinity if breaks(t, partner)), None)) is not None:
        k = term.topology_key
        said = f"its anti-affinity selects pod {other}, placed on node {beside}" if k == _HOSTNAME else (
            f"its anti-affinity at {k} selects pod {other}, placed on node {beside}, "
            f"which shares {k}={value(beside, k)} with node {node_name}"
        )
    else:
        term = next(t for t in partner.anti_affinity if breaks(t, pod))
        k = term.topology_key
        said = f"pod {other}, placed on node {beside}, has anti-affinity that selects it" if k == _HOSTNAME else (
            f"pod {other}, placed on node {beside}, has anti-affinity at {k} that selects it, "
            f"and node {node_name} shares {k}={value(node_name, k)} with it"
        )
    terms = [(key, i) for i, t in enumerate(pod.anti_affinity) if breaks(t, partner)]
    terms += [(other, i) for i, t in enumerate(partner.anti_affinity) if breaks(t, pod)]
    return Violation("pod-anti-affinity", key, said, other, tuple(terms))


def _label(nodes: Mapping[str, Node], node_name: str | None, key: str) -> str | None:
    """The node's value of ``key``; None when the node, or its label, is not there."""
    node = nodes.get(node_name or "")
    return None if node is None else node.labels.get(key)


def _domain_anti_affinity(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    """kube-scheduler's InterPodAffinity at a topologyKey K wider than the node, against running
    pods: a placed pod may not be on a node whose K is that of the node of a running pod its
    term selects, or of one whose term selects it. A node without K shares no domain
    (satisfyPodAntiAffinity counts only the topology pairs a node has)."""
    keys = sorted({t.topology_key for p in snapshot.pods for t in p.anti_affinity if _in_domains(t)})
    if not keys:
        return []
    # The running pods per (K, value) of their node: a pod is checked against its domain only.
    here: dict[tuple[str, str], list[Pod]] = {}
    # Per (K, value), each term at K running pods there carry, with the first that carries it:
    # a Deployment's thousand replicas are one term.
    guarding: dict[tuple[str, str], dict[tuple, tuple[Pod, PodAffinityTerm]]] = {}
    for other in sorted((p for p in snapshot.pods if _is_running(p)), key=lambda p: p.key):
        for k in keys:
            if (value := _label(nodes, other.node_name, k)) is not None:
                here.setdefault((k, value), []).append(other)
                for t in other.anti_affinity:
                    if t.topology_key == k and _in_domains(t):
                        guarding.setdefault((k, value), {}).setdefault(_selector(t), (other, t))
    first: dict[tuple, Pod | None] = {}  # (term, K, value) -> the first running pod it selects there
    found: list[Violation] = []
    for key in sorted(placed):
        pod, node_name = pods.get(key), placed[key]
        if pod is None or node_name not in nodes:
            continue
        for term in (t for t in pod.anti_affinity if _in_domains(t)):
            if (value := _label(nodes, node_name, term.topology_key)) is None:
                continue
            asked = (_selector(term), term.topology_key, value)
            if asked not in first:
                first[asked] = next((o for o in here.get((term.topology_key, value), ()) if _term_selects(term, o)), None)
            if (clash := first[asked]) is not None:
                found.append(Violation(
                    "pod-anti-affinity", key,
                    f"its anti-affinity at {term.topology_key} selects pod {clash.key}, running on node {clash.node_name}, "
                    f"which shares {term.topology_key}={value} with node {node_name}",
                ))
        for k in keys:
            if (value := _label(nodes, node_name, k)) is None:
                continue
            selecting = [g for g, t in guarding.get((k, value), {}).values() if _term_selects(t, pod)]
            guard = min(selecting, key=lambda g: g.key, default=None)
            if guard is not None:
                found.append(Violation(
                    "pod-anti-affinity", key,
                    f"pod {guard.key}, running on node {guard.node_name}, has anti-affinity at {k} that selects it, "
                    f"and node {node_name} shares {k}={value} with it",
                ))
    return found


def _pod_affinity(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    """kube-scheduler's InterPodAffinity for a placed pod's required affinity terms
    (satisfyPodAffinity). A pod counts when it matches every term of the placed pod
    (podMatchesAllAffinityTerms), in each term's domain (its node's value of the term's key K;
    at kubernetes.io/hostname the node itself); a pod on a node without K counts in no domain.
    The placed pod's node must have each K. A plan's pods are bound at once, so it passes when
    some order of binding lets each pod through: when a running pod counts in some domain, a
    running or another placed pod that counts must be on a node with the same value of each K
    (that one bound first). When none does, another placed pod that counts may (bound first),
    or the pod matches its own terms (the first of a group affine to itself); else
    kube-scheduler never schedules it. Placed pods carrying the same terms and matching them,
    with no running pod counting and no other placed pod matching, are a group affine to itself
    alone: whichever is bound first, each next joins one bound before, so they share one domain
    of each K, and those outside the one most of them share break it. Where other placed pods
    match too (carrying other terms, or none) it stays lenient: a pod matching its own terms
    passes wherever it is, though no order may bind them all. Terms with a namespaceSelector
    other than ``{}`` need Namespace labels: not checked, and warned about by the planner."""
    asking = [key for key in sorted(placed) if key in pods and pods[key].affinity and placed[key] in nodes]
    if not asking:
        return []

    def value(node_name: str | None, key: str) -> str | None:
        return _domain_of(nodes, node_name, key)

    running = sorted((p for p in snapshot.pods if _is_running(p)), key=lambda p: p.key)
    labelled: dict[tuple[str, str], list[Pod]] = {}  # a term's matchLabels look its pods up, not a scan
    for other in running:
        for item in other.labels.items():
            labelled.setdefault(item, []).append(other)

    def candidates(terms: Sequence[PodAffinityTerm]) -> list[Pod]:
        for term in terms:
            if term.match_labels:
                return min((labelled.get(item, []) for item in term.match_labels.items()), key=len)
        return running

    counted: dict[frozenset, list[Pod]] = {}  # per set of terms, the running pods that match them all
    joined: dict[frozenset, list[str]] = {}  # per set of terms, the placed pods that match them all
    apart: dict[frozenset, list[Violation]] = {}  # per set of terms affine to itself alone, its pods split

    def placed_matching(chosen: frozenset, terms: Sequence[PodAffinityTerm]) -> list[str]:
        """Looked up only when no running pod will do: a scan of the plan per set of terms."""
        if chosen not in joined:
            joined[chosen] = [o for o in sorted(placed) if o in pods and all(_term_selects(t, pods[o]) for t in terms)]
        return joined[chosen]

    found: list[Violation] = []
    for key in asking:
        pod, node_name = pods[key], placed[key]
        terms = pod.affinity
        if any(t.namespaces is None and not t.every_namespace for t in terms):
            continue
        chosen = frozenset(_selector(t) for t in terms)  # what they select, in any order
        if chosen not in counted:
            counted[chosen] = [o for o in candidates(terms) if all(_term_selects(t, o) for t in terms)]
        there = [o for o in counted[chosen] if any(value(o.node_name, t.topology_key) is not None for t in terms)]
        keys = list(dict.fromkeys(t.topology_key for t in terms))  # terms at one key ask one thing of the node
        first_bound = not there and all(_term_selects(t, pod) for t in terms)  # then it needs only the keys
        if not there and not first_bound and not any(o != key for o in placed_matching(chosen, terms)):
            found.append(Violation(
                "pod-affinity", key,
                "its pod affinity selects no pod running on a node with its topologyKey, none placed, and not itself: "
                "kube-scheduler never schedules it",
            ))
            continue
        first = there[0] if there else None
        for k in keys:
            mine = value(node_name, k)
            if first is not None:
                asked = f"its pod affinity at {k} selects pod {first.key}, running on node {first.node_name}, "
            else:
                asked = f"its pod affinity at {k} selects no pod running on a node with {k}, "
            if mine is None:
                found.append(Violation("pod-affinity", key, f"{asked}and node {node_name} has no {k} label"))
            elif not first_bound and not any(value(o.node_name, k) == mine for o in there) and not any(
                o != key and value(placed[o], k) == mine for o in placed_matching(chosen, terms)
            ):
                found.append(Violation(
                    "pod-affinity", key,
                    f"{asked}but no pod it selects runs or is placed where node {node_name} is ({k}={mine})"
                    + ("" if first is not None else ", and it does not match its own terms"),
                ))
        if first_bound and (carried := _carried(terms)) not in apart:
            apart[carried] = _kept_together(carried, terms, placed_matching(chosen, terms), pods, placed, value)
    for split in apart.values():
        found.extend(split)
    return sorted(found, key=lambda v: v.subject)


def _carried(terms: Sequence[PodAffinityTerm]) -> frozenset:
    """A pod's terms, keys and all, in any order: pods listing them in another order ask the same."""
    return frozenset((_selector(t), t.topology_key) for t in terms)


def _kept_together(
    carried: frozenset,
    terms: Sequence[PodAffinityTerm],
    matching: Sequence[str],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
    value: Callable[[str | None, str], str | None],
) -> list[Violation]:
    """The one-domain rule for placed pods affine to themselves alone (``matching``, when each
    carries the terms ``carried``): per key, those outside the domain most of them share (the first value
    on a tie), pods on nodes without the key left to the check of the key itself."""
    if len(matching) < 2 or any(_carried(pods[o].affinity) != carried for o in matching):
        return []
    found: list[Violation] = []
    for k in dict.fromkeys(t.topology_key for t in terms):
        where = {o: v for o in matching if (v := value(placed[o], k)) is not None}
        shares = Counter(where.values())
        if len(shares) < 2:
            continue
        kept = min(shares, key=lambda v: (-shares[v], v))
        shown = ", ".join(f"{v} ({shares[v]})" for v in sorted(shares))
        found.extend(
            Violation(
                "pod-affinity", o,
                f"its pod affinity at {k} selects no running pod, only the {len(matching)} placed pods carrying its "
                f"terms, which kube-scheduler binds into one {k} (each next joins one bound before), not "
                f"{len(shares)} ({shown}): node {placed[o]} has {k}={v}, not {kept}",
            )
            for o, v in where.items()
            if v != kept
        )
    return found


def _topology_spread(
    snapshot: Snapshot,
    nodes: Mapping[str, Node],
    pods: Mapping[str, Pod],
    placed: Mapping[str, str],
) -> list[Violation]:
    """kube-scheduler's PodTopologySpread for every DoNotSchedule constraint a placed pod
    carries, at any topologyKey, read as the state once the plan is bound. The pod's node must
    have the constraint's key (kube-scheduler's "missing required label"; every node has
    kubernetes.io/hostname, the node itself). Its domain, the nodes sharing its value of the
    key, may hold at most maxSkew more of the pods the selector matches (running and not
    terminating, or placed) than the fewest over the eligible domains (0 when there are fewer
    than minDomains). As PreFilter counts them, eligible nodes have every key of the pod's
    DoNotSchedule constraints and pass the constraint's node inclusion policies for the pod:
    under nodeAffinityPolicy Honor, its nodeSelector and required node affinity; under
    nodeTaintsPolicy Honor, its tolerations of NoSchedule and NoExecute taints. Only matching
    pods on eligible nodes count, and a domain of eligible nodes none of them run on is one
    with 0. Checked whether or not the planner models the constraint: the pods it warned
    about may break it, and verify says so."""
    asking = [key for key in sorted(placed) if key in pods and placed[key] in nodes and pods[key].spread]
    if not asking:
        return []
    where = [(p, p.node_name or "") for p in snapshot.pods if _is_running(p) and not p.deleting]
    where += [(pods[key], node_name) for key, node_name in placed.items() if key in pods]
    # A selector's matchLabels look its pods up, not a scan: a thousand PodGroups with a constraint each.
    where_by_label: dict[tuple[str, str], list[tuple[Pod, str]]] = {}
    for p, n in where:
        for item in p.labels.items():
            where_by_label.setdefault(item, []).append((p, n))

    def matching(selector: PodAffinityTerm) -> Counter[str]:
        if selector.match_labels is None:
            return Counter()  # no labelSelector matches no pod
        every = min((where_by_label.get(item, []) for item in selector.match_labels.items()), key=len, default=where)
        return Counter(n for p, n in every if n in nodes and _term_selects(selector, p))

    counts: dict[tuple, Counter[str]] = {}  # selector (its namespace with it) -> matching pods per node
    by_value: dict[str, dict[str, list[Node]]] = {}  # key -> the nodes per value of it
    # Constraint, the pod's node filters and its keys -> matching pods per eligible domain, and the fewest.
    domains: dict[tuple, tuple[Mapping[str, int], int]] = {}
    found: list[Violation] = []
    for key in asking:
        pod, node_name = pods[key], placed[key]
        keys = tuple(sorted({c.selector.topology_key for c in pod.spread}))
        filters = (tuple(sorted(pod.node_selector.items())), pod.node_affinity, pod.tolerations, keys)
        for asked, c in {_spread_asked(c): c for c in pod.spread}.items():  # one twice asks one thing
            k = c.selector.topology_key
            mine = _node_domain(nodes[node_name], k)
            if mine is None:
                found.append(Violation(
                    "topology-spread", key,
                    f"its topologySpreadConstraint at {k} (maxSkew {c.max_skew}) needs the key, and node {node_name} "
                    f"has no {k} label (kube-scheduler: missing required label)",
                    terms=tuple((key, i) for i, other in enumerate(pod.spread) if _spread_asked(other) == asked),
                ))
                continue
            if asked[0] not in counts:
                counts[asked[0]] = matching(c.selector)
            if k not in by_value:
                by_value[k] = {}
                for other in nodes.values():
                    if (value := _node_domain(other, k)) is not None:
                        by_value[k].setdefault(value, []).append(other)
            if (asked, filters) not in domains:
                domains[asked, filters] = _spread_domains(c, pod, keys, nodes, counts[asked[0]], by_value[k])
            held, fewest = domains[asked, filters]
            if held.get(mine, 0) > c.max_skew + fewest:
                where_it = f"on node {node_name}" if k == _HOSTNAME else f"in {k}={mine}, where node {node_name} is"
                eligible = "on an eligible node" if k == _HOSTNAME else "in an eligible domain"
                found.append(Violation(
                    "topology-spread", key,
                    f"its topologySpreadConstraint at {k} (maxSkew {c.max_skew}) counts {held.get(mine, 0)} "
                    f"matching pods {where_it}, over maxSkew plus the fewest {eligible} ({fewest})",
                    terms=tuple((key, i) for i, other in enumerate(pod.spread) if _spread_asked(other) == asked),
                ))
    return found


def _spread_asked(c: TopologySpreadConstraint) -> tuple:
    return _selector(c.selector), c.selector.topology_key, c.max_skew, c.min_domains, c.node_affinity_policy, c.node_taints_policy


def _node_domain(node: Node, key: str) -> str | None:
    """The node's domain of ``key``: at kubernetes.io/hostname the node itself, which every node has."""
    return node.name if key == _HOSTNAME else node.labels.get(key)


def _domain_of(nodes: Mapping[str, Node], node_name: str | None, key: str) -> str | None:
    """``_node_domain`` of a node by name; None when no such node is known."""
    node = nodes.get(node_name or "")
    return None if node is None else _node_domain(node, key)


def _spread_domains(
    c: TopologySpreadConstraint,
    pod: Pod,
    keys: Sequence[str],
    nodes: Mapping[str, Node],
    count: Mapping[str, int],
    domains: Mapping[str, Sequence[Node]],
) -> tuple[dict[str, int], int]:
    """The matching pods per domain of the constraint's key over the nodes eligible for ``pod``
    (those with every key of ``keys``, the pod's constraints', that its policies let in), and
    the fewest over those domains (0 when fewer than minDomains). ``domains``: the nodes per
    value of the key. Only the nodes matching pods are on are summed, and a domain none of them
    is in needs one eligible node to make the fewest 0: the scan ends there, and when every
    domain holds some, it looks at no node."""

    def eligible(node: Node) -> bool:
        return all(_node_domain(node, k) is not None for k in keys) and _spread_eligible(c, pod, node)

    key = c.selector.topology_key
    held: dict[str, int] = {}
    for name, matched in count.items():
        if (value := _node_domain(nodes[name], key)) is not None and eligible(nodes[name]):
            held[value] = held.get(value, 0) + matched
    if any(value not in held and any(eligible(n) for n in members) for value, members in domains.items()):
        return held, 0
    return held, 0 if len(held) < c.min_domains or not held else min(held.values())


def _spread_eligible(constraint: TopologySpreadConstraint, pod: Pod, node: Node) -> bool:
    if constraint.node_affinity_policy == "Honor":
        if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
            return False
        if pod.node_affinity is not None and not _selector_matches(pod.node_affinity, node):
            return False
    if constraint.node_taints_policy == "Honor":
        blocking = (t for t in node.taints if t.effect in _BLOCKING_EFFECTS)
        return all(any(_tolerates(t, taint) for t in pod.tolerations) for taint in blocking)
    return True


def _selector(term: PodAffinityTerm) -> tuple:
    labels = None if term.match_labels is None else tuple(sorted(term.match_labels.items()))
    return labels, term.match_expressions, term.namespaces, term.every_namespace


def _group_checks(
    snapshot: Snapshot, gangs: Mapping[str, _Gang], placed: set[str]
) -> list[Violation]:
    """All-or-nothing per gang, then per JobGroup for the members that received nothing."""
    found: list[Violation] = []
    has_placed = {key for key, gang in gangs.items() if any(p.key in placed for p in gang.members)}
    for key, gang in gangs.items():
        if key in has_placed:
            found.extend(Violation(r, gang.key, text) for r, text in _shortfalls(gang, placed))

    job_groups: dict[tuple[str, str, str], list[str]] = {}
    for group in snapshot.pod_groups:
        if group.sub_group and gangs[group.key].pod_group is group:
            members = job_groups.setdefault((group.namespace, group.queue, group.sub_group), [])
            if group.key not in members:
                members.append(group.key)
    for (namespace, queue, sub_group), members in job_groups.items():
        placed_members = [m for m in members if m in has_placed]
        if not placed_members:
            continue
        where = f"JobGroup {namespace}/{sub_group}" + (f" (queue {queue})" if queue else "")
        for member in members:
            if member in has_placed:
                continue
            for rule, message in _shortfalls(gangs[member], placed):
                found.append(
                    Violation(
                        "job-group",
                        member,
                        f"{where} places {', '.join(placed_members)} but this member has no "
                        f"placed pods and falls short ({rule}: {message})",
                    )
                )
    return found


def _domain(node: Node, key: str, levels: Sequence[str]) -> tuple[str, ...] | None:
    """The path of values identifying ``node``'s domain at level ``key``; None when outside.

    A level's domain is named by its values from the top (``tor=t1`` under two miniPods is two
    domains); a key that is not one of ``levels`` stands alone, a path of one value. The node
    is its own domain at ``kubernetes.io/hostname``, named by its name (its label may differ).
    """
    if key == _HOSTNAME:
        return (node.name,)
    keys = tuple(levels[: levels.index(key) + 1]) if key in levels else (key,)
    if any(k not in node.labels for k in keys):
        return None
    return tuple(node.labels[k] for k in keys)


def _domain_counts(nodes: Sequence[Node], levels: Sequence[str]) -> dict[str, int]:
    """How many of ``_domain``'s paths ``nodes`` take at each level, a path named by its
    parent's number and its own value: building every path whole is O(levels²) a node (100
    label keys, 8 M steps)."""
    numbers: dict[tuple[int, str], int] = {}
    at: list[int | None] = [-1] * len(nodes)  # each node's path so far; None once a key is missing
    counts: dict[str, int] = {}
    for key in levels:
        taken: set[int] = set()
        for i, node in enumerate(nodes):
            parent = at[i]
            if parent is None:
                continue
            value = node.labels.get(key)
            if value is None:
                at[i] = None
                continue
            at[i] = number = numbers.setdefault((parent, value), len(numbers))
            taken.add(number)
        counts[key] = len(taken)
    return counts


def _named_terms(gang: _Gang) -> tuple[list[str], list[str]]:
    """Required and preferred keys a gang names: Godel terms and Kueue pod annotations."""
    godel = gang.pod_group
    kueue_required, kueue_preferred = _kueue_terms(gang)
    required = [*(godel.required_topology if godel is not None else ()), *kueue_required]
    preferred = [*(godel.preferred_topology if godel is not None else ()), *kueue_preferred]
    return list(dict.fromkeys(required)), list(dict.fromkeys(preferred))


def _kueue_terms(gang: _Gang) -> tuple[list[str], list[str]]:
    """The keys its members' Kueue annotations ask for, required and preferred, apart: Kueue's
    own admission rule (a level some Topology lists) applies to these alone."""
    required = [key for pod in gang.members if (key := pod.annotations.get(_KUEUE_REQUIRED, ""))]
    preferred = [key for pod in gang.members if (key := pod.annotations.get(_KUEUE_PREFERRED, ""))]
    return required, preferred


def _unconstrained(gang: _Gang) -> set[bool]:
    """Kueue's unconstrained topology requests of the members with no required or preferred
    one: true keeps the PodSet on its Topology's nodes; anything else is a request for TAS at
    no level, which Kueue admits on no flavor."""
    return {
        pod.annotations[_KUEUE_UNCONSTRAINED] in _GO_TRUE
        for pod in gang.members
        if _KUEUE_UNCONSTRAINED in pod.annotations
        and _KUEUE_REQUIRED not in pod.annotations and _KUEUE_PREFERRED not in pod.annotations
    }


def _binding(keys: Sequence[str], levels: Sequence[str]) -> list[str]:
    """The keys that name a level. A term that names none binds nothing, as the planner warns
    (with no levels at all, ``--levels ''``, that is every term but kubernetes.io/hostname)."""
    return [k for k in keys if k in levels or k == _HOSTNAME]


def _unheld(required: Sequence[str], levels: Sequence[str], snapshot: Snapshot, carried: set[str]) -> list[str]:
    """Why each required term naming no level cannot be held at all: with a Topology object,
    Kueue admits no workload asking for a level it lacks; a label no node carries has no
    domain. A key nodes carry that --levels left out binds nothing (a what-if)."""
    found = []
    for key in required:
        if key in levels or key == _HOSTNAME:
            continue
        if key not in carried:
            found.append(f"required {key}: no node carries that label, so the term cannot be held")
        elif snapshot.topologies:
            found.append(f"required {key}: not a level of the snapshot's Topology ({', '.join(levels) or 'none'}), so the term cannot be held")
    return found


def _required_message(
    key: str, located: Sequence[tuple[Pod, Node]], levels: Sequence[str]
) -> str | None:
    """Why the members do not share one domain at ``key``, or None when they do."""
    pods: dict[tuple[str, ...], int] = {}
    running: dict[tuple[str, ...] | None, int] = {}
    outside = 0
    for pod, node in located:
        path = _domain(node, key, levels)
        if path is None:
            outside += 1
        else:
            pods[path] = pods.get(path, 0) + 1
        if _is_running(pod):
            running[path] = running.get(path, 0) + 1
    if len(pods) <= 1 and not outside:
        return None

    def part(name: str, path: tuple[str, ...] | None, count: int) -> str:
        text = f"{name}: {plural(count, 'pod')}"
        return text + (f" ({running[path]} running)" if running.get(path) else "")

    parts = [part("/".join(path), path, pods[path]) for path in sorted(pods)]
    if outside:
        parts.append(part(f"outside (no {key} label)", None, outside))
    text = f"required {key}: members span {plural(len(pods), 'domain')}"
    if outside:
        verb = "lies" if outside == 1 else "lie"
        text += f" and {plural(outside, 'pod')} {verb} outside the topology"
    return f"{text} ({', '.join(parts)})"


def _topology_checks(
    snapshot: Snapshot,
    gangs: Mapping[str, _Gang],
    member_of: Mapping[str, str],
    nodes: Mapping[str, Node],
    placed: Mapping[str, str],
    levels: tuple[str, ...],
) -> tuple[list[Violation], dict[str, dict[str, int]]]:
    """Required terms, outside-topology and spans, for every group with a placed pod.

    The members that count are the running ones and the placed ones, on nodes of the
    snapshot; a running member on a node the snapshot lacks breaks a required term, whose
    domain then cannot be checked. A pending pod in no gang is a group of one: it is checked
    (a Kueue annotation may give it a term) but has no spans entry.
    """
    checked: list[tuple[_Gang, bool]] = [
        (gang, True) for gang in gangs.values() if any(p.key in placed for p in gang.members)
    ]
    for pod in snapshot.pods:
        if pod.key in placed and pod.key not in member_of:
            checked.append((_Gang(pod.key, 1, None, [pod]), False))
    found: list[Violation] = []
    spans: dict[str, dict[str, int]] = {}
    carried = {key for node in snapshot.nodes for key in node.labels}
    listed = {level for topology in snapshot.topologies for level in topology.levels}
    for gang, is_gang in checked:
        named_required, named_preferred = _named_terms(gang)
        unheld = _unheld(named_required, levels, snapshot, carried)
        found.extend(Violation("required-topology", gang.key, why) for why in unheld)
        located: list[tuple[Pod, Node]] = []
        unknown: list[Pod] = []  # running on a node the snapshot lacks: in no domain we can name
        for pod in gang.members:
            where = placed.get(pod.key) or (pod.node_name if _is_running(pod) else None)
            if where is not None and where in nodes:
                located.append((pod, nodes[where]))
            elif where is not None and pod.key not in placed:
                unknown.append(pod)
        required, preferred = _binding(named_required, levels), _binding(named_preferred, levels)
        unknown.sort(key=lambda pod: pod.name)  # the same member named whatever the dump's order
        for key in required:
            if unknown:
                found.append(
                    Violation(
                        "required-topology",
                        gang.key,
                        f"required {key}: running member {unknown[0].key} is on node {unknown[0].node_name}, "
                        "which is not in the snapshot, so its domain is unknown",
                    )
                )
                continue
            message = _required_message(key, located, levels)
            if message is not None:
                found.append(Violation("required-topology", gang.key, message))
        kueue_asked = {key for keys in _kueue_terms(gang) for key in keys}
        if not unheld and snapshot.topologies and not any(_is_running(p) for p in gang.members) and (refused := sorted(kueue_asked - listed)):
            # Preferred keys too, and kubernetes.io/hostname: Kueue's TAS finds no level for them.
            found.append(Violation(
                "required-topology", gang.key,
                f"Kueue admits no workload asking for {refused[0]!r}: not a level of any Topology",
            ))
        asked = _unconstrained(gang)
        unconstrained = True in asked
        if False in asked and snapshot.topologies and not any(_is_running(p) for p in gang.members):
            found.append(Violation(
                "required-topology", gang.key,
                f"{_KUEUE_UNCONSTRAINED} is not true and names no level: Kueue admits no such workload",
            ))
        if (required or preferred or unconstrained) and levels:
            terms = [f"required {k}" for k in required] + [f"preferred {k}" for k in preferred]
            terms += ["Kueue's unconstrained topology"] if unconstrained else []
            for pod, node in located:
                if pod.key not in placed:
                    continue
                missing = [k for k in levels if k not in node.labels]
                if missing:
                    found.append(
                        Violation(
                            "outside-topology",
                            pod.key,
                            f"node {node.name} is outside the topology (no label "
                            f"{', '.join(missing)}) but group {gang.key} has topology terms "
                            f"({', '.join(terms)})",
                        )
                    )
        if is_gang:
            counts = _domain_counts([node for _, node in located], levels)
            counts[_NODE_LEVEL] = len({node.name for _, node in located})
            spans.setdefault(gang.key, counts)
    return found, spans

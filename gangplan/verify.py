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
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from gangplan.model import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodGroup,
    PodPhase,
    Snapshot,
    Taint,
    Toleration,
)
from gangplan.plan import Placement
from gangplan.quantity import MILLI_RESOURCES, format_amount

__all__ = [
    "Violation",
    "VerificationSummary",
    "Verification",
    "verify",
    "format_verification",
]

_GROUP_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
_GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
_GODEL_GROUP = "godel.bytedance.com/pod-group-name"
_KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
_KUEUE_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
_VOLCANO_TASK = "volcano.sh/task-spec"

_FINISHED = (PodPhase.SUCCEEDED, PodPhase.FAILED)
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_INT64 = re.compile(r"[+-]?[0-9]+")
_COUNT = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule; ``subject`` is a pod key, a node name or a group key."""

    rule: str
    subject: str
    message: str


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


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        total[resource] = total.get(resource, 0) + amount


def _pod_requests(pod: Pod) -> dict[str, int]:
    """Kubernetes' PodRequests: sidecars run beside the containers, init containers before.

    A non-sidecar init container runs next to the sidecars started before it; a sidecar's
    own start-up peak is the sum of the sidecars up to it. The pod needs the larger of the
    long-running total and every such peak, resource by resource, plus overhead; and one
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
    _add(effective, pod.overhead)
    effective["pods"] = 1
    return effective


def _figure(resource: str, amount: int) -> str:
    """Millicores stay millicores, so figures compared in one message share a unit."""
    return f"{amount}m" if resource in MILLI_RESOURCES else format_amount(resource, amount)


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
        if name and _COUNT.fullmatch(total):
            key = f"kueue:{pod.namespace}/{name}"
            gang = kueue.setdefault(key, _Gang(f"{pod.namespace}/{name}", 0))
            gang.min_member = max(gang.min_member, int(total))
            gang.members.append(pod)
            member_of[pod.key] = key
    gangs.update(kueue)
    return gangs, member_of


def _role(pod: Pod) -> str:
    return pod.labels.get(_VOLCANO_TASK) or pod.annotations.get(_VOLCANO_TASK, "")


def _shortfalls(gang: _Gang, placed: set[str]) -> list[tuple[str, str]]:
    """(rule, message) for each minimum the gang misses with its running + placed members."""
    counted = [p for p in gang.members if _is_running(p) or p.key in placed]
    running = sum(1 for p in counted if _is_running(p))
    found: list[tuple[str, str]] = []
    if len(counted) < gang.min_member:
        found.append(
            (
                "min-member",
                f"{len(counted)} of minMember {gang.min_member} "
                f"(running {running} + placed {len(counted) - running})",
            )
        )
    group = gang.pod_group
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
                found.append(
                    (
                        "min-resources",
                        f"{resource}: running + placed members request "
                        f"{_figure(resource, have)} < minResources "
                        f"{_figure(resource, need)}",
                    )
                )
    for task in sorted(group.min_task_member):
        need = group.min_task_member[task]
        have = sum(1 for p in counted if _role(p) == task)
        if have < need:
            found.append(
                (
                    "min-task-member",
                    f"task {task}: {have} running + placed < minTaskMember {need}",
                )
            )
    return found


def verify(snapshot: Snapshot, placements: Sequence[Placement]) -> Verification:
    """Check ``placements`` against ``snapshot``; the result lists every rule they break.

    A placement whose pod is unknown, not pending or already placed is reported and then left
    out of every other check, so one mistake is reported once. A pod placed on an unknown node
    still counts for its group (the plan means it to run) but for no node's capacity.
    """
    violations: list[Violation] = []
    pods: dict[str, Pod] = {}
    for pod in snapshot.pods:
        pods.setdefault(pod.key, pod)
    nodes: dict[str, Node] = {}
    for node in snapshot.nodes:
        nodes.setdefault(node.name, node)
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
    placed_keys = set(placed)
    violations.extend(_group_checks(snapshot, gangs, placed_keys))

    summary = VerificationSummary(
        placements=len(placements),
        pods_placed=len(placed),
        groups_with_placements=len({member_of.get(key, f"pod:{key}") for key in placed_keys}),
        nodes_used=len({n for n in placed.values() if n in nodes}),
    )
    return Verification(tuple(violations), summary)


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
    arriving: dict[str, dict[str, int]] = {}
    for key, node_name in placed.items():
        if node_name in nodes:
            _add(arriving.setdefault(node_name, {}), _pod_requests(pods[key]))
    if not arriving:
        return []
    used: dict[str, dict[str, int]] = {}
    for pod in snapshot.pods:
        if _is_running(pod) and pod.node_name in arriving:
            _add(used.setdefault(pod.node_name, {}), _pod_requests(pod))
    found: list[Violation] = []
    for node_name, node in nodes.items():
        demand = arriving.get(node_name)
        if demand is None:
            continue
        running = used.get(node_name, {})
        for resource in sorted(demand):
            if demand[resource] <= 0:
                continue
            allocatable = node.allocatable.get(resource, 0)
            total = running.get(resource, 0) + demand[resource]
            if total > allocatable:
                found.append(
                    Violation(
                        "capacity",
                        node_name,
                        f"{resource}: running {_figure(resource, running.get(resource, 0))}"
                        f" + placed {_figure(resource, demand[resource])}"
                        f" = {_figure(resource, total)}"
                        f" > allocatable {_figure(resource, allocatable)}",
                    )
                )
    return found


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

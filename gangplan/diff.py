"""What a plan changes (DESIGN section 4, ``diff``): snapshot -> plan, or plan -> plan.

Pure: data in, data out. A ``PlanDiff`` lists pods placed, dropped and moved, groups newly
placed or no longer placeable, and per-domain utilisation before -> after, as integers
(cpu millicores, memory bytes, GPU units) so that renderers compute the percentages.
``unified_lines`` is the one text form, as ``(kind, text)`` pairs for a caller to colour.

Two modes:

- ``diff_snapshot``: applying the plan to the snapshot it was made from. "before" is the
  running pods' requests; "after" adds the requests of the pods the plan places.
- ``diff_plans``: plan A against plan B. Utilisation (only with a snapshot) is the running
  pods plus A's placements against the running pods plus B's.

Topology levels follow one rule whichever plan is given first (``diff_levels``): the
snapshot's Topology object, else ``levels`` (``--levels``), else the levels every plan that
records some agrees on, else those gangplan infers from the snapshot, as ``plan`` does.

Everything is sorted (pods and groups by namespace/name, domains by level then path), so
equal inputs give equal output. Problems found on the way (a plan made from another
snapshot) are returned in ``warnings`` for the caller to show on stderr.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Any, Container, Iterable, Iterator, Mapping, Sequence

from .model import IMPLICIT_KINDS, Node, Pod, PodGroupAPI, Snapshot
from .plan import API_VERSION, GroupOutcome, Placement, Plan, group_id as _gang_id, shared_keys as _shared
from .quantity import describe_amount, percent_apart, plural
from .semantics import (
    Gang,
    blocked_by,
    consumes_capacity,
    group_pods,
    host_port_clash,
    is_pending,
    node_allocatable,
    pod_requests,
    repels,
    repels_in_domain,
    succeeded_count,
    untolerated_taint,
    wider_keys,
)
from .topology import DEFAULT_GPU_RESOURCE, build_tree, resolve_levels
from .verify import MINIMUM_RULES, inter_pod_violations, verify

__all__ = [
    "DomainUse",
    "GroupChange",
    "PlanDiff",
    "PodChange",
    "ResourceUse",
    "diff_levels",
    "diff_plans",
    "diff_snapshot",
]

KINDS = ("header", "add", "remove", "change", "context")
TOTAL = "total"
# The verifier's rules about a group as a whole: what keeps a plan's group from starting here.
_GROUP_RULES = MINIMUM_RULES | {"required-topology", "kueue-tas-room"}
_BARE = IMPLICIT_KINDS[PodGroupAPI.POD.value]  # a pod of no group's kind


# ---------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class PodChange:
    """One pod whose node differs: placed (old None), dropped (new None) or moved."""

    pod: str  # namespace/name
    group: str  # namespace/name of its PodGroup, "" when unknown
    old: str | None  # node before (snapshot: always None; plans: node in A)
    new: str | None  # node after (the plan's node; plans: node in B)
    stale: str = ""  # snapshot mode: why the snapshot cannot take this placement ("already bound to n2")
    alone: bool = False  # a pod of no group (a group of its own, named as the pod): its lines name no group

    @property
    def change(self) -> str:
        if self.stale:
            return "stale"
        if self.old is None:
            return "placed"
        if self.new is None:
            return "dropped"
        return "moved"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "group": self.group,
            "change": self.change,
            "from": self.old,
            "to": self.new,
            **({"stale": self.stale} if self.stale else {}),
        }


@dataclass(frozen=True, slots=True)
class GroupChange:
    """One group whose fate the diff reports.

    ``change`` is one of:

    - ``placed``: snapshot mode, a group the plan places that was not running to minMember;
      plans mode, placeable in B and not in A.
    - ``unplaced``: plans mode only, placeable in A and not in B (``reason`` from B).
    - ``pending``: snapshot mode only, a group the plan leaves unplaced (``reason`` from the
      plan). Informational: it changes nothing, so it does not make the diff non-empty.
    - ``grown``: snapshot mode only, a group already running to minMember that the plan gives
      more pods. Its pods are in ``pods``; shown as context.
    - ``stale``: snapshot mode only, a group the plan places that this snapshot no longer lets
      it place: none of its placements apply (its pods gone) and it does not run to minMember,
      or those that do apply, with the members the snapshot runs, miss a minimum of the
      snapshot's PodGroup as the verifier judges it; or a JobGroup member short here (one the
      plan never saw included), and with it the JobGroup's others. The plan was made from
      another snapshot.

    Counts are the newer side's (the plan; B, or A when B lacks the group); in snapshot mode,
    for a group some of whose placements are stale, the snapshot's members and the
    placements that apply.
    """

    key: str
    job_group: str
    change: str
    min_member: int
    running: int
    scheduled: int
    reason: str = ""
    succeeded: int = 0
    counts_succeeded: bool = True  # GroupOutcome.counts_succeeded
    kind: str = ""  # "pod" or "Kueue pod group" where a PodGroup goes by the same name, else ""

    @property
    def label(self) -> str:
        return f"{self.key} ({self.kind})" if self.kind else self.key

    @property
    def members(self) -> int:
        """Members counting toward minMember once the plan is applied: running, succeeded
        where they count, placed."""
        return self.running + (self.succeeded if self.counts_succeeded else 0) + self.scheduled

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.key,
            "jobGroup": self.job_group,
            "change": self.change,
            "minMember": self.min_member,
            "running": self.running,
            **({"succeeded": self.succeeded} if self.succeeded else {}),
            "scheduled": self.scheduled,
            "reason": self.reason,
            **({"kind": self.kind} if self.kind else {}),
        }


@dataclass(frozen=True, slots=True)
class ResourceUse:
    """One resource of one domain: requests used before and after, over allocatable."""

    resource: str
    allocatable: int
    before: int
    after: int

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, slots=True)
class DomainUse:
    """One domain's utilisation; ``level`` "" and ``path`` () is the cluster-wide total."""

    level: str
    path: tuple[str, ...]
    resources: tuple[ResourceUse, ...]  # cpu, memory, then the GPU resource

    @property
    def is_total(self) -> bool:
        return not self.level

    @property
    def name(self) -> str:
        return "/".join(self.path)

    @property
    def label(self) -> str:
        """``level=path``, as the unified rendering shows it; ``total`` for the cluster."""
        return TOTAL if self.is_total else f"{self.level}={self.name}"

    @property
    def changed(self) -> bool:
        return any(r.changed for r in self.resources)

    def resource(self, name: str) -> ResourceUse:
        for r in self.resources:
            if r.resource == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "domain": self.name,
            "path": list(self.path),
            "changed": self.changed,
            "resources": {
                r.resource: {"allocatable": r.allocatable, "before": r.before, "after": r.after}
                for r in self.resources
            },
        }


@dataclass(frozen=True, slots=True)
class PlanDiff:
    mode: str  # "snapshot" | "plans"
    old_label: str
    new_label: str
    pods: tuple[PodChange, ...]  # sorted by namespace, name
    groups: tuple[GroupChange, ...]  # sorted by namespace, name
    levels: tuple[str, ...]  # topology levels, largest first
    gpu_resource: str
    utilisation: tuple[DomainUse, ...] = ()  # total first, then level by level in path order
    warnings: tuple[str, ...] = ()

    # -- views

    @property
    def placed(self) -> tuple[PodChange, ...]:
        return tuple(p for p in self.pods if p.change == "placed")

    @property
    def dropped(self) -> tuple[PodChange, ...]:
        return tuple(p for p in self.pods if p.change == "dropped")

    @property
    def moved(self) -> tuple[PodChange, ...]:
        return tuple(p for p in self.pods if p.change == "moved")

    @property
    def stale(self) -> tuple[PodChange, ...]:
        return tuple(p for p in self.pods if p.change == "stale")

    def groups_with(self, change: str) -> tuple[GroupChange, ...]:
        return tuple(g for g in self.groups if g.change == change)

    @property
    def total(self) -> DomainUse | None:
        return next((d for d in self.utilisation if d.is_total), None)

    @property
    def changed_domains(self) -> tuple[DomainUse, ...]:
        return tuple(d for d in self.utilisation if d.changed)

    @property
    def empty(self) -> bool:
        """Nothing differs: no pod placed, dropped or moved, no group newly (un)placeable,
        no utilisation changed. Groups a plan leaves pending (snapshot mode) change nothing
        and do not count."""
        return (
            not self.pods
            and not any(g.change in ("placed", "unplaced", "stale") for g in self.groups)
            and not self.changed_domains
        )

    # -- renderings

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, deterministic: lists in the dataclass's (sorted) order."""
        return {
            "apiVersion": API_VERSION,
            "kind": "PlanDiff",
            "mode": self.mode,
            "old": self.old_label,
            "new": self.new_label,
            "empty": self.empty,
            "levels": list(self.levels),
            "gpuResource": self.gpu_resource,
            "pods": [p.to_dict() for p in self.pods],
            "groups": [g.to_dict() for g in self.groups],
            "utilisation": [d.to_dict() for d in self.utilisation],
            "warnings": list(self.warnings),
        }

    def unified_lines(self) -> list[tuple[str, str]]:
        """(kind, text) pairs, kind one of ``KINDS``; [] when there is nothing to show."""
        body: list[tuple[str, str]] = []

        pods: list[tuple[str, str]] = []
        for p in self.pods:
            group = f" (group {p.group})" if p.group and not p.alone else ""
            if p.change == "placed":
                pods.append(("add", f"+ pod {p.pod} -> {p.new}{group}"))
            elif p.change == "stale":
                pods.append(("remove", f"! pod {p.pod} -> {p.new}{group}: not placed, {p.stale}"))
            elif p.change == "dropped":
                also = f", group {p.group}" if p.group and not p.alone else ""
                pods.append(("remove", f"- pod {p.pod} (was on {p.old}{also})"))
            else:
                pods.append(("change", f"~ pod {p.pod} {p.old} -> {p.new}{group}"))
        if pods:
            body += [("header", f"@@ pods: {_pod_summary(self)} @@"), *pods]

        groups: list[tuple[str, str]] = []
        for g in self.groups:
            count = f"({g.members}/{g.min_member})"
            if g.change == "placed":
                groups.append(("add", f"+ group {g.label} placed {count}"))
            elif g.change == "unplaced":
                reason = g.reason or "not placed"
                groups.append(("remove", f"- group {g.label} no longer placeable: {reason}"))
            elif g.change == "stale":
                groups.append(("remove", f"! group {g.label}: {g.reason}"))
            elif g.change == "pending":  # pending before and after: context, not a removal
                groups.append(("context", f"  group {g.label} stays pending: {g.reason or 'not placed'}"))
            elif g.change == "grown":  # what runs now: the plan's pods are the "+"
                text = f"  group {g.label} already running ({g.members - g.scheduled}/{g.min_member}): +{plural(g.scheduled, 'pod')}"
                groups.append(("context", text))
        if groups:
            body += [("header", "@@ groups @@"), *groups]

        domains = self.changed_domains
        if domains:
            width = max(len(d.label) for d in domains)
            body.append(("header", "@@ utilisation (requests / allocatable) @@"))
            for d in domains:
                text = f"  {d.label.ljust(width)}  {_figures(d, self.gpu_resource)}"
                body.append(("change", text))

        if not body:
            return []
        return [("header", f"--- {self.old_label}"), ("header", f"+++ {self.new_label}"), *body]


def _snag(pod: Pod | None, placement: Placement, nodes: Container[str]) -> str:
    """Why a placement made from another snapshot cannot be applied to this one, in a word (''
    when it can): the pod "missing" or "remade" (another uid: the API server refuses a Binding
    of the old one), "settled" on a node, "idle" (gated, being deleted or finished: kube-scheduler
    leaves it alone), or its node missing ("elsewhere")."""
    if pod is None:
        return "missing"
    if placement.uid and pod.uid and placement.uid != pod.uid:
        return "remade"
    if not is_pending(pod):
        return "settled" if pod.node_name else "idle"
    return "elsewhere" if placement.node not in nodes else ""


def _stale(
    pod: Pod | None,
    placement: Placement,
    nodes: Mapping[str, Node],
    running: Mapping[str, list[Pod]],
    domains: Mapping[tuple[str, str], list[Pod]],
) -> str:
    """Why a placement made from another snapshot cannot be applied to this one, or "": a
    node cordoned, NotReady or tainted since takes the pod no more: kube-scheduler would not
    choose it, and gangplan's filters and verify refuse it (a Binding made anyway would be
    accepted, and the kubelet runs the pod unless a NoExecute taint evicts it). Nor does one
    where a pod bound since (``running``, per node) binds a host port the pod binds, which the
    kubelet refuses, or repels it by anti-affinity on the node, which it does not check, or in
    the node's domain of a wider topologyKey (``domains``, per (key, value))."""
    snag = _snag(pod, placement, nodes)
    node = nodes.get(placement.node)
    if not snag and pod is not None and node is not None:
        if not node.ready:
            return f"node {node.name} is not Ready"
        if node.unschedulable:
            return f"node {node.name} is cordoned (unschedulable)"
        if (taint := untolerated_taint(node, pod.tolerations)) is not None:
            shown = f"{taint.key}={taint.value}" if taint.value else taint.key
            return f"node {node.name} has taint {shown}:{taint.effect}, which the pod does not tolerate"
        here = running.get(node.name, [])
        if (clash := host_port_clash(pod.host_ports, [(port, p.key) for p in here for port in p.host_ports])) is not None:
            port, holder = clash
            return f"node {node.name} has hostPort {port.port}/{port.protocol} bound on {port.ip} by pod {holder}"
        if (other := next((p for p in here if repels(pod, p)), None)) is not None:
            return f"node {node.name} runs pod {other.key}, which its pod anti-affinity keeps it apart from"
        for key in sorted({key for key, _ in domains}):
            value = node.labels.get(key)
            there = domains.get((key, value), []) if value is not None else []
            if (other := next((p for p in there if repels_in_domain(pod, p, key)), None)) is not None:
                return (
                    f"node {node.name} is in {key}={value}, where pod {other.key} runs, which its pod anti-affinity "
                    "keeps it apart from"
                )
    if not snag:
        return ""
    if pod is None:
        return "the pod is not in the snapshot"
    if snag == "remade":
        return f"the pod was made again since (uid {pod.uid}, the plan's {placement.uid})"
    if snag == "settled":
        return f"already bound to {pod.node_name}"
    if snag == "idle":
        if pod.deleting:  # the API server refuses its Binding
            return "the pod is being deleted"
        held = blocked_by(pod)  # gated: kube-scheduler leaves it alone
        return f"the pod has {held}" if held else f"the pod is {pod.phase.value}"
    return f"node {placement.node} is not in the snapshot"


def _pod_summary(diff: PlanDiff) -> str:
    parts = []
    for name, items in (("placed", diff.placed), ("dropped", diff.dropped), ("moved", diff.moved), ("stale", diff.stale)):
        if items:
            parts.append(f"{len(items)} {name}")
    return ", ".join(parts)


def _figures(domain: DomainUse, gpu_resource: str) -> str:
    """``gpu 25% -> 75%  cpu 10% -> 30%``: the resources that changed, GPU first."""
    order = {gpu_resource: 0, "cpu": 1, "memory": 2}
    changed = (r for r in domain.resources if r.changed)
    shown = sorted(changed, key=lambda r: order.get(r.resource, 3))
    parts = []
    for r in shown:
        name = "gpu" if r.resource == gpu_resource else r.resource
        before, after = percent_apart(r.before, r.after, r.allocatable)
        parts.append(f"{name} {before} -> {after}")
    return "  ".join(parts)


# ---------------------------------------------------------------- building


def diff_snapshot(
    snapshot: Snapshot,
    plan: Plan,
    *,
    levels: Sequence[str] | None = None,
    gpu_resource: str = DEFAULT_GPU_RESOURCE,
    old_label: str = "snapshot",
    new_label: str = "plan",
) -> PlanDiff:
    """What applying ``plan`` to ``snapshot`` changes.

    Levels as ``diff_levels`` chooses them; ``levels`` is ``--levels`` (None: not given).
    """
    chosen, said = diff_levels(snapshot, {new_label: plan}, levels)
    warnings: list[str] = list(said)
    placements = _first_bindings(plan.placements, new_label, warnings)
    # Each group as this snapshot has it: members may have finished, failed or gone since the plan.
    gangs = {_gang_id(gang): (job_group, gang) for job_group, gang in _gangs(snapshot)}
    group_of = {pod.key: gid for gid, (_, gang) in gangs.items() for pod in gang.members}
    known = {pod.key: pod for pod in snapshot.pods}
    nodes = {node.name: node for node in snapshot.nodes}
    shared = _shared((*map(_gang_id, plan.groups), *gangs))
    kind_of = {g.key: _gang_id(g)[0] for g in plan.groups if g.key not in shared}
    planned = set(map(_gang_id, plan.groups))

    def owner(p: Placement) -> tuple[str, str]:
        """The group a placement counts for: the plan's, of the kind the snapshot gives it."""
        there = group_of.get(p.pod)
        key = p.group or (there[1] if there else "")
        if there is not None and there[1] == key:
            return there
        if key in shared and p.pod == key and (_BARE, key) in planned:
            return _BARE, key  # the bare pod's own placement: no other pod of the plan's snapshot had its name
        return kind_of.get(key, ""), key

    running: dict[str, list[Pod]] = defaultdict(list)
    for bound in snapshot.pods:
        if bound.node_name is not None and consumes_capacity(bound):
            running[bound.node_name].append(bound)
    domains: dict[tuple[str, str], list[Pod]] = defaultdict(list)  # running pods per (key, value), for wider terms
    for key in wider_keys(snapshot.pods):
        for name, here in running.items():
            if (value := nodes[name].labels.get(key) if name in nodes else None) is not None:
                domains[key, value] += here
    changes = [(p, owner(p), _stale(known.get(p.pod), p, nodes, running, domains)) for p in placements]
    # Required pod affinity, topology spread and anti-affinity between placements, as verify
    # reads them, against the pods running now, beside the placements that still apply: the
    # pods a placement was to join may have gone, and pods bound since may crowd its node.
    unmet: dict[str, str] = {}
    for v in inter_pod_violations(snapshot, {p.pod: p.node for p, _, why in changes if not why}):
        unmet.setdefault(v.subject, v.message)
    changes = [(p, gid, why or unmet.get(p.pod, "")) for p, gid, why in changes]
    pods = tuple(
        sorted((PodChange(p.pod, gid[1], None, p.node, why, gid[0] == _BARE) for p, gid, why in changes), key=lambda c: _key(c.pod))
    )
    applies = [p for p, _, why in changes if not why]
    fresh = Counter(gid for _, gid, why in changes if not why)
    stale = Counter(gid for _, gid, why in changes if why)
    # Pods bound since as the plan said, of groups the snapshot no longer lists (a bare pod
    # once bound is no group to place): they run.
    bound_since = Counter(gid for p, gid, _ in changes if (pod := known.get(p.pod)) is not None and pod.node_name and gid not in gangs)
    # What the placements that apply leave short, as the verifier derives it from this snapshot:
    # minimums raised, members failed, or JobGroup members added since the plan.
    short: dict[str, list[tuple[str, str]]] = {}
    for v in verify(snapshot, applies, chosen).violations:
        if v.rule in _GROUP_RULES:
            short.setdefault(v.subject, []).append((v.rule, v.message))
    # The verifier names a group by namespace/name: where a bare pod or a Kueue pod group shares
    # a PodGroup's, what it says is the PodGroup's, as a name asks for the PodGroup.
    shown = {gid: (gid[0] if gid[1] in shared else "", gid[1]) for gid in (*gangs, *map(_gang_id, plan.groups))}
    judged = {gid: short.get(gid[1], []) if not gid[0] or (("", gid[1]) not in gangs) else [] for gid in shown}
    groups = []
    told: set[tuple[str, str]] = set()
    for g in plan.groups:
        gid = _gang_id(g)
        kind = shown[gid][0]
        gang = gangs[gid][1] if gid in gangs else None
        if not g.placed:
            if gang is None or (not gang.pending and not gang.blocked):
                continue  # no pod of it waits here any more (or the group is gone): nothing stays pending
            groups.append(_group_change(_as_in(g, gang, 0, 0), "pending", g.reason, kind))
            continue
        g = _as_in(g, gang, fresh[gid], bound_since[gid])
        reason = _shortfall(g, fresh[gid], stale[gid], judged[gid])
        if reason:
            groups.append(_group_change(g, "stale", reason, kind))
            told.add(shown[gid])
        elif g.counted < g.min_member and not g.finished and g.scheduled:
            groups.append(_group_change(g, "placed", "", kind))
        elif g.scheduled:
            groups.append(_group_change(g, "grown", "", kind))
    for gid, (job_group, gang) in gangs.items():
        # A JobGroup member the plan never saw (or left out) that now holds the others back; a
        # List of Bindings says nothing of groups, so none are listed for it.
        found = [] if plan.placements_only else [text for rule, text in judged[gid] if rule == "job-group"]
        if found and shown[gid] not in told:
            groups = [c for c in groups if (c.kind, c.key) != shown[gid]]
            counts = succeeded_count(gang.group.api, bool(gang.pending))
            change = GroupChange(
                gang.key, job_group, "stale", gang.group.min_member, len(gang.running), 0, found[0], len(gang.succeeded), counts,
                shown[gid][0],
            )
            groups.append(change)
            told.add(shown[gid])
    # A group with no subGroup is a JobGroup of its own; one the snapshot no longer has, or
    # whose job is done, holds no member back (the verifier counts the members there are).
    alone = {shown[gid] for gid, (_, gang) in gangs.items() if not gang.group.sub_group or gang.done}
    alone |= {shown[gid] for gid in map(_gang_id, plan.groups) if gid not in gangs}
    groups = _job_groups_whole(groups, alone)
    groups.sort(key=lambda c: (*_key(c.key), c.kind))

    base = _running_usage(snapshot, gpu_resource)
    # A node that takes the pod no more (cordoned, NotReady, tainted since) gets none of it either.
    refused = {p.pod for p, _, why in changes if why and not _snag(known.get(p.pod), p, nodes)}
    after = _with_placements(snapshot, base, [p for p in placements if p.pod not in refused], gpu_resource, new_label, warnings)
    utilisation = _utilisation(snapshot, chosen, base, after, gpu_resource)
    return PlanDiff(
        mode="snapshot",
        old_label=old_label,
        new_label=new_label,
        pods=pods,
        groups=tuple(groups),
        levels=chosen,
        gpu_resource=gpu_resource,
        utilisation=utilisation,
        warnings=tuple(warnings),
    )


def diff_plans(
    a: Plan,
    b: Plan,
    snapshot: Snapshot | None = None,
    *,
    levels: Sequence[str] | None = None,
    gpu_resource: str = DEFAULT_GPU_RESOURCE,
    old_label: str = "A",
    new_label: str = "B",
) -> PlanDiff:
    """What differs between plan ``a`` and plan ``b``; utilisation only with a snapshot.

    Levels as ``diff_levels`` chooses them, the same whichever plan is ``a``; ``levels`` is
    ``--levels`` (None: not given).
    """
    chosen, said = diff_levels(snapshot, {old_label: a, new_label: b}, levels)
    warnings: list[str] = list(said)
    placed_a = _first_bindings(a.placements, old_label, warnings)
    placed_b = _first_bindings(b.placements, new_label, warnings)
    member_of = _member_of(_gangs(snapshot), (*placed_a, *placed_b)) if snapshot is not None else {}
    in_a = {p.pod: p for p in placed_a}
    in_b = {p.pod: p for p in placed_b}
    bare = {g.key for g in (*a.groups, *b.groups) if _gang_id(g)[0] == _BARE}
    pods = []
    for pod in sorted(set(in_a) | set(in_b), key=_key):
        pa, pb = in_a.get(pod), in_b.get(pod)
        old = pa.node if pa else None
        new = pb.node if pb else None
        if old != new:
            group = (pb.group if pb else "") or (pa.group if pa else "") or member_of.get(pod, "")
            pods.append(PodChange(pod, group, old, new, alone=group == pod and group in bare))

    # A List of Bindings carries no group outcomes: groups are compared only between Plans.
    both = not a.placements_only and not b.placements_only
    groups_a = {_gang_id(g): g for g in a.groups} if both else {}
    groups_b = {_gang_id(g): g for g in b.groups} if both else {}
    shared = _shared((*groups_a, *groups_b))
    groups = []
    for gid in sorted(set(groups_a) | set(groups_b), key=lambda gid: (*_key(gid[1]), gid[0])):
        ga, gb = groups_a.get(gid), groups_b.get(gid)
        kind = gid[0] if gid[1] in shared else ""
        if ga is not None and gb is not None:
            if gb.placed and not ga.placed:
                groups.append(_group_change(gb, "placed", "", kind))
            elif ga.placed and not gb.placed:
                groups.append(_group_change(gb, "unplaced", gb.reason, kind))
        elif gb is not None:  # only in B: compare with "not placed", unless nothing was to do
            if gb.placed and gb.counted < gb.min_member and not gb.finished:
                groups.append(_group_change(gb, "placed", "", kind))
        elif ga is not None and ga.placed and ga.counted < ga.min_member and not ga.finished:
            groups.append(_group_change(replace(ga, scheduled=0), "unplaced", f"not in {new_label}", kind))

    utilisation: tuple[DomainUse, ...] = ()
    if snapshot is not None:
        base = _running_usage(snapshot, gpu_resource)
        under_a = _with_placements(snapshot, base, placed_a, gpu_resource, old_label, warnings)
        under_b = _with_placements(snapshot, base, placed_b, gpu_resource, new_label, warnings)
        utilisation = _utilisation(snapshot, chosen, under_a, under_b, gpu_resource)
    return PlanDiff(
        mode="plans",
        old_label=old_label,
        new_label=new_label,
        pods=tuple(pods),
        groups=tuple(groups),
        levels=chosen,
        gpu_resource=gpu_resource,
        utilisation=utilisation,
        warnings=tuple(warnings),
    )


def diff_levels(
    snapshot: Snapshot | None, plans: Mapping[str, Plan], levels: Sequence[str] | None = None
) -> tuple[tuple[str, ...], list[str]]:
    """The topology levels a diff uses, and warnings: the snapshot's Topology object, else
    ``levels`` (``--levels``; None when not given), else the levels the plans that record
    some (a List of Bindings records none) agree on, else those inferred from the snapshot.

    One rule for every order of the plans, so that A against B and B against A compare the
    same domains; plans that disagree are warned about, since their domains differ."""
    recorded = {label: tuple(p.levels) for label, p in plans.items() if p.levels is not None}
    agreed = set(recorded.values())
    warnings: list[str] = []
    if snapshot is not None and (snapshot.topologies or levels is not None or len(agreed) != 1):
        chosen, said = resolve_levels(snapshot, levels)
        if levels is not None:  # what became of --levels; the rest is the plan's to say
            warnings = said
        source = (
            "the snapshot's Topology's" if snapshot.topologies
            else "--levels" if levels is not None
            else "the levels inferred from the snapshot"
        )
    elif snapshot is None and levels is not None:
        chosen, source = tuple(levels), "--levels"
    else:
        chosen, source = (agreed.pop() if len(agreed) == 1 else ()), "none"
    if len(agreed) > 1:
        shown = "; ".join(f"{label}: {', '.join(keys) or 'none'}" for label, keys in recorded.items())
        using = f"; utilisation is compared on {source} ({', '.join(chosen) or 'none'})" if snapshot is not None else ""
        warnings.insert(0, f"the plans were made with different topology levels ({shown}){using}")
    return chosen, warnings


def _key(namespaced: str) -> tuple[str, str]:
    namespace, _, name = namespaced.partition("/")
    return namespace, name


def _first_bindings(placements: Sequence[Placement], label: str, warnings: list[str]) -> tuple[Placement, ...]:
    """Each pod's first placement: the API server binds a pod once and refuses a second
    Binding ("already assigned to node"), so a plan naming a pod twice adds it once."""
    first: dict[str, Placement] = {}
    again: list[str] = []
    for p in placements:
        if p.pod in first:
            again.append(p.pod)
        else:
            first[p.pod] = p
    if again:
        warnings.append(
            f"{label} places {plural(len(set(again)), 'pod')} more than once (first: {again[0]}); "
            "the API server binds each at its first placement and refuses the rest"
        )
    return tuple(first.values())


def _gangs(snapshot: Snapshot) -> Iterator[tuple[str, Gang]]:
    """The snapshot's groups with their JobGroup's key, grouped only once iterated (a Plan's
    placements name theirs)."""
    for jg in group_pods(snapshot).job_groups:
        for gang in jg.gangs:
            yield jg.key, gang


def _shortfall(g: GroupOutcome, applies: int, stale: int, found: Sequence[tuple[str, str]]) -> str:
    """Why this snapshot does not let the plan place ``g`` (counted as the snapshot has it),
    or "": the placements that apply must bring it to its minimums, as the verifier judges
    them; a group none of whose placements apply must already run to minMember."""
    if applies:
        taken = (
            f"this snapshot can take {applies} of the plan's {applies + stale} placements of it"
            if stale
            else "the plan's placements of it apply"
        )
        if g.counted + g.scheduled < g.min_member and not g.finished:
            return f"{taken}: {g.counted + g.scheduled}/{g.min_member} with the members it runs, short of minMember"
        return f"{taken}, but {found[0][0]}: {found[0][1]}" if found else ""
    if g.finished or g.counted >= g.min_member:
        return ""  # it runs to minMember without them; the pods' own lines say why they do not apply
    if stale:
        return "this snapshot can take none of the plan's placements of it"
    return f"the plan places no pod of it: {g.counted}/{g.min_member} with the members the snapshot runs, short of minMember"


def _member_of(gangs: Iterable[tuple[str, Gang]], placements: Sequence[Placement]) -> dict[str, str]:
    """Each member pod's group, for placements (a List of Bindings) that do not name it; a
    Plan's all do."""
    if all(p.group for p in placements):
        return {}
    return {pod.key: gang.key for _, gang in gangs for pod in (*gang.running, *gang.pending)}


def _as_in(g: GroupOutcome, gang: Gang | None, applies: int, bound: int) -> GroupOutcome:
    """``g`` as this snapshot has it: its members here, running, succeeded and pending (the
    plan's when the snapshot lacks the group, with ``bound`` of its pods bound since) and
    ``applies`` pods placed."""
    if gang is None:
        return replace(g, scheduled=applies, running=g.running + bound)
    # Pods to come: Kueue's TAS holds their room (kueue-tas-room), no plan binds them.
    return replace(
        g,
        running=len(gang.running),
        succeeded=len(gang.succeeded),
        pending=len(gang.pending) - gang.to_come,
        scheduled=applies,
        min_member=gang.group.min_member - gang.to_come,
        finished=gang.done,
    )


def _job_groups_whole(groups: list[GroupChange], alone: Container[tuple[str, str]]) -> list[GroupChange]:
    """A JobGroup is placed all or nothing (seed 004): where this snapshot leaves one member
    short, the plan places none of its others here either. A group with no subGroup
    (``alone``, by (kind, key)) is a JobGroup of its own, though its name may be a member's or
    another JobGroup's subGroup."""
    short: dict[str, str] = {}
    for c in groups:
        if c.change == "stale" and (c.kind, c.key) not in alone:
            short.setdefault(c.job_group, c.key)
    return [
        replace(c, change="stale", reason=f"JobGroup {c.job_group} is placed all or nothing, and member {short[c.job_group]} falls short here")
        if c.change in ("placed", "grown") and c.job_group in short and c.key != short[c.job_group] and (c.kind, c.key) not in alone
        else c
        for c in groups
    ]


def _group_change(g: GroupOutcome, change: str, reason: str = "", kind: str = "") -> GroupChange:
    return GroupChange(
        g.key, g.job_group, change, g.min_member, g.running, g.scheduled, reason, g.succeeded, g.counts_succeeded, kind
    )


# ---------------------------------------------------------------- utilisation

Usage = Mapping[str, Mapping[str, int]]  # node name -> resource -> used


def _resources(gpu_resource: str) -> tuple[str, ...]:
    return ("cpu", "memory", gpu_resource)


def _running_usage(snapshot: Snapshot, gpu_resource: str) -> dict[str, dict[str, int]]:
    """Per node: the requests of the pods bound there and not finished."""
    resources = _resources(gpu_resource)
    used: dict[str, dict[str, int]] = {n.name: dict.fromkeys(resources, 0) for n in snapshot.nodes}
    for pod in snapshot.pods:
        if consumes_capacity(pod) and pod.node_name in used:
            _add(used[pod.node_name], pod, resources)
    return used


def _add(target: dict[str, int], pod: Pod, resources: Iterable[str]) -> None:
    requests = pod_requests(pod)
    for name in resources:
        target[name] += requests.get(name, 0)


# What _with_placements says of the placements it does not count, by their _snag.
_NOT_COUNTED = {
    "missing": "not in the snapshot, so not counted",
    "remade": "made again in the snapshot since, so not counted",
    "settled": "not pending in the snapshot, so not counted again",
    "idle": "not pending in the snapshot, so not counted",
    "elsewhere": "on nodes not in the snapshot, so not counted",
}


def _with_placements(
    snapshot: Snapshot,
    base: Usage,
    placements: Iterable[Placement],
    gpu_resource: str,
    label: str,
    warnings: list[str],
) -> dict[str, dict[str, int]]:
    """``base`` plus the requests of the pending pods ``placements`` bind.

    A placement the snapshot cannot account for (pod missing, made again or not pending, node
    missing) was made from another snapshot: it is warned about and adds nothing.
    """
    resources = _resources(gpu_resource)
    used = {node: dict(figures) for node, figures in base.items()}
    pods = {pod.key: pod for pod in snapshot.pods}
    snagged: dict[str, list[str]] = {kind: [] for kind in _NOT_COUNTED}
    for p in sorted(placements, key=lambda p: (p.namespace, p.name)):
        pod = pods.get(p.pod)
        snag = _snag(pod, p, used)
        if pod is None:
            snagged[snag].append(p.pod)
        elif not snag:
            _add(used[p.node], pod, resources)
        elif snag == "remade":
            snagged[snag].append(f"{p.pod} (uid {pod.uid}, the plan's {p.uid})")
        elif snag == "settled":
            snagged[snag].append(f"{p.pod} (bound to {pod.node_name})")
        elif snag == "idle":
            snagged[snag].append(f"{p.pod} ({blocked_by(pod) or f'phase {pod.phase.value}'})")
        else:
            snagged[snag].append(f"{p.pod} on {p.node}")
    hint = "; was the plan made from this snapshot?" if any(snagged.values()) else ""
    for kind, what in _NOT_COUNTED.items():
        found = snagged[kind]
        if found:
            warnings.append(
                f"{label}: {plural(len(found), 'placed pod')} {'is' if len(found) == 1 else 'are'} {what} "
                f"(first: {found[0]}){hint}"
            )
            hint = ""
    # diff is no verifier, but a plan that puts more on a node than it holds shows as "150%":
    # say so, and where to look.
    allocatable = {node.name: node_allocatable(node) for node in snapshot.nodes}
    over = []
    for node, figures in sorted(used.items()):
        held = allocatable[node]
        # Only what the plan adds: a node its running pods already overfill is the cluster's state.
        beyond = [name for name in resources if figures[name] > max(held.get(name, 0), base[node][name])]
        if beyond:
            name = beyond[0]
            over.append(f"{node} {name} {describe_amount(name, figures[name])} of {describe_amount(name, held.get(name, 0))}")
    if over:
        warnings.append(
            f"{label} places more than the node holds on {plural(len(over), 'node')} (first: {over[0]}); "
            "gangplan verify names the placements"
        )
    return used


def _utilisation(
    snapshot: Snapshot, levels: Sequence[str], before: Usage, after: Usage, gpu_resource: str
) -> tuple[DomainUse, ...]:
    """The cluster total (every node), then each level's domains in path order."""
    resources = _resources(gpu_resource)
    nodes = snapshot.nodes
    allocatable = [node_allocatable(n) for n in nodes]

    def row(level: str, path: tuple[str, ...], members: Iterable[int]) -> DomainUse:
        members = list(members)
        return DomainUse(
            level,
            path,
            tuple(
                ResourceUse(
                    name,
                    sum(allocatable[i].get(name, 0) for i in members),
                    sum(before[nodes[i].name][name] for i in members),
                    sum(after[nodes[i].name][name] for i in members),
                )
                for name in resources
            ),
        )

    rows = [row("", (), range(len(nodes)))]
    if levels:
        tree = build_tree(nodes, levels)
        for depth, domains in enumerate(tree.domains):
            rows.extend(row(tree.levels[depth], d.path, d.nodes) for d in domains)
    return tuple(rows)


"""The scheduling rules gangplan plans by (DESIGN section 3), as pure functions.

Kubernetes' own rules for requests, taints and node selection, and the ecosystem's rules
for which pods form a gang. The solver and the greedy placer only ever see their results
through ``problem.build_problem``; ``verify`` re-derives them on its own.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

from . import kueue
from .errors import InputError
from .quantity import counted, listed, plural
from .model import (
    IMPLICIT_KINDS,
    Container,
    HostPort,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    Pod,
    PodGroup,
    PodGroupAPI,
    PodPhase,
    Snapshot,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)

POD_GROUP_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
POD_GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
GODEL_POD_GROUP_KEY = "godel.bytedance.com/pod-group-name"
VOLCANO_TASK_KEY = "volcano.sh/task-spec"
DEFAULT_PODS_PER_NODE = 110
_INT64 = re.compile(r"[+-]?[0-9]+")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def pod_requests(pod: Pod) -> dict[str, int]:
    """Effective requests as the scheduler counts them, ``pods: 1`` included.

    Containers run together and are summed; init containers run one at a time before
    them, so each needs its own request plus the sidecars already started; pod-level
    requests (``spec.resources``) replace that for the resources they set; overhead is added.
    """
    total: dict[str, int] = defaultdict(int)
    for container in pod.containers:
        for name, amount in container.requests.items():
            total[name] += amount
    sidecars: dict[str, int] = defaultdict(int)
    init_peak: dict[str, int] = defaultdict(int)
    for container in pod.init_containers:
        if container.restart_policy == "Always":
            for name, amount in container.requests.items():
                sidecars[name] += amount
                init_peak[name] = max(init_peak[name], sidecars[name])
        else:
            for name in set(container.requests) | set(sidecars):
                need = container.requests.get(name, 0) + sidecars.get(name, 0)
                init_peak[name] = max(init_peak[name], need)
    result: dict[str, int] = {}
    for name in set(total) | set(sidecars) | set(init_peak) | set(pod.overhead) | set(pod.pod_level_requests):
        steady = total.get(name, 0) + sidecars.get(name, 0)
        amount = pod.pod_level_requests.get(name, max(steady, init_peak.get(name, 0))) + pod.overhead.get(name, 0)
        if amount:
            result[name] = amount
    result["pods"] = result.get("pods", 0) + 1
    return result


HOST_PORT = "hostPort "  # a resource name no Kubernetes resource can have (it holds a space)
ANY_ADDRESS = "0.0.0.0"  # kube-scheduler's DefaultBindAllHostIP


def one_a_node(resource: str) -> bool:
    """A rule counted as a resource each node has one of (a host port, an anti-affinity term)."""
    return resource.startswith((HOST_PORT, ANTI_AFFINITY))


def counted_rule(resource: str) -> bool:
    """A rule counted as a resource (a host port, an anti-affinity term, a spread constraint's
    cap on each node): no resource Kubernetes counts, so in no figure of room used or quorum
    demand."""
    return resource.startswith((HOST_PORT, ANTI_AFFINITY, SPREAD))


def host_port_clash(wanted: Iterable[HostPort], held: Iterable[tuple[HostPort, str]]) -> tuple[HostPort, str] | None:
    """The first of ``held`` (a port and who binds it) that one of ``wanted`` clashes with."""
    for mine in wanted:
        for theirs, holder in held:
            same = (mine.protocol, mine.port) == (theirs.protocol, theirs.port)
            if same and (mine.ip == theirs.ip or ANY_ADDRESS in (mine.ip, theirs.ip)):
                return theirs, holder
    return None


def host_port_requests(pods: Iterable[Pod]) -> dict[int, dict[str, int]]:
    """NodePorts as resources of one unit a node, so every model packs them as it packs GPUs:
    each pod (by ``id``) with host ports asks one unit of each name below. A (protocol, port) is
    one name, and each address an unbound pod binds it on is another: an unbound pod on such an
    address asks that name alone, a bound pod on another address the port's name, and a pod on
    0.0.0.0 all of them, as it conflicts with every address. Two pods share a name exactly when
    NodePorts keeps them apart, and a bound pod's address no unbound pod binds is no name of its
    own (1,000 nodes each binding 80 on their own address made 1,000 names, all in reasons)."""
    addresses: dict[tuple[str, int], set[str]] = defaultdict(set)
    holders = [pod for pod in pods if pod.host_ports]
    for pod in holders:
        if pod.node_name is None:
            for hp in pod.host_ports:
                addresses[(hp.protocol, hp.port)].update(() if hp.ip == ANY_ADDRESS else (hp.ip,))

    def names(protocol: str, port: int, ip: str) -> list[str]:
        bound = addresses[(protocol, port)]
        if ip in bound:
            return [f"{HOST_PORT}{f'[{ip}]' if ':' in ip else ip}:{port}/{protocol}"]
        base = f"{HOST_PORT}{port}/{protocol}"
        return [base, *(name for a in sorted(bound) for name in names(protocol, port, a))] if ip == ANY_ADDRESS else [base]

    return {id(pod): {name: 1 for hp in pod.host_ports for name in names(hp.protocol, hp.port, hp.ip)} for pod in holders}


def node_allocatable(node: Node) -> dict[str, int]:
    allocatable = dict(node.allocatable)
    allocatable.setdefault("pods", DEFAULT_PODS_PER_NODE)
    return allocatable


def consumes_capacity(pod: Pod) -> bool:
    """Bound pods hold their requests until they finish."""
    return pod.node_name is not None and pod.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED)


def is_pending(pod: Pod) -> bool:
    """Unbound, unfinished, and not one kube-scheduler leaves alone (gated or being deleted)."""
    return _unbound(pod) and not blocked_by(pod)


TIMED_OUT = "its PodGroup is in phase Timeout, which Godel does not schedule again"


def blocked_by(pod: Pod) -> str:
    """Why kube-scheduler leaves the pod alone ('' when it does not): it is being deleted, or
    carries scheduling gates other than Kueue's."""
    if pod.deleting:
        return "being deleted"
    gates = [g for g in pod.scheduling_gates if not g.startswith(kueue.GATE_PREFIX)]
    return f"scheduling gates {', '.join(gates)}" if gates else ""


def _unbound(pod: Pod) -> bool:
    return pod.node_name is None and pod.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED)


Tolerated = frozenset[tuple[str | None, ...]]


def tolerated(tolerations: Iterable[Toleration]) -> Tolerated:
    """What ``tolerations`` tolerate, as lookups: (key, effect) for Exists, (key, value, effect)
    for Equal, "" an effect any; (None, effect) for an Exists with no key. Made once for a
    pod's tolerations and read against every kind of node: 300 tolerations against 50 taints
    a node took 25 s one toleration at a time."""
    found: set[tuple[str | None, ...]] = set()
    for t in tolerations:
        if t.operator == "Exists":
            found.add((t.key or None, t.effect))
        else:
            found.add((t.key, t.value, t.effect))
    return frozenset(found)


def tolerates(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return _tolerates(tolerated(tolerations), taint)


def _tolerates(known: Tolerated, taint: Taint) -> bool:
    return any(
        (None, effect) in known or (taint.key, effect) in known or (taint.key, taint.value, effect) in known
        for effect in ("", taint.effect)
    )


def untolerated_taint(node: Node, tolerations: Iterable[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute taint the pod does not tolerate, if any."""
    return _untolerated(node, tolerated(tolerations))


def _untolerated(node: Node, known: Tolerated) -> Taint | None:
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not _tolerates(known, taint):
            return taint
    return None


def _requirement_matches(requirement: NodeSelectorRequirement, value: str | None) -> bool:
    op = requirement.operator
    if op == "In":
        return value is not None and _among(value, requirement.values)
    if op == "NotIn":
        return value is None or not _among(value, requirement.values)
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(requirement.values) != 1:
            return False
        actual, bound = _parse_int64(value), _parse_int64(requirement.values[0])
        if actual is None or bound is None:
            return False
        return actual > bound if op == "Gt" else actual < bound
    raise ValueError(f"unknown node selector operator {op!r}")


def _among(value: str, values: tuple[str, ...]) -> bool:
    """A long list (a term naming 1,024 hostnames) is looked up as a set, not scanned at every
    kind of node."""
    return value in (_value_set(values) if len(values) > _SET_FROM else values)


_SET_FROM = 16  # values in a list past which it is looked up as a set


@functools.lru_cache(maxsize=4096)
def _value_set(values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(values)


def _parse_int64(text: str) -> int | None:
    """As Go's strconv.ParseInt(text, 10, 64); Python's int() also takes "1_0", " 7" and >64 bits."""
    if not _INT64.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


def _field_matches(requirement: NodeSelectorRequirement, node: Node) -> bool:
    """matchFields: Kubernetes allows only metadata.name, In or NotIn, one value."""
    if requirement.key != "metadata.name" or requirement.operator not in ("In", "NotIn"):
        return False
    if len(requirement.values) != 1:
        return False
    return _requirement_matches(requirement, node.name)


@functools.lru_cache(maxsize=4096)
def _buildable(term: NodeSelectorTerm) -> bool:
    """kube-scheduler builds a term's labels with labels.NewRequirement, which refuses a value
    that is no label value ("-1", "a b"); the API server lets such a pod in, and its term then
    matches no node. Remembered per term: a term is asked of every kind of node, and 100
    groups' terms of 1,024 hostnames each took 110 s of regular expressions."""
    return all(len(v) <= 63 and _LABEL_VALUE.fullmatch(v) for r in term.match_expressions for v in r.values)


def node_selector_matches(selector: NodeSelector, node: Node) -> bool:
    for term in selector.terms:
        if (not term.match_expressions and not term.match_fields) or not _buildable(term):
            continue
        if all(_requirement_matches(r, node.labels.get(r.key)) for r in term.match_expressions) and all(
            _field_matches(r, node) for r in term.match_fields
        ):
            return True
    return False


def labels_match(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def node_usable(node: Node) -> bool:
    return node.ready and not node.unschedulable


def filter_reason(node: Node, pod: Pod, group: PodGroup | None, known: Tolerated | None = None) -> str | None:
    """Why ``pod`` may not go to ``node`` ignoring room, in Kubernetes' filter names; None if it
    may. ``known``: ``tolerated(pod.tolerations)``, when it is asked of many nodes."""
    if not node.ready:
        return "not Ready"
    if node.unschedulable:
        return "unschedulable"
    taint = _untolerated(node, tolerated(pod.tolerations) if known is None else known)
    if taint is not None:
        return f"taint {taint.key}"
    if not labels_match(pod.node_selector, node.labels):
        return "nodeSelector"
    if pod.node_affinity is not None and not node_selector_matches(pod.node_affinity, node):
        return "node affinity"
    if group is not None and group.node_selector is not None:
        if not node_selector_matches(group.node_selector, node):
            return "group nodeSelector"
    return None


# ---------------------------------------------------------------- groups


@dataclass(slots=True)
class Gang:
    """A PodGroup with its member pods resolved: the unit all-or-nothing applies to."""

    group: PodGroup
    running: list[Pod] = field(default_factory=list)
    pending: list[Pod] = field(default_factory=list)
    finished: list[Pod] = field(default_factory=list)
    blocked: list[Pod] = field(default_factory=list)  # unbound, but gated or being deleted
    priority: int = 0
    implicit: bool = False  # a pod with no PodGroup object: a group of one, or a Kueue group

    @property
    def key(self) -> str:
        return self.group.key

    @property
    def members(self) -> list[Pod]:
        """Every pod of the group, whatever its phase: they share its PodSets' requests."""
        return [*self.running, *self.pending, *self.blocked, *self.finished]

    @property
    def to_come(self) -> int:
        """Its pending pods that do not exist yet (``Pod.to_come``): room held, no pod to bind."""
        return sum(p.to_come for p in self.pending)

    @property
    def succeeded(self) -> list[Pod]:
        """Members that finished well: they hold no room and pin no domain."""
        return [p for p in self.finished if p.phase == PodPhase.SUCCEEDED]

    @property
    def counted_succeeded(self) -> list[Pod]:
        """The succeeded members that count toward its minimums (``succeeded_count``)."""
        return self.succeeded if succeeded_count(self.group.api, bool(self.pending)) else []

    @property
    def done(self) -> bool:
        """Its controller wrote that its job ran to the end (Completed, Finished) and no pod of
        it waits: it needs no member any more, not even those the snapshot no longer has
        (garbage-collected once finished), so it holds no JobGroup back. Failed is not done:
        its workload may make the pods again, and the coscheduling plugin schedules them
        whatever the phase (which its controller leaves at Failed)."""
        return self.group.finished and not self.pending and not self.blocked


# Schedulers whose gang check counts members that finished well: Volcano's ready tasks
# (JobInfo.ReadyTaskNum) and Kueue's pod group, admitted as a whole.
_SUCCEEDED_COUNT = frozenset({PodGroupAPI.VOLCANO, PodGroupAPI.VOLCANO_JOB, PodGroupAPI.KUEUE_POD_GROUP})


def succeeded_count(api: PodGroupAPI, pending: bool) -> bool:
    """Whether a group's Succeeded members count toward minMember. In Volcano and Kueue they
    do. kube-scheduler's framework (scheduler-plugins' Coscheduling, Godel, the Gang proposal)
    lists pods through an informer that leaves Succeeded and Failed pods out, so while the
    group has pods to place its quorum is its bound pods and the placed ones alone
    (Coscheduling's PreFilter and Permit); with none pending the scheduler has nothing to
    judge, and its controller's phase (Running, Finished) counts them."""
    return api in _SUCCEEDED_COUNT or not pending


@dataclass(slots=True)
class JobGroup:
    """PodGroups placed as one unit (seed 004); most hold a single PodGroup."""

    key: str
    gangs: list[Gang]
    priority: int
    order: tuple  # QueueSort key of the top member

    @property
    def top(self) -> Gang:
        return self.gangs[0]


@dataclass(slots=True)
class Grouping:
    job_groups: list[JobGroup]
    warnings: list[str]
    unmodelled: dict[str, list[str]] = field(default_factory=dict)  # rule gangplan does not model -> who asks
    anti_affinity: AntiAffinity = field(default_factory=lambda: AntiAffinity({}, {}, ()))
    affinity: Affinity = field(default_factory=lambda: Affinity({}))
    spread: Spread = field(default_factory=lambda: Spread({}, {}))


def group_names_of(pod: Pod) -> list[str]:
    """PodGroup names this pod's keys give, in DESIGN's order (a pod may carry several)."""
    names = [pod.labels.get(key) for key in POD_GROUP_LABELS]
    names += [pod.annotations.get(key) for key in POD_GROUP_ANNOTATIONS]
    names += [pod.annotations.get(GODEL_POD_GROUP_KEY), pod.labels.get(GODEL_POD_GROUP_KEY)]
    return [n for n in names if n]


def task_of(pod: Pod) -> str:
    """Volcano's task (role) name of a pod; "" when it has none. Volcano's scheduler reads the
    annotation only (getTaskID); its job controller sets the label too, which counts for nothing."""
    return pod.annotations.get(VOLCANO_TASK_KEY) or ""


_PRIORITY_FROM_GROUP = frozenset(
    {PodGroupAPI.VOLCANO, PodGroupAPI.VOLCANO_JOB, PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE}
)


def priority_values(snapshot: Snapshot) -> tuple[dict[str, int], int]:
    values = {pc.name: pc.value for pc in snapshot.priority_classes}
    # Only one may be globalDefault, but if several are, the API uses the smallest value.
    default = min((pc.value for pc in snapshot.priority_classes if pc.global_default), default=0)
    return values, default


def pod_priority(pod: Pod, classes: Mapping[str, int], default: int) -> int:
    if pod.priority is not None:
        return pod.priority
    if pod.priority_class_name:
        return classes.get(pod.priority_class_name, default)
    return default


def group_pods(snapshot: Snapshot) -> Grouping:
    """Resolve membership, priorities and JobGroups, in QueueSort order (seed 000).

    Raises InputError when PodGroups under one subGroup disagree on namespace or queue.
    """
    classes, default_priority = priority_values(snapshot)
    warnings: list[str] = []
    gangs: dict[str, Gang] = {}
    for pg in snapshot.pod_groups:
        gangs[pg.key] = Gang(pg)
    lone: list[Gang] = []
    kueue_gangs: dict[str, Gang] = {}
    totals: dict[str, set[int]] = defaultdict(set)  # Kueue group -> the counts its members carry
    missing: dict[str, list[str]] = defaultdict(list)
    unplanned: dict[str, list[str]] = defaultdict(list)  # why -> the pods it keeps out of the plan
    named_twice: dict[tuple[str, ...], list[str]] = defaultdict(list)  # (namespace, *groups) -> pods
    kueue_first: dict[str, str] = {}  # Kueue group -> its member first by name, where it is written
    for pod in snapshot.pods:
        names = group_names_of(pod)
        gang = next((gangs[k] for n in names if (k := f"{pod.namespace}/{n}") in gangs), None)
        named = list(dict.fromkeys(names))
        if len(named) > 1 and gang is not None:
            # Each scheduler reads its own key: one naming a missing group would find none.
            named_twice[(pod.namespace, *named)].append(pod.name)
        kueue_name = pod.labels.get(kueue.GROUP_LABEL)
        if gang is None and kueue_name:
            total = _kueue_total(pod)
            gang = kueue_gangs.get(f"{pod.namespace}/{kueue_name}")
            if gang is None:
                gang = Gang(
                    PodGroup(
                        namespace=pod.namespace,
                        name=kueue_name,
                        api=PodGroupAPI.KUEUE_POD_GROUP,
                        min_member=total,
                        creation_timestamp=pod.creation_timestamp,
                        origin=pod.origin,
                    ),
                    implicit=True,
                )
                kueue_gangs[gang.key] = gang
                kueue_first[gang.key] = pod.name
            else:
                # Every member carries the count (Kueue requires it); the largest is the quorum. The
                # group queues by its earliest member, and is written where its first by name is,
                # whichever the snapshot lists first.
                created = min(filter(None, (gang.group.creation_timestamp, pod.creation_timestamp)), default="")
                origin = gang.group.origin
                if pod.name < kueue_first[gang.key]:
                    kueue_first[gang.key], origin = pod.name, pod.origin
                gang.group = replace(
                    gang.group, min_member=max(total, gang.group.min_member), creation_timestamp=created, origin=origin
                )
            totals[gang.key].add(total)
        elif gang is None and names:
            missing[f"{pod.namespace}/{names[0]}"].append(pod.name)
        if _unbound(pod) and (why := blocked_by(pod)):
            unplanned[why].append(pod.key)
        if gang is None:
            # A gated pod is a group of one that fails with its gate as the reason, as a gated
            # member fails its PodGroup; one being deleted is gone, not waiting.
            if not is_pending(pod) and not (_unbound(pod) and not pod.deleting and blocked_by(pod)):
                continue
            gang = Gang(
                PodGroup(
                    namespace=pod.namespace,
                    name=pod.name,
                    api=PodGroupAPI.POD,
                    min_member=1,
                    creation_timestamp=pod.creation_timestamp,
                    origin=pod.origin,
                ),
                implicit=True,
            )
            lone.append(gang)
        if consumes_capacity(pod):
            gang.running.append(pod)
        elif is_pending(pod) and not gang.group.timed_out:
            gang.pending.append(pod)
        elif _unbound(pod):
            gang.blocked.append(pod)
        else:
            gang.finished.append(pod)
    # One line for each reason, not each pod: a dump with 100 gated pods said it 100 times.
    for pod_keys, why in sorted((sorted(keys), why) for why, keys in unplanned.items()):
        if len(pod_keys) == 1:
            warnings.append(f"pod {pod_keys[0]} is not planned: {why}")
        else:
            warnings.append(f"{len(pod_keys)} pods are not planned: {why} ({listed(pod_keys)})")
    for (namespace, *groups), pod_names in sorted(named_twice.items()):
        # gangplan takes the first in DESIGN's order that exists.
        shown = listed([f"{namespace}/{name}" for name in sorted(pod_names)])
        exists = [f"{namespace}/{name}" in gangs for name in groups]
        each = ", ".join(f"{namespace}/{name}{'' if there else ' (does not exist)'}" for name, there in zip(groups, exists))
        joined = groups[exists.index(True)]
        warnings.append(
            f"{plural(len(pod_names), 'pod')} ({shown}) {'names' if len(pod_names) == 1 else 'name'} "
            f"{len(groups)} PodGroups ({each}) through different keys; planned in {namespace}/{joined}, "
            f"{'whose key comes first' if exists[0] else 'the first of them that exists'}"
        )
    disagreeing = sorted(key for key, counts in totals.items() if len(counts) > 1)
    warnings += _one_by_one_or_together(
        disagreeing,
        lambda key: (
            f"Kueue pod group {key}: its members disagree on {kueue.TOTAL_COUNT} "
            f"({', '.join(map(str, sorted(totals[key])))}); the largest, {max(totals[key])}, is its minMember"
        ),
        f"{len(disagreeing)} Kueue pod groups ({listed(disagreeing)}): the members of each disagree on "
        f"{kueue.TOTAL_COUNT}; the largest count is each one's minMember",
    )
    shapes: dict[str, str] = {}
    fast: dict[str, str] = {}
    for gang in kueue_gangs.values():
        if runnable := _fast_runnable(gang):
            if said := _fast_admission_shapes(gang, runnable):
                shapes[gang.key] = said
            if said := _fast_admitted(gang, runnable):
                fast[gang.key] = said
    warnings += _one_by_one_or_together(
        sorted(shapes),
        shapes.__getitem__,
        f"{len(shapes)} Kueue pod groups ({listed(sorted(shapes))}) ask for fast admission ({kueue.FAST_ADMISSION}) "
        "and have pods of more than one shape: Kueue builds each one's PodSet from one pod's shape and starts no pod "
        "of another, which stay gated; gangplan plans them all",
    )
    warnings += _one_by_one_or_together(
        sorted(fast),
        fast.__getitem__,
        f"{len(fast)} Kueue pod groups ({listed(sorted(fast))}) ask for fast admission ({kueue.FAST_ADMISSION}) and have "
        f"fewer pods than their {kueue.TOTAL_COUNT}: Kueue admits each once its first pod exists, so each is planned "
        "with the pods it has, and those still to come get room in the plan only under a topology request, where "
        "Kueue's TAS holds it",
    )

    def missing_one(key: str) -> str:
        # A typo is one or two groups; many missing (PodGroups deleted) would cost seconds of
        # string matching here, on every run, for no help: 2,000 against 2,000 took 9 s.
        namespace = key.split("/", 1)[0]
        near = difflib.get_close_matches(key, sorted(k for k in gangs if k.split("/", 1)[0] == namespace), n=1, cutoff=0.8)
        return (
            f"PodGroup {key} does not exist{f' (did you mean {near[0]}?)' if near else ''}; its pods "
            f"({listed(sorted(missing[key]))}) are planned as groups of one"
        )

    # A dump without its PodGroups (kubectl get without podgroups) names hundreds.
    left_out = "" if snapshot.pod_groups else "; the inputs hold no PodGroup at all: were podgroups left out of kubectl get?"
    warnings += _one_by_one_or_together(
        sorted(missing),
        missing_one,
        f"{len(missing)} PodGroups do not exist ({listed(sorted(missing))}); their "
        f"{plural(sum(map(len, missing.values())), 'pod')} are planned as groups of one{left_out}",
    )
    all_gangs = [*gangs.values(), *kueue_gangs.values(), *lone]
    for gang in [*kueue_gangs.values(), *lone]:
        if gang.key in gangs:
            what = "Kueue pod group" if gang.group.api is PodGroupAPI.KUEUE_POD_GROUP else "pod (a group of one)"
            warnings.append(
                f"{what} {gang.key} has the name of a PodGroup in its namespace: both are planned, and "
                "explain, check --group and -o status take the PodGroup"
            )
    for gang in (g for g in all_gangs if g.group.min_task_member):
        unread = sorted(p.name for p in gang.pending if not task_of(p) and p.labels.get(VOLCANO_TASK_KEY))
        if unread:
            one = len(unread) == 1
            warnings.append(
                f"PodGroup {gang.key}: {plural(len(unread), 'pod')} ({listed(unread)}) "
                f"{'carries' if one else 'carry'} {VOLCANO_TASK_KEY} as a label only; Volcano reads a pod's task "
                f"from the annotation, so for minTaskMember {'it is' if one else 'they are'} in no task"
            )
    running = [pod for pod in snapshot.pods if consumes_capacity(pod)]
    guards = [pod for pod in running if pod.anti_affinity]
    waiting = [pod for gang in all_gangs for pod in gang.pending]
    near = pod_affinity(waiting, running, snapshot.nodes, all_gangs)
    apart = anti_affinity(waiting, running, snapshot.nodes, _one_domain(all_gangs, near))
    spread = topology_spread(waiting, running, snapshot.nodes)
    unmodelled = _unmodelled(all_gangs, guards, apart.loose, apart.beyond, near.together, spread)
    warnings.extend(unmodelled_warnings(unmodelled))
    unknown: set[str] = set()  # PriorityClass names nothing in the snapshot defines
    workload_classes = {wpc.name: wpc.value for wpc in snapshot.workload_priority_classes}
    unknown_workload: set[str] = set()
    for gang in all_gangs:
        pods = [*gang.running, *gang.pending]
        named = _workload_priority_classes(gang)
        known = [workload_classes[name] for name in named if name in workload_classes]
        lacking = [name for name in named if name and name not in workload_classes]
        if not known:
            unknown_workload.update(lacking)  # planned at their pods' priority, as that warning says
        if len(named) > 1:
            one = len(lacking) == 1
            warnings.append(
                f"Kueue pod group {gang.key}: its members disagree on {kueue.PRIORITY_CLASS_LABEL} "
                f"({', '.join(name or 'none' for name in named)}); Kueue reads one member's label, gangplan "
                "takes the highest value of the classes named"
                + (f" ({listed(lacking)} {'is' if one else 'are'} not in the snapshot)" if known and lacking else "")
            )
        if known:
            gang.priority = max(known)
        elif gang.group.priority_class_name is not None and not gang.implicit:
            gang.priority = classes.get(gang.group.priority_class_name, default_priority)
            unknown.add(gang.group.priority_class_name)
        elif gang.group.api in _PRIORITY_FROM_GROUP and not gang.implicit:
            # Volcano's scheduler cache and Godel give a PodGroup without a class the default
            # priority, whatever its pods ask; scheduler-plugins sorts by the pods' own.
            gang.priority = default_priority
        else:
            gang.priority = max(
                (pod_priority(p, classes, default_priority) for p in pods), default=default_priority
            )
            unknown.update(p.priority_class_name for p in pods if p.priority is None and p.priority_class_name)
    absent = sorted(unknown - set(classes))
    warnings += _one_by_one_or_together(
        absent,
        lambda name: (
            f"PriorityClass {name} is not in the snapshot: its groups get the default priority {default_priority} "
            "(add the output of kubectl get priorityclasses -o yaml)"
        ),
        f"{len(absent)} PriorityClasses are not in the snapshot ({listed(absent)}): their groups get the default "
        f"priority {default_priority} (add the output of kubectl get priorityclasses -o yaml)",
    )
    absent_workload = sorted(unknown_workload)
    warnings += _one_by_one_or_together(
        absent_workload,
        lambda name: (
            f"WorkloadPriorityClass {name} is not in the snapshot: Kueue makes no Workload for the groups that "
            "name it until it exists; they are planned at their pods' priority (add the output of "
            "kubectl get workloadpriorityclasses -o yaml)"
        ),
        f"{len(absent_workload)} WorkloadPriorityClasses are not in the snapshot ({listed(absent_workload)}): Kueue "
        "makes no Workload for the groups that name them until they exist; they are planned at their pods' "
        "priority (add the output of kubectl get workloadpriorityclasses -o yaml)",
    )
    job_groups = _job_groups(all_gangs)
    job_groups.sort(key=lambda jg: jg.order)
    alone = {jg.key: jg.top for jg in job_groups if not jg.top.group.sub_group}
    for jg in job_groups:
        if jg.top.group.sub_group and jg.key in alone:
            kind = IMPLICIT_KINDS.get(alone[jg.key].group.api.value, "PodGroup")
            warnings.append(
                f"{kind} {jg.key} has no subGroup and shares its name with the JobGroup of subGroup "
                f"{jg.top.group.sub_group!r} ({listed([g.key for g in jg.gangs])}): they are two JobGroups, "
                "named alike in the table, explain and Plans"
            )
    return Grouping(job_groups, warnings, unmodelled, apart, near, spread)


def _one_domain(gangs: Sequence[Gang], near: Affinity) -> dict[int, tuple[str, frozenset[str]]]:
    """Per pending pod (by ``id``), its gang, named by its first pending pod (gang keys may
    repeat, pod keys do not), and the topologyKeys the gang asks to be in one domain of: its
    PodGroup's required terms, Kueue's required level, its pods' affinity to each other alone.
    Anti-affinity at such a key toward another gang held to one domain of it is a choice of
    domains, which is modelled (``AntiAffinity.exclusive``)."""
    found: dict[int, tuple[str, frozenset[str]]] = {}
    for gang in gangs:
        keys = frozenset(
            {*gang.group.required_topology, *near.kept_together.get(gang.key, ())}
            | {kueue.topology_requests(pod.annotations)[0] for pod in gang.members} - {""}
        )
        for pod in gang.pending:
            found[id(pod)] = (gang.pending[0].key, keys)
    return found


def _workload_priority_classes(gang: Gang) -> list[str]:
    """The WorkloadPriorityClasses the members of a Workload Kueue makes name, sorted, '' for
    a member naming none; empty when none does. Kueue makes one for a Kueue pod group and for
    a lone pod it queues (``kueue.managed``); other groups' pods name it in vain."""
    if gang.group.api is PodGroupAPI.KUEUE_POD_GROUP or (
        gang.group.api is PodGroupAPI.POD and all(kueue.managed(pod.labels) for pod in gang.members)
    ):
        names = sorted({kueue.workload_priority_class(pod.labels) for pod in gang.members})
        return [] if names == [""] else names
    return []


def _one_by_one_or_together(items: Sequence[str], one: Callable[[str], str], together: str) -> list[str]:
    """A line per item up to _ONE_BY_ONE_UP_TO, else ``together`` alone: a dump of 1,300 pods
    printed 500 warning lines."""
    return [one(item) for item in items] if len(items) <= _ONE_BY_ONE_UP_TO else [together]


def _unmodelled(
    gangs: Sequence[Gang],
    guards: Sequence[Pod] = (),
    loose: Sequence[str] = (),
    beyond: Sequence[str] = (),
    together: Sequence[str] = (),
    spread: Spread | None = None,
) -> dict[str, list[str]]:
    """Each hard rule pending pods or their PodGroups ask that gangplan does not model, and
    who asks: a plan applied as Bindings bypasses the scheduler's own check of it. A running
    pod's required anti-affinity binds the pending pods it selects too (kube-scheduler's
    InterPodAffinity checks existing pods' terms against the incoming one). ``beyond``: pending
    pods whose terms wider than the node select other pending pods; ``together``: pending pods
    whose pod affinity is not modelled (``Affinity.together``); ``spread``, the spread
    constraints that are not (``Spread.loose``, ``Spread.beyond``)."""
    asking: dict[str, list[str]] = defaultdict(list)
    pending = [pod for gang in gangs for pod in gang.pending]
    wide = set(beyond)
    for gang in gangs:
        if not gang.pending:
            continue
        for rule in gang.group.unmodelled:
            asking[rule].append(f"PodGroup {gang.key}")
        if gang.group.api is PodGroupAPI.POD and any(
            kueue.topology_requests(pod.annotations) != ("", "") and any(o.controller for o in pod.owners) for pod in gang.pending
        ):
            # A Job's pods are one PodSet to Kueue, whose term holds for them all; a bare pod is its own.
            asking["Kueue topology requests on a controller's pods of no pod group (each is planned alone)"].append(f"pod {gang.key}")
        for pod in gang.pending:
            for rule in pod.unmodelled:
                asking[rule].append(f"pod {pod.key}")
            if pod.key in wide or any(not kept_out(term) for term in pod.anti_affinity):
                asking[ANTI_AFFINITY_BEYOND].append(f"pod {pod.key}")
    asking[ANTI_AFFINITY_LOOSE] += [f"pod {pod_key}" for pod_key in loose]
    asking[AFFINITY_TOGETHER] += [f"pod {pod_key}" for pod_key in together]
    if spread is not None:
        asking[SPREAD_BEYOND] += [f"pod {pod_key}" for pod_key in spread.beyond]
        asking[SPREAD_LOOSE] += [f"pod {pod_key}" for pod_key in spread.loose]
    if guards and pending:
        by_label, by_key = _indexed(pending)
        # Many running pods share a term (a Deployment's replicas): each distinct one is weighed once.
        selects_some: dict[tuple[object, ...], bool] = {}
        for guard in guards:
            for term in (t for t in guard.anti_affinity if not kept_out(t)):
                key = _term_key(term)
                if key not in selects_some:
                    selects_some[key] = any(_selects(term, pod) for pod in _candidates(term, by_label, by_key, pending))
                if selects_some[key]:
                    asking["running pods' required pod anti-affinity"].append(f"pod {guard.key}")
                    break
    return {rule: who for rule, who in sorted(asking.items()) if who}


ANTI_AFFINITY = "podAntiAffinity "  # a one-a-node resource: pods sharing a term, one to a node
HOSTNAME_LABEL = "kubernetes.io/hostname"  # the node itself, as a topology key
ANTI_AFFINITY_BEYOND = (
    "required pod anti-affinity at a topologyKey other than kubernetes.io/hostname between pending pods, "
    "or with a non-empty namespaceSelector"
)
ANTI_AFFINITY_LOOSE = "required pod anti-affinity between pending pods that do not all carry the term and match it"


def kept_apart(term: PodAffinityTerm) -> bool:
    """The anti-affinity gangplan models: on the node itself, in namespaces the term names or in
    every one (``namespaceSelector: {}``); another namespaceSelector reads Namespace labels a
    snapshot lacks. A term with no labelSelector selects no pod, so it asks nothing."""
    return term.match_labels is None or (term.topology_key == HOSTNAME_LABEL and kept_out(term))


def kept_out(term: PodAffinityTerm) -> bool:
    """The anti-affinity gangplan models against running pods, at any topologyKey: that of
    ``kept_apart`` without its key. Between pending pods a wider key is a cap per domain, which
    is not modelled (``AntiAffinity.beyond``), but between gangs each held to one domain of it
    (``AntiAffinity.exclusive``)."""
    return term.match_labels is None or term.namespaces is not None or term.every_namespace


def _wider(term: PodAffinityTerm) -> bool:
    return term.match_labels is not None and term.topology_key != HOSTNAME_LABEL and kept_out(term)


@dataclass(frozen=True, slots=True)
class AntiAffinity:
    """Required pod anti-affinity on the node (kube-scheduler's InterPodAffinity), as the
    planner takes it: ``blocked``, per pending pod (by ``id``), the nodes where a running pod
    its terms select runs, or one whose own term selects it; ``units``, per pending pod, one
    unit of a resource each node has one of, per term it shares with other pending pods that
    carry it and match it, so those go one to a node; ``loose``, pending pods whose terms
    select pending pods not kept apart from them that way (warned about). At a topologyKey
    wider than the node, ``blocked`` holds each node whose value of the key is that of the node
    of such a running pod; ``beyond``, pending pods whose wider terms select other pending
    pods, whom nothing keeps apart (warned about); ``exclusive``, per (key, gang), the other
    gangs its pods' terms at that key select pending pods of, and those terms (each gang named
    by its first pending pod), where each gang is held to one domain of the key and selects no
    other pod of its own (JobSet's exclusive placement): each pair takes distinct domains,
    which is modelled where the key is a level (stricter, where only some pods are selected).
    ``unheld``: the terms of ``loose`` and ``beyond``, each a (pod key, index in the pod's
    ``anti_affinity``): a warned pod's other terms are held, and checked."""

    blocked: Mapping[int, frozenset[str]]
    units: Mapping[int, Mapping[str, int]]
    loose: tuple[str, ...]
    beyond: tuple[str, ...] = ()
    exclusive: Mapping[tuple[str, str], tuple[frozenset[str], tuple[TermOf, ...]]] = field(default_factory=dict)
    unheld: frozenset[TermOf] = frozenset()


TermOf = tuple[str, int]  # a pod's term (or spread constraint): the pod's key, and its index among them


def _terms_of(pod: Pod, key: tuple) -> list[TermOf]:
    """The pod's terms alike to the one ``_term_key`` gave ``key``."""
    return [(pod.key, i) for i, t in enumerate(pod.anti_affinity) if _term_key(t) == key]


def repels(pod: Pod, other: Pod) -> bool:
    """Whether either pod's anti-affinity on the node selects the other: one running keeps the
    other off its node (kube-scheduler checks both ways)."""
    return any(kept_apart(t) and _selects(t, other) for t in pod.anti_affinity) or any(
        kept_apart(t) and _selects(t, pod) for t in other.anti_affinity
    )


def wider_keys(pods: Sequence[Pod]) -> set[str]:
    """The topologyKeys wider than the node that pods' modelled anti-affinity terms name."""
    return {t.topology_key for pod in pods for t in pod.anti_affinity if _wider(t)}


def repels_in_domain(pod: Pod, other: Pod, key: str) -> bool:
    """Whether either pod's anti-affinity at ``key``, wider than the node, selects the other:
    one running keeps the other out of its domain of ``key`` (kube-scheduler checks both ways)."""
    return any(_wider(t) and t.topology_key == key and _selects(t, other) for t in pod.anti_affinity) or any(
        _wider(t) and t.topology_key == key and _selects(t, pod) for t in other.anti_affinity
    )


def _indexed(pods: Sequence[Pod]) -> tuple[dict[tuple[str, str], list[Pod]], dict[str, list[Pod]]]:
    by_label: dict[tuple[str, str], list[Pod]] = defaultdict(list)
    by_key: dict[str, list[Pod]] = defaultdict(list)
    for pod in pods:
        for item in pod.labels.items():
            by_label[item].append(pod)
            by_key[item[0]].append(pod)
    return by_label, by_key


def _term_key(term: PodAffinityTerm) -> tuple:
    labels = None if term.match_labels is None else tuple(sorted(term.match_labels.items()))
    return labels, term.match_expressions, term.namespaces, term.topology_key, term.every_namespace


def _shown_term(term: PodAffinityTerm) -> str:
    return f"{ANTI_AFFINITY}{_shown_selector(term)}"


def _shown_selector(term: PodAffinityTerm) -> str:
    parts = [f"{k}={v}" for k, v in sorted((term.match_labels or {}).items())]
    parts += [f"{r.key} {r.operator}{' (' + ','.join(r.values) + ')' if r.values else ''}" for r in term.match_expressions]
    return f"{','.join(term.namespaces or ('*',))}/{','.join(parts) or '* (every pod)'}"


def anti_affinity(
    pending: Sequence[Pod],
    running: Sequence[Pod],
    nodes: Sequence[Node] = (),
    one_domain: Mapping[int, tuple[str, frozenset[str]]] | None = None,
) -> AntiAffinity:
    if not any(p.anti_affinity for p in pending) and not any(p.anti_affinity for p in running):
        return AntiAffinity({}, {}, ())
    blocked: dict[int, set[str]] = defaultdict(set)
    pending_index, running_index = _indexed(pending), _indexed(running)
    carriers: dict[tuple, list[Pod]] = defaultdict(list)
    terms: dict[tuple, PodAffinityTerm] = {}
    for pod in pending:
        for term in pod.anti_affinity:
            if term.match_labels is not None and kept_apart(term):
                key = _term_key(term)
                terms.setdefault(key, term)
                if not carriers[key] or carriers[key][-1] is not pod:
                    carriers[key].append(pod)
    units: dict[int, dict[str, int]] = defaultdict(dict)
    unheld: set[TermOf] = set()
    names: dict[str, int] = defaultdict(int)
    everyone, bound = list(pending), list(running)
    for key, term in terms.items():
        near = {e.node_name for e in _candidates(term, *running_index, bound) if e.node_name is not None and _selects(term, e)}
        selected = [q for q in _candidates(term, *pending_index, everyone) if _selects(term, q)]
        members = [p for p in carriers[key] if _selects(term, p)]
        kept = {id(p) for p in members}
        outside = any(id(q) not in kept for q in selected)  # selected, and not keeping apart
        for pod in carriers[key]:
            blocked[id(pod)] |= near
            # A member is kept apart only from members; a carrier the term does not select, from no one.
            if outside or (id(pod) not in kept and selected):
                unheld.update(_terms_of(pod, key))
        if len(members) > 1:
            name = _shown_term(term)
            names[name] += 1
            name += f" #{names[name]}" if names[name] > 1 else ""
            for pod in members:
                units[id(pod)][name] = 1
    guarded: dict[tuple, set[str]] = defaultdict(set)  # a running pod's term -> the nodes it holds
    for guard in running:
        for term in guard.anti_affinity:
            if term.match_labels is not None and kept_apart(term) and guard.node_name is not None:
                key = _term_key(term)
                terms.setdefault(key, term)
                guarded[key].add(guard.node_name)
    for key, held in guarded.items():
        for pod in _candidates(terms[key], *pending_index, everyone):
            if _selects(terms[key], pod):
                blocked[id(pod)] |= held
    loose = tuple(sorted({pod for pod, _ in unheld}))
    domains, beyond, exclusive = _domains_apart(pending, running, nodes, pending_index, running_index, one_domain or {})
    wide = tuple(sorted({pod for pod, _ in beyond}))
    if not domains:
        return AntiAffinity(
            {k: frozenset(v) for k, v in blocked.items() if v}, dict(units), loose, wide, exclusive, frozenset(unheld | beyond)
        )
    by_value = {label: _nodes_by_value(nodes, label) for label in {label for held in domains.values() for label, _ in held}}
    # Thousands of pods kept out of one zone of thousands of nodes share one set, not a copy each.
    made: dict[tuple[frozenset[str], frozenset[tuple[str, str]]], frozenset[str]] = {}
    ruled_out: dict[int, frozenset[str]] = {}
    for pod_id in dict.fromkeys([*blocked, *domains]):
        which = (frozenset(blocked.get(pod_id, ())), frozenset(domains.get(pod_id, ())))
        if which not in made:
            made[which] = which[0].union(*(by_value[label].get(v, ()) for label, v in which[1]))
        if made[which]:
            ruled_out[pod_id] = made[which]
    return AntiAffinity(ruled_out, dict(units), loose, wide, exclusive, frozenset(unheld | beyond))


def _nodes_by_value(nodes: Sequence[Node], key: str) -> dict[str, list[str]]:
    """The names of the nodes with each value of label ``key``: its domains. A node without the
    key is in none (kube-scheduler counts only the topology pairs a node has)."""
    found: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        if (value := node.labels.get(key)) is not None:
            found[value].append(node.name)
    return found


def _domains_apart(
    pending: Sequence[Pod],
    running: Sequence[Pod],
    nodes: Sequence[Node],
    pending_index: tuple[dict[tuple[str, str], list[Pod]], dict[str, list[Pod]]],
    running_index: tuple[dict[tuple[str, str], list[Pod]], dict[str, list[Pod]]],
    one_domain: Mapping[int, tuple[str, frozenset[str]]],
) -> tuple[dict[int, set[tuple[str, str]]], set[TermOf], dict[tuple[str, str], tuple[frozenset[str], tuple[TermOf, ...]]]]:
    """kube-scheduler's InterPodAffinity at a topologyKey wider than the node, against running
    pods, both ways: per pending pod (by ``id``), the (key, value) domains where a running pod
    its term selects runs, or one whose term selects it. A running pod on a node without the
    key holds no domain, and a node without it is in none (satisfyPodAntiAffinity counts only
    the pairs a node has). Also the pending pods' wider terms that select another pending pod:
    per pair of gangs each held to one domain of the key (``one_domain``), those selecting
    only the other's pods (``AntiAffinity.exclusive``), and the rest (``beyond``)."""
    if not any(_wider(t) for pods in (pending, running) for pod in pods for t in pod.anti_affinity):
        return {}, set(), {}
    labels = {node.name: node.labels for node in nodes}

    def domain(pod: Pod, key: str) -> tuple[str, str] | None:
        value = labels.get(pod.node_name or "", {}).get(key)
        return None if value is None else (key, value)

    domains: dict[int, set[tuple[str, str]]] = defaultdict(set)
    carriers: dict[tuple, list[Pod]] = defaultdict(list)
    terms: dict[tuple, PodAffinityTerm] = {}
    for pod in pending:
        for term in pod.anti_affinity:
            if _wider(term):
                key = _term_key(term)
                terms.setdefault(key, term)
                if not carriers[key] or carriers[key][-1] is not pod:
                    carriers[key].append(pod)
    beyond: set[TermOf] = set()
    apart: dict[tuple[str, str], set[str]] = defaultdict(set)  # (key, gang) -> the gangs it keeps apart from
    carrying: dict[tuple[str, str], set[TermOf]] = defaultdict(set)  # (key, gang) -> its pods' terms that ask it
    everyone, bound = list(pending), list(running)
    selecting = _Selecting()
    near_of: dict[tuple[int, str], set[tuple[str, str]]] = {}  # (alike running pods, key) -> their domains
    held_of: dict[tuple[int, str], dict[str, int] | None] = {}  # (alike pending pods, key) -> _gangs_held
    for key, term in terms.items():
        at = term.topology_key
        near: set[tuple[str, str]] = set()
        for group in selecting.groups(term, _candidates(term, *running_index, bound)):
            if (id(group), at) not in near_of:
                near_of[id(group), at] = {d for e in group if (d := domain(e, at))}
            near |= near_of[id(group), at]
        selected = selecting.groups(term, _candidates(term, *pending_index, everyone))
        count = sum(len(group) for group in selected)
        gangs = _gangs_held(selected, at, one_domain, held_of)
        kept: dict[str, list[Pod]] = defaultdict(list)
        for pod in carriers[key]:
            domains[id(pod)] |= near
            if count > 1 or (count == 1 and selected[0][0] is not pod):
                mine = one_domain.get(id(pod))
                if gangs is None or mine is None or at not in mine[1] or (
                    (own := gangs.get(mine[0], 0)) and own > _selects(term, pod)  # its own gang's other pods
                ):
                    beyond.update(_terms_of(pod, key))
                else:
                    kept[mine[0]].append(pod)
        for gang, pods in kept.items():
            apart[at, gang].update(g for g in gangs or () if g != gang)
            carrying[at, gang].update(t for p in pods for t in _terms_of(p, key))
    guarded: dict[tuple, set[tuple[str, str]]] = defaultdict(set)  # a running pod's term -> the domains it holds
    for guard in running:
        for term in guard.anti_affinity:
            if _wider(term) and (there := domain(guard, term.topology_key)) is not None:
                key = _term_key(term)
                terms.setdefault(key, term)
                guarded[key].add(there)
    for key, held in guarded.items():
        for pod in _candidates(terms[key], *pending_index, everyone):
            if _selects(terms[key], pod):
                domains[id(pod)] |= held
    return (
        {k: v for k, v in domains.items() if v},
        beyond,
        {kept: (frozenset(others), tuple(sorted(carrying[kept]))) for kept, others in sorted(apart.items()) if others},
    )


def _gangs_held(
    selected: Sequence[Sequence[Pod]],
    key: str,
    one_domain: Mapping[int, tuple[str, frozenset[str]]],
    seen: dict[tuple[int, str], dict[str, int] | None],
) -> dict[str, int] | None:
    """The gangs of ``selected`` (pending pods a term at ``key`` selects, in groups of alike
    pods that ``seen`` remembers by group) and how many of their pods it selects, when each is
    held to one domain of ``key``; else None. A term whose carrier's gang is among them only
    for the carrier itself keeps that gang apart from the others: the two take distinct
    domains (``AntiAffinity.exclusive``)."""
    gangs: dict[str, int] = defaultdict(int)
    for group in selected:
        if (id(group), key) not in seen:
            found: dict[str, int] | None = defaultdict(int)
            for q in group:
                theirs = one_domain.get(id(q))
                if theirs is None or key not in theirs[1]:
                    found = None
                    break
                found[theirs[0]] += 1  # type: ignore[index]
            seen[id(group), key] = found
        if (counts := seen[id(group), key]) is None:
            return None
        for gang, n in counts.items():
            gangs[gang] += n
    return gangs


class _Selecting:
    """The pods of ``candidates`` a term selects, each distinct (namespace, labels the term
    reads) weighed once: JobSet's exclusive placement gives each job's pods a term of their
    own against every other job's, and 245 such jobs weighed 2,143 pods each one by one
    (2.5 s at 2,048 nodes). Pods alike are grouped once per candidate list and labels read,
    and the groups indexed by label value, so a term is sets of groups met, not a test of each
    (925 jobs each against 924 others at 8,192 nodes: 855 k tests, half of group_pods' 2 s)."""

    def __init__(self) -> None:
        # Each candidate list is held here, so its id names it while this lives.
        self._grouped: dict[tuple[int, tuple[str, ...]], _Alike] = {}

    def __call__(self, term: PodAffinityTerm, candidates: Sequence[Pod]) -> list[Pod]:
        return [q for group in self.groups(term, candidates) for q in group]

    def groups(self, term: PodAffinityTerm, candidates: Sequence[Pod]) -> list[list[Pod]]:
        """The selected pods in their groups of alike pods: the same list for the same pods."""
        if term.match_labels is None:
            return []
        keys = tuple(sorted({*term.match_labels, *(r.key for r in term.match_expressions)}))
        found = self._grouped.get((id(candidates), keys))
        if found is None or found.candidates is not candidates:
            found = self._grouped[id(candidates), keys] = _Alike(candidates, keys)
        return found.selected(term)


class _Alike:
    """``candidates`` in groups alike in namespace and the values of ``keys``, with the groups
    that have each (position, value): position 0 is the namespace, then each key in order."""

    def __init__(self, candidates: Sequence[Pod], keys: tuple[str, ...]) -> None:
        alike: dict[tuple[str | None, ...], list[Pod]] = defaultdict(list)
        for q in candidates:
            alike[(q.namespace, *(q.labels.get(k) for k in keys))].append(q)
        self.candidates = candidates
        self.shapes = list(alike)
        self.groups = list(alike.values())
        self.position = {k: at for at, k in enumerate(keys, start=1)}
        self._having: dict[tuple[int, str | None], set[int]] = defaultdict(set)
        for i, shape in enumerate(self.shapes):
            for at, value in enumerate(shape):
                self._having[at, value].add(i)

    def _with(self, at: int, values: Iterable[str | None]) -> set[int]:
        return set().union(*(self._having.get((at, v), ()) for v in values))

    def selected(self, term: PodAffinityTerm) -> list[list[Pod]]:
        """As ``_selects`` asked of each group's first pod, in the groups' order."""
        assert term.match_labels is not None
        met: list[set[int]] = []
        unmet: list[set[int]] = []
        if term.namespaces is not None:
            met.append(self._with(0, term.namespaces))
        met += [self._having.get((self.position[k], v), set()) for k, v in term.match_labels.items()]
        for r in term.match_expressions:
            at = self.position[r.key]
            if r.operator == "In":
                met.append(self._with(at, r.values))
            elif r.operator == "NotIn":
                unmet.append(self._with(at, r.values))
            elif r.operator == "Exists":
                unmet.append(self._having.get((at, None), set()))
            elif r.operator == "DoesNotExist":
                met.append(self._having.get((at, None), set()))
            else:
                met.append({i for i, shape in enumerate(self.shapes) if _requirement_matches(r, shape[at])})
        chosen = set.intersection(*met) if met else set(range(len(self.groups)))
        chosen.difference_update(*unmet)
        return [self.groups[i] for i in sorted(chosen)]


AFFINITY_TOGETHER = "required pod affinity between pending pods, or with a non-empty namespaceSelector"


@dataclass(frozen=True, slots=True)
class Affinity:
    """Required pod affinity (kube-scheduler's InterPodAffinity), as the planner takes it:
    ``only``, per pending pod (by ``id``), the nodes its terms allow, none for a pod they leave
    nowhere to go, and a pod they let go anywhere absent (the allowed nodes, not the ruled-out
    ones: a running pod's zone is a few nodes of 20,480); ``together``, pending pods whose terms
    ask what is not modelled (warned about): to join pending pods when no running pod matches,
    or to read a namespaceSelector other than ``{}``; ``kept_together``, per gang whose pending
    pods are affine to each other alone, its terms' topology keys: kube-scheduler binds the first
    anywhere with the keys and each next one beside a bound one, so all share one domain of each
    key, a required topology term there (planned as Godel's podGroupAffinity.required is)."""

    only: Mapping[int, frozenset[str]]
    together: tuple[str, ...] = ()
    kept_together: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def pod_affinity(
    pending: Sequence[Pod], running: Sequence[Pod], nodes: Sequence[Node] = (), gangs: Sequence[Gang] = ()
) -> Affinity:
    """satisfyPodAffinity against running pods. A running pod counts when it matches every term
    of the pending pod, and puts its node's value of each term's key among that term's domains;
    a node passes when it has each key, at a value among the term's domains. When no running
    pod counts and the pod matches its own terms it may go to any node with the keys (the first
    of a group affine to itself); when it does not, to none. Pending pods that match are not
    counted: a pod placed in a running pod's domain stays right once they are bound (so the
    rule is exact or stricter), and one that joins pending pods alone is in ``together``, unless
    they are its gang's pending pods, all of them, each carrying the same terms: then the gang is
    in ``kept_together`` (its pods need nodes with the keys, as the first does). A gang with
    running members is not: a required term would pin it to their domains, which its pods'
    affinity may not ask. Pods with one outcome share one set of nodes."""
    if not any(pod.affinity for pod in pending):
        return Affinity({})
    named = {node.name: node for node in nodes}
    pending_index, running_index = _indexed(pending), _indexed(running)
    everyone, bound = list(pending), list(running)
    in_domain: dict[str, dict[str, list[str]]] = {}  # key -> value -> the nodes with it

    def value(node: Node, key: str) -> str | None:
        return node.name if key == HOSTNAME_LABEL else node.labels.get(key)

    def domain_nodes(key: str, values: Iterable[str]) -> set[str]:
        if key == HOSTNAME_LABEL:
            return {name for name in values if name in named}
        if key not in in_domain:
            in_domain[key] = _nodes_by_value(nodes, key)
        return {name for v in values for name in in_domain[key].get(v, ())}

    counted: dict[tuple, tuple[bool, tuple[frozenset[str], ...]]] = {}  # terms -> any counted, domains per term
    joining: dict[tuple, list[Pod]] = {}  # terms -> the pending pods that match them all
    made: dict[tuple, frozenset[str] | None] = {}  # outcome -> the nodes allowed (None: every one)
    only: dict[int, frozenset[str]] = {}
    together: list[str] = []
    gang_of = {id(p): gang for gang in gangs for p in gang.pending}
    kept_together: dict[str, tuple[str, ...]] = {}
    for pod in pending:
        terms = pod.affinity
        if not terms:
            continue
        if any(t.namespaces is None and not t.every_namespace for t in terms):
            together.append(pod.key)
            continue
        key = tuple(_term_key(t) for t in terms)
        if key not in counted:
            domains: list[set[str]] = [set() for _ in terms]
            unknown = False  # a matching pod on a node the snapshot lacks: counted, in no known domain
            for other in _candidates(terms[0], *running_index, bound):
                if all(_selects(t, other) for t in terms):
                    node = named.get(other.node_name or "")
                    if node is None:
                        unknown = True
                        continue
                    for held, term in zip(domains, terms):
                        if (there := value(node, term.topology_key)) is not None:
                            held.add(there)
            counted[key] = (unknown or any(domains), tuple(frozenset(d) for d in domains))
        some, domains_of = counted[key]
        if some:
            outcome: tuple = ("near", tuple(zip((t.topology_key for t in terms), domains_of)))
            if outcome not in made:
                allowed = set.intersection(*(domain_nodes(t.topology_key, d) for t, d in zip(terms, domains_of)))
                made[outcome] = None if len(allowed) == len(named) else frozenset(allowed)
        else:
            if key not in joining:  # a gang of 256 pods asks once, not once a pod
                joining[key] = [q for q in _candidates(terms[0], *pending_index, everyone) if all(_selects(t, q) for t in terms)]
            matching = joining[key]
            keys = tuple(sorted({t.topology_key for t in terms}))
            if matching and _affine_to_itself(gang_of.get(id(pod)), key, matching):
                kept_together[gang_of[id(pod)].key] = keys  # a gang of one pod too: it is in one domain
            elif any(q is not pod for q in matching):
                together.append(pod.key)
                continue
            outcome = ("first", keys) if matching else ("nowhere",)
            if outcome not in made:
                if matching:
                    allowed = {n.name for n in nodes if all(value(n, k) is not None for k in keys)}
                    made[outcome] = None if len(allowed) == len(named) else frozenset(allowed)
                else:
                    made[outcome] = frozenset()
        if (allows := made[outcome]) is not None:
            only[id(pod)] = allows
    return Affinity(only, tuple(sorted(together)), kept_together)


def self_affine_keys(snapshot: Snapshot) -> frozenset[str]:
    """The topology keys of the required pod affinity terms pending pods carry and match
    themselves: those of a gang affine to itself alone (``Affinity.kept_together``) among them,
    which are required terms, so levels to infer as the groups' named keys are. Levels are
    resolved from the snapshot alone (by diff and topology too), so this is a pass over the pods,
    not the grouping: a pod that matches its own terms and joins running pods names its key too,
    as a level, which nothing requires of anyone else."""
    return frozenset(
        t.topology_key
        for pod in snapshot.pods
        if pod.affinity and is_pending(pod) and all(_selects(t, pod) for t in pod.affinity)
        for t in pod.affinity
    )


def _affine_to_itself(gang: Gang | None, terms: tuple, matching: Sequence[Pod]) -> bool:
    """Whether the pending pods that match a set of terms are exactly one gang's pending pods,
    each carrying those terms (in any order): no pod outside it to join, none inside it free."""
    if gang is None or gang.running or len(gang.pending) != len(matching):
        return False
    wanted = frozenset(terms)
    ours = {id(p) for p in gang.pending}
    return all(id(q) in ours for q in matching) and all(
        frozenset(_term_key(t) for t in p.affinity) == wanted for p in gang.pending
    )


SPREAD = "topologySpread "  # a spread constraint's cap on each node, counted as a resource
SPREAD_BEYOND = "topologySpreadConstraints with DoNotSchedule at a topologyKey other than kubernetes.io/hostname"
SPREAD_LOOSE = (
    "topologySpreadConstraints with DoNotSchedule at kubernetes.io/hostname between pending pods that do not all "
    "carry the constraint and match its labelSelector"
)


@dataclass(frozen=True, slots=True)
class Spread:
    """DoNotSchedule topologySpreadConstraints at kubernetes.io/hostname (kube-scheduler's
    PodTopologySpread), as the planner takes them: the pods a constraint's labelSelector
    matches on a node may number at most maxSkew over the fewest on any eligible node. The
    fewest is taken over running pods alone, a constant per node: placed pods can only raise
    it, so the rule is exact or stricter. Each constraint is a resource: ``units``, per pending
    pod (by ``id``), one unit of each it carries; ``caps``, per resource, every node's room
    (maxSkew + fewest) and the lesser room of the nodes matching pods run on (less those, never
    below 0): a few nodes each, not a map of 20,480 per constraint. Modelled only where the pending
    pods carrying it are exactly those it matches; ``loose``, the carriers where they are not,
    and ``beyond``, pods whose constraints are at a wider topologyKey (both warned about);
    ``unheld``, those constraints, each (pod key, index in the pod's ``spread``)."""

    units: Mapping[int, Mapping[str, int]]
    caps: Mapping[str, tuple[int, Mapping[str, int]]]
    loose: tuple[str, ...] = ()
    beyond: tuple[str, ...] = ()
    unheld: frozenset[TermOf] = frozenset()


def _spread_key(constraint: TopologySpreadConstraint) -> tuple:
    c = constraint
    return _term_key(c.selector), c.max_skew, c.min_domains, c.node_affinity_policy, c.node_taints_policy


def _eligible(constraint: TopologySpreadConstraint, pod: Pod, node: Node, known: Tolerated) -> bool:
    """Whether ``node`` is one of the domains the fewest is taken over, for ``pod``."""
    if constraint.node_affinity_policy == "Honor" and not (
        labels_match(pod.node_selector, node.labels)
        and (pod.node_affinity is None or node_selector_matches(pod.node_affinity, node))
    ):
        return False
    return constraint.node_taints_policy != "Honor" or _untolerated(node, known) is None


def _spread_name(constraint: TopologySpreadConstraint) -> str:
    fewest = f" minDomains={constraint.min_domains}" if constraint.min_domains > 1 else ""
    return f"{SPREAD}{HOSTNAME_LABEL} maxSkew={constraint.max_skew}{fewest} {_shown_selector(constraint.selector)}"


def _fewest(constraint: TopologySpreadConstraint, pod: Pod, nodes: Sequence[Node], here: Mapping[str, int]) -> int:
    """The fewest matching running pods on a node eligible for ``pod``; 0 when fewer nodes
    are eligible than minDomains. The scan stops at the first eligible node none run on, which
    a cluster of thousands of nodes has near its start."""
    known = tolerated(pod.tolerations)
    least: int | None = None
    eligible = 0
    for node in nodes:
        if _eligible(constraint, pod, node, known):
            eligible += 1
            count = here.get(node.name, 0)
            least = count if least is None else min(least, count)
            if least == 0:  # the fewest, and the answer when too few are eligible too
                return 0
    return 0 if eligible < constraint.min_domains or least is None else least


def topology_spread(pending: Sequence[Pod], running: Sequence[Pod], nodes: Sequence[Node] = ()) -> Spread:
    """See ``Spread``. Running pods count while they hold room and are not terminating, as
    kube-scheduler counts them. Carriers whose node filters differ see different eligible
    nodes; the smallest fewest of theirs caps them all."""
    if not any(pod.spread for pod in pending):
        return Spread({}, {})
    counted_pods = [pod for pod in running if not pod.deleting]
    pending_index, running_index = _indexed(pending), _indexed(counted_pods)
    carriers: dict[tuple, list[Pod]] = defaultdict(list)
    constraints: dict[tuple, TopologySpreadConstraint] = {}
    beyond: list[str] = []
    unheld: set[TermOf] = set()
    for pod in pending:
        for i, constraint in enumerate(pod.spread):
            if constraint.selector.topology_key != HOSTNAME_LABEL:
                beyond.append(pod.key)  # a node without the key fails it too, selector or none
                unheld.add((pod.key, i))
                continue
            if constraint.selector.match_labels is None:
                continue  # no labelSelector matches no pod: the skew is always 0
            key = _spread_key(constraint)
            constraints.setdefault(key, constraint)
            if not carriers[key] or carriers[key][-1] is not pod:
                carriers[key].append(pod)
    units: dict[int, dict[str, int]] = defaultdict(dict)
    caps: dict[str, tuple[int, dict[str, int]]] = {}
    loose: set[str] = set()
    names: dict[str, int] = defaultdict(int)
    everyone, bound = list(pending), list(counted_pods)
    for key, constraint in constraints.items():
        term = constraint.selector
        members = carriers[key]
        selected = [q for q in _candidates(term, *pending_index, everyone) if _selects(term, q)]
        if {id(q) for q in selected} != {id(p) for p in members}:
            loose.update(p.key for p in members)
            unheld.update((p.key, i) for p in members for i, c in enumerate(p.spread) if _spread_key(c) == key)
            continue
        here: dict[str, int] = defaultdict(int)
        for other in _candidates(term, *running_index, bound):
            if other.node_name is not None and _selects(term, other):
                here[other.node_name] += 1
        filters = {(tuple(sorted(p.node_selector.items())), p.node_affinity, p.tolerations): p for p in members}
        fewest = min((_fewest(constraint, pod, nodes, here) for pod in filters.values()), default=0) if here else 0
        name = _spread_name(constraint)
        names[name] += 1
        name += f" #{names[name]}" if names[name] > 1 else ""
        room = constraint.max_skew + fewest
        caps[name] = (room, {node: max(0, room - count) for node, count in here.items()})
        for pod in members:
            units[id(pod)][name] = 1
    return Spread(dict(units), caps, tuple(sorted(loose)), tuple(sorted(set(beyond))), frozenset(unheld))


def _candidates(
    term: PodAffinityTerm, by_label: Mapping[tuple[str, str], list[Pod]], by_key: Mapping[str, list[Pod]], pending: list[Pod]
) -> Sequence[Pod]:
    """The pending pods a term may select, from one of its label requirements, the rarest of its
    labels (an index, so a large dump's many guards cost no more than their labels)."""
    if term.match_labels is None:
        return ()
    if term.match_labels:
        return min((by_label.get(item, ()) for item in term.match_labels.items()), key=len)
    for r in term.match_expressions:
        if r.operator == "In":
            return [pod for value in r.values for pod in by_label.get((r.key, value), ())]
        if r.operator == "Exists":
            return by_key.get(r.key, ())
    return pending


def _selects(term: PodAffinityTerm, pod: Pod) -> bool:
    if term.match_labels is None or (term.namespaces is not None and pod.namespace not in term.namespaces):
        return False
    return labels_match(term.match_labels, pod.labels) and all(
        _requirement_matches(r, pod.labels.get(r.key)) for r in term.match_expressions
    )


def unmodelled_warnings(asking: Mapping[str, Sequence[str]], consequence: str = "the plan may break it") -> list[str]:
    """One warning per rule gangplan does not model, naming the first who ask for it."""
    return [
        f"{rule} is not modelled, so {consequence}: {counted(sorted(who))} {'asks' if len(who) == 1 else 'ask'} for it"
        for rule, who in asking.items()
    ]


_ONE_BY_ONE_UP_TO = 5  # missing PodGroups (each gets a "did you mean"), or groups of another kind, warned about one by one


def _fast_runnable(gang: Gang) -> list[Pod]:
    """The pods Kueue can start of a Kueue group asking for fast admission; none when it does not
    ask. Failed pods and unbound ones being deleted are not runnable to Kueue."""
    if not any(kueue.fast_admission(p.annotations) for p in gang.members):
        return []
    return [p for p in gang.members if _runnable(p)]


def _fast_admitted(gang: Gang, runnable: Sequence[Pod]) -> str:
    """Plan a fast-admitted Kueue group short of its total count as Kueue admits it, and say
    so. Kueue builds the Workload from the first pod, for the total count, admits it with fewer
    pods and lifts each pod's gate as it comes: waiting for the total would call short a group
    Kueue starts. Without a topology request its quorum is the pods it has. Under one, Kueue's
    TAS admits it only where the whole count fits and holds that room: until it is admitted
    (no pod of it bound), the pods to come are planned as copies of its first pod
    (``Pod.to_come``), which hold room and output nothing."""
    total = gang.group.min_member
    if len(runnable) >= total:
        return ""
    levels = sorted({level for p in gang.members for level in kueue.topology_requests(p.annotations) if level})
    asking = sorted(p.name for p in gang.members if kueue.fast_admission(p.annotations))
    # Kueue reads the key off the first pod it lists, which may be one without it.
    some = (
        f"; only {len(asking)} of its pods ({listed(asking)}) {'carries' if len(asking) == 1 else 'carry'} the key, "
        f"and Kueue reads it off one pod, the first it lists: it may wait for all {total}"
        if len(asking) < len(gang.members)
        else ""
    )
    to_come = total - len(runnable)
    said = (
        f"Kueue pod group {gang.key} asks for fast admission ({kueue.FAST_ADMISSION}): Kueue admits it for its "
        f"{total} pods ({kueue.TOTAL_COUNT}) once its first pod exists and starts each pod as it comes; the snapshot "
        f"has {len(runnable)}"
    )
    unconstrained = any(kueue.unconstrained(p.annotations) for p in gang.members)
    # Once a pod is bound Kueue has admitted the group, and its pods to come gate no other.
    admitted = any(p.node_name for p in runnable)
    if (levels or unconstrained) and not admitted:
        first = min(runnable, key=lambda p: p.name)
        shape = replace(first, uid=None, node_name=None, phase=PodPhase.PENDING, deleting=False, to_come=True)
        # Kubernetes names hold no space: these are no pod's.
        gang.pending += [replace(shape, name=f"{first.name} (to come {i} of {to_come})") for i in range(1, to_come + 1)]
        return (
            f"{said}, and under its topology request ({', '.join(levels) or 'unconstrained'}) Kueue's TAS admits it only where all "
            f"{total} fit, and holds the room: the plan holds room for the other {to_come} beside them, as copies "
            f"of {first.name}, and names no node for them{some}"
        )
    gang.group = replace(gang.group, min_member=len(runnable))
    held = (
        "; a pod of it is bound, so Kueue has admitted it, and the room its TAS holds for them is not held in the plan"
        if levels or unconstrained
        else ""
    )
    return (
        f"{said}, so they are planned as the group (minMember {len(runnable)}) and the other "
        f"{to_come} {'gets' if to_come == 1 else 'get'} no room in the plan{held}{some}"
    )


def _runnable(pod: Pod) -> bool:
    """Kueue's isPodRunnableOrSucceeded: neither Failed nor unbound and being deleted."""
    return pod.phase != PodPhase.FAILED and not (pod.deleting and pod.node_name is None)


def _kueue_role(pod: Pod) -> str:
    """What Kueue's role hash (GenerateRoleHash) reads of a pod's spec, as far as gangplan keeps it."""

    def requests(containers: Sequence[Container]) -> tuple[tuple[tuple[str, int], ...], ...]:
        return tuple(tuple(sorted(c.requests.items())) for c in containers)

    return repr((
        requests(pod.containers), requests(pod.init_containers), sorted(pod.overhead.items()),
        sorted(pod.node_selector.items()), pod.node_affinity, pod.anti_affinity, pod.tolerations, pod.priority,
    ))  # fmt: skip


def _fast_admission_shapes(gang: Gang, runnable: Sequence[Pod]) -> str:
    """A warning when a fast-admitted Kueue group's runnable pods are of more than one role.
    Kueue's constructGroupPodSetsFast makes one PodSet of the first runnable pod it lists (in no
    order gangplan can know) and keeps only pods of that role: the others are never started. A pod's
    role is its role-hash annotation where it has one, else a hash of its spec, so the two never meet."""
    roles: dict[tuple[bool, str], list[str]] = defaultdict(list)
    for pod in runnable:
        hashed = pod.annotations.get(kueue.ROLE_HASH)
        roles[(True, hashed) if hashed is not None else (False, _kueue_role(pod))].append(pod.name)
    if len(roles) < 2:
        return ""
    shown = "; ".join(listed(names) for names in sorted(sorted(names) for names in roles.values()))
    return (
        f"Kueue pod group {gang.key} asks for fast admission ({kueue.FAST_ADMISSION}) and its pods have "
        f"{len(roles)} shapes ({shown}): Kueue builds its one PodSet from one pod's shape and starts no pod of "
        "another, which stay gated; gangplan plans them all"
    )


def _kueue_total(pod: Pod) -> int:
    total = kueue.total_count(pod.annotations)
    if total is None or total < 1:
        raw = pod.annotations.get(kueue.TOTAL_COUNT)
        given = "it is missing" if raw is None else f"got {raw!r}"
        raise InputError(
            f"pod {pod.key}: annotation {kueue.TOTAL_COUNT} must be a positive integer, {given}",
            origin=pod.origin,
            field=("metadata", "annotations", kueue.TOTAL_COUNT) if raw is not None else ("metadata", "annotations"),
        )
    return total


def queue_order(gang: Gang) -> tuple:
    """QueueSort: priority high first, then creation time, then namespace/name."""
    created = gang.group.creation_timestamp
    # No timestamp: not created yet (a --gang, a Volcano Job to submit), so it is created now,
    # after everything already waiting.
    return (-gang.priority, not created, created, gang.group.namespace, gang.group.name)


def _job_groups(gangs: list[Gang]) -> list[JobGroup]:
    by_sub: dict[str, list[Gang]] = defaultdict(list)
    result: list[JobGroup] = []
    for gang in gangs:
        if gang.group.sub_group:
            by_sub[gang.group.sub_group].append(gang)
        else:
            result.append(JobGroup(gang.key, [gang], gang.priority, queue_order(gang)))
    for sub_group, members in by_sub.items():
        first = members[0].group
        for other in (m.group for m in members[1:]):
            if (other.namespace, other.queue) != (first.namespace, first.queue):
                raise InputError(
                    f"PodGroups {first.key} (queue {first.queue!r}) and {other.key} (queue "
                    f"{other.queue!r}) share subGroup {sub_group!r}; a JobGroup needs one "
                    "namespace and one queue",
                    origin=other.origin,
                )
        members.sort(key=queue_order)
        top = members[0]
        result.append(JobGroup(f"{first.namespace}/{sub_group}", members, top.priority, queue_order(top)))
    return result

"""The planning problem in counts: what both placers (greedy and CP-SAT) solve.

Pods of one PodGroup with identical requests and constraints are one ``Role`` with a
count; candidate nodes are filtered here, before any solver variable exists, so a role
only ever sees nodes that pass its filters and have room for at least one of its pods.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import AbstractSet, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import kueue
from .model import Node, NodeSelector, Pod, PodPhase, SortRule, Snapshot, Topology
from .quantity import counted, listed
from .semantics import (
    TIMED_OUT,
    Gang,
    Grouping,
    JobGroup,
    TermOf,
    blocked_by,
    consumes_capacity,
    filter_reason,
    group_pods,
    host_port_requests,
    is_pending,
    node_selector_matches,
    node_allocatable,
    node_usable,
    counted_rule,
    one_a_node,
    pod_requests,
    task_of,
    tolerated,
)
from .topology import HOSTNAME_LABEL, TopologyTree, build_tree, named_topology_keys, resolve_levels, shown_key

DEFAULT_SORT = (SortRule("CPU", "Capacity", "Ascending"),)

Vector = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Role:
    """Interchangeable pending pods of one PodGroup.

    Candidates are read-only int64 arrays: at 20,480 nodes there are 25 M (role, node) pairs,
    which as Python tuples of ints took most of the memory and much of the time."""

    gang: int
    pods: tuple[Pod, ...]  # sorted by name; names are handed out in this order
    request: Vector  # per problem resource
    nodes: np.ndarray = field(compare=False)  # candidate nodes, ascending
    caps: np.ndarray = field(compare=False)  # per candidate: how many of these pods fit there alone
    task: str = ""  # Volcano task name (volcano.sh/task-spec)
    # The podAntiAffinity term (or spread constraint) of its PodGroup's own that keeps these pods
    # ``apart_cap`` to a node, with its other roles carrying it (``apart_roles``): a cap rather
    # than a resource column every role and node carries (1,500 gangs with a term each made 909
    # columns, planning 5x slower).
    apart: str = ""
    apart_cap: int = 1

    @property
    def count(self) -> int:
        return len(self.pods)

    @property
    def most(self) -> int:
        """The most of its pods one node may take, room aside."""
        return min(self.apart_cap, len(self.pods)) if self.apart else len(self.pods)


@dataclass(frozen=True, slots=True)
class TaskMinimum:
    """Volcano minTaskMember: a per-task minimum inside one PodGroup."""

    task: str
    roles: tuple[int, ...]
    minimum: int
    running: int
    pending: int
    succeeded: int = 0  # those that count (Gang.counted_succeeded)

    @property
    def counted(self) -> int:
        """Members already counting toward the minimum: running and succeeded ones."""
        return self.running + self.succeeded

    @property
    def need(self) -> int:
        return max(0, self.minimum - self.counted)


@dataclass(frozen=True, slots=True)
class RankRule:
    """A sort rule resolved against the problem's resources (seed 003's sortRules)."""

    column: int  # the resource's column in allocatable and free; -1: no pending pod asks it
    available: bool  # dimension Available (the room left), else Capacity (allocatable)
    descending: bool


@dataclass(frozen=True, slots=True)
class GangTopology:
    """A PodGroup's topology terms, as level indices into the tree (seed 003)."""

    required: tuple[int, ...]  # each: all members in one domain of that level
    preferred: tuple[int, ...]  # largest level first
    compact: tuple[int, ...]  # levels below its terms, down to the node level (= len(levels))
    ranks: Mapping[int, tuple[int, ...]]  # affinity level -> sort-rule rank per domain, 0 best
    pinned: Mapping[int, int]  # required level -> the domain running members already occupy
    broken: str = ""  # why the terms cannot hold at all (running members split), else ""
    held: frozenset[tuple[int, int]] = frozenset()  # (level, domain) running members occupy
    enclosing: tuple[int, ...] = ()  # levels above its smallest preferred one, free of any term
    sort: tuple[RankRule, ...] = ()  # what ``ranks`` were computed from
    # The nodes its Godel nodeSelector matches, which alone its ranks sum (seed 003: NodeCircles
    # are divided with the nodeSelector, so sorting reads the nodes the group may use); None: all.
    selected: np.ndarray | None = field(default=None, compare=False)

    @property
    def live(self) -> bool:
        """Its ranks read the room left: a scheduler placing one group at a time ranks again
        before each (Godel re-reads node availability every scheduling cycle)."""
        return any(rule.available for rule in self.sort)

    @property
    def spans_levels(self) -> tuple[int, ...]:
        return tuple(sorted({*self.preferred, *self.enclosing, *self.compact, *self.required}))


# Eligibility's topology for a gang with no terms that must still stay inside the topology.
_INSIDE_ONLY = GangTopology((), (), (), {}, {})


@dataclass(frozen=True, slots=True)
class GangSpec:
    """A PodGroup in counts."""

    key: str
    job_group: int
    roles: tuple[int, ...]
    min_member: int  # 0 for a group already done (Gang.done): it owes no member
    running: int
    pending: int
    need: int  # pending pods it must place to reach minMember
    min_resources: Vector  # what placed pods must still add to running usage, per resource
    excluded: Mapping[str, int]  # nodes excluded per filter, for the first role with no candidate
    topology: GangTopology | None = None
    tasks: tuple[TaskMinimum, ...] = ()
    blocked: str = ""  # members kube-scheduler leaves alone: the first, why, and how many more
    succeeded: int = 0  # finished members: they hold nothing
    counted_succeeded: int = 0  # those of them that count toward minMember (succeeded_count)
    failed: int = 0  # members that failed: they do not count
    # Free per resource on the nodes that pass its pods' filters (room aside), and how many
    # nodes those are; None when that is every Ready, schedulable node.
    filtered_free: Vector | None = None
    passing: int = 0
    unconstrained: bool = False  # Kueue's unconstrained topology: no terms, only nodes inside it
    done: bool = False  # its PodGroup is Completed or Finished and no pod of it waits

    @property
    def counted(self) -> int:
        """Members already counting toward minMember: running ones and the succeeded ones
        its scheduler counts."""
        return self.running + self.counted_succeeded

    @property
    def met(self) -> bool:
        """Its running and succeeded members meet every minimum (minMember, the task minimums
        Volcano checks, minResources): it stands with no pod placed, whatever else happens."""
        return not self.need and not any(t.need for t in self.tasks) and not any(self.min_resources)


@dataclass(frozen=True, slots=True)
class JobGroupSpec:
    key: str
    gangs: tuple[int, ...]
    priority: int
    rank: int  # position in queue order
    demand: Fraction  # quorum demand, DESIGN section 3 objective 1
    feasible: bool  # False when it cannot be placed whatever else happens (too few pods, no node)
    shares: tuple[tuple[Fraction, int], ...] = ()  # (one quorum pod's demand, pods asking it): sums to demand


@dataclass(frozen=True, slots=True)
class Problem:
    resources: tuple[str, ...]
    nodes: tuple[Node, ...]
    allocatable: tuple[Vector, ...]
    free: tuple[Vector, ...]
    idle: tuple[bool, ...]  # no running pod other than DaemonSet ones: using it opens it
    roles: tuple[Role, ...]
    gangs: tuple[GangSpec, ...]
    job_groups: tuple[JobGroupSpec, ...]
    grouping: Grouping
    tree: TopologyTree | None = None
    warnings: tuple[str, ...] = ()
    # Sort rules may rank on a resource no pending pod asks for (GPU capacity for CPU-only
    # pods): its allocatable and free per node (nodes x those resources), which no
    # placement changes. Each rule's column counts past ``resources`` into these.
    sort_only: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False)
    # The running pods' requests per node, uncapped: ``free`` stops at zero on an
    # over-committed node, which is right for planning but understates what is in use.
    used: tuple[Vector, ...] = ()
    # (level, gang, gang): two gangs, each held to one domain of the level, whose pods' required
    # anti-affinity there keeps them in distinct domains (JobSet's exclusive placement).
    exclusive: tuple[tuple[int, int, int], ...] = ()

    def partners(self, g: int) -> tuple[tuple[int, int], ...]:
        """The (level, gang) pairs gang ``g`` may share no domain with."""
        return _exclusive_index(self.exclusive)[0].get(g, ()) if self.exclusive else ()

    def exclusive_cliques(self) -> list[tuple[int, tuple[int, ...]]]:
        """``exclusive`` as (level, gangs) sets that pairwise share no domain: gangs kept apart
        from the same others and from each other (alike with themselves added) are one set
        (JobSet's every job against every other: one constraint a domain, where 71 jobs made
        2,485 pairs); each pair no such set holds is a set of two."""
        return _exclusive_index(self.exclusive)[1] if self.exclusive else []

    def domain(self, level: int, node: int) -> int | None:
        """The node's domain index at ``level``; the node level is the node itself."""
        assert self.tree is not None
        if level == len(self.tree.levels):
            return None if node in self.tree.outside else node
        return self.tree.domain_of[level][node]

    def matrix(self, name: str) -> np.ndarray:
        """``free``, ``allocatable`` or ``idle`` as a read-only numpy array, built once per
        problem: greedy and explain start many states from it."""
        values = getattr(self, name)
        if isinstance(values, _Rows):  # a JobGroup's own problem (alone, beside): its array
            return values.array
        hit = _MATRICES.get(id(values))
        if hit is None or hit[0] is not values:
            array = np.array(values, dtype=bool if name == "idle" else np.int64)
            if name != "idle":
                array = array.reshape(len(self.nodes), len(self.resources))
            array.flags.writeable = False
            if len(_MATRICES) > 64:
                _MATRICES.clear()
            hit = _MATRICES[id(values)] = (values, array)
        return hit[1]

    def domain_array(self, level: int) -> np.ndarray:
        """Domain index of every node at ``level`` (-1 outside), for vectorised lookups."""
        assert self.tree is not None
        return _domain_array(self.tree, level)

    def domain_count(self, level: int) -> int:
        assert self.tree is not None
        return len(self.nodes) if level == len(self.tree.levels) else len(self.tree.domains[level])

    def domain_name(self, level: int, d: int) -> str:
        assert self.tree is not None
        if level == len(self.tree.levels):
            return self.nodes[d].name
        return self.tree.domains[level][d].name

    def level_name(self, level: int) -> str:
        assert self.tree is not None
        return self.tree.levels[level] if level < len(self.tree.levels) else "node"

    def needs(self, j: int) -> int:
        return sum(self.gangs[g].need for g in self.job_groups[j].gangs)

    def roles_of(self, j: int) -> list[int]:
        return [r for g in self.job_groups[j].gangs for r in self.gangs[g].roles]

    @property
    def priority_levels(self) -> list[int]:
        return sorted({jg.priority for jg in self.job_groups}, reverse=True)


def _role_signature(
    pod: Pod, request: Mapping[str, int], blocked: frozenset[str], only: frozenset[str] | None = None
) -> tuple:
    return (
        task_of(pod),
        tuple(sorted(request.items())),
        tuple(sorted(pod.node_selector.items())),
        pod.node_affinity,
        tuple(sorted(pod.tolerations, key=repr)),
        blocked,
        only,
        pod.to_come,  # held room with no output: a role of its own, whose pods name_pods skips
    )


def build_problem(
    snapshot: Snapshot,
    grouping: Grouping | None = None,
    *,
    levels: Sequence[str] | None = None,
    gpu_resource: str = "nvidia.com/gpu",
) -> Problem:
    """Resolve groups, filter candidates, and count room: the solver-independent half of planning."""
    grouping = grouping or group_pods(snapshot)
    nodes = snapshot.nodes
    level_keys, warnings = resolve_levels(snapshot, levels)
    # The node level is always there; a tree with no level above it still makes it a domain.
    needs_tree = bool(level_keys) or HOSTNAME_LABEL in named_topology_keys(snapshot)[0]
    tree = build_tree(nodes, level_keys) if needs_tree else None
    if tree is not None:
        warnings = [*warnings, *tree.warnings]
    node_index = {n.name: i for i, n in enumerate(nodes)}
    counted = [p for p in snapshot.pods if p.node_name is None or consumes_capacity(p) or p.phase == PodPhase.SUCCEEDED]
    counted += [p for jg in grouping.job_groups for g in jg.gangs for p in g.pending if p.to_come]  # Pod.to_come
    # Only pods that hold or may take a node split a port into addresses.
    ports = host_port_requests(p for p in counted if consumes_capacity(p) or is_pending(p))
    apart, spread = grouping.anti_affinity.units, grouping.spread.units
    requests = {
        id(p): {**pod_requests(p), **ports.get(id(p), {}), **apart.get(id(p), {}), **spread.get(id(p), {})} for p in counted
    }

    used: list[dict[str, int]] = [defaultdict(int) for _ in nodes]
    idle = [True] * len(nodes)
    elsewhere: list[Pod] = []
    for pod in snapshot.pods:
        if consumes_capacity(pod):
            i = node_index.get(pod.node_name)  # type: ignore[arg-type]
            if i is None:
                elsewhere.append(pod)
                continue
            for name, amount in requests[id(pod)].items():
                used[i][name] += amount
            if not _per_node(pod):
                idle[i] = False

    if elsewhere:
        warnings = [*warnings, _elsewhere_warning(elsewhere)]
    private = _private_terms(grouping)
    pending_resources = {name for jg in grouping.job_groups for g in jg.gangs for p in g.pending for name in requests[id(p)]}
    pending_resources -= private.keys()
    pending_resources |= {name for jg in grouping.job_groups for g in jg.gangs for name in g.group.min_resources}
    resources = tuple(sorted(pending_resources | {"pods"}))
    ones = dict.fromkeys(filter(one_a_node, resources), 1)  # a host port, an anti-affinity term: one a node
    alloc_maps = [node_allocatable(n) | ones for n in nodes]
    for name in (name for name in resources if name in grouping.spread.caps):
        everywhere, lower = grouping.spread.caps[name]
        for node_room, node in zip(alloc_maps, nodes):
            node_room[name] = lower.get(node.name, everywhere)
    allocatable = tuple(tuple(a.get(r, 0) for r in resources) for a in alloc_maps)
    requested = tuple(tuple(used[i].get(r, 0) for r in resources) for i in range(len(nodes)))
    free = tuple(tuple(max(0, a - u) for a, u in zip(allocatable[i], requested[i])) for i in range(len(nodes)))
    usable_maps = [a for a, n in zip(alloc_maps, nodes) if node_usable(n)]
    usable_total = {r: sum(a.get(r, 0) for a in usable_maps) for r in pending_resources}

    eligibility = _Eligibility(
        nodes, free, tree, len(resources), grouping.anti_affinity.blocked, node_index, grouping.affinity.only
    )
    usable_nodes = len(usable_maps)
    filtered_room: dict[frozenset, tuple[int, Vector | None]] = {}  # per set of filters: nodes, free
    carried = frozenset(key for node in nodes for key in node.labels)
    rank_cache: dict[tuple, tuple[int, ...]] = {}
    selected_cache: dict[NodeSelector, np.ndarray] = {}
    shape = (len(nodes), len(resources))
    allocatable_matrix = np.array(allocatable, dtype=np.int64).reshape(shape)
    free_matrix = np.array(free, dtype=np.int64).reshape(shape)
    sorted_on = {_SORT_RESOURCE.get(r.resource, gpu_resource) for g in snapshot.pod_groups for r in g.sort_rules}
    sort_only = sorted((sorted_on | {"cpu"}) - set(resources))  # cpu: the default rule's
    sort_room = None
    if sort_only and nodes:
        # No pod asks for these, so the loader bounds none of them: cut each node's at what keeps
        # a domain's total in 64 bits (1e30 cores ranks as the most there can be).
        most = np.iinfo(np.int64).max // len(nodes)
        extra = np.array([[min(a.get(r, 0), most) for r in sort_only] for a in alloc_maps], dtype=np.int64)
        left = np.maximum(0, extra - np.array([[used[i].get(r, 0) for r in sort_only] for i in range(len(nodes))]))
        sort_room = (extra, left)
        allocatable_matrix = np.hstack([allocatable_matrix, extra])
        free_matrix = np.hstack([free_matrix, left])
    rank_resources = resources + tuple(sort_only)
    roles: list[Role] = []
    gangs: list[GangSpec] = []
    job_groups: list[JobGroupSpec] = []
    kueue_topologies = tuple(sorted(snapshot.topologies, key=lambda t: t.name))
    # (topologyKey that is no level, named by pod affinity alone) -> the groups naming it
    ignored: dict[tuple[str, bool], list[str]] = defaultdict(list)
    first: dict[str, int] = {}  # a gang's first pending pod -> the gang (AntiAffinity.exclusive)
    for rank, jg in enumerate(grouping.job_groups):
        gang_ids = []
        feasible = True
        for gang in jg.gangs:
            g_index = len(gangs)
            topology = _gang_topology(
                gang, tree, nodes, node_index, allocatable_matrix, free_matrix, rank_resources, gpu_resource, warnings, rank_cache, carried,
                strict=levels is None or bool(snapshot.topologies), kueue_topologies=kueue_topologies, ignored=ignored,
                selected_cache=selected_cache, kept_together=grouping.affinity.kept_together.get(gang.key, ()),
            )
            # Kueue's unconstrained topology: no level to share, but only the Topology's nodes.
            unconstrained = topology is None and tree is not None and any(
                kueue.unconstrained(p.annotations) is True for p in gang.members
            )
            role_ids, excluded, filter_keys = _build_roles(
                gang, g_index, eligibility, resources, requests, roles, _INSIDE_ONLY if unconstrained else topology, private
            )
            if (filtered := filtered_room.get(filter_keys)) is None:
                passing = np.zeros(len(nodes), dtype=bool)
                for key in filter_keys:
                    passing |= eligibility.filters[key]
                count = int(passing.sum())
                room = tuple(int(v) for v in free_matrix[passing, : len(resources)].sum(axis=0)) if count < usable_nodes else None
                filtered = filtered_room[filter_keys] = (count, room)
            counted_usage: defaultdict[str, int] = defaultdict(int)
            for pod in [*gang.running, *gang.counted_succeeded]:
                for name, amount in requests[id(pod)].items():
                    counted_usage[name] += amount
            min_member = 0 if gang.done else gang.group.min_member
            need = max(0, min_member - len(gang.running) - len(gang.counted_succeeded))
            asked = {} if gang.done else gang.group.min_resources
            min_resources = tuple(max(0, asked.get(r, 0) - counted_usage.get(r, 0)) for r in resources)
            tasks = _task_minimums(gang, role_ids, roles)
            candidate_room = sum(roles[r].count for r in role_ids if len(roles[r].nodes))
            spec = GangSpec(
                key=gang.key,
                job_group=rank,
                roles=tuple(role_ids),
                min_member=min_member,
                running=len(gang.running),
                pending=len(gang.pending),
                need=need,
                min_resources=min_resources,
                excluded=excluded,
                topology=topology,
                tasks=tasks,
                blocked=_blocked(gang),
                succeeded=len(gang.succeeded),
                counted_succeeded=len(gang.counted_succeeded),
                failed=len(gang.finished) - len(gang.succeeded),
                filtered_free=filtered[1],
                passing=filtered[0],
                unconstrained=unconstrained,
                done=gang.done,
            )
            if topology is not None and topology.broken and not gang.running and spec.met:
                # Terms that cannot hold bind only pods still to place: it stands as it is (finished
                # members, or minMember 0) and none of its pending pods may go anywhere.
                for r in role_ids:
                    roles[r] = replace(roles[r], nodes=frozen(()), caps=frozen(()))
            elif need > len(gang.pending) or candidate_room < need or (topology and topology.broken):
                feasible = False
            if any(t.need > sum(roles[r].count for r in t.roles if len(roles[r].nodes)) for t in tasks):
                feasible = False
            gangs.append(spec)
            gang_ids.append(g_index)
            if gang.pending:
                first[gang.pending[0].key] = g_index
        shares = _quorum_shares(jg, requests, usable_total)
        job_groups.append(
            JobGroupSpec(
                key=jg.key,
                gangs=tuple(gang_ids),
                priority=jg.priority,
                rank=rank,
                demand=sum((share * n for share, n in shares), Fraction(0)),
                feasible=feasible,
                shares=shares,
            )
        )
    for (key, affine), named in sorted(ignored.items()):
        term = "its pods' podAffinity term" if affine else "the term"
        warnings.append(
            f"PodGroup {named[0]}: topologyKey {shown_key(key)} is not a topology level; {term} is ignored"
            if len(named) == 1 else f"topologyKey {shown_key(key)} is not a topology level; the "
            f"{'podAffinity terms of the pods' if affine else 'terms'} of {len(named)} PodGroups naming it are ignored "
            f"({listed(sorted(named))})"
        )
    exclusive, unheld = _exclusive(grouping, tree, gangs, first, carried)
    warnings += unheld
    return Problem(
        resources=resources,
        nodes=nodes,
        allocatable=allocatable,
        free=free,
        idle=tuple(idle),
        roles=tuple(roles),
        gangs=tuple(gangs),
        job_groups=tuple(job_groups),
        grouping=grouping,
        tree=tree,
        warnings=tuple(grouping.warnings) + tuple(warnings),
        sort_only=sort_room,
        used=requested,
        exclusive=exclusive,
    )


def _exclusive(
    grouping: Grouping, tree: TopologyTree | None, gangs: Sequence[GangSpec], first: Mapping[str, int], carried: AbstractSet[str]
) -> tuple[tuple[tuple[int, int, int], ...], list[str]]:
    """``Problem.exclusive`` from ``AntiAffinity.exclusive``: the pairs at a key that is a
    level, where each gang's required term holds it to one domain; and a warning per key that
    is not (its pods' anti-affinity is then the plan's known gap, ``unheld_anti_affinity``) but
    some node carries (else neither gang has a node to go to), naming the PodGroups it holds."""
    levels = tree.levels if tree is not None else ()
    pairs: set[tuple[int, int, int]] = set()
    unheld: dict[str, set[str]] = defaultdict(set)  # key -> the PodGroups of its pairs
    held: dict[int, dict[str, int]] = {}  # level -> the gangs required there, by first pending pod
    for (key, a), (others, _) in sorted(grouping.anti_affinity.exclusive.items()):
        if (ga := first.get(a)) is None:
            continue  # a gang not planned
        if key not in levels:
            if key in carried:
                unheld[key] |= {gangs[ga].key, *(gangs[gb].key for b in others if (gb := first.get(b)) is not None)}
            continue
        level = levels.index(key)
        if level not in held:
            held[level] = {
                pod: g for pod, g in first.items() if (t := gangs[g].topology) is not None and level in t.required
            }
        if a in held[level]:
            pairs.update((level, min(ga, gb), max(ga, gb)) for b in others if (gb := held[level].get(b)) is not None)
    warnings = [
        f"topologyKey {shown_key(key)} is not a topology level: the required pod anti-affinity there that keeps "
        f"PodGroups apart ({counted(sorted(named))}) is not modelled, so the plan may break it"
        for key, named in sorted(unheld.items())
    ]
    return tuple(sorted(pairs)), warnings


_MATRICES: dict[int, tuple[object, np.ndarray]] = {}
_Partners = dict[int, tuple[tuple[int, int], ...]]
_Cliques = list[tuple[int, tuple[int, ...]]]
_EXCLUSIVE: dict[int, tuple[object, _Partners, _Cliques]] = {}


def _exclusive_index(exclusive: tuple[tuple[int, int, int], ...]) -> tuple[_Partners, _Cliques]:
    """``Problem.partners`` and ``Problem.exclusive_cliques`` of one ``exclusive``, made once
    together (a greedy fit and each model built ask; at 8,192 nodes it held 427 k pairs)."""
    hit = _EXCLUSIVE.get(id(exclusive))
    if hit is None or hit[0] is not exclusive:
        near: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))  # level -> gang -> gangs
        partners: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for level, a, b in exclusive:
            near[level][a].add(b)
            near[level][b].add(a)
            partners[a].append((level, b))
            partners[b].append((level, a))
        cliques: _Cliques = []
        for level, others_of in sorted(near.items()):
            alike: dict[frozenset[int], list[int]] = defaultdict(list)
            for g, others in others_of.items():
                alike[frozenset(others | {g})].append(g)
            clique: dict[int, int] = {}
            for members in sorted(sorted(members) for members in alike.values() if len(members) > 1):
                clique.update((g, len(cliques)) for g in members)
                cliques.append((level, tuple(members)))
            cliques += [
                (lv, (a, b)) for lv, a, b in exclusive if lv == level and (a not in clique or clique.get(b) != clique[a])
            ]
        if len(_EXCLUSIVE) > 16:
            _EXCLUSIVE.clear()
        hit = _EXCLUSIVE[id(exclusive)] = (exclusive, {g: tuple(v) for g, v in partners.items()}, cliques)
    return hit[1], hit[2]


def frozen(values: object) -> np.ndarray:
    """An int64 array nobody can change by accident (roles are shared between problems, and
    roles alike in size and filters share their candidates). Not a copy: callers hand over
    arrays they made for it."""
    array = np.asarray(values, dtype=np.int64)
    array.flags.writeable = False
    return array


# Past this many resources a room is read only in the columns a pod asks (a cluster of 300
# extended resources copied all 300 for every pod asking 4); below it, whole rows copy faster.
NARROW_ROOM_FROM = 16


def pods_that_fit(room: np.ndarray, request: Sequence[int], most: int, rows: np.ndarray | None = None) -> np.ndarray:
    """How many pods of ``request`` each row of free resources ``room`` (or each of its
    ``rows``) holds, at most ``most``."""
    best = np.full(len(room) if rows is None else len(rows), most, dtype=np.int64)
    asked = [k for k, want in enumerate(request) if want]
    if room.shape[1] > NARROW_ROOM_FROM:
        picked = room[:, asked] if rows is None else room[np.ix_(rows, asked)]
        columns = np.ascontiguousarray(picked.T)
    else:
        # A resource's room in one run: dividing a strided column is 3x slower.
        columns = (room if rows is None else room.take(rows, axis=0)).T[asked]
    for column, k in zip(columns, asked):
        column //= request[k]
        np.minimum(best, column, out=best)
    return best


@functools.lru_cache(maxsize=32)
def _domain_array(tree: TopologyTree, level: int) -> np.ndarray:
    if level == len(tree.levels):
        found = np.arange(len(tree.domain_of[0]) if tree.domain_of else len(tree.node_names), dtype=np.int64)
        found[list(tree.outside)] = -1
        return found
    return np.array([-1 if d is None else d for d in tree.domain_of[level]], dtype=np.int64)


class _Eligibility:
    """Which nodes pass a pod's filters, computed once per distinct set of constraints.

    Thousands of gangs share a handful of selector/toleration combinations, and thousands of
    nodes look alike to each: a filter runs once per combination and per class of nodes that
    agree on everything it reads (Ready, unschedulable, taints, the label keys it names), and
    room is counted for all nodes at once with numpy.
    """

    def __init__(
        self, nodes: Sequence[Node], free: Sequence[Vector], tree: TopologyTree | None, width: int,
        blocked: Mapping[int, frozenset[str]] | None = None, index: Mapping[str, int] | None = None,
        only: Mapping[int, frozenset[str]] | None = None,
    ) -> None:
        self.nodes, self.tree = nodes, tree
        self.blocked = blocked or {}  # per pending pod (id): nodes its pod anti-affinity rules out
        self.only = only or {}  # per pending pod (id): the nodes its pod affinity allows, if it limits them
        self.index = index if index is not None else {n.name: i for i, n in enumerate(nodes)}
        self.free = np.array(free, dtype=np.int64).reshape(len(nodes), width)
        self.cache: dict[tuple, np.ndarray] = {}
        self.filters: dict[tuple, np.ndarray] = {}
        self.fits: dict[Vector, np.ndarray] = {}  # per request: pods each node holds, alone
        self.candidates: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # (request, mask) -> nodes, fits
        self._codes: dict[str | None, np.ndarray] = {}  # label key (None: the rest) -> class per node
        self._passing: dict[tuple, np.ndarray] = {}  # ``filters`` before pod (anti-)affinity's nodes are taken out
        self._reasons: dict[tuple, tuple[list[str], np.ndarray]] = {}  # ``filter_codes`` before the same

    def _mask_key(self, pod: Pod, gang: Gang, topology: GangTopology | None) -> tuple:
        """The key of the pod's mask in ``cache``, which holds it once this has run."""
        filters = self.filters_key(pod, gang)
        key = (filters, None if topology is None else tuple(sorted(topology.pinned.items())))
        if key not in self.cache:
            found = self.filters.get(filters)
            if found is None:
                found = self.filters[filters] = self._filtered(pod, gang)
            if topology is not None and self.tree is not None:
                found = found & self._inside(topology)
            self.cache[key] = found
        return key

    def _filtered(self, pod: Pod, gang: Gang) -> np.ndarray:
        if not self.nodes:
            return np.zeros(0, dtype=bool)
        # Pods kept out of different zones share their other filters: those run once.
        own = self.filters_key(pod, gang)[:-2]
        passing = self._passing.get(own)
        if passing is None:
            first, classes = self._alike(pod, gang)
            known = tolerated(pod.tolerations)
            passes = np.array([filter_reason(self.nodes[i], pod, gang.group, known) is None for i in first.tolist()], dtype=bool)
            passing = self._passing[own] = passes[classes]
        found = passing.copy()
        found[[self.index[n] for n in self.blocked.get(id(pod), ()) if n in self.index]] = False
        if (allowed := self.only.get(id(pod))) is not None:
            inside = np.zeros(len(self.nodes), dtype=bool)
            inside[[self.index[n] for n in allowed if n in self.index]] = True
            found &= inside
        return found

    def filter_codes(self, pod: Pod, gang: Gang) -> tuple[list[str], np.ndarray]:
        """Why the pod may not go to each node: ``filter_reason``, else "pod affinity", else
        "pod anti-affinity", as reasons and each node's index among them (-1: none). Worked
        out once per class of nodes alike to the pod's filters, and once per set of filters:
        pods of one gang drawing their own affinity terms share the rest. 100 groups that fit
        nowhere, on 2,000 nodes of 50 taints each, took 30 s node by node; 780 gangs with a pod
        that fits nowhere, at 20,480 nodes, 18 s with a reason per node."""
        if not self.nodes:
            return [], np.zeros(0, dtype=np.int64)
        own = self.filters_key(pod, gang)[:-2]
        known = self._reasons.get(own)
        if known is None:
            first, classes = self._alike(pod, gang)
            tolerates = tolerated(pod.tolerations)
            found = [filter_reason(self.nodes[i], pod, gang.group, tolerates) for i in first.tolist()]
            names = sorted({*(r for r in found if r is not None), "pod affinity", "pod anti-affinity"})
            per_class = np.array([-1 if r is None else names.index(r) for r in found], dtype=np.int64)
            known = self._reasons[own] = (names, per_class[classes])
        names, codes = known[0], known[1].copy()
        if (allowed := self.only.get(id(pod))) is not None:
            outside = np.ones(len(self.nodes), dtype=bool)
            outside[[self.index[n] for n in allowed if n in self.index]] = False
            codes[(codes < 0) & outside] = names.index("pod affinity")  # kube-scheduler checks it first
        blocked = np.array([self.index[n] for n in self.blocked.get(id(pod), ()) if n in self.index], dtype=np.int64)
        codes[blocked[codes[blocked] < 0]] = names.index("pod anti-affinity")
        return names, codes

    def _alike(self, pod: Pod, gang: Gang) -> tuple[np.ndarray, np.ndarray]:
        """One node of each class the pod's filters cannot tell apart, and each node's class."""
        selectors = [s for s in (pod.node_affinity, gang.group.node_selector) if s is not None]
        if any(t.match_fields for s in selectors for t in s.terms):
            every = np.arange(len(self.nodes))  # matchFields reads the node's name
            return every, every
        keys = sorted({*pod.node_selector, *(r.key for s in selectors for t in s.terms for r in t.match_expressions)})
        columns = np.stack([self._classes(None), *(self._classes(k) for k in keys)], axis=1)
        _, first, classes = np.unique(columns, axis=0, return_index=True, return_inverse=True)
        return first, classes.reshape(-1)

    def _classes(self, label: str | None) -> np.ndarray:
        """Nodes numbered by their value of ``label``, or (None) by what every filter reads
        beside labels."""
        found = self._codes.get(label)
        if found is None:
            seen: dict[object, int] = {}
            if label is None:
                values: list[object] = [(n.ready, n.unschedulable, n.taints) for n in self.nodes]
            else:
                values = [n.labels.get(label) for n in self.nodes]
            found = self._codes[label] = np.array([seen.setdefault(v, len(seen)) for v in values], dtype=np.int64)
        return found

    def _inside(self, topology: GangTopology) -> np.ndarray:
        tree = self.tree
        assert tree is not None
        inside = np.ones(len(self.nodes), dtype=bool)
        inside[list(tree.outside)] = False
        for level, domain in topology.pinned.items():
            inside &= _domain_array(tree, level) == domain
        return inside

    def filters_key(self, pod: Pod, gang: Gang) -> tuple:
        """The key in ``filters`` of the nodes the pod's own filters pass (room and topology
        aside), there once ``caps`` has run for it."""
        return (
            tuple(sorted(pod.node_selector.items())),
            pod.node_affinity,
            tuple(sorted(pod.tolerations, key=repr)),
            gang.group.node_selector,
            self.blocked.get(id(pod), frozenset()),
            self.only.get(id(pod)),
        )

    def caps(self, pod: Pod, gang: Gang, topology: GangTopology | None, request: Vector, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Candidate node indices and how many pods of this size fit on each, alone. Gangs
        share a few pod sizes and filter sets: the divisions run once per size (1.4 s of 3.3 s
        at 20,480 nodes), the candidates once per size and filter set."""
        key = (request, self._mask_key(pod, gang, topology))
        found = self.candidates.get(key)
        if found is None:
            fits = self.fits.get(request)
            if fits is None:
                fits = self.fits[request] = pods_that_fit(self.free, request, np.iinfo(np.int64).max)
            index = np.flatnonzero(self.cache[key[1]] & (fits > 0))
            found = self.candidates[key] = (index, fits[index])
        index, fits = found
        return index, np.minimum(fits, count)


def _build_roles(
    gang: Gang,
    g_index: int,
    eligibility: _Eligibility,
    resources: tuple[str, ...],
    requests: Mapping[int, Mapping[str, int]],
    roles: list[Role],
    topology: GangTopology | None,
    private: Mapping[str, int] = {},
) -> tuple[list[int], dict[str, int], frozenset]:
    by_signature: dict[tuple, list[Pod]] = defaultdict(list)
    for pod in gang.pending:
        blocked, only = eligibility.blocked.get(id(pod), frozenset()), eligibility.only.get(id(pod))
        by_signature[_role_signature(pod, requests[id(pod)], blocked, only)].append(pod)
    role_ids = []
    excluded: dict[str, int] = {}
    filter_keys = set()  # the filters its pods ask, each a key of ``eligibility.filters``
    for signature in sorted(by_signature, key=lambda s: min(p.name for p in by_signature[s])):
        pods = tuple(sorted(by_signature[signature], key=lambda p: p.name))
        request = tuple(requests[id(pods[0])].get(r, 0) for r in resources)
        apart = min((name for name in requests[id(pods[0])] if name in private), default="")
        cap = private[apart] if apart else len(pods)
        candidates, caps = eligibility.caps(pods[0], gang, topology, request, min(cap, len(pods)))
        filter_keys.add(eligibility.filters_key(pods[0], gang))
        if not len(candidates) and not excluded:
            excluded = _excluded(eligibility, pods[0], gang, topology, request, resources)
        role_ids.append(len(roles))
        roles.append(
            Role(g_index, pods, request, frozen(candidates), frozen(caps), task_of(pods[0]), apart, cap if apart else 1)
        )
    return role_ids, excluded, frozenset(filter_keys)


def _private_terms(grouping: Grouping) -> dict[str, int]:
    """The anti-affinity terms whose pods are all of one PodGroup, each with its cap: one pod a
    node on the roles carrying it, not a column. So is a spread constraint with the same room
    k on every node (maxSkew k, no matching pod running): k pods a node. A pod carries one such
    term at most (a role has one ``apart``): where one carries two, all stay columns."""
    one_each = {name: room for name, (room, lower) in grouping.spread.caps.items() if not lower}
    gangs: dict[str, set[int]] = defaultdict(set)
    carried = []  # each pending pod's terms
    for jg in grouping.job_groups:
        for gang in jg.gangs:
            for pod in gang.pending:
                spread = [name for name in grouping.spread.units.get(id(pod), ()) if name in one_each]
                if names := [*grouping.anti_affinity.units.get(id(pod), ()), *spread]:
                    carried.append(names)
                    for name in names:
                        gangs[name].add(id(gang))
    own = {name for name, where in gangs.items() if len(where) == 1}
    crossed = {name for names in carried if len(mine := own.intersection(names)) > 1 for name in mine}
    return {name: one_each.get(name, 1) for name in sorted(own - crossed)}


def apart_roles(problem: Problem, r: int) -> list[int]:
    """The roles one to a node with role ``r`` (its own included): those of its PodGroup that
    carry its term; ``[r]`` when it carries none, which ``Role.most`` alone caps."""
    role = problem.roles[r]
    if not role.apart:
        return [r]
    return [q for q in problem.gangs[role.gang].roles if problem.roles[q].apart == role.apart]


def _excluded(
    eligibility: _Eligibility, pod: Pod, gang: Gang, topology: GangTopology | None, request: Vector, resources: tuple[str, ...]
) -> dict[str, int]:
    """Nodes excluded per filter, kube-scheduler style, for a role with no candidate at all:
    each node's first filter that fails, else its topology, else its first resource short."""
    names, codes = eligibility.filter_codes(pod, gang)
    counts: dict[str, int] = defaultdict(int)
    for code, times in enumerate(np.bincount(codes[codes >= 0], minlength=len(names)).tolist()):
        if times:
            counts[names[code]] += times
    left = np.flatnonzero(codes < 0)
    tree = eligibility.tree
    if topology is not None and tree is not None:
        outside = np.zeros(len(eligibility.nodes), dtype=bool)
        outside[list(tree.outside)] = True
        steps = [("outside the topology", outside)]
        for level, domain in topology.pinned.items():
            steps.append((f"required {level_key(tree, level)} (running members)", _domain_array(tree, level) != domain))
        for reason, fails in steps:
            failing = fails[left]
            if times := int(failing.sum()):
                counts[reason] += times
            left = left[~failing]
    short = np.full(len(left), -1)  # each node's first resource short of the request
    for k in reversed(range(len(request))):
        if request[k]:
            short[eligibility.free[left, k] < request[k]] = k
    for k, times in enumerate(np.bincount(short[short >= 0], minlength=len(resources)).tolist()):
        if times:
            counts[f"resource {resources[k]}"] += times
    return dict(sorted(counts.items()))


def _quorum_shares(
    jg: JobGroup, requests: Mapping[int, Mapping[str, int]], total: Mapping[str, int]
) -> tuple[tuple[Fraction, int], ...]:
    """Each quorum pod's share of the cluster (the sum over resources of its requests over the
    usable allocatable), with how many quorum pods ask that share: the quorum demand is their
    sum, and weights rounded per pod keep equal totals of the same pods equal."""
    alike: dict[tuple[tuple[str, int], ...], int] = defaultdict(int)
    for gang in jg.gangs:
        members = [p for pods in (gang.running, gang.counted_succeeded, gang.pending) for p in sorted(pods, key=lambda p: p.name)]
        for pod in members[: gang.group.min_member]:
            alike[tuple(sorted((k, v) for k, v in requests[id(pod)].items() if k != "pods" and not counted_rule(k) and total.get(k)))] += 1
    shares: dict[Fraction, int] = defaultdict(int)
    for asked, pods in alike.items():
        if share := sum((Fraction(amount, total[name]) for name, amount in asked), Fraction(0)):
            shares[share] += pods
    return tuple(sorted(shares.items()))


def integer_weights(
    values: Sequence[Sequence[tuple[Fraction, int]]], limit: int = 2**40
) -> tuple[list[int], bool]:
    """Scale rationals, each given as (part, times) pairs (one quorum pod's share of the
    cluster, and how many pods ask it), to integers for the solver; exact when the common
    denominator allows.

    Returns the weights and whether they are exact (distinct sums stay distinct). When the
    exact scale would overflow ``limit``, each part is rounded at the finest scale that fits and
    a value weighs its parts' sum, so values made of the same parts weigh exactly their sum (a
    16-pod gang as much as two 8-pod gangs of the same pods, leaving the tie to the next
    objective, as exact weights do); rounded whole, the two could differ by one either way.
    """
    if not values:
        return [], True
    totals = [sum((part * times for part, times in parts), Fraction(0)) for parts in values]
    lcm = 1
    for v in totals:
        lcm = lcm * v.denominator // math.gcd(lcm, v.denominator)
    total = sum(totals)
    if total * lcm <= limit:
        return [int(v * lcm) for v in totals], True
    scale = Fraction(limit) / total if total else Fraction(1)
    return [sum(times * max(1, round(part * scale)) for part, times in parts if part) for parts in values], False


def _per_node(pod: Pod) -> bool:
    """A pod every node runs (a DaemonSet's, or a static pod's mirror, as kube-proxy is on
    some distributions): it does not make a node busy."""
    return any(o.kind in ("DaemonSet", "Node") for o in pod.owners) or "kubernetes.io/config.mirror" in pod.annotations


def _elsewhere_warning(pods: Sequence[Pod]) -> str:
    """Pods bound to nodes the snapshot lacks (`kubectl get nodes -l ...`, or a node deleted
    between two dumps): their room is on no planned node, but gang members among them still run."""
    first = min(pods, key=lambda p: (p.node_name or "", p.namespace, p.name))  # not input order: named with its node
    more = f" and {len(pods) - 1} more run" if len(pods) > 1 else " runs"
    nodes = sorted({p.node_name or "" for p in pods})
    where = f"node {nodes[0]}" if len(nodes) == 1 else f"{len(nodes)} nodes ({nodes[0]}, ...)"
    return (
        f"pod {first.key}{more} on {where}, not in the snapshot: their room is not planned; "
        "gang members among them count as running"
    )


def _blocked(gang: Gang) -> str:
    if not gang.blocked:
        return ""
    first = min(gang.blocked, key=lambda p: p.name)
    more = len(gang.blocked) - 1
    why = blocked_by(first) or (TIMED_OUT if gang.group.timed_out else "")
    return f"{first.key}: {why}" + (f", and {more} more not schedulable" if more else "")


def _task_minimums(gang: Gang, role_ids: Sequence[int], roles: Sequence[Role]) -> tuple[TaskMinimum, ...]:
    """Volcano checks task minimums only when minMember is at least their sum (JobInfo's
    CheckTaskValid and CheckTaskReady); below it, minMember alone holds. A group done needs none."""
    if gang.done or gang.group.min_member < sum(gang.group.min_task_member.values()):
        return ()
    # Counted once per pod and role, not per task: a Volcano Job of 5,000 tasks took 20 s.
    by_task: dict[str, list[int]] = defaultdict(list)
    for r in role_ids:
        by_task[roles[r].task].append(r)
    running, pending, succeeded = (
        Counter(map(task_of, pods)) for pods in (gang.running, gang.pending, gang.counted_succeeded)
    )
    return tuple(
        TaskMinimum(
            task=task, roles=tuple(by_task.get(task, ())), minimum=minimum,
            running=running[task], pending=pending[task], succeeded=succeeded[task],
        )
        for task, minimum in sorted(gang.group.min_task_member.items())
    )


def level_key(tree: TopologyTree, level: int) -> str:
    """The label key a term names for ``level``: the node level is kubernetes.io/hostname."""
    return tree.levels[level] if level < len(tree.levels) else HOSTNAME_LABEL


def unheld_affinity(grouping: Grouping, levels: Sequence[str]) -> set[str]:
    """The pending pods whose pod affinity the plan does not hold, as warned: those joining
    pending pods alone (``Affinity.together``), and a kept-together gang's whose key is no level."""
    held = {HOSTNAME_LABEL, *levels}
    return set(grouping.affinity.together) | {
        pod.key
        for jg in grouping.job_groups
        for gang in jg.gangs
        if not held.issuperset(grouping.affinity.kept_together.get(gang.key, ()))
        for pod in gang.pending
    }


def unheld_anti_affinity(grouping: Grouping, levels: Sequence[str]) -> set[TermOf]:
    """The pending pods' anti-affinity terms toward other pending pods that the plan does not
    hold, as warned, each (pod key, index in its ``anti_affinity``): terms selecting pending
    pods not carrying them and matching them (``loose``), wider terms selecting other pending
    pods (``beyond``), and those keeping two gangs in distinct domains of a key that is no
    level (``exclusive``). The same pods' other terms are held."""
    apart = grouping.anti_affinity
    return set(apart.unheld) | {
        term for (key, _), (_, terms) in apart.exclusive.items() if key not in levels for term in terms
    }


def unheld_spread(grouping: Grouping) -> set[TermOf]:
    """The pending pods' topology spread constraints the plan does not hold, as warned, each
    (pod key, index in its ``spread``): those at a key other than kubernetes.io/hostname
    (``Spread.beyond``) and those whose carriers are not the pods their selector matches
    (``Spread.loose``). The same pods' other constraints are held."""
    return set(grouping.spread.unheld)


def _terms(
    gang: Gang, levels: Sequence[str], carried: AbstractSet[str], warnings: list[str], strict: bool = True,
    kueue_topologies: Sequence[Topology] = (), *, ignored: dict[tuple[str, bool], list[str]], kept_together: Sequence[str] = (),
) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """Required and preferred levels of a gang: Godel terms, Kueue's pod annotations, or the
    keys of its pods' affinity to each other alone (``kept_together``); and why its required
    terms cannot hold at all ('' when they can): one names a label no node carries, which no
    placement meets (Kueue does not admit it, kube-scheduler finds no node). A kept-together key
    that is no level (a Topology object or --levels without it) is ignored, with the warning:
    kube-scheduler holds pod affinity whatever the levels, so the group is not unplaceable, and
    the pods' affinity is the plan's known gap (``unheld_affinity``)."""
    required, preferred = list(gang.group.required_topology), list(gang.group.preferred_topology)
    if gang.group.affinity_beside:
        warnings.append(
            f"PodGroup {gang.key}: its affinity terms are beside spec.affinity.podGroupAffinity, not inside it "
            "(as in seed 003's third example); gangplan reads them, Godel's CRD drops them there"
        )
    members = gang.members  # a finished member asks what the others ask, as verify reads it
    requests = [kueue.topology_requests(pod.annotations) for pod in members]
    unconstrained = [kueue.unconstrained(pod.annotations) for pod in members]
    asked_by = {
        kueue.REQUIRED_TOPOLOGY: {required_key for required_key, _ in requests},
        kueue.PREFERRED_TOPOLOGY: {preferred_key for _, preferred_key in requests},
        kueue.UNCONSTRAINED_TOPOLOGY: {"" if free is None else str(free).lower() for free in unconstrained},
    }
    for annotation, asked in asked_by.items():
        if len(asked) > 1:
            # Kueue keeps one request per PodSet; gangplan has one per group.
            shown = ", ".join(sorted(value or "(none)" for value in asked))
            warnings.append(
                f"PodGroup {gang.key}: its pods ask different {annotation} ({shown}); "
                "each one given holds for the whole group"
            )
    kueue_asked = {key for request in requests for key in request if key}
    listed = {key for topology in kueue_topologies for key in topology.levels}
    if kueue_topologies and not gang.running and (refused := sorted(kueue_asked - listed)):
        # Kueue's TAS admits no workload asking for a level no Topology lists, preferred or
        # required, kubernetes.io/hostname included; a group already running was admitted.
        shown = "; ".join(f"{t.name}: {', '.join(t.levels) or 'none'}" for t in kueue_topologies)
        return (), (), f"Kueue admits no workload asking for {shown_key(refused[0])}: not a level of any Topology ({shown})"
    if kueue_topologies and not gang.running and False in unconstrained:
        # An unconstrained request read as false asks for TAS at no level: no flavor holds it.
        return (), (), f"Kueue admits no workload whose {kueue.UNCONSTRAINED_TOPOLOGY} is not true and names no level"
    for key, preferred_key in requests:
        if key:
            required.append(key)
        if key := preferred_key:
            # Kueue climbs level by level: preferred at L is preferred at every level above it too.
            if key in levels:
                preferred.extend(levels[: levels.index(key) + 1])
            elif key == HOSTNAME_LABEL:
                preferred.extend((*levels, key))
            else:
                preferred.append(key)
    index = {key: i for i, key in enumerate(levels)}
    index[HOSTNAME_LABEL] = len(levels)  # the node itself, below every level
    required.extend(key for key in kept_together if key in index or key not in carried)
    nowhere = sorted(k for k in set(required) - set(index) if k not in carried)
    # Levels the cluster states (a Topology object) or gangplan infers bind: a required key that
    # is not one of them cannot be held (Kueue does not admit it). Only --levels, the user's
    # what-if, lets such a term go, with the warning preferred keys always get.
    unheld = sorted(set(required) - set(index) - set(nowhere)) if strict else []
    for key in sorted({*required, *preferred, *kept_together} - set(index) - set(nowhere) - set(unheld)):
        ignored[key, key not in required and key not in preferred].append(gang.key)  # said once per key, by build_problem
    req = tuple(sorted({index[k] for k in required if k in index}))
    pref = tuple(sorted({index[k] for k in preferred if k in index}))
    if nowhere:
        return req, pref, f"required {shown_key(nowhere[0])}: no node carries that label"
    if unheld:
        named = ", ".join(levels) or "none"
        # One tree for the whole plan: the Topology most of the groups' keys are levels of.
        elsewhere = next((t.name for t in kueue_topologies if unheld[0] in t.levels), None)
        what = (
            f"a level of Topology {elsewhere}, but gangplan plans on one Topology's levels ({named})"
            if elsewhere is not None
            else f"not a topology level (levels: {named})"
        )
        return req, pref, f"required {shown_key(unheld[0])}: {what}, so it cannot be held"
    return req, pref, ""


def _gang_topology(
    gang: Gang,
    tree: TopologyTree | None,
    nodes: Sequence[Node],
    node_index: Mapping[str, int],
    allocatable: np.ndarray,
    free: np.ndarray,
    resources: tuple[str, ...],
    gpu_resource: str,
    warnings: list[str],
    rank_cache: dict[tuple, tuple[int, ...]],
    carried: AbstractSet[str],
    strict: bool = True,
    kueue_topologies: Sequence[Topology] = (),
    *,
    ignored: dict[tuple[str, bool], list[str]],
    selected_cache: dict[NodeSelector, np.ndarray],
    kept_together: Sequence[str] = (),
) -> GangTopology | None:
    required, preferred, broken = _terms(
        gang, tree.levels if tree is not None else (), carried, warnings, strict, kueue_topologies, ignored=ignored,
        kept_together=kept_together,
    )
    if broken and (tree is None or not (required or preferred)):
        return GangTopology((), (), (), {}, {}, broken)
    if tree is None:
        return None
    if not required and not preferred:
        return None
    lowest = max((*required, *preferred))
    compact = tuple(range(lowest + 1, len(tree.levels) + 1))
    pinned: dict[int, int] = {}
    # The first by name, not in the dump's order: the same cluster gives the same reason.
    away = min((p for p in gang.running if p.node_name not in node_index), key=lambda p: p.name, default=None)
    running_on = [node_index[p.node_name] for p in gang.running if p.node_name is not None and p.node_name in node_index]
    for level in required:
        running_domains = {_running_domain(tree, nodes[n], n, level) for n in running_on}
        if away is not None:
            broken = (
                f"required {level_key(tree, level)}: running member {away.key} is on node {away.node_name}, "
                "which is not in the snapshot"
            )
        elif -1 in running_domains:
            broken = f"required {level_key(tree, level)}: a running member is on a node outside the topology"
        elif len(running_domains) > 1:
            broken = f"required {level_key(tree, level)}: running members already span {len(running_domains)} domains"
        elif running_domains:
            pinned[level] = running_domains.pop()
    sort = tuple(_rank_rule(rule, resources, gpu_resource) for rule in gang.group.sort_rules or DEFAULT_SORT)
    selector = gang.group.node_selector
    selected = None
    if selector is not None:
        if (selected := selected_cache.get(selector)) is None:
            matches = (node_selector_matches(selector, node) for node in nodes)
            selected = selected_cache[selector] = np.fromiter(matches, dtype=bool, count=len(nodes))
    ranks = {}
    for level in sorted({*required, *preferred}):
        if (level, sort, selector) not in rank_cache:
            rank_cache[level, sort, selector] = rank_domains(tree, level, sort, allocatable, free, selected)
        ranks[level] = rank_cache[level, sort, selector]
    held: set[tuple[int, int]] = set()
    for n in running_on:
        for level in range(len(tree.levels) + 1):
            d = n if level == len(tree.levels) else tree.domain_of[level][n]
            if d is not None and n not in tree.outside:
                held.add((level, d))
    # DESIGN: a group no domain of its smallest preferred level holds spreads "inside as few
    # domains of the level above as possible"; a required level fixes those above it.
    enclosing = tuple(
        level
        for level in range(max(required, default=-1) + 1, max(preferred, default=0))
        if level not in preferred
    )
    return GangTopology(required, preferred, compact, ranks, pinned, broken, frozenset(held), enclosing, sort, selected)


def _running_domain(tree: TopologyTree, node: Node, n: int, level: int) -> int:
    """The domain at ``level`` a running member's node lies in, -1 for none. A node outside the
    topology (it lacks a lower level's label, which may be one only another group's term names)
    still lies in the domain its labels down to ``level`` name, as the verifier reads it: its
    running member pins that domain, though new pods never go to such a node. At the node level
    that is the node itself, as ``kubernetes.io/hostname`` names it whatever levels it lacks."""
    if level == len(tree.levels):
        return n
    found = tree.domain_of[level][n]
    if found is None and all(key in node.labels for key in tree.levels[: level + 1]):
        try:
            found = tree.domain_index(level, tuple(node.labels[key] for key in tree.levels[: level + 1]))
        except KeyError:  # no node inside the topology shares that path
            pass
    return -1 if found is None else found


_SORT_RESOURCE = {"CPU": "cpu", "Memory": "memory"}


def _rank_rule(rule: SortRule, resources: tuple[str, ...], gpu_resource: str) -> RankRule:
    name = _SORT_RESOURCE.get(rule.resource, gpu_resource)
    column = resources.index(name) if name in resources else -1
    return RankRule(column, rule.dimension == "Available", rule.order == "Descending")


def rank_domains(
    tree: TopologyTree, level: int, sort: Sequence[RankRule], allocatable: np.ndarray, free: np.ndarray,
    selected: np.ndarray | None = None,
) -> tuple[int, ...]:
    """Godel's NodeGroup order: each sort rule in turn on the domain's total over the
    ``selected`` nodes (all when None), then the domain path (determinism). ``allocatable``
    and ``free`` are nodes x resources."""
    nodes_by_domain, starts, by_path = _domain_layout(tree, level)
    keys = []
    for rule in sort:
        if rule.column < 0:
            continue
        column = (free if rule.available else allocatable)[:, rule.column]
        if selected is not None:
            column = np.where(selected, column, 0)
        total = np.add.reduceat(column[nodes_by_domain], starts) if len(starts) else np.zeros(0, np.int64)
        keys.append(-total if rule.descending else total)
    order = np.lexsort((by_path, *reversed(keys)))
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return tuple(ranks.tolist())


@functools.lru_cache(maxsize=32)
def _domain_layout(tree: TopologyTree, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes grouped by their domain at ``level`` (each node its own at the node level),
    where each domain's run starts, and each domain's position in path order."""
    if level == len(tree.levels):
        count = len(tree.node_names)
        nodes_by_domain, starts = np.arange(count), np.arange(count)
        paths: list[tuple[str, ...]] = [(name,) for name in tree.node_names]
    else:
        domains = tree.domains[level]
        nodes_by_domain = np.array([n for d in domains for n in d.nodes], dtype=np.int64)
        starts = np.cumsum([0] + [len(d.nodes) for d in domains[:-1]]) if domains else np.zeros(0, np.int64)
        paths = [d.path for d in domains]
    by_path = np.empty(len(paths), dtype=np.int64)
    by_path[sorted(range(len(paths)), key=paths.__getitem__)] = np.arange(len(paths))
    return nodes_by_domain, np.asarray(starts, dtype=np.int64), by_path


def on_room(problem: Problem, topology: GangTopology, free: np.ndarray) -> GangTopology:
    """``topology`` with the ranks of an Available sort rule read off ``free``."""
    if not topology.live or problem.tree is None:
        return topology
    allocatable = problem.matrix("allocatable")
    if problem.sort_only is not None:
        allocatable, free = np.hstack([allocatable, problem.sort_only[0]]), np.hstack([free, problem.sort_only[1]])
    ranks = {
        level: rank_domains(problem.tree, level, topology.sort, allocatable, free, topology.selected)
        for level in topology.ranks
    }
    return replace(topology, ranks=ranks)


def candidate_count(problem: Problem) -> int:
    return sum(len(role.nodes) for role in problem.roles)


def beside(problem: Problem, held: Mapping[tuple[int, int], int], job_groups: AbstractSet[int]) -> Problem:
    """The problem of placing ``job_groups`` in the room ``held`` leaves: each node's free
    room less what ``held`` puts there (candidates cut to what still fits), every other role
    without candidates, and a node ``held`` uses no longer idle."""
    free = problem.matrix("free").copy()
    for (r, n), c in held.items():
        free[n] -= np.array(problem.roles[r].request, dtype=np.int64) * c
    empty = frozen(np.zeros(0, dtype=np.int64))
    placed_on = _placed_on(held)
    taken = {
        g: taken_by_partners(problem, g, placed_on) for g, gang in enumerate(problem.gangs) if gang.job_group in job_groups
    }
    roles = tuple(
        _cut(role, free, taken[role.gang]) if role.gang in taken
        else role if not len(role.nodes) else replace(role, nodes=empty, caps=empty)
        for role in problem.roles
    )
    return _on_room(replace(problem, roles=roles), free, {n for (_, n), c in held.items() if c})


def alone(
    problem: Problem, j: int, free: np.ndarray, opened: AbstractSet[int], held: Mapping[tuple[int, int], int] | None = None
) -> tuple[Problem, tuple[int, ...]]:
    """JobGroup ``j`` as a problem of its own (its gangs and roles renumbered from 0) on the
    room ``free`` (per node and resource), with the nodes ``opened`` no longer idle and
    Available sort rules ranking on that room; and the problem's index of each of its roles. Its model is as small as the JobGroup, where one
    with every other JobGroup present, even with no candidates, grows with the queue. The pods
    ``held`` (role, node) already placed keep its gangs out of their exclusive partners' domains."""
    jg = problem.job_groups[j]
    roles: list[Role] = []
    gangs: list[GangSpec] = []
    origin: list[int] = []
    placed_on = _placed_on(held or {})
    for g in jg.gangs:
        gang = problem.gangs[g]
        renumbered = {r: len(roles) + i for i, r in enumerate(gang.roles)}
        taken = taken_by_partners(problem, g, placed_on)
        for r in gang.roles:
            roles.append(replace(_cut(problem.roles[r], free, taken), gang=len(gangs)))
            origin.append(r)
        tasks = tuple(replace(t, roles=tuple(renumbered[r] for r in t.roles)) for t in gang.tasks)
        topology = gang.topology and on_room(problem, gang.topology, free)
        gangs.append(
            replace(gang, job_group=0, roles=tuple(renumbered[r] for r in gang.roles), tasks=tasks, topology=topology)
        )
    only = replace(jg, gangs=tuple(range(len(gangs))), rank=0)
    mine = {g: i for i, g in enumerate(jg.gangs)}
    exclusive = tuple((level, mine[a], mine[b]) for level, a, b in problem.exclusive if a in mine and b in mine)
    sub = replace(problem, roles=tuple(roles), gangs=tuple(gangs), job_groups=(only,), exclusive=exclusive)
    return _on_room(sub, free, opened), tuple(origin)


def taken_by_partners(problem: Problem, g: int, placed_on: Callable[[int], Iterable[int]]) -> np.ndarray | None:
    """Per node, whether it lies in a domain where a gang kept apart from ``g``
    (``Problem.partners``) has pods (``placed_on``: a role's nodes); None when none has."""
    partners = problem.partners(g)
    if not partners:
        return None
    nodes: dict[int, list[int]] = defaultdict(list)  # level -> the partners' nodes
    for level, other in partners:
        for r in problem.gangs[other].roles:
            nodes[level].extend(placed_on(r))
    taken = np.zeros(len(problem.nodes), dtype=bool)
    for level, found in nodes.items():
        if found:
            array = problem.domain_array(level)
            taken |= np.isin(array, np.unique(array[found])) & (array >= 0)
    return taken if taken.any() else None


def _placed_on(held: Mapping[tuple[int, int], int]) -> Callable[[int], list[int]]:
    by_role: dict[int, list[int]] = defaultdict(list)
    for (r, n), c in held.items():
        if c:
            by_role[r].append(n)
    return lambda r: by_role.get(r, [])


def _cut(role: Role, free: np.ndarray, taken: np.ndarray | None = None) -> Role:
    """The role with its candidates cut to the pods that still fit in ``free``, and off the
    nodes ``taken`` (``taken_by_partners``)."""
    caps = np.minimum(role.caps, pods_that_fit(free, role.request, role.most, role.nodes))
    keep = caps > 0
    if taken is not None:
        keep &= ~taken[role.nodes]
    return replace(role, nodes=frozen(role.nodes[keep]), caps=frozen(caps[keep]))


def _on_room(problem: Problem, free: np.ndarray, opened: AbstractSet[int]) -> Problem:
    idle = problem.matrix("idle").copy()
    idle[list(opened)] = False
    return replace(problem, free=_rows(free.copy()), idle=_rows(idle))


class _Rows(Sequence):
    """Per-node values held in an array and read as ``Problem``'s tuples only where asked:
    ``--policy ordered`` makes a problem per JobGroup on the whole cluster's room, and turning
    every node's room into tuples each time was a tenth of its run at 8,192 nodes."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return tuple(self)[index]
        row = self.array[index]
        return tuple(row.tolist()) if self.array.ndim == 2 else bool(row)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(map(tuple, self.array.tolist()) if self.array.ndim == 2 else self.array.tolist())

    def __eq__(self, other: object) -> bool:
        # As the tuple it stands for: equal to a tuple (or rows) of the same values, not a list.
        if isinstance(other, (tuple, _Rows)):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _rows(array: np.ndarray) -> tuple:
    """``array`` (read-only from now on) as a ``_Rows``, which ``Problem.matrix`` hands back as
    is. Not in ``_MATRICES``: that kept each step's room until it held 64 entries, and then
    cleared the whole problem's arrays with it."""
    array.flags.writeable = False
    return _Rows(array)  # type: ignore[return-value]


def restrict(problem: Problem, keep: Mapping[tuple[int, int], int], *, per_role: int = 16, room: int = 2) -> Problem:
    """The same problem with each role's candidate nodes cut to a neighbourhood of ``keep``.

    A role keeps the nodes ``keep`` uses, then the nodes that hold most of its pods, until it
    has ``per_role`` nodes and room for ``room`` times its pods. Used only when the full model
    is too large for CP-SAT to search in time; the greedy plan stays inside it, so the solver
    can only improve on it.
    """
    used: dict[int, list[int]] = defaultdict(list)
    for (r, n), c in keep.items():
        if c:
            used[r].append(n)
    roles = []
    for r, role in enumerate(problem.roles):
        if len(role.nodes) <= per_role:
            roles.append(role)
            continue
        chosen = np.isin(role.nodes, used[r]) if used[r] else np.zeros(len(role.nodes), dtype=bool)
        # Then the roomiest nodes (ties: lowest index) while fewer than per_role or short of room.
        order = np.lexsort((role.nodes, -role.caps))
        order = order[~chosen[order]]
        held = int(role.caps[chosen].sum()) + np.concatenate(([0], np.cumsum(role.caps[order])))
        count = int(chosen.sum()) + np.arange(len(order) + 1)
        enough = (count >= per_role) & (held >= room * role.count)  # after taking 0, 1, 2, ... more
        take = len(order) if not enough.any() else int(np.argmax(enough))
        chosen[order[:take]] = True
        roles.append(replace(role, nodes=frozen(role.nodes[chosen]), caps=frozen(role.caps[chosen])))
    return replace(problem, roles=tuple(roles))

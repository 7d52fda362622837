"""The network-topology tree (DESIGN section 2): which levels, which domains, how full.

Levels are node label keys, largest first; the node itself is always the bottom, so
``kubernetes.io/hostname`` is never one of them: a term on it is a term at the node level,
below the last (the planner's level index ``len(levels)``). A domain is identified by its path of label
values from the top, as Kueue does: rack names are often reused under every block, and
``tor=t1`` under two miniPods must stay two domains or a "one tor" placement would span
two switches. A node lacking any level's label is outside the topology (as in Kueue): it
belongs to no domain and groups with a topology term never use it.

Pure: no files, no printing. Problems found on the way are returned as warning strings
for the caller to show.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import networkx as nx
import numpy as np

from . import kueue
from .model import Node, Snapshot, Topology
from .quantity import listed
from .semantics import HOSTNAME_LABEL, consumes_capacity, self_affine_keys, node_allocatable, node_usable, pod_requests

__all__ = [
    "DEFAULT_GPU_RESOURCE",
    "HOSTNAME_LABEL",
    "ROOT",
    "Domain",
    "TopologyTree",
    "Usage",
    "build_tree",
    "domain_usage",
    "node_usage",
    "resolve_levels",
    "shown_key",
    "topology_to_dict",
]

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
ROOT = ""


# ---------------------------------------------------------------- levels


def shown_key(key: str) -> str:
    """A label key as a message shows it: quoted when spaces or nothing would hide where it
    ends (Kueue reads an annotation "tor " as the key "tor ", not "tor")."""
    return key if key and key == key.strip() and key.isprintable() else repr(key)


def _ranked_topologies(snapshot: Snapshot) -> list[Topology]:
    """One tree for all groups: the Topology that has most of the keys the groups name, then
    the first by name, so that the choice does not follow the order of the input."""
    named = set(named_topology_keys(snapshot)[0])
    return sorted(snapshot.topologies, key=lambda t: (-len(named & set(t.levels)), t.name))


def resolve_levels(
    snapshot: Snapshot, explicit: Sequence[str] | None = None
) -> tuple[tuple[str, ...], list[str]]:
    """The level keys, largest first, and warnings.

    A Topology object is the cluster's own statement and wins; ``--levels`` is the user's
    (None means not given; an empty sequence means a flat cluster with no levels); else
    the keys the groups name, ordered by how they nest on the nodes.
    """
    warnings: list[str] = []
    if snapshot.topologies:
        ranked = _ranked_topologies(snapshot)
        chosen = ranked[0]
        if len(ranked) > 1:
            others = ", ".join(t.name for t in ranked[1:])
            warnings.append(
                f"{len(ranked)} Topology objects; using {chosen.name}, which has the most of the "
                f"levels the groups name (ignored: {others})"
            )
        if explicit is not None:
            warnings.append(f"--levels ignored: Topology {chosen.name} defines the levels")
        levels = _clean(chosen.levels, f"Topology {chosen.name}", warnings)
    elif explicit is not None:
        levels = _clean(explicit, "--levels", warnings)
    else:
        levels = _infer(snapshot)
    carried = {key for node in snapshot.nodes for key in node.labels}
    if not snapshot.topologies and explicit is None:
        # A key one group names and no node carries would put every node outside the tree,
        # and every group with a topology term out of reach; it binds only the groups naming it.
        for key in levels:
            if key not in carried:
                warnings.append(f"topologyKey {shown_key(key)} is a label no node carries, so it is not a topology level")
        levels = tuple(key for key in levels if key in carried)
    for key in levels:
        if key not in carried:
            warnings.append(
                f"topology level {shown_key(key)} is a label no node carries: every node is outside "
                "the topology, so groups with a topology term cannot be placed"
            )
    return levels, warnings


def _clean(keys: Sequence[str], source: str, warnings: list[str]) -> tuple[str, ...]:
    """Drop the hostname level (the node is the bottom already) and repeated keys."""
    result: list[str] = []
    for key in keys:
        if key == HOSTNAME_LABEL:
            continue
        if key in result:
            warnings.append(f"{source} names level {key} twice; the second is ignored")
            continue
        result.append(key)
    return tuple(result)


def named_topology_keys(snapshot: Snapshot) -> tuple[list[str], list[tuple[str, ...]]]:
    """The topology keys the groups name (Godel terms, Kueue annotations, a gang's pod affinity
    to itself alone), sorted, and the orders the groups' terms hint at, each largest first. ``kubernetes.io/hostname`` is among the keys when named: it is
    the node level, never a level of the tree.

    Godel's preferred terms are written largest first, and a group's required term is the
    larger segment its preferred ones divide (seed 003: required into one BigPod, preferred
    MiniPods inside it): hints, largest first, for when labels alone cannot tell two levels
    apart (tor names repeated under every miniPod). Required terms carry no order among them.
    """
    keys: set[str] = set()
    orders: list[tuple[str, ...]] = []
    for group in snapshot.pod_groups:
        keys.update(group.required_topology, group.preferred_topology)
        inner = tuple(k for k in group.preferred_topology if k != HOSTNAME_LABEL)
        orders.append(inner)
        orders.extend((outer, k) for outer in group.required_topology if outer != HOSTNAME_LABEL for k in inner if k != outer)
    for pod in snapshot.pods:
        keys.update(key for key in kueue.topology_requests(pod.annotations) if key)
    keys.update(self_affine_keys(snapshot))
    # An order seen before adds nothing (its edges are in, or were refused): 300 groups with the same terms.
    # Where orders disagree, the one more groups hint at goes first, then the lesser tuple: not the file's order.
    counts = Counter(order for order in orders if len(order) > 1)
    return sorted(keys), sorted(counts, key=lambda order: (-counts[order], order))


def _infer(snapshot: Snapshot) -> tuple[str, ...]:
    """Order the named keys largest first.

    Nesting decides first: if every value of B lies within one value of A (and not the
    reverse), A is above B; where each lies within one of the other on the nodes carrying both,
    a key more nodes carry (a superset of B's) is above (a zone label on every node, a rack
    label on some). Where labels do not nest, the groups' terms decide (preferred
    ones in their order, a required one above a preferred one);
    failing that, the key with fewer distinct values (a coarser partition) goes first, then
    the name. Keys no node carries go last (resolve_levels then drops them), and say nothing
    of how the others nest (a typo in one group's terms must not reorder everyone's levels).
    """
    named, orders = named_topology_keys(snapshot)
    keys = [k for k in named if k != HOSTNAME_LABEL]
    values: dict[str, set[str]] = {key: set() for key in keys}
    carriers: dict[str, set[int]] = {key: set() for key in keys}
    for n, node in enumerate(snapshot.nodes):
        for key in keys:
            if key in node.labels:
                values[key].add(node.labels[key])
                carriers[key].add(n)
    rank = {key: (not values[key], len(values[key]), key) for key in keys}
    nests = _nesting(snapshot.nodes, keys)
    order = nx.DiGraph()
    order.add_nodes_from(keys)
    for i, a in enumerate(keys):
        for j, b in enumerate(keys):
            if i != j and nests[j, i] and (not nests[i, j] or carriers[a] > carriers[b]):
                if not nx.has_path(order, b, a):  # nesting seen on different nodes may loop
                    order.add_edge(a, b)
    for named_order in orders:
        carried = [key for key in named_order if values.get(key)]  # a key no node carries orders nothing
        for above, below in zip(carried, carried[1:]):
            if above != below and not nx.has_path(order, below, above):
                order.add_edge(above, below)
    # Last, the level names datacenter networks use, where nothing above told two keys apart
    # (tor names repeated under each miniPod nest neither way, and no group names both).
    tiers = {key: tier for key in keys if (tier := _tier(key)) is not None and values[key]}
    for a, b in sorted((a, b) for a in tiers for b in tiers if tiers[a] < tiers[b]):
        if not nx.has_path(order, a, b) and not nx.has_path(order, b, a):
            order.add_edge(a, b)
    return tuple(nx.lexicographical_topological_sort(order, key=lambda k: rank[k]))


# Level names, largest first, as Kubernetes, Kueue's topology examples and seed 003 (BigPod,
# MiniPod, ToR) write them: a label key's last part, split at '-', '_' and '.', is matched word by word.
_TIERS = (
    frozenset({"region"}),
    frozenset({"zone"}),
    frozenset({"bigpod", "superpod", "spine", "block"}),
    frozenset({"minipod", "subblock"}),
    frozenset({"tor", "rack", "leaf"}),
)


def _tier(key: str) -> int | None:
    words = set(re.split(r"[-_.]", key.rsplit("/", 1)[-1].lower()))
    found = [i for i, names in enumerate(_TIERS) if words & names]
    return found[0] if len(found) == 1 else None


def _nesting(nodes: Sequence[Node], keys: Sequence[str]) -> np.ndarray:
    """``[i, j]``: each value of ``keys[i]`` lies within one value of ``keys[j]`` on the nodes
    carrying both, and some node carries both (else there is no evidence either way).

    All pairs at once, one inner key at a time over every outer key: asked pair by pair over
    the nodes, 100 keys on 2,048 nodes took 6 s.
    """
    codes = np.full((len(keys), len(nodes)), -1, dtype=np.int64)
    for k, key in enumerate(keys):
        seen: dict[str, int] = {}
        codes[k] = [seen.setdefault(node.labels[key], len(seen)) if key in node.labels else -1 for node in nodes]
    absent = np.iinfo(np.int64).max  # above every code, so that a node without the outer key is no minimum
    result = np.zeros((len(keys), len(keys)), dtype=bool)
    for i in range(len(keys)):
        carrying = np.flatnonzero(codes[i] >= 0)
        if not carrying.size:
            continue
        carrying = carrying[np.argsort(codes[i, carrying], kind="stable")]
        inner = codes[i, carrying]
        runs = np.flatnonzero(np.r_[True, inner[1:] != inner[:-1]])  # one run per inner value
        outer = codes[:, carrying]
        high = np.maximum.reduceat(outer, runs, axis=1)  # -1 where no node of the run has the outer key
        low = np.minimum.reduceat(np.where(outer < 0, absent, outer), runs, axis=1)
        both = high >= 0
        result[i] = both.any(axis=1) & (~both | (low == high)).all(axis=1)
    return result


# ---------------------------------------------------------------- tree


@dataclass(frozen=True, slots=True)
class Domain:
    level: int
    path: tuple[str, ...]  # label values from the top level down to this one
    nodes: tuple[int, ...]  # indices into the node sequence the tree was built from

    @property
    def name(self) -> str:
        return "/".join(self.path)

    @property
    def value(self) -> str:
        return self.path[-1]


@dataclass(frozen=True, eq=False)
class TopologyTree:
    """The topology as a tree; ``graph`` is the same tree for graph algorithms.

    ``graph`` has the root ``ROOT`` (""), a node ``(level, path)`` per domain and
    ``("node", name)`` per node inside the topology; nodes outside are not in it.
    """

    levels: tuple[str, ...]
    node_names: tuple[str, ...]
    graph: nx.DiGraph
    domains: tuple[tuple[Domain, ...], ...]
    domain_of: tuple[tuple[int | None, ...], ...]
    outside: frozenset[int]
    warnings: tuple[str, ...] = ()
    _index: Mapping[tuple[int, tuple[str, ...]], int] = field(default_factory=dict, repr=False)

    def domain_index(self, level: int, path: Sequence[str]) -> int:
        """Raises KeyError when there is no such domain."""
        return self._index[(level, tuple(path))]

    def find(self, level: int, path: Sequence[str]) -> Domain | None:
        index = self._index.get((level, tuple(path)))
        return None if index is None else self.domains[level][index]

    def parent(self, domain: Domain) -> Domain | None:
        return None if domain.level == 0 else self.find(domain.level - 1, domain.path[:-1])

    def children(self, domain: Domain) -> tuple[Domain, ...]:
        """The domains one level down; empty at the last level (its children are nodes)."""
        return tuple(
            self.domains[domain.level + 1][self._index[child]]
            for child in self.graph.successors((domain.level, domain.path))
            if child[0] != "node"
        )


def build_tree(nodes: Sequence[Node], levels: Sequence[str]) -> TopologyTree:
    """Group the nodes by their paths of level labels; warn where labels do not nest."""
    levels = tuple(levels)
    warnings: list[str] = []
    paths: list[tuple[str, ...] | None] = []
    missing: dict[str, int] = defaultdict(int)
    for node in nodes:
        values = [node.labels.get(key) for key in levels]
        for key, value in zip(levels, values):
            if value is None:
                missing[key] += 1
        paths.append(None if None in values else tuple(values))  # type: ignore[arg-type]
    outside = frozenset(i for i, path in enumerate(paths) if path is None)

    members: list[dict[tuple[str, ...], list[int]]] = [defaultdict(list) for _ in levels]
    for i, path in enumerate(paths):
        if path is not None:
            for depth in range(len(levels)):
                members[depth][path[: depth + 1]].append(i)
    domains: list[tuple[Domain, ...]] = []
    index: dict[tuple[int, tuple[str, ...]], int] = {}
    for depth, by_path in enumerate(members):
        row = tuple(Domain(depth, p, tuple(by_path[p])) for p in sorted(by_path))
        domains.append(row)
        index.update(((depth, d.path), n) for n, d in enumerate(row))
    domain_of = tuple(
        tuple(None if path is None else index[(depth, path[: depth + 1])] for path in paths)
        for depth in range(len(levels))
    )

    graph = nx.DiGraph()
    graph.add_node(ROOT, kind="root")
    for row in domains:
        for d in row:
            parent = ROOT if d.level == 0 else (d.level - 1, d.path[:-1])
            graph.add_node((d.level, d.path), kind="domain", key=levels[d.level], value=d.value)
            graph.add_edge(parent, (d.level, d.path))
    for i, (node, path) in enumerate(zip(nodes, paths)):
        if path is not None:  # not outside
            leaf = ("node", node.name)
            graph.add_node(leaf, kind="node", index=i)
            parent = ROOT if not levels else (len(levels) - 1, path)
            graph.add_edge(parent, leaf)

    warnings.extend(_nesting_warnings(levels, domains))
    if outside:
        names = sorted(nodes[i].name for i in outside)
        shown = listed(names)
        lacking = ", ".join(f"{key} on {n}" for key, n in missing.items())
        warnings.append(
            f"{len(outside)} of {len(nodes)} nodes lack a topology label ({lacking}) and are "
            f"outside the topology; groups with a topology term never use them: {shown}"
        )
    return TopologyTree(
        levels=levels,
        node_names=tuple(node.name for node in nodes),
        graph=graph,
        domains=tuple(domains),
        domain_of=domain_of,
        outside=outside,
        warnings=tuple(warnings),
        _index=index,
    )


NESTING_WARNINGS_SHOWN = 3


def _nesting_warnings(levels: tuple[str, ...], domains: list[tuple[Domain, ...]]) -> list[str]:
    """One warning per level whose values appear under more than one parent domain, for the
    first few such levels, then one line naming the rest (100 label keys printed 99 warnings)."""
    warnings: list[str] = []
    rest: list[str] = []
    for depth in range(1, len(levels)):
        parents: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        for d in domains[depth]:
            parents[d.value].append(d.path[:-1])
        shared = sorted(value for value, under in parents.items() if len(under) > 1)
        if not shared:
            continue
        if len(warnings) == NESTING_WARNINGS_SHOWN:
            rest.append(levels[depth])
            continue
        value = shared[0]
        first, second = parents[value][:2]
        if first[-1] != second[-1]:
            one, two = f"{levels[depth - 1]}={first[-1]}", f"{levels[depth - 1]}={second[-1]}"
        else:
            # From the deepest level where they part: 100 levels of labels made a warning of 100 values a path.
            at = max(i for i, (a, b) in enumerate(zip(first, second)) if a != b)
            lead = "…/" if at else ""
            one, two = lead + "/".join(first[at:]), lead + "/".join(second[at:])
        more = len(parents[value]) - 2
        text = (
            f"labels do not nest: {levels[depth]}={value} lies under {one} and {two}"
            + (f" (and {more} more)" if more else "")
        )
        if len(shared) > 1:
            text += f"; {len(shared) - 1} more {levels[depth]} value(s) too"
        warnings.append(text + "; each path is its own domain")
    if rest:
        warnings.append(f"labels do not nest at {len(rest)} more level(s) too: {listed(rest)}; each path is its own domain")
    return warnings


# ---------------------------------------------------------------- usage


@dataclass(frozen=True, slots=True)
class Usage:
    """Capacity and free amounts of cpu (millicores), memory (bytes) and the GPU resource.

    ``allocatable`` sums it over every node; ``free`` only over usable (Ready and
    schedulable) nodes, since nothing can be placed on the others, and never below zero
    per node, so an overcommitted node does not hide another's room.
    """

    nodes: int
    usable: int
    allocatable: Mapping[str, int]
    free: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "usableNodes": self.usable,
            "allocatable": dict(self.allocatable),
            "free": dict(self.free),
        }


def _resources(gpu_resource: str) -> tuple[str, ...]:
    return ("cpu", "memory", gpu_resource)


def node_usage(snapshot: Snapshot, gpu_resource: str = DEFAULT_GPU_RESOURCE) -> dict[str, Usage]:
    """Per node name; running pods' requests are what a node no longer offers."""
    resources = _resources(gpu_resource)
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for pod in snapshot.pods:
        if consumes_capacity(pod):
            requests = pod_requests(pod)
            for name in resources:
                used[pod.node_name][name] += requests.get(name, 0)  # type: ignore[index]
    result = {}
    for node in snapshot.nodes:
        allocatable = node_allocatable(node)
        capacity = {name: allocatable.get(name, 0) for name in resources}
        usable = node_usable(node)
        free = {
            name: max(0, capacity[name] - used[node.name][name]) if usable else 0
            for name in resources
        }
        result[node.name] = Usage(1, int(usable), capacity, free)
    return result


def _total(parts: Sequence[Usage], resources: tuple[str, ...]) -> Usage:
    return Usage(
        nodes=sum(p.nodes for p in parts),
        usable=sum(p.usable for p in parts),
        allocatable={name: sum(p.allocatable[name] for p in parts) for name in resources},
        free={name: sum(p.free[name] for p in parts) for name in resources},
    )


def domain_usage(
    tree: TopologyTree, snapshot: Snapshot, gpu_resource: str = DEFAULT_GPU_RESOURCE
) -> tuple[tuple[Usage, ...], ...]:
    """Per level, per domain (aligned with ``tree.domains``): the sums over its nodes.

    ``snapshot`` must hold the nodes the tree was built from; they are matched by name.
    """
    per_node = node_usage(snapshot, gpu_resource)
    resources = _resources(gpu_resource)
    return tuple(
        tuple(_total([per_node[tree.node_names[i]] for i in d.nodes], resources) for d in row)
        for row in tree.domains
    )


def topology_to_dict(
    tree: TopologyTree, snapshot: Snapshot, gpu_resource: str = DEFAULT_GPU_RESOURCE
) -> dict[str, Any]:
    """The whole tree as JSON-able data, domains in path order and nodes in input order.

    Warnings are left to the caller (stderr), so the data is the same whatever was said.

    Amounts are integers: cpu in millicores, memory in bytes, GPUs in units.
    """
    per_node = node_usage(snapshot, gpu_resource)
    usage = domain_usage(tree, snapshot, gpu_resource)
    resources = _resources(gpu_resource)
    nodes = {node.name: node for node in snapshot.nodes}

    def leaf(i: int) -> dict[str, Any]:
        name = tree.node_names[i]
        node = nodes[name]
        figures = per_node[name]
        return {
            "node": name,
            "ready": node.ready,
            "unschedulable": node.unschedulable,
            "allocatable": dict(figures.allocatable),
            "free": dict(figures.free),
        }

    def branch(graph_id: Any) -> list[dict[str, Any]]:
        children = []
        for child in tree.graph.successors(graph_id):
            if child[0] == "node":
                children.append(leaf(tree.graph.nodes[child]["index"]))
                continue
            level, path = child
            figures = usage[level][tree.domain_index(level, path)]
            children.append(
                {
                    "level": tree.levels[level],
                    "value": path[-1],
                    "path": list(path),
                    **figures.to_dict(),
                    "children": branch(child),
                }
            )
        return children

    names = tree.node_names
    inside = [per_node[names[i]] for i in range(len(names)) if i not in tree.outside]
    return {
        "levels": list(tree.levels),
        "gpuResource": gpu_resource,
        "total": _total(inside, resources).to_dict(),
        "children": branch(ROOT),
        "outside": [leaf(i) for i in sorted(tree.outside)],
    }

"""Candidate nodes as build_problem finds them (filters run once per class of alike nodes,
shared between roles) against the rule written node by node: ``filter_reason`` and the
topology's own check, then room for one pod."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.loader import load_snapshot
from gangplan.model import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodGroup,
    PodGroupAPI,
    Snapshot,
    Taint,
    Toleration,
)
from gangplan.planner import Options, plan
from gangplan.problem import GangTopology, Vector, _domain_array, _Eligibility, _excluded, build_problem, level_key
from gangplan.semantics import Gang, filter_reason
from gangplan.topology import TopologyTree, build_tree
from gangplan.verify import verify

KEYS = ("zone", "pool", "gen")
VALUES = ("a", "b", "1", "7")

label_sets = st.fixed_dictionaries(
    {"zone": st.sampled_from(("a", "b"))},
    optional={"pool": st.sampled_from(("a", "b")), "gen": st.sampled_from(("1", "7"))},
)
# Few taints and mostly Ready nodes, so that many nodes differ only in the labels a filter reads.
rare = st.sampled_from((False, False, False, True))
taints = st.lists(
    st.builds(Taint, st.sampled_from(("gpu", "spot")), st.sampled_from(("yes", "no")),
              st.sampled_from(("NoSchedule", "PreferNoSchedule", "NoExecute"))),
    max_size=1,
).map(tuple) | st.just(())
requirements = st.builds(
    NodeSelectorRequirement,
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
    st.lists(st.sampled_from(VALUES), min_size=0, max_size=2, unique=True).map(tuple),
)
names = st.sampled_from([f"n{i}" for i in range(10)])
fields = st.builds(
    NodeSelectorRequirement, st.just("metadata.name"), st.sampled_from(("In", "NotIn")), st.tuples(names)
)
terms = st.builds(
    NodeSelectorTerm,
    st.lists(requirements, max_size=2).map(tuple),
    st.lists(fields, max_size=1).map(tuple),
)
selectors = st.none() | st.builds(NodeSelector, st.lists(terms, max_size=2).map(tuple))
tolerations = st.lists(
    st.builds(Toleration, st.sampled_from(("gpu", "spot", "")), st.sampled_from(("Equal", "Exists")),
              st.sampled_from(("yes", "no", "")), st.sampled_from(("NoSchedule", "NoExecute", ""))),
    max_size=2,
).map(tuple)


# Nodes, each node's free room (cpu only), and pods, each with its group and request.
Cluster = tuple[list[Node], list[Vector], list[tuple[Pod, PodGroup, Vector]]]


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    count = draw(st.integers(1, 10))
    nodes = [
        Node(f"n{i}", draw(label_sets), {"cpu": 4000}, draw(taints), draw(rare), not draw(rare))
        for i in range(count)
    ]
    free: list[Vector] = [(draw(st.integers(0, 4)),) for _ in nodes]
    pods: list[tuple[Pod, PodGroup, Vector]] = [
        (
            Pod(namespace="ns", name=f"p{k}", node_selector=draw(st.dictionaries(st.sampled_from(("zone", "pool")), st.sampled_from(("a", "b")), max_size=1)),
                node_affinity=draw(selectors), tolerations=draw(tolerations)),
            PodGroup(namespace="ns", name=f"g{k}", api=PodGroupAPI.SCHEDULER_PLUGINS, min_member=1, node_selector=draw(selectors)),
            (draw(st.integers(0, 3)),),
        )
        for k in range(draw(st.integers(1, 6)))
    ]
    return nodes, free, pods


def _one_by_one(
    eligibility: _Eligibility, pod: Pod, gang: Gang, topology: GangTopology | None, request: Vector
) -> list[int]:
    return [i for i in range(len(eligibility.nodes)) if _reason(eligibility, i, pod, gang, topology, request) is None]


def _reason(
    eligibility: _Eligibility, i: int, pod: Pod, gang: Gang, topology: GangTopology | None, request: Vector
) -> str | None:
    """Why node ``i`` is no candidate, as the kube-scheduler breakdown names it, node by node."""
    reason = filter_reason(eligibility.nodes[i], pod, gang.group)
    allowed = eligibility.only.get(id(pod))
    if reason is None and allowed is not None and eligibility.nodes[i].name not in allowed:
        reason = "pod affinity"
    if reason is None and eligibility.nodes[i].name in eligibility.blocked.get(id(pod), ()):
        reason = "pod anti-affinity"
    if reason is None and topology is not None and eligibility.tree is not None:
        reason = _topology_reason(i, eligibility.tree, topology)
    short = [k for k, w in enumerate(request) if w and eligibility.free[i, k] < w]
    return reason if reason is not None or not short else f"resource {('cpu',)[short[0]]}"


def _topology_reason(node: int, tree: TopologyTree, topology: GangTopology) -> str | None:
    if node in tree.outside:
        return "outside the topology"
    for level, domain in topology.pinned.items():
        if _domain_array(tree, level)[node] != domain:
            return f"required {level_key(tree, level)} (running members)"
    return None


def _reasons(eligibility: _Eligibility, pod: Pod, gang: Gang) -> list[str | None]:
    names, codes = eligibility.filter_codes(pod, gang)
    return [None if c < 0 else names[c] for c in codes.tolist()]


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_candidates_are_the_nodes_each_filter_passes(cluster: Cluster) -> None:
    nodes, free, pods = cluster
    eligibility = _Eligibility(nodes, free, None, 1)
    for pod, group, request in pods:
        gang = Gang(group)
        found, caps = eligibility.caps(pod, gang, None, request, 2)
        expected = _one_by_one(eligibility, pod, gang, None, request)
        assert found.tolist() == expected
        assert all(filter_reason(nodes[i], pod, group) is None for i in found.tolist())
        per_node = [min(2, f[0] // request[0]) if request[0] else 2 for f in (free[i] for i in expected)]
        assert caps.tolist() == per_node
        assert _reasons(eligibility, pod, gang) == [filter_reason(n, pod, group) for n in nodes]
        by_node = Counter(_reason(eligibility, i, pod, gang, None, request) for i in range(len(nodes)))
        del by_node[None]
        assert _excluded(eligibility, pod, gang, None, request, ("cpu",)) == dict(sorted(by_node.items()))


@settings(max_examples=300, deadline=None)
@given(clusters(), st.data())
def test_pod_affinity_and_pinned_domains_are_counted_after_the_filters(cluster: Cluster, data: st.DataObject) -> None:
    """Pods that share their filters but not their pod (anti-)affinity, as a gang's pods each
    drawing a term do, share a verdict per class of nodes (cached once) and then each have
    their own nodes ruled out: the counts are those written node by node, a node's first
    failing filter first, then pod affinity, pod anti-affinity, topology and room."""
    nodes, free, pods = cluster
    tree = build_tree(nodes, ["pool"])  # nodes without a pool are outside it
    subsets = st.none() | st.frozensets(st.sampled_from([n.name for n in nodes]))
    only = {id(pod): allowed for pod, _, _ in pods if (allowed := data.draw(subsets)) is not None}
    blocked = {id(pod): data.draw(st.frozensets(st.sampled_from([n.name for n in nodes])) | st.just(frozenset())) for pod, _, _ in pods}
    eligibility = _Eligibility(nodes, free, tree, 1, blocked, only=only)
    for pod, group, request in pods:
        gang = Gang(group)
        domains = list(range(len(tree.domains[0]))) if tree.levels else []
        pinned = data.draw(st.sampled_from(domains).map(lambda d: {0: d}) | st.just({})) if domains else {}
        for topology in (None, GangTopology((0,), (), (1,), {}, pinned)):
            found, _ = eligibility.caps(pod, gang, topology, request, 2)
            assert found.tolist() == _one_by_one(eligibility, pod, gang, topology, request)
            by_node = Counter(_reason(eligibility, i, pod, gang, topology, request) for i in range(len(nodes)))
            del by_node[None]
            assert _excluded(eligibility, pod, gang, topology, request, ("cpu",)) == dict(sorted(by_node.items()))


def test_alike_nodes_share_a_verdict_but_not_when_the_name_is_read() -> None:
    # Eight nodes agree on every label the selector reads; only their names differ.
    nodes = [Node(f"n{i}", {"zone": "a", "host": f"h{i}"}, {"cpu": 4000}) for i in range(8)]
    eligibility = _Eligibility(nodes, [(1,)] * 8, None, 1)
    by_zone = Pod(namespace="ns", name="p", node_selector={"zone": "a"})
    group = Gang(PodGroup(namespace="ns", name="g", api=PodGroupAPI.SCHEDULER_PLUGINS, min_member=1))
    assert eligibility.caps(by_zone, group, None, (1,), 1)[0].tolist() == list(range(8))
    by_name = Pod(namespace="ns", name="q", node_affinity=NodeSelector((NodeSelectorTerm(
        (), (NodeSelectorRequirement("metadata.name", "In", ("n5",)),)),)))
    assert eligibility.caps(by_name, group, None, (1,), 1)[0].tolist() == [5]
    by_host = Pod(namespace="ns", name="r", node_affinity=NodeSelector((NodeSelectorTerm(
        (NodeSelectorRequirement("host", "NotIn", ("h2", "h3")),)),)))
    assert eligibility.caps(by_host, group, None, (1,), 1)[0].tolist() == [0, 1, 4, 5, 6, 7]


def test_pinned_domains_and_nodes_outside_the_tree() -> None:
    labels = [{"rack": "r1"}, {"rack": "r2"}, {"rack": "r1"}, {}, {"rack": "r2"}]
    nodes = [Node(f"n{i}", dict(l), {"cpu": 4000}) for i, l in enumerate(labels)]
    tree = build_tree(nodes, ["rack"])
    eligibility = _Eligibility(nodes, [(1,)] * 5, tree, 1)
    pod = Pod(namespace="ns", name="p")
    gang = Gang(PodGroup(namespace="ns", name="g", api=PodGroupAPI.SCHEDULER_PLUGINS, min_member=1))
    r2 = tree.domain_of[0][1]
    assert r2 is not None
    for pinned in ({}, {0: r2}):
        topology = GangTopology((0,), (), (1,), {}, pinned)
        found = eligibility.caps(pod, gang, topology, (1,), 1)[0].tolist()
        assert found == [i for i in range(5) if _topology_reason(i, tree, topology) is None]
    assert eligibility.caps(pod, gang, GangTopology((0,), (), (1,), {}, {0: r2}), (1,), 1)[0].tolist() == [1, 4]
    assert eligibility.caps(pod, gang, None, (1,), 1)[0].tolist() == [0, 1, 2, 3, 4]


def _objects_to_snapshot(tmp_path: Path, objects: list[dict]) -> Snapshot:
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return load_snapshot([str(path)])


def _pod(name: str, requests: dict[str, str], group: str | None = None, node: str | None = None) -> dict:
    annotations = {"scheduling.k8s.io/group-name": group} if group else {}
    spec: dict = {"containers": [{"name": "main", "resources": {"requests": requests}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", "annotations": annotations},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_node_over_committed_in_one_resource_still_takes_pods_that_do_not_ask_it(tmp_path: Path, solver: str) -> None:
    """A node's free room stops at zero: running pods over its allocatable memory (allocatable
    lowered after they started) leave no memory, not less than none, and a pod asking no memory
    still fits its cpu there (kube-scheduler's NodeResourcesFit checks only what a pod asks).
    Read as negative, the node's memory row alone made the whole model infeasible."""
    def node(name: str, cpu: str, memory: str) -> dict:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                "status": {"allocatable": {"cpu": cpu, "memory": memory}}}

    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "cpu-only", "namespace": "ml"}, "spec": {"minMember": 1}}
    other = {**group, "metadata": {"name": "memory", "namespace": "ml"}}
    objects = [
        node("over", "4", "1Gi"), node("small", "1", "8Gi"),
        _pod("old", {"cpu": "1", "memory": "2Gi"}, node="over"),
        group, _pod("cpu-only-0", {"cpu": "2"}, "cpu-only"),
        other, _pod("memory-0", {"cpu": "1", "memory": "1Gi"}, "memory"),
    ]
    snapshot = _objects_to_snapshot(tmp_path, objects)
    problem = build_problem(snapshot)
    memory = problem.resources.index("memory")
    assert problem.free[0][memory] == 0
    result = plan(snapshot, Options(solver=solver, time_limit=5))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert {g.key for g in result.groups if g.placed} == {"ml/cpu-only", "ml/memory"}


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_pods_alike_but_for_their_tolerations_are_filtered_apart(tmp_path: Path, solver: str) -> None:
    """Each pod passes the taint filter on its own tolerations (kube-scheduler's
    TaintToleration): of two pods of one size, only the one that tolerates the taint may take
    the tainted node, and the other the plain one, so the pair is placed."""
    def node(name: str, **spec: object) -> dict:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec,
                "status": {"allocatable": {"cpu": "1"}}}

    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pair", "namespace": "ml"}, "spec": {"minMember": 2}}
    plain, tolerant = _pod("pair-0", {"cpu": "1"}, "pair"), _pod("pair-1", {"cpu": "1"}, "pair")
    tolerant["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    objects = [node("tainted", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]), node("plain"),
               group, plain, tolerant]
    snapshot = _objects_to_snapshot(tmp_path, objects)
    result = plan(snapshot, Options(solver=solver, time_limit=5))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert {g.key for g in result.groups if g.placed} == {"ml/pair"}


def test_excluded_nodes_are_counted_for_the_first_role_with_no_candidate(tmp_path: Path) -> None:
    """A group's excluded counts (kube-scheduler's '0/N nodes are available' breakdown) are those
    of its first role with no candidate, roles ordered by their first pod's name: pair-0 asks
    more cpu than the node has, so the count says 'resource cpu', not pair-1's selector."""
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pair", "namespace": "ml"}, "spec": {"minMember": 2}}
    big, picky = _pod("pair-0", {"cpu": "8"}, "pair"), _pod("pair-1", {"cpu": "1"}, "pair")
    picky["spec"]["nodeSelector"] = {"zone": "x"}
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0", "labels": {"zone": "y"}},
                "status": {"allocatable": {"cpu": "4"}}}, group, big, picky]
    (gang,) = build_problem(_objects_to_snapshot(tmp_path, objects)).gangs
    assert dict(gang.excluded) == {"resource cpu": 1}


def test_a_node_with_just_enough_of_one_resource_is_short_of_the_other(tmp_path: Path) -> None:
    """NodeResourcesFit rejects a node for a resource whose request exceeds its free room: the
    node has exactly the 4 cpu asked, so it is short of memory, not of cpu."""
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "one", "namespace": "ml"}, "spec": {"minMember": 1}}
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
                "status": {"allocatable": {"cpu": "4", "memory": "1Gi"}}},
               group, _pod("one-0", {"cpu": "4", "memory": "2Gi"}, "one")]
    (gang,) = build_problem(_objects_to_snapshot(tmp_path, objects)).gangs
    assert dict(gang.excluded) == {"resource memory": 1}


def _tolerates_as_written(tolerations: list[Toleration], taint: Taint) -> bool:
    """Kubernetes' ToleratesTaint, one toleration at a time: an empty effect matches every
    effect; Exists with an empty key every taint; otherwise the keys, and for Equal the values."""
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.operator == "Exists" and (not t.key or t.key == taint.key):
            return True
        if t.operator != "Exists" and t.key == taint.key and t.value == taint.value:
            return True
    return False


_WORDS = st.sampled_from(["", "a", "b"])
_EFFECTS = st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"])


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.builds(Toleration, _WORDS, st.sampled_from(["Equal", "Exists"]), _WORDS, _EFFECTS), max_size=4),
    st.builds(Taint, st.sampled_from(["a", "b"]), _WORDS, _EFFECTS.filter(bool)),
)
def test_tolerations_looked_up_tolerate_what_each_one_does(tolerations: list[Toleration], taint: Taint) -> None:
    """semantics.tolerates looks a pod's tolerations up (300 against 50 taints a node took 25 s
    one by one); it must tolerate exactly the taints one of them does."""
    from gangplan.semantics import tolerates

    assert tolerates(tolerations, taint) is _tolerates_as_written(tolerations, taint)

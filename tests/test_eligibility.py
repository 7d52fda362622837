"""Candidate nodes as build_problem finds them (filters run once per class of alike nodes,
shared between roles) against the rule written node by node: ``filter_reason`` and the
topology's own check, then room for one pod."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.model import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodGroup,
    PodGroupAPI,
    Taint,
    Toleration,
)
from gangplan.problem import GangTopology, Vector, _Eligibility, _topology_reason
from gangplan.semantics import Gang, filter_reason
from gangplan.topology import build_tree

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
    return [
        i for i in range(len(eligibility.nodes))
        if eligibility.reason(i, pod, gang, topology) is None
        and all(w == 0 or eligibility.free[i, k] >= w for k, w in enumerate(request))
    ]


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

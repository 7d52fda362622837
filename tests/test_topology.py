"""The topology tree (DESIGN section 2): level order, path identity, outside nodes, usage."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Sequence, Unpack

import networkx as nx
from hypothesis import event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gangplan import kueue
from gangplan.cli import app
from gangplan.loader import load_snapshot
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, Snapshot, Topology
from gangplan.planner import Options, plan
from gangplan.topology import (
    HOSTNAME_LABEL,
    _infer,
    _nesting,
    build_tree,
    domain_usage,
    named_topology_keys,
    node_usage,
    resolve_levels,
    shown_key,
    topology_to_dict,
)

from model_fields import NodeFields

ROOT = Path(__file__).resolve().parent.parent
GPU_CLUSTER = str(ROOT / "snapshots" / "gpu-cluster.yaml")
GPU_LEVELS = ["network.example.com/bigpod", "network.example.com/minipod", "network.example.com/tor"]
Gi = 2**30
Mi = 2**20

# Named so that alphabetical order is the reverse of the real one: only nesting can get it right.
BIG, MINI, TOR = "tier-c/bigpod", "tier-b/minipod", "tier-a/tor"


def node(name: str, labels: dict[str, str], cpu: int = 4000, **kwargs: Unpack[NodeFields]) -> Node:
    return Node(name, {HOSTNAME_LABEL: name, **labels}, {"cpu": cpu}, **kwargs)


def group(name: str, required: tuple[str, ...] = (), preferred: tuple[str, ...] = ()) -> PodGroup:
    return PodGroup(
        "default", name, PodGroupAPI.GODEL_BYTEDANCE, 1,
        required_topology=required, preferred_topology=preferred,
    )


def pod(name: str, requests: dict[str, int], node_name: str | None = None, **kwargs: object) -> Pod:
    containers = (Container("main", requests),)
    return Pod("default", name, containers=containers, node_name=node_name, **kwargs)  # type: ignore[arg-type]


def bigpod_cluster() -> list[Node]:
    """2 bigpods x 2 minipods x 2 tors x 2 nodes, tor and minipod names unique."""
    nodes = []
    for b in range(2):
        for m in range(2):
            for t in range(2):
                for n in range(2):
                    labels = {BIG: f"bp{b}", MINI: f"mp{b}{m}", TOR: f"tor{b}{m}{t}"}
                    nodes.append(node(f"n{b}{m}{t}{n}", labels))
    return nodes


def test_levels_are_inferred_largest_first_whatever_order_they_are_named_in() -> None:
    snapshot = Snapshot(
        nodes=tuple(bigpod_cluster()),
        pods=(pod("p", {"cpu": 1}, annotations={kueue.PREFERRED_TOPOLOGY: MINI}),),
        pod_groups=(group("a", required=(TOR,)), group("b", preferred=(BIG,))),
    )
    levels, warnings = resolve_levels(snapshot)
    assert levels == (BIG, MINI, TOR)
    assert warnings == []


def test_kueue_annotation_alone_names_a_level() -> None:
    snapshot = Snapshot(
        nodes=tuple(bigpod_cluster()),
        pods=(pod("p", {"cpu": 1}, annotations={kueue.PREFERRED_TOPOLOGY: TOR}),),
        pod_groups=(group("a", required=(BIG,)),),
    )
    assert resolve_levels(snapshot)[0] == (BIG, TOR)


def test_a_kueue_annotation_is_read_as_written_not_trimmed() -> None:
    # Kueue reads "tor " as a level named "tor ", which no node carries: it names no level here.
    snapshot = Snapshot(
        nodes=tuple(bigpod_cluster()),
        pods=(pod("p", {"cpu": 1}, annotations={kueue.PREFERRED_TOPOLOGY: TOR + " "}),),
        pod_groups=(group("a", required=(BIG,)),),
    )
    assert resolve_levels(snapshot)[0] == (BIG,)


def test_nesting_beats_a_preferred_list_written_smallest_first() -> None:
    snapshot = Snapshot(nodes=tuple(bigpod_cluster()), pod_groups=(group("a", preferred=(TOR, MINI, BIG)),))
    assert resolve_levels(snapshot)[0] == (BIG, MINI, TOR)


def test_where_labels_nest_both_ways_the_key_more_nodes_carry_is_above() -> None:
    """Zone b on both nodes, rack b-r1 on one: each value lies within one of the other, and
    both have one value, so the name put rack on top; the node with a zone but no rack then
    held its running members to no zone domain at all (found by tests/test_exhaustive_jobs.py,
    seed 1,032). The key carried on a superset of the other's nodes is the larger one."""
    nodes = (node("n0", {"zone": "b", "rack": "b-r1"}), node("n1", {"zone": "b"}))
    snapshot = Snapshot(nodes=nodes, pod_groups=(group("a", required=("zone",)), group("b", required=("rack",))))
    assert resolve_levels(snapshot)[0] == ("zone", "rack")
    # The same labels on the same nodes give no evidence: the level names decide (a zone holds
    # racks), where the keys' own names put rack first.
    both = (node("n0", {"zone": "b", "rack": "b-r1"}), node("n1", {"zone": "c", "rack": "c-r1"}))
    assert resolve_levels(replace(snapshot, nodes=both))[0] == ("zone", "rack")


def test_when_labels_do_not_nest_the_preferred_order_beats_value_counts() -> None:
    # Names r0/r1 reused under 4 "b"s: 2 "r" values < 4 "b" values, yet b is above.
    nodes = [node(f"n{b}{r}", {"b": f"b{b}", "r": f"r{r}"}) for b in range(4) for r in range(2)]
    unhinted = Snapshot(nodes=tuple(nodes), pod_groups=(group("a", required=("r", "b")),))
    assert resolve_levels(unhinted)[0] == ("r", "b")
    hinted = Snapshot(nodes=tuple(nodes), pod_groups=(group("a", preferred=("b", "r")),))
    assert resolve_levels(hinted)[0] == ("b", "r")
    # Seed 003's own shape: required into the larger segment, preferred inside it. Rack was
    # put on top, and a gang Godel places in one block was refused (review 19 S F1).
    required_above = Snapshot(nodes=tuple(nodes), pod_groups=(group("a", required=("b",), preferred=("r",)),))
    assert resolve_levels(required_above)[0] == ("b", "r")


def test_when_nothing_else_tells_two_keys_apart_the_level_names_do() -> None:
    """helper-64: tor names t1, t2 repeated under three miniPods, and no group naming both: by
    value counts tor (2) went above miniPod (3), so a required tor spanned miniPods and a group
    required into one miniPod was refused. Keys named as datacenter levels are (block above
    rack, zone above block); a preferred order still wins over the names."""
    mini, tor = "network.example.com/minipod", "network.example.com/tor"
    nodes = tuple(node(f"n{m}{t}", {mini: f"mp{m}", tor: f"t{t}"}) for m in range(3) for t in range(2))
    snapshot = Snapshot(nodes=nodes, pod_groups=(group("g", required=(tor,)), group("h", required=(mini,))))
    assert resolve_levels(snapshot)[0] == (mini, tor)
    grid = tuple(
        node(f"n{z}{b}{r}", {"topology.kubernetes.io/zone": f"z{z}", "cloud.example.com/gce-topology-block": f"b{b}", "rack": f"r{r}"})
        for z in range(2) for b in range(3) for r in range(4)
    )
    keys = ("rack", "cloud.example.com/gce-topology-block", "topology.kubernetes.io/zone")
    named = Snapshot(nodes=grid, pod_groups=tuple(group(f"g{i}", required=(key,)) for i, key in enumerate(keys)))
    assert resolve_levels(named)[0] == keys[::-1]
    hinted = replace(named, pod_groups=(*named.pod_groups, group("x", preferred=("rack", "topology.kubernetes.io/zone"))))
    levels = resolve_levels(hinted)[0]
    assert levels.index("rack") < levels.index("topology.kubernetes.io/zone")


def test_the_order_the_groups_come_in_does_not_choose_the_levels() -> None:
    """helper-64: two groups hinting opposite orders of keys that do not nest; the first in the
    file won, so the same objects in another order gave other levels and another plan. The
    order more groups hint at wins, then the lesser."""
    nodes = tuple(node(f"n{m}{t}", {"mp": f"mp{m}", "sw": f"s{t}"}) for m in range(3) for t in range(3))
    a, b, c = group("a", preferred=("mp", "sw")), group("b", preferred=("sw", "mp")), group("c", preferred=("sw", "mp"))
    for pair in ((a, b), (b, a)):
        assert resolve_levels(Snapshot(nodes=nodes, pod_groups=pair))[0] == ("mp", "sw")
    for three in ((a, b, c), (c, b, a), (b, a, c)):
        assert resolve_levels(Snapshot(nodes=nodes, pod_groups=three))[0] == ("sw", "mp")


def test_labels_that_nest_both_ways_on_the_same_nodes_leave_the_order_to_the_terms() -> None:
    """One rack per zone: each label lies within one value of the other, on the same nodes, which
    says nothing about which is the larger; the group's preferred terms (largest first) decide."""
    nodes = tuple(node(f"n{z}{i}", {"zone": f"z{z}", "rack": f"z{z}-r"}) for z in range(3) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pod_groups=(group("a", preferred=("zone", "rack")),))
    assert resolve_levels(snapshot)[0] == ("zone", "rack")


def test_a_preferred_list_orders_every_level_it_names() -> None:
    """Godel's preferred terms are written largest first: with three keys that do not nest (every
    value of each meets every value of the others), all three follow the list, not only the first
    two; by value counts alone slot (2 values) would be on top."""
    nodes = tuple(
        node(f"n{b}{r}{s}", {"block": f"b{b}", "rack": f"r{r}", "slot": f"s{s}"})
        for b in range(4) for r in range(3) for s in range(2)
    )
    snapshot = Snapshot(nodes=nodes, pod_groups=(group("a", preferred=("block", "rack", "slot")),))
    assert resolve_levels(snapshot)[0] == ("block", "rack", "slot")


def test_nesting_that_loops_across_nodes_still_gives_levels() -> None:
    """On some nodes x holds two y values, on others y holds two z values, on others z holds two
    x values: the evidence goes round in a circle. The levels are still the three keys in some
    order, not a failure to sort them."""
    nodes = (
        node("xy1", {"x": "X1", "y": "Y1"}), node("xy2", {"x": "X1", "y": "Y2"}),
        node("yz1", {"y": "Y3", "z": "Z1"}), node("yz2", {"y": "Y3", "z": "Z2"}),
        node("zx1", {"z": "Z3", "x": "X2"}), node("zx2", {"z": "Z3", "x": "X3"}),
    )
    groups = tuple(group(key, required=(key,)) for key in ("x", "y", "z"))
    snapshot = Snapshot(nodes=nodes, pod_groups=groups)
    levels, warnings = resolve_levels(snapshot)
    assert sorted(levels) == ["x", "y", "z"] and warnings == []


def test_a_level_named_twice_is_one_level() -> None:
    """Kueue refuses a Topology whose levels repeat (its CRD: "must be unique"); --levels a,b,a
    names two levels, and the repeat is pointed out."""
    snapshot = Snapshot(nodes=tuple(bigpod_cluster()))
    levels, warnings = resolve_levels(snapshot, explicit=[BIG, TOR, BIG])
    assert levels == (BIG, TOR)
    assert len(warnings) == 1 and "twice" in warnings[0]


def test_levels_given_empty_are_given_and_a_topology_object_still_wins() -> None:
    """``--levels ''`` is a statement (a flat cluster), not the option left out: alone it makes the
    cluster flat; beside a Topology object it is ignored, and the user is told so."""
    snapshot = Snapshot(
        nodes=tuple(bigpod_cluster()),
        pod_groups=(group("a", required=(BIG,)),),
        topologies=(Topology("t", (BIG, MINI)),),
    )
    levels, warnings = resolve_levels(snapshot, explicit=())
    assert levels == (BIG, MINI)
    assert any("--levels ignored" in w for w in warnings)
    assert resolve_levels(replace(snapshot, topologies=()), explicit=()) == ((), [])


def test_a_key_spaces_or_nothing_would_hide_is_shown_quoted() -> None:
    """A message naming a key "tor " or "" must show where it ends."""
    assert shown_key("tor") == "tor"
    assert shown_key("tor ") == "'tor '"
    assert shown_key("") == "''"


def test_a_topology_object_wins_over_levels_and_inference() -> None:
    snapshot = Snapshot(
        nodes=tuple(bigpod_cluster()),
        pod_groups=(group("a", required=(BIG,), preferred=(TOR,)),),
        topologies=(
            Topology("first", (MINI, HOSTNAME_LABEL)),
            Topology("second", (BIG, MINI, TOR)),
        ),
    )
    levels, warnings = resolve_levels(snapshot, explicit=[TOR])
    assert levels == (BIG, MINI, TOR)  # it has both keys the group names; "first" has neither
    assert any("using second" in w and "ignored: first" in w for w in warnings)
    assert any("--levels ignored" in w for w in warnings)
    # Whatever order the objects come in; with as many named keys each, the first by name.
    swapped = replace(snapshot, topologies=snapshot.topologies[::-1])
    assert resolve_levels(swapped)[0] == (BIG, MINI, TOR)
    alike = replace(snapshot, topologies=(Topology("zz", (BIG, TOR)), Topology("aa", (BIG, MINI))))
    assert resolve_levels(alike)[0] == (BIG, TOR)
    alike = replace(snapshot, topologies=(Topology("zz", (BIG,)), Topology("aa", (MINI, TOR))))
    assert resolve_levels(alike)[0] == (MINI, TOR)
    without = Snapshot(nodes=snapshot.nodes, pod_groups=snapshot.pod_groups)
    assert resolve_levels(without, explicit=[TOR, MINI]) == ((TOR, MINI), [])
    assert resolve_levels(without)[0] == (BIG, TOR)


def test_hostname_is_never_a_level() -> None:
    snapshot = Snapshot(
        nodes=tuple(bigpod_cluster()),
        pod_groups=(group("a", required=(HOSTNAME_LABEL,), preferred=(MINI, HOSTNAME_LABEL)),),
    )
    assert resolve_levels(snapshot)[0] == (MINI,)
    assert resolve_levels(snapshot, explicit=[BIG, HOSTNAME_LABEL])[0] == (BIG,)
    tree = build_tree(snapshot.nodes, resolve_levels(snapshot)[0])
    assert len(tree.domains) == 1 and len(tree.domains[0]) == 4


def test_a_named_key_no_node_carries_is_not_a_level_but_a_given_one_is() -> None:
    """Inferred from the groups' terms, a key no node carries would put every node outside the
    tree and so keep every group with a topology term off the cluster: it is left out, with a
    warning (the group requiring it is unplaceable on its own, see test_topology_affinity).
    Given by --levels, it is the user's statement and stays, every node outside."""
    snapshot = Snapshot(nodes=tuple(bigpod_cluster()), pod_groups=(group("a", required=("typo/rack", BIG)),))
    levels, warnings = resolve_levels(snapshot)
    assert levels == (BIG,)
    assert warnings == ["topologyKey typo/rack is a label no node carries, so it is not a topology level"]
    assert build_tree(snapshot.nodes, levels).outside == frozenset()
    levels, warnings = resolve_levels(snapshot, explicit=[BIG, "typo/rack"])
    assert levels == (BIG, "typo/rack")
    assert len(warnings) == 1 and "typo/rack" in warnings[0]
    tree = build_tree(snapshot.nodes, levels)
    assert tree.outside == frozenset(range(16))
    assert tree.domains == ((), ())


def test_same_tor_under_two_minipods_is_two_domains_and_a_warning() -> None:
    nodes = [
        node("a1", {"mp": "mp-a", "tor": "t1"}),
        node("a2", {"mp": "mp-a", "tor": "t1"}),
        node("b1", {"mp": "mp-b", "tor": "t1"}),
        node("b2", {"mp": "mp-b", "tor": "t2"}),
    ]
    tree = build_tree(nodes, ["mp", "tor"])
    assert [(d.path, d.nodes) for d in tree.domains[1]] == [
        (("mp-a", "t1"), (0, 1)),
        (("mp-b", "t1"), (2,)),
        (("mp-b", "t2"), (3,)),
    ]
    assert tree.domain_of[1] == (0, 0, 1, 2)
    assert tree.domains[1][1].name == "mp-b/t1"
    assert len(tree.warnings) == 1
    warning = tree.warnings[0]
    assert "tor=t1" in warning and "mp=mp-a" in warning and "mp=mp-b" in warning
    assert nx.is_arborescence(tree.graph)
    assert set(tree.graph.successors((0, ("mp-b",)))) == {(1, ("mp-b", "t1")), (1, ("mp-b", "t2"))}
    assert tree.parent(tree.domains[1][1]) == tree.domains[0][1]


def test_nested_labels_give_no_warning_and_a_tree_down_to_nodes() -> None:
    nodes = bigpod_cluster()
    tree = build_tree(nodes, [BIG, MINI, TOR])
    assert tree.warnings == ()
    assert [len(row) for row in tree.domains] == [2, 4, 8]
    assert nx.is_arborescence(tree.graph)
    leaves = [n for n in tree.graph if tree.graph.out_degree(n) == 0]
    assert sorted(leaves) == sorted(("node", n.name) for n in nodes)
    assert list(tree.graph.predecessors(("node", "n1010"))) == [(2, ("bp1", "mp10", "tor101"))]
    assert [d.name for d in tree.children(tree.domains[0][1])] == ["bp1/mp10", "bp1/mp11"]
    assert tree.children(tree.domains[2][0]) == ()


def test_a_node_missing_a_level_label_is_outside() -> None:
    nodes = [node("in", {"mp": "m", "tor": "t"}), node("half", {"mp": "m"}), node("none", {})]
    tree = build_tree(nodes, ["mp", "tor"])
    assert tree.outside == frozenset({1, 2})
    assert tree.domain_of == ((0, None, None), (0, None, None))
    assert [d.nodes for d in tree.domains[0]] == [(0,)]
    assert ("node", "half") not in tree.graph and ("node", "in") in tree.graph
    assert any("2 of 3 nodes" in w and "half" in w for w in tree.warnings)


def test_the_outside_warning_counts_each_missing_label_and_names_three_nodes() -> None:
    """The warning a user reads to fix the labels: how many nodes lack each label, and the first
    three outside nodes by name, with "…" only when more are left out."""
    nodes = [
        node("d", {"mp": "m"}), node("c", {}), node("in", {"mp": "m", "tor": "t"}),
        node("b", {"mp": "m"}), node("a", {"tor": "t"}),
    ]  # mp lacking on c and a; tor on d, c and b
    tree = build_tree(nodes, ["mp", "tor"])
    [warning] = tree.warnings
    assert "4 of 5 nodes" in warning and "mp on 2" in warning and "tor on 3" in warning
    assert warning.endswith(": a, b, c, …")
    [three] = build_tree(nodes[1:], ["mp", "tor"]).warnings
    assert three.endswith(": a, b, c")
    # The data lists every outside node, in input order.
    data = topology_to_dict(tree, Snapshot(nodes=tuple(nodes)))
    assert [leaf["node"] for leaf in data["outside"]] == ["d", "c", "b", "a"]


def test_a_nesting_warning_tells_the_places_apart_and_counts_the_rest() -> None:
    """minipod m1 under three bigpods; tor t1 under all three m1s, t2 under two. Each warning names
    two places a reader can tell apart (b1/m1 and b2/m1, not "mp=m1 and mp=m1") and counts the rest."""
    places = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)]
    nodes = [node(f"n{b}{t}", {"bp": f"b{b}", "mp": "m1", "tor": f"t{t}"}) for b, t in places]
    mp_warning, tor_warning = build_tree(nodes, ["bp", "mp", "tor"]).warnings
    assert "mp=m1 lies under bp=b1 and bp=b2 (and 1 more)" in mp_warning
    assert "more mp value" not in mp_warning  # m1 is the only one
    assert "tor=t1 lies under b1/m1 and b2/m1 (and 1 more)" in tor_warning
    assert "1 more tor value(s)" in tor_warning  # t2


def test_domains_are_in_path_order_whatever_order_the_nodes_come_in() -> None:
    """Domains are numbered by path (topology_to_dict's "domains in path order"), so the same
    cluster listed in another order gives the same domains under the same numbers."""
    nodes = bigpod_cluster()
    forward, backward = build_tree(nodes, [BIG, MINI, TOR]), build_tree(nodes[::-1], [BIG, MINI, TOR])
    for row, back in zip(forward.domains, backward.domains, strict=True):
        assert [d.path for d in back] == [d.path for d in row] == sorted(d.path for d in row)


def test_a_nodes_free_room_is_what_all_its_running_pods_leave() -> None:
    """kube-scheduler counts the requests of every pod bound to a node: two running pods of one
    cpu each on a 4-cpu node leave 2 cpu, in the node's figures and its domain's."""
    snapshot = Snapshot(
        nodes=(node("n", {"zone": "z"}),),
        pods=(
            pod("a", {"cpu": 1000}, "n", phase=PodPhase.RUNNING),
            pod("b", {"cpu": 1000}, "n", phase=PodPhase.RUNNING),
        ),
    )
    assert node_usage(snapshot)["n"].free["cpu"] == 2000
    assert domain_usage(build_tree(snapshot.nodes, ["zone"]), snapshot)[0][0].free["cpu"] == 2000


def usage_snapshot() -> Snapshot:
    """Worked by hand in the test below."""
    nodes = (
        Node("n1", {"zone": "z1", "rack": "r1"}, {"cpu": 4000, "memory": 8 * Gi, "nvidia.com/gpu": 2}),
        Node("n2", {"zone": "z1", "rack": "r1"}, {"cpu": 8000, "memory": 16 * Gi}, ready=False),
        Node(
            "n3", {"zone": "z1", "rack": "r2"}, {"cpu": 2000, "memory": 4 * Gi, "nvidia.com/gpu": 4},
            unschedulable=True,
        ),
        Node("n4", {"zone": "z2", "rack": "r1"}, {"cpu": 1000, "memory": 1 * Gi}),
        Node("n5", {"zone": "z2"}, {"cpu": 64000, "memory": 64 * Gi}),
    )
    pods = (
        Pod(
            "d", "p1", node_name="n1", phase=PodPhase.RUNNING,
            containers=(
                Container("a", {"cpu": 1000, "memory": 2 * Gi, "nvidia.com/gpu": 1}),
                Container("b", {"cpu": 500}),
            ),
        ),
        pod("done", {"cpu": 2000}, "n1", phase=PodPhase.SUCCEEDED),
        pod("pending", {"cpu": 1000}),
        pod("over", {"cpu": 1500, "memory": 512 * Mi}, "n4", phase=PodPhase.RUNNING),
        pod("on-cordoned", {"cpu": 500}, "n3", phase=PodPhase.RUNNING),
        pod("outside", {"cpu": 1000}, "n5", phase=PodPhase.RUNNING),
    )
    return Snapshot(nodes=nodes, pods=pods)


def test_domain_usage_counts_running_pods_and_only_usable_nodes_for_free() -> None:
    snapshot = usage_snapshot()
    tree = build_tree(snapshot.nodes, ["zone", "rack"])
    assert tree.outside == frozenset({4})
    usage = domain_usage(tree, snapshot)
    z1, z2 = usage[0]
    # z1 = n1 + n2 (NotReady) + n3 (cordoned); only n1 has room: 4000 - 1500, 8Gi - 2Gi, 2 - 1.
    assert (z1.nodes, z1.usable) == (3, 1)
    assert z1.allocatable == {"cpu": 14000, "memory": 28 * Gi, "nvidia.com/gpu": 6}
    assert z1.free == {"cpu": 2500, "memory": 6 * Gi, "nvidia.com/gpu": 1}
    # z2 = n4 only (n5 lacks a rack): its pod asks 1500 of 1000 cpu, so cpu free is 0, not -500.
    assert (z2.nodes, z2.usable) == (1, 1)
    assert z2.allocatable == {"cpu": 1000, "memory": Gi, "nvidia.com/gpu": 0}
    assert z2.free == {"cpu": 0, "memory": 512 * Mi, "nvidia.com/gpu": 0}
    racks = {d.path: u for d, u in zip(tree.domains[1], usage[1])}
    assert racks[("z1", "r1")].free == {"cpu": 2500, "memory": 6 * Gi, "nvidia.com/gpu": 1}
    assert racks[("z1", "r1")].allocatable["cpu"] == 12000
    assert racks[("z1", "r2")].free == {"cpu": 0, "memory": 0, "nvidia.com/gpu": 0}
    assert racks[("z1", "r2")].allocatable["nvidia.com/gpu"] == 4
    assert racks[("z2", "r1")].free["memory"] == 512 * Mi
    other = domain_usage(tree, snapshot, gpu_resource="amd.com/gpu")
    assert other[0][0].allocatable == {"cpu": 14000, "memory": 28 * Gi, "amd.com/gpu": 0}


def test_topology_to_dict_nests_domains_and_lists_outside_nodes() -> None:
    snapshot = usage_snapshot()
    data = topology_to_dict(build_tree(snapshot.nodes, ["zone", "rack"]), snapshot)
    assert data["levels"] == ["zone", "rack"]
    assert data["total"]["nodes"] == 4 and data["total"]["free"]["cpu"] == 2500
    assert [z["value"] for z in data["children"]] == ["z1", "z2"]
    z1_racks = data["children"][0]["children"]
    assert [r["path"] for r in z1_racks] == [["z1", "r1"], ["z1", "r2"]]
    assert data["children"][0]["level"] == "zone" and {r["level"] for r in z1_racks} == {"rack"}
    assert [leaf["node"] for leaf in z1_racks[0]["children"]] == ["n1", "n2"]
    assert z1_racks[0]["children"][1]["ready"] is False and z1_racks[0]["children"][1]["free"]["cpu"] == 0
    assert [leaf["node"] for leaf in data["outside"]] == ["n5"]
    assert data["outside"][0]["free"]["cpu"] == 63000
    assert json.loads(json.dumps(data)) == data


runner = CliRunner()


def _leaves_under_tors(domain: dict, found: Counter) -> None:
    for child in domain["children"]:
        if "node" in child:
            assert domain["level"] == GPU_LEVELS[-1], "nodes hang under tors only"
            found[child["node"]] += 1
        else:
            _leaves_under_tors(child, found)


def test_cli_topology_json_on_the_gpu_cluster() -> None:
    result = runner.invoke(app, ["topology", GPU_CLUSTER, "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    snapshot = load_snapshot([GPU_CLUSTER])
    names = {n.name for n in snapshot.nodes}
    assert data["levels"] == GPU_LEVELS
    found: Counter = Counter()
    for top in data["children"]:
        _leaves_under_tors(top, found)
    outside = {leaf["node"] for leaf in data["outside"]}
    assert set(found) | outside == names and not set(found) & outside
    assert set(found.values()) == {1}
    inside = len(names) - len(outside)
    assert data["total"]["nodes"] == inside
    level: list[dict] = data["children"]
    for _ in GPU_LEVELS:
        assert sum(d["nodes"] for d in level) == inside
        for d in level:
            below = [c for c in d["children"] if "node" not in c]
            if below:
                for kind in ("allocatable", "free"):
                    for resource, amount in d[kind].items():
                        assert amount == sum(c[kind][resource] for c in below)
        level = [c for d in level for c in d["children"] if "node" not in c]
    assert result.stdout == runner.invoke(app, ["topology", GPU_CLUSTER, "-o", "json"]).stdout


def test_cli_topology_tree_on_the_gpu_cluster() -> None:
    result = runner.invoke(app, ["topology", GPU_CLUSTER])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("topology: " + " > ".join(GPU_LEVELS))
    assert "network.example.com/tor=tor-0-0-0  nodes 9  cpu " in out
    assert "h100-r00-01  cpu " in out and "gpu " in out
    assert "… " not in out


def test_cli_topology_levels_option_and_the_leaf_limit() -> None:
    result = runner.invoke(app, ["topology", GPU_CLUSTER, "--levels", "network.example.com/bigpod"])
    assert result.exit_code == 0, result.output
    assert "network.example.com/bigpod=bp-0  nodes 143" in result.stdout
    assert "… 143 nodes" in result.stdout and "h100-r00-01" not in result.stdout
    assert "minipod" not in result.stdout


def test_cli_topology_with_no_levels_names_the_labels_nodes_share(tmp_path: Path) -> None:
    """No Topology object, no --levels and no group naming a level drew a flat list without a
    word on why, though every node carries block and rack labels; --levels 'a b' was taken."""
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text("---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{block: b{i // 2}, rack: r{i}, kubernetes.io/arch: amd64, "
        f"node.kubernetes.io/instance-type: t{i % 2}}}}}\nstatus: {{allocatable: {{cpu: '4'}}}}\n"
        for i in range(4)
    ))
    flat = runner.invoke(app, ["topology", str(snapshot)])
    assert flat.exit_code == 0 and flat.stdout.startswith("topology: no levels")
    assert flat.stderr.splitlines()[-1] == (
        "note: no levels (no Topology object, no --levels, no group names one); the nodes share block: "
        "--levels KEY,... (largest first) draws the tree by them"
    )  # rack has a value per node, and instance types are no place
    assert "note" not in runner.invoke(app, ["topology", str(snapshot), "--levels", "block"]).stderr
    bad = runner.invoke(app, ["topology", str(snapshot), "--levels", "block,a b"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --levels: label key 'a b': its name must be")


def test_cli_topology_names_its_figures_and_counts_a_one_node_domain(tmp_path: Path) -> None:
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {tor: t1}}\n"
        "status: {allocatable: {cpu: '4'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\n"
        "spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
        "status: {phase: Running}\n"
    )
    result = runner.invoke(app, ["topology", str(snapshot), "--levels", "tor"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "topology: tor  (1 node inside, 0 outside; free/allocatable)"
    assert "tor=t1  nodes 1  cpu 3/4" in lines[1]
    assert lines[2].endswith("a  cpu 3/4  memory 0/0  gpu 0/0")


def test_cli_topology_warns_on_stderr_only(tmp_path: Path) -> None:
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {mp: m1, tor: t1}}\n"
        "status: {allocatable: {cpu: '2'}}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: b, labels: {mp: m2, tor: t1}}\n"
        "status: {allocatable: {cpu: '2'}}\n"
    )
    result = runner.invoke(app, ["topology", str(snapshot), "--levels", "mp,tor", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert "do not nest" in result.stderr and "tor=t1" in result.stderr
    data = json.loads(result.stdout)
    paths = [[t["path"] for t in m["children"]] for m in data["children"]]
    assert paths == [[["m1", "t1"]], [["m2", "t1"]]]


def _grid() -> tuple[Node, ...]:
    """5 zones x 2 racks, rack names reused in every zone: neither label nests in the other."""
    return tuple(
        Node(f"n{z}{r}", {HOSTNAME_LABEL: f"n{z}{r}", "zone": f"z{z}", "rack": f"r{r}"}, {"cpu": 4000, "pods": 110})
        for z in range(5) for r in range(2)
    )


def _gang(name: str, size: int, required: tuple[str, ...] = (), preferred: tuple[str, ...] = ()) -> tuple[PodGroup, list[Pod]]:
    pg = PodGroup("ml", name, PodGroupAPI.GODEL_BYTEDANCE, size, required_topology=required, preferred_topology=preferred)
    pods = [
        Pod("ml", f"{name}-{i}", labels={"scheduling.x-k8s.io/pod-group": name}, containers=(Container("c", {"cpu": 4000}),))
        for i in range(size)
    ]
    return pg, pods


def test_a_key_no_node_carries_says_nothing_of_how_the_levels_nest() -> None:
    """resolve_levels drops "rakc" (no node carries it: not a topology level); the order of zone
    and rack must then be what it is without it. The hint (rakc, rack) kept rack below the
    dropped key, which goes last, so rack fell below zone: racks became one node each, and
    group c, which requires one rack for 3 pods, could not be placed because of a typo in
    another group's preferred terms."""
    c, c_pods = _gang("c", 3, required=("rack",))
    z, z_pods = _gang("z", 1, required=("zone",))
    outcomes = []
    for preferred in (("rack",), ("rakc", "rack")):
        b, b_pods = _gang("b", 1, preferred=preferred)
        snapshot = Snapshot(nodes=_grid(), pods=tuple(c_pods + z_pods + b_pods), pod_groups=(c, z, b))
        levels, _ = resolve_levels(snapshot)
        result = plan(snapshot, Options(solver="greedy"))
        outcomes.append((levels, {g.key: g.placed for g in result.groups}))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0][0] == ("zone", "rack")  # each (zone, rack) one node: c's 3 pods fit no rack


def test_a_nesting_warning_names_deep_paths_from_where_they_part() -> None:
    """Two racks r1 under the same block b1, in zones z1 and z2, six levels down: the warning
    shows each path from the zones down, not from the top (100 label keys made 100 values a path)."""
    top = {f"k{i}": "v" for i in range(4)}
    nodes = [node(f"n{z}", {**top, "zone": f"z{z}", "block": "b1", "rack": "r1"}) for z in (1, 2)]
    levels = [*top, "zone", "block", "rack"]
    warnings = [w for w in build_tree(nodes, levels).warnings if "rack=r1" in w]
    assert warnings and "rack=r1 lies under …/z1/b1 and …/z2/b1;" in warnings[0], warnings


def test_nesting_warnings_past_the_first_few_levels_are_one_line() -> None:
    """Six levels, each value under two parents: three warnings in full, then one line that
    names the other three levels, so a cluster labelled wrong at every level is not a page of them."""
    levels = [f"k{i}" for i in range(7)]
    nodes = [node(f"n{j}", {k: f"{j if i == 0 else 'same'}" for i, k in enumerate(levels)}) for j in range(2)]
    warnings = [w for w in build_tree(nodes, levels).warnings if "nest" in w]
    assert len(warnings) == 4, warnings
    assert [w.split("=")[0].split()[-1] for w in warnings[:3]] == ["k1", "k2", "k3"]
    assert warnings[3] == "labels do not nest at 3 more level(s) too: k4, k5, k6; each path is its own domain"


# ------------------------------------------------- level inference against the rule, pair by pair


def _nests_by_rule(nodes: Sequence[Node], inner: str, outer: str) -> bool:
    """The rule as it was written before _nesting asked it of all pairs at once with numpy."""
    parent: dict[str, str] = {}
    seen = False
    for each in nodes:
        labels = each.labels
        if inner in labels and outer in labels:
            seen = True
            if parent.setdefault(labels[inner], labels[outer]) != labels[outer]:
                return False
    return seen


def _infer_by_rule(snapshot: Snapshot) -> tuple[str, ...]:
    """_infer as it was, asking _nests_by_rule of every ordered pair of keys over every node."""
    named, orders = named_topology_keys(snapshot)
    keys = [k for k in named if k != HOSTNAME_LABEL]
    values: dict[str, set[str]] = {key: set() for key in keys}
    carriers: dict[str, set[int]] = {key: set() for key in keys}
    for n, each in enumerate(snapshot.nodes):
        for key in keys:
            if key in each.labels:
                values[key].add(each.labels[key])
                carriers[key].add(n)
    rank = {key: (not values[key], len(values[key]), key) for key in keys}
    order = nx.DiGraph()
    order.add_nodes_from(keys)
    for a in keys:
        for b in keys:
            if a != b and _nests_by_rule(snapshot.nodes, b, a) and (
                not _nests_by_rule(snapshot.nodes, a, b) or carriers[a] > carriers[b]
            ):
                if not nx.has_path(order, b, a):
                    order.add_edge(a, b)
    for listed in orders:
        carried = [key for key in listed if values.get(key)]
        for above, below in zip(carried, carried[1:]):
            if above != below and not nx.has_path(order, below, above):
                order.add_edge(above, below)
    return tuple(nx.lexicographical_topological_sort(order, key=lambda k: rank[k]))


_LABEL_KEYS = ("k0", "k1", "k2", "k3")
_TERM_KEYS = st.sampled_from([*_LABEL_KEYS, HOSTNAME_LABEL, "ghost"])  # ghost: a key no node carries


@st.composite
def _labelled(draw: st.DrawFn) -> Snapshot:
    """Few values per key over few nodes, each label sometimes missing, so that keys nest one
    way, both ways, not at all, or only on the nodes carrying both."""
    nodes = tuple(
        node(f"n{i}", draw(st.dictionaries(st.sampled_from(_LABEL_KEYS), st.sampled_from(["a", "b", "c", ""]))))
        for i in range(draw(st.integers(0, 8)))
    )
    groups = tuple(
        group(f"g{g}", required=tuple(draw(st.lists(_TERM_KEYS, max_size=3))), preferred=tuple(draw(st.lists(_TERM_KEYS, max_size=4))))
        for g in range(draw(st.integers(1, 3)))
    )
    pods = tuple(
        pod(f"p{p}", {"cpu": 1}, annotations={kueue.PREFERRED_TOPOLOGY: draw(_TERM_KEYS)})
        for p in range(draw(st.integers(0, 1)))
    )
    return Snapshot(nodes=nodes, pods=pods, pod_groups=groups)


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(_labelled())
def test_level_inference_is_the_pair_by_pair_nesting_rule(snapshot: Snapshot) -> None:
    """_nesting answers every pair as the node-by-node rule does, and the levels come out the
    same: in numpy a node missing either key must not count, nor a pair no node carries."""
    keys = [k for k in named_topology_keys(snapshot)[0] if k != HOSTNAME_LABEL]
    nests = _nesting(snapshot.nodes, keys)
    expected = [[_nests_by_rule(snapshot.nodes, inner, outer) for outer in keys] for inner in keys]
    event(f"pairs nesting: {sum(map(sum, expected))} of {len(keys) ** 2}")
    assert nests.tolist() == expected
    assert _infer(snapshot) == _infer_by_rule(snapshot)


def test_cli_topology_a_collapsed_list_of_nodes_keeps_their_figures(tmp_path: Path) -> None:
    """A flat cluster of more nodes than the tree lists (no levels), or as many outside the
    topology, printed '… 20 nodes' and no figure at all: the one thing `topology` is for.
    The line carries the nodes' sums where the line above it has none (the root); the outside
    branch's line carries them as a domain's line does."""
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text("---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i:02}}}\nstatus: {{allocatable: {{cpu: '4', nvidia.com/gpu: '2'}}}}\n"
        for i in range(20)
    ) + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\n"
        "spec: {nodeName: n00, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\nstatus: {phase: Running}\n")
    flat = runner.invoke(app, ["topology", str(snapshot)])
    assert flat.exit_code == 0, flat.output
    assert flat.stdout.splitlines()[1].endswith("… 20 nodes  cpu 79/80  memory 0/0  gpu 40/40")
    outside = runner.invoke(app, ["topology", str(snapshot), "--levels", "tor"])
    lines = outside.stdout.splitlines()
    assert lines[1].endswith("outside the topology: 20 nodes  cpu 79/80  memory 0/0  gpu 40/40")
    assert lines[2].endswith("… 20 nodes")  # the line above says it, as a domain's line does


def test_cli_topology_says_a_node_is_both_not_ready_and_cordoned(tmp_path: Path) -> None:
    """The tree said '(NotReady)' of a node that was cordoned too, where -o json and the report
    say both: uncordoning it alone would not bring it back."""
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {unschedulable: true}\n"
        "status: {allocatable: {cpu: '4'}, conditions: [{type: Ready, status: 'False'}]}\n"
    )
    result = runner.invoke(app, ["topology", str(snapshot)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].endswith("a  cpu 0/4  memory 0/0  gpu 0/0  (NotReady, cordoned)")

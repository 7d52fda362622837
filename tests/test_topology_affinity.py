"""Job-level topology affinity (seed 003): required and preferred domains, sort rules.

Clusters are built as model objects (or, for the seed's own examples, as YAML); every plan
is checked by the independent verifier with the plan's topology levels.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.diff import diff_snapshot
from gangplan.greedy import Placer, greedy
from gangplan.loader import load_snapshot
from gangplan.model import (
    Container, Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodGroup, PodGroupAPI, PodPhase,
    Snapshot, SortRule,
)
from gangplan.plan import GroupOutcome, Placement, Plan
from gangplan.planner import Options, name_pods, plan
from gangplan.problem import RankRule, build_problem, rank_domains
from gangplan.topology import build_tree
from gangplan.verify import verify

MINIPOD, TOR = "example.com/minipod", "example.com/tor"
GROUP = "scheduling.x-k8s.io/pod-group"


def node(name: str, minipod: str, tor: str, gpus: int = 8, cpu: int = 64000) -> Node:
    return Node(name, {MINIPOD: minipod, TOR: tor}, {"cpu": cpu, "nvidia.com/gpu": gpus, "pods": 110})


def gang(name: str, size: int, gpus: int, *, required: Sequence[str] = (), preferred: Sequence[str] = (),
         sort_rules: Sequence[SortRule] = (), min_member: int | None = None,
         running_on: tuple[str, ...] = ()) -> tuple[PodGroup, list[Pod]]:
    group = PodGroup("ml", name, PodGroupAPI.GODEL_BYTEDANCE, min_member=min_member or size,
                     required_topology=tuple(required), preferred_topology=tuple(preferred),
                     sort_rules=tuple(sort_rules))
    pods = []
    for i in range(size):
        bound = running_on[i] if i < len(running_on) else None
        pods.append(Pod("ml", f"{name}-{i}", labels={GROUP: name},
                        containers=(Container("main", {"cpu": 1000, "nvidia.com/gpu": gpus}),),
                        node_name=bound, phase=PodPhase.RUNNING if bound else PodPhase.PENDING))
    return group, pods


def filler(name: str, node_name: str, gpus: int) -> Pod:
    return Pod("default", name, containers=(Container("c", {"nvidia.com/gpu": gpus}),), node_name=node_name,
               phase=PodPhase.RUNNING)


def planned(snapshot: Snapshot, solver: str = "cp-sat", levels: tuple[str, ...] | None = None) -> Plan:
    result = plan(snapshot, Options(solver=solver, levels=levels))
    check = verify(snapshot, result.placements, result.topology_levels())
    assert check.ok, check.violations
    return result


def outcome(result: Plan, key: str) -> GroupOutcome:
    return next(g for g in result.groups if g.key == key)


def minipod_of(name: str) -> str:
    return name.split("/")[-1]


# ----------------------------------------------------------------- seed 003 as written

SEED_NODES = "\n".join(
    textwrap.dedent(f"""\
    ---
    apiVersion: v1
    kind: Node
    metadata:
      name: n-{m}-{t}-{i}
      labels:
        tce.kubernetes.io/netminipodipv6: mp-{m}
        tce.kubernetes.io/nettoripv6: tor-0-{m}-{t}
        tor: tor-0-{m}-{t}
    status:
      allocatable: {{cpu: "{32 if (m, t) == (1, 7) else 8}", memory: 64Gi}}
    """)
    for m in range(2) for t in range(8) for i in range(4)
)
SEED_EXAMPLES = {
    "required-and-preferred": """\
        apiVersion: scheduling.orchestration.bytedance.com/v1alpha1
        kind: PodGroup
        metadata:
          generation: 1
          name: nginx
        spec:
          affinity:
            podGroupAffinity:
              preferred:
              - topologyKey: tce.kubernetes.io/nettoripv6
              required:
              - topologyKey: tce.kubernetes.io/netminipodipv6
          minMember: 100
          scheduleTimeoutSeconds: 3000
        """,
    "node-selector": """\
        apiVersion: scheduling.orchestration.bytedance.com/v1alpha1
        kind: PodGroup
        metadata:
          generation: 1
          name: nginx
        spec:
          minMember: 100
          scheduleTimeoutSeconds: 3000
          affinity:
            podGroupAffinity:
              nodeSelector:
                nodeSelectorTerms:
                  - matchExpressions:
                    - key: tor
                      operator: In
                      values:
                      - tor-0-1-7
        """,
    "sort-rules": """\
        apiVersion: scheduling.orchestration.bytedance.com/v1alpha1
        kind: PodGroup
        metadata:
          generation: 1
          name: nginx
        spec:
          affinity:
            podGroupAffinity:
            preferred:
            - topologyKey: tce.kubernetes.io/nettoripv6
            required:
            - topologyKey: tce.kubernetes.io/netminipodipv6
            # SortRule
            sortRules:
            - order: Descending
              resource: GPU
              dimension: Capacity
            - order: Descending
              resource: CPU
              dimension: Available
          minMember: 100
          scheduleTimeoutSeconds: 3000
        """,
}
SEED_PODS = "\n".join(
    textwrap.dedent(f"""\
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: nginx-{i}
      annotations: {{godel.bytedance.com/pod-group-name: nginx}}
    spec:
      containers: [{{name: nginx, image: nginx, resources: {{requests: {{cpu: "1"}}}}}}]
    """)
    for i in range(100)
)


@pytest.mark.parametrize("example", sorted(SEED_EXAMPLES))
def test_seed_003_examples_load_and_plan_as_written(example: str, tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(SEED_NODES + "---\n" + textwrap.dedent(SEED_EXAMPLES[example]) + SEED_PODS)
    snapshot = load_snapshot([str(path)])
    group = snapshot.pod_groups[0]
    result = planned(snapshot)
    nginx = outcome(result, "default/nginx")
    assert nginx.placed and nginx.scheduled == 100
    nodes = {p.node for p in result.placements}
    if example == "node-selector":
        assert group.node_selector is not None
        assert nodes == {f"n-1-7-{i}" for i in range(4)}
    else:
        assert group.required_topology == ("tce.kubernetes.io/netminipodipv6",)
        assert group.preferred_topology == ("tce.kubernetes.io/nettoripv6",)
        assert len(nginx.domains["tce.kubernetes.io/netminipodipv6"]) == 1
        beside = any("beside spec.affinity.podGroupAffinity" in w for w in result.warnings)
        assert beside is (example == "sort-rules")  # the seed indents it so; Godel's CRD would drop it
        if example == "sort-rules":
            assert [r.order for r in group.sort_rules] == ["Descending", "Descending"]
            # mp-1 holds the big tor: the most CPU capacity, so Descending picks it.
            assert nginx.domains["tce.kubernetes.io/netminipodipv6"] == ("mp-1",)


def test_a_term_given_many_times_counts_once(tmp_path: Path) -> None:
    """Seed 003's terms, each written 50 times: a key named twice says nothing more. 3,000
    copies of each took 80 s, every required copy ordering the levels against every preferred
    one (a review's case)."""
    text = textwrap.dedent(SEED_EXAMPLES["required-and-preferred"])
    text = "".join(line * 50 if "- topologyKey:" in line else line for line in text.splitlines(keepends=True))
    path = tmp_path / "cluster.yaml"
    path.write_text(SEED_NODES + "---\n" + text + SEED_PODS)
    snapshot = load_snapshot([str(path)])
    group = snapshot.pod_groups[0]
    assert group.required_topology == ("tce.kubernetes.io/netminipodipv6",)
    assert group.preferred_topology == ("tce.kubernetes.io/nettoripv6",)
    nginx = outcome(planned(snapshot), "default/nginx")
    assert nginx.placed and len(nginx.domains["tce.kubernetes.io/netminipodipv6"]) == 1


# ----------------------------------------------------------------- preferred fallback

def test_preferred_tor_when_one_tor_holds_the_gang() -> None:
    nodes = [node(f"n{m}{t}{i}", f"mp{m}", f"t{m}{t}") for m in range(2) for t in range(2) for i in range(2)]
    group, pods = gang("fits", 2, 8, preferred=(MINIPOD, TOR))
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,)))
    fits = outcome(result, "ml/fits")
    assert fits.placed and fits.spans == {MINIPOD: 1, TOR: 1}


def test_preferred_falls_back_to_the_fewest_tors_in_one_minipod() -> None:
    # mp0: four tors with 5 free GPUs each (20); mp1: tors with 11 and 1 free (12).
    # A 12-GPU gang fits in neither single tor; mp1 holds it in 2 tors, mp0 would need 3.
    nodes = [node(f"a{t}", "mp0", f"a{t}", gpus=5) for t in range(4)]
    nodes += [node("b0", "mp1", "b0", gpus=11), node("b1", "mp1", "b1", gpus=1)]
    group, pods = gang("wide", 12, 1, preferred=(MINIPOD, TOR))
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,))
    wide = outcome(planned(snapshot), "ml/wide")
    assert wide.placed and wide.spans == {MINIPOD: 1, TOR: 2}
    assert wide.domains[MINIPOD] == ("mp1",)
    baseline = outcome(planned(snapshot, "greedy"), "ml/wide")
    assert baseline.placed and baseline.spans[MINIPOD] == 1


@pytest.mark.parametrize("term", ["preferred", "required"])
def test_greedy_tries_a_tor_before_a_minipod(term: str) -> None:
    """MiniPod and tor terms: mp0 (ranked first: least CPU) has two tors of one pod's room each,
    mp1 one tor (t2) of two. Preferred: greedy tries the smaller preferred domain first, as
    Godel's NodeCircles go. Required: its NodeGroups are the domains of the deepest required
    level (a tor fixes its miniPod). Either way both pods land in t2."""
    nodes = [node("a0", "mp0", "t0", cpu=8000), node("a1", "mp0", "t1", cpu=8000), node("b0", "mp1", "t2", gpus=16)]
    levels = (MINIPOD, TOR)
    group, pods = gang("g", 2, 8, required=levels if term == "required" else (), preferred=levels if term == "preferred" else ())
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,))
    problem = build_problem(snapshot, levels=(MINIPOD, TOR))
    for as_scheduler in (False, True):
        placed = greedy(problem, as_scheduler=as_scheduler)
        assert placed.placed == {0} and {n for _, n in placed.counts} == {2}
        assert verify(snapshot, name_pods(problem, placed), (MINIPOD, TOR)).ok

ZONE = "example.com/zone"


def test_only_the_scheduler_like_greedy_degrades_to_the_nearest_enclosing_domain_first() -> None:
    """Preferred tor, no tor holds the gang (one pod's room each), zone > miniPod > tor. greedy's
    docstring: as the scheduler, a gang no preferred domain holds tries one domain of each
    level above, nearest first (a miniPod, then a zone), before spreading freely, so it takes
    mp1's two tors; the packing greedy CP-SAT starts from does not degrade, and fills the
    nodes in order, t0 (ranked first: least CPU) then t1."""
    nodes = tuple(Node(name, {ZONE: "z0", MINIPOD: mp, TOR: tor}, {"cpu": cpu, "nvidia.com/gpu": 8, "pods": 110})
                  for name, mp, tor, cpu in (("a0", "mp0", "t0", 8000), ("b0", "mp1", "t1", 16000), ("b1", "mp1", "t2", 16000)))
    group, pods = gang("g", 2, 8, preferred=(TOR,))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))
    levels = (ZONE, MINIPOD, TOR)
    problem = build_problem(snapshot, levels=levels)
    for as_scheduler, expected in ((False, {"a0", "b0"}), (True, {"b0", "b1"})):
        placed = greedy(problem, as_scheduler=as_scheduler)
        assert placed.placed == {0} and {problem.nodes[n].name for _, n in placed.counts} == expected
        assert verify(snapshot, name_pods(problem, placed), levels).ok


def _spread(nodes: list[Node], size: int, gpus: int, preferred: tuple[str, ...]) -> list[tuple[bool, set[str]]]:
    """Where greedy puts a gang of ``size`` pods of ``gpus`` GPUs, as it packs and as the
    scheduler does: its nodes."""
    group, pods = gang("g", size, gpus, preferred=preferred)
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,))
    problem = build_problem(snapshot, levels=(MINIPOD, TOR))
    found = []
    for as_scheduler in (False, True):
        placed = greedy(problem, as_scheduler=as_scheduler)
        assert verify(snapshot, name_pods(problem, placed), (MINIPOD, TOR)).ok
        found.append((placed.placed == {0}, {problem.nodes[n].name for _, n in placed.counts}))
    return found


def test_a_spreading_gang_fills_nodes_in_the_sort_rule_order() -> None:
    """Preferred tor, one pod's room per tor: the gang spreads. Among placements of equal span
    the higher-ranked domains win (DESIGN, sort rules; the default ranks least CPU first): t2
    (c0, 8 cpu) first, then t0 (the path breaks the tie with t1), where a tightest fit would
    have taken a0 and b0, whose pods room is tighter."""
    nodes = [replace(node(name, mp, tor, cpu=cpu), allocatable={"cpu": cpu, "nvidia.com/gpu": 8, "pods": pods})
             for name, mp, tor, cpu, pods in (("a0", "mp0", "t0", 16000, 2), ("b0", "mp1", "t1", 16000, 2),
                                               ("c0", "mp2", "t2", 8000, 110))]
    assert _spread(nodes, 2, 8, (TOR,)) == [(True, {"c0", "a0"})] * 2


def test_the_scheduler_like_greedy_degrades_to_the_best_ranked_domain_above() -> None:
    """Preferred tor, one pod's room per tor, both miniPods hold the gang: as the scheduler,
    greedy tries the miniPods in the order of their best-ranked tor (least CPU first: mpb),
    not by name."""
    nodes = [node(f"{mp}{i}", mp, f"{mp}-t{i}", cpu=cpu) for mp, cpu in (("mpa", 32000), ("mpb", 16000)) for i in range(2)]
    assert _spread(nodes, 2, 8, (TOR,)) == [(True, {"mpb0", "mpb1"})] * 2


def test_a_spreading_gang_fills_the_best_ranked_larger_domain_first() -> None:
    """Preferred miniPod and tor, three one-pod-room nodes needed, two per miniPod: the gang
    spreads in rank order at the larger level first (mp0, 16 cpu, before mp1, 24), so it
    spans two tors (t0 and t1); by the tors' rank alone (t1 and t2 at 12 cpu before t0 at 16)
    it would span three."""
    nodes = [node("a0", "mp0", "t0", cpu=8000), node("a1", "mp0", "t0", cpu=8000),
             node("b1", "mp1", "t1", cpu=12000), node("b2", "mp1", "t2", cpu=12000)]
    assert _spread(nodes, 3, 8, (MINIPOD, TOR)) == [(True, {"a0", "a1", "b1"})] * 2


def test_the_scheduler_like_greedy_spreads_one_domain_above_at_a_time() -> None:
    """Preferred tor, no miniPod holds the gang: the packing greedy fills the tors in rank
    order (t0, t1, t2 by CPU); the scheduler-like one takes whole miniPods in turn, the one
    with the best-ranked tor first (greedy's docstring: grouped by domain at each enclosing
    level, that domain taking the place of its best node): mp0's t0 and t3, then t1."""
    nodes = [node("a0", "mp0", "t0", cpu=8000), node("a3", "mp0", "t3", cpu=64000),
             node("b1", "mp1", "t1", cpu=16000), node("b2", "mp1", "t2", cpu=32000)]
    assert _spread(nodes, 3, 8, (TOR,)) == [(True, {"a0", "b1", "b2"}), (True, {"a0", "a3", "b1"})]


def test_a_spreading_gang_takes_alike_nodes_in_their_order() -> None:
    """Preferred tor, no tor holds the gang's three 4-GPU pods: t0's node (ranked first) takes
    two, and of t1's two alike nodes the first listed takes the third, as ``place_pods`` breaks
    ties by node."""
    nodes = [node("a0", "mp0", "t0", cpu=8000), node("b0", "mp0", "t1", gpus=4, cpu=8000),
             node("b1", "mp0", "t1", gpus=4, cpu=8000)]
    assert _spread(nodes, 3, 4, (TOR,)) == [(True, {"a0", "b0"})] * 2


def test_compactness_below_prefers_fewer_nodes_in_one_rack() -> None:
    nodes = [node(f"n{i}", "mp0", "t0", gpus=8) for i in range(4)]
    fill = [filler(f"f{i}", f"n{i}", 4) for i in range(2)]
    group, pods = gang("compact", 4, 2, required=(TOR,))
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(fill + pods), pod_groups=(group,)))
    compact = outcome(result, "ml/compact")
    assert compact.placed and len(compact.domains["node"]) == 1


# ----------------------------------------------------------------- sort rules

@pytest.mark.parametrize("order,expected", [("Ascending", "small"), ("Descending", "big")])
def test_sort_rule_order_chooses_the_domain(order: str, expected: str) -> None:
    nodes = [node("s0", "mp0", "small", gpus=4), node("b0", "mp0", "big", gpus=8), node("b1", "mp0", "big", gpus=8)]
    rule = SortRule("GPU", "Capacity", order)
    group, pods = gang("ranked", 2, 2, required=(TOR,), sort_rules=(rule,))
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,))
    for solver in ("cp-sat", "greedy"):
        ranked = outcome(planned(snapshot, solver), "ml/ranked")
        assert ranked.placed and minipod_of(ranked.domains[TOR][0]) == expected, solver


@pytest.mark.parametrize("policy", ["optimal", "ordered"])
@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize("dimension", ["Capacity", "Available"])
def test_sort_rules_sum_only_the_nodes_the_groups_node_selector_matches(solver: str, policy: str, dimension: str) -> None:
    """Seed 003 divides NodeCircles with the PodGroup's nodeSelector so that sorting reads the
    nodes the group may use (helper-54's review): rack ra holds 4 of the 12 selected cpu and
    a 64-cpu node of another pool, which had ranked it last under CPU Ascending."""
    pool = lambda name, rack, value, cpu: Node(name, {"rack": rack, "pool": value}, {"cpu": cpu, "pods": 110})  # noqa: E731
    nodes = (pool("a1", "ra", "train", 4000), pool("a2", "ra", "serve", 64000), pool("b1", "rb", "train", 8000))
    train = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("pool", "In", ("train",)),)),))
    group = PodGroup("ml", "g", PodGroupAPI.GODEL_BYTEDANCE, min_member=2, required_topology=("rack",),
                     sort_rules=(SortRule("CPU", dimension, "Ascending"),), node_selector=train)
    pods = tuple(Pod("ml", f"g-{i}", labels={GROUP: "g"}, containers=(Container("c", {"cpu": 1000}),)) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    result = plan(snapshot, Options(solver=solver, policy=policy, levels=("rack",)))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert outcome(result, "ml/g").domains["rack"] == ("ra",)


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize("order,expected", [("Ascending", "cpu"), ("Descending", "gpu")])
def test_a_sort_rule_ranks_on_a_resource_the_pods_do_not_ask(solver: str, order: str, expected: str) -> None:
    # Keeping CPU-only gangs off GPU tors (GPU Capacity Ascending) is what the rule is for;
    # a resource no pending pod asked for had ranked every tor 0, leaving it to the names.
    nodes = [node(f"c{i}", "mp0", "cpu", gpus=0) for i in range(2)] + [node(f"g{i}", "mp0", "gpu") for i in range(2)]
    group, _ = gang("cpu-only", 2, 0, required=(TOR,), sort_rules=(SortRule("GPU", "Capacity", order),))
    pods = tuple(Pod("ml", f"cpu-only-{i}", labels={GROUP: "cpu-only"}, containers=(Container("c", {"cpu": 1000}),))
                 for i in range(2))
    result = planned(Snapshot(nodes=tuple(nodes), pods=pods, pod_groups=(group,)), solver)
    assert "nvidia.com/gpu" not in result.resources_before  # nor in the summary
    assert minipod_of(outcome(result, "ml/cpu-only").domains[TOR][0]) == expected


@pytest.mark.parametrize("dimension", ["Available", "Capacity"])
def test_an_available_sort_rule_ranks_on_the_room_the_groups_before_left(dimension: str) -> None:
    # Godel ranks NodeGroups again each scheduling cycle: after ml/a takes half of the roomy
    # tor, the other has more GPUs available, so ml/b goes there. One model for all (the
    # default policy) ranks on the snapshot, as Capacity always does.
    nodes = [node(f"r{i}", "mp0", "roomy") for i in range(4)] + [node(f"t{i}", "mp0", "tight") for i in range(3)]
    rule = SortRule("GPU", dimension, "Descending")
    groups, pods = zip(*(gang(name, 2, 8, required=(TOR,), sort_rules=(rule,)) for name in ("a", "b")))
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(p for ps in pods for p in ps), pod_groups=groups)
    live = dimension == "Available"
    for solver, policy, moves in (("greedy", "optimal", live), ("cp-sat", "ordered", live), ("cp-sat", "optimal", False)):
        result = plan(snapshot, Options(solver=solver, policy=policy, levels=(MINIPOD, TOR)))
        assert verify(snapshot, result.placements, result.topology_levels()).ok
        tors = [minipod_of(outcome(result, f"ml/{name}").domains[TOR][0]) for name in ("a", "b")]
        assert tors == ["roomy", "tight" if moves else "roomy"], (solver, policy)


def test_only_the_scheduler_like_greedy_ranks_on_the_room_the_groups_before_left() -> None:
    """greedy's docstring: ``as_scheduler`` ranks an Available sort rule on the room the groups
    before it left, as Godel does; the packing greedy CP-SAT starts from ranks on the snapshot,
    as CP-SAT does (one model for all). The cluster above: ml/b goes to the tight tor only when
    placed as the scheduler would."""
    nodes = [node(f"r{i}", "mp0", "roomy") for i in range(4)] + [node(f"t{i}", "mp0", "tight") for i in range(3)]
    rule = SortRule("GPU", "Available", "Descending")
    groups, pods = zip(*(gang(name, 2, 8, required=(TOR,), sort_rules=(rule,)) for name in ("a", "b")))
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(p for ps in pods for p in ps), pod_groups=groups)
    problem = build_problem(snapshot, levels=(MINIPOD, TOR))
    for as_scheduler, b_tor in ((False, "roomy"), (True, "tight")):
        placed = greedy(problem, as_scheduler=as_scheduler)
        assert placed.placed == {0, 1}
        tors = {problem.gangs[problem.roles[r].gang].key: nodes[n].labels[TOR] for (r, n) in placed.counts}
        assert tors == {"ml/a": "roomy", "ml/b": b_tor}
        assert verify(snapshot, name_pods(problem, placed), (MINIPOD, TOR)).ok


# ----------------------------------------------------------------- required terms

def test_required_term_no_domain_satisfies_leaves_the_group_unplaced_with_figures() -> None:
    nodes = [node(f"n{m}{t}", f"mp{m}", f"t{m}{t}", gpus=8) for m in range(2) for t in range(3)]
    group, pods = gang("huge", 8, 4, required=(MINIPOD,))  # 32 GPUs; a minipod has 24
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,)))
    huge = outcome(result, "ml/huge")
    assert not huge.placed and huge.scheduled == 0
    assert huge.reason.startswith(f"required {MINIPOD}: the best {MINIPOD} (mp0) holds 6 of 8 pods (nvidia.com/gpu)")


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_required_key_no_node_carries_keeps_only_its_own_group_off(solver: str) -> None:
    """A typo in one PodGroup's required topologyKey leaves that group unplaceable, saying why;
    the other groups' terms still bind and place, and a preferred term on such a key is
    ignored with a warning (it once made every node 'outside the topology' for all of them)."""
    nodes = tuple(node(f"n{m}{t}{i}", f"mp{m}", f"t{m}{t}", gpus=8) for m in range(2) for t in range(2) for i in range(2))
    typo, typo_pods = gang("typo", 1, 1, required=("example.com/rakc",))
    fine, fine_pods = gang("fine", 2, 8, required=(TOR,))
    loose, loose_pods = gang("loose", 1, 1, preferred=("example.com/zoen",))
    result = planned(Snapshot(nodes=nodes, pods=(*typo_pods, *fine_pods, *loose_pods), pod_groups=(typo, fine, loose)),
                     solver)
    assert result.levels == (TOR,)
    assert not outcome(result, "ml/typo").placed
    assert outcome(result, "ml/typo").reason == "required example.com/rakc: no node carries that label"
    assert outcome(result, "ml/fine").placed and len(outcome(result, "ml/fine").domains[TOR]) == 1
    assert outcome(result, "ml/loose").placed
    assert "PodGroup ml/loose: topologyKey example.com/zoen is not a topology level; the term is ignored" in result.warnings


def test_a_key_many_groups_name_that_is_no_level_is_one_warning() -> None:
    """A Kueue Topology beside 160 Godel groups printed one line per group and term (a
    review's case): now each key the levels lack is one line, with the count and the first
    three groups; the one group asking a level no tree has keeps its own line."""
    nodes = tuple(node(f"n{t}", "mp0", f"t{t}", gpus=8) for t in range(2))
    groups = [gang(f"g{i}", 1, 1, preferred=("example.com/zone",)) for i in range(4)]
    groups.append(gang("odd", 1, 1, preferred=("example.com/row",)))
    result = planned(Snapshot(nodes=nodes, pods=tuple(p for _, pods in groups for p in pods),
                              pod_groups=tuple(g for g, _ in groups)), levels=(MINIPOD, TOR))
    assert [w for w in result.warnings if "topologyKey" in w] == [
        "PodGroup ml/odd: topologyKey example.com/row is not a topology level; the term is ignored",
        "topologyKey example.com/zone is not a topology level; the terms of 4 PodGroups naming it are ignored "
        "(ml/g0, ml/g1, ml/g2, …)",
    ]
    assert all(g.placed for g in result.groups)


@pytest.mark.parametrize("path", ["nodes", "buckets"])
@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_group_that_needs_no_pod_stands_though_its_terms_cannot_hold(
    solver: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A term binds the pods still to place: a PodGroup whose quorum has finished, or whose
    minMember is 0, is placed with none of its pending pods, as its README rule (Succeeded
    members count in Volcano, and pin no domain) says. It was left out as unplaceable, so
    `check` failed a finished job (found by the exhaustive cross-check on seeds 200 to 1,199).
    In Godel, whose scheduler sees no Succeeded pod, the same group still needs its pending pod,
    which its term keeps out (session 50)."""
    import gangplan.planner as planner

    if path == "buckets":
        monkeypatch.setattr(planner, "BUCKET_FROM", -1)
    nodes = (node("n0", "mp0", "t0"), node("n1", "mp1", "t1"))
    rack = "example.com/rack"  # no node carries it
    finished, finished_pods = gang("finished", 2, 1, required=(rack,), min_member=1)
    finished_pods[0] = replace(finished_pods[0], node_name="n0", phase=PodPhase.SUCCEEDED)
    godel, godel_pods = gang("godel", 2, 1, required=(rack,), min_member=1)
    godel_pods[0] = replace(godel_pods[0], node_name="n0", phase=PodPhase.SUCCEEDED)
    finished = replace(finished, api=PodGroupAPI.VOLCANO)
    zero, zero_pods = gang("zero", 2, 1, required=(rack,))
    zero = replace(zero, min_member=0)
    short, short_pods = gang("short", 2, 1, required=(rack,))
    short_pods[0] = replace(short_pods[0], node_name="n0", phase=PodPhase.SUCCEEDED)
    short = replace(short, api=PodGroupAPI.VOLCANO)  # its succeeded member counts: 2 pods exist
    split, split_pods = gang("split", 2, 1, required=(TOR,), min_member=1, running_on=("n0", "n1"))
    result = planned(Snapshot(nodes=nodes, pods=(*finished_pods, *godel_pods, *zero_pods, *short_pods, *split_pods),
                              pod_groups=(finished, godel, zero, short, split)), solver)
    for key in ("ml/finished", "ml/zero"):
        assert outcome(result, key).placed and outcome(result, key).scheduled == 0, key
    assert not result.placements
    for key in ("ml/short", "ml/godel"):
        assert not outcome(result, key).placed
        assert outcome(result, key).reason == f"required {rack}: no node carries that label"
    # Running members that already break a term are not settled by it: the group stays out.
    assert not outcome(result, "ml/split").placed
    assert outcome(result, "ml/split").reason == f"required {TOR}: running members already span 2 domains"


def test_the_ordered_placer_keeps_out_a_group_whose_running_members_break_its_term() -> None:
    """As above, one group at a time (``greedy.Placer``, ``--policy ordered``'s fast path): a
    group whose running members already span two tors does not fit, though they make its
    quorum, and nothing is placed for it."""
    nodes = (node("n0", "mp0", "t0"), node("n1", "mp1", "t1"))
    split, split_pods = gang("split", 2, 1, required=(TOR,), min_member=1, running_on=("n0", "n1"))
    problem = build_problem(Snapshot(nodes=nodes, pods=tuple(split_pods), pod_groups=(split,)), levels=(MINIPOD, TOR))
    _, added, fits = Placer(problem).place(0)
    assert not fits and not added


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_required_key_the_stated_levels_lack_cannot_be_held(solver: str) -> None:
    """A Topology object names only the miniPod level; a gang requires one tor. Kueue does not
    admit it ('no requested topology level'), so it is not placed, saying why (it was placed
    across tors, its term dropped with a warning). --levels, the user's what-if, still lets
    the term go with that warning."""
    from gangplan.model import Topology

    nodes = tuple(node(f"n{t}{i}", "mp0", f"t{t}", gpus=8) for t in range(2) for i in range(2))
    group, pods = gang("racked", 2, 8, required=(TOR,))
    stated = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,), topologies=(Topology("net", (MINIPOD,)),))
    result = planned(stated, solver)
    assert not outcome(result, "ml/racked").placed
    assert outcome(result, "ml/racked").reason == (
        f"required {TOR}: not a topology level (levels: {MINIPOD}), so it cannot be held"
    )
    given = planned(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,)), solver, levels=(MINIPOD,))
    assert outcome(given, "ml/racked").placed
    assert f"PodGroup ml/racked: topologyKey {TOR} is not a topology level; the term is ignored" in given.warnings


def test_kueue_pods_that_ask_different_topology_are_warned_about() -> None:
    """Kueue keeps one topology request per PodSet; gangplan has one per group, so pods that
    disagree hold the whole group to each request, and a warning says so (second user review)."""
    nodes = tuple(node(f"n{t}", "mp0", f"t{t}", gpus=8) for t in range(2))
    pods = tuple(
        Pod("ml", f"k-{i}", labels={"kueue.x-k8s.io/pod-group-name": "k"},
            annotations={"kueue.x-k8s.io/pod-group-total-count": "2",
                         **({"kueue.x-k8s.io/podset-required-topology": TOR} if i == 0 else {})},
            containers=(Container("main", {"nvidia.com/gpu": 8}),))
        for i in range(2)
    )
    result = planned(Snapshot(nodes=nodes, pods=pods))
    assert (
        f"PodGroup ml/k: its pods ask different kueue.x-k8s.io/podset-required-topology ((none), {TOR}); "
        "each one given holds for the whole group"
    ) in result.warnings
    assert not outcome(result, "ml/k").placed  # two whole-node pods, one tor of one node each


def test_running_members_pin_the_required_domain() -> None:
    nodes = [node("a0", "mp0", "ta", gpus=8), node("b0", "mp0", "tb", gpus=8), node("b1", "mp0", "tb", gpus=8)]
    group, pods = gang("pinned", 3, 4, required=(TOR,), running_on=("a0",), min_member=2)
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,))
    for solver in ("cp-sat", "greedy"):
        result = planned(snapshot, solver)
        pinned = outcome(result, "ml/pinned")
        assert pinned.placed and pinned.scheduled == 1, solver  # the third pod has no room in ta
        assert {p.node for p in result.placements} == {"a0"}, solver
    # Without room beside the running member, the group cannot be placed, even though tb is empty.
    group, pods = gang("stuck", 4, 4, required=(TOR,), running_on=("a0",))
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,)))
    stuck = outcome(result, "ml/stuck")
    assert not stuck.placed and stuck.reason == f"required {TOR}: running members hold it to ta, which holds 2 of 4 pods (nvidia.com/gpu)"


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize("member", ["a0", "b0"])
def test_a_running_member_draws_a_preferred_term_to_its_domain(solver: str, member: str) -> None:
    # Both tors hold the two pending pods; only the member's tor keeps the gang in one tor,
    # whichever tor the sort rules rank first.
    nodes = [node(f"{t}{i}", "mp0", f"t{t}", gpus=8) for t in "ab" for i in range(2)]
    group, pods = gang("drawn", 3, 4, preferred=(TOR,), running_on=(member,))
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,)), solver)
    drawn = outcome(result, "ml/drawn")
    assert drawn.placed and drawn.spans == {TOR: 1}
    assert {p.node[0] for p in result.placements} == {member[0]}


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize("member", ["a0", "b0", "c0"])
def test_a_gang_no_preferred_domain_holds_spreads_from_its_running_member(solver: str, member: str) -> None:
    # 5 more pods of 4 GPUs: no tor holds them (16 GPUs each, 12 beside the member), so the gang
    # spans two tors only if the member's tor is filled first.
    nodes = [node(f"{t}{i}", "mp0", f"t{t}", gpus=8) for t in "abc" for i in range(2)]
    group, pods = gang("spread", 6, 4, preferred=(TOR,), running_on=(member,))
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,)), solver)
    spread = outcome(result, "ml/spread")
    assert spread.placed and spread.spans == {TOR: 2}


def test_the_default_plan_is_never_worse_than_the_scheduler_like_greedy() -> None:
    """--solver greedy degrades level by level as Godel does and so keeps miniPod b whole for
    ml/whole; CP-SAT starts from the packing greedy, which spreads ml/spread over both. With
    no time to search, the default had returned the packing plan, one JobGroup short of what
    --solver greedy places (user review F); it answers the better of the two, and its note
    still says why the solver had no time."""
    nodes = [node(f"{m}{t}{i}", f"mp{m}", f"t{m}{t}", cpu=cpu) for m in "ab" for t, cpu in (("1", 32000), ("2", 128000))
             for i in range(2)]
    spread, spread_pods = gang("spread", 3, 8, preferred=(TOR,))
    whole, whole_pods = gang("whole", 4, 8, required=(MINIPOD,))
    spread = replace(spread, creation_timestamp="2024-01-01T00:00:00Z")  # ml/spread first in the queue
    whole = replace(whole, creation_timestamp="2024-01-02T00:00:00Z")
    snapshot = Snapshot(nodes=tuple(nodes), pods=(*spread_pods, *whole_pods), pod_groups=(spread, whole))
    scheduler = plan(snapshot, Options(solver="greedy", levels=(MINIPOD, TOR)))
    assert [g.placed for g in scheduler.groups] == [True, True]
    hurried = plan(snapshot, Options(levels=(MINIPOD, TOR), time_limit=1e-9))
    assert verify(snapshot, hurried.placements, hurried.topology_levels()).ok
    assert [g.placed for g in hurried.groups] == [True, True] and hurried.solver.status == "GREEDY"
    # README: when the charge for the work around the solver alone exceeds the limit, the note
    # says so (and what limit would leave the solver time), whichever greedy plan is kept.
    assert hurried.solver.note.startswith("building the problem and the greedy plan used up the time limit")
    assert hurried.solver.chosen == "greedy"  # plan.py: which plan was kept, cp-sat's or greedy's


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_gang_no_preferred_domain_holds_stays_inside_as_few_domains_above(solver: str) -> None:
    # Preferred tor only; no tor holds 3 whole-node pods. The sort rules rank the two small
    # tors first, one in each miniPod; DESIGN: "inside as few domains of the level above".
    nodes = [node(f"{m}{t}{i}", f"mp{m}", f"t{m}{t}", cpu=cpu) for m in "ab" for t, cpu in (("1", 32000), ("2", 128000))
             for i in range(2)]
    group, pods = gang("spread", 3, 8, preferred=(TOR,))
    result = planned(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,)), solver, (MINIPOD, TOR))
    spread = outcome(result, "ml/spread")
    assert spread.placed and spread.spans == {TOR: 2}
    assert len({name[0] for name in spread.domains["node"]}) == 1  # one miniPod
    if solver == "cp-sat":
        assert "enclosing-spans@" + MINIPOD in [term.name for term in result.solver.objective]


def test_a_group_with_terms_never_uses_nodes_outside_the_topology() -> None:
    outside = Node("loose", {}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    nodes = (node("n0", "mp0", "t0", gpus=0), outside)
    group, pods = gang("scoped", 2, 2, preferred=(TOR,))
    lone = Pod("ml", "free-rider", containers=(Container("c", {"nvidia.com/gpu": 8}),))
    result = planned(Snapshot(nodes=nodes, pods=(*pods, lone), pod_groups=(group,)))
    scoped = outcome(result, "ml/scoped")
    assert not scoped.placed and "outside the topology" in scoped.reason
    assert outcome(result, "ml/free-rider").placed


# ----------------------------------------------------------------- Kueue annotations

def kueue_pods(name: str, size: int, gpus: int, annotation: str, level: str) -> list[Pod]:
    return [
        Pod("ml", f"{name}-{i}", labels={"kueue.x-k8s.io/pod-group-name": name},
            annotations={"kueue.x-k8s.io/pod-group-total-count": str(size), annotation: level},
            containers=(Container("main", {"nvidia.com/gpu": gpus}),))
        for i in range(size)
    ]


def test_kueue_required_topology_annotation_is_a_required_term() -> None:
    # tor a holds 6 GPUs over two nodes, tor b 4 on one: 8 GPUs fit only by splitting across tors.
    nodes = (node("a0", "mp0", "a", gpus=3), node("a1", "mp0", "a", gpus=3), node("b0", "mp0", "b", gpus=4))
    pods = kueue_pods("split", 4, 2, "kueue.x-k8s.io/podset-required-topology", TOR)
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods)))
    split = outcome(result, "ml/split")
    assert not split.placed and split.reason.startswith(f"required {TOR}: the best {TOR}")
    fits = kueue_pods("fits", 2, 2, "kueue.x-k8s.io/podset-required-topology", TOR)
    result = planned(Snapshot(nodes=nodes, pods=tuple(fits)))
    assert outcome(result, "ml/fits").placed and len(outcome(result, "ml/fits").domains[TOR]) == 1


FAST_TOR = {"kueue.x-k8s.io/pod-group-fast-admission": "true", "kueue.x-k8s.io/podset-required-topology": TOR}


@pytest.mark.parametrize(
    "options",
    [Options(), Options(solver="greedy"), Options(model="buckets"), Options(policy="ordered")],
    ids=["cp-sat", "greedy", "buckets", "ordered"],
)
def test_a_fast_admitted_kueue_group_under_tas_gets_a_tor_that_holds_its_total(options: Options) -> None:
    """Kueue's TAS admits a fast-admitted group of 4 GPU pods, 2 of which exist, only in a tor
    where all 4 fit, and holds that room: tor a (3 one-GPU nodes, first by the default sort)
    takes the 2 but not 4, tor b takes 4. The plan binds the 2 in tor b and nothing for the
    2 to come, whose room no later group gets; with tor b gone (tor c holds 2) the group waits,
    and says why."""
    tor_a = tuple(node(f"a{i}", "mp0", "a", gpus=1) for i in range(3))
    tor_b = tuple(node(f"b{i}", "mp0", "b", gpus=1, cpu=128000) for i in range(4))
    fast = [replace(p, annotations={**p.annotations, **FAST_TOR}) for p in kueue_pods("fast", 4, 1, "x", "y")[:2]]
    later = Pod("ml", "later", creation_timestamp="2030-01-01T00:00:00Z", containers=(Container("main", {"nvidia.com/gpu": 1}),))
    snapshot = Snapshot(nodes=tor_a + tor_b, pods=(*fast, later))
    result = plan(snapshot, options)
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    group = outcome(result, "ml/fast")
    assert group.placed and (group.min_member, group.pending, group.scheduled) == (2, 2, 2)  # as verify counts them
    assert sorted(p.name for p in result.placements if p.group == "ml/fast") == ["fast-0", "fast-1"]
    assert {p.node[0] for p in result.placements if p.group == "ml/fast"} == {"b"}
    held = {p.node for p in result.placements}
    assert outcome(result, "ml/later").placed and sum(n.startswith("b") for n in held) == 2  # 2 b nodes held
    assert any("the plan holds room for the other 2 beside them" in w for w in result.warnings)
    short = Snapshot(nodes=tor_a + tuple(node(f"c{i}", "mp0", "c", gpus=1) for i in range(2)), pods=tuple(fast))
    result = plan(short, options)
    waits = outcome(result, "ml/fast")
    assert not waits.placed and not result.placements
    assert waits.reason.startswith(f"required {TOR}: the best {TOR} (a) holds 3 of 4 pods")


def test_verify_holds_a_fast_admitted_kueue_group_under_tas_to_room_for_the_pods_to_come() -> None:
    """verify re-derives the room Kueue's TAS holds: the 2 pods placed in tor a leave room for
    1 more there, not the 2 to come; in tor b beside a later pod, for 1 as well; in tor b
    alone, for 2. Without fast admission, or with the whole count there, nothing is held."""
    tor_a = tuple(node(f"a{i}", "mp0", "a", gpus=1) for i in range(3))
    tor_b = tuple(node(f"b{i}", "mp0", "b", gpus=1) for i in range(4))
    fast = [replace(p, annotations={**p.annotations, **FAST_TOR}) for p in kueue_pods("fast", 4, 1, "x", "y")[:2]]
    later = Pod("ml", "later", containers=(Container("main", {"nvidia.com/gpu": 1}),))
    snapshot = Snapshot(nodes=tor_a + tor_b, pods=(*fast, later))

    def held(**on: str) -> list[str]:
        placements = [Placement("ml", name.replace("_", "-"), there) for name, there in on.items()]
        found = verify(snapshot, placements, (MINIPOD, TOR)).violations
        return [f"{v.subject}: {v.message}" for v in found if v.rule == "kueue-tas-room"]

    short = "ml/fast: Kueue's TAS holds room for its 2 pods to come (fast admission, 4 in all, 2 there) in "
    assert held(fast_0="a0", fast_1="a1") == [f"{short}{TOR}=a, where 1 pod like fast-0 fits after the plan"]
    assert held(fast_0="b0", fast_1="b1", later="b2") == [f"{short}{TOR}=b, where 1 pod like fast-0 fits after the plan"]
    assert held(fast_0="b0", fast_1="b1", later="a0") == []
    slow = [replace(p, annotations={k: v for k, v in p.annotations.items() if "fast" not in k}) for p in fast]
    snapshot = Snapshot(nodes=tor_a + tor_b, pods=(*slow, later))
    assert held(fast_0="a0", fast_1="a1") == []
    whole = [replace(p, annotations={**p.annotations, "kueue.x-k8s.io/pod-group-total-count": "2"}) for p in fast]
    snapshot = Snapshot(nodes=tor_a + tor_b, pods=(*whole, later))
    assert held(fast_0="a0", fast_1="a1", later="a2") == []
    # fast-0 bound: Kueue admitted the group before, and holds nothing a plan must keep.
    admitted = [replace(fast[0], node_name="a0", phase=PodPhase.RUNNING), fast[1]]
    snapshot = Snapshot(nodes=tor_a + tor_b, pods=(*admitted, later))
    assert held(fast_1="a1", later="a2") == []
    # Unconstrained: the Topology's nodes hold the room, not a node outside it.
    anywhere = [
        replace(p, annotations={**{k: v for k, v in p.annotations.items() if "required" not in k},
                                "kueue.x-k8s.io/podset-unconstrained-topology": "true"})
        for p in fast
    ]
    loose = Node("loose", {}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    snapshot = Snapshot(nodes=(*tor_a, loose), pods=tuple(anywhere))
    assert held(fast_0="a0", fast_1="a1") == [f"{short}the topology, where 1 pod like fast-0 fits after the plan"]


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_fast_admitted_unconstrained_kueue_group_holds_room_on_the_topologys_nodes(solver: str) -> None:
    """Unconstrained, Kueue's TAS still places the whole count on its Topology's nodes before it
    admits: 2 of 4 one-GPU pods exist, and 3 topology nodes of one GPU hold 3, so the group
    waits though the 2 fit; with a fourth, it is placed and the later pod goes to the node
    outside the topology, the room for the 2 to come being held."""
    loose = Node("loose", {}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    fast = kueue_pods("fast", 4, 1, "kueue.x-k8s.io/podset-unconstrained-topology", "true")[:2]
    fast = [
        replace(p, annotations={**p.annotations, "kueue.x-k8s.io/pod-group-fast-admission": ""}, creation_timestamp="2020-01-01T00:00:00Z")
        for p in fast
    ]
    later = Pod("ml", "later", creation_timestamp="2030-01-01T00:00:00Z", containers=(Container("main", {"nvidia.com/gpu": 1}),))
    three = tuple(node(f"n{i}", "mp0", f"t{i}", gpus=1) for i in range(3))
    result = planned(Snapshot(nodes=(*three, loose), pods=tuple(fast)), solver, levels=(MINIPOD, TOR))
    assert not outcome(result, "ml/fast").placed and not result.placements
    four = (*three, node("n3", "mp0", "t3", gpus=1))
    result = planned(Snapshot(nodes=(*four, loose), pods=(*fast, later)), solver, levels=(MINIPOD, TOR))
    assert outcome(result, "ml/fast").placed and {p.node for p in result.placements if p.name == "later"} == {"loose"}
    assert len(result.placements) == 3


def test_diff_holds_a_fast_admitted_kueue_groups_placements_to_the_room_for_the_pods_to_come() -> None:
    """Against the snapshot it was made from, the plan's fast-admitted group is placed (its 2
    pods of 2 there, the 2 to come held by Kueue, not by placements); once pods bound since
    fill the rest of tor b, Kueue's TAS has no room there for the 2 to come: stale."""
    tor_b = tuple(node(f"b{i}", "mp0", "b", gpus=1) for i in range(4))
    fast = [replace(p, annotations={**p.annotations, **FAST_TOR}) for p in kueue_pods("fast", 4, 1, "x", "y")[:2]]
    before = Snapshot(nodes=tor_b, pods=tuple(fast))
    result = plan(before, Options())
    assert [(g.key, g.change, g.min_member) for g in diff_snapshot(before, result).groups] == [("ml/fast", "placed", 2)]
    free = sorted({n.name for n in tor_b} - {p.node for p in result.placements})
    since = tuple(
        Pod("ml", f"new-{n}", containers=(Container("main", {"nvidia.com/gpu": 1}),), node_name=n, phase=PodPhase.RUNNING)
        for n in free[:1]
    )
    [change] = diff_snapshot(replace(before, pods=(*fast, *since)), result).groups
    assert change.change == "stale" and change.reason.endswith(
        f"kueue-tas-room: Kueue's TAS holds room for its 2 pods to come (fast admission, 4 in all, 2 there) in {TOR}=b, "
        "where 1 pod like fast-0 fits after the plan"
    )


def test_a_kueue_required_level_with_a_trailing_space_is_no_level() -> None:
    # As Kueue reads it: "tor " is not the tor level, so nothing can hold the group together.
    nodes = (node("a0", "mp0", "a", gpus=3), node("a1", "mp0", "a", gpus=3), node("b0", "mp0", "b", gpus=4))
    pods = kueue_pods("spaced", 2, 2, "kueue.x-k8s.io/podset-required-topology", TOR + " ")
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods)))
    spaced = outcome(result, "ml/spaced")
    assert not spaced.placed and spaced.reason == f"required {TOR + ' '!r}: no node carries that label"


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize("value, inside", [("true", True), ("1", True), ("false", False), ("yes", False)])
def test_kueue_unconstrained_topology_keeps_the_group_on_the_topologys_nodes(solver: str, value: str, inside: bool) -> None:
    """Kueue's TAS places an unconstrained PodSet on its Topology's nodes only, with no level
    to share; a value Go's strconv.ParseBool does not read as true asks nothing."""
    loose = Node("loose", {}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    nodes = (node("n0", "mp0", "t0"), node("n1", "mp0", "t1"), loose)
    pods = kueue_pods("free", 3, 8, "kueue.x-k8s.io/podset-unconstrained-topology", value)
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods)), solver, levels=(MINIPOD, TOR))
    free = outcome(result, "ml/free")
    if inside:
        assert not free.placed and "outside the topology" in free.reason
        two = kueue_pods("two", 2, 8, "kueue.x-k8s.io/podset-unconstrained-topology", value)
        spread = planned(Snapshot(nodes=nodes, pods=tuple(two)), solver, levels=(MINIPOD, TOR))
        assert sorted(p.node for p in spread.placements) == ["n0", "n1"]  # two tors: no level to share
    else:
        assert free.placed  # the loose node too
    assert not any("unconstrained" in w for w in result.warnings)


@pytest.mark.parametrize("value", ["false", "0", "yes"])
def test_with_a_kueue_topology_an_unconstrained_request_not_true_is_not_admitted(value: str) -> None:
    """Kueue reads such a value as Unconstrained=false: a TAS request naming no level, which
    no flavor holds (review 21 F3). Without a Topology object TAS is not in view: nothing asked."""
    from gangplan.model import Topology

    nodes = (node("n0", "mp0", "t0"), node("n1", "mp0", "t1"))
    pods = kueue_pods("off", 2, 8, "kueue.x-k8s.io/podset-unconstrained-topology", value)
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods), topologies=(Topology("net", (MINIPOD, TOR)),)))
    off = outcome(result, "ml/off")
    assert not off.placed and off.reason == (
        "Kueue admits no workload whose kueue.x-k8s.io/podset-unconstrained-topology is not true and names no level"
    )
    assert outcome(planned(Snapshot(nodes=nodes, pods=tuple(pods)), levels=(MINIPOD, TOR)), "ml/off").placed


@pytest.mark.parametrize("phase", [PodPhase.SUCCEEDED, PodPhase.FAILED])
def test_a_finished_kueue_member_asks_for_its_group_too(phase: PodPhase) -> None:
    """The planner read only running and pending members' requests, the verifier every
    member's: a finished member with the request made plan exit 3 (review 21 F1)."""
    loose = Node("loose", {}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    nodes = (node("n0", "mp0", "t0"), loose)
    pods = kueue_pods("g", 3, 8, "kueue.x-k8s.io/podset-unconstrained-topology", "true")
    done = replace(pods[0], phase=phase, node_name="n0")
    rest = [replace(p, annotations={"kueue.x-k8s.io/pod-group-total-count": "3"}) for p in pods[1:]]
    result = planned(Snapshot(nodes=nodes, pods=(done, *rest)), levels=(MINIPOD, TOR))
    assert not outcome(result, "ml/g").placed  # two pods need n0 and the loose node


def test_kueue_preferred_topology_climbs_every_level_above() -> None:
    from gangplan.problem import build_problem

    nodes = tuple(node(f"n{m}{t}", f"mp{m}", f"t{m}{t}") for m in range(2) for t in range(2))
    pods = kueue_pods("climb", 2, 8, "kueue.x-k8s.io/podset-preferred-topology", TOR)
    problem = build_problem(Snapshot(nodes=nodes, pods=tuple(pods)), levels=(MINIPOD, TOR))
    topology = problem.gangs[0].topology
    assert topology is not None and topology.preferred == (0, 1) and topology.required == ()
    climb = outcome(planned(Snapshot(nodes=nodes, pods=tuple(pods)), levels=(MINIPOD, TOR)), "ml/climb")
    assert climb.placed and climb.spans == {MINIPOD: 1, TOR: 2}


def test_a_fully_running_group_with_terms_counts_as_placed_by_both_placers() -> None:
    nodes = (node("n0", "mp0", "t0"), node("n1", "mp1", "t1"))
    group, pods = gang("done", 2, 4, required=(MINIPOD,), running_on=("n0", "n0"))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))
    for solver in ("cp-sat", "greedy"):
        done = outcome(planned(snapshot, solver), "ml/done")
        assert done.placed and done.reason == "", solver


@pytest.mark.parametrize("solver", ["greedy", "cp-sat"])
def test_a_gang_with_min_member_0_keeps_its_pods_in_its_required_domain(solver: str) -> None:
    """minMember 0 places no quorum to hold a domain, so every pod is an extra: the first one
    placed chooses the rack, the others follow it or stay pending. Greedy once placed them one
    per tightest node, across racks."""
    nodes = tuple(Node(f"n{i}", {"rack": rack}, {"cpu": 8000, "nvidia.com/gpu": 2, "pods": 110})
                  for i, rack in enumerate(("r0", "r1", "r2", "r2")))
    required = {"kueue.x-k8s.io/podset-required-topology": "rack"}
    group = PodGroup("default", "sweep", PodGroupAPI.GODEL, min_member=0, creation_timestamp="2024-01-01T00:00:00Z")
    pods = tuple(Pod("default", f"sweep-{i}", labels={GROUP: "sweep"}, annotations=required,
                     containers=(Container("main", {"cpu": 1000, "nvidia.com/gpu": 2}),), priority=10) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    result = plan(snapshot, Options(solver=solver, levels=("rack",)))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    racks = {n.name: n.labels["rack"] for n in nodes}
    assert len({racks[p.node] for p in result.placements}) == 1
    if solver == "cp-sat":  # extra pods are objective 2: both fit in r2
        assert sorted(p.node for p in result.placements) == ["n2", "n3"]


# ----------------------------------------------------------------- kubernetes.io/hostname

HOSTNAME = "kubernetes.io/hostname"
SOLVERS_AND_LEVELS = [(solver, levels) for solver in ("cp-sat", "greedy") for levels in (None, (MINIPOD, TOR))]


@pytest.mark.parametrize(("solver", "levels"), SOLVERS_AND_LEVELS)
def test_a_hostname_term_puts_every_pod_of_the_group_on_one_node(solver: str, levels: tuple[str, ...] | None) -> None:
    """The node is the bottom level (DESIGN section 2), so a required term on it keeps the
    gang on one node, with or without levels above it (none named: a tree of nodes only).
    8 GPUs of 2-GPU pods fit only on n2; 4 GPUs on n0 or n1, never split across both."""
    nodes = (node("n0", "mp0", "t0", gpus=4), node("n1", "mp0", "t0", gpus=4), node("n2", "mp0", "t1", gpus=8))
    whole, whole_pods = gang("whole", 4, 2, required=(HOSTNAME,))
    pair, pair_pods = gang("pair", 2, 2, required=(HOSTNAME,))
    snapshot = Snapshot(nodes=nodes, pods=(*whole_pods, *pair_pods), pod_groups=(whole, pair))
    result = planned(snapshot, solver, levels)
    assert not result.warnings
    node_of = result.node_of
    assert {node_of[f"ml/whole-{i}"] for i in range(4)} == {"n2"}
    assert len({node_of["ml/pair-0"], node_of["ml/pair-1"]}) == 1 and node_of["ml/pair-0"] != "n2"
    assert outcome(result, "ml/whole").domains["node"] == ("n2",)


@pytest.mark.parametrize(("solver", "levels"), SOLVERS_AND_LEVELS)
def test_a_hostname_term_no_node_holds_names_the_best_node(solver: str, levels: tuple[str, ...] | None) -> None:
    nodes = (node("n0", "mp0", "t0", gpus=4), node("n1", "mp0", "t1", gpus=6))
    group, pods = gang("wide", 4, 2, required=(HOSTNAME,))  # 8 GPUs; the cluster has 10
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,)), solver, levels)
    wide = outcome(result, "ml/wide")
    assert not wide.placed and not result.placements
    assert wide.reason == f"required {HOSTNAME}: the best node (n1) holds 3 of 4 pods (nvidia.com/gpu)"


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_running_member_pins_the_node(solver: str) -> None:
    nodes = (node("n0", "mp0", "t0", gpus=8), node("n1", "mp0", "t0", gpus=8))
    group, pods = gang("pinned", 2, 4, required=(HOSTNAME,), running_on=("n0",))
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,)), solver)
    assert outcome(result, "ml/pinned").placed and result.node_of == {"ml/pinned-1": "n0"}
    busy = filler("busy", "n0", 4)  # n0 now full beside its member; n1 is empty but not its node
    result = planned(Snapshot(nodes=nodes, pods=(*pods, busy), pod_groups=(group,)), solver)
    assert not outcome(result, "ml/pinned").placed and not result.placements
    # Members already on two nodes break the term whatever is planned; the reason said "does
    # not fit beside the groups placed" (at any level: greedy alone would place the third pod).
    two_tors = (node("n0", "mp0", "t0"), node("n1", "mp0", "t1"))
    for key in (TOR, HOSTNAME):
        split, split_pods = gang("split", 3, 1, required=(key,), running_on=("n0", "n1"))
        result = planned(Snapshot(nodes=two_tors, pods=tuple(split_pods), pod_groups=(split,)), solver)
        assert outcome(result, "ml/split").reason == f"required {key}: running members already span 2 domains"


@pytest.mark.parametrize("order,expected", [("Ascending", "small"), ("Descending", "big")])
def test_sort_rules_rank_nodes_for_a_hostname_term(order: str, expected: str) -> None:
    nodes = (node("small", "mp0", "t0", gpus=4), node("big", "mp0", "t0", gpus=8))
    rule = SortRule("GPU", "Capacity", order)
    group, pods = gang("ranked", 2, 2, required=(HOSTNAME,), sort_rules=(rule,))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))
    for solver in ("cp-sat", "greedy"):
        ranked = outcome(planned(snapshot, solver), "ml/ranked")
        assert ranked.placed and ranked.domains["node"] == (expected,), solver


def test_kueue_hostname_annotations_are_terms_at_the_node_level() -> None:
    from gangplan.problem import build_problem

    nodes = tuple(node(f"n{m}{t}", f"mp{m}", f"t{m}{t}", gpus=4) for m in range(2) for t in range(2))
    required = kueue_pods("req", 2, 4, "kueue.x-k8s.io/podset-required-topology", HOSTNAME)
    result = planned(Snapshot(nodes=nodes, pods=tuple(required)))
    assert not outcome(result, "ml/req").placed  # 8 GPUs, 4 per node
    preferred = kueue_pods("pref", 2, 2, "kueue.x-k8s.io/podset-preferred-topology", HOSTNAME)
    problem = build_problem(Snapshot(nodes=nodes, pods=tuple(preferred)), levels=(MINIPOD, TOR))
    topology = problem.gangs[0].topology
    assert topology is not None and topology.preferred == (0, 1, 2) and topology.required == ()  # climbs
    pref = outcome(planned(Snapshot(nodes=nodes, pods=tuple(preferred)), levels=(MINIPOD, TOR)), "ml/pref")
    assert pref.placed and pref.spans == {MINIPOD: 1, TOR: 1, "node": 1}


def test_a_hostname_term_keeps_the_group_inside_the_topology() -> None:
    """Like any topology term: with levels, a node lacking their labels is not a candidate."""
    outside = Node("loose", {}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    nodes = (node("n0", "mp0", "t0", gpus=2), outside)
    group, pods = gang("host", 2, 2, required=(HOSTNAME,))
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,)), levels=(TOR,))
    assert not outcome(result, "ml/host").placed and not result.placements
    result = planned(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,)))  # no levels: nothing outside
    assert result.node_of == {"ml/host-0": "loose", "ml/host-1": "loose"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["", "p", "q"]), st.sampled_from(["", "x", "y", "z"]),
                       st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=12),
    st.lists(st.tuples(st.integers(-1, 1), st.booleans(), st.booleans()), min_size=1, max_size=3),
)
def test_domain_ranks_order_by_each_rule_then_path(
    labels: list[tuple[str, str, int, int]], rules: list[tuple[int, bool, bool]]
) -> None:
    # Every node's domain totals, rule by rule, then the domain path: restated per domain.
    nodes = [Node(f"n{i:02d}", {k: v for k, v in ((MINIPOD, m), (TOR, t)) if v}, {"cpu": 1})
             for i, (m, t, _, _) in enumerate(labels)]
    tree = build_tree(nodes, (MINIPOD, TOR))
    allocatable = np.array([[a, a + f] for _, _, a, f in labels], dtype=np.int64)
    free = np.array([[f, a] for _, _, a, f in labels], dtype=np.int64)
    sort = tuple(RankRule(c, available, descending) for c, available, descending in rules)
    domains: list[tuple[tuple[int, ...], tuple[str, ...]]]
    for level in range(len(tree.levels) + 1):
        if level == len(tree.levels):
            domains = [((n,), (node.name,)) for n, node in enumerate(nodes)]
        else:
            domains = [(d.nodes, d.path) for d in tree.domains[level]]

        def key(d: int) -> tuple:
            figures = []
            for rule in sort:
                if rule.column >= 0:
                    total = sum(int((free if rule.available else allocatable)[n, rule.column]) for n in domains[d][0])
                    figures.append(-total if rule.descending else total)
            return (*figures, domains[d][1])

        order = sorted(range(len(domains)), key=key)
        assert [order.index(d) for d in range(len(domains))] == list(rank_domains(tree, level, sort, allocatable, free))


@pytest.mark.parametrize("annotation, key", [
    ("podset-preferred-topology", "zone"),
    ("podset-required-topology", "kubernetes.io/hostname"),
    ("podset-preferred-topology", "kubernetes.io/hostname"),
])
def test_kueue_refuses_a_level_its_topology_lacks(tmp_path: Path, annotation: str, key: str) -> None:
    """Review 18 N F3: with a Topology object, Kueue's TAS admits no workload asking for a level
    the Topology does not list ("no requested topology level"), preferred or required, hostname
    included; gangplan ignored such a preferred term, and took hostname as the node level."""
    from typer.testing import CliRunner

    from gangplan.cli import app

    text = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: dc}\nspec: {levels: [{nodeLabel: block}, {nodeLabel: rack}]}\n"
        + "".join(
            f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{block: b1, rack: r{i}, zone: z1}}}}\n"
            "status: {allocatable: {cpu: '8', pods: '110'}}\n" for i in range(2)
        )
        + "".join(
            f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: k-{i}\n  namespace: ml\n  labels: {{kueue.x-k8s.io/pod-group-name: k}}\n"
            f"  annotations: {{kueue.x-k8s.io/pod-group-total-count: '2', kueue.x-k8s.io/{annotation}: {key}}}\n"
            "spec: {containers: [{name: c, image: x}]}\n" for i in range(2)
        )
    )
    path = tmp_path / "kueue.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["plan", str(path)])
    row = result.stdout.splitlines()[1]
    assert row.split()[3] == "Unplaced"
    assert row.endswith(f"Kueue admits no workload asking for {key}: not a level of any Topology (dc: block, rack)")
    listed = path.read_text().replace("{nodeLabel: rack}]", "{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}, {nodeLabel: zone}]")
    path.write_text(listed)
    assert CliRunner().invoke(app, ["plan", str(path)]).stdout.splitlines()[1].split()[3] == "Placed"


def test_kueue_refusal_spares_running_groups_and_levels_another_topology_lists(tmp_path: Path) -> None:
    """Review 18 P F1/F2: the refusal above hit a Kueue group already running (admitted before)
    and a level only a second Topology object lists (Kueue would admit it through its flavor's)."""
    from typer.testing import CliRunner

    from gangplan.cli import app

    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{rack: r{i}, zone: z1}}}}\nstatus: {{allocatable: {{cpu: '8', pods: '110'}}}}\n"
        for i in range(2)
    )
    pod = ("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ml\n  labels: {{kueue.x-k8s.io/pod-group-name: {group}}}\n"
           "  annotations: {{kueue.x-k8s.io/pod-group-total-count: '1', kueue.x-k8s.io/podset-preferred-topology: {key}}}\n"
           "spec: {{{bound}containers: [{{name: c, image: x, resources: {{requests: {{cpu: '1'}}}}}}]}}\n{status}")
    topology = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {{name: {name}}}\nspec: {{levels: [{{nodeLabel: {key}}}]}}\n"
    running = tmp_path / "running.yaml"
    running.write_text(topology.format(name="a-racks", key="rack") + nodes
                       + pod.format(name="run-0", group="run", key="kubernetes.io/hostname", bound="nodeName: n0, ", status="status: {phase: Running}\n")
                       + pod.format(name="new-0", group="new", key="kubernetes.io/hostname", bound="", status=""))
    result = CliRunner().invoke(app, ["check", str(running), "--group", "ml/run"])
    assert result.exit_code == 0, result.stdout
    assert "FAIL ml/new: Kueue admits no workload asking for kubernetes.io/hostname" in CliRunner().invoke(app, ["check", str(running)]).stdout
    two = tmp_path / "two.yaml"
    two.write_text(topology.format(name="a-racks", key="rack") + "---\n" + topology.format(name="b-zones", key="zone") + nodes
                   + pod.format(name="z-0", group="z", key="zone", bound="", status=""))
    assert CliRunner().invoke(app, ["check", str(two)]).exit_code == 0


def test_kueue_requests_gangplan_cannot_honour_are_said(tmp_path: Path) -> None:
    """Review 20 K F1, F3, F4: a Job's gated pods with a required rack (one PodSet to Kueue) are
    planned one by one; the unconstrained annotation keeps Kueue's pods on its Topology's
    nodes; a required level only another Topology lists names that Topology."""
    from typer.testing import CliRunner

    from gangplan.cli import app

    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, labels: {{rack: r{i}, zone: z1}}}}\nstatus: {{allocatable: {{cpu: '8', pods: '110'}}}}\n"
        for i in range(2)
    )
    topology = "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {{name: {name}}}\nspec: {{levels: [{{nodeLabel: {key}}}]}}\n"
    pod = ("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ml\n{owner}  annotations: {{{annotations}}}\n"
           "spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: '6'}}}}}}]}}\n")
    job = "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: j1, controller: true}]\n"
    rack = "kueue.x-k8s.io/podset-required-topology: rack"
    path = tmp_path / "job.yaml"
    path.write_text(topology.format(name="a-racks", key="rack") + nodes
                    + "".join(pod.format(name=f"train-{i}", owner=job, annotations=rack) for i in range(2)))
    result = CliRunner().invoke(app, ["plan", str(path)])
    assert result.exit_code == 0
    assert ("warning: Kueue topology requests on a controller's pods of no pod group (each is planned alone) is not "
            "modelled, so the plan may break it: pod ml/train-0, pod ml/train-1 ask for it") in result.stderr
    path.write_text(topology.format(name="a-racks", key="rack") + nodes + pod.format(name="alone", owner="", annotations=rack))
    assert "not modelled" not in CliRunner().invoke(app, ["plan", str(path)]).stderr  # a bare pod is its own PodSet
    free = "kueue.x-k8s.io/podset-unconstrained-topology: 'true'"
    path.write_text(topology.format(name="a-racks", key="rack") + nodes + pod.format(name="free", owner="", annotations=free))
    assert "not modelled" not in CliRunner().invoke(app, ["plan", str(path)]).stderr  # it is, since session 21
    group = "kueue.x-k8s.io/pod-group-total-count: '1', kueue.x-k8s.io/podset-required-topology: {key}"
    labelled = pod.replace("  annotations:", "  labels: {{kueue.x-k8s.io/pod-group-name: {name}}}\n  annotations:")
    path.write_text(topology.format(name="a-racks", key="rack") + topology.format(name="b-zones", key="zone") + nodes
                    + labelled.format(name="r", owner="", annotations=group.format(key="rack"))
                    + labelled.format(name="z", owner="", annotations=group.format(key="zone")))
    result = CliRunner().invoke(app, ["check", str(path)])
    assert ("FAIL ml/z: required zone: a level of Topology b-zones, but gangplan plans on one Topology's levels (rack), "
            "so it cannot be held") in result.stdout


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_the_reported_spans_and_sort_rank_count_a_domain_only_a_running_member_holds(solver: str) -> None:
    # tor ta's one node is full (the member and a filler), so the gang can add no pod there, yet
    # the member keeps it in ta: its two pending pods in tb make two tors, as the group says.
    # Largest tor first ranks tb 0, tc 1 and ta 2, so the plan's sort rank is 2.
    nodes = [node("a0", "mp0", "ta"), *(node(f"{t}{i}", "mp0", f"t{t}") for t in "bc" for i in range(2))]
    group, pods = gang("held", 3, 4, preferred=(TOR,), running_on=("a0",),
                       sort_rules=(SortRule("GPU", "Capacity", "Descending"),))
    snapshot = Snapshot(nodes=tuple(nodes), pods=(*pods, filler("f", "a0", 4)), pod_groups=(group,))
    result = planned(snapshot, solver)
    held = outcome(result, "ml/held")
    assert held.placed and held.spans == {TOR: 2}
    values = {o.name: o for o in result.solver.objective}
    spans, rank = values[f"preferred-spans@{TOR}"], values[f"sort-rank@{TOR}"]
    assert {p.node for p in result.placements} == {"b0", "b1"} or {p.node for p in result.placements} == {"b0"}
    assert (spans.value, rank.value) == (2, 2)
    assert spans.bound in (None, 2) and rank.bound in (None, 2)


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_no_pending_pod_of_any_shape_goes_where_a_term_cannot_hold(solver: str) -> None:
    """As above with pods of two shapes (two roles): a group that needs no pod stands, and a
    term no node can meet binds every pod still to place, of either shape, so none is placed."""
    nodes = (node("n0", "mp0", "t0"), node("n1", "mp1", "t1"))
    rack = "example.com/rack"  # no node carries it
    zero, zero_pods = gang("zero", 3, 1, required=(rack,))
    zero = replace(zero, min_member=0)
    zero_pods[2] = replace(zero_pods[2], containers=(Container("main", {"cpu": 2000, "nvidia.com/gpu": 2}),))
    result = planned(Snapshot(nodes=nodes, pods=tuple(zero_pods), pod_groups=(zero,)), solver)
    assert outcome(result, "ml/zero").placed and outcome(result, "ml/zero").scheduled == 0
    assert not result.placements


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
@pytest.mark.parametrize(("min_member", "placed"), [(1, True), (2, False)])
def test_a_running_member_holds_its_own_node_under_a_hostname_term_on_a_node_outside_the_topology(
    solver: str, min_member: int, placed: bool
) -> None:
    """'loose' lacks the tor label only another group's term makes a level. Its running member
    is still on one node, the domain a hostname term names (the verifier reads a node as its
    own hostname domain, labels or not): with its quorum met the group stands, its pending pod
    kept off the node outside the topology; short of it, the reason is the pod with no node,
    not a running member the term breaks (helper-78's finding: it read 'not placed: a running
    member is on a node outside the topology', and check failed on a running gang)."""
    loose = Node("loose", {HOSTNAME: "loose"}, {"cpu": 64000, "nvidia.com/gpu": 8, "pods": 110})
    nodes = (node("n0", "mp0", "t0", gpus=0), loose)
    by_tor, by_tor_pods = gang("by-tor", 1, 0, required=(TOR,))
    pinned, pinned_pods = gang("pinned", 2, 1, required=(HOSTNAME,), min_member=min_member, running_on=("loose",))
    result = planned(Snapshot(nodes=nodes, pods=(*by_tor_pods, *pinned_pods), pod_groups=(by_tor, pinned)), solver)
    held = outcome(result, "ml/pinned")
    assert held.placed is placed, held.reason
    assert "a running member is on a node outside the topology" not in held.reason
    assert not any(p.pod.startswith("ml/pinned") for p in result.placements)

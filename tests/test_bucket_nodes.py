"""What a bucket's nodes hold. Its room cuts (aggregate._room) allow every real packing of its
pods, checked against every count vector the nodes can really hold, and the whole-node cut
removes a relaxed solution the others allow. Where its pods do not all fit, the exact
packing keeps roles whole, higher priority and larger quorum demand first."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import replace
from itertools import product

import numpy as np
import pytest
from ortools.sat.python import cp_model

from gangplan import aggregate
from gangplan.aggregate import ROOM_SHAPES, BucketSolution, Meter, _Cuts, _pack_exactly, _room, expand, make_buckets, solve_buckets
from gangplan.model import Container, Node, Pod, PodAffinityTerm, PodGroup, PodGroupAPI, PodPhase, Snapshot
from gangplan.objective import Assignment, objective_terms
from gangplan.planner import Options, plan
from gangplan.problem import Problem, build_problem
from gangplan.stages import Tuning

from spies import recording

GPU = "nvidia.com/gpu"


def _snapshot(
    nodes: list[tuple[int, int, str]],
    roles: list[tuple[int, int, int, str]],
    busy: list[tuple[int, int, int]] = [],
    priorities: list[int] = [],
) -> Snapshot:
    """Nodes (cpu millicores, GPUs, kind), roles (cpu millicores, GPUs, pods, kind or "") each
    its own PodGroup (with its pods' priority), and running pods (node, cpu millicores, GPUs)."""
    pods = [
        Pod("kube-system", f"busy-{i}", containers=(Container("c", {"cpu": cpu, GPU: gpus}),),
            node_name=f"n{n}", phase=PodPhase.RUNNING)
        for i, (n, cpu, gpus) in enumerate(busy)
    ]
    groups = []
    for g, (cpu, gpus, count, kind) in enumerate(roles):
        groups.append(PodGroup("default", f"g{g}", PodGroupAPI.SCHEDULER_PLUGINS, min_member=count))
        for p in range(count):
            pods.append(
                Pod("default", f"g{g}-{p}", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"},
                    containers=(Container("main", {"cpu": cpu, GPU: gpus}),),
                    node_selector={"kind": kind} if kind else {},
                    priority=priorities[g] if priorities else None)
            )
    return Snapshot(
        nodes=tuple(
            Node(f"n{i}", {"tor": "t1", "kind": kind}, {"cpu": cpu, GPU: gpus, "pods": 110})
            for i, (cpu, gpus, kind) in enumerate(nodes)
        ),
        pods=tuple(pods),
        pod_groups=tuple(groups),
    )


def _holdable(problem: Problem) -> set[tuple[int, ...]]:
    """Every vector of pods per role the nodes hold at once (each pod on a node it may use),
    by brute force: what each node holds alone, summed over the nodes."""
    roles = problem.roles
    reachable = {tuple(0 for _ in roles)}
    for n in range(len(problem.nodes)):
        here = []
        for counts in product(*(range(role.count + 1) for role in roles)):
            if any(c and n not in role.nodes.tolist() for c, role in zip(counts, roles)):
                continue
            used = [sum(c * role.request[k] for c, role in zip(counts, roles)) for k in range(len(problem.resources))]
            if all(u <= f for u, f in zip(used, problem.free[n])):
                here.append(counts)
        reachable = {
            tuple(a + b for a, b in zip(total, add))
            for total in reachable for add in here
            if all(a + b <= role.count for a, b, role in zip(total, add, roles))
        }
    return reachable


def _cuts_allow(problem: Problem, counts: tuple[int, ...]) -> bool:
    model = cp_model.CpModel()
    variables = [model.new_int_var(c, c, f"x{r}") for r, c in enumerate(counts)]
    items = [(r, [var], role.count) for r, (var, role) in enumerate(zip(variables, problem.roles))]
    _room(_Cuts(model), problem, list(range(len(problem.nodes))), items, problem.resources.index(GPU))
    return cp_model.CpSolver().solve(model) == cp_model.OPTIMAL


def _random_tor(seed: int) -> Snapshot:
    """Whole-node pods beside pods with many cores per GPU, on nodes of two shapes, some partly
    taken, some pods confined to one kind of node: where totals per resource mislead most."""
    rng = random.Random(seed)
    nodes = [
        (rng.choice([16000, 32000, 48000]), rng.choice([4, 8]), rng.choice("ab")) for _ in range(rng.randint(2, 3))
    ]
    roles = [
        (rng.choice([2000, 6000, 12000, 24000]), rng.choice([1, 2, 3, 4, 6, 8]), rng.randint(1, 3),
         rng.choice(["", "", "a", "b"]))
        for _ in range(rng.randint(2, 3))
    ]
    busy = [(n, rng.choice([0, 2000, 8000]), rng.choice([0, 1, 2, 4])) for n in range(len(nodes)) if rng.random() < 0.5]
    return _snapshot(nodes, roles, [(n, cpu, min(gpus, nodes[n][1])) for n, cpu, gpus in busy])


@pytest.mark.parametrize("seed", range(120))
def test_the_room_cuts_allow_every_packing_the_nodes_really_hold(seed: int) -> None:
    problem = build_problem(_random_tor(seed))
    for counts in sorted(_holdable(problem)):
        assert _cuts_allow(problem, counts), counts


def _first_fit(problem: Problem) -> tuple[int, ...]:
    """Pods per role a plain first-fit puts on the nodes: one packing they really hold."""
    free = problem.matrix("free").copy()
    counts = []
    for role in problem.roles:
        request, placed = np.array(role.request, dtype=np.int64), 0
        for n in role.nodes.tolist():
            while placed < role.count and (free[n] >= request).all():
                free[n] -= request
                placed += 1
        counts.append(placed)
    return tuple(counts)


def test_pods_all_of_distinct_size_get_a_bounded_number_of_room_cuts_each_allowing_a_real_packing() -> None:
    # 600 single pods, no two alike (a role each): a cut per size was 600 cuts of up to 600
    # terms each, quadratic in the roles (5,000 such pods took 55 s and 6.9 GB).
    roles = [(1000 + 7 * i, 1 + i % 8, 1, "") for i in range(600)]
    problem = build_problem(_snapshot([(64000, 8, "a")] * 4, roles))
    model = cp_model.CpModel()
    items = [(r, [model.new_int_var(0, role.count, f"x{r}")], role.count) for r, role in enumerate(problem.roles)]
    _room(_Cuts(model), problem, list(range(len(problem.nodes))), items, problem.resources.index(GPU))
    sizes_and_shapes = 2 * ROOM_SHAPES
    per_resource = 2 * len(problem.resources)  # the totals, and the whole-node cuts
    assert len(model.proto.constraints) <= sizes_and_shapes + per_resource
    assert sum(len(c.linear.vars) for c in model.proto.constraints) <= (sizes_and_shapes + per_resource) * len(roles)
    packed = _first_fit(problem)
    assert sum(packed) >= 8  # the four nodes are not left empty
    assert _cuts_allow(problem, packed)


def test_a_node_holding_a_whole_node_pod_is_closed_to_the_pods_that_need_its_gpus() -> None:
    # Three 8-GPU nodes with 96 cores; 8-GPU pods with 48 cores; 1-GPU pods with 18 cores,
    # five to a node by their cores. Two whole-node pods leave one node: five small pods, not
    # the seven the totals allow (GPUs 23 of 24, cores 222 of 288, slots of 8 two of three).
    problem = build_problem(_snapshot([(96000, 8, "a")] * 3, [(48000, 8, 2, ""), (18000, 1, 7, "")]))
    holdable = _holdable(problem)
    assert (2, 5) in holdable and (2, 6) not in holdable and (1, 7) in holdable
    assert _cuts_allow(problem, (2, 5)) and _cuts_allow(problem, (1, 7))
    assert not _cuts_allow(problem, (2, 6))
    assert not _cuts_allow(problem, (2, 7))


def _kept_whole(problem: Problem) -> list[int]:
    """Pods per role the exact packing puts on all the nodes, when they cannot take them all."""
    counts: dict[tuple[int, int], int] = defaultdict(int)
    free = problem.matrix("free").copy()
    items = [(r, role.count) for r, role in enumerate(problem.roles)]
    _pack_exactly(problem, list(range(len(problem.nodes))), items, free, counts, 0, Meter())
    assert (free >= 0).all()
    return [sum(c for (r, _), c in counts.items() if r == k) for k in range(len(problem.roles))]


def test_a_bucket_that_does_not_pack_keeps_roles_whole_by_priority_then_demand() -> None:
    # One 8-GPU node. Two gangs of two 3-GPU pods: two of the four pods fit, and one of each
    # would leave both gangs short.
    same = build_problem(_snapshot([(64000, 8, "a")], [(4000, 3, 2, ""), (4000, 3, 2, "")]))
    assert sorted(_kept_whole(same)) == [0, 2]
    # One pod asking for the whole node and many cores, or two pods of 4 GPUs and few cores:
    # the larger quorum demand is kept, although the other is more pods.
    demand = build_problem(_snapshot([(64000, 8, "a")], [(32000, 8, 1, ""), (4000, 4, 2, "")]))
    assert _kept_whole(demand) == [1, 0]
    # A higher priority level is kept whatever the lower one asks for.
    levels = build_problem(
        _snapshot([(64000, 8, "a")], [(4000, 4, 2, ""), (32000, 8, 1, "")], priorities=[1000, 10])
    )
    assert _kept_whole(levels) == [2, 0]


def test_a_bucket_greedy_packing_fails_is_packed_exactly_only_within_the_budget() -> None:
    # Two nodes of 8 cores and 4 GPUs; three pods of 3 cores and 1 GPU, two of 1 core and 2
    # GPUs. They fit (2 + 1 and 1 + 1), but not largest first, tightest node first.
    problem = build_problem(_snapshot([(8000, 4, "a")] * 2, [(3000, 1, 3, ""), (1000, 2, 2, "")]))
    buckets = make_buckets(problem)
    assert len(buckets.nodes) == 1
    solution = BucketSolution({(0, 0): 3, (1, 0): 2}, frozenset({0, 1}))
    meter = Meter()
    exact = expand(problem, buckets, solution, meter=meter)
    assert meter.seconds > 0
    assert sorted(sum(c for (r, _), c in exact.counts.items() if r == k) for k in (0, 1)) == [2, 3]
    spent = Meter()
    spent.seconds = 1.0
    left_out = expand(problem, buckets, solution, meter=spent, stop=1.0)
    assert spent.seconds == 1.0 and not left_out.counts  # no search past the budget: the repair's pods


def test_pods_kept_apart_by_a_cap_on_their_role_are_expanded_one_to_a_node() -> None:
    """A bucket solution may count more pods of a role kept one to a node than the bucket's
    nodes could take once others took room (the cap is a relaxation there): expanding it puts
    at most one on each node, where filling a node's room would put several."""
    term = PodAffinityTerm({"scheduling.x-k8s.io/pod-group": "g0"}, (), ("default",), "kubernetes.io/hostname")
    snapshot = _snapshot([(64000, 8, "a")] * 2, [(1000, 1, 3, "")])
    snapshot = replace(snapshot, pods=tuple(replace(p, anti_affinity=(term,)) for p in snapshot.pods))
    problem = build_problem(snapshot)
    assert [role.apart for role in problem.roles] == ["podAntiAffinity default/scheduling.x-k8s.io/pod-group=g0"]
    buckets = make_buckets(problem)
    exact = expand(problem, buckets, BucketSolution({(0, 0): 3}, frozenset({0})))
    assert sorted(exact.counts.values()) == [1, 1]
    # A larger head beside them, the term one PodGroup's over two roles: one pod a node still,
    # when the greedy fill places them and when the exact packing does (the greedy fill fails).
    head = replace(snapshot.pods[0], name="g0-head", containers=(Container("main", {"cpu": 2000, GPU: 1}),))
    problem = build_problem(replace(snapshot, pods=(*snapshot.pods[1:], head)))
    assert [role.apart for role in problem.roles] == ["podAntiAffinity default/scheduling.x-k8s.io/pod-group=g0"] * 2
    for solution in ({(0, 0): 2, (1, 0): 1}, {(0, 0): 1, (1, 0): 1}):
        exact = expand(problem, make_buckets(problem), BucketSolution(solution, frozenset({0})))
        on_node: dict[int, int] = defaultdict(int)
        for (_, n), c in exact.counts.items():
            on_node[n] += c
        assert sorted(on_node.values()) == [1, 1]


@pytest.mark.parametrize(("racks", "placeable"), [(("r1", "r1", "r2", "r2"), False), (("r1", "r1", "r1", "r2"), True)])
def test_a_gang_required_in_one_rack_is_held_to_what_one_rack_of_its_zone_holds(
    racks: tuple[str, ...], placeable: bool
) -> None:
    """On zone buckets (the model one level up), a gang that must sit in one rack counts only
    what one rack of the zone holds, not the zone's total: three 1-GPU pods do not fit in a
    zone of two racks of two 1-GPU nodes, though the zone has four GPUs free."""
    snapshot = Snapshot(
        nodes=tuple(Node(f"n{i}", {"zone": "a", "rack": rack}, {"cpu": 4000, GPU: 1, "pods": 110}) for i, rack in enumerate(racks)),
        pods=tuple(
            Pod("default", f"g0-{p}", labels={"scheduling.x-k8s.io/pod-group": "g0"},
                containers=(Container("main", {"cpu": 1000, GPU: 1}),))
            for p in range(3)
        ),
        pod_groups=(PodGroup("default", "g0", PodGroupAPI.GODEL, min_member=3, required_topology=("rack",)),),
    )
    problem = build_problem(snapshot, levels=("zone", "rack"))
    model, count, placed, _ = _zone_model(problem)
    model.maximize(placed[0])
    solver = cp_model.CpSolver()
    assert solver.solve(model) == cp_model.OPTIMAL
    assert solver.boolean_value(placed[0]) is placeable


@pytest.mark.parametrize("rack_bound", [False, True])
def test_greedy_tries_the_nodes_a_coarser_model_preferred_then_any(rack_bound: bool) -> None:
    """A gang steered to nodes (where the model one level up put it) goes there when it fits,
    rather than where greedy alone would; when it does not fit there, wherever it fits, as
    without steering."""
    import numpy as np

    from gangplan.greedy import greedy

    racks = ("r1", "r1", "r2", "r2")
    gpus = (2, 2, 4, 4)
    snapshot = Snapshot(
        nodes=tuple(Node(f"n{i}", {"zone": "a", "rack": rack}, {"cpu": 8000, GPU: g, "pods": 110})
                    for i, (rack, g) in enumerate(zip(racks, gpus))),
        pods=tuple(
            Pod("default", f"{name}-{p}", labels={"scheduling.x-k8s.io/pod-group": name},
                containers=(Container("main", {"cpu": 1000, GPU: want}),))
            for name, want in (("small", 2), ("large", 4)) for p in range(2)
        ),
        pod_groups=tuple(PodGroup("default", name, PodGroupAPI.GODEL, min_member=2,
                                  required_topology=("rack",) if rack_bound else ()) for name in ("small", "large")),
    )
    problem = build_problem(snapshot, levels=("zone", "rack"))
    small, large = (next(g for g, spec in enumerate(problem.gangs) if spec.key == f"default/{n}") for n in ("small", "large"))

    def nodes_of(plan: Assignment, g: int) -> set[str]:
        return {problem.nodes[n].name for (r, n), c in plan.counts.items() if c and problem.roles[r].gang == g}

    order = [problem.gangs[small].job_group, problem.gangs[large].job_group]
    alone = greedy(problem, order)
    if rack_bound:  # the first rack by the default sort rule holds it
        assert nodes_of(alone, small) == {"n0", "n1"} and nodes_of(alone, large) == {"n2", "n3"}
        steered = greedy(problem, order, prefer={small: np.array([2, 3])})
        assert nodes_of(steered, small) == {"n2"} and nodes_of(steered, large) == set()
        # Steered to one node of a rack: that node, not the rack's node greedy alone takes first.
        assert nodes_of(greedy(problem, order, prefer={small: np.array([3])}), small) == {"n3"}
    else:  # the node that takes it whole, leaving the large gang short
        assert nodes_of(alone, small) == {"n2"} and nodes_of(alone, large) == set()
        steered = greedy(problem, order, prefer={small: np.array([0, 1])})
        assert nodes_of(steered, small) == {"n0", "n1"} and nodes_of(steered, large) == {"n2", "n3"}
    # No room for a 4-GPU pod on the nodes preferred: wherever it fits.
    both = greedy(problem, order, prefer={small: np.array([0, 1]), large: np.array([0, 1])})
    assert nodes_of(both, large) == {"n2", "n3"}


def test_guarded_steer_keeps_other_gangs_off_the_nodes_a_tight_gang_needs() -> None:
    """A 1-pod gang placed first goes, by greedy's tightest fit, onto one of the two 4-GPU
    nodes a 2-pod gang confined to them needs, and that gang is lost; kept off them, it takes
    the 8-GPU node and both are placed."""
    import numpy as np

    from gangplan.aggregate import _guard
    from gangplan.greedy import greedy

    problem = build_problem(_snapshot([(8000, 4, "x"), (8000, 4, "x"), (8000, 8, "y")], [(1000, 4, 1, ""), (1000, 4, 2, "x")]))
    other, tight = (next(g for g, spec in enumerate(problem.gangs) if spec.key == f"default/g{i}") for i in (0, 1))
    order = [problem.gangs[other].job_group, problem.gangs[tight].job_group]
    prefer = {tight: np.array([0, 1])}
    steered = greedy(problem, order, prefer)
    assert steered.placed == {problem.gangs[other].job_group}
    guarded = greedy(problem, order, _guard(problem, prefer, [tight]))
    assert guarded.placed == set(order)
    assert {n for (r, n), c in guarded.counts.items() if c and problem.roles[r].gang == other} == {2}


def test_a_room_cut_repeated_term_for_term_is_added_once_and_a_tighter_one_kept() -> None:
    # A node subset some roles are confined to often repeats its bucket's cut exactly; CP-SAT
    # would parse and presolve every copy (half the terms of the 2,048-node top-level model).
    model = cp_model.CpModel()
    x, y = model.new_int_var(0, 9, "x"), model.new_int_var(0, 9, "y")
    cuts = _Cuts(model)
    indices = np.array([x.index, y.index], dtype=np.int64)

    def add(coefficients: list[int], limit: int) -> None:
        cuts.add(indices, np.array(coefficients, dtype=np.int64), limit)

    add([1, 2], 5)
    add([1, 2], 5)
    assert len(model.proto.constraints) == 1
    add([1, 2], 4)
    add([1, 3], 5)
    assert len(model.proto.constraints) == 3
    model.maximize(x + y)
    solver = cp_model.CpSolver()
    assert solver.solve(model) == cp_model.OPTIMAL and solver.value(x) + 2 * solver.value(y) <= 4


def test_a_room_cut_is_written_as_cp_sats_own_less_or_equal_writes_it() -> None:
    # Written into the proto directly (six times faster at 8,192 nodes): the model must be the
    # one the LinearExpr route gave, terms by variable index and a variable given twice summed,
    # or presolve, and the plans, could change.
    ours, theirs = cp_model.CpModel(), cp_model.CpModel()
    for model in (ours, theirs):
        x, y, z = (model.new_int_var(0, 9, name) for name in "xyz")
    _Cuts(ours).add(np.array([2, 0, 2, 1], dtype=np.int64), np.array([3, 5, 4, 0], dtype=np.int64), 17)
    theirs.add(cp_model.LinearExpr.weighted_sum([z, x, z, y], [3, 5, 4, 0]) <= 17)
    assert str(ours.proto) == str(theirs.proto)
    assert list(ours.proto.constraints[0].linear.vars) == [0, 2]


def test_nodes_outside_the_tree_are_pooled_only_with_nodes_alike_for_every_role() -> None:
    """make_buckets' promise: outside the tree, a bucket is nodes alike for every role (same
    free room, same idleness, eligible for the same roles); inside it, one tor. Here n2..n7
    lack the tor label: n2, n3 are alike; n4, n5 are another kind (other roles may use them);
    n6 has more cores; n7 has a pod running."""
    kinds = ["a", "a", "a", "a", "b", "b", "a", "a"]
    cores = [8000] * 6 + [16000, 8000]
    nodes = tuple(
        Node(f"n{i}", {"kind": kind, **({"tor": "t1"} if i < 2 else {})}, {"cpu": cpu, GPU: 4, "pods": 110})
        for i, (kind, cpu) in enumerate(zip(kinds, cores))
    )
    busy = Pod("kube-system", "busy", containers=(Container("c", {"cpu": 1000}),), node_name="n7", phase=PodPhase.RUNNING)
    pods = [busy]
    for g, selector in enumerate(({"kind": "a"}, {})):
        pods.append(Pod("default", f"g{g}-0", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"},
                        containers=(Container("main", {"cpu": 1000, GPU: 1}),), node_selector=selector))
    groups = tuple(PodGroup("default", f"g{g}", PodGroupAPI.GODEL, min_member=1) for g in range(2))
    problem = build_problem(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=groups), levels=("tor",))
    assert problem.tree is not None and problem.tree.outside == frozenset(range(2, 8))
    buckets = make_buckets(problem)
    names = sorted(sorted(problem.nodes[n].name for n in nodes) for nodes in buckets.nodes)
    assert names == [["n0", "n1"], ["n2", "n3"], ["n4", "n5"], ["n6"], ["n7"]]


def _bucket_cuts_allow(problem: Problem, counts: tuple[int, ...]) -> bool:
    """Whether the one bucket's room cuts, with those on its confined node sets, admit ``counts``."""
    from gangplan.aggregate import _bucket_room, _caps, _Cuts, make_buckets

    buckets = make_buckets(problem)
    assert len(buckets.nodes) <= 1  # the tor (none when no role may use its nodes)
    caps = _caps(problem, buckets)
    model = cp_model.CpModel()
    count = {(r, b): model.new_int_var(counts[r], counts[r], f"x{r}") for (r, b) in caps}
    if any(counts[r] > caps.get((r, 0), 0) for r in range(len(counts))):
        return False
    _bucket_room(_Cuts(model), problem, buckets, count, caps, problem.resources.index(GPU), confined=True)
    return cp_model.CpSolver().solve(model) == cp_model.OPTIMAL


@pytest.mark.parametrize("seed", range(120))
def test_the_cuts_on_confined_node_sets_allow_every_packing_the_nodes_really_hold(seed: int) -> None:
    """The cuts repeated on each set of a tor's nodes some roles are confined to count only
    those roles: any other role's pods may sit on the tor's other nodes."""
    problem = build_problem(_random_tor(seed), levels=("tor",))
    for counts in sorted(_holdable(problem)):
        assert _bucket_cuts_allow(problem, counts), counts


def test_roles_confined_to_some_of_a_tors_nodes_share_only_those_nodes_room() -> None:
    """Two 4-GPU pods that may only use n0 (4 GPUs) do not fit together, though the tor has 8
    GPUs free: the cut on n0 alone says so; a pod that may use either node fits beside one."""
    problem = build_problem(
        _snapshot([(8000, 4, "a"), (8000, 4, "b")], [(1000, 4, 1, "a"), (1000, 4, 1, "a"), (1000, 4, 1, "")]), levels=("tor",)
    )
    holdable = _holdable(problem)
    assert (1, 1, 0) not in holdable and (1, 0, 1) in holdable and (0, 1, 1) in holdable
    assert not _bucket_cuts_allow(problem, (1, 1, 0))
    assert _bucket_cuts_allow(problem, (1, 0, 1)) and _bucket_cuts_allow(problem, (0, 1, 1))


def test_without_confined_cuts_every_bucket_still_gets_its_room_cuts() -> None:
    """Past CONFINED_CUTS_UP_TO the per-selector cuts are left out, not the buckets' own: two
    4-GPU pods of two roles do not both fit in the second rack's one 4-GPU node."""
    from gangplan.aggregate import _bucket_room, _caps, _Cuts

    nodes = tuple(Node(f"n{i}", {"rack": f"r{i}"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(2))
    pods = tuple(
        Pod("default", f"g{g}-0", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"}, containers=(Container("main", {"cpu": 1000, GPU: 4}),))
        for g in range(2)
    )
    groups = tuple(PodGroup("default", f"g{g}", PodGroupAPI.GODEL, min_member=1) for g in range(2))
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups), levels=("rack",))
    buckets = make_buckets(problem)
    assert len(buckets.nodes) == 2
    caps = _caps(problem, buckets)
    for full in range(2):
        model = cp_model.CpModel()
        count = {key: model.new_int_var(int(key[1] == full), int(key[1] == full), f"x{key}") for key in caps}
        _bucket_room(_Cuts(model), problem, buckets, count, caps, problem.resources.index(GPU), confined=False)
        assert cp_model.CpSolver().solve(model) == cp_model.INFEASIBLE, full


def test_without_gpus_the_scarcest_resource_is_the_one_most_asked_for_against_its_room() -> None:
    """``_scarce`` (module docstring: "the GPU resource (or the scarcest one)"): pods asking 6
    of 8 free cores and 1 GiB of 64 make cpu the scarce one, whatever the order of resources."""
    from gangplan.aggregate import _scarce

    snapshot = Snapshot(
        nodes=(Node("n0", {}, {"cpu": 8000, "memory": 64 * 2**30, "pods": 110}),),
        pods=(Pod("default", "p", containers=(Container("main", {"cpu": 6000, "memory": 2**30}),)),),
    )
    problem = build_problem(snapshot)
    assert problem.resources[_scarce(problem, GPU)] == "cpu"
    heavy = Snapshot(
        nodes=snapshot.nodes,
        pods=(Pod("default", "p", containers=(Container("main", {"cpu": 1000, "memory": 60 * 2**30}),)),),
    )
    problem = build_problem(heavy)
    assert problem.resources[_scarce(problem, GPU)] == "memory"


def test_a_bucket_solution_that_packs_comes_back_from_the_nodes_count_for_count() -> None:
    """``expand`` puts every pod of a bucket that packs on its nodes, and ``_in_buckets`` (the
    next stage's start, the neighbourhood's hinted buckets) counts them back per (role, bucket),
    summed over the bucket's nodes."""
    from gangplan.aggregate import BucketSolution, _in_buckets, expand

    problem = build_problem(_snapshot([(8000, 4, "a")] * 2, [(3000, 1, 3, ""), (1000, 2, 2, "")]))
    buckets = make_buckets(problem)
    solution = BucketSolution({(0, 0): 3, (1, 0): 2}, frozenset({0, 1}))
    on_nodes = expand(problem, buckets, solution)
    assert len({n for (_, n) in on_nodes.counts}) == 2  # each role over both nodes
    assert _in_buckets(on_nodes, buckets) == solution.counts


def test_a_gang_required_in_one_rack_has_its_pods_in_one_rack_bucket() -> None:
    """README: a required term allows one domain of its level. On rack buckets, a gang of two
    1-GPU pods required in one rack may have both in r1 or both in r2 (each rack holds two),
    never one in each."""
    from gangplan.aggregate import _caps, _required
    from gangplan.cpsat import add_quorum

    snapshot = Snapshot(
        nodes=tuple(Node(f"n{i}", {"rack": f"r{i // 2}"}, {"cpu": 4000, GPU: 1, "pods": 110}) for i in range(4)),
        pods=tuple(
            Pod("default", f"g0-{p}", labels={"scheduling.x-k8s.io/pod-group": "g0"}, containers=(Container("main", {"cpu": 1000, GPU: 1}),))
            for p in range(2)
        ),
        pod_groups=(PodGroup("default", "g0", PodGroupAPI.GODEL, min_member=2, required_topology=("rack",)),),
    )
    problem = build_problem(snapshot, levels=("rack",))
    racks = make_buckets(problem)
    caps = _caps(problem, racks)
    assert sorted(caps) == [(0, 0), (0, 1)]
    for split in ((2, 0), (0, 2), (1, 1)):
        model = cp_model.CpModel()
        count = {key: model.new_int_var(c, c, f"x{key}") for key, c in zip(sorted(caps), split)}
        placed = [model.new_bool_var("placed")]
        add_quorum(model, problem, placed, {0: list(count.values())})
        _required(model, problem, racks, count, caps, placed)
        assert (cp_model.CpSolver().solve(model) == cp_model.OPTIMAL) is (split != (1, 1)), split


def test_a_gang_required_in_one_rack_counts_in_its_zone_at_most_what_one_rack_holds() -> None:
    """On zone buckets, a gang of four 1-GPU pods (minMember 3) that must sit in one rack:
    the zone has four 1-GPU nodes, but its largest rack three, so the gang is placed with at
    most three pods there, not four, and not fewer."""
    snapshot = Snapshot(
        nodes=tuple(Node(f"n{i}", {"zone": "a", "rack": rack}, {"cpu": 4000, GPU: 1, "pods": 110}) for i, rack in enumerate(("r1", "r1", "r1", "r2"))),
        pods=tuple(
            Pod("default", f"g0-{p}", labels={"scheduling.x-k8s.io/pod-group": "g0"}, containers=(Container("main", {"cpu": 1000, GPU: 1}),))
            for p in range(4)
        ),
        pod_groups=(PodGroup("default", "g0", PodGroupAPI.GODEL, min_member=3, required_topology=("rack",)),),
    )
    problem = build_problem(snapshot, levels=("zone", "rack"))
    model, count, placed, caps = _zone_model(problem)
    assert list(caps.values()) == [4]
    model.maximize(sum(count.values()))
    solver = cp_model.CpSolver()
    assert solver.solve(model) == cp_model.OPTIMAL
    assert solver.boolean_value(placed[0]) and solver.objective_value == 3


def test_a_gang_required_in_one_rack_counts_at_most_what_one_rack_holds_over_all_its_roles() -> None:
    """As above with two kinds of pods: rack r1 (three 1-GPU nodes) holds three 1-GPU pods,
    rack r2 (one 2-GPU node) two of them or one 2-GPU pod. Each kind's best rack together
    would be four pods, but no one rack holds more than three of the gang's pods."""
    gpus = (1, 1, 1, 2)
    snapshot = Snapshot(
        nodes=tuple(Node(f"n{i}", {"zone": "a", "rack": "r1" if i < 3 else "r2"}, {"cpu": 4000, GPU: g, "pods": 110}) for i, g in enumerate(gpus)),
        pods=tuple(
            Pod("default", f"g0-{p}", labels={"scheduling.x-k8s.io/pod-group": "g0"}, containers=(Container("main", {"cpu": 1000, GPU: want}),))
            for p, want in enumerate((1, 1, 1, 2))
        ),
        pod_groups=(PodGroup("default", "g0", PodGroupAPI.GODEL, min_member=3, required_topology=("rack",)),),
    )
    problem = build_problem(snapshot, levels=("zone", "rack"))
    assert len(problem.roles) == 2
    model, count, placed, _ = _zone_model(problem)
    model.maximize(sum(count.values()))
    solver = cp_model.CpSolver()
    assert solver.solve(model) == cp_model.OPTIMAL
    assert solver.boolean_value(placed[0]) and solver.objective_value == 3


def _zone_model(
    problem: Problem,
) -> tuple[cp_model.CpModel, dict[tuple[int, int], cp_model.IntVar], list[cp_model.IntVar], dict[tuple[int, int], int]]:
    """Counts per (role, zone bucket) within their caps, each JobGroup's quorum and the cuts of
    required terms below the buckets, as the model one level up has them; and the caps."""
    from gangplan.aggregate import _caps, _required
    from gangplan.cpsat import add_quorum

    zones = make_buckets(problem, level=0)
    caps = _caps(problem, zones)
    model = cp_model.CpModel()
    count = {key: model.new_int_var(0, cap, f"x{key}") for key, cap in caps.items()}
    placed = [model.new_bool_var(f"placed[{j}]") for j in range(len(problem.job_groups))]
    add_quorum(model, problem, placed, {r: [v for (rr, _), v in count.items() if rr == r] for r in range(len(problem.roles))})
    _required(model, problem, zones, count, caps, placed)
    return model, count, placed, caps


def _zone_model_places(snapshot: Snapshot) -> bool:
    """Whether the model on zone buckets (racks below them) can place the snapshot's one JobGroup."""
    model, _, placed, _ = _zone_model(build_problem(snapshot, levels=("zone", "rack")))
    model.maximize(sum(placed))
    solver = cp_model.CpSolver()
    assert solver.solve(model) == cp_model.OPTIMAL
    return all(solver.boolean_value(p) for p in placed)


@pytest.mark.parametrize(("free", "placeable"), [((2, 1), True), ((1, 2), False)])
def test_a_gang_with_a_running_member_is_held_to_the_rack_it_runs_in(free: tuple[int, int], placeable: bool) -> None:
    """A required term's domain is pinned by the gang's running members: minMember 3, one pod
    running in rack r1, two pending that must join it there. With two 1-GPU nodes free in r1
    (and one in r2) they fit; with one free in r1 (and two in r2) they do not."""
    nodes, n = [], 0
    for rack, count in (("r1", free[0]), ("r2", free[1])):
        for _ in range(count + (rack == "r1")):
            nodes.append(Node(f"n{n}", {"zone": "a", "rack": rack}, {"cpu": 4000, GPU: 1, "pods": 110}))
            n += 1
    labels = {"scheduling.x-k8s.io/pod-group": "g0"}
    pods = [Pod("default", "g0-0", labels=labels, containers=(Container("main", {"cpu": 1000, GPU: 1}),), node_name="n0", phase=PodPhase.RUNNING)]
    pods += [Pod("default", f"g0-{p}", labels=labels, containers=(Container("main", {"cpu": 1000, GPU: 1}),)) for p in (1, 2)]
    group = PodGroup("default", "g0", PodGroupAPI.SCHEDULER_PLUGINS, min_member=3, required_topology=("rack",))
    assert _zone_model_places(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=(group,))) is placeable


@pytest.mark.parametrize(("r1", "placeable"), [(2, True), (1, False)])
def test_a_task_minimum_is_met_in_one_rack_when_that_rack_holds_exactly_it(r1: int, placeable: bool) -> None:
    """A Volcano gang required in one rack with task a at minimum 2 (1-GPU pods) and task b
    at 0: a rack of two 1-GPU nodes holds task a's minimum exactly; a rack of one does not."""
    racks = ["r1"] * r1 + ["r2"]
    nodes = tuple(Node(f"n{i}", {"zone": "a", "rack": rack}, {"cpu": 4000, GPU: 1, "pods": 110}) for i, rack in enumerate(racks))
    pods = tuple(
        Pod("ml", f"g0-{task}-{i}", annotations={"scheduling.k8s.io/group-name": "g0", "volcano.sh/task-spec": task},
            containers=(Container("main", {"cpu": 1000, **({GPU: 1} if task == "a" else {})}),))
        for task, count in (("a", 2), ("b", 1)) for i in range(count)
    )
    group = PodGroup("ml", "g0", PodGroupAPI.VOLCANO, min_member=2, queue="default", min_task_member={"a": 2, "b": 0},
                     required_topology=("rack",))
    assert _zone_model_places(Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))) is placeable


def test_pods_at_least_as_large_as_another_count_what_each_node_holds_of_the_smaller() -> None:
    """``_room``: pods at least as large as q in every resource number at most min_k
    floor(free_k / q_k) per node. A node of 8 cores and 1 GPU and one of 1 core and 8 GPUs
    hold one pod of 1 core and 1 GPU each, so two such pods or larger in all, though the
    totals (9 cores, 9 GPUs) allow nine."""
    problem = build_problem(_snapshot([(8000, 1, "a"), (1000, 8, "a")], [(1000, 1, 2, ""), (2000, 1, 2, "")]))
    holdable = _holdable(problem)
    assert (1, 1) in holdable and (2, 1) not in holdable and (1, 2) not in holdable
    assert _cuts_allow(problem, (1, 1)) and _cuts_allow(problem, (2, 0))
    assert not _cuts_allow(problem, (2, 1)) and not _cuts_allow(problem, (1, 2))


def test_gpu_slots_are_counted_per_node_not_over_the_buckets_total() -> None:
    """``_room`` cuts each node into slots of s GPUs (a pod asking q holds floor(q / s)): two
    3-GPU nodes have one 2-GPU slot each, not three over their six GPUs. So 2-GPU pods and
    3-GPU pods (incomparable in cores) number two at most, which no other cut says here."""
    problem = build_problem(_snapshot([(8000, 3, "a")] * 2, [(1000, 2, 3, ""), (500, 3, 1, "")]))
    holdable = _holdable(problem)
    assert (2, 0) in holdable and (1, 1) in holdable and (3, 0) not in holdable
    assert _cuts_allow(problem, (2, 0)) and _cuts_allow(problem, (1, 1))
    assert not _cuts_allow(problem, (3, 0))


def test_the_exact_packing_keeps_every_resource_of_a_node_the_pod_count_too() -> None:
    """A bucket packed exactly at node level keeps each node within all of its free room,
    ``pods`` included: a node that takes two pods holds one gang of two (the 2-GPU one, the
    larger quorum demand), though its GPUs and cores would take both gangs' four pods."""
    snapshot = Snapshot(
        nodes=(Node("n0", {"tor": "t1"}, {"cpu": 64000, GPU: 8, "pods": 2}),),
        pods=tuple(
            Pod("default", f"g{g}-{p}", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"},
                containers=(Container("main", {"cpu": 1000, GPU: g + 1}),))
            for g in range(2) for p in range(2)
        ),
        pod_groups=tuple(PodGroup("default", f"g{g}", PodGroupAPI.GODEL, min_member=2) for g in range(2)),
    )
    problem = build_problem(snapshot)
    assert problem.resources[-1] == "pods"
    assert _kept_whole(problem) == [0, 2]


def test_the_meter_adds_up_the_cost_of_every_small_solve() -> None:
    """``Meter``: the seconds of all the small solves, as the budget counts them (each at least
    its per-variable set-up), so a budget checked against it sees every one of them."""
    model = cp_model.CpModel()
    x = model.new_int_var(0, 5, "x")
    model.maximize(x)
    meter = Meter()
    meter.solve(model)
    once = meter.seconds
    meter.solve(model)
    assert 0 < once < meter.seconds


def test_the_bucket_model_counts_a_node_once_for_a_groups_roles_kept_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """A head and three workers one to a node, on a bucket of three nodes: each role's caps
    alone let the bucket take all four, which only a no-good learned from the nodes took back.
    Counted together, the bucket model proves the group does not fit without one."""
    term = PodAffinityTerm({"scheduling.x-k8s.io/pod-group": "g0"}, (), ("default",), "kubernetes.io/hostname")
    snapshot = _snapshot([(64000, 8, "a")] * 3, [(1000, 1, 3, "")])
    head = replace(snapshot.pods[0], name="g0-head", containers=(Container("main", {"cpu": 2000, GPU: 1}),))
    group = replace(snapshot.pod_groups[0], min_member=4)
    snapshot = replace(snapshot, pods=tuple(replace(p, anti_affinity=(term,)) for p in (*snapshot.pods, head)), pod_groups=(group,))
    problem = build_problem(snapshot)
    terms = objective_terms(problem)
    learned: list[list[tuple[int, list[tuple[int, int]]]]] = []
    monkeypatch.setattr(aggregate, "_no_goods", recording(aggregate._no_goods, learned))
    found = solve_buckets(problem, terms, Assignment({}, frozenset()), time_limit=10, workers=1, seed=0, tuning=Tuning())
    assert found.whole and found.solve.stages[0].bound == 0
    assert not any(learned)
    assert not plan(snapshot, Options(model="buckets")).placements


def test_the_model_one_level_up_counts_a_node_once_for_a_groups_roles_kept_apart() -> None:
    """The same on the zones (aggregate._upper, the bound at scale): a head and three workers,
    one to a node, confined to a zone of three nodes, cannot all be placed, and the bound says
    so; each role's caps alone bounded the group as placed."""
    term = PodAffinityTerm({"app": "ray"}, (), ("default",), "kubernetes.io/hostname")
    nodes = tuple(Node(f"n{i}", {"zone": f"z{i // 3}", "rack": f"r{i // 3}"}, {"cpu": 64000, GPU: 8, "pods": 110}) for i in range(6))
    pods = tuple(
        Pod("default", f"ray-{i}", labels={"scheduling.x-k8s.io/pod-group": "ray", "app": "ray"},
            containers=(Container("main", {"cpu": 1000 if i else 2000, GPU: 1}),), node_selector={"zone": "z0"}, anti_affinity=(term,))
        for i in range(4)
    )
    group = PodGroup("default", "ray", PodGroupAPI.SCHEDULER_PLUGINS, min_member=4)
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=(group,)), levels=("zone", "rack"))
    assert [role.count for role in problem.roles if role.apart] == [1, 3]
    stages, _, _ = aggregate._upper(
        problem, objective_terms(problem), Assignment({}, frozenset()), 0, 0, time_limit=5, workers=1, seed=0, reporter=None, tuning=Tuning()
    )
    assert stages[0].status == "OPTIMAL" and stages[0].bound == 0

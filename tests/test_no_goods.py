"""The bucket model learns a no-good only from a set of pods that really does not fit: checked
here against brute force over every way to put those pods on the bucket's nodes."""

from __future__ import annotations

import random
from itertools import product

import pytest
from ortools.sat.python import cp_model

from gangplan.aggregate import BucketSolution, Meter, _no_goods, _room, _splitter, _Cuts, make_buckets, solve_buckets
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, Snapshot
from gangplan.objective import Assignment, objective_terms
from gangplan.planner import Options, plan
from gangplan.problem import Problem, build_problem
from gangplan.stages import Tuning, stage_objective, stage_terms
from gangplan.verify import verify

GPU = "nvidia.com/gpu"


def _tor(seed: int) -> Snapshot:
    """One tor of a few nodes whose cores and GPUs do not go together, and gangs that may be
    confined to some of its nodes: where a bucket's totals mislead."""
    rng = random.Random(seed)
    nodes = tuple(
        Node(
            f"n{i}",
            {"tor": "t1", "kind": rng.choice("ab")},
            {"cpu": rng.choice([2000, 4000, 8000]), "nvidia.com/gpu": rng.choice([1, 2, 4]), "pods": 110},
        )
        for i in range(rng.randint(2, 4))
    )
    pods, groups = [], []
    for g in range(rng.randint(2, 3)):
        request = {"cpu": rng.choice([1000, 2000, 3000]), "nvidia.com/gpu": rng.choice([1, 2])}
        selector = {"kind": rng.choice("ab")} if rng.random() < 0.4 else {}
        groups.append(PodGroup("default", f"g{g}", PodGroupAPI.GODEL, min_member=1))
        for p in range(2):
            pods.append(
                Pod("default", f"g{g}-{p}", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"},
                    containers=(Container("main", request),), node_selector=selector)
            )
    return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))


def _fits_by_brute_force(problem: Problem, nodes: list[int], items: list[tuple[int, int]]) -> bool:
    """Every pod of ``items`` on one of ``nodes`` it may use, each node within its free room."""
    pods = [r for r, c in items for _ in range(c)]
    choices = [sorted(set(problem.roles[r].nodes.tolist()) & set(nodes)) for r in pods]
    for where in product(*choices):
        used = {n: [0] * len(problem.resources) for n in set(where)}
        for r, n in zip(pods, where):
            for k, want in enumerate(problem.roles[r].request):
                used[n][k] += want
        if all(u <= f for n, row in used.items() for u, f in zip(row, problem.free[n])):
            return True
    return False


@pytest.mark.parametrize("seed", range(60))
def test_a_no_good_is_learned_only_from_pods_that_do_not_fit(seed: int) -> None:
    problem = build_problem(_tor(seed))
    buckets = make_buckets(problem)
    rng = random.Random(seed)
    items_by_bucket = {
        b: [(r, rng.randint(1, problem.roles[r].count)) for r in range(len(problem.roles))
            if set(problem.roles[r].nodes.tolist()) & set(nodes)]
        for b, nodes in enumerate(buckets.nodes)
    }
    counts = {(r, b): c for b, items in items_by_bucket.items() for r, c in items}
    learned = dict(_no_goods(problem, buckets, BucketSolution(counts, frozenset()), _splitter(problem, buckets)))
    for b, items in items_by_bucket.items():
        if not items:
            continue
        nodes = buckets.nodes[b]
        assert (b in learned) == (not _fits_by_brute_force(problem, nodes, items))
        if b in learned:
            core = learned[b]
            assert set(core) <= set(items)
            assert not _fits_by_brute_force(problem, nodes, core)
            for dropped in core:  # a smallest such set: without any one of its roles it fits
                assert len(core) == 1 or _fits_by_brute_force(problem, nodes, [rc for rc in core if rc != dropped])


def test_learning_no_goods_keeps_within_the_time_limit() -> None:
    """Whether each bucket's pods fit at node level is a small search of up to 1 deterministic
    second, and a smallest no-good takes one per role: on 256 nodes with 100 JobGroups of two
    kinds of pods (tasks) each, learning took 53.7 of a 2-second limit's deterministic seconds,
    and 95 of 10 at 512 nodes. The limit counts it (deterministic time: the same on any machine)."""
    rng = random.Random(2)
    nodes = tuple(
        Node(f"n{i}", {"rack": f"r{i // 8}"}, {"cpu": rng.choice([5000, 7000, 9000]), "nvidia.com/gpu": rng.choice([0, 8]), "pods": 110})
        for i in range(256)
    )
    pods, groups = [], []
    for g in range(100):
        for m in range(2):
            name = f"g{g}m{m}"
            a, b = rng.randint(1, 6), rng.randint(1, 6)
            for task, count, request in (("a", a, {"cpu": 3000, "nvidia.com/gpu": 1}), ("b", b, {"cpu": 2000})):
                pods += [Pod("ml", f"{name}-{task}-{i}", annotations={"scheduling.k8s.io/group-name": name, "volcano.sh/task-spec": task},
                             containers=(Container("main", request),)) for i in range(count)]
            groups.append(PodGroup("ml", name, PodGroupAPI.VOLCANO, min_member=a + b, sub_group=f"s{g}", queue="default",
                                   min_task_member={"a": a, "b": 1} if m else {}))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    result = plan(snapshot, Options(time_limit=2.0))
    assert "node buckets" in result.solver.note  # the model that learns
    # Not a timed assertion: deterministic time is the same on any machine. The margin is CP-SAT's
    # own overrun of a limit, which it checks between steps.
    assert result.solver.deterministic_time <= 2.0 * 1.5
    assert verify(snapshot, result.placements, result.topology_levels()).ok


def _cores_apart() -> Snapshot:
    """Two nodes of 10 cores and 2 GPUs; gang x, two pods of 6 cores and 1 GPU, and gang y, one
    pod of 5 cores and 1 GPU. x takes a pod on each node, and y fits beside neither (11
    cores), yet every room cut of the bucket allows all three (17 of 20 cores, 3 of 4 GPUs)."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 10000, GPU: 2, "pods": 110}) for i in range(2))
    pods = [Pod("default", f"x-{i}", labels={"scheduling.x-k8s.io/pod-group": "x"},
                containers=(Container("main", {"cpu": 6000, GPU: 1}),)) for i in range(2)]
    pods.append(Pod("default", "y-0", labels={"scheduling.x-k8s.io/pod-group": "y"},
                    containers=(Container("main", {"cpu": 5000, GPU: 1}),)))
    groups = (PodGroup("default", "x", PodGroupAPI.GODEL, min_member=2), PodGroup("default", "y", PodGroupAPI.GODEL, min_member=1))
    return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=groups)


def test_a_bucket_that_does_not_pack_teaches_the_model_a_no_good_and_the_stage_is_proven() -> None:
    """README: when a JobGroup does not survive being put on nodes, the model learns a no-good
    per bucket that did not pack and the stage is solved again; no-goods cut off only what no
    real plan does. So the bucket path proves the optimum here (one of the two gangs), where
    the room cuts alone (and the cluster knapsack, which has the same cuts) would leave a gap."""
    snapshot = _cores_apart()
    problem = build_problem(snapshot)
    assert len(make_buckets(problem).nodes) == 1
    model = cp_model.CpModel()
    x_gang = next(g for g, spec in enumerate(problem.gangs) if spec.key == "default/x")
    x, y = (next(r for r, role in enumerate(problem.roles) if problem.gangs[role.gang].key == f"default/{g}") for g in "xy")
    fixed = {x: model.new_int_var(2, 2, "x"), y: model.new_int_var(1, 1, "y")}
    _room(_Cuts(model), problem, [0, 1], [(r, [var], problem.roles[r].count) for r, var in fixed.items()], problem.resources.index(GPU))
    assert cp_model.CpSolver().solve(model) == cp_model.OPTIMAL  # the cuts alone allow both
    exact = plan(snapshot, Options(model="nodes"))
    scaled = plan(snapshot, Options(model="buckets"))
    assert "node buckets" in scaled.solver.note
    assert verify(snapshot, scaled.placements, scaled.topology_levels()).ok
    assert sum(g.placed for g in exact.groups) == sum(g.placed for g in scaled.groups) == 1
    assert [o.value for o in scaled.solver.objective] == [o.value for o in exact.solver.objective][: len(scaled.solver.objective)]
    assert {g.key for g in scaled.groups if g.placed} == {"default/x"}  # the larger quorum demand
    assert scaled.solver.gap == 0.0
    # The bucket model itself, started from nothing: its first stage chooses both gangs, does
    # not pack, learns, and must still bound the real optimum (gang x) from above.
    terms = objective_terms(problem)
    outcome = solve_buckets(problem, terms, Assignment({}, frozenset()), time_limit=5, workers=1, seed=0, tuning=Tuning())
    first = stage_terms([t for t in terms if t.primary])[0]
    best = stage_objective(first, lambda t: sum(t.job_groups.get(problem.gangs[g].job_group, 0) for g in (x_gang,)))
    stage = outcome.solve.stages[0]
    assert stage.bound is not None and stage.bound >= best


class _Unsettled(Meter):
    """A meter whose searches after the first ``settled`` stop before they decide anything, as
    when the budget runs out."""

    __slots__ = ("settled",)

    def __init__(self, settled: int) -> None:
        super().__init__()
        self.settled = settled

    def solve(self, model: cp_model.CpModel, seed: int = 0, limit: float = 1.0) -> tuple[int, cp_model.CpSolver]:
        if self.settled > 0:
            self.settled -= 1
            return super().solve(model, seed, limit)
        return cp_model.UNKNOWN, cp_model.CpSolver()


def test_a_search_that_settles_nothing_learns_no_no_good_and_shrinks_none() -> None:
    """Module docstring: a no-good is a set of the bucket's (role, count) that does not fit, so
    every real plan has fewer pods of one of them there. A fit check that stopped undecided
    proves nothing: it must neither make a no-good of pods that fit, nor drop a role from one."""
    # Pods that fit, though not largest first onto the tightest node (test_bucket_nodes): two
    # nodes of 8 cores and 4 GPUs, three pods of 3 cores and 1 GPU, two of 1 core and 2 GPUs.
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(2))
    pods = tuple(
        Pod("default", f"g{g}-{p}", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"},
            containers=(Container("main", {"cpu": cpu, GPU: gpus}),))
        for g, (cpu, gpus, count) in enumerate(((3000, 1, 3), (1000, 2, 2))) for p in range(count)
    )
    groups = tuple(PodGroup("default", f"g{g}", PodGroupAPI.GODEL, min_member=c) for g, c in enumerate((3, 2)))
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups))
    buckets = make_buckets(problem)
    solution = BucketSolution({(0, 0): 3, (1, 0): 2}, frozenset({0, 1}))
    assert _no_goods(problem, buckets, solution, _splitter(problem, buckets), _Unsettled(0)) == []
    # Pods that do not fit: the whole set is a no-good; without the checks that would show a
    # smaller one does not fit either, it stays whole (y alone fits).
    problem = build_problem(_cores_apart())
    buckets = make_buckets(problem)
    items = {(r, 0): role.count for r, role in enumerate(problem.roles)}
    found = _no_goods(problem, buckets, BucketSolution(items, frozenset({0, 1})), _splitter(problem, buckets), _Unsettled(1))
    assert found == [(0, sorted((r, c) for (r, _), c in items.items()))]

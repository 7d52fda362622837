"""Putting a bucket solution on nodes: the JobGroups a bucket could not hold whole."""

from __future__ import annotations

from gangplan.greedy import repair, repair_by_worth
from gangplan.model import Container, Node, Pod, PodAffinityTerm, PodGroup, PodGroupAPI, PodPhase, Snapshot
from gangplan.objective import Assignment, objective_terms, score
from gangplan.planner import name_pods
from gangplan.problem import build_problem
from gangplan.verify import verify

GPU = "nvidia.com/gpu"


def _snapshot() -> Snapshot:
    """One 4-GPU node; ``small`` (one 2-GPU pod) is first in queue order, ``large`` (two 2-GPU
    pods, minMember 2) is worth more at the same priority."""
    nodes = (Node("n0", {}, {"cpu": 8000, GPU: 4, "pods": 110}),)
    pods, groups = [], []
    for name, count, created in [("small", 1, "00"), ("large", 2, "01")]:
        groups.append(PodGroup("default", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=count, creation_timestamp=f"2024-01-01T00:00:{created}Z"))
        pods += [Pod("default", f"{name}-{i}", labels={"scheduling.x-k8s.io/pod-group": name},
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),), priority=10) for i in range(count)]
    return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))


def test_a_short_jobgroup_worth_more_takes_the_room_a_lesser_one_held_tentatively() -> None:
    snapshot = _snapshot()
    problem = build_problem(snapshot)
    key = {jg.key: j for j, jg in enumerate(problem.job_groups)}
    small, large = key["default/small"], key["default/large"]
    role = {problem.gangs[g].key: problem.gangs[g].roles[0] for g in range(len(problem.gangs))}
    # What a bucket that could not hold everything left: one pod of each on the node.
    tentative = Assignment({(role["default/small"], 0): 1, (role["default/large"], 0): 1}, frozenset({small, large}))
    terms = objective_terms(problem)

    in_queue_order = repair(problem, tentative)
    assert in_queue_order.placed == {small}  # everything kept in place: no room to top up large

    by_worth = repair_by_worth(problem, tentative)
    assert by_worth.placed == {large}
    assert by_worth.counts == {(role["default/large"], 0): 2}
    assert score(terms, problem, by_worth) > score(terms, problem, in_queue_order)
    assert verify(snapshot, name_pods(problem, by_worth), ()).ok


def test_a_jobgroup_whose_domain_filled_up_is_placed_afresh_in_another() -> None:
    """``large`` must keep its pods in one rack. Its tentative pods share rack r0 with a
    higher-priority pod that leaves room for one of them; topping up may only use r0, so it
    is placed anew in r1 instead of being dropped (queue-order repair drops it)."""
    nodes = tuple(Node(f"n{i}", {"rack": f"r{i}"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(2))
    required = {"kueue.x-k8s.io/podset-required-topology": "rack"}
    pods, groups = [], []
    for name, count, priority, notes in [("top", 1, 100, {}), ("large", 2, 10, required)]:
        groups.append(PodGroup("default", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=count, creation_timestamp="2024-01-01T00:00:00Z"))
        pods += [Pod("default", f"{name}-{i}", labels={"scheduling.x-k8s.io/pod-group": name}, annotations=notes,
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),), priority=priority) for i in range(count)]
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    problem = build_problem(snapshot, levels=("rack",))
    key = {jg.key: j for j, jg in enumerate(problem.job_groups)}
    top, large = key["default/top"], key["default/large"]
    role = {problem.gangs[g].key: problem.gangs[g].roles[0] for g in range(len(problem.gangs))}
    topology = problem.gangs[problem.roles[role["default/large"]].gang].topology
    assert topology is not None and topology.required == (0,)
    # The bucket put both of large's pods in r0; only one found room there.
    tentative = Assignment({(role["default/top"], 0): 1, (role["default/large"], 0): 1}, frozenset({top, large}))
    assert repair(problem, tentative).placed == {top}
    fixed = repair_by_worth(problem, tentative)
    assert fixed.placed == {top, large}
    assert fixed.counts == {(role["default/top"], 0): 1, (role["default/large"], 1): 2}
    assert verify(snapshot, name_pods(problem, fixed), ("rack",)).ok


def test_a_jobgroup_left_without_pods_is_topped_up_inside_one_domain() -> None:
    """``gang`` (two 2-GPU pods, all in one rack) was chosen by the bucket model but none of
    its pods found room on nodes. Topped up from nothing, its first pod must choose the rack
    the second follows: every node has room for one pod, n0 and n1 come first but are alone
    in their racks, and only r2 (n2, n3) holds both. Seen at 8,192 nodes with --time-limit
    120, where both repairs put such a gang in two tors."""
    nodes = tuple(Node(f"n{i}", {"rack": rack}, {"cpu": 8000, GPU: 2, "pods": 110}) for i, rack in enumerate(("r0", "r1", "r2", "r2")))
    required = {"kueue.x-k8s.io/podset-required-topology": "rack"}
    group = PodGroup("default", "gang", PodGroupAPI.GODEL, min_member=2, creation_timestamp="2024-01-01T00:00:00Z")
    pods = tuple(Pod("default", f"gang-{i}", labels={"scheduling.x-k8s.io/pod-group": "gang"}, annotations=required,
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),), priority=10) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot, levels=("rack",))
    (j,) = range(len(problem.job_groups))
    (r,) = problem.gangs[0].roles
    tentative = Assignment({}, frozenset({j}))
    for fixed in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert fixed.placed == {j}
        assert fixed.counts == {(r, 2): 1, (r, 3): 1}
        assert verify(snapshot, name_pods(problem, fixed), ("rack",)).ok


def test_a_gang_a_bucket_spread_over_two_nodes_is_put_on_one() -> None:
    """Buckets are tors (or, with no levels, classes of alike nodes), so a gang required on
    one node can come out of a bucket on two: packing its two 2-GPU pods tightest first put
    one on n0 (whose CPU one pod uses up) and one on n1. Both repairs keep its quorum, and
    kept that split; now they place it afresh, on n1, the one node that holds both."""
    nodes = (Node("n0", {"rack": "r0"}, {"cpu": 1000, GPU: 2, "pods": 110}),
             Node("n1", {"rack": "r0"}, {"cpu": 8000, GPU: 4, "pods": 110}))
    group = PodGroup("default", "pair", PodGroupAPI.GODEL, min_member=2, required_topology=("kubernetes.io/hostname",))
    pods = tuple(Pod("default", f"pair-{i}", labels={"scheduling.x-k8s.io/pod-group": "pair"},
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),)) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    for levels in (("rack",), ()):
        problem = build_problem(snapshot, levels=levels)
        tentative = Assignment({(0, 0): 1, (0, 1): 1}, frozenset({0}))
        for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
            assert repaired.placed == {0} and repaired.counts == {(0, 1): 2}, levels
            assert verify(snapshot, name_pods(problem, repaired), levels).ok


def test_a_jobgroup_topped_up_only_in_part_is_dropped_with_every_pod() -> None:
    """minMember 3 of 2-GPU pods, one put on n0 by the bucket: topping it up finds room for one
    more (n1) and not a third, so the JobGroup is dropped, all or nothing: no pod of it stays,
    neither the tentative one nor the one the top-up placed."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 8000, GPU: 2, "pods": 110}) for i in range(2))
    group = PodGroup("default", "g", PodGroupAPI.SCHEDULER_PLUGINS, min_member=3)
    pods = tuple(Pod("default", f"g-{i}", labels={"scheduling.x-k8s.io/pod-group": "g"},
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),)) for i in range(3))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot)
    tentative = Assignment({(0, 0): 1}, frozenset({0}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == set() and not repaired.counts
        assert verify(snapshot, name_pods(problem, repaired), ()).ok


def test_a_jobgroup_one_member_of_which_cannot_be_topped_up_is_dropped_whole() -> None:
    """DESIGN section 3: the JobGroup is the unit of all-or-nothing. Volcano PodGroups ``a``
    (two 2-GPU pods) and ``b`` (one) share subGroup ``job``; the bucket put both of a's pods on
    the one 4-GPU node and none of b's, and no room is left to top b up. Both repairs drop the
    whole JobGroup, a's pods too: a's quorum alone does not make the JobGroup placed."""
    nodes = (Node("n0", {}, {"cpu": 8000, GPU: 4, "pods": 110}),)
    groups, pods = [], []
    for name, count in (("a", 2), ("b", 1)):
        groups.append(PodGroup("default", name, PodGroupAPI.VOLCANO, min_member=count, sub_group="job"))
        pods += [Pod("default", f"{name}-{i}", annotations={"scheduling.k8s.io/group-name": name},
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),)) for i in range(count)]
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    problem = build_problem(snapshot)
    (j,) = range(len(problem.job_groups))
    assert len(problem.job_groups[j].gangs) == 2
    a = next(problem.gangs[g].roles[0] for g in problem.job_groups[j].gangs if problem.gangs[g].key == "default/a")
    tentative = Assignment({(a, 0): 2}, frozenset({j}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == set() and not repaired.counts
        assert verify(snapshot, name_pods(problem, repaired), ()).ok


def test_a_jobgroup_placed_afresh_keeps_its_min_resources_pods_in_its_new_domain() -> None:
    """Required rack, minMember 2 and minResources 6 GPUs (three 2-GPU pods): the bucket split
    it over r0 and r1, so repair takes its pods back and places it afresh in r1, the rack that
    holds 6 GPUs; the pod minResources still needs follows the quorum into r1, not into r0,
    where its dropped pod had been."""
    nodes = (Node("n0", {"rack": "r0"}, {"cpu": 8000, GPU: 2, "pods": 110}),
             *(Node(f"n{i}", {"rack": "r1"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in (1, 2)))
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2, min_resources={GPU: 6}, required_topology=("rack",))
    pods = tuple(Pod("default", f"g-{i}", annotations={"scheduling.k8s.io/group-name": "g"},
                     containers=(Container("main", {"cpu": 1000, GPU: 2}),)) for i in range(4))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot, levels=("rack",))
    tentative = Assignment({(0, 0): 1, (0, 1): 1}, frozenset({0}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == {0} and {n for _, n in repaired.counts} <= {1, 2}
        assert verify(snapshot, name_pods(problem, repaired), ("rack",)).ok


def test_a_short_jobgroup_is_topped_up_with_its_smallest_pods() -> None:
    """minMember 2 of a 3-cpu pod (listed first) and two 1-cpu ones, one 1-cpu pod put by the
    bucket: the pod that tops it up is the other 1-cpu one, smallest first as a quorum is
    made (they fit most easily), not the 3-cpu pod that comes first in the gang."""
    nodes = (Node("n0", {}, {"cpu": 8000, "pods": 110}),)
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2)
    pods = tuple(Pod("default", f"g-{i}", annotations={"scheduling.k8s.io/group-name": "g"},
                     containers=(Container("main", {"cpu": cpu}),)) for i, cpu in enumerate((3000, 1000, 1000)))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot)
    small = next(r for r, role in enumerate(problem.roles) if role.count == 2)
    tentative = Assignment({(small, 0): 1}, frozenset({0}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == {0} and dict(repaired.counts) == {(small, 0): 2}
        assert verify(snapshot, name_pods(problem, repaired), ()).ok


def test_a_jobgroup_short_of_its_min_resources_is_topped_up_to_them() -> None:
    """minMember 1 and minResources 2 cpu (two 1-cpu pods), one pod put by the bucket: its
    member count is met and its minResources is not, so a top-up adds the second pod."""
    nodes = (Node("n0", {}, {"cpu": 8000, "pods": 110}),)
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=1, min_resources={"cpu": 2000})
    pods = tuple(Pod("default", f"g-{i}", annotations={"scheduling.k8s.io/group-name": "g"},
                     containers=(Container("main", {"cpu": 1000}),)) for i in range(3))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot)
    tentative = Assignment({(0, 0): 1}, frozenset({0}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == {0} and repaired.counts[(0, 0)] >= 2
        assert verify(snapshot, name_pods(problem, repaired), ()).ok


def test_a_jobgroup_short_of_a_task_minimum_is_topped_up_to_it() -> None:
    """minMember 2 and minTaskMember w: 1; the bucket put the two x pods: the member count is
    met and task w's minimum is not, so a top-up adds the w pod (Volcano checks each task's
    minimum when minMember is at least their sum, and the verifier checks it too)."""
    nodes = (Node("n0", {}, {"cpu": 8000, "pods": 110}),)
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2, min_task_member={"w": 1})
    pods = tuple(Pod("default", f"g-{task}-{i}", annotations={"scheduling.k8s.io/group-name": "g", "volcano.sh/task-spec": task},
                     containers=(Container("main", {"cpu": cpu}),)) for i, (task, cpu) in enumerate((("w", 2000), ("x", 1000), ("x", 1000))))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot)
    x = next(r for r, role in enumerate(problem.roles) if role.count == 2)
    tentative = Assignment({(x, 0): 2}, frozenset({0}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == {0} and sum(repaired.counts.values()) == 3
        assert verify(snapshot, name_pods(problem, repaired), ()).ok


def test_by_worth_a_jobgroup_keeps_every_tentative_pod_that_still_fits() -> None:
    """repair_by_worth's rule: each JobGroup keeps the tentative pods that still fit beside
    those before it. Alone, all of g's fit: its pods stay on n0 and n1 where the bucket put
    them, rather than being topped up anew where greedy would choose."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": cpu, "pods": 110}) for i, cpu in enumerate((8000, 8000, 1000)))
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2)
    pods = tuple(Pod("default", f"g-{i}", annotations={"scheduling.k8s.io/group-name": "g"},
                     containers=(Container("main", {"cpu": 1000}),)) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot)
    tentative = Assignment({(0, 0): 1, (0, 1): 1}, frozenset({0}))
    repaired = repair_by_worth(problem, tentative)
    assert repaired.placed == {0} and dict(repaired.counts) == dict(tentative.counts)
    assert verify(snapshot, name_pods(problem, repaired), ()).ok


def test_a_task_minimum_is_topped_up_inside_the_domain_the_jobgroup_holds() -> None:
    """Required rack, minMember 2 and minTaskMember w: 1; the bucket put the two x pods on n0
    (rack r0). The w pod that tops it up goes into r0 too, though n1 in r1 (already in use) is
    the tighter node for it: the top-up keeps inside the domains its required terms hold."""
    nodes = (Node("n0", {"rack": "r0"}, {"cpu": 8000, "pods": 110}), Node("n1", {"rack": "r1"}, {"cpu": 3000, "pods": 2}))
    busy = Pod("kube-system", "busy", containers=(Container("c", {"cpu": 1000}),), node_name="n1", phase=PodPhase.RUNNING)
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2, min_task_member={"w": 1}, required_topology=("rack",))
    pods = tuple(Pod("default", f"g-{task}-{i}", annotations={"scheduling.k8s.io/group-name": "g", "volcano.sh/task-spec": task},
                     containers=(Container("main", {"cpu": cpu}),)) for i, (task, cpu) in enumerate((("w", 2000), ("x", 1000), ("x", 1000))))
    snapshot = Snapshot(nodes=nodes, pods=(busy, *pods), pod_groups=(group,))
    problem = build_problem(snapshot, levels=("rack",))
    x = next(r for r, role in enumerate(problem.roles) if role.count == 2)
    tentative = Assignment({(x, 0): 2}, frozenset({0}))
    for repaired in (repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert repaired.placed == {0} and {n for _, n in repaired.counts} == {0}
        assert verify(snapshot, name_pods(problem, repaired), ("rack",)).ok


def test_a_bucket_solution_is_realised_by_the_better_of_its_two_repairs() -> None:
    """README: a bucket solution put on nodes is repaired two ways, JobGroups topped up in queue
    order or by worth, and the better plan on objective 1 is kept. The bucket (the one node)
    was given one pod of each group: in queue order ``small`` keeps the room, by worth
    ``large`` takes it, and ``large`` is worth more (4 of the 4 GPUs against 2)."""
    from gangplan.aggregate import BucketSolution, make_buckets, realise

    snapshot = _snapshot()
    problem = build_problem(snapshot)
    key = {jg.key: j for j, jg in enumerate(problem.job_groups)}
    role = {problem.gangs[g].key: problem.gangs[g].roles[0] for g in range(len(problem.gangs))}
    buckets = make_buckets(problem)
    assert [list(nodes) for nodes in buckets.nodes] == [[0]]
    solution = BucketSolution({(role["default/small"], 0): 1, (role["default/large"], 0): 1}, frozenset(key.values()))
    plan = realise(problem, objective_terms(problem), buckets, solution)
    assert plan.placed == {key["default/large"]}
    assert verify(snapshot, name_pods(problem, plan), ()).ok


def test_a_gang_kept_apart_placed_afresh_may_use_the_nodes_its_dropped_pods_held() -> None:
    """``ray``'s two pods, kept apart by a term of their own, must share a rack; the bucket
    solution put them on n0 (r0) and n2 (r1). Dropped and placed afresh, they go on n0 and n1:
    the nodes they were taken off hold none of theirs. Those nodes' counts were left at 0, not
    removed, and were read as taken, so neither rack had two nodes for it and it was dropped."""
    nodes = tuple(Node(f"n{i}", {"rack": f"r{i // 2}"}, {"cpu": 8000, "pods": 110}) for i in range(4))
    apart = PodAffinityTerm({"app": "ray"}, (), ("default",), "kubernetes.io/hostname")
    group = PodGroup("default", "ray", PodGroupAPI.SCHEDULER_PLUGINS, min_member=2, creation_timestamp="2024-01-01T00:00:00Z")
    pods = tuple(
        Pod("default", f"ray-{i}", labels={"scheduling.x-k8s.io/pod-group": "ray", "app": "ray"},
            annotations={"kueue.x-k8s.io/podset-required-topology": "rack"}, anti_affinity=(apart,),
            containers=(Container("main", {"cpu": 1000}),))
        for i in range(2)
    )
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot, levels=("rack",))
    (role,) = problem.roles
    assert role.apart and role.count == 2
    repaired = repair(problem, Assignment({(0, 0): 1, (0, 2): 1}, frozenset({0})))
    assert repaired.placed == {0}
    assert repaired.counts == {(0, 0): 1, (0, 1): 1}
    assert verify(snapshot, name_pods(problem, repaired), ("rack",)).ok

"""The greedy baseline's quorum: which pods make it, and where minResources follows it."""

from __future__ import annotations

import pytest

from gangplan import greedy as greedy_module
from gangplan.greedy import greedy, repair, repair_by_worth
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, Snapshot, Taint, Toleration
from gangplan.objective import Assignment
from gangplan.planner import name_pods
from gangplan.problem import build_problem
from gangplan.verify import verify

GROUP = "scheduling.k8s.io/group-name"



def test_a_gang_whose_first_domain_holds_its_quorum_but_not_min_resources_tries_the_next() -> None:
    """minMember 1 and minResources 2 cpu, all in one rack: the quorum is the 500m pod, and
    minResources needs the 2-cpu one beside it. Rack r0 (ranked first: least CPU) holds the
    small pod only; r1 holds both. Greedy, and both repairs of a gang left without pods, placed
    the quorum in r0, failed minResources there and gave the gang up."""
    nodes = (Node("a0", {"rack": "r0"}, {"cpu": 1000, "pods": 110}), Node("b0", {"rack": "r1"}, {"cpu": 4000, "pods": 110}))
    required = {"kueue.x-k8s.io/podset-required-topology": "rack"}
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=1, min_resources={"cpu": 2000})
    pods = tuple(Pod("default", f"g-{i}", annotations={"scheduling.k8s.io/group-name": "g", **required},
                     containers=(Container("main", {"cpu": cpu}),)) for i, cpu in enumerate((500, 2000)))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot, levels=("rack",))
    (j,) = range(len(problem.job_groups))
    tentative = Assignment({}, frozenset({j}))
    for fixed in (greedy(problem), greedy(problem, as_scheduler=True), repair(problem, tentative), repair_by_worth(problem, tentative)):
        assert fixed.placed == {j}
        assert {n for _, n in fixed.counts} == {1}
        assert verify(snapshot, name_pods(problem, fixed), ("rack",)).ok


def test_greedy_tries_only_the_domains_that_may_hold_min_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same gang on one node (a hostname term) among 64: every node holds its 500m
    quorum, only the last the 2-cpu pod minResources needs. Greedy tries that node alone,
    where trying each node in turn placed and took back the quorum 63 times."""
    nodes = tuple(Node(f"n{i:02}", {}, {"cpu": 1000 if i < 63 else 4000, "pods": 110}) for i in range(64))
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=1, min_resources={"cpu": 2000},
                     required_topology=("kubernetes.io/hostname",))
    pods = tuple(Pod("default", f"g-{i}", annotations={"scheduling.k8s.io/group-name": "g"},
                     containers=(Container("main", {"cpu": cpu}),)) for i, cpu in enumerate((500, 2000)))
    snapshot = Snapshot(nodes=nodes, pods=pods, pod_groups=(group,))
    problem = build_problem(snapshot)
    tries: list[int] = []
    meet = greedy_module._meet_min_resources

    def counted(state: greedy_module._State, g: int) -> bool:
        tries.append(g)
        return meet(state, g)

    monkeypatch.setattr(greedy_module, "_meet_min_resources", counted)
    placed = greedy(problem)
    assert placed.placed == {0} and {n for _, n in placed.counts} == {63}
    assert len(tries) == 1
    assert verify(snapshot, name_pods(problem, placed), ()).ok


def _alone(nodes: tuple[Node, ...], group: PodGroup, requests: list[tuple[str, dict[str, int]]], *running: Pod) -> Snapshot:
    pods = tuple(Pod("default", f"{group.name}-{task}-{i}", annotations={GROUP: group.name, "volcano.sh/task-spec": task},
                     containers=(Container("main", request),)) for i, (task, request) in enumerate(requests))
    return Snapshot(nodes=nodes, pods=pods + running, pod_groups=(group,))


GPU = "nvidia.com/gpu"
NODE = (Node("n0", {}, {"cpu": 8000, GPU: 4, "pods": 110}),)
QUORUMS = {
    # minResources 3 cpu: the quorum of the smallest pods (a and one b, 2.5 cpu and 4 GPUs)
    # leaves no GPU for the b that would reach it; two b pods (4 cpu) are the placement.
    "the pods minResources counts": _alone(
        NODE, PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2, min_resources={"cpu": 3000}),
        [("a", {"cpu": 500, GPU: 2}), ("b", {"cpu": 2000, GPU: 2}), ("b", {"cpu": 2000, GPU: 2})],
    ),
    # Volcano's task order: minResources (2.5 cpu) is what the job controller counts of the
    # first minMember pods, the launcher and a worker; the two small workers (1 cpu) leave no
    # room for the launcher beside them on a 2.8-cpu node.
    "the task order": _alone(
        (Node("n0", {}, {"cpu": 2800, "pods": 110}),),
        PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=2, min_resources={"cpu": 2500}),
        [("launcher", {"cpu": 2000}), ("worker", {"cpu": 500}), ("worker", {"cpu": 500}), ("worker", {"cpu": 500})],
    ),
    # minMember 1, no minResources: the smallest pod (500m and a GPU) fits on no node (the
    # GPU node's one cpu is taken), the other kind (2 cpu) does.
    "a kind that fits nowhere last": _alone(
        (Node("n0", {}, {"cpu": 8000, "pods": 110}), Node("n1", {}, {"cpu": 1000, GPU: 8, "pods": 110})),
        PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=1),
        [("a", {"cpu": 500, GPU: 1}), ("b", {"cpu": 2000})],
        Pod("kube-system", "busy", containers=(Container("c", {"cpu": 1000}),), node_name="n1", phase=PodPhase.RUNNING),
    ),
}


@pytest.mark.parametrize("case", list(QUORUMS))
def test_greedy_tries_another_quorum_when_the_smallest_pods_find_no_place(case: str) -> None:
    """Greedy made every quorum of the smallest pods; where that one has no place, the gang's
    own order and the largest share of minResources are tried. Found against exhaustive search
    on test_exhaustive_jobs' first 1,500 clusters, each JobGroup alone in both greedy modes:
    in 7,758 checks, a JobGroup that fits was left out 48 times before and 30 after, all but
    two of them JobGroups of several members, whose members greedy places one at a time."""
    snapshot = QUORUMS[case]
    problem = build_problem(snapshot)
    for placed in (greedy(problem), greedy(problem, as_scheduler=True)):
        assert placed.placed == {0}
        assert verify(snapshot, name_pods(problem, placed), ()).ok


def test_greedy_places_the_member_with_fewer_candidate_nodes_first_when_queue_order_fails() -> None:
    """A JobGroup of two one-pod members: ``any`` tolerates n1's taint, ``picky`` does not, so
    n0 (ranked first, the least CPU) is picky's one node. In queue order any took n0's last
    cpu and picky had none; the narrowest first, both fit."""
    taint = (Taint("gpu", "yes", "NoSchedule"),)
    nodes = (Node("n0", {}, {"cpu": 2000, "pods": 110}), Node("n1", {}, {"cpu": 4000, "pods": 110}, taints=taint))
    busy = Pod("kube-system", "busy", containers=(Container("c", {"cpu": 1000}),), node_name="n0", phase=PodPhase.RUNNING)
    groups, pods = [], [busy]
    for i, (name, tolerations) in enumerate((("any", (Toleration("gpu", "Exists", "", ""),)), ("picky", ()))):
        groups.append(PodGroup("default", name, PodGroupAPI.VOLCANO, min_member=1, sub_group="job", queue="default",
                               creation_timestamp=f"2024-01-01T00:00:0{i}Z"))
        pods.append(Pod("default", f"{name}-0", annotations={GROUP: name}, tolerations=tolerations,
                        containers=(Container("main", {"cpu": 1000}),)))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    problem = build_problem(snapshot)
    assert len(problem.job_groups) == 1
    for placed in (greedy(problem), greedy(problem, as_scheduler=True)):
        assert placed.placed == {0}
        assert verify(snapshot, name_pods(problem, placed), ()).ok


def test_a_gang_owing_only_min_resources_chooses_its_node_as_a_quorum_does() -> None:
    """minMember 0 but minResources 2.5 cpu, on one node (a hostname term): its first pod chose
    the node outside the NodeGroup search, n0 (1 cpu, ranked first), where the 2-cpu pod
    cannot follow; now a pod is its quorum and n1 is tried next."""
    nodes = (Node("n0", {}, {"cpu": 1000, "pods": 110}), Node("n1", {}, {"cpu": 4000, "pods": 110}))
    group = PodGroup("default", "g", PodGroupAPI.VOLCANO, min_member=0, min_resources={"cpu": 2500},
                     required_topology=("kubernetes.io/hostname",))
    snapshot = _alone(nodes, group, [("a", {"cpu": 500}), ("b", {"cpu": 2000})])
    problem = build_problem(snapshot)
    for placed in (greedy(problem), greedy(problem, as_scheduler=True)):
        assert placed.placed == {0} and {n for _, n in placed.counts} == {1}
        assert verify(snapshot, name_pods(problem, placed), ()).ok

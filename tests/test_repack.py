"""Placing one priority level exactly on nodes, the levels above held (gangplan.repack)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gangplan.greedy import greedy
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, Snapshot
from gangplan.objective import Assignment, objective_terms, score
from gangplan.planner import name_pods, outcomes
from gangplan.problem import build_problem
from gangplan.repack import repack_level
from gangplan.stages import SolveResult, Tuning
from gangplan.verify import verify

from test_exhaustive import exhaustive_objective, plan_objective, random_snapshot

GPU = "nvidia.com/gpu"


def test_the_level_is_rearranged_so_the_jobgroup_greedy_left_out_fits() -> None:
    """Two 2-GPU pods on two 4-GPU nodes, one each, leave no node for the 4-GPU pod; both
    on one node do. The top-priority pod on a third node stays where it is."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(3))
    pods, groups = [], []
    for name, gpus, priority in [("top", 4, 100), ("a", 2, 10), ("b", 2, 10), ("c", 4, 10)]:
        groups.append(PodGroup("default", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=1, creation_timestamp="2024-01-01T00:00:00Z"))
        pods.append(Pod("default", f"{name}-0", labels={"scheduling.x-k8s.io/pod-group": name},
                        containers=(Container("main", {"cpu": 1000, GPU: gpus}),), priority=priority))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    problem = build_problem(snapshot)
    j = {jg.key.split("/")[1]: i for i, jg in enumerate(problem.job_groups)}
    r = {problem.gangs[problem.roles[k].gang].key.split("/")[1]: k for k in range(len(problem.roles))}
    plan = Assignment({(r["top"], 2): 1, (r["a"], 0): 1, (r["b"], 1): 1}, frozenset({j["top"], j["a"], j["b"]}))
    terms = objective_terms(problem)
    repacked, seconds = repack_level(problem, terms, plan, frozenset({j["c"]}), 10, time_limit=5.0, tuning=Tuning())
    assert repacked is not None and seconds > 0
    assert repacked.placed == {j["top"], j["a"], j["b"], j["c"]}
    assert repacked.counts[r["top"], 2] == 1
    assert score(terms, problem, repacked) > score(terms, problem, plan)
    assert verify(snapshot, name_pods(problem, repacked), ()).ok


def _one_level(seed: int) -> Snapshot:
    snapshot = random_snapshot(seed)
    return replace(snapshot, pods=tuple(replace(p, priority=10) if p.priority is not None else p for p in snapshot.pods))


@pytest.mark.parametrize("seed", range(0, 200, 5))
def test_a_level_with_nothing_above_reaches_the_exhaustive_optimum(seed: int) -> None:
    snapshot = _one_level(seed)
    problem = build_problem(snapshot)
    terms = objective_terms(problem)
    start = greedy(problem)
    everyone = frozenset(j for j, jg in enumerate(problem.job_groups) if jg.feasible)
    repacked, _ = repack_level(problem, terms, start, everyone, 10, time_limit=10.0, tuning=Tuning())
    assert repacked is not None
    assert verify(snapshot, name_pods(problem, repacked), ()).ok
    mine = plan_objective(snapshot, outcomes(problem, repacked))
    assert mine == exhaustive_objective(snapshot)


TWO_LEVELS = [s for s in range(200) if len({p.priority for p in random_snapshot(s).pods if p.priority is not None}) > 1]


@pytest.mark.parametrize("seed", TWO_LEVELS[::3])
def test_the_levels_above_stay_where_the_plan_put_them(seed: int) -> None:
    snapshot = random_snapshot(seed)
    problem = build_problem(snapshot)
    levels = problem.priority_levels
    assert len(levels) == 2
    terms = objective_terms(problem)
    start = greedy(problem)
    lowest = levels[-1]
    everyone = frozenset(j for j, jg in enumerate(problem.job_groups) if jg.feasible)
    repacked, _ = repack_level(problem, terms, start, everyone, lowest, time_limit=10.0, tuning=Tuning())
    assert repacked is not None
    assert verify(snapshot, name_pods(problem, repacked), ()).ok
    above = {(r, n): c for (r, n), c in start.counts.items()
             if problem.job_groups[problem.gangs[problem.roles[r].gang].job_group].priority > lowest}
    assert {k: repacked.counts.get(k) for k in above} == above
    assert {j for j in repacked.placed if problem.job_groups[j].priority > lowest} == {
        j for j in start.placed if problem.job_groups[j].priority > lowest
    }
    assert score(terms, problem, repacked) >= score(terms, problem, start)


def test_a_jobgroup_alone_on_the_room_left() -> None:
    """The ordered policy's step: one JobGroup renumbered into a problem of its own, its
    candidates cut to the room the groups before it left, its Volcano tasks kept, and a node
    they opened no longer idle. Solved there, it is a real placement beside them."""
    import numpy as np

    from gangplan.cpsat import solve_cpsat
    from gangplan.problem import alone

    nodes = tuple(Node(f"n{i}", {}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(3))
    groups = [
        PodGroup("default", "first", PodGroupAPI.GODEL, min_member=1, creation_timestamp="2024-01-01T00:00:00Z"),
        PodGroup("default", "tf", PodGroupAPI.VOLCANO, min_member=3, min_task_member={"ps": 1, "worker": 2},
                 creation_timestamp="2024-01-02T00:00:00Z"),
    ]
    pods = [Pod("default", "first-0", labels={"scheduling.x-k8s.io/pod-group": "first"},
                containers=(Container("main", {"cpu": 1000, GPU: 4}),))]
    for task, count, gpus in [("ps", 1, 0), ("worker", 3, 2)]:
        pods += [Pod("default", f"tf-{task}-{i}",
                     annotations={"scheduling.k8s.io/group-name": "tf", "volcano.sh/task-spec": task},
                     containers=(Container("main", {"cpu": 1000, GPU: gpus}),)) for i in range(count)]
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    problem = build_problem(snapshot)
    first, tf = (next(j for j, jg in enumerate(problem.job_groups) if jg.key.endswith(name)) for name in ("first", "tf"))
    (r_first,) = problem.roles_of(first)
    held = {(r_first, 0): 1}  # the 4-GPU pod fills n0's GPUs
    free = problem.matrix("free").copy()
    free[0] -= np.array(problem.roles[r_first].request)

    sub, origin = alone(problem, tf, free, {0})
    assert len(sub.job_groups) == 1 and sub.job_groups[0].rank == 0
    assert sorted(origin) == sorted(problem.roles_of(tf))
    assert [sub.roles[i].request for i in range(len(origin))] == [problem.roles[r].request for r in origin]
    worker = next(i for i, r in enumerate(origin) if problem.roles[r].task == "worker")
    assert sub.roles[worker].nodes.tolist() == [1, 2]  # n0 has no GPU left
    assert sub.idle == (False, True, True)
    assert {t.task: sorted(origin[i] for i in t.roles) for t in sub.gangs[0].tasks} == {
        t.task: sorted(t.roles) for t in problem.gangs[problem.job_groups[tf].gangs[0]].tasks
    }

    result = solve_cpsat(sub, objective_terms(sub), Assignment({}, frozenset()), time_limit=5.0, tuning=Tuning())
    assert result.assignment is not None and result.assignment.placed == {0}
    counts = {**held, **{(origin[i], n): c for (i, n), c in result.assignment.counts.items()}}
    check = verify(snapshot, name_pods(problem, Assignment(counts, frozenset({first, tf}))))
    assert check.ok, check.violations
    assert sum(c for (r, _), c in counts.items() if r in origin) >= 3


def test_a_jobgroups_own_room_reads_as_tuples_and_is_not_kept_once_it_is_gone() -> None:
    """An ordered step's problem holds the room in arrays read as Problem's tuples (fd51631):
    equal to those tuples and, as a tuple is, not to a list; its matrix is that array, read
    only; and nothing keeps it once the problem is gone. The matrix cache kept every step's
    room until 64 entries (about 160 MB at 2,048 nodes and 300 resources), and cleared the
    whole problem's arrays with it."""
    import gc
    import weakref

    import numpy as np

    from gangplan.problem import alone

    nodes = tuple(Node(f"n{i}", {}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(3))
    groups = (PodGroup("default", "g", PodGroupAPI.SCHEDULER_PLUGINS, min_member=1),)
    pods = (Pod("default", "g-0", labels={"scheduling.x-k8s.io/pod-group": "g"},
                containers=(Container("main", {"cpu": 1000, GPU: 2}),)),)
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups))
    free = problem.matrix("free").copy()
    free[1] -= free[1]
    sub, _ = alone(problem, 0, free, {1})
    rows = tuple(map(tuple, free.tolist()))
    assert sub.free == rows and rows == sub.free and sub.idle == (True, False, True)
    as_lists: tuple[object, object] = (list(rows), [True, False, True])  # a tuple is no list, nor are they
    assert sub.free != as_lists[0] and sub.idle != as_lists[1]
    array = sub.matrix("free")
    assert array.tolist() == free.tolist() and not array.flags.writeable
    assert sub.matrix("idle").tolist() == [True, False, True]
    kept = weakref.ref(array)
    del sub, array
    gc.collect()
    assert kept() is None


def test_the_levels_below_are_completed_greedily_after_the_repack() -> None:
    """repack_level: the levels below the one placed again "are then completed greedily", and
    only the levels above are held. A CPU-only pod of priority 1 sits, in the plan given, on
    the node the level-10 JobGroups must share; after the repack it is placed again, beside
    them, and the 4-GPU pod the plan left out fits."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(3))
    pods, groups = [], []
    for name, gpus, priority in [("top", 4, 100), ("a", 2, 10), ("b", 2, 10), ("c", 4, 10), ("low", 0, 1)]:
        groups.append(PodGroup("default", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=1, creation_timestamp="2024-01-01T00:00:00Z"))
        pods.append(Pod("default", f"{name}-0", labels={"scheduling.x-k8s.io/pod-group": name},
                        containers=(Container("main", {"cpu": 7000 if name == "low" else 1000, GPU: gpus}),), priority=priority))
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups))
    problem = build_problem(snapshot)
    j = {jg.key.split("/")[1]: i for i, jg in enumerate(problem.job_groups)}
    r = {problem.gangs[problem.roles[k].gang].key.split("/")[1]: k for k in range(len(problem.roles))}
    plan = Assignment({(r["top"], 2): 1, (r["a"], 0): 1, (r["b"], 1): 1, (r["low"], 0): 1},
                      frozenset({j["top"], j["a"], j["b"], j["low"]}))
    terms = objective_terms(problem)
    repacked, _ = repack_level(problem, terms, plan, frozenset({j["c"]}), 10, time_limit=5.0, tuning=Tuning())
    assert repacked is not None and repacked.placed == {j["top"], j["a"], j["b"], j["c"], j["low"]}
    assert verify(snapshot, name_pods(problem, repacked), ()).ok


def test_a_repack_that_finds_nothing_still_counts_its_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """repack_level returns the plan, None "when the solver found nothing", "and the seconds
    spent, as the deterministic budget counts them": a search that found nothing still took them."""
    import gangplan.repack as repack

    snapshot = _one_level(5)
    problem = build_problem(snapshot)
    everyone = frozenset(j for j, jg in enumerate(problem.job_groups) if jg.feasible)
    monkeypatch.setattr(repack, "solve_cpsat", lambda *a, **k: SolveResult(None, "UNKNOWN", deterministic_time=1.25))
    assert repack_level(problem, objective_terms(problem), greedy(problem), everyone, 10, time_limit=5.0, tuning=Tuning()) == (None, 1.25)

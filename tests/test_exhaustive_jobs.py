"""Objective 1 against exhaustive search where a gang is more than one kind of pod: Volcano
PodGroups joined into JobGroups by subGroup (all reach their minimums or none is placed), with
minTaskMember and minResources, pods of two tasks asking different amounts, members already
Running or Succeeded, and some PodGroups required into one zone or rack or onto one node.
1,000 small random clusters; ``GANGPLAN_EXHAUSTIVE_SEEDS=10000`` makes it a long run (about 3.5
minutes on a 2-core machine).

The search shares nothing with the planner: for every set of JobGroups, best first by objective 1,
it tries each smallest choice of pending pods per PodGroup that meets its minimums, and every
way to put those pods on nodes. The same search holds `--policy ordered` to its rule: a JobGroup
it leaves out does not fit beside the pods placed before its turn.
"""

from __future__ import annotations

import os
import random
from fractions import Fraction
from itertools import combinations, product
from typing import Callable, Mapping, NamedTuple

import pytest

import gangplan.planner as planner
from gangplan.model import (
    Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, PriorityClass, Snapshot, Taint, Toleration,
)
from gangplan.plan import Plan
from gangplan.objective import objective_terms
from gangplan.planner import Options, plan
from gangplan.problem import build_problem
from gangplan.verify import verify
from test_exhaustive import _eligible, _request as _requests  # the same node filters and pod requests

RESOURCES = ("cpu", "nvidia.com/gpu")
GROUP = "scheduling.k8s.io/group-name"
TASK = "volcano.sh/task-spec"
CLASSES = {"high": 100, "low": 10}
HOSTNAME = "kubernetes.io/hostname"
SEEDS = int(os.environ.get("GANGPLAN_EXHAUSTIVE_SEEDS", "1000"))


def random_jobs(seed: int) -> Snapshot:
    """Topology (a rack label on most nodes, required terms on some PodGroups) is drawn from a
    stream of its own, so the rest of a seed's cluster is the same with it or without."""
    rng, topology = random.Random(50_000 + seed), random.Random(90_000 + seed)
    nodes = []
    for i in range(rng.randint(1, 4)):
        labels = {"zone": rng.choice("ab")}
        if topology.random() < 0.85:
            labels["rack"] = f"{labels['zone']}-{topology.choice(['r1', 'r2'])}"  # racks nest in zones
        nodes.append(Node(
            f"n{i}", labels,
            {"cpu": rng.choice([2000, 4000, 8000]), "nvidia.com/gpu": rng.choice([0, 2, 4]), "pods": 110},
            taints=(Taint("gpu", "yes", "NoSchedule"),) if rng.random() < 0.2 else (),
            unschedulable=rng.random() < 0.1,
        ))
    pods: list[Pod] = []
    groups: list[PodGroup] = []
    for g in range(rng.randint(1, 5)):
        name, tasks = f"g{g}", ["a", "b"] if rng.random() < 0.6 else ["a"]
        counts = {task: rng.randint(1, 2) for task in tasks}
        requests = {
            task: {"cpu": rng.choice([500, 1000, 2000]), "nvidia.com/gpu": rng.choice([0, 0, 1, 2])} for task in tasks
        }
        selector = {"zone": rng.choice("ab")} if rng.random() < 0.2 else {}
        tolerations = (Toleration("gpu", "Equal", "yes", "NoSchedule"),) if rng.random() < 0.5 else ()
        priority = rng.choice(list(CLASSES))
        size = sum(counts.values())
        min_task = {task: rng.randint(0, counts[task]) for task in tasks} if rng.random() < 0.5 else {}
        cpu = sum(counts[t] * requests[t]["cpu"] for t in tasks)
        min_resources = {"cpu": 500 * rng.randint(1, cpu // 500)} if rng.random() < 0.3 else {}
        groups.append(PodGroup(
            "ml", name, PodGroupAPI.VOLCANO, min_member=rng.randint(0 if rng.random() < 0.1 else 1, size),
            min_resources=min_resources, min_task_member=min_task, queue="default", priority_class_name=priority,
            sub_group=rng.choice(["", "", "s1", "s2"]), creation_timestamp=f"2024-01-01T00:00:0{g}Z",
            required_topology=topology.choice([(), (), (), (), (), (), ("zone",), ("rack",), ("rack",), (HOSTNAME,)]),
        ))
        for task in tasks:
            for i in range(counts[task]):
                bound = nodes and rng.random() < 0.15
                pods.append(Pod(
                    "ml", f"{name}-{task}-{i}", annotations={GROUP: name, TASK: task},
                    containers=(Container("main", {k: v for k, v in requests[task].items() if v}),),
                    node_selector=selector, tolerations=tolerations, priority=CLASSES[priority],
                    node_name=rng.choice(nodes).name if bound else None,
                    phase=rng.choice([PodPhase.RUNNING, PodPhase.SUCCEEDED]) if bound else PodPhase.PENDING,
                ))
    for i in range(rng.randint(0, 2)):
        pods.append(Pod("kube-system", f"busy-{i}", containers=(Container("c", {"cpu": rng.choice([500, 1000])}),),
                        node_name=rng.choice(nodes).name, phase=PodPhase.RUNNING))
    return Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=tuple(groups),
                    priority_classes=tuple(PriorityClass(n, v) for n, v in CLASSES.items()))


def _levels(snapshot: Snapshot) -> tuple[str, ...]:
    """The keys terms name that nodes carry, largest first; a label no node carries is no
    level (with none, every node is inside a topology of nodes)."""
    named = {k for g in snapshot.pod_groups for k in g.required_topology}
    return tuple(k for k in ("zone", "rack") if k in named and any(k in n.labels for n in snapshot.nodes))


def _path(key: str, node: Node, levels: tuple[str, ...]) -> tuple[str, ...] | None:
    """The domain of ``key`` a node's labels name (the values down to it), if it has them."""
    down = levels[: levels.index(key) + 1]
    return tuple(node.labels[k] for k in down) if all(k in node.labels for k in down) else None


def _domain(key: str, node: Node, levels: tuple[str, ...]) -> object:
    """The domain a new pod on ``node`` puts its group in under a required term on ``key``;
    None where none holds it: a node lacking a level's label (outside the topology), or a key
    that is no level."""
    if any(k not in node.labels for k in levels):
        return None
    return node.name if key == HOSTNAME else _path(key, node, levels) if key in levels else None


def _held(key: str, node: Node, levels: tuple[str, ...], nodes: tuple[Node, ...]) -> object:
    """The domain a running member on ``node`` holds its group to: on a node outside the
    topology, the one its labels name down to ``key`` if a node inside has it (README), and
    under a hostname term the node itself."""
    inside = _domain(key, node, levels)
    if key == HOSTNAME:
        return node.name
    if inside is not None or key not in levels:
        return inside
    path = _path(key, node, levels)
    return path if path is not None and any(_domain(key, n, levels) == path for n in nodes) else None


def _members(snapshot: Snapshot, group: PodGroup) -> list[Pod]:
    return [p for p in snapshot.pods if p.annotations.get(GROUP) == group.name]


def _node_of(pod: Pod) -> str:
    """The node of a running pod: random_jobs puts each on one."""
    assert pod.node_name is not None, pod.key
    return pod.node_name


def _job_groups(snapshot: Snapshot) -> list[tuple[str, list[PodGroup]]]:
    found: dict[str, list[PodGroup]] = {}
    for group in snapshot.pod_groups:
        found.setdefault(group.sub_group or f"pg:{group.name}", []).append(group)
    return sorted(found.items())


def _class(group: PodGroup) -> int:
    """The value of its priority class: random_jobs gives every PodGroup one."""
    assert group.priority_class_name is not None, group.key
    return CLASSES[group.priority_class_name]


def _priority(groups: list[PodGroup]) -> int:
    return max(_class(g) for g in groups)


def _queue_order(groups: list[PodGroup]) -> tuple:
    """A JobGroup queues as its first member does: priority, then creation time, then name."""
    return min((-_class(g), g.creation_timestamp, g.name) for g in groups)


def _demand(snapshot: Snapshot, group: PodGroup) -> Fraction:
    """DESIGN's quorum demand: its first minMember members (running, then succeeded, then
    pending, each by name), each resource's requests over the usable nodes' allocatable."""
    usable = [n for n in snapshot.nodes if n.ready and not n.unschedulable]
    total = {r: sum(n.allocatable.get(r, 0) for n in usable) for r in RESOURCES}
    members = _members(snapshot, group)
    ordered = [p for phase in (PodPhase.RUNNING, PodPhase.SUCCEEDED, PodPhase.PENDING)
               for p in sorted((m for m in members if m.phase is phase), key=lambda p: p.name)]
    return sum((Fraction(p.containers[0].requests.get(r, 0), total[r])
                for p in ordered[: group.min_member] for r in RESOURCES if total[r]), Fraction(0))


def _smallest_choices(snapshot: Snapshot, group: PodGroup) -> list[list[Pod]]:
    """Each smallest set of pending pods (as counts per task) whose placing meets minMember,
    the task minimums Volcano checks, and minResources; pods of a task are alike."""
    members = _members(snapshot, group)
    counted = [p for p in members if p.phase in (PodPhase.RUNNING, PodPhase.SUCCEEDED)]
    pending = {t: sorted((p for p in members if p.phase is PodPhase.PENDING and p.annotations[TASK] == t),
                         key=lambda p: p.name) for t in sorted({p.annotations[TASK] for p in members})}
    tasks = list(pending)
    check_tasks = group.min_member >= sum(group.min_task_member.values())

    def meets(counts: tuple[int, ...]) -> bool:
        chosen = counted + [p for t, k in zip(tasks, counts) for p in pending[t][:k]]
        if len(chosen) < group.min_member:
            return False
        if check_tasks and any(sum(1 for p in chosen if p.annotations[TASK] == t) < m for t, m in group.min_task_member.items()):
            return False
        return all(sum(p.containers[0].requests.get(r, 0) for p in chosen) >= v for r, v in group.min_resources.items())

    good = [c for c in product(*(range(len(pending[t]) + 1) for t in tasks)) if meets(c)]
    smallest = [c for c in good if not any(o != c and all(a <= b for a, b in zip(o, c)) for o in good)]
    return [[p for t, k in zip(tasks, c) for p in pending[t][:k]] for c in smallest]


Score = list[tuple[int, Fraction, int, int]]  # per priority level, highest first: demand, JobGroups, tie-break


class Search(NamedTuple):
    best: Score  # the best objective 1
    scored: Callable[[set[str]], Score]  # a plan's objective 1, by the PodGroups it places
    fits: Callable[[tuple[int, ...]], bool]  # whether these JobGroups (indices into job_groups) fit together
    job_groups: list[tuple[str, list[PodGroup]]]
    queue: list[int]  # job_groups in queue order


def exhaustive_jobs(snapshot: Snapshot, beside: Mapping[str, str] | None = None) -> Search:
    """``beside``: pods (by name) put on nodes before, whose room is taken."""
    free = {n.name: dict(n.allocatable) for n in snapshot.nodes}
    for pod in snapshot.pods:
        node = pod.node_name if pod.phase is PodPhase.RUNNING else (beside or {}).get(pod.name)
        if node:
            for k, v in _requests(pod).items():
                free[node][k] -= v
    levels = _levels(snapshot)
    nodes = {n.name: n for n in snapshot.nodes}
    required = {g.name: g.required_topology[0] for g in snapshot.pod_groups if g.required_topology}
    pinned: dict[str, set] = {}  # the domains its running members hold; Succeeded ones hold none
    for group in snapshot.pod_groups:
        if group.name in required:
            pinned[group.name] = {_held(required[group.name], nodes[_node_of(p)], levels, snapshot.nodes)
                                  for p in _members(snapshot, group) if p.phase is PodPhase.RUNNING}
    info = []  # (priority, demand, [choices per PodGroup], queue order)
    job_groups = _job_groups(snapshot)
    for _, groups in job_groups:
        info.append((
            _priority(groups),
            sum((_demand(snapshot, g) for g in groups), Fraction(0)),
            [_smallest_choices(snapshot, g) for g in groups],
            _queue_order(groups),
        ))
    priorities = sorted({i[0] for i in info}, reverse=True)
    weight: dict[int, int] = {}  # README: among equal plans, earlier in queue order weighs more, linearly

    def key(chosen: tuple[int, ...]) -> list[tuple[int, Fraction, int, int]]:
        return [(level, sum((info[c][1] for c in chosen if info[c][0] == level), Fraction(0)),
                 sum(1 for c in chosen if info[c][0] == level),
                 sum(weight.get(c, 0) for c in chosen if info[c][0] == level)) for level in priorities]

    def packs(pods: list[Pod]) -> bool:
        room = {k: dict(v) for k, v in free.items()}
        held = {g: next(iter(d)) for g, d in pinned.items() if d}  # group -> the one domain it is in

        def place(i: int, first: int) -> bool:
            if i == len(pods):
                return True
            alike = i > 0 and pods[i - 1].annotations == pods[i].annotations
            group = pods[i].annotations[GROUP]
            for idx, node in enumerate(snapshot.nodes):
                if (alike and idx < first) or not _eligible(node, pods[i]):
                    continue
                domain = _domain(required[group], node, levels) if group in required else None
                if group in required and (domain is None or held.get(group, domain) != domain):
                    continue
                req = _requests(pods[i])
                if all(room[node.name].get(k, 0) >= v for k, v in req.items()):
                    had = held.get(group)
                    if group in required:
                        held[group] = domain
                    for k, v in req.items():
                        room[node.name][k] -= v
                    if place(i + 1, idx):
                        return True
                    for k, v in req.items():
                        room[node.name][k] += v
                    if had is None:
                        held.pop(group, None)
            return False

        return place(0, 0)

    def fits(chosen: tuple[int, ...]) -> bool:
        members = [g.name for c in chosen for g in job_groups[c][1]]
        if any(None in pinned.get(g, ()) or len(pinned.get(g, ())) > 1 for g in members):
            return False  # running members already break its term
        per_group = [choices for c in chosen for choices in info[c][2]]
        return all(per_group) and any(packs([p for pick in picks for p in pick]) for picks in product(*per_group))

    queue = sorted(range(len(info)), key=lambda j: info[j][3])
    for level in priorities:
        alone = [j for j in queue if info[j][0] == level and fits((j,))]
        weight.update((j, len(alone) - i) for i, j in enumerate(alone))
    subsets = [c for size in range(len(info) + 1) for c in combinations(range(len(info)), size)]
    subsets.sort(key=key, reverse=True)

    def scored(placed: set[str]) -> Score:
        keys = [{g.key for g in groups} for _, groups in job_groups]
        assert all(k <= placed or not k & placed for k in keys), "a JobGroup placed in part"
        return key(tuple(j for j, k in enumerate(keys) if k <= placed))

    return Search(next(key(c) for c in subsets if fits(c)), scored, fits, job_groups, queue)


def placed(result: Plan) -> set[str]:
    """The groups of the JobGroups the plan places. A member whose members meet its minimums is
    placed whatever its JobGroup does (README): not a JobGroup placed in part."""
    left_out = {g.job_group for g in result.groups if not g.placed}
    return {
        g.key for g in result.groups
        if g.placed and (g.job_group not in left_out or (g.counted < g.min_member and not g.finished))
    }


@pytest.mark.parametrize("seed", range(SEEDS))
def test_job_groups_with_task_and_resource_minimums_reach_the_exhaustive_optimum(seed: int) -> None:
    snapshot = random_jobs(seed)
    search = exhaustive_jobs(snapshot)
    result = plan(snapshot, Options())
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert search.scored(placed(result)) == search.best
    baseline = plan(snapshot, Options(solver="greedy"))
    assert verify(snapshot, baseline.placements, baseline.topology_levels()).ok
    assert search.scored(placed(baseline)) <= search.best


@pytest.mark.parametrize("seed", range(0, SEEDS, 3))
def test_the_bucket_model_on_job_groups_never_passes_the_exhaustive_optimum(seed: int) -> None:
    """The cluster-scale path forced: it verifies, never loses to greedy, and a gap of 0 it
    reports is the optimum."""
    snapshot = random_jobs(seed)
    search = exhaustive_jobs(snapshot)
    result = plan(snapshot, Options(model="buckets"))
    assert "node buckets" in result.solver.note
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    mine = search.scored(placed(result))
    assert search.scored(placed(plan(snapshot, Options(solver="greedy")))) <= mine <= search.best
    if result.solver.gap == 0.0:
        assert mine == search.best


@pytest.mark.parametrize("seed", range(0, SEEDS, 2))
def test_the_ordered_policy_places_each_job_group_that_fits_beside_those_before_it(seed: int) -> None:
    """README's `--policy ordered`: JobGroups one at a time in queue order, each placed when it
    fits beside those before it (their pods beyond minMember included). A JobGroup it leaves
    out must not fit beside what the plan put on nodes before its turn. When the scheduler-like
    greedy in the same order places the first JobGroup where the two differ, its plan is
    returned instead (status GREEDY), and its
    heuristic steps need not keep this rule (rare here: a few seeds in thousands), so those plans
    are only verified."""
    snapshot = random_jobs(seed)
    result = plan(snapshot, Options(policy="ordered"))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    if result.solver.status == "GREEDY":
        return
    search = exhaustive_jobs(snapshot)
    before: dict[str, str] = {}
    for j in search.queue:
        keys = {g.key for g in search.job_groups[j][1]}
        if not keys <= placed(result):
            assert not exhaustive_jobs(snapshot, before).fits((j,)), (search.job_groups[j][0], result.solver.chosen)
        before.update((p.name, p.node) for p in result.placements if p.group in keys)


def test_the_ordered_policy_answers_the_scheduler_like_greedy_where_it_places_more() -> None:
    """README's `--policy ordered`: a step's choice can take the room a later group needed, so
    the whole ordered plan is compared with the scheduler-like greedy's, in the same queue
    order, and the better one is returned (status GREEDY, with a note). On seed 83 the model,
    step by step, leaves the second JobGroup no room; the scheduler-like greedy places both."""
    snapshot = random_jobs(83)
    problem = build_problem(snapshot)
    terms = objective_terms(problem)
    stepwise = planner._ordered(problem, terms, Options(policy="ordered"), None)[0]
    scheduler_like = planner._ordered(problem, terms, Options(policy="ordered", solver="greedy"), None)[0]
    assert len(stepwise.placed) < len(scheduler_like.placed) == len(problem.job_groups) == 2  # the case the rule is for
    scheduler = plan(snapshot, Options(policy="ordered", solver="greedy"))
    result = plan(snapshot, Options(policy="ordered"))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert placed(result) == placed(scheduler) and result.placements == scheduler.placements
    assert result.solver.status == "GREEDY" and result.solver.policy == "ordered"
    assert "scheduler-like greedy" in result.solver.note


def test_the_ordered_policys_scheduler_like_plan_is_reported_as_greedys() -> None:
    """The Plan's `solver.chosen` is "which plan was kept: cp-sat or greedy" (plan.py); README
    returns the scheduler-like greedy's plan under `--policy ordered` "as for the default
    policy", whose scheduler-like plan is reported as greedy's. Seed 83 keeps that plan."""
    result = plan(random_jobs(83), Options(policy="ordered"))
    assert result.solver.status == "GREEDY" and "scheduler-like greedy" in result.solver.note
    assert result.solver.chosen == "greedy"


def test_ordered_steps_past_the_time_limit_keep_greedys_placement_unproven() -> None:
    """README's `--policy ordered`: each step is charged its solver's time and 5 ms plus 30 µs
    a variable and 5 µs a node, and "steps past it keep greedy's placement". Seed 3's four
    JobGroups are charged at least 20 ms: with 5 ms some step keeps greedy's placement,
    so the plan is not proven (DESIGN: the status says OPTIMAL only for a plan the solver
    proved), where the default 10 s proves every step."""
    snapshot = random_jobs(3)
    result = plan(snapshot, Options(policy="ordered", time_limit=0.005))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert sum(jg.feasible for jg in build_problem(snapshot).job_groups) == 4
    assert result.solver.status == "FEASIBLE" and plan(snapshot, Options(policy="ordered")).solver.status == "OPTIMAL"


def test_an_ordered_plan_whose_time_limit_is_used_up_is_still_in_queue_order() -> None:
    """helper-59: with the limit spent before any step, `--policy ordered` returned the
    default policy's greedy plan, which places every quorum before any extra pod: b (queued
    after a) was placed there, where the ordered plan gives a's extra pod b's room."""
    node = Node("n1", {"kubernetes.io/hostname": "n1"}, {"cpu": 4000, "pods": 110})
    pods = tuple(
        Pod("ml", f"{g}-{i}", labels={"scheduling.x-k8s.io/pod-group": g}, containers=(Container("c", {"cpu": 1000}),))
        for g, n in (("a", 3), ("b", 2))
        for i in range(n)
    )
    groups = (
        PodGroup("ml", "a", PodGroupAPI.SCHEDULER_PLUGINS, 1, creation_timestamp="2024-01-01T00:00:00Z"),
        PodGroup("ml", "b", PodGroupAPI.SCHEDULER_PLUGINS, 2, creation_timestamp="2024-01-02T00:00:00Z"),
    )
    snapshot = Snapshot(nodes=(node,), pods=pods, pod_groups=groups)
    for options in (Options(policy="ordered"), Options(policy="ordered", time_limit=1e-6)):
        result = plan(snapshot, options)
        assert verify(snapshot, result.placements, result.topology_levels()).ok
        assert [(g.key, g.placed, g.scheduled) for g in result.groups] == [("ml/a", True, 3), ("ml/b", False, 0)]
    assert "used up the time limit" in result.solver.note
    assert [g.placed for g in plan(snapshot, Options(time_limit=1e-6)).groups] == [True, True]

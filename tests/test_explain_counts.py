"""`explain`'s claims against exhaustive search. The counts ("at most N of minMember pods
fit") and what the pods that fit request of each resource (minResources' figure), on 300 small
random PodGroups with pods of two or three kinds (sizes in cpu, GPUs and the node's pod
count), alone on a few nodes or inside one of them: first fit can miss the packing that holds
most, and a count some placement beats is a false reason. And on test_exhaustive's 200 random
clusters, with rack and node terms, and test_exhaustive_jobs' 500 with JobGroups: whether each
group left out fits with nothing else planned, as its reason says; the count it gives; what
"the pods that fit request at most X" and "at most K of its N members' quorums fit together"
say; and the figures of "insufficient ...", "lost to
... holding ..." and "0/N nodes are available", worked out again from the snapshot and the
plan. Every plan is verified."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from itertools import combinations, product
from typing import Mapping, TypedDict, Unpack

import pytest

import numpy as np

from gangplan.explain import _Exact, _fits_alone, _Most, _node_kinds, _pods_bound
from gangplan.greedy import _place_quorum, _State
from gangplan.quantity import describe_amount, to_amount
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, PriorityClass, Snapshot
from gangplan.plan import Plan
from gangplan.planner import Options, plan
from gangplan.problem import NARROW_ROOM_FROM, Problem, build_problem
from gangplan.verify import verify

from test_exhaustive import _eligible, _request, domains, exhaustive_best, inferred_levels, random_snapshot, seeds
from test_exhaustive_jobs import CLASSES, GROUP, TASK, exhaustive_jobs, random_jobs

from spies import recording


def mixed_group(seed: int) -> Snapshot:
    rng = random.Random(seed)
    nodes = tuple(
        Node(
            f"n{i}",
            {},
            {"cpu": rng.choice([3000, 4000, 5000, 7000]), "nvidia.com/gpu": rng.choice([0, 1, 2, 4]), "pods": rng.choice([2, 3, 110])},
        )
        for i in range(rng.randint(1, 4))
    )
    kinds = [
        {"cpu": rng.choice([1000, 2000, 3000]), "nvidia.com/gpu": rng.choice([0, 0, 1, 2])} for _ in range(rng.randint(2, 3))
    ]
    pods = []
    for k, request in enumerate(kinds):
        for p in range(rng.randint(1, 3)):
            pods.append(Pod("default", f"mix-{k}-{p}", labels={"scheduling.x-k8s.io/pod-group": "mix"},
                            containers=(Container("main", {name: v for name, v in request.items() if v}),)))
    group = PodGroup("default", "mix", PodGroupAPI.SCHEDULER_PLUGINS, min_member=rng.randint(1, len(pods)))
    return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))


def most_that_fit(snapshot: Snapshot, nodes: set[str], resource: str | None = None) -> int:
    """Node by node, every count of each kind of pod it can hold beside the counts the nodes
    before it took: the most pods placed over all of them (of ``resource`` they request, if
    given)."""
    kinds: dict[tuple[tuple[str, int], ...], int] = {}
    for pod in snapshot.pods:
        request = tuple(sorted(_request(pod).items()))
        kinds[request] = kinds.get(request, 0) + 1
    requests, counts = list(kinds), list(kinds.values())
    reached = {tuple(0 for _ in counts)}
    for node in snapshot.nodes:
        if node.name not in nodes:
            continue
        after = set()
        for used in reached:
            for extra in product(*(range(c - u + 1) for c, u in zip(counts, used))):
                need: dict[str, int] = {}
                for request, n in zip(requests, extra):
                    for k, v in request:
                        need[k] = need.get(k, 0) + v * n
                if all(v <= node.allocatable.get(k, 0) for k, v in need.items()):
                    after.add(tuple(u + e for u, e in zip(used, extra)))
        reached = after
    if resource is None:
        return max(sum(used) for used in reached)
    return max(sum(n * dict(request).get(resource, 0) for request, n in zip(requests, used)) for used in reached)


@pytest.mark.parametrize("seed", seeds(300))
def test_the_most_pods_that_fit_is_the_exhaustive_most(seed: int) -> None:
    snapshot = mixed_group(seed)
    problem = build_problem(snapshot)
    gang = problem.gangs[0]
    names = [n.name for n in problem.nodes]
    free = problem.matrix("free")
    for among in (None, [0], list(range(len(names)))[1:]):
        if among == []:
            continue
        truth = most_that_fit(snapshot, {names[n] for n in among} if among is not None else set(names))
        assert _pods_bound(problem, gang.roles, free, among, -1) >= truth
        most = _Exact(problem).most(0, gang.roles, None, among)
        assert sum(most.state.placed_of(r) for r in gang.roles) == most.found == most.bound == truth, among
        # Past the budget, first fit's count stands, and what it says the most could be holds.
        cut = _Exact(problem)
        cut.left = 0.0
        most = cut.most(0, gang.roles, None, among)
        assert sum(most.state.placed_of(r) for r in gang.roles) == most.found <= truth <= most.bound
        assert (most.state.free >= 0).all()
    # The reason the plan gives, where it counts what fits.
    result = plan(snapshot, Options())
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    (outcome,) = result.groups
    whole = most_that_fit(snapshot, set(names))
    assert outcome.placed == (whole >= snapshot.pod_groups[0].min_member)
    if outcome.reason.startswith("at most"):
        assert outcome.reason.startswith(f"at most {whole} of minMember"), outcome.reason


@pytest.mark.parametrize(("seed", "among"), [(7, [1, 2]), (18, None)])
def test_past_the_budget_first_fit_counts_in_the_better_of_two_orders(seed: int, among: list[int] | None) -> None:
    """Smallest pods first holds the most on seed 7's last two nodes, and the group's own order
    on seed 18's cluster (each found one pod fewer alone): with no search left, the count is
    the better of the two, here the exhaustive most."""
    snapshot = mixed_group(seed)
    problem = build_problem(snapshot)
    names = [n.name for n in problem.nodes]
    cut = _Exact(problem)
    cut.left = 0.0
    truth = most_that_fit(snapshot, {names[n] for n in among} if among is not None else set(names))
    assert cut.most(0, problem.gangs[0].roles, None, among).found == truth


@pytest.mark.parametrize("seed", seeds(300))
def test_the_most_a_resource_the_pods_that_fit_request_is_the_exhaustive_most(seed: int) -> None:
    """minResources' figure, "the pods that fit request at most 4 cpu": first fit takes the
    largest pods first, and CP-SAT is asked only when that falls short of the need."""
    snapshot = mixed_group(seed)
    problem = build_problem(snapshot)
    gang = problem.gangs[0]
    names = [n.name for n in problem.nodes]
    for k, resource in enumerate(problem.resources):
        for among in (None, [0]):
            truth = most_that_fit(snapshot, {names[n] for n in among} if among is not None else set(names), resource)
            most = _Exact(problem).requested(0, gang.roles, k, truth + 1, None, among)
            placed = sum(most.state.placed_of(r) * problem.roles[r].request[k] for r in gang.roles)
            assert placed == most.found == most.bound == truth, (resource, among)
            assert (most.state.free >= 0).all()
            # Past the budget first fit stands, below the truth and the bound above it.
            cut = _Exact(problem)
            cut.left = 0.0
            first = cut.requested(0, gang.roles, k, truth + 1, None, among)
            assert first.found <= truth <= first.bound
            assert (first.state.free >= 0).all()
            # A need first fit meets is no reason to search.
            enough = _Exact(problem)
            assert enough.requested(0, gang.roles, k, first.found, None, among).found == first.found
            assert enough.searches == 0


GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
# Reasons that say the group has no place even with nothing else planned, and those that say
# it has one and what stops it is the groups placed.
ALONE_FAILS = re.compile(
    r"^(NotEnoughTasks|0/\d+ nodes are available|only \d+ of its pending pods ha(s|ve) a node|insufficient "
    r"|minResources \S+ cannot be met|at most \d+ of (minMember|its \d+ members')"
    r"|task \S+: at most|no placement of|the pods (that fit|found room) request|with (minMember|the task|minResources)"
    r"|required [^:]+: (the best \S+ \(\S+\) holds"
    r"|the pods (that|found room)|running members|no |a running member|with ))"
)
WHOSE = re.compile(r"^(JobGroup \S+ cannot be placed: )?(member \S+: )?")
FITS_ALONE = re.compile(r"^(lost to |fits even with nothing else planned)")
COUNTED = re.compile(r"^(?:at most (\d+) of minMember \d+ pods fit even|required [^:]+: the best \S+ \(\S+\) holds (\d+) of)")


def fits_alone(snapshot: Snapshot, name: str, min_member: int | None = None) -> bool:
    """Whether PodGroup ``name`` (at ``min_member``, if given) has a place on the snapshot with
    nothing else planned: the other groups' running pods keep their room, as plain pods, and
    their terms the levels (a node without a level's label is outside the topology)."""
    group = next(g for g in snapshot.pod_groups if g.name == name)
    pods = tuple(
        p if p.labels.get(GROUP_LABEL) == name else replace(p, labels={})
        for p in snapshot.pods
        if p.labels.get(GROUP_LABEL) == name or p.node_name
    )
    if min_member is not None:
        group = replace(group, min_member=min_member)
    alone = replace(snapshot, pods=pods, pod_groups=(group,))
    return name in exhaustive_best(alone, domains(inferred_levels(snapshot)))[1]


@pytest.mark.parametrize("hostname", [False, True], ids=["rack", "hostname"])
@pytest.mark.parametrize("seed", seeds(200))
def test_a_reason_says_rightly_whether_the_group_fits_alone(seed: int, hostname: bool) -> None:
    snapshot = random_snapshot(seed, hostname)
    result = plan(snapshot, Options())
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    for outcome in result.groups:
        if outcome.placed:
            continue
        name = outcome.key.split("/", 1)[1]
        says_fails, says_fits = ALONE_FAILS.match(outcome.reason), FITS_ALONE.match(outcome.reason)
        assert bool(says_fails) != bool(says_fits), f"unclassified reason: {outcome.reason}"
        assert fits_alone(snapshot, name) == bool(says_fits), outcome.reason
        if counted := COUNTED.match(outcome.reason):
            most = int(counted.group(1) or counted.group(2))
            assert fits_alone(snapshot, name, most) and not fits_alone(snapshot, name, most + 1), outcome.reason
        if lost := LOST.match(outcome.reason):
            assert_holders_add_up(snapshot, result, name, lost)
        if short := SHORT.match(outcome.reason):
            assert_short_adds_up(snapshot, name, short)
        assert_every_node_counted(snapshot, outcome.reason)


LOST = re.compile(r"lost to .*?holding (\S+) on its ([\d,]+) candidate nodes?: (.*?); (\S+) free there after the plan")


def assert_every_node_counted(snapshot: Snapshot, reason: str) -> None:
    """'0/4 nodes are available: 2 taint gpu, 1 not Ready, 1 unschedulable': as kube-scheduler
    counts them, each node once, under what first filters it out."""
    if none := re.match(r"0/(\d+) nodes are available: (.*)$", reason):
        assert int(none.group(1)) == len(snapshot.nodes), reason
        assert sum(int(n) for n in re.findall(r"(?:^|, )(\d+) ", none.group(2))) == len(snapshot.nodes), reason


def free_before(snapshot: Snapshot) -> dict[str, dict[str, int]]:
    """Per node and resource, its allocatable less what its running pods ask."""
    before = {n.name: dict(n.allocatable) for n in snapshot.nodes}
    for pod in snapshot.pods:
        if pod.node_name and pod.phase.name == "RUNNING":
            for k, v in _request(pod).items():
                before[pod.node_name][k] -= v
    return before


def passing_filters(snapshot: Snapshot, name: str) -> set[str]:
    """The nodes that pass group ``name``'s filters, room aside: its pods' own, and with a
    required term, inside the topology and the domain its running members hold."""
    pods = [p for p in snapshot.pods if p.labels.get(GROUP_LABEL) == name]
    pending = next(p for p in pods if not p.node_name)
    group = next(g for g in snapshot.pod_groups if g.name == name)
    domain = domains(inferred_levels(snapshot))
    by_name = {n.name: n for n in snapshot.nodes}
    term = group.required_topology[0] if group.required_topology else None
    held = {domain(term, by_name[p.node_name]) for p in pods if p.node_name and p.phase.name == "RUNNING"} if term else set()
    return {
        n.name for n in snapshot.nodes
        if _eligible(n, pending) and (term is None or ((d := domain(term, n)) is not None and (not held or held == {d})))
    }


SHORT = re.compile(r"insufficient (.*) on (?:Ready, schedulable nodes|the (\d+) of (\d+) Ready, schedulable nodes that pass its filters)$")


def assert_short_adds_up(snapshot: Snapshot, name: str, short: re.Match) -> None:
    """'insufficient cpu (quorum needs 4, 2 free) on [the 1 of 2] Ready, schedulable nodes [that
    pass its filters]': the quorum's pods still to place ask that much, and that much is free
    on those nodes (its pods' filters: selectors and taints; a node outside the topology is
    left to the reasons that name it)."""
    figures, passing, usable = short.groups()
    pods = [p for p in snapshot.pods if p.labels.get(GROUP_LABEL) == name]
    pending = next(p for p in pods if not p.node_name)
    group = next(g for g in snapshot.pod_groups if g.name == name)
    # Succeeded members do not count while it has pods to place (scheduler-plugins' Coscheduling).
    need = group.min_member - sum(1 for p in pods if p.node_name and p.phase is PodPhase.RUNNING)
    ready = [n for n in snapshot.nodes if n.ready and not n.unschedulable]
    nodes = ready
    if passing is not None:  # its pods' own filters: selectors and taints, not the topology
        nodes = [n for n in ready if _eligible(n, pending)]
        assert (int(passing), int(usable)) == (len(nodes), len(ready)), short.group(0)
    before = free_before(snapshot)
    for resource, needs, free in re.findall(r"(\S+) \(quorum needs (\S+), (\S+) free\)", figures):
        assert describe_amount(resource, need * _request(pending).get(resource, 0)) == needs, short.group(0)
        # A node whose running pods ask more than it has has none free, not less than none.
        assert describe_amount(resource, sum(max(0, before[n.name].get(resource, 0)) for n in nodes)) == free, short.group(0)


def assert_holders_add_up(snapshot: Snapshot, result: Plan, name: str, lost: re.Match[str]) -> None:
    """'lost to ... holding cpu on its 2 candidate nodes: default/g0 (1), ...; 500m free there
    after the plan': its candidates are the nodes that pass its pods' filters, lie inside the
    topology (and the domain its running members hold) and have room for one of its pods before
    the plan; each group named holds that much of the resource on them; and that much is free."""
    resource, count, holders, free_text = lost.groups()
    pending = next(p for p in snapshot.pods if p.labels.get(GROUP_LABEL) == name and not p.node_name)
    before = free_before(snapshot)
    candidates = [
        n for n in passing_filters(snapshot, name) if all(before[n].get(k, 0) >= v for k, v in _request(pending).items())
    ]
    assert int(count.replace(",", "")) == len(candidates), lost.group(0)
    group_of = {p.name: p.labels.get(GROUP_LABEL) for p in snapshot.pods}
    pods_by_name = {p.name: p for p in snapshot.pods}
    taken: dict[str, int] = {}
    after = {n: dict(room) for n, room in before.items()}
    for placement in result.placements:
        request = _request(pods_by_name[placement.name])
        for k, v in request.items():
            after[placement.node][k] -= v
        if placement.node in candidates:
            holder = f"default/{group_of[placement.name]}"
            taken[holder] = taken.get(holder, 0) + request.get(resource, 0)
    for holder, amount in re.findall(r"(default/\S+) \(([^)]+)\)", holders):
        assert describe_amount(resource, taken.get(holder, 0)) == amount, (holder, lost.group(0))
    free = sum(after[n].get(resource, 0) for n in candidates)
    assert describe_amount(resource, free) == free_text, lost.group(0)


@pytest.mark.parametrize("seed", seeds(500))
def test_a_reason_says_rightly_whether_a_job_group_fits_alone(seed: int) -> None:
    """The same on test_exhaustive_jobs' clusters: Volcano PodGroups joined into JobGroups, with
    task minimums, minResources and zone, rack and node terms. A member's reason that says it
    has no place alone leaves its JobGroup none either; one that names the groups placed
    instead has no room beside them."""
    snapshot = random_jobs(seed)
    result = plan(snapshot, Options())
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    search = exhaustive_jobs(snapshot)
    beside = exhaustive_jobs(snapshot, {p.name: p.node for p in result.placements})
    index = {g.key: j for j, (_, groups) in enumerate(search.job_groups) for g in groups}
    for outcome in result.groups:
        if outcome.placed:
            continue
        reason = WHOSE.sub("", outcome.reason, count=1)
        says_fails, says_fits = ALONE_FAILS.match(reason), FITS_ALONE.match(reason)
        assert bool(says_fails) != bool(says_fits), f"unclassified reason: {outcome.reason}"
        assert search.fits((index[outcome.key],)) == bool(says_fits), outcome.reason
        if says_fits:  # and what the plan placed leaves it no room: else the plan is not optimal
            assert not beside.fits((index[outcome.key],)), outcome.reason
        assert_every_node_counted(snapshot, reason)
        for held, of in re.findall(r"(?:holds|at most) (\d+) of (?:minMember |minTaskMember )?(\d+)", reason):
            assert int(held) < int(of), outcome.reason  # a count that reaches the minimum stops nothing
        if together := TOGETHER.match(reason):
            assert_the_most_members(snapshot, outcome.key[3:], int(together.group(1)), int(together.group(2)))
        whose = WHOSE.match(outcome.reason)
        assert whose is not None, outcome.reason
        member = whose.group(2)
        name = member[len("member ml/"):-2] if member else outcome.key[3:]
        if requested := REQUESTED.match(reason):
            assert_the_most_requested(snapshot, name, requested)
        if tied := TIED_REQUESTED.match(reason):
            assert_the_most_requested(snapshot, name, tied, quorum=True)
        if tied := TIED_PODS.match(reason):
            assert_the_most_pods_with_the_other_minimums(snapshot, name, int(tied.group(1)))


TOGETHER = re.compile(r"^at most (\d+) of its (\d+) members' quorums fit together, even with nothing else planned")


def assert_the_most_members(snapshot: Snapshot, name: str, most: int, members: int) -> None:
    """"at most K of its N members' quorums fit together": its members, each a JobGroup of its
    own, fit K together in some choice and no K + 1 do."""
    sub_group = next(g for g in snapshot.pod_groups if g.name == name).sub_group
    groups = tuple(replace(g, sub_group="") if g.sub_group == sub_group else g for g in snapshot.pod_groups)
    search = exhaustive_jobs(replace(snapshot, pod_groups=groups))
    keys = [key for key, _ in search.job_groups]
    mine = [keys.index(f"pg:{g.name}") for g in snapshot.pod_groups if g.sub_group == sub_group]
    assert len(mine) == members > most
    assert any(search.fits(chosen) for chosen in combinations(mine, most))
    assert not any(search.fits(chosen) for chosen in combinations(mine, most + 1))


# minResources' figure, on the snapshot's room (a member's "then" is one placement, not checked).
REQUESTED = re.compile(
    r"^(?:required [^:]+: )?the pods that fit (?:in one \S+ )?request at most (\S+) (\S+)(?: \([^)]*\))?"
    r"(?: even with nothing else planned)?, and minResources needs (\S+) more(?:: (.*) fits? on no node (?:it|they) can use)?$"
)
NAMED = re.compile(r"(\S+) \([^)]*\)")
# The same with minMember and the task minimums held, when each minimum alone has room; and
# the most pods with the task minimums and minResources held.
TIED_REQUESTED = re.compile(
    r"^(?:required [^:]+: )?with minMember \d+(?: and the task minimums)? met, the pods that fit(?: in one \S+)? request "
    r"at most (\S+) (\S+) even with nothing else planned, and minResources needs (\S+) more()$"
)
TIED_PODS = re.compile(
    r"^(?:required [^:]+: )?with (?:the task minimums|minResources|the task minimums and minResources) met, at most (\d+) "
    r"of minMember \d+ pods fit(?: in one \S+)? even with nothing else planned$"
)


def assert_the_most_requested(snapshot: Snapshot, name: str, said: re.Match[str], quorum: bool = False) -> None:
    """"request at most X cpu", and "minResources needs D more": the group alone (its terms
    kept, no count asked unless ``quorum``) fits with its running and succeeded members'
    requests plus X, and not with one unit more; D is what minResources asks beyond those
    members."""
    most, resource, deficit, nowhere = said.groups()
    group = next(g for g in snapshot.pod_groups if g.name == name)
    # "X (...) fits on no node it can use": no node that passes its filters has room for it.
    free = free_before(snapshot)
    pods = {p.name: p for p in snapshot.pods}
    for named in NAMED.findall(nowhere or ""):
        pod = pods[named]
        assert pod.annotations.get(GROUP) == name, said.group(0)
        assert not any(
            _eligible(n, pod) and all(free[n.name].get(k, 0) >= v for k, v in _request(pod).items()) for n in snapshot.nodes
        ), said.group(0)
    members = [p for p in snapshot.pods if p.annotations.get(GROUP) == name]
    counted = sum(p.containers[0].requests.get(resource, 0) for p in members if p.phase is not PodPhase.PENDING)
    assert to_amount(resource, deficit) == group.min_resources[resource] - counted, said.group(0)

    def fits(amount: int) -> bool:
        changes: GroupChanges = {"min_resources": {resource: amount}}
        if not quorum:
            changes["min_member"] = 0
            changes["min_task_member"] = {}
        return fits_as(snapshot, name, **changes)

    reached = counted + to_amount(resource, most)
    assert fits(reached) and not fits(reached + 1), said.group(0)


class Minimums(TypedDict, total=False):
    min_task_member: Mapping[str, int]
    min_resources: Mapping[str, int]


class GroupChanges(Minimums, total=False):
    """What fits_as changes in a PodGroup."""

    min_member: int


def fits_as(snapshot: Snapshot, name: str, **changes: Unpack[GroupChanges]) -> bool:
    """Whether PodGroup ``name``, with ``changes`` and out of its JobGroup, has a place with
    nothing else planned, by exhaustive search; the other groups stay in the snapshot, their
    terms naming the levels."""
    group = next(g for g in snapshot.pod_groups if g.name == name)
    alone = replace(group, sub_group="", **changes)
    search = exhaustive_jobs(replace(snapshot, pod_groups=tuple(alone if g is group else g for g in snapshot.pod_groups)))
    return search.fits(([key for key, _ in search.job_groups].index(f"pg:{name}"),))


def assert_the_most_pods_with_the_other_minimums(snapshot: Snapshot, name: str, most: int) -> None:
    """"with the task minimums and minResources met, at most N of minMember M pods fit": the
    group alone, its terms and other minimums kept, fits at minMember N and not at N + 1."""
    assert most < next(g for g in snapshot.pod_groups if g.name == name).min_member
    assert fits_as(snapshot, name, min_member=most) and not fits_as(snapshot, name, min_member=most + 1)


def one_node_jobs(min_member: int, **spec: Unpack[Minimums]) -> Snapshot:
    """Two 4-cpu, 2-GPU nodes and a Volcano job on one node (a hostname term): two 'a' pods of
    1 cpu and 2 GPUs, so one a node, and four 'b' pods of 500m and no GPU."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 4000, "nvidia.com/gpu": 2, "pods": 110}) for i in range(2))
    pods = [
        Pod("ml", f"job-{task}-{i}", annotations={GROUP: "job", TASK: task},
            containers=(Container("main", requests),))
        for task, requests, count in (("a", {"cpu": 1000, "nvidia.com/gpu": 2}, 2), ("b", {"cpu": 500}, 4))
        for i in range(count)
    ]
    group = PodGroup("ml", "job", PodGroupAPI.VOLCANO, min_member=min_member, queue="default", priority_class_name="low",
                     required_topology=("kubernetes.io/hostname",), **spec)
    classes = tuple(PriorityClass(n, v) for n, v in CLASSES.items())
    return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,), priority_classes=classes)


@pytest.mark.parametrize(
    ("min_member", "spec", "said"),
    [
        (2, {"min_task_member": {"a": 2}},
         "required kubernetes.io/hostname: no node holds task a's minTaskMember 2: at most 1 fit in the best (n0)"),
        (1, {"min_resources": {"nvidia.com/gpu": 3}},
         "required kubernetes.io/hostname: the pods that fit in one node request at most 2 nvidia.com/gpu (n0), "
         "and minResources needs 3 more"),
    ],
    ids=["task", "min-resources"],
)
def test_a_required_domain_that_holds_min_member_but_not_a_task_or_min_resources_says_which(
    min_member: int, spec: Minimums, said: str
) -> None:
    """A node holds minMember's pods (the b pods), so a count of pods says nothing; what no node
    can hold is the second 'a' pod, or a third GPU, and the reason gives that figure."""
    snapshot = one_node_jobs(min_member, **spec)
    result = plan(snapshot, Options())
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    (outcome,) = result.groups
    assert not outcome.placed and outcome.reason == said
    assert not exhaustive_jobs(snapshot).fits((0,))


def test_a_node_term_no_node_holds_is_answered_without_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two kinds of pods on one node each time: the bound (one 2-GPU pod and four small ones a
    node) is below minMember 6, so neither whether it fits alone nor the best node's count
    needs CP-SAT; nor does a minResources beyond a node's room. At 1,024 nodes each such search took 1.5 s of wall (presolve, finding the
    nodes alike) for 0.001 deterministic s, and 300 such groups took explain 225 s."""
    snapshot = one_node_jobs(6)

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("CP-SAT was asked")

    monkeypatch.setattr("gangplan.explain._Exact._solve", no_search)
    result = plan(snapshot, Options(solver="greedy"))
    (outcome,) = result.groups
    assert outcome.reason == "required kubernetes.io/hostname: the best node (n0) holds 5 of 6 pods (nvidia.com/gpu)"
    # minResources' GPUs the same way: no node has 3 free, so neither question needs a search.
    result = plan(one_node_jobs(1, min_resources={"nvidia.com/gpu": 3}), Options(solver="greedy"))
    assert result.groups[0].reason == (
        "required kubernetes.io/hostname: the pods that fit in one node request at most 2 nvidia.com/gpu (n0), "
        "and minResources needs 3 more"
    )
    assert not exhaustive_jobs(snapshot).fits((0,))


def test_a_volcano_job_whose_min_resources_count_a_pod_no_node_holds_says_what_its_pods_can_request() -> None:
    """Volcano's job controller sets minResources to the requests of the job's first
    minAvailable pods, its master among them. A master larger than every node leaves the
    workers meeting minMember but not minResources: the reason gives what the pods that fit
    request at most, where it used to say only that no placement was found."""
    nodes = tuple(Node(f"n{i}", {}, {"cpu": 4000, "memory": 16 << 30, "pods": 110}) for i in range(3))
    pods = [Pod("ml", "job-master-0", annotations={GROUP: "job", TASK: "master"},
                containers=(Container("main", {"cpu": 8000, "memory": 8 << 30}),))]
    pods += [Pod("ml", f"job-worker-{i}", annotations={GROUP: "job", TASK: "worker"},
                 containers=(Container("main", {"cpu": 1000, "memory": 2 << 30}),)) for i in range(4)]
    group = PodGroup("ml", "job", PodGroupAPI.VOLCANO, min_member=3, queue="default",
                     min_resources={"cpu": 10000, "memory": 12 << 30})
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))
    result = plan(snapshot, Options())
    (outcome,) = result.groups
    assert not outcome.placed
    assert outcome.reason == (
        "the pods that fit request at most 4 cpu even with nothing else planned, and minResources needs 10 more: "
        "job-master-0 (8 cpu, 8Gi memory) fits on no node it can use"
    )
    assert not plan(replace(snapshot, pod_groups=(replace(group, min_resources={"cpu": 4001}),)), Options()).groups[0].placed
    assert plan(replace(snapshot, pod_groups=(replace(group, min_resources={"cpu": 4000}),)), Options()).groups[0].placed


@pytest.mark.parametrize("running", [0, 1])
def test_a_group_whose_min_member_and_min_resources_each_fit_but_not_together_says_what_its_quorum_requests(
    running: int,
) -> None:
    """One node of 4 cpu and a GPU. Four 1-cpu pods make minMember 3, and the 3-cpu pod with
    the GPU meets minResources, but with it only one more pod fits. The reason gives the GPUs a
    placement of the quorum requests at most, checked by exhaustive search (a running small
    pod counts towards minMember)."""
    nodes = (Node("n0", {}, {"cpu": 4000, "nvidia.com/gpu": 1, "pods": 110}),)
    pods = [Pod("ml", "job-big-0", annotations={GROUP: "job", TASK: "big"},
                containers=(Container("main", {"cpu": 3000, "nvidia.com/gpu": 1}),))]
    pods += [Pod("ml", f"job-small-{i}", annotations={GROUP: "job", TASK: "small"}, containers=(Container("main", {"cpu": 1000}),),
                 node_name="n0" if i < running else None, phase=PodPhase.RUNNING if i < running else PodPhase.PENDING)
             for i in range(4)]
    group = PodGroup("ml", "job", PodGroupAPI.VOLCANO, min_member=3, queue="default", priority_class_name="low",
                     min_resources={"nvidia.com/gpu": 1})
    classes = tuple(PriorityClass(n, v) for n, v in CLASSES.items())
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,), priority_classes=classes)
    (outcome,) = plan(snapshot, Options()).groups
    assert not outcome.placed
    assert outcome.reason == (
        "with minMember 3 met, the pods that fit request at most 0 nvidia.com/gpu even with nothing else "
        "planned, and minResources needs 1 more"
    )
    tied = TIED_REQUESTED.match(outcome.reason)
    assert tied is not None, outcome.reason
    assert_the_most_requested(snapshot, "job", tied, quorum=True)
    assert plan(replace(snapshot, pod_groups=(replace(group, min_member=2),)), Options()).groups[0].placed


def alike_nodes_jobs(nodes: int, groups: int) -> Snapshot:
    """Nodes of 4 cpu and a GPU, all alike; per Volcano job on one node (a hostname term), a
    3-cpu pod with the GPU and four 1-cpu pods, minMember 3 and minResources a GPU: a node
    holds the count (three small pods) or the GPU (the big pod and one small), not both."""
    pods, jobs = [], []
    for j in range(groups):
        pods.append(Pod("ml", f"job{j}-big-0", annotations={GROUP: f"job{j}", TASK: "big"},
                        containers=(Container("main", {"cpu": 3000, "nvidia.com/gpu": 1}),)))
        pods += [Pod("ml", f"job{j}-small-{i}", annotations={GROUP: f"job{j}", TASK: "small"},
                     containers=(Container("main", {"cpu": 1000}),)) for i in range(4)]
        jobs.append(PodGroup("ml", f"job{j}", PodGroupAPI.VOLCANO, min_member=3, queue="default", priority_class_name="low",
                             min_resources={"nvidia.com/gpu": 1}, required_topology=("kubernetes.io/hostname",)))
    return Snapshot(
        nodes=tuple(Node(f"n{i}", {}, {"cpu": 4000, "nvidia.com/gpu": 1, "pods": 110}) for i in range(nodes)),
        pods=tuple(pods), pod_groups=tuple(jobs), priority_classes=tuple(PriorityClass(n, v) for n, v in CLASSES.items()),
    )


def test_under_a_required_term_minimums_that_tie_are_asked_of_each_kind_of_domain_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The figure that ties minMember to minResources under a node term is each node's, the most
    of them: checked by exhaustive search on three nodes. On 256 alike nodes it is the same,
    found by asking one node: a domain alike to one asked holds as much (1,024 such nodes and
    300 groups took 33 s of first fit, a node at a time, where they now take 6)."""
    said = (
        "required kubernetes.io/hostname: with minMember 3 met, the pods that fit in one node request at most 0 "
        "nvidia.com/gpu even with nothing else planned, and minResources needs 1 more"
    )
    small = alike_nodes_jobs(3, 1)
    (outcome,) = plan(small, Options()).groups
    assert outcome.reason == said
    tied = TIED_REQUESTED.match(said)
    assert tied is not None
    assert_the_most_requested(small, "job0", tied, quorum=True)
    asked: list[_Most] = []
    monkeypatch.setattr(_Exact, "most", recording(_Exact.most, asked))
    large = plan(alike_nodes_jobs(256, 3), Options()).groups
    assert [o.reason for o in large] == [said] * 3
    assert len(asked) == 3  # a node per group, not 256


def test_alike_groups_of_a_sweep_share_their_answers_beyond_the_budget() -> None:
    """The budget all of a plan's reasons share ran out after 49 of 120 alike jobs (the others
    read 'no placement of its quorum was found'): each asked CP-SAT its own questions, the same
    ones. An answer asked already is given again at no cost, so every job gets the figure."""
    said = (
        "required kubernetes.io/hostname: with minMember 3 met, the pods that fit in one node request at most 0 "
        "nvidia.com/gpu even with nothing else planned, and minResources needs 1 more"
    )
    assert [o.reason for o in plan(alike_nodes_jobs(16, 120), Options()).groups] == [said] * 120


@pytest.mark.parametrize(("seed", "name"), [(2279, "g1"), (2713, "g0"), (3197, "g2")])
def test_minimums_that_each_fit_but_not_together_get_the_figure_that_ties_them(seed: int, name: str) -> None:
    """The three of test_exhaustive_jobs' first 4,000 clusters where each minimum of a group
    has room alone and not together (a rack that holds the task minimum or the count but not
    both; the count's pods or minResources' cpu): each reason gives the figure that ties them,
    checked by exhaustive search, where it said only that no placement was found."""
    snapshot = random_jobs(seed)
    reason = next(o.reason for o in plan(snapshot, Options()).groups if o.key == f"ml/{name}")
    if tied := TIED_REQUESTED.match(reason):
        assert_the_most_requested(snapshot, name, tied, quorum=True)
    else:
        tied = TIED_PODS.match(reason)
        assert tied, reason
        assert_the_most_pods_with_the_other_minimums(snapshot, name, int(tied.group(1)))


def test_a_required_group_greedy_cannot_place_is_asked_of_cp_sat_one_domain_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """minMember 2 and minResources 1.5 cpu on one node of 2.5 cpu and 2 GPUs: greedy's
    quorums are two of a kind (the 500m pods, which leave no room for the 2-cpu GPU pod
    minResources then needs; or the two GPU pods, 4 GPUs), where one of each is the placement.
    Whether the group fits alone is then asked node by node (small models), not of one model
    of the whole cluster: on 1,024 alike nodes such a model took 2 s of wall, and 192 s on
    4,096, in CP-SAT's symmetry detection."""

    def pair() -> Snapshot:
        nodes = tuple(Node(f"n{i}", {}, {"cpu": 2500, "nvidia.com/gpu": 2, "pods": 110}) for i in range(2))
        pods = [Pod("ml", f"pair-{task}-{i}", annotations={GROUP: "pair", TASK: task}, containers=(Container("main", request),))
                for task, request in (("a", {"cpu": 2000, "nvidia.com/gpu": 2}), ("b", {"cpu": 500})) for i in range(2)]
        group = PodGroup("ml", "pair", PodGroupAPI.VOLCANO, min_member=2, min_resources={"cpu": 1500},
                         queue="default", priority_class_name="low", required_topology=("kubernetes.io/hostname",))
        return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,), priority_classes=tuple(PriorityClass(n, v) for n, v in CLASSES.items()))

    def job() -> Snapshot:
        nodes = (Node("n0", {}, {"cpu": 8000, "nvidia.com/gpu": 8, "pods": 110}),
                 Node("n1", {}, {"cpu": 16000, "nvidia.com/gpu": 4, "pods": 110}))
        pods = [Pod("ml", f"job-{task}-{i}", annotations={GROUP: "job", TASK: task}, containers=(Container("main", request),))
                for task, request, count in (("a", {"cpu": 1000, "nvidia.com/gpu": 2}, 4), ("b", {"cpu": 1000}, 12))
                for i in range(count)]
        group = PodGroup("ml", "job", PodGroupAPI.VOLCANO, min_member=8, min_resources={"cpu": 12000}, min_task_member={"a": 3},
                         queue="default", priority_class_name="low", required_topology=("kubernetes.io/hostname",))
        classes = tuple(PriorityClass(n, v) for n, v in CLASSES.items())
        return Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,), priority_classes=classes)

    def whole_cluster(*args: object) -> None:
        raise AssertionError("the whole cluster's model was asked")

    monkeypatch.setattr(_Exact, "placed", whole_cluster)
    snapshot = pair()
    problem = build_problem(snapshot)
    assert not _place_quorum(_State(problem), 0)
    assert _fits_alone(problem, 0, _Exact(problem))
    assert exhaustive_jobs(snapshot).fits((0,))
    # minMember 8 with three 2-GPU 'a' pods and minResources 12 cpu: n1's bounds hold 12 cpu
    # of pods, but not three 'a' pods beside them (4 GPUs); the search says no.
    snapshot = job()
    problem = build_problem(snapshot)
    assert not _fits_alone(problem, 0, _Exact(problem))
    assert not exhaustive_jobs(snapshot).fits((0,))


def _widened(snapshot: Snapshot, seed: int) -> Snapshot:
    """The same cluster with 20 more resources, random amounts of each on every node, asked only
    by a pod of another group that asks no cpu and fits nowhere (one more than any node has of
    the first): past NARROW_ROOM_FROM resources, rooms are read in the columns a pod asks."""
    rng = random.Random(seed)
    extra = [f"example.com/r{i}" for i in range(20)]
    nodes = tuple(replace(n, allocatable={**n.allocatable, **{r: rng.randint(0, 3) for r in extra}}) for n in snapshot.nodes)
    wide = Pod("default", "wide-0", labels={"scheduling.x-k8s.io/pod-group": "wide"},
               containers=(Container("main", {r: 4 if i == 0 else 1 for i, r in enumerate(extra)}),))
    group = PodGroup("default", "wide", PodGroupAPI.SCHEDULER_PLUGINS, min_member=1)
    return replace(snapshot, nodes=nodes, pods=(*snapshot.pods, wide), pod_groups=(*snapshot.pod_groups, group))


@pytest.mark.parametrize("seed", seeds(100))
def test_resources_the_pods_do_not_ask_change_no_count(seed: int) -> None:
    """With 20 more resources on the nodes, asked only by a group that fits nowhere, the most
    of the mixed group that fits is still the exhaustive most, and the plan says the same of it."""
    narrow = mixed_group(seed)
    snapshot = _widened(narrow, seed)
    problem = build_problem(snapshot)
    assert len(problem.resources) > NARROW_ROOM_FROM
    (g,) = [g for g, spec in enumerate(problem.gangs) if problem.roles[spec.roles[0]].pods[0].name.startswith("mix")]
    roles = problem.gangs[g].roles
    names = {n.name for n in snapshot.nodes}
    truth = most_that_fit(narrow, names)
    assert _pods_bound(problem, roles, problem.matrix("free"), None, -1) >= truth
    most = _Exact(problem).most(g, roles, None, None)
    assert most.found == most.bound == truth
    result, before = plan(snapshot, Options()), plan(narrow, Options())
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    mix = next(o for o in result.groups if o.key == "default/mix")
    (alone,) = before.groups
    assert (mix.placed, mix.reason) == (alone.placed, alone.reason)


def test_a_question_dearer_than_the_budget_left_is_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """explain charges each CP-SAT question per variable after its answer; a model whose
    variables alone cost more than the budget (a JobGroup of 1,900 members: 3.9 M, 5.4 GB) is
    now not built at all. One that fits is asked, and asked again it is answered from memory
    even with no budget left, as before."""
    import gangplan.cpsat as cpsat
    import gangplan.explain as explain
    from gangplan.objective import Assignment, objective_terms
    from gangplan.problem import alone, candidate_count

    problem = build_problem(mixed_group(3))
    sub = alone(problem, 0, problem.matrix("free"), set())[0]
    terms = [t for t in objective_terms(sub) if t.primary]
    asked: list[object] = []
    monkeypatch.setattr(cpsat, "solve_cpsat", recording(cpsat.solve_cpsat, asked))
    per_variable = (explain.ALONE_BUDGET - explain.ALONE_CHARGE) / candidate_count(sub)
    monkeypatch.setattr(explain, "ALONE_PER_VARIABLE", per_variable * 1.01)
    exact = _Exact(problem)
    assert exact._solve(sub, terms, Assignment({}, frozenset())) is None
    assert asked == [] and exact.left == explain.ALONE_BUDGET
    monkeypatch.setattr(explain, "ALONE_PER_VARIABLE", per_variable * 0.99)
    answer = exact._solve(sub, terms, Assignment({}, frozenset()))
    assert answer is not None and len(asked) == 1
    exact.left = 0.0
    assert exact._solve(sub, terms, Assignment({}, frozenset())) is answer and len(asked) == 1


def _kinds_as_rows(problem: Problem, g: int, free: np.ndarray) -> list[int]:
    """The kinds of node as explain first numbered them: each node's row of free room and a
    column per role taking it, np.unique's rank of the row."""
    roles = problem.gangs[g].roles
    takes = np.zeros((len(free), len(roles)), dtype=free.dtype)
    for i, r in enumerate(roles):
        takes[problem.roles[r].nodes, i] = 1
    return np.unique(np.hstack([free, takes]), axis=0, return_inverse=True)[1].reshape(-1).tolist()


@pytest.mark.parametrize("seed", seeds(40))
def test_kinds_of_node_are_the_ranks_of_their_rows(seed: int) -> None:
    """_node_kinds sorts column by column, with the roles' columns as bits 63 at a time: the
    same kinds, numbered alike, as the rows compared whole; here with a gang of 70 roles (one
    per size of pod, each selecting nodes by one of 7 labels, so that no role's nodes nest in
    another's) beside test_exhaustive's clusters."""
    rng = random.Random(seed)
    nodes = tuple(
        Node(f"n{i}", {f"b{b}": rng.choice("01") for b in range(7)}, {"cpu": rng.choice([40_000, 60_000, 70_000]), "pods": 110})
        for i in range(rng.randint(1, 12))
    )
    sizes = [Pod("default", f"w-{k}", labels={"scheduling.x-k8s.io/pod-group": "w"}, node_selector={f"b{k % 7}": "1"},
                 containers=(Container("main", {"cpu": 1000 * (k + 1)}),)) for k in range(70)]
    wide = Snapshot(nodes=nodes, pods=tuple(sizes), pod_groups=(PodGroup("default", "w", PodGroupAPI.SCHEDULER_PLUGINS, min_member=70),))
    for snapshot in (wide, random_snapshot(seed)):
        problem = build_problem(snapshot)
        free = problem.matrix("free")
        for g in range(len(problem.gangs)):
            assert _node_kinds(problem, g, free) == _kinds_as_rows(problem, g, free)
        assert snapshot is not wide or len(problem.gangs[0].roles) == 70

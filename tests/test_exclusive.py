"""JobSet's exclusive placement: gangs each held to one domain of a key (their pods' affinity to
each other, or a required term) whose pods' required anti-affinity at that key selects other
such gangs' pods take distinct domains, on every solver path; explain says when that is what
leaves a gang out, and a key that is no level is warned about, as before."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from gangplan.aggregate import make_buckets, solve_buckets
from gangplan.greedy import repair, repair_by_worth
from gangplan.loader import load_snapshot
from gangplan.model import NodeSelectorRequirement, Pod, PodAffinityTerm, Snapshot
from gangplan.objective import Assignment, objective_terms
from gangplan.plan import Plan
from gangplan.planner import Options, plan
from gangplan.problem import Problem, build_problem
from gangplan.repack import repack_level
from gangplan.semantics import ANTI_AFFINITY_BEYOND, Grouping, _selects, _Selecting, group_pods
from gangplan.stages import Tuning
from gangplan.verify import verify

POOL = "cloud.google.com/gke-nodepool"
JOB_KEY = "jobset.sigs.k8s.io/job-key"


def _node(name: str, pool: str, gpus: int = 8, labels: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {POOL: pool, **(labels or {})}},
        "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": str(gpus), "pods": "110"}},
    }


def _term(expressions: list[dict]) -> dict:
    return {"labelSelector": {"matchExpressions": expressions}, "topologyKey": POOL, "namespaceSelector": {}}


def _job(name: str, count: int, gpus: int, *, together: bool = True, apart: str = "others", priority: int = 0) -> list[dict]:
    """A JobSet child Job's pods as its webhook makes them for exclusive placement at the pool:
    affinity to its own job-key, anti-affinity to every other job-key (``apart="every"``: to
    any job-key, its own too; ``"none"``: no anti-affinity). A Volcano PodGroup, whose pods'
    ``priority`` scheduler-plugins would read instead."""
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "ml"}, "spec": {"minMember": count}}
    if priority:
        group["apiVersion"] = "scheduling.x-k8s.io/v1alpha1"
    affinity: dict = {}
    if together:
        own = _term([{"key": JOB_KEY, "operator": "In", "values": [name]}])
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [own]}
    if apart != "none":
        others: list[dict] = [{"key": JOB_KEY, "operator": "Exists"}]
        if apart == "others":
            others.append({"key": JOB_KEY, "operator": "NotIn", "values": [name]})
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(others)]}
    pods = [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"{name}-{i}", "namespace": "ml", "labels": {JOB_KEY: name},
                      "annotations": {"scheduling.k8s.io/group-name": name}},
         "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)}}}],
                  **({"affinity": affinity} if affinity else {}), **({"priority": priority} if priority else {})}}
        for i in range(count)
    ]
    return [group, *pods]


def _snapshot(tmp_path: Path, objects: list[dict]) -> Snapshot:
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return load_snapshot([str(path)])


def _four_jobs(tmp_path: Path, apart: str = "others", labels: dict[str, str] | None = None) -> Snapshot:
    """Three pools of two 8-GPU nodes and four jobs of two 4-GPU pods: by room two jobs fit in
    a pool, so only the anti-affinity leaves one out."""
    nodes = [_node(f"p{p}-n{i}", f"pool-{p}", labels=labels) for p in range(3) for i in range(2)]
    return _snapshot(tmp_path, nodes + [o for j in range(4) for o in _job(f"job{j}", 2, 4, apart=apart)])


def _pools(snapshot: Snapshot, result: Plan) -> dict[str, set[str]]:
    pool_of = {n.name: n.labels[POOL] for n in snapshot.nodes}
    found: dict[str, set[str]] = {}
    for p in result.placements:
        found.setdefault(p.group, set()).add(pool_of[p.node])
    return found


OPTIONS = [
    Options(),
    Options(solver="greedy"),
    Options(model="buckets"),
    Options(policy="ordered"),
    Options(solver="greedy", policy="ordered"),
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"{o.solver}-{o.model}-{o.policy}")
def test_exclusive_jobs_take_distinct_pools_and_the_one_left_out_says_why(tmp_path: Path, options: Options) -> None:
    snapshot = _four_jobs(tmp_path)
    result = plan(snapshot, options)
    assert not [w for w in result.warnings if "not modelled" in w or "bug" in w]
    pools = _pools(snapshot, result)
    assert len(pools) == 3 and all(len(p) == 1 for p in pools.values())
    assert len(set.union(*pools.values())) == 3
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    (left,) = [g for g in result.groups if not g.placed]
    assert (
        f"but its pods' required anti-affinity at {POOL} keeps it out of the domains of "
        in left.reason and left.reason.endswith("where all its candidate nodes are")
    ), left.reason
    placed = sorted(g.key for g in result.groups if g.placed)
    shown = ", ".join(f"{key} ({next(iter(pools[key]))})" for key in placed)
    assert f"keeps it out of the domains of {shown}, where" in left.reason


def test_without_the_anti_affinity_all_four_fit(tmp_path: Path) -> None:
    """The control: the same jobs kept together but not apart share pools, all four placed."""
    snapshot = _four_jobs(tmp_path, apart="none")
    result = plan(snapshot)
    assert all(g.placed for g in result.groups)
    assert max(len([k for k, p in _pools(snapshot, result).items() if pool in p]) for pool in ("pool-0", "pool-1", "pool-2")) == 2


def test_the_reason_says_what_the_pools_left_hold(tmp_path: Path) -> None:
    """Two pools of two 8-GPU nodes, a third of one: two jobs of three 4-GPU pods take the large
    pools, and the third, kept out of them, finds room for two of its pods in the small one,
    though the GPUs left free in all (16) would hold its 12."""
    nodes = [_node("p0-n0", "pool-0"), _node("p0-n1", "pool-0"), _node("p1-n0", "pool-1"), _node("p1-n1", "pool-1"),
             _node("p2-n0", "pool-2")]
    snapshot = _snapshot(tmp_path, nodes + [o for j in range(3) for o in _job(f"job{j}", 3, 4)])
    result = plan(snapshot)
    (left,) = [g for g in result.groups if not g.placed]
    assert left.key == "ml/job2"
    assert left.reason.endswith(
        f"but its pods' required anti-affinity at {POOL} keeps it out of the domains of ml/job0 (pool-0), ml/job1 (pool-1), "
        f"and of the rest, required {POOL}: the best {POOL} (pool-2) then holds 2 of 3 pods (nvidia.com/gpu)"
    ), left.reason
    assert "; 16 free there after the plan, but" in left.reason


def test_grouping_names_the_exclusive_pairs_and_warns_of_the_rest(tmp_path: Path) -> None:
    """Pairs of gangs each held to one pool whose terms select only the other's pods are
    exclusive, the pods of both named; a term selecting its own gang too, or a gang its pods'
    affinity does not hold to one pool, is not modelled, as before."""
    nodes = [_node(f"p{p}-n0", f"pool-{p}") for p in range(2)]
    objects = nodes + _job("a", 1, 1) + _job("b", 1, 1) + _job("c", 1, 1, apart="every") + _job("d", 1, 1, together=False)
    grouping = group_pods(_snapshot(tmp_path, objects))
    # a selects b, c and d: d is held to no pool, so a is not modelled; b selects a, c, d likewise.
    assert grouping.anti_affinity.exclusive == {}
    assert sorted(grouping.unmodelled[ANTI_AFFINITY_BEYOND]) == ["pod ml/a-0", "pod ml/b-0", "pod ml/c-0", "pod ml/d-0"]
    assert grouping.anti_affinity.unheld == {("ml/a-0", 0), ("ml/b-0", 0), ("ml/c-0", 0), ("ml/d-0", 0)}
    objects = nodes + _job("a", 1, 1) + _job("b", 2, 1) + _job("c", 1, 1, apart="none")
    grouping = group_pods(_snapshot(tmp_path, objects))
    assert grouping.anti_affinity.exclusive == {  # c's pods carry no term: kube-scheduler checks both ways
        (POOL, "ml/a-0"): (frozenset({"ml/b-0", "ml/c-0"}), (("ml/a-0", 0),)),
        (POOL, "ml/b-0"): (frozenset({"ml/a-0", "ml/c-0"}), (("ml/b-0", 0), ("ml/b-1", 0))),
    }
    assert not grouping.anti_affinity.unheld
    assert ANTI_AFFINITY_BEYOND not in grouping.unmodelled


def test_a_pool_that_is_no_level_is_warned_about(tmp_path: Path) -> None:
    """With --levels naming another key, the pool is no level: the jobs' affinity is ignored
    and their anti-affinity warned about, and the plan says what it breaks of it."""
    snapshot = _four_jobs(tmp_path, labels={"rack": "r0"})
    result = plan(snapshot, Options(levels=("rack",)))
    warned = [w for w in result.warnings if "not modelled" in w]
    assert warned[0] == (
        f"topologyKey {POOL} is not a topology level: the required pod anti-affinity there that keeps PodGroups apart "
        "(ml/job0, ml/job1, ml/job2 and 1 more) is not modelled, so the plan may break it"
    )
    assert len(warned) == 2 and warned[1].startswith("the plan breaks pod-anti-affinity, warned about as not modelled, for pod ")
    assert all(g.placed for g in result.groups)  # nothing keeps them apart, so all four fit
    assert not verify(snapshot, result.placements, result.topology_levels()).ok


def test_the_bucket_model_keeps_exclusive_gangs_in_distinct_buckets(tmp_path: Path) -> None:
    """The pools are the buckets: the bucket model alone places three jobs, one a pool."""
    problem = build_problem(_four_jobs(tmp_path))
    assert len(problem.exclusive) == 6
    assert problem.exclusive_cliques() == [(0, (0, 1, 2, 3))]  # every job against every other: one set
    outcome = solve_buckets(
        problem, objective_terms(problem), Assignment({}, frozenset()), time_limit=5, workers=1, seed=0, tuning=Tuning()
    )
    solution = outcome.solve.assignment
    assert solution is not None and len(solution.placed) == 3
    gangs_in: dict[int, set[int]] = {}
    for (r, b), c in solution.counts.items():
        if c:
            gangs_in.setdefault(b, set()).add(problem.roles[r].gang)
    assert all(len(g) == 1 for g in gangs_in.values()) and len(gangs_in) == 3


@pytest.mark.parametrize("fix", [repair, repair_by_worth])
def test_a_repair_takes_a_gang_out_of_its_partners_pool(tmp_path: Path, fix: Callable[[Problem, Assignment], Assignment]) -> None:
    """A tentative plan with two exclusive jobs in pool-0 comes out of either repair with them
    in two pools."""
    problem = build_problem(_four_jobs(tmp_path))
    buckets = make_buckets(problem)
    pool0 = buckets.nodes[int(buckets.of_node[0])]
    jobs = [problem.job_groups[j].gangs[0] for j in range(2)]
    counts = {(problem.gangs[g].roles[0], n): 2 for g, n in zip(jobs, pool0)}
    fixed = fix(problem, Assignment(counts, frozenset({0, 1})))
    assert fixed.placed == {0, 1}
    pool_of = problem.domain_array(0)
    used = [{int(pool_of[n]) for (r, n), c in fixed.counts.items() if c and problem.roles[r].gang == g} for g in jobs]
    assert all(len(u) == 1 for u in used) and used[0] != used[1]
    assert np.all(pool_of[pool0] == pool_of[pool0[0]])


def test_a_level_repacked_keeps_out_of_the_pools_the_levels_above_hold(tmp_path: Path) -> None:
    """repack_level places the lower level's jobs on the room the higher one leaves, and out of
    the pool it holds: room for two jobs there is no room for an exclusive one."""
    nodes = [_node(f"p{p}-n{i}", f"pool-{p}") for p in range(3) for i in range(2)]
    jobs = [o for j in range(4) for o in _job(f"job{j}", 2, 4, priority=100 if j == 0 else 10)]
    problem = build_problem(_snapshot(tmp_path, nodes + jobs))
    terms = objective_terms(problem)
    top = next(j for j, jg in enumerate(problem.job_groups) if jg.priority == 100)
    (g,) = problem.job_groups[top].gangs
    held = Assignment({(problem.gangs[g].roles[0], 0): 2}, frozenset({top}))
    lower = frozenset(j for j, jg in enumerate(problem.job_groups) if jg.priority == 10)
    repacked, _ = repack_level(problem, terms, held, lower, 10, time_limit=5, tuning=Tuning())
    assert repacked is not None and len(repacked.placed) == 3
    pool_of = problem.domain_array(0)
    used = {j: {int(pool_of[n]) for (r, n), c in repacked.counts.items() if c and problem.gangs[problem.roles[r].gang].job_group == j}
            for j in repacked.placed}
    assert used[top] == {int(pool_of[0])}
    assert all(len(p) == 1 for p in used.values()) and len(set.union(*used.values())) == 3


@given(st.sets(st.tuples(st.integers(0, 1), st.integers(0, 6), st.integers(0, 6)).filter(lambda t: t[1] < t[2]), max_size=20))
def test_the_cliques_hold_every_pair_and_only_pairs(pairs: set[tuple[int, int, int]]) -> None:
    """Problem.exclusive_cliques: each set's gangs are pairwise kept apart at its level, and
    each pair kept apart is in a set; gangs alike in whom they are kept apart from are one."""
    problem = Problem(  # only ``exclusive`` is read
        resources=(), nodes=(), allocatable=(), free=(), idle=(), roles=(), gangs=(), job_groups=(),
        grouping=Grouping([], []), exclusive=tuple(sorted(pairs)),
    )
    sets = problem.exclusive_cliques()
    assert all((level, a, b) in pairs for level, gangs in sets for a, b in combinations(gangs, 2))
    assert all(any(lv == level and {a, b} <= set(gangs) for lv, gangs in sets) for level, a, b in pairs)
    assert len(sets) <= len(pairs)


@pytest.mark.parametrize("options", OPTIONS[:3], ids=lambda o: f"{o.solver}-{o.model}")
@pytest.mark.parametrize("pools", [1, 2])
def test_child_jobs_of_one_job_group_take_distinct_pools_or_none(tmp_path: Path, options: Options, pools: int) -> None:
    """A PodGroup per child Job sharing a subGroup (seed 004's JobGroup): the two jobs, each
    of which alone fits any pool, take two pools, and with one pool neither is placed."""
    nodes = [_node(f"p{p}-n{i}", f"pool-{p}") for p in range(pools) for i in range(2)]
    jobs = _job("a", 2, 4) + _job("b", 2, 4)
    for obj in jobs:
        if obj["kind"] == "PodGroup":
            obj["spec"]["subGroup"] = "trainer"
    snapshot = _snapshot(tmp_path, nodes + jobs)
    result = plan(snapshot, options)
    assert not [w for w in result.warnings if "not modelled" in w]
    pools_of = _pools(snapshot, result)
    if pools == 2:
        assert all(g.placed for g in result.groups) and pools_of["ml/a"] != pools_of["ml/b"]
        assert all(len(p) == 1 for p in pools_of.values())
    else:
        assert not any(g.placed for g in result.groups) and not result.placements
        assert {g.reason for g in result.groups} == {
            "JobGroup ml/trainer cannot be placed: at most 1 of its 2 members' quorums fit together, even with nothing else "
            f"planned: beside the quorum of ml/a, member ml/b: its pods' required anti-affinity at {POOL} keeps it out of "
            "their domains, where all its candidate nodes are"
        }


_VALUES = st.sampled_from(["a", "b", "c", "7", "12"])
_LABELS = st.dictionaries(st.sampled_from(["x", "y", "z"]), _VALUES, max_size=3)
_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
_REQUIREMENTS = st.builds(
    NodeSelectorRequirement, st.sampled_from(["x", "y", "z"]), st.sampled_from(_OPERATORS),
    st.lists(_VALUES, min_size=0, max_size=3).map(tuple),
)
_TERMS = st.builds(
    PodAffinityTerm,
    st.just({}) | st.dictionaries(st.sampled_from(["x", "y", "z"]), _VALUES, max_size=1) | st.none(),
    st.lists(_REQUIREMENTS, max_size=2).map(tuple),
    st.none() | st.lists(st.sampled_from(["ml", "web"]), min_size=1, max_size=2).map(tuple),
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    st.lists(st.tuples(st.sampled_from(["ml", "web"]), _LABELS), max_size=12),
    st.lists(_TERMS, min_size=1, max_size=4),
)
def test_the_pods_a_term_selects_are_those_it_selects_one_by_one(pods: list[tuple[str, dict[str, str]]], terms: list[PodAffinityTerm]) -> None:
    """The label index that weighs JobSet's terms by groups of alike pods selects exactly the
    pods each term selects asked one at a time, in groups alike in what the term reads, and
    the same groups for the same pods however many terms ask."""
    candidates = [Pod(namespace, f"p{i}", labels=labels) for i, (namespace, labels) in enumerate(pods)]
    selecting = _Selecting()
    for term in terms:
        groups = selecting.groups(term, candidates)
        assert sorted(q.name for group in groups for q in group) == sorted(q.name for q in candidates if _selects(term, q))
        read = {*(term.match_labels or {}), *(r.key for r in term.match_expressions)}
        assert all(len({(q.namespace, *(q.labels.get(k) for k in sorted(read))) for q in group}) == 1 for group in groups)
        assert [id(g) for g in selecting.groups(term, candidates)] == [id(g) for g in groups]

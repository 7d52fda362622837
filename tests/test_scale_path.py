"""The cluster-scale path (objective 1 on node buckets, then nodes) on a cluster big enough to
take it: its plan verifies, never loses to greedy, and is deterministic. Timing is the
benchmark's business (benchmarks/scale.py), not this test's."""

from __future__ import annotations

import json

import pytest

from gangplan.aggregate import expand, make_buckets, solve_buckets
from gangplan.generate import generate
from gangplan.greedy import greedy, repair
from gangplan.loader import load_snapshot
from gangplan.objective import objective_terms
from gangplan.planner import BUCKET_FROM, Options, name_pods, plan
from gangplan.problem import build_problem, candidate_count
from gangplan.render import render
from gangplan.verify import verify


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("scale") / "s.json"
    path.write_text(json.dumps(generate(shape=(2, 4, 4, 16), groups=100, seed=1)))
    return load_snapshot([str(path)])


def test_a_512_node_cluster_takes_the_bucket_path_and_its_plan_holds(cluster) -> None:
    problem = build_problem(cluster)
    assert candidate_count(problem) > BUCKET_FROM
    result = plan(cluster, Options(time_limit=3))
    assert "node buckets" in result.solver.note
    assert verify(cluster, result.placements, result.levels).ok
    baseline = plan(cluster, Options(solver="greedy"))
    primary = [o.name for o in result.solver.objective if o.name.split("@")[0] in ("quorum-demand", "job-groups")]
    values = {o.name: o.value for o in result.solver.objective}
    reference = {o.name: o.value for o in baseline.solver.objective}
    assert [values[n] for n in primary] >= [reference[n] for n in primary]
    again = plan(cluster, Options(time_limit=3))
    assert render(again, "json") == render(result, "json")


def test_buckets_partition_the_usable_nodes_and_repair_makes_a_plan(cluster) -> None:
    problem = build_problem(cluster)
    buckets = make_buckets(problem)
    usable = sorted({n for role in problem.roles for n in role.nodes})
    assert sorted(n for nodes in buckets.nodes for n in nodes) == usable
    for b, nodes in enumerate(buckets.nodes):
        assert all(buckets.of_node[n] == b for n in nodes)
        tors = {problem.domain(buckets.level, n) for n in nodes}
        assert len(tors) == 1  # a bucket never straddles two tors
    terms = objective_terms(problem)
    start = greedy(problem)
    outcome = solve_buckets(problem, terms, start, time_limit=2, workers=1, seed=0)
    assert outcome.whole and outcome.solve.assignment is not None
    tentative = expand(problem, outcome.buckets, outcome.solve.assignment)
    fixed = repair(problem, tentative)
    assert fixed.placed <= outcome.solve.assignment.placed
    assert verify(cluster, name_pods(problem, fixed), problem.tree.levels if problem.tree else ()).ok

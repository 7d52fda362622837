"""Quorum-demand weights (DESIGN objective 1): rounded weights keep the totals of the same
pods equal, so a tie in quorum demand still goes to the JobGroup count, as with exact rationals."""

from __future__ import annotations

import functools
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from gangplan import objective
from gangplan.loader import load_snapshot
from gangplan.planner import Options, plan
from gangplan.problem import build_problem, integer_weights
from gangplan.verify import verify


def _rounded_whole(values: list[Fraction], limit: int) -> list[int]:
    """Each value rounded at the finest scale that fits ``limit``, as one number."""
    return [round(v * Fraction(limit) / sum(values)) for v in values]


def test_rounded_weights_of_the_same_pods_add_up() -> None:
    a, b = Fraction(1, 1_000_021), Fraction(3, 999_983)
    values = [16 * a, 8 * a, 8 * a, b]
    whole = _rounded_whole(values, 2**20)
    assert whole[0] != whole[1] + whole[2]  # rounded whole, these numbers lose the tie
    weights, exact = integer_weights([((a, 16),), ((a, 8),), ((a, 8),), ((b, 1),)], limit=2**20)
    assert not exact and weights[0] == weights[1] + weights[2]
    assert sorted(range(4), key=lambda i: (values[i], i)) == sorted(range(4), key=lambda i: (weights[i], i))
    assert sum(weights) <= 2**20 + 4 * 16  # at most half a unit over per pod


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
            "status": {"allocatable": {"cpu": "33", "memory": "100Gi", "nvidia.com/gpu": "8"}}}


def _gang(name: str, size: int, created: str, cpu: str = "2", running_on: str | None = None) -> list[dict]:
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "ml", "creationTimestamp": created}, "spec": {"minMember": size}}
    pods = []
    for i in range(size):
        spec: dict = {"containers": [{"name": "main", "resources": {"requests": {
            "cpu": cpu, "memory": "3Gi", "nvidia.com/gpu": "1"}}}]}
        if running_on and i == 0:
            spec["nodeName"] = running_on
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{name}-{i}", "namespace": "ml", "labels": {"scheduling.x-k8s.io/pod-group": name},
            "creationTimestamp": created}, "spec": spec, "status": {"phase": "Running" if spec.get("nodeName") else "Pending"}})
    return [group, *pods]


def _snapshot(tmp_path: Path, objects: list[dict]) -> str:
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return str(path)


def test_quorum_demand_is_the_designs_sum_over_resources(tmp_path: Path) -> None:
    # Two pod shapes in one gang, one member running: the quorum is the first minMember members,
    # running ones first (README), summed per resource over the usable allocatable.
    objects = [_node("n0"), _node("n1")] + _gang("mixed", 3, "2024-01-01T00:00:00Z", running_on="n0")
    objects[3]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "5"  # mixed-1: 5 cores
    problem = build_problem(load_snapshot([_snapshot(tmp_path, objects)]))
    (jg,) = problem.job_groups
    cpu, memory, gpu = Fraction(2 + 5 + 2, 66), Fraction(9, 200), Fraction(3, 16)
    assert jg.demand == cpu + memory + gpu
    assert sorted(n for _, n in jg.shares) == [1, 2] and sum(s * n for s, n in jg.shares) == jg.demand


def test_a_tie_in_rounded_quorum_demand_goes_to_the_job_group_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 16 GPUs: one 16-pod gang, or two 8-pod gangs of the same pods: the same quorum demand, so
    # DESIGN's next objective, the number of JobGroups placed, takes the two (queue order would
    # take the large one, created first).
    objects = [_node("n0"), _node("n1")]
    objects += _gang("large", 16, "2024-01-01T00:00:00Z")
    objects += _gang("half-a", 8, "2024-01-02T00:00:00Z") + _gang("half-b", 8, "2024-01-02T00:00:00Z")
    snapshot = load_snapshot([_snapshot(tmp_path, objects)])
    job_groups = build_problem(snapshot).job_groups
    demands = [jg.demand for jg in job_groups]
    # A limit at which the demands are rounded (no common denominator fits) and, rounded whole,
    # the large gang would outweigh the two halves by a unit, deciding the plan on that unit.
    limit = next(
        limit for limit in range(1_000, 100_000)
        if not integer_weights([jg.shares for jg in job_groups], limit=limit)[1]
        and (w := _rounded_whole(demands, limit))[0] > w[1] + w[2]
    )
    monkeypatch.setattr(objective, "integer_weights", functools.partial(integer_weights, limit=limit))
    result = plan(snapshot, Options(time_limit=5))
    placed = {g.key for g in result.groups if g.placed}
    assert placed == {"ml/half-a", "ml/half-b"}
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert result.solver.exact_weights is False


def test_quorum_demand_divides_by_the_room_of_ready_schedulable_nodes_only(tmp_path: Path) -> None:
    """DESIGN objective 1 divides each request by the allocatable of Ready, schedulable nodes.
    A cordoned node rich in cpu and a NotReady one rich in GPUs add nothing to it: counting the
    cordoned node's cpu would make the cpu-bound gang look tiny and the plan take the other one
    (a mutation audit of semantics.node_usable found no test noticing either node)."""
    def node(name: str, cpu: str, gpu: str, **spec: object) -> dict:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec,
                "status": {"allocatable": {"cpu": cpu, "nvidia.com/gpu": gpu}}}

    def gang(name: str, created: str, requests: dict[str, str]) -> list[dict]:
        return [
            {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "ml", "creationTimestamp": created}, "spec": {"minMember": 1}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"{name}-0", "namespace": "ml", "labels": {"scheduling.x-k8s.io/pod-group": name},
                "creationTimestamp": created},
             "spec": {"containers": [{"name": "main", "resources": {"requests": requests}}]}},
        ]

    not_ready = node("not-ready", "1", "1000")
    not_ready["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    objects = [node("n1", "10", "10"), node("cordoned", "1000", "0", unschedulable=True), not_ready]
    # Only one fits n1 (11 cores): cpu-bound 8/10, against 3/10 + 4/10 for the mixed one.
    objects += gang("mixed", "2024-01-01T00:00:00Z", {"cpu": "3", "nvidia.com/gpu": "4"})
    objects += gang("cpu-bound", "2024-01-02T00:00:00Z", {"cpu": "8"})
    snapshot = load_snapshot([_snapshot(tmp_path, objects)])
    demand = {jg.key: jg.demand for jg in build_problem(snapshot).job_groups}
    assert demand == {"ml/mixed": Fraction(3, 10) + Fraction(4, 10), "ml/cpu-bound": Fraction(8, 10)}
    result = plan(snapshot, Options(time_limit=5))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    assert {g.key for g in result.groups if g.placed} == {"ml/cpu-bound"}


def test_exact_weights_scale_by_the_least_common_denominator() -> None:
    """Exact weights are the values times their least common denominator: 1/2 and 1/3 weigh 3
    and 2, and 1/6 + 1/6 weighs as 1/3 does. A scale that is not a multiple of every
    denominator truncates one of them and calls the result exact."""
    half, third, sixth = Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)
    weights, exact = integer_weights([((half, 1),), ((third, 1),), ((sixth, 2),)])
    assert exact and weights == [3, 2, 2]


def test_weights_that_reach_the_limit_exactly_are_still_exact() -> None:
    """The limit bounds the weights' sum; a sum equal to it does not overflow it, so the
    weights stay exact (two halves at limit 2 weigh 1 each, exactly)."""
    assert integer_weights([((Fraction(1, 2), 1),), ((Fraction(1, 2), 1),)], limit=2) == ([1, 1], True)


def test_rounded_weights_round_each_part_to_nearest_and_use_the_whole_limit() -> None:
    """Rounded, each part is rounded to the nearest unit at the finest scale that fits the
    limit (half a unit off at most, per pod), so the weights use the limit's whole resolution:
    a truncating or halved scale would merge totals the limit can still tell apart."""
    a, b, c = Fraction(1, 1_000_003), Fraction(2, 999_983), Fraction(7, 1_000_033)
    parts = [((a, 3),), ((b, 1),), ((c, 2),)]
    limit = 10_000
    weights, exact = integer_weights(parts, limit=limit)
    assert not exact
    total = 3 * a + b + 2 * c
    scale = Fraction(limit) / total
    for (part, times), weight in zip((p[0] for p in parts), weights):
        assert abs(weight - times * part * scale) <= Fraction(times, 2)
    assert abs(sum(weights) - limit) <= Fraction(3 + 1 + 2, 2)


def test_a_rounded_weight_never_drops_a_pod_to_nothing() -> None:
    """A quorum pod with a sliver of the cluster still weighs at least one unit when rounded:
    at zero, placing its JobGroup would add nothing to objective 1, the same total as leaving
    it out, which DESIGN's objective 1 tells apart."""
    tiny, large = Fraction(1, 10**9), Fraction(1, 3)
    weights, exact = integer_weights([((tiny, 1),), ((large, 1),)], limit=1_000)
    assert not exact and weights[0] >= 1 and weights[1] > weights[0]


def test_quorum_demand_takes_running_members_before_pending_ones(tmp_path: Path) -> None:
    """README: quorum demand is the requests of a group's first minMember members, running
    ones first: the running member (5 cores) is in the quorum of two, and only one of the
    two pending ones (2 cores each) joins it."""
    objects = [_node("n0"), _node("n1")] + _gang("mixed", 3, "2024-01-01T00:00:00Z", running_on="n0")
    objects[2]["spec"]["minMember"] = 2
    objects[3]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "5"  # mixed-0, running
    problem = build_problem(load_snapshot([_snapshot(tmp_path, objects)]))
    (jg,) = problem.job_groups
    assert jg.demand == Fraction(5 + 2, 66) + Fraction(6, 200) + Fraction(2, 16)


def test_pods_of_different_requests_with_the_same_share_all_count(tmp_path: Path) -> None:
    """Quorum demand sums every quorum pod's share (DESIGN objective 1): one pod asking a tenth
    of the cpu and one asking a tenth of the memory weigh a fifth together, though their
    shares are equal."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
            "status": {"allocatable": {"cpu": "10", "memory": "10Gi"}}}
    objects = [node] + _gang("pair", 2, "2024-01-01T00:00:00Z")
    objects[2]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1"}
    objects[3]["spec"]["containers"][0]["resources"]["requests"] = {"memory": "1Gi"}
    (jg,) = build_problem(load_snapshot([_snapshot(tmp_path, objects)])).job_groups
    assert jg.demand == Fraction(2, 10) and jg.shares == ((Fraction(1, 10), 2),)

"""DoNotSchedule topologySpreadConstraints (kube-scheduler's PodTopologySpread): the planner's
cap per node at kubernetes.io/hostname (maxSkew + the fewest matching running pods on an
eligible node - those on the node), explain's reason, verify's exact final-state rule at any
topologyKey, and the cases the planner warns about, which verify checks all the same, through
the CLI; every plan of a modelled constraint verified."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import json

from test_gangs import _bindings, _verify_lines, node, pod_group, pods, runner, verified_plan, write

from gangplan.cli import app
from gangplan.explain import _per_node, _pods_bound
from gangplan.loader import load_snapshot
from gangplan import problem as problem_module
from gangplan.plan import Placement
from gangplan.planner import Options, plan, unwarned
from gangplan.problem import build_problem, unheld_spread
from gangplan.semantics import group_pods
from gangplan.verify import verify

_HOSTNAME = "kubernetes.io/hostname"
_ZONE = "topology.kubernetes.io/zone"


def _spread(max_skew: int = 1, key: str = _HOSTNAME, selector: dict | None = None, **more: object) -> dict:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "x"}} if selector is None else selector, **more}


def _gang(count: int, constraint: dict | None = None, name: str = "job", gpus: int = 0, **spec: object) -> list[dict]:
    """A PodGroup of ``count`` pods labelled app=x, each carrying ``constraint``."""
    members = pods(name, count, gpus)
    for pod in members:
        pod["metadata"]["labels"] = {"app": "x"}
        pod["spec"].update(topologySpreadConstraints=[constraint or _spread()], **spec)
    return [pod_group(name, count), *members]


def _running(name: str, on: str, labels: dict[str, str] | None = None, **extra: object) -> dict:
    metadata = {"name": name, "namespace": "ml", "labels": {"app": "x"} if labels is None else labels, **extra}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": on, "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}


def _nodes(count: int, **labels: str) -> list[dict]:
    return [node(f"n{i}", labels=dict(labels)) for i in range(count)]


def plan_of(path: str, *options: str) -> dict:
    """test_gangs' plan_of, each group with the nodes of its placed pods (``on``)."""
    data = verified_plan(path, *options)
    return {g["name"]: {**g, "on": sorted(p["node"] for p in data["placements"] if p["group"] == g["name"])} for g in data["groups"]}


def _on(placed: dict) -> list[str]:
    return list(placed["on"])


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_max_skew_one_puts_a_gang_one_to_a_node_and_three_nodes_are_too_few(tmp_path: Path, solver: str) -> None:
    """With no matching pod running the fewest is 0, so maxSkew 1 allows one a node: 4 pods fit
    on 4 nodes, not on 3, and the reason names the constraint; maxSkew 2 lets two share one."""
    four = plan_of(write(tmp_path, [*_nodes(4), *_gang(4)]), "--solver", solver)["ml/job"]
    assert four["placed"] and _on(four) == ["n0", "n1", "n2", "n3"]
    three = write(tmp_path, [*_nodes(3), *_gang(4)])
    assert not plan_of(three, "--solver", solver)["ml/job"]["placed"]
    said = runner.invoke(app, ["explain", three, "ml/job", "--solver", solver]).stdout
    assert "insufficient topologySpread kubernetes.io/hostname maxSkew=1 ml/app=x (quorum needs 4 pods, 3 free)" in said
    two = plan_of(write(tmp_path, [*_nodes(2), *_gang(4, _spread(2))]), "--solver", solver)["ml/job"]
    assert two["placed"] and _on(two) == ["n0", "n0", "n1", "n1"]


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_running_matching_pods_lower_their_nodes_cap(tmp_path: Path, solver: str) -> None:
    """Two matching pods run on n0 and one on n1, none on n2 (the fewest, 0): maxSkew 2 leaves
    n0 no room, n1 one pod and n2 two. A terminating pod is not counted, nor one of another
    namespace or of other labels, so n3's three such pods leave it its two."""
    objects = [*_nodes(4), _running("r0", "n0"), _running("r1", "n0"), _running("r2", "n1")]
    objects += [_running("gone", "n3", deletionTimestamp="2024-01-01T00:00:00Z"), _running("other", "n3", {"app": "y"})]
    other_namespace = _running("elsewhere", "n3")
    other_namespace["metadata"]["namespace"] = "web"
    fits = plan_of(write(tmp_path, [*objects, other_namespace, *_gang(5, _spread(2))]), "--solver", solver)["ml/job"]
    assert fits["placed"] and _on(fits) == ["n1", "n2", "n2", "n3", "n3"]
    assert not plan_of(write(tmp_path, [*objects, other_namespace, *_gang(6, _spread(2))]), "--solver", solver)["ml/job"]["placed"]


def test_too_few_eligible_nodes_for_min_domains_make_the_fewest_zero(tmp_path: Path) -> None:
    """A matching pod runs on each of 3 nodes, so the fewest is 1 and maxSkew 1 leaves each node
    room for one more; with minDomains 4 (3 eligible nodes) the fewest is 0, and there is none."""
    running = [_running(f"r{i}", f"n{i}") for i in range(3)]
    assert plan_of(write(tmp_path, [*_nodes(3), *running, *_gang(3)]))["ml/job"]["placed"]
    assert plan_of(write(tmp_path, [*_nodes(3), *running, *_gang(3, _spread(1, minDomains=3))]))["ml/job"]["placed"]
    assert not plan_of(write(tmp_path, [*_nodes(3), *running, *_gang(1, _spread(1, minDomains=4))]))["ml/job"]["placed"]


def test_node_affinity_policy_decides_which_nodes_the_fewest_is_taken_over(tmp_path: Path) -> None:
    """The gang may go only to pool=a nodes, which each run a matching pod; the pool=b node runs
    none. Under Honor (the default) the fewest is over pool=a nodes, 1, so each takes one more;
    under Ignore the pool=b node counts too, the fewest is 0, and no pool=a node has room."""
    objects = [node("a0", labels={"pool": "a"}), node("a1", labels={"pool": "a"}), node("b0", labels={"pool": "b"})]
    objects += [_running("r0", "a0"), _running("r1", "a1")]
    honor = plan_of(write(tmp_path, [*objects, *_gang(2, nodeSelector={"pool": "a"})]))["ml/job"]
    assert honor["placed"] and _on(honor) == ["a0", "a1"]
    ignore = _gang(2, _spread(1, nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "a"})
    assert not plan_of(write(tmp_path, [*objects, *ignore]))["ml/job"]["placed"]


def test_node_taints_policy_honor_leaves_untolerated_nodes_out_of_the_fewest(tmp_path: Path) -> None:
    """A tainted node the gang does not tolerate runs no matching pod: under the default Ignore
    it counts, the fewest is 0, and the two nodes running one each have no room; under Honor
    it does not, and they take one each."""
    taint = [{"key": "gpu", "value": "h100", "effect": "NoSchedule"}]
    objects = [*_nodes(2), node("t0", taints=taint), _running("r0", "n0"), _running("r1", "n1")]
    assert not plan_of(write(tmp_path, [*objects, *_gang(2)]))["ml/job"]["placed"]
    honor = plan_of(write(tmp_path, [*objects, *_gang(2, _spread(1, nodeTaintsPolicy="Honor"))]))["ml/job"]
    assert honor["placed"] and _on(honor) == ["n0", "n1"]


def test_match_label_keys_fold_into_the_selector(tmp_path: Path) -> None:
    """matchLabelKeys: [job] selects pods of the pod's own job only: a running pod of another
    job on n0 does not count, so both of this job's pods go one to a node on 2 nodes."""
    gang = _gang(2, _spread(1, selector={"matchLabels": {"app": "x"}}, matchLabelKeys=["job"]))
    for pod in gang[1:]:
        pod["metadata"]["labels"]["job"] = "mine"
    other = _running("r0", "n0", {"app": "x", "job": "theirs"})
    placed = plan_of(write(tmp_path, [*_nodes(2), other, *gang]))["ml/job"]
    assert placed["placed"] and _on(placed) == ["n0", "n1"]
    plain = _gang(2)
    assert not plan_of(write(tmp_path, [*_nodes(2), other, *plain]))["ml/job"]["placed"]


def test_verify_checks_the_final_state_rule(tmp_path: Path) -> None:
    """verify reads the rule as the state once bound: on n0 two placed pods with none on n1 is a
    skew of 2; two on n0 and one on n1 is within maxSkew 1 of a fewest that the placement
    itself raised to 1 (the planner, taking the fewest from running pods, would not make it,
    but kube-scheduler binding them one by one could), and so is accepted."""
    snapshot = write(tmp_path, [*_nodes(2), *_gang(3)])
    broken = runner.invoke(app, ["verify", snapshot, "--plan", _bindings(tmp_path, {"job-0": "n0", "job-1": "n0"})])
    assert broken.exit_code == 1
    assert [line for line in broken.stdout.splitlines() if line.startswith("topology-spread")] == [
        f"topology-spread ml/job-{i}: its topologySpreadConstraint at kubernetes.io/hostname (maxSkew 1) counts 2 "
        "matching pods on node n0, over maxSkew plus the fewest on an eligible node (0)"
        for i in (0, 1)
    ]
    kept = runner.invoke(app, ["verify", snapshot, "--plan", _bindings(tmp_path, {"job-0": "n0", "job-1": "n0", "job-2": "n1"})])
    assert not [line for line in kept.stdout.splitlines() if line.startswith("topology-spread")], kept.stdout
    assert not plan_of(snapshot)["ml/job"]["placed"]  # the planner's own rule is stricter


def test_verify_counts_running_pods_and_min_domains(tmp_path: Path) -> None:
    """A running matching pod counts on its node: one placed beside it on n0 makes 2 where n1
    has 0. With one running on each node, one more on n0 is within maxSkew 1 of the fewest,
    1, until minDomains 3 over 2 nodes makes the fewest 0."""
    snapshot = write(tmp_path, [*_nodes(2), _running("r0", "n0"), *_gang(1)])
    broken = runner.invoke(app, ["verify", snapshot, "--plan", _bindings(tmp_path, {"job-0": "n0"})])
    assert [line.split(":")[0] for line in broken.stdout.splitlines() if line.startswith("topology-spread")] == [
        "topology-spread ml/job-0"
    ]
    assert runner.invoke(app, ["verify", snapshot, "--plan", _bindings(tmp_path, {"job-0": "n1"})]).exit_code == 0
    both = [*_nodes(2), _running("r0", "n0"), _running("r1", "n1")]
    beside = _bindings(tmp_path, {"job-0": "n0"})
    assert runner.invoke(app, ["verify", write(tmp_path, [*both, *_gang(1)]), "--plan", beside]).exit_code == 0
    domains = write(tmp_path, [*both, *_gang(1, _spread(1, minDomains=3))])
    assert runner.invoke(app, ["verify", domains, "--plan", beside]).exit_code == 1
    ample = write(tmp_path, [*both, *_gang(1, _spread(2, minDomains=3))])
    assert runner.invoke(app, ["verify", ample, "--plan", beside]).exit_code == 0


def test_verify_applies_the_node_policies_to_its_eligible_nodes(tmp_path: Path) -> None:
    """Under Honor the pool=b node, which the pod may not go to, is not eligible: one placed
    pod beside a running one on a0 is within maxSkew 1 of a1's one; under Ignore b0's none
    is the fewest, and it is not."""
    objects = [node("a0", labels={"pool": "a"}), node("a1", labels={"pool": "a"}), node("b0", labels={"pool": "b"})]
    objects += [_running("r0", "a0"), _running("r1", "a1")]
    honor = write(tmp_path, [*objects, *_gang(1, nodeSelector={"pool": "a"})])
    assert runner.invoke(app, ["verify", honor, "--plan", _bindings(tmp_path, {"job-0": "a0"})]).exit_code == 0
    ignore = write(tmp_path, [*objects, *_gang(1, _spread(1, nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "a"})])
    assert runner.invoke(app, ["verify", ignore, "--plan", _bindings(tmp_path, {"job-0": "a0"})]).exit_code == 1


def test_a_gangs_own_max_skew_is_a_cap_on_its_roles_not_a_column(tmp_path: Path) -> None:
    """maxSkew k with no matching pod running lets k of the group's pods on each node (the
    fewest is 0), so it is a cap of k a node on its roles, as a PodGroup's own anti-affinity
    term is one of one (a column each costs time at scale); a running matching pod (rooms that
    differ by node) or a selector two PodGroups share keep the column."""
    def column_and_apart(objects: list[dict]) -> tuple[bool, set[tuple[str, int]]]:
        problem = build_problem(load_snapshot([write(tmp_path, objects)]))
        return any(r.startswith("topologySpread") for r in problem.resources), {(role.apart, role.apart_cap) for role in problem.roles}

    def named(skew: int) -> str:
        return f"topologySpread kubernetes.io/hostname maxSkew={skew} ml/app=x"

    assert column_and_apart([*_nodes(4), *_gang(4)]) == (False, {(named(1), 1)})
    assert column_and_apart([*_nodes(4), *_gang(4, _spread(2))]) == (False, {(named(2), 2)})
    assert column_and_apart([*_nodes(4), *_gang(4), _running("r0", "n0")]) == (True, {("", 1)})
    assert column_and_apart([*_nodes(4), *_gang(2), *_gang(2, name="other")]) == (True, {("", 1)})


@pytest.mark.parametrize("solver", ["greedy", "cp-sat"])
def test_a_cap_of_max_skew_two_plans_as_its_column(tmp_path: Path, solver: str) -> None:
    """The cap of two a node plans as the column it replaces: five pods of maxSkew 2 on three
    roomy nodes go two, two and one (the column, forced, the same), and on two a gang of five
    is not placed, told why in the column's words."""
    def plans(objects: list[dict], columns: bool) -> tuple[list[int], list[str]]:
        snapshot = load_snapshot([write(tmp_path, objects)])
        with pytest.MonkeyPatch.context() as patch:
            if columns:
                patch.setattr(problem_module, "_private_terms", lambda *_: {})
            assert any(role.apart for role in build_problem(snapshot).roles) is not columns
            result = plan(snapshot, Options(solver=solver))
        assert verify(snapshot, result.placements, result.topology_levels()).ok
        per_node = Counter(p.node for p in result.placements)
        return sorted(per_node.values()), [g.reason for g in result.groups]

    three = [*_nodes(3), *_gang(5, _spread(2))]
    assert plans(three, False) == plans(three, True) == ([1, 2, 2], [""])
    two = [*_nodes(2), *_gang(5, _spread(2))]
    capped = plans(two, False)
    assert capped == plans(two, True)
    assert capped[0] == [] and capped[1][0].startswith(
        "insufficient topologySpread kubernetes.io/hostname maxSkew=2 ml/app=x (quorum needs 5 pods, 4 free)"
    )


@pytest.mark.parametrize("options", [{"solver": "greedy"}, {}, {"model": "buckets"}], ids=["greedy", "cp-sat", "buckets"])
def test_a_cap_of_max_skew_two_holds_over_a_groups_two_kinds_of_pod(tmp_path: Path, options: dict) -> None:
    """A gang whose pods differ in size (two roles) under one maxSkew 2 constraint: the cap is
    on both roles together, two pods a node, so four go two to each of two nodes, the larger
    pod beside a smaller one, CP-SAT's model holding it (status not GREEDY, the fallback to
    greedy's plan when the model's is worse); five on two nodes are not placed."""
    def placed(count: int) -> list[int]:
        objects = [*_nodes(2), *_gang(count, _spread(2))]
        objects[3]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
        snapshot = load_snapshot([write(tmp_path, objects)])
        assert len({role.apart for role in build_problem(snapshot).roles}) == 1 < len(build_problem(snapshot).roles)
        result = plan(snapshot, Options(**options))
        assert verify(snapshot, result.placements, result.topology_levels()).ok
        assert (result.solver.status == "GREEDY") is (options == {"solver": "greedy"})
        return sorted(Counter(p.node for p in result.placements).values())

    assert placed(4) == [2, 2]
    assert placed(5) == []


def test_explains_bounds_admit_two_pods_a_node_of_a_groups_two_kinds(tmp_path: Path) -> None:
    """explain's bounds on the pods a room holds, which decide when its count stops searching,
    take the cap of two a node over both kinds of pod: four on two nodes, two on each, where
    one a node would bound them at two and call short a group that fits."""
    objects = [*_nodes(2), *_gang(4, _spread(2))]
    objects[3]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    problem = build_problem(load_snapshot([write(tmp_path, objects)]))
    roles = list(problem.gangs[0].roles)
    free = problem.matrix("free")
    assert len(roles) == 2 and _pods_bound(problem, roles, free, None, 0) == 4
    kinds = [(r, problem.roles[r].nodes, problem.roles[r].caps) for r in roles]
    assert _per_node(problem, kinds, free)[1].tolist() == [2, 2]


def _warned(path: str) -> list[str]:
    result = runner.invoke(app, ["plan", path])
    assert result.exit_code == 0, result.output
    return [line for line in result.stderr.splitlines() if "topologySpread" in line]


def _planned(tmp_path: Path, snapshot: str, *options: str) -> dict[str, str]:
    """The nodes ``plan -o json`` binds each pod to (by name), from a run that succeeds: a plan
    verify faults on a constraint warned about is no bug in gangplan."""
    result = runner.invoke(app, ["plan", snapshot, "-o", "json", *options])
    assert result.exit_code == 0, result.output
    assert "bug in gangplan" not in result.output
    return {b["metadata"]["name"]: b["target"]["name"] for b in json.loads(result.stdout)["items"]}


def test_constraints_not_modelled_are_warned_about_and_checked(tmp_path: Path) -> None:
    """A zone constraint, one whose selector matches a pending pod not carrying it, and one a
    carrier does not match are warned about; the plan may break them, and verify says where it
    does. A ScheduleAnyway one, or a hostname one on a job's own pods, is not warned about."""
    zone = _gang(2, _spread(1, _ZONE))
    bare = write(tmp_path, [*_nodes(1), *zone])
    assert _warned(bare) == [
        "warning: topologySpreadConstraints with DoNotSchedule at a topologyKey other than kubernetes.io/hostname is not "
        "modelled, so the plan may break it: pod ml/job-0, pod ml/job-1 ask for it"
    ]
    assert _planned(tmp_path, bare) == {"job-0": "n0", "job-1": "n0"}  # n0 has no zone: kube-scheduler refuses both
    assert _verify_lines(tmp_path, bare, {"job-0": "n0", "job-1": "n0"}, "topology-spread") == (1, [
        f"topology-spread ml/job-{i}: its topologySpreadConstraint at {_ZONE} (maxSkew 1) needs the key, and node n0 has "
        f"no {_ZONE} label (kube-scheduler: missing required label)"
        for i in (0, 1)
    ])
    # n1 has no GPU for them, yet counts 0: both on n0 break the rule, which the plan may do.
    loose = [*_gang(2, gpus=1), *pods("other", 1, 1)]
    loose[-1]["metadata"]["labels"] = {"app": "x"}
    snapshot = write(tmp_path, [node("n0"), node("n1", gpus=0), *loose])
    assert _warned(snapshot) == [
        "warning: topologySpreadConstraints with DoNotSchedule at kubernetes.io/hostname between pending pods that do not "
        "all carry the constraint and match its labelSelector is not modelled, so the plan may break it: pod ml/job-0, "
        "pod ml/job-1 ask for it"
    ]
    placed = _planned(tmp_path, snapshot)
    assert placed == {"job-0": "n0", "job-1": "n0", "other-0": "n0"}  # planned as without it
    assert _verify_lines(tmp_path, snapshot, placed, "topology-spread") == (1, [
        f"topology-spread ml/job-{i}: its topologySpreadConstraint at kubernetes.io/hostname (maxSkew 1) counts 3 "
        "matching pods on node n0, over maxSkew plus the fewest on an eligible node (0)"
        for i in (0, 1)
    ])
    unmatched = _gang(2, _spread(1, selector={"matchLabels": {"app": "y"}}))
    assert "pod ml/job-0, pod ml/job-1 ask for it" in _warned(write(tmp_path, [*_nodes(1), *unmatched]))[0]
    soft = _gang(2, {**_spread(), "whenUnsatisfiable": "ScheduleAnyway"})
    assert _warned(write(tmp_path, [*_nodes(1), *soft])) == []
    assert _warned(write(tmp_path, [*_nodes(2), *_gang(2)])) == []


def _zones(**zones: str) -> list[dict]:
    """A node per keyword, in the zone its value names ('' for none: a node without the key)."""
    return [node(name, labels={_ZONE: zone} if zone else {}) for name, zone in zones.items()]


def _zone_line(pod: str, count: int, zone: str, on: str, fewest: int, max_skew: int = 1) -> str:
    return (
        f"topology-spread ml/{pod}: its topologySpreadConstraint at {_ZONE} (maxSkew {max_skew}) counts {count} matching "
        f"pods in {_ZONE}={zone}, where node {on} is, over maxSkew plus the fewest in an eligible domain ({fewest})"
    )


@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_a_gang_with_a_zone_spread_is_planned_warned_about_and_verify_names_its_pods_over(tmp_path: Path, solver: str) -> None:
    """zone b's one node has a taint the gang does not tolerate, so both its pods go to zone a;
    under nodeTaintsPolicy Ignore (the default) zone b is a domain with none, and two in zone a
    is over maxSkew 1. The planner does not model zones: it plans the gang, warns, and does not
    call the plan a bug; verify names both pods."""
    taint = [{"key": "gpu", "value": "h100", "effect": "NoSchedule"}]
    objects = [*_zones(a0="a", a1="a"), node("b0", labels={_ZONE: "b"}, taints=taint), *_gang(2, _spread(1, _ZONE))]
    snapshot = write(tmp_path, objects)
    assert _warned(snapshot) == [
        "warning: topologySpreadConstraints with DoNotSchedule at a topologyKey other than kubernetes.io/hostname is not "
        "modelled, so the plan may break it: pod ml/job-0, pod ml/job-1 ask for it"
    ]
    placed = _planned(tmp_path, snapshot, "--solver", solver)
    assert set(placed) == {"job-0", "job-1"} and set(placed.values()) <= {"a0", "a1"}
    assert _verify_lines(tmp_path, snapshot, placed, "topology-spread") == (
        1, [_zone_line(name, 2, "a", placed[name], 0) for name in sorted(placed)]
    )
    # The plan says it breaks the rule it warned of, and for whom; where it keeps it, nothing.
    told = "warning: the plan breaks topology-spread, warned about as not modelled, for pod ml/job-0, pod ml/job-1"
    assert told in runner.invoke(app, ["plan", snapshot, "--solver", solver]).stderr
    within = write(tmp_path, [*objects[:3], *_gang(2, _spread(2, _ZONE))])
    assert "the plan breaks" not in runner.invoke(app, ["plan", within, "--solver", solver]).stderr


def test_verify_holds_a_zone_spread_to_max_skew_over_the_fewest_zone(tmp_path: Path) -> None:
    """Two pods in zone a and none in b is a skew of 2, over maxSkew 1; two in a and one in b is
    within it. maxSkew 2 lets two in a with none in b through, not three."""
    snapshot = write(tmp_path, [*_zones(a0="a", a1="a", b0="b"), *_gang(3, _spread(1, _ZONE))])
    assert _verify_lines(tmp_path, snapshot, {"job-0": "a0", "job-1": "a1"}, "topology-spread") == (
        1, [_zone_line("job-0", 2, "a", "a0", 0), _zone_line("job-1", 2, "a", "a1", 0)]
    )
    assert _verify_lines(tmp_path, snapshot, {"job-0": "a0", "job-1": "a1", "job-2": "b0"}, "topology-spread") == (0, [])
    two = write(tmp_path, [*_zones(a0="a", a1="a", b0="b"), *_gang(2, _spread(2, _ZONE))])
    assert _verify_lines(tmp_path, two, {"job-0": "a0", "job-1": "a1"}, "topology-spread") == (0, [])
    three = write(tmp_path, [*_zones(a0="a", a1="a", b0="b"), *_gang(3, _spread(2, _ZONE))])
    assert _verify_lines(tmp_path, three, {"job-0": "a0", "job-1": "a1", "job-2": "a0"}, "topology-spread") == (
        1, [_zone_line("job-0", 3, "a", "a0", 0, 2), _zone_line("job-1", 3, "a", "a1", 0, 2), _zone_line("job-2", 3, "a", "a0", 0, 2)]
    )


def test_verify_counts_running_pods_in_a_zone_unless_terminating_and_min_domains(tmp_path: Path) -> None:
    """A matching pod running in zone a counts there: one placed in a beside it is 2 over b's 0.
    A terminating one does not count. With one running in each zone, one more in a is within
    maxSkew 1 of the fewest, 1, until minDomains 3 over 2 zones makes the fewest 0."""
    zones = _zones(a0="a", a1="a", b0="b")
    running = write(tmp_path, [*zones, _running("r0", "a0"), *_gang(1, _spread(1, _ZONE))])
    assert _verify_lines(tmp_path, running, {"job-0": "a1"}, "topology-spread") == (1, [_zone_line("job-0", 2, "a", "a1", 0)])
    assert _verify_lines(tmp_path, running, {"job-0": "b0"}, "topology-spread") == (0, [])
    going = _running("r0", "a0", deletionTimestamp="2024-01-01T00:00:00Z")
    terminating = write(tmp_path, [*zones, going, *_gang(1, _spread(1, _ZONE))])
    assert _verify_lines(tmp_path, terminating, {"job-0": "a1"}, "topology-spread") == (0, [])
    both = [*zones, _running("r0", "a0"), _running("r1", "b0")]
    assert _verify_lines(tmp_path, write(tmp_path, [*both, *_gang(1, _spread(1, _ZONE))]), {"job-0": "a1"}, "topology-spread") == (0, [])
    domains = write(tmp_path, [*both, *_gang(1, _spread(1, _ZONE, minDomains=3))])
    assert _verify_lines(tmp_path, domains, {"job-0": "a1"}, "topology-spread") == (1, [_zone_line("job-0", 2, "a", "a1", 0)])


def test_verify_faults_a_node_without_the_key_and_counts_no_domain_there(tmp_path: Path) -> None:
    """A pod on a node without the zone label fails its zone constraint (kube-scheduler: missing
    required label); that node is no domain, so two pods in zone a, the only zone, are within
    maxSkew 1 of its own 2."""
    snapshot = write(tmp_path, [*_zones(a0="a", bare=""), *_gang(2, _spread(1, _ZONE))])
    assert _verify_lines(tmp_path, snapshot, {"job-0": "a0", "job-1": "bare"}, "topology-spread") == (1, [
        f"topology-spread ml/job-1: its topologySpreadConstraint at {_ZONE} (maxSkew 1) needs the key, and node bare has "
        f"no {_ZONE} label (kube-scheduler: missing required label)"
    ])
    assert _verify_lines(tmp_path, snapshot, {"job-0": "a0", "job-1": "a0"}, "topology-spread") == (0, [])


def test_verify_counts_only_nodes_with_every_key_of_the_pods_constraints(tmp_path: Path) -> None:
    """A matching pod runs on a0 and on a1, and one is placed on a0: 2 over the bare node's 0
    breaks a hostname constraint alone. A pod that also carries a zone constraint counts only
    nodes with both keys (kube-scheduler's PreFilter), so bare is no domain of its hostname one
    either: 2 is within maxSkew 1 of a1's 1, and zone a, with all 3, is the only zone."""
    objects = [*_zones(a0="a", a1="a", bare=""), _running("r0", "a0"), _running("r1", "a1")]
    alone = write(tmp_path, [*objects, *_gang(1)])
    assert _verify_lines(tmp_path, alone, {"job-0": "a0"}, "topology-spread") == (1, [
        "topology-spread ml/job-0: its topologySpreadConstraint at kubernetes.io/hostname (maxSkew 1) counts 2 "
        "matching pods on node a0, over maxSkew plus the fewest on an eligible node (0)"
    ])
    gang = _gang(1)
    gang[1]["spec"]["topologySpreadConstraints"].append(_spread(1, _ZONE))
    assert _verify_lines(tmp_path, write(tmp_path, [*objects, *gang]), {"job-0": "a0"}, "topology-spread") == (0, [])


def test_verify_takes_the_zones_the_node_affinity_policy_lets_in(tmp_path: Path) -> None:
    """The gang may go only to pool=x nodes, in zones a and b, which each run a matching pod;
    zone c's node is pool=y and runs none. Under Honor (the default) zone c is no domain, so one
    placed in a is within maxSkew 1 of b's 1; under Ignore zone c counts, its 0 is the fewest,
    and 2 in a is over."""
    objects = [node("a0", labels={_ZONE: "a", "pool": "x"}), node("b0", labels={_ZONE: "b", "pool": "x"}),
               node("c0", labels={_ZONE: "c", "pool": "y"}), _running("r0", "a0"), _running("r1", "b0")]
    honor = write(tmp_path, [*objects, *_gang(1, _spread(1, _ZONE), nodeSelector={"pool": "x"})])
    assert _verify_lines(tmp_path, honor, {"job-0": "a0"}, "topology-spread") == (0, [])
    ignore = write(tmp_path, [*objects, *_gang(1, _spread(1, _ZONE, nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "x"})])
    assert _verify_lines(tmp_path, ignore, {"job-0": "a0"}, "topology-spread") == (1, [_zone_line("job-0", 2, "a", "a0", 0)])


def test_verify_checks_a_loose_hostname_constraint(tmp_path: Path) -> None:
    """A carrier its selector does not match is not counted itself: two app=y pods running on
    n0 are over maxSkew 1 of n1's none where it is placed beside them, not on n1. A pending pod
    the selector matches that does not carry it counts, and is not held to it: other-0 beside
    job-0 on n0 makes 2 there, over n2's none, which job-0 breaks and other-0 does not."""
    unmatched = _gang(1, _spread(1, selector={"matchLabels": {"app": "y"}}))
    running = [_running("r0", "n0", {"app": "y"}), _running("r1", "n0", {"app": "y"})]
    snapshot = write(tmp_path, [*_nodes(2), *running, *unmatched])
    assert _verify_lines(tmp_path, snapshot, {"job-0": "n0"}, "topology-spread") == (1, [
        "topology-spread ml/job-0: its topologySpreadConstraint at kubernetes.io/hostname (maxSkew 1) counts 2 "
        "matching pods on node n0, over maxSkew plus the fewest on an eligible node (0)"
    ])
    assert _verify_lines(tmp_path, snapshot, {"job-0": "n1"}, "topology-spread") == (0, [])
    other = pods("other", 1, 0)
    other[0]["metadata"]["labels"] = {"app": "x"}
    matched = write(tmp_path, [*_nodes(3), *_gang(2), *other])
    assert _verify_lines(tmp_path, matched, {"job-0": "n0", "other-0": "n0", "job-1": "n1"}, "topology-spread") == (1, [
        "topology-spread ml/job-0: its topologySpreadConstraint at kubernetes.io/hostname (maxSkew 1) counts 2 "
        "matching pods on node n0, over maxSkew plus the fewest on an eligible node (0)"
    ])
    assert _verify_lines(tmp_path, matched, {"job-0": "n0", "other-0": "n1", "job-1": "n2"}, "topology-spread") == (0, [])


def test_the_last_check_passes_over_a_warned_constraint_alone_not_the_same_pods_held_one(tmp_path: Path) -> None:
    """planner.unwarned: x's pods each carry a zone constraint, warned about and not modelled,
    and a node constraint, held (maxSkew 1). Two of them in one zone of two break the zone
    one only, which is the plan's known gap; two on one node break the node one too, which
    is a bug although the same pods carry a warned constraint."""
    members = pods("x", 2, 0)
    for pod in members:
        pod["metadata"]["labels"] = {"app": "x"}
        pod["spec"]["topologySpreadConstraints"] = [_spread(1, _ZONE), _spread(1)]
    nodes = [node("a0", labels={_ZONE: "a"}), node("a1", labels={_ZONE: "a"}), node("b0", labels={_ZONE: "b"})]
    snapshot = load_snapshot([write(tmp_path, [*nodes, pod_group("x", 2), *members])])
    grouping = group_pods(snapshot)
    assert unheld_spread(grouping) == {("ml/x-0", 0), ("ml/x-1", 0)}

    def broken(**on: str) -> list[str]:
        found = verify(snapshot, [Placement("ml", name.replace("_", "-"), there) for name, there in on.items()]).violations
        assert found and {v.rule for v in found} == {"topology-spread"}
        return sorted(f"{v.subject}: {v.message}" for v in unwarned(grouping, (), found))

    assert broken(x_0="a0", x_1="a1") == []
    assert broken(x_0="a0", x_1="a0") == [
        f"ml/x-{i}: its topologySpreadConstraint at {_HOSTNAME} (maxSkew 1) counts 2 matching pods on node a0, over "
        "maxSkew plus the fewest on an eligible node (0)" for i in (0, 1)
    ]

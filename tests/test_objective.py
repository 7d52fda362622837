"""The objective terms of DESIGN section 3 (objective.py): which terms there are, in what
order and sense, what each counts, and the bound each one's ``upper`` claims."""

from __future__ import annotations

from dataclasses import replace

from gangplan.greedy import greedy
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, Snapshot
from gangplan.objective import Assignment, objective_terms, term_value, used_domains
from gangplan.planner import Options, plan
from gangplan.problem import build_problem


def gang(name: str, size: int, min_member: int, cpu: int, created: str, running_on: str | None = None) -> tuple[PodGroup, list[Pod]]:
    """A PodGroup of ``size`` alike pods, its first one running on ``running_on`` if given."""
    group = PodGroup("ml", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=min_member, creation_timestamp=created)
    pods = [
        Pod("ml", f"{name}-{i}", labels={"scheduling.x-k8s.io/pod-group": name}, containers=(Container("main", {"cpu": cpu}),),
            creation_timestamp=created, node_name=running_on if running_on and not i else None,
            phase=PodPhase.RUNNING if running_on and not i else PodPhase.PENDING)
        for i in range(size)
    ]
    return group, pods


def snapshot(nodes: list[Node], *gangs: tuple[PodGroup, list[Pod]]) -> Snapshot:
    return Snapshot(nodes=tuple(nodes), pods=tuple(p for _, pods in gangs for p in pods), pod_groups=tuple(g for g, _ in gangs))


def node(name: str, cpu: int, labels: dict[str, str] | None = None) -> Node:
    return Node(name, labels or {}, {"cpu": cpu, "pods": 110})


def test_objective_1_is_demand_then_count_then_queue_order_per_level_from_the_highest() -> None:
    """DESIGN objective 1, per priority level from the highest: quorum demand, the JobGroup
    count, ties to queue order; these alone are objective 1 (the reported gap is about them),
    and pods beyond minMember follow, nodes newly opened last (the only one minimised here)."""
    low, high = gang("low", 1, 1, 1000, "2024-01-01T00:00:00Z"), gang("high", 1, 1, 1000, "2024-01-02T00:00:00Z")
    high = (high[0], [replace(p, priority=100) for p in high[1]])
    low = (low[0], [replace(p, priority=10) for p in low[1]])
    terms = objective_terms(build_problem(snapshot([node("n0", 4000)], low, high)))
    names = [t.name for t in terms]
    assert names == [
        "quorum-demand@100", "job-groups@100", "queue-order@100",
        "quorum-demand@10", "job-groups@10", "queue-order@10",
        "extra-pods", "nodes-opened",
    ]
    assert [t.name for t in terms if t.primary] == names[:6]
    assert [t.sense for t in terms] == ["maximize"] * 7 + ["minimize"]


def test_span_and_rank_terms_go_preferred_then_enclosing_then_compact_then_rank_largest_level_first() -> None:
    """DESIGN objectives 3 and 4: spans at preferred levels, larger first (one rack best, else as
    few racks inside as few zones as can be), then compactness below down to nodes, then the
    sort-rule rank, larger level first; nodes newly opened last. (A mutation audit swapped the
    kinds and reversed the levels unseen.)"""
    nodes = [node(f"n{i}", 4000, {"zone": f"z{i // 4}", "rack": f"r{i // 2}"}) for i in range(8)]
    gangs = []
    for name, preferred in (("racked", ("rack",)), ("zoned", ("zone", "rack"))):
        group, pods = gang(name, 2, 2, 1000, "2024-01-01T00:00:00Z")
        gangs.append((replace(group, preferred_topology=preferred), pods))
    terms = objective_terms(build_problem(snapshot(nodes, *gangs), levels=["zone", "rack"]))
    assert [t.name for t in terms if not t.primary] == [
        "extra-pods",
        "preferred-spans@zone", "preferred-spans@rack",
        "enclosing-spans@zone",
        "compact-spans@node",
        "sort-rank@zone", "sort-rank@rack",
        "nodes-opened",
    ]


def test_a_tie_on_demand_and_count_goes_to_the_group_first_in_queue_order() -> None:
    """DESIGN objective 1: remaining ties go to queue order. Two alike groups, room for one:
    the one created first is placed (no later objective tells them apart)."""
    result = plan(snapshot([node("n0", 4000)], gang("late", 1, 1, 4000, "2024-01-02T00:00:00Z"),
                           gang("early", 1, 1, 4000, "2024-01-01T00:00:00Z")), Options(time_limit=5))
    assert {g.key for g in result.groups if g.placed} == {"ml/early"}


def test_extra_pods_counts_only_the_pods_beyond_min_member() -> None:
    """DESIGN objective 2 is the pods placed beyond minMember: a group of 3 with minMember 2,
    all placed, has 1; a group whose running member meets its minMember has both pending ones."""
    result = plan(snapshot([node("n0", 8000)], gang("a", 3, 2, 1000, "2024-01-01T00:00:00Z"),
                           gang("b", 3, 1, 1000, "2024-01-02T00:00:00Z", running_on="n0")), Options(time_limit=5))
    assert all(g.placed for g in result.groups) and len(result.placements) == 5
    assert {o.name: o.value for o in result.solver.objective}["extra-pods"] == 1 + 2


def test_no_plan_takes_a_term_past_its_upper() -> None:
    """``upper`` bounds a term's value (stage weights and term bounds rely on it). Here every
    pending pod is placed and the running member meets the minMember, so extra pods reach
    every pending pod: the most the term can be."""
    problem = build_problem(snapshot([node("n0", 8000)], gang("b", 3, 1, 1000, "2024-01-02T00:00:00Z", running_on="n0")))
    terms = objective_terms(problem)
    start = greedy(problem)
    values = {t.name: term_value(t, problem, start) for t in terms}
    assert values["extra-pods"] == 2
    assert all(abs(values[t.name]) <= t.upper for t in terms), [(t.name, values[t.name], t.upper) for t in terms]


def test_a_span_or_rank_term_is_the_sum_of_the_weights_of_the_domains_used() -> None:
    """Terms are linear (Term): a span or sort-rank term's value in a plan is the sum of its
    weight for each (gang, level, domain) the plan uses, as the solver's objective counts it.
    Six one-node pods over three racks: their three ranks add up, whatever the greedy
    scorer's shortcut (a mutation audit took their largest unseen)."""
    nodes = [node(f"n{i}", 4000, {"zone": f"z{i // 4}", "rack": f"r{i // 2}"}) for i in range(8)]
    group, pods = gang("wide", 6, 6, 4000, "2024-01-01T00:00:00Z")
    problem = build_problem(snapshot(nodes, (replace(group, preferred_topology=("rack",)), pods)), levels=["zone", "rack"])
    (role,) = problem.roles
    chosen = role.nodes.tolist()[:6]
    start = Assignment({(0, n): 1 for n in chosen}, frozenset({0}))
    used = used_domains(problem, start.counts)
    for term in objective_terms(problem):
        if term.uses:
            weights = [term.uses[t] for t in used if t in term.uses]
            assert term_value(term, problem, start) == sum(weights), term.name
    rank = next(t for t in objective_terms(problem) if t.name == "sort-rank@rack")
    assert len([t for t in used if t in rank.uses and rank.uses[t]]) >= 2  # more than one nonzero rank summed

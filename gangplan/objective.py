"""The lexicographic objective of DESIGN section 3, as terms both placers are scored by.

A plan is compared to another by the tuple of its term values (minimised terms negated),
so "never worse than greedy" is one tuple comparison, whichever placer made each plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .problem import Problem, integer_weights

Counts = Mapping[tuple[int, int], int]  # (role, node) -> pods placed


@dataclass(frozen=True, slots=True)
class Assignment:
    """Pods per (role, node), and the JobGroups whose quorum it meets."""

    counts: Mapping[tuple[int, int], int]
    placed: frozenset[int]


@dataclass(frozen=True, slots=True)
class Term:
    """One objective term: ``value = sum(coef[j] * placed[j]) + pods_coef * pods + ...``.

    Terms are linear in three kinds of quantities the solver has variables for: JobGroups
    placed, pods placed per role, and nodes opened.
    """

    name: str
    sense: str  # maximize | minimize
    job_groups: Mapping[int, int] = field(default_factory=dict)  # j -> coefficient
    pods: int = 0  # coefficient of every pod placed
    opened: int = 0  # coefficient of every idle node opened
    upper: int = 0  # a bound on |value|, for packing terms into one solver objective
    exact: bool = True


def objective_terms(problem: Problem) -> list[Term]:
    terms: list[Term] = []
    for level in problem.priority_levels:
        members = [jg for jg in problem.job_groups if jg.priority == level and jg.feasible]
        weights, exact = integer_weights([jg.demand for jg in members])
        demand = {jg.rank: w for jg, w in zip(members, weights) if w}
        terms.append(Term(f"quorum-demand@{level}", "maximize", demand, upper=sum(demand.values()), exact=exact))
        counted = {jg.rank: 1 for jg in members}
        terms.append(Term(f"job-groups@{level}", "maximize", counted, upper=len(counted)))
        tie = {jg.rank: len(members) - i for i, jg in enumerate(members)}
        terms.append(Term(f"queue-order@{level}", "maximize", tie, upper=sum(tie.values())))
    need = {j: -problem.needs(j) for j in range(len(problem.job_groups)) if problem.needs(j)}
    total_pods = sum(role.count for role in problem.roles)
    terms.append(Term("extra-pods", "maximize", need, pods=1, upper=total_pods))
    terms.append(Term("nodes-opened", "minimize", opened=1, upper=sum(problem.idle)))
    return terms


def opened_nodes(problem: Problem, counts: Counts) -> set[int]:
    return {n for (r, n), c in counts.items() if c and problem.idle[n]}


def term_value(term: Term, problem: Problem, assignment: Assignment) -> int:
    value = sum(coef for j, coef in term.job_groups.items() if j in assignment.placed)
    if term.pods:
        value += term.pods * sum(assignment.counts.values())
    if term.opened:
        value += term.opened * len(opened_nodes(problem, assignment.counts))
    return value


def score(terms: list[Term], problem: Problem, assignment: Assignment) -> tuple[int, ...]:
    """Lexicographic key, larger is better."""
    return tuple(
        term_value(t, problem, assignment) * (1 if t.sense == "maximize" else -1) for t in terms
    )

"""The lexicographic objective of DESIGN section 3, as terms both placers are scored by.

A plan is compared to another by the tuple of its term values (minimised terms negated),
so "never worse than greedy" is one tuple comparison, whichever placer made each plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

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
    uses: Mapping[tuple[int, int, int], int] = field(default_factory=dict)  # (gang, level, domain) used
    upper: int = 0  # a bound on |value|, for packing terms into one solver objective
    exact: bool = True
    primary: bool = False  # part of objective 1 (placement), the one the reported gap is about


def objective_terms(problem: Problem) -> list[Term]:
    terms: list[Term] = []
    for level in problem.priority_levels:
        members = [jg for jg in problem.job_groups if jg.priority == level and jg.feasible]
        weights, exact = integer_weights([jg.demand for jg in members])
        demand = {jg.rank: w for jg, w in zip(members, weights) if w}
        terms.append(
            Term(f"quorum-demand@{level}", "maximize", demand, upper=sum(demand.values()), exact=exact, primary=True)
        )
        counted = {jg.rank: 1 for jg in members}
        terms.append(Term(f"job-groups@{level}", "maximize", counted, upper=len(counted), primary=True))
        tie = {jg.rank: len(members) - i for i, jg in enumerate(members)}
        terms.append(Term(f"queue-order@{level}", "maximize", tie, upper=sum(tie.values()), primary=True))
    need = {j: -problem.needs(j) for j in range(len(problem.job_groups)) if problem.needs(j)}
    total_pods = sum(role.count for role in problem.roles)
    terms.append(Term("extra-pods", "maximize", need, pods=1, upper=total_pods))
    terms.extend(topology_terms(problem))
    terms.append(Term("nodes-opened", "minimize", opened=1, upper=sum(problem.idle)))
    return terms


def candidate_domains(problem: Problem, g: int, level: int) -> list[int]:
    nodes = [n for r in problem.gangs[g].roles for n in problem.roles[r].nodes]
    found = np.unique(problem.domain_array(level)[np.array(nodes, dtype=np.int64)])
    return [int(d) for d in found if d >= 0]


def topology_terms(problem: Problem) -> list[Term]:
    """Objectives 3 and 4: spans at preferred levels, then compactness below, then sort rank."""
    if problem.tree is None:
        return []
    levels = range(len(problem.tree.levels) + 1)
    with_terms = [(g, spec.topology) for g, spec in enumerate(problem.gangs) if spec.topology]
    domains = {
        (g, level): candidate_domains(problem, g, level)
        for g, topo in with_terms
        for level in {*topo.spans_levels, *topo.ranks}
    }
    terms: list[Term] = []
    for kind in ("preferred", "compact"):
        for level in levels:
            uses = {
                (g, level, d): 1
                for g, topo in with_terms
                if level in getattr(topo, kind)
                for d in domains[g, level]
            }
            if uses:
                terms.append(Term(f"{kind}-spans@{problem.level_name(level)}", "minimize", uses=uses, upper=len(uses)))
    ranked = {
        (g, level, d): topo.ranks[level][d]
        for g, topo in with_terms
        for level in topo.ranks
        for d in domains[g, level]
    }
    if any(ranked.values()):
        terms.append(Term("sort-rank", "minimize", uses=ranked, upper=sum(ranked.values())))
    return terms


def used_domains(problem: Problem, counts: Counts) -> set[tuple[int, int, int]]:
    """(gang, level, domain) triples the placed pods occupy, for gangs with topology terms."""
    used = {(g, level, d) for g, spec in enumerate(problem.gangs) if spec.topology for level, d in spec.topology.held}
    for (r, n), c in counts.items():
        g = problem.roles[r].gang
        topo = problem.gangs[g].topology
        if c and topo is not None:
            for level in {*topo.spans_levels, *topo.ranks}:
                d = problem.domain(level, n)
                if d is not None:
                    used.add((g, level, d))
    return used


def opened_nodes(problem: Problem, counts: Counts) -> set[int]:
    return {n for (r, n), c in counts.items() if c and problem.idle[n]}


def term_value(term: Term, problem: Problem, assignment: Assignment) -> int:
    value = sum(coef for j, coef in term.job_groups.items() if j in assignment.placed)
    if term.pods:
        value += term.pods * sum(assignment.counts.values())
    if term.opened:
        value += term.opened * len(opened_nodes(problem, assignment.counts))
    if term.uses:
        value += sum(term.uses.get(t, 0) for t in used_domains(problem, assignment.counts))
    return value


def score(terms: list[Term], problem: Problem, assignment: Assignment) -> tuple[int, ...]:
    """Lexicographic key, larger is better."""
    return tuple(
        term_value(t, problem, assignment) * (1 if t.sense == "maximize" else -1) for t in terms
    )

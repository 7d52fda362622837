"""The lexicographic objective of DESIGN section 3, as terms both placers are scored by.

A plan is compared to another by the tuple of its term values (minimised terms negated),
so "never worse than greedy" is one tuple comparison, whichever placer made each plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections import defaultdict
from typing import Iterable, Iterator, Mapping

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
    roles: Mapping[int, int] = field(default_factory=dict)  # r -> coefficient of each of its pods placed
    opened: int = 0  # coefficient of every idle node opened
    uses: Mapping[tuple[int, int, int], int] = field(default_factory=dict)  # (gang, level, domain) used
    upper: int = 0  # a bound on |value|, for packing terms into one solver objective
    exact: bool = True
    primary: bool = False  # part of objective 1 (placement), the one the reported gap is about


def objective_terms(problem: Problem) -> list[Term]:
    terms: list[Term] = []
    for level in problem.priority_levels:
        members = [jg for jg in problem.job_groups if jg.priority == level and jg.feasible]
        weights, exact = integer_weights([jg.shares for jg in members])
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
    return _candidates(problem, g, level).tolist()


def _candidates(problem: Problem, g: int, level: int) -> np.ndarray:
    nodes = np.concatenate([problem.roles[r].nodes for r in problem.gangs[g].roles] or [np.zeros(0, np.int64)])
    domains = problem.domain_array(level)
    seen = np.zeros(len(domains) + 1, dtype=bool)
    seen[domains[nodes]] = True  # -1 (outside the tree) lands in the spare last slot
    return np.flatnonzero(seen[:-1])


class DomainWeights(Mapping[tuple[int, int, int], int]):
    """Weight 1 for each (gang, level, domain) a gang could use at the levels it has terms
    at, looked up when asked: spelled out, the node-level compactness term alone holds one
    entry per (gang, candidate node) pair (25 M at 20,480 nodes)."""

    def __init__(self, problem: Problem, levels: Mapping[int, frozenset[int]]) -> None:
        self._problem, self._levels = problem, levels  # gang -> its levels in this term
        self._all_levels = sorted(set().union(*levels.values()))
        self._seen: dict[tuple[int, int], np.ndarray] = {}

    def _domains(self, g: int, level: int) -> np.ndarray:
        found = self._seen.get((g, level))
        if found is None:
            found = self._seen[g, level] = _candidates(self._problem, g, level)
        return found

    def __getitem__(self, key: tuple[int, int, int]) -> int:
        g, level, d = key
        if level in self._levels.get(g, ()):
            domains = self._domains(g, level)
            at = int(np.searchsorted(domains, d))
            if at < len(domains) and domains[at] == d:
                return 1
        raise KeyError(key)

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        for g, levels in self._levels.items():
            for level in sorted(levels):
                for d in self._domains(g, level).tolist():
                    yield g, level, d

    def __len__(self) -> int:
        return sum(len(self._domains(g, level)) for g, levels in self._levels.items() for level in levels)

    def __bool__(self) -> bool:
        return bool(self._levels)

    def total(self, used: UsedDomains) -> int:
        """The sum of the weights of ``used`` found here, looked up per (gang, level) at once:
        a plan at 2,048 nodes occupies some 8,000 triples, and scores are taken often."""
        total = 0
        for g, level, wanted in self._at_levels(used):
            domains = self._domains(g, level)
            at = np.minimum(np.searchsorted(domains, wanted), len(domains) - 1)
            total += self._weigh(g, level, wanted[domains[at] == wanted]) if len(domains) else 0
        return total

    def _at_levels(self, used: UsedDomains) -> Iterator[tuple[int, int, np.ndarray]]:
        """``used`` at this term's levels only: with a term per preferred level, scanning every
        level's triples made a score O(levels²) (100 keys: 13 s of 32)."""
        levels = self._levels
        for level in self._all_levels:
            for g, found in used.at(level).items():
                if level in levels.get(g, ()):
                    yield g, level, np.fromiter(found, dtype=np.int64, count=len(found))

    def _weigh(self, g: int, level: int, domains: np.ndarray) -> int:
        return len(domains)

    def held_beyond(self, used: UsedDomains) -> int:
        """The weight of the ``used`` domains a gang holds only by a running member, where it
        could add no pod. The same in every plan, so no model counts it; a reported value adds
        it, or spans would say one tor where the group is in two."""
        total = 0
        for g, level, wanted in self._at_levels(used):
            total += self._weigh(g, level, wanted[~np.isin(wanted, self._domains(g, level))])
        return total

    def bound(self) -> int:
        """At least ``len(self)``, without listing every domain: a term's ``upper``."""
        problem = self._problem
        total = 0
        for g, levels in self._levels.items():
            reach = sum(len(problem.roles[r].nodes) for r in problem.gangs[g].roles)
            total += sum(min(reach, problem.domain_count(level)) for level in levels)
        return total


class DomainRanks(DomainWeights):
    """The sort-rule rank of each (gang, level, domain) a gang could use at its affinity
    levels, 0 best, looked up when asked: at the node level (a kubernetes.io/hostname term)
    there is one per (gang, candidate node)."""

    def __init__(self, problem: Problem, levels: Mapping[int, frozenset[int]]) -> None:
        super().__init__(problem, levels)
        self._arrays: dict[int, tuple[tuple[int, ...], np.ndarray]] = {}  # id -> ranks (kept: the id stays theirs), array

    def __getitem__(self, key: tuple[int, int, int]) -> int:
        super().__getitem__(key)  # KeyError where the gang cannot use the domain
        g, level, d = key
        topology = self._problem.gangs[g].topology
        assert topology is not None
        return topology.ranks[level][d]

    def _weigh(self, g: int, level: int, domains: np.ndarray) -> int:
        topology = self._problem.gangs[g].topology
        assert topology is not None
        return int(self._array(topology.ranks[level])[domains].sum())

    def _array(self, ranks: tuple[int, ...]) -> np.ndarray:
        """Gangs with the same sort rules share their ranks, and so their array."""
        found = self._arrays.get(id(ranks))
        if found is None:
            found = self._arrays[id(ranks)] = (ranks, np.asarray(ranks, dtype=np.int64))
        return found[1]

    def bound(self) -> int:
        """The sum of every rank here: a term's ``upper``, and 0 when every rank is 0."""
        return sum(self._weigh(g, level, self._domains(g, level)) for g, levels in self._levels.items() for level in levels)


def topology_terms(problem: Problem) -> list[Term]:
    """Objectives 3 and 4: spans at preferred levels, then at the levels enclosing the smallest
    preferred one, then compactness below, then sort rank; each largest level first. Ranks are
    not summed over levels: Godel tries a gang's NodeGroups in sort-rule order before it looks
    below them, so a node's rank must not outweigh its zone's."""
    if problem.tree is None:
        return []
    levels = range(len(problem.tree.levels) + 1)
    with_terms = [(g, spec.topology) for g, spec in enumerate(problem.gangs) if spec.topology]
    terms: list[Term] = []
    for kind in ("preferred", "enclosing", "compact"):
        for level in levels:
            uses = DomainWeights(
                problem, {g: frozenset({level}) for g, topo in with_terms if level in getattr(topo, kind)}
            )
            if uses:
                upper = uses.bound()
                if upper:
                    terms.append(Term(f"{kind}-spans@{problem.level_name(level)}", "minimize", uses=uses, upper=upper))
    for level in levels:
        ranked = DomainRanks(problem, {g: frozenset({level}) for g, topo in with_terms if level in topo.ranks})
        if ranked and (upper := ranked.bound()):
            terms.append(Term(f"sort-rank@{problem.level_name(level)}", "minimize", uses=ranked, upper=upper))
    return terms


class UsedDomains:
    """(gang, level, domain) triples the placed pods occupy, kept by level, so that a term
    reads only its own levels' (there is a term per preferred level)."""

    __slots__ = ("_by_level",)

    def __init__(self, by_level: Mapping[int, Mapping[int, set[int]]]) -> None:
        self._by_level = by_level

    def at(self, level: int) -> Mapping[int, set[int]]:
        """Gang -> the domains it occupies at ``level``."""
        return self._by_level.get(level, {})

    def __contains__(self, triple: object) -> bool:
        if not isinstance(triple, tuple) or len(triple) != 3:
            return False
        g, level, d = triple
        return d in self.at(level).get(g, ())

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        for level, gangs in self._by_level.items():
            for g, ds in gangs.items():
                for d in ds:
                    yield g, level, d


def used_domains(problem: Problem, counts: Counts) -> UsedDomains:
    """(gang, level, domain) triples the placed pods occupy, for gangs with topology terms."""
    used: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for g, spec in enumerate(problem.gangs):
        for level, held in spec.topology.held if spec.topology else ():
            used[level][g].add(held)
    of_role: dict[int, tuple[int, tuple[int, ...]]] = {}  # role -> its gang, and the levels that gang has terms at
    for (r, n), c in counts.items():
        if not c:
            continue
        found = of_role.get(r)
        if found is None:
            g = problem.roles[r].gang
            topo = problem.gangs[g].topology
            found = of_role[r] = (g, tuple({*topo.spans_levels, *topo.ranks}) if topo is not None else ())
        g, levels = found
        for level in levels:
            d = problem.domain(level, n)
            if d is not None:
                used[level][g].add(d)
    return UsedDomains(used)


def opened_nodes(problem: Problem, counts: Counts) -> set[int]:
    return {n for (r, n), c in counts.items() if c and problem.idle[n]}


def term_value(
    term: Term, problem: Problem, assignment: Assignment, used: UsedDomains | None = None
) -> int:
    """``used``: the assignment's ``used_domains``, when the caller has them already."""
    value = sum(coef for j, coef in term.job_groups.items() if j in assignment.placed)
    if term.pods:
        value += term.pods * sum(assignment.counts.values())
    if term.roles:
        value += sum(term.roles.get(r, 0) * c for (r, _), c in assignment.counts.items())
    if term.opened:
        value += term.opened * len(opened_nodes(problem, assignment.counts))
    if term.uses:
        if used is None:
            used = used_domains(problem, assignment.counts)
        uses = term.uses
        value += uses.total(used) if isinstance(uses, DomainWeights) else sum(uses.get(t, 0) for t in used)
    return value


def score(terms: list[Term], problem: Problem, assignment: Assignment) -> tuple[int, ...]:
    """Lexicographic key, larger is better."""
    used = used_domains(problem, assignment.counts) if any(t.uses for t in terms) else None
    return tuple(
        term_value(t, problem, assignment, used) * (1 if t.sense == "maximize" else -1) for t in terms
    )

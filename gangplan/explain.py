"""Why a JobGroup was not placed: the first thing that stops it, in figures.

Checks go from the cheapest and most certain to the most situational: too few pods, no
node passing the filters, the cluster's free total, what fits with nothing else planned,
and last, which placed groups hold the room it lacks on the nodes it could use.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from dataclasses import replace
from typing import Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from .greedy import _place_gang_quorum, _place_quorum, _State, place_pods
from .objective import Assignment, Term, objective_terms
from .problem import GangSpec, Problem, alone, candidate_count, frozen, level_key, pods_that_fit, taken_by_partners
from .model import PodGroupAPI
from .quantity import counted, describe_amount, describe_apart, plural
from .semantics import counted_rule, node_usable, one_a_node
from .stages import SolveResult, Tuning
from .topology import TopologyTree


def _usable_free(problem: Problem) -> tuple[list[int], int]:
    """The cluster's free total per resource on Ready, schedulable nodes, and their count."""
    usable = [f for f, node in zip(problem.free, problem.nodes) if node_usable(node)]
    return [sum(f[k] for f in usable) for k in range(len(problem.resources))], len(usable)


def reasons(problem: Problem, assignment: Assignment, ordered: bool = False) -> dict[int, str]:
    """Why each JobGroup left out is; ``ordered`` (``--policy ordered``): against what the
    JobGroups before it in the queue hold, as it met the cluster at its turn."""
    usable = _usable_free(problem)
    exact = _Exact(problem)
    placed = _Placed(problem, assignment, exact)
    return {
        j: reason(problem, assignment, j, usable, placed.at_turn(j) if ordered else placed, exact)
        for j in range(len(problem.job_groups))
        if j not in assignment.placed
    }


class _Placed:
    """What the plan put where, as arrays: per placed (role, node) count, its JobGroup, its
    node and what it holds; and what is free on each node after it. Built once: at 20,480
    nodes 1,310 groups are left out, and each asks who holds its candidate nodes."""

    def __init__(self, problem: Problem, assignment: Assignment, exact: _Exact) -> None:
        self.problem, self.exact = problem, exact
        pairs = sorted((r, n, c) for (r, n), c in assignment.counts.items() if c)
        width = len(problem.resources)
        requests = np.array([problem.roles[r].request for r, _, _ in pairs], dtype=np.int64).reshape(len(pairs), width)
        self.job_group = np.array([problem.gangs[problem.roles[r].gang].job_group for r, _, _ in pairs], dtype=np.int64)
        self.role = np.array([r for r, _, _ in pairs], dtype=np.int64)
        self.node = np.array([n for _, n, _ in pairs], dtype=np.int64)
        self.held = requests * np.array([c for _, _, c in pairs], dtype=np.int64)[:, None]
        self.free = np.array(problem.free, dtype=np.int64).reshape(len(problem.nodes), width)
        np.subtract.at(self.free, self.node, self.held)
        self._seen: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        # Priorities by rank: a PriorityClass value need not fit in int64 here.
        self._rank = {p: i for i, p in enumerate(sorted({jg.priority for jg in problem.job_groups}))}
        self._ranks = np.array([self._rank[jg.priority] for jg in problem.job_groups], dtype=np.int64)
        self.turn: int | None = None  # at_turn's JobGroup
        self._placed_on: dict[int, list[int]] | None = None  # role -> the nodes it has pods on

    def at_turn(self, j: int) -> _Placed:
        """The plan as JobGroup ``j`` met it under ``--policy ordered``: only the JobGroups
        before it in the queue placed (those after it took room it had already lost)."""
        later = self.job_group > j
        turn = copy.copy(self)
        turn.job_group, turn.node, turn.held = self.job_group[~later], self.node[~later], self.held[~later]
        turn.role = self.role[~later]
        turn.free = self.free.copy()
        np.add.at(turn.free, self.node[later], self.held[later])
        turn._seen, turn.turn, turn._placed_on = {}, j, None
        return turn

    def rivals(self, j: int) -> str:
        """Who holds the room JobGroup ``j`` lacks: the placed groups above it (else beside it)
        on its candidate nodes, most of its binding resource first; '' when none does."""
        problem = self.problem
        jg = problem.job_groups[j]
        roles = [r for g in jg.gangs for r in problem.gangs[g].roles]
        key = tuple(sorted({id(problem.roles[r].nodes) for r in roles}))
        if (seen := self._seen.get(key)) is None:
            mask = np.zeros(len(problem.nodes), dtype=bool)
            for r in roles:
                mask[problem.roles[r].nodes] = True
            seen = self._seen[key] = (mask, self.free[mask].sum(axis=0), np.flatnonzero(mask[self.node]))
        mask, free, on = seen
        candidates = int(mask.sum())
        # What its quorum needs, never less than minResources still asks; only the resources it
        # asks for (each host port and anti-affinity term is one: 909 of them made this 16 s).
        asks = sorted(
            {k for r in roles for k, v in enumerate(problem.roles[r].request) if v}
            | {k for g in jg.gangs for k, v in enumerate(problem.gangs[g].min_resources) if v}
        )
        need = [0] * len(problem.resources)
        for k in asks:
            need[k] = sum(max(_quorum_need(problem, g, k), _asked(problem, g, k)) for g in jg.gangs)
        # A resource short there first, then the scarcest (free there against what the quorum
        # needs), pods last among equals: a node's pod count can be all that binds.
        order = sorted(
            (free[k] >= want, problem.resources[k] == "pods", free[k] / want, k) for k, want in enumerate(need) if want
        )
        mine = self._rank[jg.priority]
        rivals = (
            ("higher-priority groups", lambda rank: rank > mine),
            (
                "groups of the same priority placed instead" if self.turn is None else "groups of the same priority before it in the queue",
                lambda rank: rank == mine,
            ),
        )
        # The scarcest resource anyone above or beside it holds, and both kinds of holder: a
        # same-priority group placed first was left unnamed when one above also held some.
        for *_, k in order:
            held = np.bincount(self.job_group[on], weights=self.held[on, k], minlength=len(problem.job_groups))
            name = problem.resources[k]
            parts = []
            holders = np.flatnonzero(held)
            for who, counts in rivals:
                # In numpy: 2,500 groups left out, each against 2,500 placed, took 8 s one by one.
                others = holders[counts(self._ranks[holders])]
                if len(others):
                    others = others[np.lexsort((others, -held[others]))].tolist()
                    shown = ", ".join(f"{_holder(problem, i)} ({describe_amount(name, int(held[i]))})" for i in others[:3])
                    more = f" and {len(others) - 3} more" if len(others) > 3 else ""
                    parts.append((who, f"{shown}{more}"))
            if not parts:
                continue
            nodes = f"{candidates:,} candidate node{'s' if candidates != 1 else ''}"
            lost = f"lost to {parts[0][0]} holding {name} on its {nodes}: {parts[0][1]}"
            if len(parts) > 1:
                lost += f", and to {parts[1][0]}: {parts[1][1]}"
            needed, left = describe_apart(name, need[k], int(free[k]))
            lost += f"; {left} free there {'after the plan' if self.turn is None else 'at its turn'}"
            if free[k] >= need[k] and not self._room_for_a_pod(mask, roles):
                return f"{lost}, but no candidate node has room left for one of its pods{self._pod(roles, mask)}"
            if free[k] >= need[k]:
                if split := self._room_left_holds(j):
                    return f"{lost}, but {split}"  # enough in all, not where its pods can use it
                if self._holds_all(j):
                    # Nobody took its room (greedy's first fit can miss a packing that is there).
                    return (
                        f"the room the plan leaves on its {nodes} holds its quorum ({left} {name} free, "
                        f"{needed} needed): the plan's search did not find its place"
                    )
            if any(_asked(problem, g, k) > _quorum_need(problem, g, k) for g in jg.gangs):
                return f"{lost}, its {'quorums and minResources need' if len(jg.gangs) > 1 else 'minResources needs'} {needed}"
            return f"{lost}, its quorum needs {needed}"
        return ""

    def _holds_all(self, j: int) -> bool:
        """Whether ``_room_left_holds`` finding room for the quorum of JobGroup ``j`` is the
        whole answer: one member, with no task minimums, minResources or required term, which
        that count does not see."""
        gangs = self.problem.job_groups[j].gangs
        gang = self.problem.gangs[gangs[0]]
        required = gang.topology is not None and gang.topology.required
        return len(gangs) == 1 and not gang.tasks and not any(gang.min_resources) and not required

    def _room_left_holds(self, j: int) -> str:
        """What of JobGroup ``j``'s quorum the room the plan leaves holds, pod by pod: the best
        domain of a required term, how many pods (of a task) fit on the nodes, what the pods
        that fit request against minResources, or which member's quorum does not fit beside
        the others'; '' when all of it does."""
        problem = self.problem
        gangs = problem.job_groups[j].gangs
        for g in gangs:
            gang = problem.gangs[g]
            member = f" of {gang.key}" if len(gangs) > 1 else ""
            if gang.topology is not None and gang.topology.required:
                if text := self._kept_apart(g) or _required_reason(problem, g, self.exact, self.free, then=True):
                    return text
                continue
            minimums = [(gang.roles, gang.counted, gang.min_member, f"minMember {gang.min_member} pods{member}")]
            minimums += [
                (task.roles, task.counted, task.minimum, f"minTaskMember {task.minimum} pods of task {task.task}{member}")
                for task in gang.tasks
            ]
            for roles, counted, minimum, what in minimums:
                fit = self.exact.most(j, roles, self.free)
                if (total := counted + fit.found) < minimum:
                    blocking = _blocking(fit.state, roles, fit.state.gang_nodes(g))
                    cut = "" if fit.proven else _CUT_SHORT
                    return f"{_fit(total, what, fit.proven, ' in it')} ({blocking}{cut})"
            if short := _requests_short(problem, g, self.exact, self.free):
                return (f"member {gang.key}: " if len(gangs) > 1 else "") + short
        if len(gangs) > 1:
            state = _state(problem, self.free)
            before: list[str] = []
            for g in gangs:
                if not self.exact.quorum(j, g, state):
                    return _member_short(problem, j, g, before, state, self.exact)
                before.append(problem.gangs[g].key)
        return ""

    def _kept_apart(self, g: int) -> str:
        """Where the gangs kept apart from gang ``g`` (``Problem.partners``) hold the domains
        that would have held its quorum: which they are, and what the others then hold; ''
        when the others hold it too, or none is kept apart from it."""
        problem = self.problem
        if not problem.partners(g):
            return ""
        if self._placed_on is None:
            self._placed_on = defaultdict(list)
            for r, n in zip(self.role.tolist(), self.node.tolist()):
                self._placed_on[r].append(n)
        placed_on = self._placed_on
        taken = taken_by_partners(problem, g, lambda r: placed_on.get(r, []))
        if taken is None or not (rest := _outside_partners(problem, g, self.exact, self.free, taken)):
            return ""
        assert problem.tree is not None
        partners: dict[int, set[int]] = defaultdict(set)
        for level, other in problem.partners(g):
            partners[level].add(other)
        held: dict[int, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))  # level -> gang -> domains
        for r, nodes in placed_on.items():  # the placed roles, not every partner's: 1,500 at 8,192 nodes
            for level, others in partners.items():
                if (other := problem.roles[r].gang) in others:
                    held[level][problem.gangs[other].key].update(
                        d for n in nodes if (d := problem.domain(level, n)) is not None
                    )
        parts = []
        for level, by_gang in sorted(held.items()):
            chosen = sorted(by_gang.items())[:3]
            shown = [
                f"{key} ({', '.join(sorted(problem.domain_name(level, d) for d in domains))})" for key, domains in chosen
            ]
            more = f" and {len(by_gang) - 3} more" if len(by_gang) > 3 else ""
            parts.append(
                f"its pods' required anti-affinity at {level_key(problem.tree, level)} keeps it out of the "
                f"domains of {', '.join(shown)}{more}"
            )
        return f"{'; '.join(parts)}, {rest}"

    def _room_for_a_pod(self, mask: np.ndarray, roles: list[int]) -> bool:
        there = self.free[mask]
        requests = {self.problem.roles[r].request for r in roles}
        return any(bool((there >= np.array(request, dtype=np.int64)).all(axis=1).any()) for request in requests)

    def _pod(self, roles: list[int], mask: np.ndarray) -> str:
        """One pod's requests, when all its pods ask the same, and what its candidates lack:
        '(95.6 cpu, 372Gi memory, 4 nvidia.com/gpu; short of nvidia.com/gpu, cpu)'."""
        short = "short of " + _blocking(_state(self.problem, self.free), roles, np.flatnonzero(mask))
        requests = {self.problem.roles[r].request for r in roles}
        if len(requests) != 1:
            return f" ({short})"
        (request,) = requests
        parts = _asks(self.problem, request, _apart(self.problem, roles))
        return f" ({', '.join([*parts[:-1], parts[-1] + '; ' + short] if parts else [short])})"


def _asks(problem: Problem, request: Sequence[int], apart: Iterable[str] = ()) -> list[str]:
    """A pod's requests, as kubectl shows them: ['95.6 cpu', '372Gi memory', '4 nvidia.com/gpu'];
    a term keeping it apart (``apart``), or a port, is named among them."""
    asked = [
        (name, name if counted_rule(name) else f"{describe_amount(name, v)} {name}")
        for name, v in zip(problem.resources, request)
        if v and name != "pods"
    ]
    return [text for _, text in sorted([*asked, *((name, name) for name in apart)])]


def _apart_cap(problem: Problem, roles: Iterable[int], name: str) -> int:
    """The pods a node takes of those the term ``name`` keeps apart among ``roles``."""
    return next(problem.roles[r].apart_cap for r in roles if problem.roles[r].apart == name)


def _apart(problem: Problem, roles: Iterable[int]) -> list[str]:
    """The terms that keep pods of ``roles`` a few to a node as a cap on them (no column has
    them, so what reads columns is told of them apart)."""
    return sorted({problem.roles[r].apart for r in roles} - {""})


def _holder(problem: Problem, j: int) -> str:
    """A JobGroup as its PodGroups are known (its own key is no group `explain` takes)."""
    jg = problem.job_groups[j]
    if len(jg.gangs) == 1:
        return problem.gangs[jg.gangs[0]].key  # a JobGroup's key is its subGroup's, when it has one
    return f"JobGroup {jg.key} of {counted([problem.gangs[g].key for g in jg.gangs], 2)}"


def _who(problem: Problem, j: int, g: int) -> str:
    """What a reason about member ``g`` starts with: its name, when JobGroup ``j`` has others."""
    return f"member {problem.gangs[g].key}: " if len(problem.job_groups[j].gangs) > 1 else ""


def _too_few(problem: Problem, j: int) -> str:
    """NotEnoughTasks (or a lone pod's gate) for the first member of JobGroup ``j`` with fewer
    pods than a task's minTaskMember or its minMember; '' when every member has enough."""
    return next((text for g in problem.job_groups[j].gangs if (text := too_few(problem, j, g))), "")


def too_few(problem: Problem, j: int, g: int) -> str:
    """NotEnoughTasks (or a lone pod's gate) for member ``g`` of JobGroup ``j``, when it has
    fewer pods than a task's minTaskMember or its minMember; '' when it has enough."""
    jg = problem.job_groups[j]
    gang = problem.gangs[g]
    who = _who(problem, j, g)
    exist = gang.counted + gang.pending
    group = problem.grouping.job_groups[j].gangs[jg.gangs.index(g)].group
    lone = group.api == PodGroupAPI.POD
    if lone and gang.blocked and not exist:
        return f"SchedulingGated: {gang.blocked.split(': ', 1)[1]}"  # the pod's own condition reason
    if exist:
        # Volcano's gang plugin checks each task's minTaskMember before minMember.
        for task in gang.tasks:
            if (have := task.counted + task.pending) < task.minimum:
                return f"{who}NotEnoughTasks: task {task.task}: {_exist(have)}, minTaskMember is {task.minimum}"
    if exist < gang.min_member:
        there = f"{plural(exist, 'pod')} can be scheduled" if gang.blocked else _exist(exist)
        blocked = f" ({gang.blocked})" if gang.blocked else ""
        uncounted = [f"{gang.failed} failed"] if gang.failed else []
        if gang.succeeded > gang.counted_succeeded:
            uncounted.append(f"{gang.succeeded - gang.counted_succeeded} succeeded")
        failed = f" ({', '.join(uncounted)}, which do not count)" if uncounted else ""
        unmade = ""
        if not exist and not gang.blocked and not gang.failed and group.manifest and group.api != PodGroupAPI.POD:
            unmade = "; give the workload that creates its pods (a Job or Deployment whose pod template names the group) beside it"
        return f"{who}NotEnoughTasks: {there}{failed}, minMember is {gang.min_member}{blocked}{unmade}"
    return ""


def reason(
    problem: Problem,
    assignment: Assignment,
    j: int,
    usable: tuple[list[int], int] | None = None,
    placed: _Placed | None = None,
    exact: _Exact | None = None,
) -> str:
    """The first thing that stops JobGroup ``j``; ``usable`` (the cluster's free total per
    resource on Ready, schedulable nodes, and how many those are), ``placed`` and ``exact``
    (with the CP-SAT budget all of a plan's groups share) are made once by ``reasons``."""
    usable_free, usable_nodes = usable if usable is not None else _usable_free(problem)
    exact = exact or _Exact(problem)
    jg = problem.job_groups[j]
    prefix_member = len(jg.gangs) > 1
    # Too few pods first, in every member: no room helps a member that is short of them.
    if short := _too_few(problem, j):
        return short
    for g in jg.gangs:
        gang = problem.gangs[g]
        who = _who(problem, j, g)
        if gang.topology is not None and gang.topology.broken:
            return who + gang.topology.broken  # its running members already break its term: no room helps
        room = sum(problem.roles[r].count for r in gang.roles if len(problem.roles[r].nodes))
        if room < gang.need:
            excluded = _excluded(gang) or "the input has no Node objects"
            if not room:
                return f"{who}0/{len(problem.nodes)} nodes are available: {excluded}"
            # Some of its pods have nodes: the count is short, and the rest say why, as kube-scheduler would.
            return (
                f"{who}only {room} of its pending pods {'has' if room == 1 else 'have'} a node to go to, {gang.need} needed; "
                f"{_no_node(problem, gang)}"
            )
        most = _most_requested(problem, g)
        unmet = [
            "minResources {} cannot be met: it needs {} more and all its pending pods together request {}".format(
                name, *describe_apart(name, gang.min_resources[k], most[k])
            )
            for k, name in enumerate(problem.resources) if most[k] < gang.min_resources[k]
        ]
        if unmet:
            return who + "; ".join(unmet)  # every resource short, as "insufficient ..." names them
        needs = [_quorum_need(problem, g, k) for k in range(len(problem.resources))]
        free: Sequence[int] = usable_free
        nodes = usable_nodes
        where = "on Ready, schedulable nodes"
        if gang.filtered_free is not None:  # room it cannot use is not room: count only its nodes
            free, nodes = gang.filtered_free, gang.passing
            where = f"on the {gang.passing} of {usable_nodes} Ready, schedulable nodes that pass its filters"
        # Pods kept k apart need a k-th of a node each: a resource of k a node, though no column has it.
        apart = _apart(problem, gang.roles)
        needs += [_least_quorum(problem, g, lambda r: int(problem.roles[r].apart == name)) for name in apart]
        free = [*free, *(_apart_cap(problem, gang.roles, name) * nodes for name in apart)]
        if short := _insufficient(problem, needs, free, "quorum needs", where, [*problem.resources, *apart]):
            return who + short
        if short := _insufficient(problem, gang.min_resources, free, "minResources needs", where):
            return who + short
    if prefix_member:
        needs = [sum(_quorum_need(problem, g, k) for g in jg.gangs) for k in range(len(problem.resources))]
        if short := _insufficient(problem, needs, usable_free, "its members' quorums need"):
            return short
    fits_alone = _fits_alone(problem, j, exact)
    for g in jg.gangs if not fits_alone else ():
        gang = problem.gangs[g]
        who = _who(problem, j, g)
        if prefix_member and exact.quorum(j, g, _State(problem)):
            continue  # it fits alone: what stops it is its siblings, said below
        if gang.topology is not None and gang.topology.required:
            if text := _required_reason(problem, g, exact):
                # Running members pinning it to a domain keep it off the rest, no filter.
                return who + text + ("" if gang.topology.pinned else _filtered(problem, gang))
            if text := _tied_short(problem, g, exact):
                return who + text
            if prefix_member:
                return f"{who}no placement of its quorum was found, even with nothing else planned"
            continue  # a domain holds minMember's pods: what stops it is no count, said below
        alone = exact.most(j, gang.roles)
        total = gang.counted + alone.found
        if total < gang.min_member:
            gap = 100 * (gang.min_member - total) / gang.min_member
            blocking = _blocking(alone.state, gang.roles, alone.state.gang_nodes(g))
            cut = "" if alone.proven else _CUT_SHORT
            return (
                f"{who}{_fit(total, f'minMember {gang.min_member} pods', alone.proven)} even with nothing "
                f"else planned ({blocking}; quorum gap {gap:.0f}%{cut}){_filtered(problem, gang)}"
            )
        for task in gang.tasks:
            alone = exact.most(j, task.roles)
            fit = task.counted + alone.found
            if fit < task.minimum:
                # gang.excluded is said for the gang's first role with no node: this task's, when it has none.
                first_without = next((r for r in gang.roles if not len(problem.roles[r].nodes)), None)
                if first_without in task.roles and gang.excluded:
                    why = f"0/{len(problem.nodes)} nodes are available to its pods: {_excluded(gang)}"
                else:
                    why = _blocking(alone.state, task.roles, alone.state.gang_nodes(g))
                cut = "" if alone.proven else _CUT_SHORT
                return (
                    f"{who}task {task.task}: {_fit(fit, f'minTaskMember {task.minimum} pods', alone.proven)} even "
                    f"with nothing else planned ({why}{cut})"
                )
        if short := _requests_short(problem, g, exact) or _tied_short(problem, g, exact):
            return f"{who}{short}"
        if prefix_member:
            return f"{who}no placement of its quorum was found, even with nothing else planned"
    if fits_alone and (lost := (placed or _Placed(problem, assignment, exact)).rivals(j)):
        return lost
    if not fits_alone:
        return _siblings_short(problem, j, exact) if prefix_member else (
            "no placement of its quorum was found, even with nothing else planned"
        )
    # Nothing of its priority or above is on its nodes: a search that stopped short of it.
    return (
        "fits even with nothing else planned, and no group placed at its priority or above holds "
        "room on the nodes it could use: the plan's search did not find its place"
    )


def _siblings_short(problem: Problem, j: int, exact: _Exact) -> str:
    """Why a JobGroup whose members each fit alone does not: 'at most 2 of its 3 members'
    quorums fit together, even with nothing else planned: beside the quorums of A, B, member
    C fits at most 1 of minMember 2 pods (cpu)', the most members CP-SAT proves fit together,
    and the first member left out, on the room they leave. Past the budget, its members placed
    in turn, each where greedy (else CP-SAT) puts it."""
    jg = problem.job_groups[j]
    best = exact.members(j)
    if best is not None and best.proven and len(best.fitted) < len(jg.gangs):
        said = f"at most {len(best.fitted)} of its {len(jg.gangs)} members' quorums fit together"
        state, before = best.state, [problem.gangs[g].key for g in jg.gangs if g in best.fitted]
        left = next(g for g in jg.gangs if g not in best.fitted)
    else:
        said = "no placement of its members' quorums together was found"
        state, before, left = _State(problem), [], -1
        for g in jg.gangs:
            if not exact.quorum(j, g, state):
                left = g
                break
            before.append(problem.gangs[g].key)
    said += ", even with nothing else planned"
    return said if left < 0 else f"{said}: {_member_short(problem, j, left, before, state, exact)}"


def _outside_partners(problem: Problem, g: int, exact: _Exact, free: np.ndarray, taken: np.ndarray) -> str:
    """What stops gang ``g`` outside the domains ``taken`` by gangs kept apart from it, on the
    room ``free``: 'where all its candidate nodes are', or what the best of the rest holds;
    '' when the rest holds its quorum (then they are not what stops it)."""
    candidates = np.zeros(len(problem.nodes), dtype=bool)
    for r in problem.gangs[g].roles:
        candidates[problem.roles[r].nodes] = True
    if not (candidates & ~taken).any():
        return "where all its candidate nodes are"
    room = free.copy()
    room[taken] = 0
    rest = _required_reason(problem, g, exact, room, then=True)
    return f"and of the rest, {rest}" if rest else ""


def _member_short(problem: Problem, j: int, g: int, before: list[str], state: _State, exact: _Exact) -> str:
    """'beside the quorums of A, B, member C fits at most 1 of minMember 2 pods (cpu)': what
    member ``g`` lacks on the room ``state`` leaves once the quorums of ``before`` are in it."""
    gang = problem.gangs[g]
    # Past three, the rest are counted: each row of the JobGroup repeats this.
    beside = f"beside the quorum{'s' if len(before) > 1 else ''} of {counted(before)}, " if before else ""
    if gang.topology is not None and gang.topology.required:
        taken = state.taken_by_partners(g)
        if taken is not None and (rest := _outside_partners(problem, g, exact, state.free, taken)):
            assert problem.tree is not None
            keys = ", ".join(sorted({level_key(problem.tree, level) for level, _ in problem.partners(g)}))
            return f"{beside}member {gang.key}: its pods' required anti-affinity at {keys} keeps it out of their domains, {rest}"
        found = _required_reason(problem, g, exact, state.free, then=True) or "no placement of its quorum was found there"
        return f"{beside}member {gang.key}: {found}"
    room = exact.most(j, gang.roles, state.free)
    total = gang.counted + room.found
    if total >= gang.min_member:
        found = _requests_short(problem, g, exact, state.free) or "no placement of its quorum was found there"
        return f"{beside}member {gang.key}: {found}"
    blocking = _blocking(room.state, gang.roles, room.state.gang_nodes(g))
    fits = f"fits at most {total} of" if room.proven else f"was found room for only {total} of"
    cut = "" if room.proven else _CUT_SHORT
    return f"{beside}member {gang.key} {fits} minMember {gang.min_member} pods ({blocking}{cut})"


def _excluded(gang: GangSpec) -> str:
    """'3 nodeSelector, 1 taint gpu': the nodes its first pod with none was refused, per filter."""
    return ", ".join(f"{n} {why}" for why, n in sorted(gang.excluded.items(), key=lambda kv: (-kv[1], kv[0])))


_ANY_FILTER = "selectors, affinity, taints, readiness, room for one pod"


def _no_node(problem: Problem, gang: GangSpec) -> str:
    """'for ns-0 (and 1 more pod), 0/3 nodes are available: 3 nodeSelector': the pods with no
    candidate node, and the filters that refused the first, as kube-scheduler says it."""
    nowhere = [pod.name for r in gang.roles if not len(problem.roles[r].nodes) for pod in problem.roles[r].pods]
    more = f" (and {plural(len(nowhere) - 1, 'more pod')})" if len(nowhere) > 1 else ""
    return f"for {nowhere[0]}{more}, 0/{len(problem.nodes)} nodes are available: {_excluded(gang) or 'the input has no Node objects'}"


def _filtered(problem: Problem, gang: GangSpec) -> str:
    """'; only 2 of 16 nodes pass its filters ...' when the filters left out any node: the
    room was there, the pods could not use it."""
    candidates = len({n for r in gang.roles for n in problem.roles[r].nodes.tolist()})
    if candidates == len(problem.nodes):
        return ""
    # gang.excluded is one pod's, the first with no candidate: the breakdown of them all only
    # when no pod has one.
    parts = [_excluded(gang)] if gang.excluded and not candidates else []
    nowhere = f"; {_no_node(problem, gang)}" if gang.excluded and candidates else ""
    tree = problem.tree
    if not parts and (gang.topology is not None or gang.unconstrained) and tree is not None and tree.outside:
        # A node lacking a level's label is no candidate of a group with a topology term.
        lacking = sorted({key for n in tree.outside for key in tree.levels if key not in problem.nodes[n].labels})
        parts.append(f"{len(tree.outside)} outside the topology (no {' or '.join(lacking)} label)")
        if rest := len(problem.nodes) - candidates - len(tree.outside):
            parts.append(f"{rest} other ({_ANY_FILTER})")
    why = ", ".join(parts) or _ANY_FILTER
    return f"; only {candidates} of {len(problem.nodes)} nodes pass its filters ({why}){nowhere}"


def _fit(count: int, what: str, proven: bool, where: str = "") -> str:
    """'at most 4 of minMember 6 pods fit' when no placement holds more; 'only 4 of minMember
    6 pods were found room' when the search for more was cut short (see _CUT_SHORT)."""
    return f"at most {count} of {what} fit{where}" if proven else f"only {count} of {what} were found room{where}"


_CUT_SHORT = "; the search for more was cut short"


def _exist(count: int) -> str:
    return f"{plural(count, 'pod')} {'exists' if count == 1 else 'exist'}"


def _insufficient(
    problem: Problem, needs: Sequence[int], usable_free: Sequence[int], what: str, where: str = "on Ready, schedulable nodes",
    names: Sequence[str] | None = None,
) -> str:
    """'insufficient gpu (quorum needs 40, 20 free), ...' for each resource short (of
    ``names``, the problem's resources by default), scarcest first; '' when none is."""
    short = sorted(
        (free / need, f"{name} ({what} {shown[0]}{' nodes' if one_a_node(name) else ' pods' if counted_rule(name) else ''}, {shown[1]} free)")
        for name, need, free in zip(problem.resources if names is None else names, needs, usable_free)
        if need > free and (shown := describe_apart(name, need, free))
    )
    if not short:
        return ""
    return "insufficient " + ", ".join(text for _, text in short) + " " + where


def _fits_alone(problem: Problem, j: int, exact: _Exact) -> bool:
    """Whether the JobGroup's quorum has a placement on the snapshot with nothing else planned.
    One role with no required domain is counted directly: alone, its pods fit wherever its
    candidates have room. A required domain must hold the quorum, and minResources, by its
    bounds. Greedy's first fit can miss a packing of several kinds of pods, of task minimums
    or of minResources, so there a miss is put to CP-SAT: domain by domain for a required
    term, else on the whole cluster. (A group whose running members break a term is answered
    before it gets here.)"""
    jg = problem.job_groups[j]
    g = jg.gangs[0]
    gang = problem.gangs[g]
    one_kind = len(jg.gangs) == 1 and len(gang.roles) == 1 and not gang.tasks and not any(gang.min_resources)
    domains: list[int] | None = None
    if len(jg.gangs) == 1 and gang.topology is not None and gang.topology.required:
        # Its quorum's pods share one domain of the deepest required level: those whose bound
        # holds them, and what minResources asks of them, if any.
        level = max(gang.topology.required)
        nodes_in, most, _ = exact.domain_room(g, level)
        requested = [(exact.requested_in(g, level, k), deficit) for k, deficit in enumerate(gang.min_resources) if deficit]
        domains = [
            d for d in sorted(most, key=lambda d: (-most[d], d))
            if most[d] >= gang.need and all(bound.get(d, 0) >= deficit for bound, deficit in requested)
        ]
        if not domains:
            return False
    elif len(jg.gangs) == 1:
        free = problem.matrix("free")
        if any(deficit and _requested_bound(problem, gang.roles, k, free, None) < deficit for k, deficit in enumerate(gang.min_resources)):
            return False
    if one_kind and (gang.topology is None or not gang.topology.required):
        return int(problem.roles[gang.roles[0]].caps.sum()) >= gang.need
    if _place_quorum(_State(problem), j):
        return True
    if one_kind:
        return False
    if domains is not None and (
        found := exact.in_domains(j, g, [sorted(nodes_in[d]) for d in _distinct(exact.kinds(g), nodes_in, domains)])
    ) is not None:
        return found
    return exact.placed(j)


ALONE_LIMIT = 0.5  # deterministic seconds for one CP-SAT answer about one JobGroup
ALONE_BUDGET = 2.0  # deterministic seconds for all of one plan's: past it, greedy's answer stands
EXACT_DOMAINS = 8  # required domains one reason searches (pods of several kinds, or what they request) by CP-SAT
ALONE_CHARGE = 0.02  # charged to the budget per CP-SAT answer besides its own time: building it
# and per variable, for presolve (which runs without symmetry detection: see solve_cpsat).
ALONE_PER_VARIABLE = 130e-6


class _Most(NamedTuple):
    """Pods placed in ``state`` (``found`` of them), and the most any placement could hold."""

    state: _State
    found: int
    bound: int

    @property
    def proven(self) -> bool:
        return self.found == self.bound


class _Members(NamedTuple):
    """Members of a JobGroup whose quorums fit together (``fitted``), where they go, and
    whether no placement holds more of them."""

    state: _State
    fitted: frozenset[int]
    proven: bool


class _Exact:
    """CP-SAT's word where greedy's first fit can be wrong about pods of several kinds: whether
    a JobGroup has a place with nothing else planned, and the most of its pods some room
    holds. One worker and deterministic limits, so the same groups get the same answer every
    run; past the budget all of a plan's groups share, greedy's count stands, said as found."""

    def __init__(self, problem: Problem) -> None:
        self.problem, self.left, self.searches = problem, ALONE_BUDGET, 0
        self._rooms: dict[tuple[int, int], _DomainRoom] = {}
        self._requested: dict[tuple[int, int, int], dict[int, int]] = {}
        self._answers: dict[str, SolveResult[Assignment]] = {}
        self._kinds: dict[int, list[int]] = {}

    def domain_room(self, g: int, level: int) -> _DomainRoom:
        """_domain_room on the snapshot's room, once per gang: whether a group fits alone and
        why not both ask for it."""
        found = self._rooms.get((g, level))
        if found is None:
            found = self._rooms[g, level] = _domain_room(self.problem, g, level, None)
        return found

    def kinds(self, g: int) -> list[int]:
        """_node_kinds on the snapshot's room, once per gang: its fits-alone question, its
        required domains' counts and what ties its minimums each ask for them."""
        found = self._kinds.get(g)
        if found is None:
            found = self._kinds[g] = _node_kinds(self.problem, g, self.problem.matrix("free"))
        return found

    def requested_in(self, g: int, level: int, k: int) -> dict[int, int]:
        """_requested_in on the snapshot's room, once per gang and resource: whether a group
        fits alone and why not both ask for it."""
        found = self._requested.get((g, level, k))
        if found is None:
            found = self._requested[g, level, k] = _requested_in(self.problem, g, level, k, self.domain_room(g, level)[2], None)
        return found

    def placed(self, j: int) -> bool:
        return self._placement(alone(self.problem, j, self.problem.matrix("free"), set())[0])[0] is not None

    def in_domains(self, j: int, g: int, domains: list[list[int]]) -> bool | None:
        """Whether PodGroup ``g`` (of JobGroup ``j``, its only member) has a placement of its
        quorum in one of ``domains`` (each a list of nodes), asked of CP-SAT domain by domain:
        small models, where one on the whole cluster may not be answered in time. None when
        more than EXACT_DOMAINS would need asking and those did not hold it, or an answer did
        not come within the budget."""
        settled = len(domains) <= EXACT_DOMAINS
        for nodes in domains[:EXACT_DOMAINS]:
            sub = _alone_in(self.problem, j, self.problem.gangs[g].roles, self.problem.matrix("free"), nodes, owes=True)[0]
            counts, proven = self._placement(sub, [_PLACED])
            if counts is not None:
                return True
            settled = settled and proven
        return False if settled else None

    def with_quorum(self, j: int, g: int, k: int | None, nodes: Sequence[int] | None = None) -> tuple[int | None, bool]:
        """The most of resource ``k`` PodGroup ``g``'s pending pods request in a placement that
        meets its other minimums (minMember, task minimums, terms), minResources set aside; with
        ``k`` None, the most pods in one that meets the task minimums and minResources, minMember
        set aside. With nothing else planned (on ``nodes`` only, if given): what ties the
        minimums when each alone has room. None without such a placement; and whether the
        answer is proven (within the budget)."""
        problem = self.problem
        sub, origin = _alone_in(problem, j, problem.gangs[g].roles, problem.matrix("free"), nodes, owes=True)
        aside = {"need": 0} if k is None else {"min_resources": (0,) * len(problem.resources)}
        sub = replace(sub, gangs=(replace(sub.gangs[0], **aside),))
        unit, weights = _in_units({i: 1 if k is None else problem.roles[r].request[k] for i, r in enumerate(origin)})
        most = Term("most", "maximize", roles=weights, upper=sum(w * sub.roles[i].count for i, w in weights.items()))
        result = self._solve(sub, [_PLACED, most], Assignment({}, frozenset()))
        if result is None or result.assignment is None or result.status != "OPTIMAL":
            return None, False
        if 0 not in result.assignment.placed:
            return None, True
        return unit * sum(weights.get(i, 0) * c for (i, _), c in result.assignment.counts.items()), True

    def quorum(self, j: int, g: int, state: _State) -> bool:
        """Place PodGroup ``g``'s quorum (of JobGroup ``j``) in ``state``: where greedy puts it,
        else where CP-SAT finds room for it; False, leaving ``state`` as it was, when neither does."""
        mark = state.mark()
        if _place_gang_quorum(state, g):
            return True
        state.undo(mark)
        sub, origin = _alone_in(self.problem, j, self.problem.gangs[g].roles, state.free.copy(), None, owes=True)
        if (counts := self._placement(sub)[0]) is None:
            return False
        for (i, n), c in sorted(counts.items()):
            if c:
                state.put(origin[i], n, c)
        return True

    def members(self, j: int) -> _Members | None:
        """The most members of JobGroup ``j`` whose quorums fit together with nothing else
        planned: each member a JobGroup of its own, their count maximised, earlier ones first
        among equals. None past the budget."""
        problem = self.problem
        jg = problem.job_groups[j]
        sub, origin = alone(problem, j, problem.matrix("free"), set())
        split = replace(
            sub,
            gangs=tuple(replace(gang, job_group=i) for i, gang in enumerate(sub.gangs)),
            job_groups=tuple(
                replace(sub.job_groups[0], key=problem.gangs[g].key, gangs=(i,), rank=i) for i, g in enumerate(jg.gangs)
            ),
        )
        n = len(jg.gangs)
        each = n * (n + 1) // 2 + 1  # more than all the tie-breaks: earlier members in queue order first
        count = Term("members", "maximize", {i: each + n - i for i in range(n)}, upper=n * each + each)
        result = self._solve(split, [count], Assignment({}, frozenset()))
        if result is None or result.assignment is None:
            return None
        state = _State(problem)
        for (i, node), c in sorted(result.assignment.counts.items()):
            if c:
                state.put(origin[i], node, c)
        fitted = frozenset(jg.gangs[i] for i in result.assignment.placed)
        return _Members(state, fitted, result.status == "OPTIMAL")

    def _placement(self, sub: Problem, terms: list[Term] | None = None) -> tuple[Mapping[tuple[int, int], int] | None, bool]:
        """Where CP-SAT places the one JobGroup of ``sub`` (by ``terms``, else its objective 1
        alone), None when it has no place or no answer within the budget; and whether that
        answer is proven (a placement, or none exists)."""
        terms = terms or [term for term in objective_terms(sub) if term.primary]
        result = self._solve(sub, terms, Assignment({}, frozenset()))
        if result is None or result.assignment is None:
            return None, False
        if 0 not in result.assignment.placed:
            return None, result.status == "OPTIMAL"
        return result.assignment.counts, True

    def most(
        self, j: int, roles: Sequence[int], room: np.ndarray | None = None, nodes: Sequence[int] | None = None,
        beat: int = -1, cap: int | None = None, search: bool = True,
    ) -> _Most:
        """The most pods of ``roles`` (one PodGroup's, of JobGroup ``j``) that ``room`` holds on
        their candidates (among ``nodes`` if given). Pods of one kind are counted exactly by
        first fit; others are searched for only where more than ``beat`` could fit, from the
        better of two first fits: kinds in the group's order, and smallest first (each misses
        what the other finds: 34 and 34 of test_explain_counts' 820 mixed counts). ``cap``:
        _pods_bound for these roles and nodes, known already (_domain_room's)."""
        problem = self.problem
        free = problem.matrix("free") if room is None else room

        def first_fit(order: Iterable[int]) -> tuple[_State, int]:
            fitted = _state(problem, room)
            for r in order:
                place_pods(fitted, r, problem.roles[r].count, nodes)
            return fitted, sum(fitted.placed_of(r) for r in roles)

        state, found = first_fit(roles)
        if len(roles) > 1 and (smallest := first_fit(sorted(roles, key=lambda r: (state.share(r), r))))[1] > found:
            state, found = smallest
        if len(roles) == 1:
            return _Most(state, found, found)
        bound = cap if cap is not None else _pods_bound(problem, roles, free, nodes, found)
        if found >= bound or not search or bound <= beat or self.left <= 0:
            return _Most(state, found, max(found, bound))
        pods = Term("pods", "maximize", pods=1, upper=sum(problem.roles[r].count for r in roles))
        if (searched := self._search(j, roles, room, nodes, state, pods)) is None:
            return _Most(state, found, bound)
        better, optimal = searched
        count = sum(better.placed_of(r) for r in roles)
        return _Most(better, count, count if optimal else bound)

    def requested(
        self, j: int, roles: Sequence[int], k: int, need: int, room: np.ndarray | None = None,
        nodes: Sequence[int] | None = None,
    ) -> _Most:
        """The most of resource ``k`` the pods of ``roles`` that ``room`` holds (among ``nodes``)
        request together, in its units: minResources' counterpart of ``most``. First fit takes
        the largest pods first; it is searched past only when it falls short of ``need``."""
        problem = self.problem
        free = problem.matrix("free") if room is None else room
        state = _state(problem, room)
        for r in sorted(roles, key=lambda r: (-problem.roles[r].request[k], r)):
            place_pods(state, r, problem.roles[r].count, nodes)

        def amount(state: _State) -> int:
            return sum(state.placed_of(r) * problem.roles[r].request[k] for r in roles)

        found = amount(state)
        bound = _requested_bound(problem, roles, k, free, nodes)
        if found >= min(need, bound) or len(roles) == 1 or self.left <= 0:
            return _Most(state, found, max(found, bound))  # one kind: first fit's count is the most
        weights = _in_units({r: problem.roles[r].request[k] for r in roles})[1]
        term = Term("requested", "maximize", upper=sum(w * problem.roles[r].count for r, w in weights.items()))
        if (searched := self._search(j, roles, room, nodes, state, term, weights)) is None:
            return _Most(state, found, bound)
        better, optimal = searched
        return _Most(better, amount(better), amount(better) if optimal else bound)

    def _search(
        self, j: int, roles: Sequence[int], room: np.ndarray | None, nodes: Sequence[int] | None, hint: _State,
        term: Term, weights: Mapping[int, int] | None = None,
    ) -> tuple[_State, bool] | None:
        """CP-SAT's best placement for ``term`` of the pods of ``roles`` owing nothing, from
        ``hint``; ``weights``: per role, its pods' coefficient in ``term``. The placement, and
        whether it is proven best; None with no answer within the budget."""
        problem = self.problem
        self.searches += 1
        free = problem.matrix("free") if room is None else room
        sub, origin = _alone_in(problem, j, roles, free, nodes, owes=False)
        index = {r: i for i, r in enumerate(origin)}
        if weights is not None:
            term = replace(term, roles={index[r]: w for r, w in weights.items()})
        start = Assignment({(index[r], n): c for (r, n), c in hint.counts.items() if c}, frozenset({0}))
        result = self._solve(sub, [term], start)
        if result is None or result.assignment is None:
            return None
        better = _state(problem, room)
        for (i, n), c in sorted(result.assignment.counts.items()):
            if c:
                better.put(origin[i], n, c)
        return better, result.status == "OPTIMAL"

    def _solve(self, sub: Problem, terms: list[Term], hint: Assignment) -> SolveResult[Assignment] | None:
        """CP-SAT's answer for the one JobGroup of ``sub``, within the budget; a question asked
        already (the same sub-problem, terms and start, from another of a sweep's alike groups)
        is answered again at no cost, as CP-SAT would answer it. A question whose model alone
        would cost more than the budget has left is not asked: it would only overrun it (a
        JobGroup of 1,900 one-pod members on 2,048 nodes built 3.9 M variables, 5.4 GB)."""
        cost = ALONE_CHARGE + ALONE_PER_VARIABLE * candidate_count(sub)
        if cost > ALONE_BUDGET:
            return None  # never asked, so never answered: not even its text is worth making
        asked = _question(sub, terms, hint)
        if (answer := self._answers.get(asked)) is not None:
            return answer
        if cost > self.left:
            return None
        from .cpsat import solve_cpsat  # OR-Tools, only when asked: see planner

        result = solve_cpsat(sub, terms, hint, time_limit=min(ALONE_LIMIT, self.left), tuning=Tuning(), symmetry=False)
        self.left -= result.deterministic_time + ALONE_CHARGE + ALONE_PER_VARIABLE * result.variables
        self._answers[asked] = result
        return result


def _pods_bound(problem: Problem, roles: Sequence[int], free: np.ndarray, nodes: Sequence[int] | None, reached: int) -> int:
    """At least the most pods of ``roles`` that ``free`` holds (among ``nodes``): no role more
    than its count or its room alone, and on each node, for each resource, as many as fit
    taking the smallest first. First fit's count is the most where it ``reached`` this, so
    the per-node part is not worked out when the first part already says so. Pods of roles a
    term keeps apart take a k-th of a node each: no more than its cap k times the nodes one of
    them fits on, as a column of theirs would say."""
    per_role = 0
    kinds = []
    apart: dict[str, tuple[list[int], set[int]]] = {}  # per term: its roles' pods alone, and their nodes
    among = None if nodes is None else np.asarray(nodes, dtype=np.int64)
    for r in roles:
        role = problem.roles[r]
        at = role.nodes if among is None else role.nodes[np.isin(role.nodes, among)]
        caps = pods_that_fit(free, role.request, role.most, at)
        if role.apart:
            pods, held = apart.setdefault(role.apart, ([], set()))
            pods.append(min(role.count, int(caps.sum())))
            held.update(at[caps > 0].tolist())
        else:
            per_role += min(role.count, int(caps.sum()))
        kinds.append((r, at, caps))
    per_role += sum(min(sum(pods), _apart_cap(problem, roles, name) * len(held)) for name, (pods, held) in apart.items())
    if per_role <= reached:
        return per_role
    return min(per_role, int(_per_node(problem, kinds, free)[1].sum()))


def _requested_bound(problem: Problem, roles: Sequence[int], k: int, free: np.ndarray, nodes: Sequence[int] | None) -> int:
    """At least the most of resource ``k`` the pods of ``roles`` that ``free`` holds request
    (among ``nodes``): no role's pods more than fit alone, no node more than its room."""
    per_role, per_node = _requested_room(problem, roles, k, free, nodes)
    return min(per_role, int(per_node.sum()))


def _requested_in(
    problem: Problem, g: int, level: int, k: int, alone: dict[int, dict[int, int]], room: np.ndarray | None
) -> dict[int, int]:
    """Per domain of ``level`` where gang ``g`` has candidates (``alone``: _domain_room's), at
    least the most of resource ``k`` its pods that fit there request: each role's pods that fit
    there alone, and no node past its room. ``room``: free per node and resource, the
    snapshot's by default."""
    free = problem.matrix("free") if room is None else room
    per_node = _requested_room(problem, problem.gangs[g].roles, k, free, None)[1]
    domains = sorted({d for held in alone.values() for d in held})
    domain_of = problem.domain_array(level)
    inside = domain_of >= 0
    summed = np.bincount(domain_of[inside], weights=per_node[inside], minlength=max(domains, default=0) + 1)
    return {
        d: min(int(summed[d]), sum(n * problem.roles[r].request[k] for r, held in alone.items() if (n := held.get(d, 0))))
        for d in domains
    }


def _requested_room(
    problem: Problem, roles: Sequence[int], k: int, free: np.ndarray, nodes: Sequence[int] | None
) -> tuple[int, np.ndarray]:
    """What the pods of ``roles`` that fit alone (among ``nodes``) request of resource ``k``:
    in all, each role's no more than its count; and per node of the problem, no more than the
    node's free room."""
    among = None if nodes is None else np.asarray(nodes, dtype=np.int64)
    per_role, per_node = 0, np.zeros(len(free), dtype=np.int64)
    for r in roles:
        role = problem.roles[r]
        at = role.nodes if among is None else role.nodes[np.isin(role.nodes, among)]
        caps = pods_that_fit(free, role.request, role.most, at)
        per_role += min(role.count, int(caps.sum())) * role.request[k]
        np.add.at(per_node, at, caps * role.request[k])
    return per_role, np.minimum(per_node, free[:, k])


def _per_node(
    problem: Problem, kinds: Sequence[tuple[int, np.ndarray, np.ndarray]], free: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes ``kinds`` (role, its candidate nodes, the pods of it each holds alone) touch,
    ascending, and at least the most of their pods each holds together: for each resource, as
    many as fit taking the smallest first. A resource none of them asks bounds nothing the
    others do not (every pod fits in it), so only one such is counted: a cluster of 300
    extended resources walked all 300 for pods asking 4. Of the roles a term keeps apart, its
    cap a node (their caps alone let each role count every node)."""
    touched = np.unique(np.concatenate([at for _, at, _ in kinds] or [np.zeros(0, np.int64)]))
    most = np.full(len(touched), np.iinfo(np.int64).max, dtype=np.int64)
    every = range(len(problem.resources))
    asked = [k for k in every if any(problem.roles[r].request[k] for r, _, _ in kinds)]
    for k in asked + [k for k in every if k not in asked][:1]:
        room = free[touched, k].copy()
        fitted = np.zeros(len(touched), dtype=np.int64)
        for r, at, caps in sorted(kinds, key=lambda kind: problem.roles[kind[0]].request[k]):
            want = problem.roles[r].request[k]
            copies = np.zeros(len(touched), dtype=np.int64)
            copies[np.searchsorted(touched, at)] = caps
            take = copies if not want else np.minimum(copies, room // want)
            room -= take * want
            fitted += take
        np.minimum(most, fitted, out=most)
    for name in _apart(problem, (r for r, _, _ in kinds)):
        kept, rest = np.zeros(len(touched), dtype=np.int64), np.zeros(len(touched), dtype=np.int64)
        for r, at, caps in kinds:
            np.add.at(kept if problem.roles[r].apart == name else rest, np.searchsorted(touched, at), caps)
        np.minimum(most, np.minimum(kept, _apart_cap(problem, (r for r, _, _ in kinds), name)) + rest, out=most)
    return touched, most


_PLACED = Term("placed", "maximize", {0: 1}, upper=1)  # the one JobGroup of a question placed


def _in_units(amounts: Mapping[int, int]) -> tuple[int, dict[int, int]]:
    """The largest unit all ``amounts`` are whole multiples of, and each (the nonzero ones) in
    it: small coefficients for CP-SAT's objective."""
    unit = math.gcd(*amounts.values()) or 1
    return unit, {key: a // unit for key, a in amounts.items() if a}


def _question(sub: Problem, terms: list[Term], hint: Assignment) -> str:
    """Everything a CP-SAT question about ``sub``'s one JobGroup reads, as text: its roles
    (their pods by count, not name), PodGroups and JobGroup without their names, the room of
    its candidate nodes, the terms and the start. Alike groups of a sweep ask the same one.
    Which roles a term keeps apart is part of it (their caps alone may not show it), by the
    term's place among the question's, not its name, which each group of a sweep has its own."""
    terms_at = {name: i for i, name in enumerate(dict.fromkeys(role.apart for role in sub.roles if role.apart))}
    roles = [
        (role.gang, role.request, role.count, role.task, terms_at.get(role.apart, -1), role.apart_cap, role.nodes.tobytes(),
         role.caps.tobytes())
        for role in sub.roles
    ]
    gangs = [replace(gang, key="", excluded={}, blocked="") for gang in sub.gangs]
    jobs = [replace(jg, key="") for jg in sub.job_groups]
    nodes = sorted({n for role in sub.roles for n in role.nodes.tolist()})  # the model has no other
    room = [(sub.free[n], sub.idle[n]) for n in nodes]
    return repr((roles, gangs, jobs, room, terms, sorted(hint.counts.items()), sorted(hint.placed)))


def _alone_in(
    problem: Problem, j: int, roles: Sequence[int], free: np.ndarray, nodes: Sequence[int] | None, *, owes: bool
) -> tuple[Problem, tuple[int, ...]]:
    """The pods of ``roles`` (one PodGroup's, of JobGroup ``j``) as a JobGroup of their own on
    ``free`` (and ``nodes``); and the problem's index of each role kept. ``owes``: with its
    PodGroup's minimums and terms (all its roles given), else owing nothing, so that the most
    pods its plan can place is the most that fit."""
    sub, origin = alone(problem, j, free, set())
    keep = [i for i, r in enumerate(origin) if r in set(roles)]
    index = {i: k for k, i in enumerate(keep)}
    among = None if nodes is None else np.asarray(sorted(nodes), dtype=np.int64)
    kept = []
    for i in keep:
        role = replace(sub.roles[i], gang=0)
        if among is not None:
            inside = np.isin(role.nodes, among)
            role = replace(role, nodes=frozen(role.nodes[inside]), caps=frozen(role.caps[inside]))
        kept.append(role)
    gang = sub.gangs[sub.roles[keep[0]].gang]
    if owes:
        tasks = tuple(replace(t, roles=tuple(index[i] for i in t.roles)) for t in gang.tasks)
        gang = replace(gang, job_group=0, roles=tuple(range(len(kept))), tasks=tasks)
    else:
        gang = replace(
            gang, job_group=0, roles=tuple(range(len(kept))), min_member=0, need=0, tasks=(),
            min_resources=(0,) * len(problem.resources), topology=None,
        )
    only = replace(sub.job_groups[0], gangs=(0,), feasible=True)
    # One PodGroup alone: no other gang to keep apart from.
    return replace(sub, roles=tuple(kept), gangs=(gang,), job_groups=(only,), exclusive=()), tuple(origin[i] for i in keep)


def _minimums_short(
    problem: Problem, g: int, level: int, exact: _Exact, rooms: _DomainRoom, room: np.ndarray | None, then: bool
) -> str:
    """A task minimum or minResources that no domain of ``level`` can hold: a task by a bound
    (in each domain, the pods of its roles that fit there alone, summed), minResources by the
    most the pods that fit in a domain request (``_Exact.requested``), in each domain whose
    bound could beat the best (searched in the EXACT_DOMAINS most promising); '' when each
    minimum may have room somewhere (what stops the group is then the packing, no one figure).
    ``room``: free per node and resource, the snapshot's by default."""
    gang, tree = problem.gangs[g], problem.tree
    assert tree is not None
    nodes_in, _, alone = rooms
    key = level_key(tree, level)
    noun = _noun(tree, level)
    domains = sorted({d for held in alone.values() for d in held})
    then_ = "then " if then else ""
    for task in gang.tasks:
        if task.need:
            fits = {d: sum(alone[r].get(d, 0) for r in task.roles) for d in domains}
            d = max(domains, key=lambda d: (fits[d], -d))
            if fits[d] < task.need:
                return (
                    f"required {key}: no {noun} {then_}holds task {task.task}'s minTaskMember {task.minimum}: "
                    f"at most {task.counted + fits[d]} fit in the best ({problem.domain_name(level, d)})"
                )
    for k, deficit in enumerate(gang.min_resources):
        if not deficit:
            continue
        name = problem.resources[k]
        adds = exact.requested_in(g, level, k) if room is None else _requested_in(problem, g, level, k, alone, room)
        best, best_d, short, start = -1, -1, True, exact.searches
        bounds: list[int] = []
        for d in sorted(domains, key=lambda d: (-adds[d], d)):
            if adds[d] <= best:
                break
            if best >= 0 and (exact.left <= 0 or exact.searches - start >= EXACT_DOMAINS):  # the rest: their bounds
                short = adds[d] < deficit
                bounds.append(adds[d])
                break
            there = exact.requested(gang.job_group, gang.roles, k, deficit, room, sorted(nodes_in[d]))
            if there.bound >= deficit:  # it may hold minResources' pods: no figure says otherwise
                short = False
                break
            bounds.append(there.bound)
            if there.found > best:
                best, best_d = there.found, d
        proven = all(bound <= best for bound in bounds)
        if short and best >= 0:
            cut = "" if proven else _CUT_SHORT
            shown, needed = describe_apart(name, best, deficit)
            amount = f"{shown} {name} ({problem.domain_name(level, best_d)}{cut})"
            fit = f"the pods that {then_}fit in one {noun} request at most {amount}" if proven else (
                f"the pods {then_}found room in one {noun} request only {amount}"
            )
            return f"required {key}: {fit}, and minResources needs {needed} more"
    return ""


def _requests_short(problem: Problem, g: int, exact: _Exact, room: np.ndarray | None = None) -> str:
    """'the pods that fit request at most 4 cpu even with nothing else planned, and minResources
    needs 10 more' (``room``: '... that then fit ...'), for a minResources no placement of its
    pods reaches; '' when one may."""
    gang = problem.gangs[g]
    for k, deficit in enumerate(gang.min_resources):
        if not deficit:
            continue
        most = exact.requested(gang.job_group, gang.roles, k, deficit, room)
        if most.bound >= deficit:
            continue
        name = problem.resources[k]
        shown, needed = describe_apart(name, most.found, deficit)
        amount = f"{shown} {name}"
        then, alone = ("then ", "") if room is not None else ("", " even with nothing else planned")
        fit = f"the pods that {then}fit request at most {amount}" if most.proven else (
            f"the pods {then}found room request only {amount}"
        )
        cut = "" if most.proven else f" ({_CUT_SHORT[2:]})"
        said = f"{fit}{alone}{cut}, and minResources needs {needed} more"
        return said + _fits_nowhere(problem, g, room)
    return ""


def _tied_short(problem: Problem, g: int, exact: _Exact) -> str:
    """'with minMember 3 met, the pods that fit request at most 0 nvidia.com/gpu even with
    nothing else planned, and minResources needs 1 more', or 'with the task minimums met, at
    most 1 of minMember 2 pods fit ...': minimums that each have room alone, not together
    (the pods that make one are not those that make the other); '' when none is short so, or
    no figure is proven. Under a required term each domain is asked alone, one of each kind."""
    gang = problem.gangs[g]
    topo, tree = gang.topology, problem.tree
    key = where = said = ""
    places: list[list[int] | None] = [None]
    if topo is not None and topo.required and tree is not None:
        level = max(topo.required)
        key, where = level_key(tree, level), f" in one {_noun(tree, level)}"
        nodes_in = exact.domain_room(g, level)[0]
        places = [sorted(nodes_in[d]) for d in _distinct(exact.kinds(g), nodes_in, sorted(nodes_in))]
        if len(places) > EXACT_DOMAINS:
            return ""

    def most(k: int | None) -> int | None:
        found: list[int] = []
        for nodes in places:
            there, proven = exact.with_quorum(gang.job_group, g, k, nodes)
            if not proven:
                return None
            found += [] if there is None else [there]
        return max(found, default=None)

    tasks = any(t.need for t in gang.tasks)
    for k, deficit in enumerate(gang.min_resources):
        if deficit and (requested := most(k)) is not None and requested < deficit:
            name = problem.resources[k]
            held = f"minMember {gang.min_member}" + (" and the task minimums" if tasks else "")
            shown, needed = describe_apart(name, requested, deficit)
            said = (
                f"with {held} met, the pods that fit{where} request at most {shown} {name} "
                f"even with nothing else planned, and minResources needs {needed} more"
            )
            break
    resources = any(gang.min_resources)
    if not said and (tasks or resources) and (pods := most(None)) is not None:
        if gang.counted + pods < gang.min_member:
            held = " and ".join(["the task minimums"] * tasks + ["minResources"] * resources)
            said = (
                f"with {held} met, at most {gang.counted + pods} of minMember {gang.min_member} pods "
                f"fit{where} even with nothing else planned"
            )
    return f"required {key}: {said}" if said and key else said


def _node_kinds(problem: Problem, g: int, free: np.ndarray) -> list[int]:
    """Per node, its kind for gang ``g``: nodes of one kind have the same free room and take the
    same of its roles. Kinds are numbered in the order of their rows (room, then a bit per
    role, the first role first), as np.unique's rows would be; 63 roles' bits are one column,
    and the rows are sorted by column, not compared whole: that took 0.2 s a gang of 80 roles
    at 20,480 nodes."""
    roles = problem.gangs[g].roles
    columns = list(free.T)
    for start in range(0, len(roles), 63):
        bits = np.zeros(len(free), dtype=np.int64)
        for i, r in enumerate(roles[start : start + 63]):
            bits[problem.roles[r].nodes] |= 1 << (62 - i)
        columns.append(bits)
    if not columns or not len(free):
        return [0] * len(free)
    order = np.lexsort(columns[::-1])
    rows = np.stack(columns)[:, order]
    starts = np.ones(len(order), dtype=bool)  # the first node of each kind, in row order
    starts[1:] = (rows[:, 1:] != rows[:, :-1]).any(axis=0)
    kinds = np.empty(len(order), dtype=np.int64)
    kinds[order] = np.cumsum(starts) - 1
    return kinds.tolist()


def _distinct(kinds: list[int], nodes_in: Mapping[int, Iterable[int]], domains: Iterable[int]) -> list[int]:
    """``domains``, the first of each kind kept: a domain alike to one before it (as many nodes
    of each kind, ``kinds``: _node_kinds) holds as much. 1,024 alike nodes and 300 node-term
    groups took 33 s of first fit, one per node."""
    seen: set[tuple[int, ...]] = set()
    kept = []
    for d in domains:
        alike = tuple(sorted(kinds[n] for n in nodes_in[d]))
        if alike not in seen:
            seen.add(alike)
            kept.append(d)
    return kept


def _noun(tree: TopologyTree, level: int) -> str:
    """What a domain of ``level`` is called: its label key, 'node' at the node level."""
    return "node" if level == len(tree.levels) else level_key(tree, level)


def _fits_nowhere(problem: Problem, g: int, room: np.ndarray | None) -> str:
    """': ps-0 (8 cpu, 8Gi memory) fits on no node it can use' (``room``: '... it can then
    use'), for the kinds of gang ``g``'s pods no candidate node has room for: what minResources
    counted on and cannot get. The first pod of each kind is named, two kinds at most."""
    free = problem.matrix("free") if room is None else room
    kinds = [
        problem.roles[r] for r in problem.gangs[g].roles
        if not pods_that_fit(free, problem.roles[r].request, 1, problem.roles[r].nodes).any()
    ]
    if not kinds:
        return ""
    shown = " and ".join(f"{role.pods[0].name} ({', '.join(_asks(problem, role.request, [role.apart] if role.apart else []))})" for role in kinds[:2])
    more = f" and {plural(len(kinds) - 2, 'more kind')} of pod" if len(kinds) > 2 else ""
    fits, it = ("fits", "it") if len(kinds) == 1 else ("fit", "they")
    return f": {shown}{more} {fits} on no node {it} can {'then ' if room is not None else ''}use"


def _asked(problem: Problem, g: int, k: int) -> int:
    """What minResources still asks of resource k (its tuple is empty when it asks none)."""
    asked = problem.gangs[g].min_resources
    return asked[k] if asked else 0


def _quorum_need(problem: Problem, g: int, k: int) -> int:
    """The least of resource k its quorum can need."""
    if not any(problem.roles[r].request[k] for r in problem.gangs[g].roles):
        return 0  # asked for every resource of a cluster: most are extended ones the gang does not use
    return _least_quorum(problem, g, lambda r: problem.roles[r].request[k])


def _least_quorum(problem: Problem, g: int, size: Callable[[int], int]) -> int:
    """The least its quorum can need of what each pod of role r asks ``size(r)`` of: each
    Volcano task's smallest pods up to its minimum, then the smallest of the rest up to
    minMember."""
    gang = problem.gangs[g]

    def sizes(roles: Iterable[int]) -> list[int]:
        return sorted(size(r) for r in roles for _ in range(problem.roles[r].count))

    chosen: list[int] = []
    rest: list[int] = []
    for task in gang.tasks:
        own = sizes(task.roles)
        chosen += own[: task.need]
        rest += own[task.need :]
    in_tasks = {r for task in gang.tasks for r in task.roles}
    rest = sorted(rest + sizes(r for r in gang.roles if r not in in_tasks))
    return sum(chosen) + sum(rest[: max(0, gang.need - len(chosen))])


def _most_requested(problem: Problem, g: int) -> list[int]:
    gang = problem.gangs[g]
    return [sum(problem.roles[r].request[k] * problem.roles[r].count for r in gang.roles) for k in range(len(problem.resources))]


def _state(problem: Problem, room: np.ndarray | None) -> _State:
    state = _State(problem)
    if room is not None:
        state.free = room.copy()
    return state


def _blocking(state: _State, roles: Iterable[int], nodes: np.ndarray) -> str:
    """The resources that stop one more pod of ``roles`` on ``nodes`` (as ``state`` leaves
    them), those short on most nodes first: 'cpu, memory'."""
    problem = state.problem
    pending = [r for r in roles if state.placed_of(r) < problem.roles[r].count] or list(roles)
    short = np.zeros(len(problem.resources), dtype=np.int64)
    taken: dict[str, int] = defaultdict(int)  # pods kept apart: nodes one of theirs has already
    reachable = False
    for r in pending:
        on = state.candidates(r, nodes)
        reachable |= bool(len(on))
        short += (state.free[on] < state.request(r)).sum(axis=0)
        if (apart := problem.roles[r].apart) and (mine := state.taken(r)):
            taken[apart] += int(np.isin(on, np.array(mine, dtype=np.int64)).sum())
    named = sorted([(-int(c), name) for c, name in zip(short.tolist(), problem.resources) if c] + [(-c, n) for n, c in taken.items() if c])
    if not named and not reachable:
        # No resource is short: the pods left have no candidate there at all.
        return "no node there passes the filters of the pods left: selectors, affinity, taints"
    return ", ".join(name for _, name in named) or "pods"


_DomainRoom = tuple[dict[int, set[int]], dict[int, int], dict[int, dict[int, int]]]


def _domain_room(problem: Problem, g: int, level: int, room: np.ndarray | None) -> _DomainRoom:
    """Per domain of ``level`` that holds a candidate of gang ``g``: its candidate nodes; the
    most of the gang's pending pods it could hold (each role's that fit there alone, summed,
    and for pods of several kinds no more than their sizes together allow node by node); and
    per role, per domain, that role's alone. ``room``: free per node and resource, the
    snapshot's by default."""
    gang = problem.gangs[g]
    free = problem.matrix("free") if room is None else room
    nodes_in: dict[int, set[int]] = {}  # a set: a node twice among candidates is filled twice
    most: dict[int, int] = {}
    alone: dict[int, dict[int, int]] = {}
    kinds = []
    for r in gang.roles:
        role = problem.roles[r]
        held = alone[r] = {}
        caps = role.caps if room is None else pods_that_fit(free, role.request, role.most, role.nodes)
        kinds.append((r, role.nodes, caps))
        for n, cap in zip(role.nodes.tolist(), caps.tolist()):
            d = problem.domain(level, n)
            if d is not None:
                nodes_in.setdefault(d, set()).add(n)
                held[d] = held.get(d, 0) + cap
        for d, cap in held.items():
            held[d] = min(cap, role.count)
            most[d] = most.get(d, 0) + held[d]
    if len(gang.roles) > 1 and most:
        touched, per_node = _per_node(problem, kinds, free)
        domain_of = problem.domain_array(level)[touched]
        inside = domain_of >= 0
        summed = np.bincount(domain_of[inside], weights=per_node[inside], minlength=max(most) + 1)
        most = {d: min(m, int(summed[d])) for d, m in most.items()}
    return nodes_in, most, alone


def _required_reason(problem: Problem, g: int, exact: _Exact, room: np.ndarray | None = None, then: bool = False) -> str:
    """The best domain of the deepest required level, and what runs out there; where a domain
    holds minMember's pods, a task minimum or minResources none can hold (_minimums_short), or
    ''. ``room``: free per node and resource, the snapshot's by default;
    ``then``: on the room the plan leaves. Pods of several kinds are counted by
    CP-SAT in the EXACT_DOMAINS most promising domains; past them, or past the budget, the
    best is the best found."""
    gang = problem.gangs[g]
    topo = gang.topology
    assert topo is not None and problem.tree is not None
    level = max(topo.required)
    key = level_key(problem.tree, level)
    noun = _noun(problem.tree, level)
    nodes_in, most, alone = exact.domain_room(g, level) if room is None else _domain_room(problem, g, level, room)
    if not nodes_in:
        where = "node passes" if noun == "node" else "domain has a node that passes"
        return f"required {key}: no {where} the filters"
    # The most placed, the first domain among equals; a domain that cannot beat it is not
    # tried (at the node level there is one per candidate node).
    best, best_d, best_state, start = -1, -1, _state(problem, room), exact.searches
    bounds: list[int] = []  # of the domains tried: the most each could hold
    order = sorted(most, key=lambda d: (-most[d], d))
    first = set(_distinct(exact.kinds(g) if room is None else _node_kinds(problem, g, room), nodes_in, order))
    for d in order:
        if most[d] < best or gang.counted + best >= gang.min_member:  # no count is then the reason
            break
        if (most[d] == best and d > best_d) or d not in first:
            continue  # no more than the best, or alike to a domain before it
        search = exact.searches - start < EXACT_DOMAINS
        there = exact.most(gang.job_group, gang.roles, room, sorted(nodes_in[d]), best, most[d], search)
        bounds.append(there.bound)
        if there.found > best or (there.found == best and d < best_d):
            best, best_d, best_state = there.found, d, there.state
    proven = all(bound <= best for bound in bounds)
    total = gang.counted + best
    if total >= gang.min_member:
        return _minimums_short(problem, g, level, exact, (nodes_in, most, alone), room, then)
    nodes = np.array(sorted(nodes_in[best_d]), dtype=np.int64)
    scarce = _blocking(best_state, gang.roles, nodes)
    where = problem.domain_name(level, best_d)
    if level != len(problem.tree.levels):
        inside = len(problem.tree.domains[level][best_d].nodes)
        if inside > len(nodes):
            failing = inside - len(nodes)
            # Not only filters: a node without room for one of its pods is no candidate either.
            scarce += f"; {failing} of its {inside} nodes can take none of its pods"
    if not proven:
        scarce += _CUT_SHORT
    if level in topo.pinned:  # the only domain it may use, not the best of several
        holds = f"running members hold it to {where}, which {'then ' if then else ''}holds"
        return f"required {key}: {holds} {total} of {gang.min_member} pods ({scarce})"
    best_noun = f"best {noun}" if proven else f"best {noun} found"
    return f"required {key}: the {best_noun} ({where}) {'then ' if then else ''}holds {total} of {gang.min_member} pods ({scarce})"

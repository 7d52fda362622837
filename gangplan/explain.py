"""Why a JobGroup was not placed: the first thing that stops it, in figures.

Checks go from the cheapest and most certain to the most situational: too few pods, no
node passing the filters, the cluster's free total, what fits with nothing else planned,
and last, which higher-priority groups took the room.
"""

from __future__ import annotations

from .greedy import _place_quorum, _State, place_pods
from .objective import Assignment
from .problem import Problem, level_key
from .quantity import describe_amount
from .semantics import node_usable


def _usable_free(problem: Problem) -> list[int]:
    """The cluster's free total per resource on Ready, schedulable nodes."""
    usable = [f for f, node in zip(problem.free, problem.nodes) if node_usable(node)]
    return [sum(f[k] for f in usable) for k in range(len(problem.resources))]


def reasons(problem: Problem, assignment: Assignment) -> dict[int, str]:
    free = _usable_free(problem)
    placed = _Placed(problem, assignment)
    return {
        j: reason(problem, assignment, j, free, placed)
        for j in range(len(problem.job_groups))
        if j not in assignment.placed
    }


class _Placed:
    """The JobGroups placed (with pods to place), in queue order, and the keys of those above
    and at each priority level, listed once per level: at 20,480 nodes each of 1,310 groups
    left out scanned all 2,690 placed (0.1 s)."""

    def __init__(self, problem: Problem, assignment: Assignment) -> None:
        self.groups = [problem.job_groups[i] for i in sorted(assignment.placed) if problem.needs(i)]
        self._rivals: dict[int, tuple[list[str], list[str]]] = {}

    def rivals(self, priority: int) -> tuple[list[str], list[str]]:
        found = self._rivals.get(priority)
        if found is None:
            found = self._rivals[priority] = (
                [other.key for other in self.groups if other.priority > priority],
                [other.key for other in self.groups if other.priority == priority],
            )
        return found


def reason(
    problem: Problem,
    assignment: Assignment,
    j: int,
    usable_free: list[int] | None = None,
    placed: _Placed | None = None,
) -> str:
    """The first thing that stops JobGroup ``j``; ``usable_free`` (the cluster's free total per
    resource on Ready, schedulable nodes) and ``placed`` are computed once by ``reasons``."""
    if usable_free is None:
        usable_free = _usable_free(problem)
    jg = problem.job_groups[j]
    prefix_member = len(jg.gangs) > 1
    for g in jg.gangs:
        gang = problem.gangs[g]
        who = f"member {gang.key}: " if prefix_member else ""
        if gang.running + gang.pending < gang.min_member:
            return f"{who}NotEnoughTasks: {gang.running + gang.pending} pods exist, minMember is {gang.min_member}"
        room = sum(problem.roles[r].count for r in gang.roles if len(problem.roles[r].nodes))
        if room < gang.need:
            excluded = ", ".join(f"{n} {why}" for why, n in sorted(gang.excluded.items(), key=lambda kv: (-kv[1], kv[0])))
            return f"{who}0/{len(problem.nodes)} nodes are available: {excluded}"
        most = _most_requested(problem, g)
        for k, name in enumerate(problem.resources):
            if most[k] < gang.min_resources[k]:
                return (
                    f"{who}minResources {name} cannot be met: all its pending pods together request "
                    f"{describe_amount(name, most[k])}, {describe_amount(name, gang.min_resources[k])} more are needed"
                )
        short = []
        for k, name in enumerate(problem.resources):
            need = _quorum_need(problem, g, k)
            free = usable_free[k]
            if need > free:
                short.append((free / need, f"{name} (quorum needs {describe_amount(name, need)}, {describe_amount(name, free)} free)"))
        if short:
            return f"{who}insufficient " + ", ".join(text for _, text in sorted(short)) + " on Ready, schedulable nodes"
    fits_alone = _fits_alone(problem, j)
    for g in jg.gangs if not fits_alone else ():
        gang = problem.gangs[g]
        who = f"member {gang.key}: " if prefix_member else ""
        if gang.topology is not None and gang.topology.broken:
            return who + gang.topology.broken
        if gang.topology is not None and gang.topology.required:
            return who + _required_reason(problem, g)
        alone = _State(problem)
        total = gang.running + sum(place_pods(alone, r, problem.roles[r].count) for r in gang.roles)
        if total < gang.min_member:
            gap = 100 * (gang.min_member - total) / gang.min_member
            return (
                f"{who}at most {total} of minMember {gang.min_member} pods fit even with nothing "
                f"else planned (quorum gap {gap:.0f}%)"
            )
    if fits_alone:
        higher, same = (placed or _Placed(problem, assignment)).rivals(jg.priority)
        if higher:
            return f"lost to higher-priority groups {_names(higher)}"
        if same:
            return f"lost to groups of the same priority placed instead: {_names(same)}"
    return "does not fit beside the groups placed"


def _fits_alone(problem: Problem, j: int) -> bool:
    """Whether greedy places the JobGroup's quorum on the snapshot with nothing else planned.
    One role with no required domain is counted directly: alone, its pods fit wherever its
    candidates have room."""
    jg = problem.job_groups[j]
    if any(problem.gangs[g].topology is not None and problem.gangs[g].topology.broken for g in jg.gangs):
        return False  # greedy would place it: running members that break a term are not its rule
    gang = problem.gangs[jg.gangs[0]]
    free_topology = gang.topology is None or not gang.topology.required
    if len(jg.gangs) == 1 and len(gang.roles) == 1 and free_topology and not gang.tasks and not any(gang.min_resources):
        return int(problem.roles[gang.roles[0]].caps.sum()) >= gang.need
    return _place_quorum(_State(problem), j)


def _names(keys: list[str]) -> str:
    return ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")


def _quorum_need(problem: Problem, g: int, k: int) -> int:
    """The least of resource k its quorum can need: the smallest pods first."""
    gang = problem.gangs[g]
    sizes = sorted(problem.roles[r].request[k] for r in gang.roles for _ in range(problem.roles[r].count))
    return sum(sizes[: gang.need])


def _most_requested(problem: Problem, g: int) -> list[int]:
    gang = problem.gangs[g]
    return [sum(problem.roles[r].request[k] * problem.roles[r].count for r in gang.roles) for k in range(len(problem.resources))]


def _required_reason(problem: Problem, g: int) -> str:
    """The best domain of the deepest required level, and what runs out there first."""
    gang = problem.gangs[g]
    topo = gang.topology
    assert topo is not None and problem.tree is not None
    level = max(topo.required)
    key = level_key(problem.tree, level)
    noun = "node" if level == len(problem.tree.levels) else key
    nodes_in: dict[int, list[int]] = {}
    most: dict[int, int] = {}  # what each domain could hold at best: each role alone there
    for r in gang.roles:
        role = problem.roles[r]
        held: dict[int, int] = {}
        for n, cap in zip(role.nodes.tolist(), role.caps.tolist()):
            d = problem.domain(level, n)
            if d is not None:
                nodes_in.setdefault(d, []).append(n)
                held[d] = held.get(d, 0) + cap
        for d, cap in held.items():
            most[d] = most.get(d, 0) + min(cap, role.count)
    if not nodes_in:
        where = "node passes" if noun == "node" else "domain has a node that passes"
        return f"required {key}: no {where} the filters"
    # The most placed, the first domain among equals; a domain that cannot beat it is not
    # tried (at the node level there is one per candidate node).
    best, best_d = -1, -1
    for d in sorted(most, key=lambda d: (-most[d], d)):
        if most[d] < best:
            break
        if most[d] == best and d > best_d:
            continue
        state = _State(problem)
        placed = sum(place_pods(state, r, problem.roles[r].count, nodes_in[d]) for r in gang.roles)
        if placed > best or (placed == best and d < best_d):
            best, best_d = placed, d
    nodes = sorted(set(nodes_in[best_d]))
    request = [max(problem.roles[r].request[k] for r in gang.roles) for k in range(len(problem.resources))]
    limits = [
        (sum(problem.free[n][k] for n in nodes) / want, name)
        for k, (want, name) in enumerate(zip(request, problem.resources))
        if want and name != "pods"
    ]
    scarce = min(limits)[1] if limits else "pods"
    total = gang.running + best
    return (
        f"required {key}: the best {noun} ({problem.domain_name(level, best_d)}) holds {total} of "
        f"{gang.min_member} pods ({scarce})"
    )

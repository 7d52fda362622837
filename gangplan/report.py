"""A Plan as one self-contained HTML page: the summary, the topology as a heat map, and
where each group landed.

The page needs no network: CSS and the little JavaScript (hover a group to find it) are
inline, and there are no fonts, images or links to load. Every name read from the input is
escaped. Pure and deterministic: the same snapshot and plan give the same bytes (the
solver's wall time is left out for that reason).
"""

from __future__ import annotations

import hashlib
import html
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .model import Node, Pod, Snapshot
from .plan import GroupOutcome, Placement, Plan, group_id, group_name, shared_keys
from .render import held_back
from .semantics import consumes_capacity, group_pods, node_allocatable, node_usable, pod_requests
from .topology import Domain, TopologyTree, build_tree

__all__ = ["GroupNames", "render_report"]

_POD_LIST_LIMIT = 8  # pod names per group in a node's tooltip
_LABELLED_TREE = 64  # at most this many nodes: tiles carry their names (in a tree)
_LABELLED_FLAT = 200  # the same, with no topology levels
_USED = "#7b8494"  # in use before the plan
_FREE = "#ffffff"
_HEAT = ((0.0, (226, 241, 222)), (0.35, (200, 230, 160)), (0.6, (253, 224, 139)),
         (0.8, (252, 141, 89)), (1.0, (215, 48, 39)))  # fmt: skip


# ---------------------------------------------------------------- figures


@dataclass(slots=True)
class _Figures:
    """Capacity, use before the plan, and what the plan adds, for cpu, memory and GPUs."""

    capacity: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    before: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    added: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    by_group: dict[str, dict[str, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )
    pods: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    nodes: int = 0
    unusable: int = 0

    def add(self, other: _Figures) -> None:
        for name, amount in other.capacity.items():
            self.capacity[name] += amount
        for name, amount in other.before.items():
            self.before[name] += amount
        for name, amount in other.added.items():
            self.added[name] += amount
        for group, amounts in other.by_group.items():
            for name, amount in amounts.items():
                self.by_group[group][name] += amount
        for group, pods in other.pods.items():
            self.pods[group].extend(pods)
        self.nodes += other.nodes
        self.unusable += other.unusable

    def ratio(self, name: str, after: bool) -> float | None:
        capacity = self.capacity.get(name, 0)
        if capacity <= 0:
            return None
        used = self.before.get(name, 0) + (self.added.get(name, 0) if after else 0)
        return used / capacity


class GroupNames:
    """The name each group goes by on the page. A bare pod or a Kueue pod group may have a
    PodGroup's name in its namespace, and both are planned (with a warning): the page tells
    the one with no PodGroup object apart by its kind, where one legend entry counted both
    groups' pods. A placement names only the key, so its pod's group comes from the snapshot."""

    def __init__(self, snapshot: Snapshot, plan: Plan) -> None:
        self.shared = shared_keys(map(group_id, plan.groups))
        self.of_pod: dict[str, str] = {}
        if self.shared:
            for job_group in group_pods(snapshot).job_groups:
                for gang in job_group.gangs:
                    if gang.implicit and gang.key in self.shared:
                        shown = group_name(group_id(gang), self.shared)
                        for pod in (*gang.pending, *gang.running, *gang.blocked, *gang.finished):
                            self.of_pod[pod.key] = shown

    def group(self, g: GroupOutcome) -> str:
        return group_name(group_id(g), self.shared)

    def placed(self, p: Placement) -> str:
        return self.of_pod.get(p.pod) or p.group or p.pod


def _node_figures(
    snapshot: Snapshot, plan: Plan, resources: tuple[str, ...], names: GroupNames
) -> tuple[dict[str, _Figures], list[str]]:
    """Per node name; running pods' requests are the use before (over allocatable on an
    over-committed node, as ``kubectl describe nodes`` and the summary line show it), the
    plan's placements what it adds."""
    running: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    pods_by_key: dict[str, Pod] = {}
    for pod in snapshot.pods:
        if consumes_capacity(pod):
            for name, amount in pod_requests(pod).items():
                running[pod.node_name][name] += amount  # type: ignore[index]
        elif pod.node_name is None:
            pods_by_key.setdefault(pod.key, pod)
    figures: dict[str, _Figures] = {}
    for node in snapshot.nodes:
        if node.name in figures:
            continue
        allocatable = node_allocatable(node)
        on_node = _Figures(nodes=1, unusable=int(not node_usable(node)))
        for name in resources:
            on_node.capacity[name] = allocatable.get(name, 0)
            on_node.before[name] = running[node.name].get(name, 0)
        figures[node.name] = on_node
    problems: list[str] = []
    unknown_nodes: set[str] = set()
    unknown_pods = 0
    for p in plan.placements:
        f = figures.get(p.node)
        if f is None:
            unknown_nodes.add(p.node)
            continue
        group = names.placed(p)
        f.pods[group].append(p.pod)
        placed_pod = pods_by_key.get(p.pod)
        if placed_pod is None:
            unknown_pods += 1
            f.by_group[group]  # noqa: B018 - the group is on this node even with unknown requests
            continue
        requests = pod_requests(placed_pod)
        for name in resources:
            amount = requests.get(name, 0)
            f.added[name] += amount
            f.by_group[group][name] += amount
    if unknown_nodes:
        shown = ", ".join(sorted(unknown_nodes)[:3]) + (", …" if len(unknown_nodes) > 3 else "")
        problems.append(f"{len(unknown_nodes)} node(s) in the plan are not in the snapshot: {shown}")
    if unknown_pods:
        problems.append(
            f"{unknown_pods} placed pod(s) are not pending pods of the snapshot; "
            "their requests are not counted"
        )
    return figures, problems


def _sum(parts: Iterable[_Figures]) -> _Figures:
    total = _Figures()
    for part in parts:
        total.add(part)
    return total


# ---------------------------------------------------------------- colours


def _hex(rgb: Sequence[float]) -> str:
    return "#" + "".join(f"{max(0, min(255, round(c))):02x}" for c in rgb)


def _heat_rgb(ratio: float) -> tuple[float, float, float]:
    ratio = max(0.0, min(1.0, ratio))
    for (x0, c0), (x1, c1) in zip(_HEAT, _HEAT[1:]):
        if ratio <= x1:
            t = 0.0 if x1 == x0 else (ratio - x0) / (x1 - x0)
            return tuple(a + (b - a) * t for a, b in zip(c0, c1))  # type: ignore[return-value]
    return _HEAT[-1][1]


def _heat(ratio: float | None) -> str:
    return "#e5e7eb" if ratio is None else _hex(_heat_rgb(ratio))


def _tint(ratio: float | None, keep: float = 0.28) -> str:
    """The heat colour mixed with white, for a box's body."""
    if ratio is None:
        return "#f6f7f9"
    return _hex(tuple(255 + (c - 255) * keep for c in _heat_rgb(ratio)))


# Well separated colours for groups (after Sasha Trubetskoy's 20), without the greys (grey
# is what was in use before): the strong ones first, then two pale ones, used only when the
# strong ones have run out since they show less on a white tile.
_STRONG = (
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324",
    "#469990", "#bfef45", "#800000", "#000075", "#808000", "#ffe119",
)  # fmt: skip
_PALE = ("#dcbeff", "#fabed4")
_PALETTE = _STRONG + _PALE


def _group_colours(keys: Iterable[str]) -> dict[str, str]:
    """A colour per group, from a hash of its name: a palette colour while there are free
    ones (taken in name order; a taken one moves on to the next free one), then hues a
    golden angle apart."""
    keys = sorted(set(keys))
    tiers = [list(_STRONG), list(_PALE)]
    colours = {}
    taken: list[float] = []
    for key in keys:
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        number = int.from_bytes(digest[:4], "big")
        tier = next((t for t in tiers if t), None)
        if tier is not None:
            palette = _STRONG if tier is tiers[0] else _PALE
            wanted = number % len(palette)
            colour = min(tier, key=lambda c: (palette.index(c) - wanted) % len(palette))
            tier.remove(colour)
            colours[key] = colour
            continue
        start = number % 3600 / 10
        best, best_gap = start, -1.0
        for step in range(40):
            hue = (start + step * 137.508) % 360
            gap = min((min(abs(hue - t), 360 - abs(hue - t)) for t in taken), default=360.0)
            if gap >= 10:
                best = hue
                break
            if gap > best_gap:
                best, best_gap = hue, gap
        taken.append(best)
        colours[key] = f"hsl({best:.0f},{55 + digest[4] % 30}%,{35 + digest[5] % 25}%)"
    return colours


# ---------------------------------------------------------------- formatting


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _title(lines: Iterable[str]) -> str:
    """A tooltip: escaped lines joined by a character reference newline."""
    return "&#10;".join(_e(line) for line in lines)


def _pct(ratio: float | None, digits: int = 0) -> str:
    return "–" if ratio is None else f"{ratio * 100:.{digits}f}%"


def _amount(name: str, value: int, gpu_resource: str) -> str:
    if name == "cpu":
        cores = value / 1000
        return f"{cores:,.0f}" if cores >= 100 or cores == int(cores) else f"{cores:,.1f}"
    if name == "memory":
        for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if value >= size:
                scaled = value / size
                return f"{scaled:,.1f} {unit}" if scaled < 100 else f"{scaled:,.0f} {unit}"
        return f"{value} B"
    return f"{value:,}"


def _unit(name: str, gpu_resource: str) -> str:
    return {"cpu": " cores", "memory": ""}.get(name, " GPUs" if name == gpu_resource else "")


def _usage_line(f: _Figures, name: str, label: str, gpu_resource: str) -> str:
    cap = f.capacity.get(name, 0)
    before = f.before.get(name, 0)
    after = before + f.added.get(name, 0)
    unit = _unit(name, gpu_resource)
    fmt = lambda v: _amount(name, v, gpu_resource)  # noqa: E731
    return (
        f"{label}: {fmt(before)} → {fmt(after)} of {fmt(cap)}{unit} "
        f"({_pct(f.ratio(name, False))} → {_pct(f.ratio(name, True))})"
    )


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _usage_lines(page: _Page, f: _Figures) -> list[str]:
    return [
        _usage_line(f, name, label, page.gpu)
        for name, label in ((page.gpu, "GPU"), ("cpu", "CPU"), ("memory", "memory"))
        if f.capacity.get(name, 0)
    ]


def _short(level: str) -> str:
    """A level's label key, shortened for display: network.example.com/tor -> tor."""
    return level.rsplit("/", 1)[-1] or level


# ---------------------------------------------------------------- page


@dataclass(slots=True)
class _Page:
    gpu: str
    levels: tuple[str, ...]
    tree: TopologyTree | None
    nodes: Mapping[str, Node]
    figures: Mapping[str, _Figures]
    colours: Mapping[str, str]
    index: Mapping[str, int]  # group key -> legend number, for the hover highlight
    held: frozenset[str] = frozenset()  # placed pods -o json gives no Binding (gated, or all or nothing with them)
    labelled: bool = False  # few enough nodes for tiles wide enough to carry their names

    def primary(self, f: _Figures) -> str:
        """The resource a box or tile shows: GPUs where there are any, else cpu."""
        return self.gpu if f.capacity.get(self.gpu, 0) > 0 else "cpu"


def render_report(
    snapshot: Snapshot,
    plan: Plan,
    *,
    levels: Sequence[str] = (),
    gpu_resource: str = "nvidia.com/gpu",
    title: str = "gangplan",
    held: frozenset[str] | None = None,
) -> str:
    """The plan as one HTML page that opens with no network access.

    ``levels`` is used when the plan names none (a plan read back without them); with no
    levels at all the nodes are drawn as one flat grid. ``held`` is ``render.held_back``'s
    answer when the caller has it already (it runs the verifier when pods are gated).
    """
    level_keys = plan.topology_levels(levels)
    resources = (gpu_resource, "cpu", "memory")
    names = GroupNames(snapshot, plan)
    figures, problems = _node_figures(snapshot, plan, resources, names)
    tree = build_tree(snapshot.nodes, level_keys) if level_keys else None

    placed_keys = [key for f in figures.values() for key in f.by_group]
    colours = _group_colours(placed_keys)
    legend_order = [name for g in plan.groups if (name := names.group(g)) in colours]
    legend_order += sorted(set(colours) - set(legend_order))
    page = _Page(
        gpu=gpu_resource,
        levels=level_keys,
        tree=tree,
        nodes={n.name: n for n in reversed(snapshot.nodes)},
        figures=figures,
        colours=colours,
        index={key: i for i, key in enumerate(legend_order)},
        held=held_back(plan, snapshot) if held is None else held,
        labelled=len(figures) <= (_LABELLED_FLAT if tree is None else _LABELLED_TREE),
    )
    total = _sum(figures.values())

    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        f"<title>{_e(title)}</title>\n<style>\n{_CSS}",
        "".join(
            f'body[data-f="{i}"] .map .n:not(.g{i}){{opacity:.18}}'
            f'body[data-f="{i}"] .n.g{i}{{outline:2px solid #111;outline-offset:1px}}'
            f'body[data-f="{i}"] .dot:not(.g{i}){{opacity:.15}}\n'
            for i in range(len(legend_order))
        ),
        "</style>\n</head>\n<body>\n",
        _header(page, plan, total, title, resources),
        '<div class="layout">\n<aside>\n',
        _legend(page, plan, legend_order, figures, names),
        "</aside>\n<main>\n",
        _warnings(list(plan.warnings) + problems),
        _topology(page, snapshot),
        "</main>\n</div>\n",
        f"<script>\n{_JS}</script>\n" if legend_order else "",
        "</body>\n</html>\n",
    ]
    return "".join(parts)


def _bar(before: float | None, after: float | None, cls: str = "ub") -> str:
    """A bar: used before (grey) and added by the plan (dark), out of 100%."""
    b = min(100.0, (before or 0.0) * 100)
    a = min(100.0, (after or 0.0) * 100)
    return (
        f'<span class="{cls}"><i style="width:{b:.1f}%"></i>'
        f'<em style="left:{b:.1f}%;width:{max(0.0, a - b):.1f}%"></em></span>'
    )


def _header(page: _Page, plan: Plan, total: _Figures, title: str, resources: tuple[str, ...]) -> str:
    # As the summary line and check count: the groups with pods to place (or gated, or a
    # manifest without its pods); those already running with nothing to place are said apart.
    waiting = [g for g in plan.groups if g.waiting]
    groups = len(waiting)
    placed = sum(1 for g in waiting if g.placed)
    settled = len(plan.groups) - groups
    # What -o json binds: a pod a Kueue gate holds gets no Binding until its workload is admitted,
    # nor do the others of its group (or JobGroup) that would start short of a minimum without it.
    bound = sum(1 for p in plan.placements if p.pod not in page.held)
    held = sum(1 for p in plan.placements if p.gated)
    with_them = len(plan.placements) - bound - held
    s = plan.solver
    solver_bits = [f"solver <b>{_e(s.solver or '?')}</b>", f"policy <b>{_e(s.policy or '?')}</b>",
                   f"status <b>{_e(s.status or '?')}</b>"]  # fmt: skip
    if s.chosen and s.chosen != s.solver:
        solver_bits.append(f"plan kept from <b>{_e(s.chosen)}</b>")
    if s.gap is not None:
        solver_bits.append(f"gap {_e(f'{s.gap:.2%}')}")
    rows = []
    for name in resources:
        label = {"cpu": "CPU", "memory": "Memory"}.get(name, "GPU")
        cap = total.capacity.get(name, 0)
        before, after = total.ratio(name, False), total.ratio(name, True)
        unit = _unit(name, page.gpu)
        fmt = lambda v: _amount(name, v, page.gpu)  # noqa: E731
        rows.append(
            f'<tr><th title="{_e(name)}">{label}</th><td class="bar">{_bar(before, after)}</td>'
            f'<td class="pc">{_pct(before, 1)} → <b>{_pct(after, 1)}</b></td>'
            f'<td class="abs">{_e(fmt(total.before.get(name, 0)))} → '
            f"{_e(fmt(total.before.get(name, 0) + total.added.get(name, 0)))} "
            f"of {_e(fmt(cap))}{_e(unit)}</td></tr>"
        )
    if page.tree is not None:
        shape = " · ".join(
            f"{len(row)} {_e(_short(level))}" for level, row in zip(page.levels, page.tree.domains)
        )
        outside = len(page.tree.outside)
        shape += f" · {outside} node{_s(outside)} outside" if outside else ""
    else:
        shape = "no topology levels"
    unplaced = groups - placed
    return (
        "<header>\n"
        f'<h1>{_e(title)}</h1>\n<div class="cards">\n'
        f'<div class="card{" warn" if unplaced else ""}"><div class="big">{placed}/{groups}</div>'
        f"<div>groups placed{f' · {unplaced} not' if unplaced else ''}"
        f"{f' · {settled} more with nothing to place' if settled else ''}</div></div>\n"
        f'<div class="card"><div class="big">{bound}</div><div>pod{_s(bound)} bound by this plan'
        f"{f' · {held} placed but held by a Kueue gate' if held else ''}"
        f"{f' · {with_them} held back with them, all or nothing' if with_them else ''}</div></div>\n"
        f'<div class="card"><div class="big">{total.nodes}</div><div>node{_s(total.nodes)} · {shape}</div></div>\n'
        f'<div class="card solver"><div>{" · ".join(solver_bits)}</div>'
        + (f'<div class="note">{_e(s.note)}</div>' if s.note else "")
        + "</div>\n</div>\n"
        '<div class="row">\n'
        '<table class="util"><caption>Cluster utilisation, before → after the plan '
        '<span class="key"><i></i> in use <em></em> added by the plan</span></caption>\n'
        + "\n".join(rows)
        + "\n</table>\n"
        + _key(page)
        + "</div>\n</header>\n"
    )


def _where(page: _Page, key: str, figures: Mapping[str, _Figures]) -> str:
    """Where a group's new pods went: the domains per level, from its placements."""
    nodes = sorted(name for name, f in figures.items() if key in f.by_group)
    bits = []
    tree = page.tree
    if tree is not None:
        index = {name: i for i, name in enumerate(tree.node_names)}
        for depth, level in enumerate(page.levels):
            names = sorted(
                {
                    tree.domains[depth][d].name
                    for d in (tree.domain_of[depth][index[n]] for n in nodes if n in index)
                    if d is not None
                }
            )
            if not names:
                continue
            short = [n.rsplit("/", 1)[-1] for n in names]
            if len(set(short)) < len(short):  # rack r1 under two blocks: 'r1, r1' told them not apart
                short = names
            shown = ", ".join(short) if len(names) <= 3 else f"×{len(names)}"
            bits.append(f'<span title="{_title(names)}">{_e(_short(level))} {_e(shown)}</span>')
        outside = sum(1 for n in nodes if n in index and index[n] in tree.outside)
        if outside:
            bits.append(f"{outside} outside the topology")
    bits.append(f'<span title="{_title(nodes)}">{len(nodes)} node{"s" if len(nodes) != 1 else ""}</span>')
    return " · ".join(bits)


def _legend(page: _Page, plan: Plan, order: list[str], figures: Mapping[str, _Figures], names: GroupNames) -> str:
    outcome: dict[str, GroupOutcome] = {}
    for g in plan.groups:
        outcome.setdefault(names.group(g), g)
    placed: dict[str, int] = defaultdict(int)
    for f in figures.values():
        for key, pods in f.pods.items():
            placed[key] += len(pods)
    held: dict[str, int] = defaultdict(int)  # no Binding for these until Kueue admits them
    with_them: dict[str, int] = defaultdict(int)  # nor for these, which need them
    for p in plan.placements:
        if p.pod in page.held and p.node in figures:
            (held if p.gated else with_them)[names.placed(p)] += 1
    out = [
        f'<section class="panel"><h2>Placed groups <small>({len(order)}) · hover or click to find'
        '</small></h2>\n<ul class="groups">\n'
    ]
    for i, key in enumerate(order):
        known = outcome.get(key)
        bound = placed[key] - held[key] - with_them[key]
        facts = [f"{bound} pod{_s(bound)} bound"] if bound or not (held[key] or with_them[key]) else []
        if held[key]:
            facts.append(f"{held[key]} placed but held by a Kueue gate")
        if with_them[key]:
            facts.append(f"{with_them[key]} held back with gated pods, all or nothing")
        if known is not None:
            facts.append(f"minMember {known.min_member}")
            if known.running:
                facts.append(f"{known.running} running")
            facts.append(f"priority {known.priority}")
            if known.job_group and known.job_group != known.key:
                facts.append(f"JobGroup {known.job_group}")
        out.append(
            f'<li data-g="{i}" tabindex="0"><span class="sw" style="background:{page.colours[key]}"></span>'
            f'<div><b>{_e(key)}</b> <span class="muted">{_e(" · ".join(facts))}</span>'
            f'<div class="where">{_where(page, key, figures)}</div></div></li>\n'
        )
    if not order:
        out.append('<li class="muted">nothing is bound by this plan</li>\n')
    out.append("</ul>\n</section>\n")

    # As the card counts: 'not' placed are the groups with something to place; one not placed
    # with nothing to place (short of a minimum, or its running members break its required term)
    # is one of the card's 'more with nothing to place', said apart.
    def waiting(g: GroupOutcome) -> str:
        return f"minMember {g.min_member} · {g.pending} pending · priority {g.priority}"

    def standing(g: GroupOutcome) -> str:
        finished = f" · {g.succeeded} succeeded" if g.succeeded else ""
        return f"{g.running} running{finished} · minMember {g.min_member} · priority {g.priority}"

    for title, wait, summary in (("Not placed", True, waiting), ("Not placed, nothing to place", False, standing)):
        shown = [g for g in plan.groups if not g.placed and g.waiting is wait]
        if not shown:
            continue
        out.append(f'<section class="panel bad"><h2>{title} <small>({len(shown)})</small></h2>\n<ul class="plain">\n')
        for g in shown:
            out.append(
                f'<li><b>{_e(names.group(g))}</b> <span class="muted">{_e(summary(g))}</span>'
                f'<div class="reason">{_e(g.reason or "no reason given")}</div></li>\n'
            )
        out.append("</ul>\n</section>\n")

    satisfied = [g for g in plan.groups if g.placed and names.group(g) not in page.colours]
    if satisfied:
        out.append(
            f'<section class="panel"><h2>Placed, nothing new to bind <small>({len(satisfied)})</small></h2>\n'
            '<ul class="plain">\n'
        )
        for g in satisfied:
            out.append(
                f'<li><b>{_e(names.group(g))}</b> <span class="muted">{g.running} running'
                f'{f" · {g.succeeded} succeeded" if g.succeeded else ""} · minMember {g.min_member}'
                f" · priority {g.priority}</span></li>\n"
            )
        out.append("</ul>\n</section>\n")

    return "".join(out)


def _key(page: _Page) -> str:
    """How to read the map."""
    demo = _PALETTE[2]
    return (
        '<div class="howto"><h2>How to read the map</h2>\n'
        '<div class="scale"><span>GPU use 0%</span>'
        f'<i style="background:linear-gradient(90deg,{_scale_stops()})"></i><span>100%</span></div>\n'
        f"<p>A box is a topology domain, coloured by its <b>{_e(page.gpu)}</b> utilisation after the "
        "plan (CPU where it has no GPUs); its thin bars and label show before → after.</p>\n"
        '<p><span class="n demo"><i style="background:linear-gradient(90deg,'
        f'{_USED} 0 37.5%,{demo} 37.5% 75%,{_FREE} 75%)"></i><b style="background:{demo}"></b></span>'
        " A tile is a node. Its bar: GPUs in use before (grey), placed by this plan (group colour), "
        "free (white); the strip under it: every group placed there.</p>\n"
        '<p><span class="n demo cpu"><i style="background:linear-gradient(90deg,'
        f'{_USED} 0 50%,{_FREE} 50%)"></i></span> dashed: no GPUs (bar shows CPU) &nbsp; '
        '<span class="n demo off"><i style="background:#fff"></i></span> hatched: NotReady or cordoned. '
        "Hover a tile or box for figures and pods.</p>\n</div>\n"
    )


def _scale_stops() -> str:
    return ",".join(f"{_hex(c)} {x * 100:.0f}%" for x, c in _HEAT)


def _warnings(warnings: list[str]) -> str:
    if not warnings:
        return ""
    items = "".join(f"<li>{_e(w)}</li>\n" for w in warnings)
    return (
        f'<details class="warnings"><summary>{len(warnings)} warning(s)</summary>\n'
        f"<ul>\n{items}</ul>\n</details>\n"
    )


# ---------------------------------------------------------------- topology


def _topology(page: _Page, snapshot: Snapshot) -> str:
    tree = page.tree
    seen: set[str] = set()
    order = []
    for node in snapshot.nodes:
        if node.name not in seen:
            seen.add(node.name)
            order.append(node.name)
    if tree is None:
        tiles = "".join(_tile(page, name, ()) for name in order)
        return (
            f'<section class="map flat"><h2>Nodes <small>({len(order)}, no topology levels)</small>'
            f'</h2>\n<div class="tiles">{tiles}</div>\n</section>\n'
        )
    out = ['<section class="map">\n']
    depth_count = len(page.levels)
    out.append(f'<div class="kids" style="{_grid(depth_count - 1, page.labelled)}">\n')
    for domain in tree.domains[0] if tree.domains else ():
        out.append(_domain(page, domain))
    out.append("</div>\n")
    if tree.outside:
        names = [tree.node_names[i] for i in sorted(tree.outside)]
        f = _sum(page.figures[n] for n in names)
        tiles = "".join(_tile(page, n, ()) for n in names)
        missing = ", ".join(page.levels)
        out.append(
            f'<section class="d outside" title="{_title([f"nodes lacking a label of: {missing}"])}">'
            f'<div class="dh"><span class="lv">outside the topology</span>'
            f'<span class="dn">{len(names)} node{_s(len(names))}</span>'
            f'<span class="dv">{_e(_ratio_label(page, f))}</span>{_dots(page, f)}'
            f"{_bars(page, f)}</div>\n<div class=\"tiles\">{tiles}</div>\n</section>\n"
        )
    out.append("</section>\n")
    return "".join(out)


def _grid(distance: int, labelled: bool = False) -> str:
    """Columns for boxes ``distance`` levels above the node tiles."""
    width = ({0: 186, 1: 390} if labelled else {0: 108, 1: 236}).get(distance, 520)
    return f"grid-template-columns:repeat(auto-fill,minmax({width}px,1fr))"


def _ratio_label(page: _Page, f: _Figures) -> str:
    name = page.primary(f)
    label = "GPU" if name == page.gpu else "CPU"
    return f"{label} {_pct(f.ratio(name, False))} → {_pct(f.ratio(name, True))}"


def _bars(page: _Page, f: _Figures) -> str:
    name = page.primary(f)
    return (
        '<span class="bars">'
        + _bar(f.ratio(name, False), f.ratio(name, False), "tb")
        + _bar(f.ratio(name, False), f.ratio(name, True), "tb")
        + "</span>"
    )


def _dots(page: _Page, f: _Figures) -> str:
    if not f.pods:
        return ""
    dots = []
    for key in sorted(f.pods, key=lambda k: page.index[k]):
        n = len(f.pods[key])
        dots.append(
            f'<i class="dot g{page.index[key]}" style="background:{page.colours[key]}" '
            f'title="{_title([f"{key}: {n} pod{_s(n)} here"])}"></i>'
        )
    return f'<span class="dots">{"".join(dots)}</span>'


def _domain(page: _Page, domain: Domain) -> str:
    tree = page.tree
    assert tree is not None
    names = [tree.node_names[i] for i in domain.nodes]
    f = _sum(page.figures[n] for n in names)
    name = page.primary(f)
    after = f.ratio(name, True)
    level = page.levels[domain.level]
    lines = [f"{level}={domain.value}", f"path {domain.name}", f"{f.nodes} node{_s(f.nodes)}"
             + (f", {f.unusable} NotReady or cordoned" if f.unusable else "")]  # fmt: skip
    lines += _usage_lines(page, f)
    last = domain.level == len(page.levels) - 1
    figure = f"{_pct(f.ratio(name, False))} → {_pct(after)}" if last else _ratio_label(page, f)
    head = (
        f'<div class="dh" style="background:{_heat(after)}">'
        f'<span class="lv">{_e(_short(level))}</span><span class="dn">{_e(domain.value)}</span>'
        f'<span class="dv">{_e(figure)}</span>'
        f"{_bars(page, f)}{'' if last else _dots(page, f)}</div>\n"
    )
    if last:
        body = '<div class="tiles">' + "".join(_tile(page, n, domain.path) for n in names) + "</div>\n"
    else:
        distance = len(page.levels) - 2 - domain.level
        body = (
            f'<div class="kids" style="{_grid(distance, page.labelled)}">\n'
            + "".join(_domain(page, child) for child in tree.children(domain))
            + "</div>\n"
        )
    return (
        f'<section class="d L{domain.level}{" leaf" if last else ""}" '
        f'style="background:{_tint(after)};border-color:{_heat(after)}" title="{_title(lines)}">\n'
        f"{head}{body}</section>\n"
    )


def _tile(page: _Page, name: str, path: tuple[str, ...]) -> str:
    f = page.figures[name]
    node = page.nodes[name]
    resource = page.primary(f)
    cap = f.capacity.get(resource, 0)
    classes = ["n", "wide"] if page.labelled else ["n"]
    if resource != page.gpu:
        classes.append("cpu")
    if not node_usable(node):
        classes.append("off")
    groups = sorted(f.by_group, key=lambda k: page.index[k])
    classes += [f"g{page.index[k]}" for k in groups]

    stops = []
    position = 0.0
    if cap > 0:
        used = min(100.0, f.before.get(resource, 0) / cap * 100)
        if used > 0:
            stops.append(f"{_USED} 0 {used:.1f}%")
        position = used
        for key in groups:
            share = f.by_group[key].get(resource, 0) / cap * 100
            end = min(100.0, position + share)
            if end > position:
                stops.append(f"{page.colours[key]} {position:.1f}% {end:.1f}%")
                position = end
    stops.append(f"{_FREE} {position:.1f}%")
    fill = f"linear-gradient(90deg,{','.join(stops)})" if len(stops) > 1 else _FREE
    strip = ""
    if groups:
        width = 100 / len(groups)
        strip_stops = ",".join(
            f"{page.colours[k]} {i * width:.1f}% {(i + 1) * width:.1f}%" for i, k in enumerate(groups)
        )
        strip = f'<b style="background:linear-gradient(90deg,{strip_stops})"></b>'

    lines = [name]
    if path:
        lines.append(" › ".join(f"{_short(level)} {value}" for level, value in zip(page.levels, path)))
    state = []
    if not node.ready:
        state.append("NotReady")
    if node.unschedulable:
        state.append("cordoned")
    if state:
        lines.append(" · ".join(state))
    lines += _usage_lines(page, f)
    for key in groups:
        pods = f.pods.get(key, [])
        shown = ", ".join(p.split("/", 1)[-1] for p in pods[:_POD_LIST_LIMIT])
        more = f", +{len(pods) - _POD_LIST_LIMIT} more" if len(pods) > _POD_LIST_LIMIT else ""
        lines.append(f"▶ {key} ({len(pods)} pod{'s' if len(pods) != 1 else ''}): {shown}{more}")
    label = ""
    if page.labelled:
        before = f.before.get(resource, 0)
        after = before + f.added.get(resource, 0)
        if resource == page.gpu:
            figure = f"{before}→{after}/{cap} GPU"
        else:
            figure = f"cpu {_pct(f.ratio(resource, False))}→{_pct(f.ratio(resource, True))}"
        label = f'<u><span>{_e(name)}</span><small>{_e(figure)}</small></u>'
    return (
        f'<span class="{" ".join(classes)}" title="{_title(lines)}">'
        f'{label}<i style="background:{fill}"></i>{strip}</span>'
    )


# ---------------------------------------------------------------- static parts

_CSS = """\
*{box-sizing:border-box}
body{margin:0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1f2430;background:#f3f4f7}
header{padding:14px 20px 10px;background:#fff;border-bottom:1px solid #dde0e6}
h1{margin:0 0 10px;font-size:20px;font-weight:650}
h2{margin:0 0 8px;font-size:14px;font-weight:650}
h2 small{font-weight:400;color:#6b7280}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:10px}
.card{background:#f7f8fa;border:1px solid #e2e5ea;border-radius:8px;padding:8px 14px;min-width:150px}
.card .big{font-size:22px;font-weight:700;line-height:1.1}
.card.warn .big{color:#b42318}
.card.solver{display:flex;flex-direction:column;justify-content:center;max-width:520px}
.card .note{color:#6b7280;margin-top:3px}
.util{border-collapse:collapse}
.util caption{text-align:left;color:#6b7280;padding-bottom:4px}
.util th{text-align:left;padding:2px 10px 2px 0;font-weight:600}
.util td{padding:2px 10px 2px 0;white-space:nowrap}
.util td.bar{width:360px}
.util td.abs{color:#6b7280}
.key{margin-left:12px}
.key i,.key em{display:inline-block;width:12px;height:9px;vertical-align:middle;margin-left:6px}
.key i{background:#7b8494}.key em{background:#1f2937}
.ub{position:relative;display:block;height:12px;background:#e7e9ee;border-radius:3px;overflow:hidden}
.ub i,.tb i{position:absolute;left:0;top:0;bottom:0;background:#7b8494}
.ub em,.tb em{position:absolute;top:0;bottom:0;background:#1f2937}
.layout{display:grid;grid-template-columns:300px minmax(0,1fr);gap:14px;padding:14px 20px;align-items:start}
.row{display:flex;flex-wrap:wrap;gap:10px 28px;align-items:flex-start}
.howto{flex:1;min-width:360px;max-width:640px;color:#4b5160;font-size:12px}
.howto h2{font-size:12px;margin:0 0 4px;color:#6b7280;font-weight:400}
.howto p{margin:4px 0}
.panel{background:#fff;border:1px solid #dde0e6;border-radius:8px;padding:10px 12px;margin-bottom:12px}
.panel.bad{border-color:#f1b8b2}
.panel p{margin:6px 0;color:#4b5160}
ul.groups,ul.plain{list-style:none;margin:0;padding:0}
ul.groups li{display:flex;gap:8px;align-items:flex-start;padding:4px 4px;border-radius:5px;cursor:pointer}
ul.groups li:hover,ul.groups li.on{background:#eef1f6}
ul.plain li{padding:3px 0;border-top:1px solid #f0f1f4}
ul.plain li:first-child{border-top:0}
.sw{flex:none;width:14px;height:14px;border-radius:3px;margin-top:2px;border:1px solid rgba(0,0,0,.25)}
b{font-weight:600;overflow-wrap:anywhere}
.muted{color:#6b7280}
.where{color:#4b5160;font-size:12px}
.where span[title]{border-bottom:1px dotted #9aa1ad}
.reason{color:#8a2a20;font-size:12px}
.scale{display:flex;align-items:center;gap:6px;color:#6b7280}
.scale i{flex:1;max-width:260px;height:10px;border-radius:3px;border:1px solid #d0d4db}
.warnings{background:#fffbeb;border:1px solid #f3d58a;border-radius:8px;padding:6px 12px;margin-bottom:12px}
.warnings summary{cursor:pointer;font-weight:600}
.warnings ul{margin:6px 0;padding-left:18px}
.kids{display:grid;gap:8px}
.d{border:2px solid #d0d4db;border-radius:7px;overflow:hidden;min-width:0}
.d.L0{margin-bottom:0}
.d>.kids,.d>.tiles{padding:7px}
.d.leaf>.tiles{padding:5px}
.dh{display:flex;flex-wrap:wrap;align-items:center;gap:2px 8px;padding:4px 7px;color:#1f2430}
.leaf>.dh{padding:3px 5px;gap:1px 5px}
.lv{font-size:10px;text-transform:uppercase;letter-spacing:.04em;color:rgba(0,0,0,.55)}
.dn{font-weight:700;overflow-wrap:anywhere}
.L0>.dh .dn{font-size:15px}
.dv{margin-left:auto;white-space:nowrap;font-variant-numeric:tabular-nums}
.leaf .dv{font-size:11px}
.bars{flex-basis:100%;display:flex;flex-direction:column;gap:2px}
.tb{position:relative;display:block;height:3px;background:rgba(255,255,255,.75);border-radius:2px;overflow:hidden}
.dots{flex-basis:100%;display:flex;flex-wrap:wrap;gap:3px;min-height:0}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%;border:1px solid rgba(0,0,0,.35)}
.tiles{display:flex;flex-wrap:wrap;gap:2px}
.n{position:relative;display:inline-flex;flex-direction:column;width:20px;height:18px;border:1px solid #5b6270;border-radius:3px;background:#fff;overflow:hidden;vertical-align:middle}
.n i{flex:1}
.n b{height:5px;border-top:1px solid rgba(0,0,0,.3)}
.n.cpu{border-style:dashed}
.n.off::after{content:"";position:absolute;inset:0;background:repeating-linear-gradient(135deg,rgba(180,35,24,.55) 0 2px,transparent 2px 5px)}
.n.off{border-color:#b42318}
.n.demo{margin:0 3px 0 0}
.n.wide{width:172px;height:auto}
.n.wide.off::after{background:repeating-linear-gradient(135deg,rgba(180,35,24,.22) 0 2px,transparent 2px 6px)}
.n.wide i{flex:none;height:9px;border-top:1px solid rgba(0,0,0,.15)}
.n.wide u{display:flex;gap:4px;text-decoration:none;font-size:11px;line-height:15px;padding:0 3px;white-space:nowrap}
.n.wide u span{overflow:hidden;text-overflow:ellipsis;font-weight:600}
.n.wide u small{margin-left:auto;color:#6b7280;font-size:10px}
.tiles:has(.wide){gap:4px}
.map.flat{background:#fff;border:1px solid #dde0e6;border-radius:8px;padding:10px 12px}
.d.outside{margin-top:10px;background:#fff;border-style:dashed}
.d.outside>.dh{background:#eef0f3}
@media (max-width:900px){.layout{grid-template-columns:1fr}}
"""

_JS = """\
(function(){
  var pinned = null, body = document.body;
  function show(g){ if (g === null) { delete body.dataset.f; } else { body.dataset.f = g; } }
  document.querySelectorAll('li[data-g]').forEach(function(li){
    var g = li.getAttribute('data-g');
    li.addEventListener('mouseenter', function(){ show(g); });
    li.addEventListener('mouseleave', function(){ show(pinned); });
    function pin(){
      pinned = pinned === g ? null : g;
      document.querySelectorAll('li[data-g]').forEach(function(o){
        o.classList.toggle('on', o.getAttribute('data-g') === pinned);
      });
      show(pinned);
    }
    li.addEventListener('click', pin);
    li.addEventListener('keydown', function(e){ if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pin(); } });
  });
})();
"""

"""The HTML report: one self-contained, escaped, deterministic page of a plan."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import os
import re
import subprocess
import sys
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Unpack

import pytest

from gangplan.diff import diff_snapshot
from gangplan.loader import load_snapshot
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, Snapshot
from gangplan.plan import GroupOutcome, Placement, Plan, SolverReport
from gangplan.planner import Options, plan
from gangplan.report import render_report
from gangplan.topology import HOSTNAME_LABEL, build_tree

from model_fields import NodeFields

ROOT = Path(__file__).resolve().parent.parent
GPU_CLUSTER = str(ROOT / "snapshots" / "gpu-cluster.yaml")
GPU = "nvidia.com/gpu"
EVIL = '<script>alert("x")</script>'
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class StrictParser(HTMLParser):
    """html.parser, made to fail on what a browser would silently repair, and to keep the
    elements for the checks below."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.doctype = ""
        self.scripts: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        assert len(values) == len(attrs), f"repeated attribute on <{tag}>"
        self.elements.append((tag, values))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raise AssertionError(f"self-closing <{tag}/> in HTML")

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        open_tag = self.stack.pop()
        assert open_tag == tag, f"</{tag}> closes <{open_tag}>"

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "script":
            self.scripts.append(data)


def parse(page: str) -> StrictParser:
    parser = StrictParser()
    parser.feed(page)
    parser.close()
    assert parser.stack == [], f"unclosed: {parser.stack}"
    assert parser.doctype.lower() == "doctype html"
    return parser


@pytest.fixture(scope="module")
def gpu_cluster() -> tuple[Snapshot, Plan, str]:
    snapshot = load_snapshot([GPU_CLUSTER])
    result = plan(snapshot, Options(solver="greedy"))
    return snapshot, result, render_report(snapshot, result, title="gpu-cluster")


def test_every_domain_at_every_level_is_drawn(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    snapshot, result, page = gpu_cluster
    assert result.levels is not None and len(result.levels) == 3
    tree = build_tree(snapshot.nodes, result.levels)
    parser = parse(page)
    boxes = [attrs for tag, attrs in parser.elements if tag == "section" and "d" in attrs.get("class", "").split()]
    titles = [attrs["title"] for attrs in boxes]
    for depth, (level, row) in enumerate(zip(result.levels, tree.domains)):
        assert row
        for domain in row:
            assert html.escape(domain.name) in page
            # one box per domain, whose tooltip names its level and path
            assert sum(1 for t in titles if t.startswith(f"{level}={domain.value}\npath {domain.name}\n")) == 1
            assert f'<span class="dn">{html.escape(domain.value)}</span>' in page
        assert sum(1 for attrs in boxes if f"L{depth}" in attrs["class"].split()) == len(row)
    tiles = [attrs for tag, attrs in parser.elements if tag == "span" and "n" in attrs.get("class", "").split()]
    drawn = [attrs["title"].split("\n", 1)[0] for attrs in tiles if "demo" not in attrs["class"].split()]
    assert sorted(drawn) == sorted(node.name for node in snapshot.nodes)


def test_every_group_is_listed_and_unplaced_ones_with_their_reasons(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, result, page = gpu_cluster
    unplaced = [g for g in result.groups if not g.placed]
    assert unplaced and any(g.placed for g in result.groups)
    for group in result.groups:
        assert html.escape(group.key) in page
    for group in unplaced:
        assert group.reason
        assert f'<div class="reason">{html.escape(group.reason)}</div>' in page


def test_the_groups_card_counts_as_the_summary_line_does(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    """The card said 21/23 groups placed where the summary line said 12/14: it counted the
    groups already running with nothing to place. It counts the groups with pods to place,
    and says the others apart."""
    from gangplan.cli import _summary

    _, result, page = gpu_cluster
    waiting = [g for g in result.groups if g.waiting]
    placed = sum(g.placed for g in waiting)
    settled = len(result.groups) - len(waiting)
    assert settled and f"groups placed {placed}/{len(waiting)} |" in _summary(result)
    unplaced = len(waiting) - placed
    assert (
        f'<div class="big">{placed}/{len(waiting)}</div>'
        f"<div>groups placed · {unplaced} not · {settled} more with nothing to place</div>"
    ) in page


def test_a_group_short_with_nothing_to_place_is_said_apart_as_the_card_counts_it(tmp_path: Path) -> None:
    """Two of minMember 4 run and none waits: the card counted the group 'with nothing to
    place' while the 'Not placed' panel listed it as '0 pending' beside '2 pods exist'. It is
    listed apart, with its running members, and 'Not placed' counts what the card's 'not' does."""
    def running(name: str) -> str:
        return (
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: two}}}}\n"
            "spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\nstatus: {phase: Running}\n"
        )
    snapshot_file = tmp_path / "short.yaml"
    snapshot_file.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '110'}}\n---\n"
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: two, namespace: ml}\nspec: {minMember: 4}\n---\n"
        + running("two-0") + "---\n" + running("two-1") + "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: solo, namespace: ml}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    )
    snapshot = load_snapshot([str(snapshot_file)])
    result = plan(snapshot, Options(solver="greedy"))
    page = render_report(snapshot, result, title="short")
    parse(page)
    assert "<div>groups placed · 1 more with nothing to place</div>" in page
    assert "<h2>Not placed <small>" not in page
    short = next(g for g in result.groups if g.key == "ml/two")
    assert not short.placed and not short.waiting
    assert (
        '<h2>Not placed, nothing to place <small>(1)</small></h2>\n<ul class="plain">\n'
        '<li><b>ml/two</b> <span class="muted">2 running · minMember 4 · priority 0</span>'
        f'<div class="reason">{html.escape(short.reason)}</div></li>\n'
    ) in page


def test_node_tiles_carry_the_groups_placed_on_them(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, result, page = gpu_cluster
    parser = parse(page)
    legend = {}
    for tag, attrs in parser.elements:
        if tag == "li" and "data-g" in attrs:
            legend[attrs["data-g"]] = attrs
    tiles = {}
    for tag, attrs in parser.elements:
        classes = attrs.get("class", "").split()
        if tag == "span" and "n" in classes and "demo" not in classes:
            tiles[attrs["title"].split("\n", 1)[0]] = attrs
    groups_on: dict[str, set[str]] = defaultdict(set)
    for p in result.placements:
        groups_on[p.node].add(p.group)
        assert p.name in tiles[p.node]["title"] or "more" in tiles[p.node]["title"]
    keys = [g.key for g in result.groups if g.scheduled]
    assert len(legend) == len(keys)
    number = {key: i for i, key in enumerate(keys)}
    for node, attrs in tiles.items():
        marked = {c for c in attrs["class"].split() if c.startswith("g")}
        assert marked == {f"g{number[key]}" for key in groups_on.get(node, ())}, node
        for key in groups_on.get(node, ()):
            assert f"▶ {key} (" in attrs["title"]


def test_group_colours_are_distinct_and_do_not_follow_the_group_order(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    snapshot, result, page = gpu_cluster
    colours = swatches(page)
    assert len(colours) == len(set(colours)) == sum(1 for g in result.groups if g.scheduled)
    reordered = Plan(result.placements, tuple(reversed(result.groups)), result.solver, levels=result.levels)
    assert swatches(render_report(snapshot, reordered)) == dict(reversed(colours.items()))


def swatches(page: str) -> dict[str, str]:
    """Legend colour per group key, in legend order."""
    result = {}
    for item in page.split('<span class="sw" style="background:')[1:]:
        colour, rest = item.split('"', 1)
        result[html.unescape(rest.split("<b>", 1)[1].split("</b>", 1)[0])] = colour
    return result


def test_header_shows_the_planner_figures(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, result, page = gpu_cluster
    for name in (GPU, "cpu", "memory"):
        used, total = result.resources_before[name]
        after, _ = result.resources_after[name]
        assert f"{used / total * 100:.1f}% → <b>{after / total * 100:.1f}%</b>" in page
    assert "solver <b>greedy</b> · policy <b>optimal</b> · status <b>GREEDY</b>" in page


def test_page_is_self_contained(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, _, page = gpu_cluster
    lowered = page.lower()
    for needle in ("http://", "https://", "src=", "href=", "url(", "@import", "<link", "<img", "<iframe", "//cdn"):
        assert needle not in lowered, needle
    parser = parse(page)
    for tag, attrs in parser.elements:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert [tag for tag, _ in parser.elements].count("script") == 1
    assert [tag for tag, _ in parser.elements].count("style") == 1


def test_page_is_small_enough(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, _, page = gpu_cluster
    assert len(page.encode()) < 1_500_000


def test_renders_are_identical(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    snapshot, result, page = gpu_cluster
    assert render_report(snapshot, result, title="gpu-cluster") == page
    again = plan(snapshot, Options(solver="greedy"))  # its wall time differs; the page must not
    assert render_report(snapshot, again, title="gpu-cluster") == page


def test_renders_are_identical_across_hash_seeds(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, _, page = gpu_cluster
    code = (
        "import hashlib, sys\n"
        "from gangplan.loader import load_snapshot\n"
        "from gangplan.planner import Options, plan\n"
        "from gangplan.report import render_report\n"
        f"s = load_snapshot([{GPU_CLUSTER!r}])\n"
        "page = render_report(s, plan(s, Options(solver='greedy')), title='gpu-cluster')\n"
        "print(hashlib.sha256(page.encode()).hexdigest())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == hashlib.sha256(page.encode()).hexdigest()


# ---------------------------------------------------------------- small, hand-made snapshots


def gpu_node(name: str, labels: dict[str, str], gpus: int = 8, **kwargs: Unpack[NodeFields]) -> Node:
    allocatable = {"cpu": 64000, "memory": 512 * 2**30, GPU: gpus}
    return Node(name, {HOSTNAME_LABEL: name, **labels}, allocatable, **kwargs)


def gang(name: str, members: int, gpus: int, required: tuple[str, ...] = ()) -> tuple[PodGroup, list[Pod]]:
    group = PodGroup("ml", name, PodGroupAPI.SCHEDULER_PLUGINS, members, required_topology=required)
    pods = [
        Pod(
            "ml",
            f"{name}-{i}",
            labels={"scheduling.x-k8s.io/pod-group": name},
            containers=(Container("main", {"cpu": 1000, GPU: gpus}),),
        )
        for i in range(members)
    ]
    return group, pods


def test_names_from_the_input_are_escaped() -> None:
    nodes = (
        gpu_node("n0", {"rack": EVIL}),
        gpu_node("n1", {"rack": EVIL}),
        gpu_node("n2", {"rack": "r&1"}),
        gpu_node(f"n3{EVIL}", {}),  # outside the topology
    )
    fits, fits_pods = gang(f"<img src=x onerror=alert(1)>{EVIL}", 2, 4, required=("rack",))
    big, big_pods = gang(f"huge{EVIL}", 8, 8, required=("rack",))
    evil_pod = Pod(
        "ml", f'w"{EVIL}', annotations={"note": EVIL}, containers=(Container("main", {"cpu": 500}),)
    )
    snapshot = Snapshot(nodes=nodes, pods=(*fits_pods, *big_pods, evil_pod), pod_groups=(fits, big))
    result = plan(snapshot, Options(solver="greedy"))
    assert result.levels == ("rack",)
    assert any(g.placed for g in result.groups) and any(not g.placed for g in result.groups)
    assert any(EVIL in p.group or EVIL in p.pod for p in result.placements)
    page = render_report(snapshot, result, title=f"title {EVIL}")

    parser = parse(page)
    tags = [tag for tag, _ in parser.elements]
    assert "img" not in tags and tags.count("script") == 1
    assert "alert" not in "".join(parser.scripts)
    for tag, attrs in parser.elements:
        assert not any(name.startswith("on") or name == "src" for name in attrs), (tag, attrs)
    assert html.escape(EVIL) in page
    assert html.escape(f"title {EVIL}") in page
    assert html.escape(f"ml/huge{EVIL}") in page
    assert "r&amp;1" in page and "r&1" not in page
    assert html.escape(f"n3{EVIL}") in page and "outside the topology" in page


def test_levels_argument_is_used_when_the_plan_has_none() -> None:
    nodes = tuple(gpu_node(f"n{i}", {"zone": f"z{i % 2}", "rack": f"r{i}"}) for i in range(4))
    group, pods = gang("job", 2, 8)
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    assert result.levels == ()
    flat = render_report(snapshot, result)
    assert 'class="map flat"' in flat and "no topology levels" in flat
    assert all(f'title="n{i}' in flat for i in range(4))
    parse(flat)

    nested = render_report(snapshot, result, levels=("zone", "rack"))
    assert 'class="map flat"' not in nested
    for name in ("z0", "z1", "z0/r0", "z1/r1", "z0/r2", "z1/r3"):
        assert f"path {name}&#10;" in nested
    parse(nested)


def test_an_empty_plan_renders() -> None:
    snapshot = Snapshot(nodes=(gpu_node("n0", {}, gpus=0),))
    result = plan(snapshot, Options(solver="greedy"))
    page = render_report(snapshot, result)
    parse(page)
    assert '<div class="big">0/0</div>' in page
    assert "<script" not in page  # no groups to find, no script
    assert "<details" not in page  # nor a list of no warnings


def test_an_over_committed_node_counts_all_its_requests() -> None:
    """Running pods that ask for more than a node's allocatable count in full, as ``kubectl
    describe nodes`` adds them up and as the diff does: not capped at the node's allocatable."""
    over = Pod("ml", "over", node_name="n0", phase=PodPhase.RUNNING, containers=(Container("main", {"cpu": 96000}),))
    group, pods = gang("job", 2, 4)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}), gpu_node("n1", {})), pods=(over, *pods), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy"))
    assert result.resources_before["cpu"] == (96000, 128000)
    assert result.resources_after["cpu"] == (98000, 128000)
    total = diff_snapshot(snapshot, result).total
    assert total is not None
    assert (total.resource("cpu").before, total.resource("cpu").after) == (96000, 98000)
    page = render_report(snapshot, result)
    assert "75.0% → <b>76.6%</b>" in page  # the header: 96 → 98 of 128 cores
    assert "CPU: 96 → 96 of 64 cores (150% → 150%)" in page  # n0's tooltip


KUEUE_GATED = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status:
    allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
    conditions: [{type: Ready, status: "True"}]
""" + "".join(
    f"""\
- apiVersion: v1
  kind: Pod
  metadata:
    name: k-{i}
    namespace: default
    uid: u{i}
    labels: {{kueue.x-k8s.io/pod-group-name: kg}}
    annotations: {{kueue.x-k8s.io/pod-group-total-count: "2"}}
  spec:
    schedulingGates: [{{name: kueue.x-k8s.io/admission}}]
    containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]
  status: {{phase: Pending}}
"""
    for i in range(2)
)


def test_pods_a_kueue_gate_holds_are_not_counted_as_bound(tmp_path: Path) -> None:
    """The card said '2 pods bound by this plan' (and '1 nodes') where -o json holds no
    Binding for the two gated pods: it counts what -o json binds, and says the rest apart."""
    import json

    from gangplan.render import render

    path = tmp_path / "snapshot.yaml"
    path.write_text(KUEUE_GATED)
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver="greedy"))
    assert len(result.placements) == 2 and json.loads(render(result, "json", snapshot=snapshot))["items"] == []
    page = render_report(snapshot, result)
    parse(page)
    assert '<div class="big">0</div><div>pods bound by this plan · 2 placed but held by a Kueue gate</div>' in page
    assert '<div class="big">1</div><div>node · no topology levels</div>' in page
    assert "default/kg</b> <span class=\"muted\">2 placed but held by a Kueue gate · minMember 2" in page
    assert "pods bound" not in page.split("</header>", 1)[1]  # nor in the legend


def test_pods_held_back_with_gated_ones_are_not_counted_as_bound(tmp_path: Path) -> None:
    """A PodGroup (minMember 2) of one pod behind Kueue's gate and one not: -o json binds
    neither (the ungated one alone would start the gang short), and the card said '1 pod bound
    by this plan'. It counts what -o json binds, and says why the other waits."""
    import json

    from gangplan.render import render

    path = tmp_path / "snapshot.yaml"
    path.write_text("---\n".join([
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n",
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: default}\nspec: {minMember: 2}\n",
        *(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: g-{i}, namespace: default, uid: u{i}, "
          "labels: {scheduling.x-k8s.io/pod-group: g}}\n"
          f"spec: {{{gate}containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}\nstatus: {{phase: Pending}}\n"
          for i, gate in ((0, "schedulingGates: [{name: kueue.x-k8s.io/admission}], "), (1, ""))),
    ]))
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver="greedy"))
    assert len(result.placements) == 2 and json.loads(render(result, "json", snapshot=snapshot))["items"] == []
    page = render_report(snapshot, result)
    parse(page)
    assert (
        '<div class="big">0</div><div>pods bound by this plan · 1 placed but held by a Kueue gate'
        " · 1 held back with them, all or nothing</div>"
    ) in page
    assert "default/g</b> <span class=\"muted\">1 placed but held by a Kueue gate · 1 held back with gated pods, all or nothing · minMember 2" in page


# ---------------------------------------------------------------- hand-made mutation audit


def tiles_of(page: str) -> dict[str, dict[str, str]]:
    """Node tiles by node name (a tile's tooltip starts with it); the key's demo tiles left out."""
    tiles = {}
    for tag, attrs in parse(page).elements:
        classes = attrs.get("class", "").split()
        if tag == "span" and "n" in classes and "demo" not in classes:
            tiles[attrs["title"].split("\n", 1)[0]] = attrs
    return tiles


def boxes_of(page: str) -> dict[str, str]:
    """Domain boxes' tooltips by domain path (the tooltip's second line, "path <path>")."""
    boxes = {}
    for tag, attrs in parse(page).elements:
        if tag == "section" and "d" in attrs.get("class", "").split() and "outside" not in attrs["class"].split():
            boxes[attrs["title"].split("\n")[1].removeprefix("path ")] = attrs["title"]
    return boxes


def test_notready_and_cordoned_nodes_are_hatched_and_counted_in_their_domain() -> None:
    """The key says "hatched: NotReady or cordoned": a cordoned node that is Ready is one of
    them, and a box counts every such node below it, not only those of its first child."""
    nodes = (
        gpu_node("n0", {"rack": "r0"}),
        gpu_node("n1", {"rack": "r0"}, unschedulable=True),
        gpu_node("n2", {"rack": "r1"}, ready=False, unschedulable=True),
        gpu_node("n3", {"rack": "r1"}),
    )
    snapshot = Snapshot(nodes=nodes)
    result = plan(snapshot, Options(solver="greedy", levels=("rack",)))
    page = render_report(snapshot, result)
    tiles = tiles_of(page)
    assert {name for name, attrs in tiles.items() if "off" in attrs["class"].split()} == {"n1", "n2"}
    assert "\ncordoned\n" in tiles["n1"]["title"] and "\nNotReady · cordoned\n" in tiles["n2"]["title"]
    boxes = boxes_of(page)
    assert "\n2 nodes, 1 NotReady or cordoned\n" in boxes["r0"]
    assert "\n2 nodes, 1 NotReady or cordoned\n" in boxes["r1"]
    assert "0 NotReady" not in page


def test_a_cluster_without_gpus_is_drawn_by_its_cpu() -> None:
    """The key: "dashed: no GPUs (bar shows CPU)". A node without GPUs shows its CPU, has no
    GPU line in its tooltip, and the header gives no GPU percentage of no GPUs at all."""
    nodes = tuple(gpu_node(f"n{i}", {}, gpus=0) for i in range(2))
    pods = tuple(Pod("ml", f"w-{i}", containers=(Container("main", {"cpu": 16000}),)) for i in range(2))
    snapshot = Snapshot(nodes=nodes, pods=pods)
    result = plan(snapshot, Options(solver="greedy", levels=()))
    assert len(result.placements) == 2
    page = render_report(snapshot, result)
    for name, attrs in tiles_of(page).items():
        assert "cpu" in attrs["class"].split(), name
        assert "\nCPU: " in attrs["title"] and "GPU" not in attrs["title"], name
    gpu_row = page.split(f'<th title="{GPU}">GPU</th>', 1)[1].split("</tr>", 1)[0]
    assert "%" not in gpu_row.split('<td class="pc">', 1)[1].split("</td>", 1)[0]
    assert page.count("<small>cpu 0%→") == 2  # labelled tiles give their CPU use, not GPUs


def test_memory_is_shown_in_binary_units() -> None:
    """Kubernetes' Ki, Mi, Gi and Ti are powers of 1024: two 512 GiB nodes are 1.0 TiB, and
    1000 bytes are less than a KiB."""
    snapshot = Snapshot(nodes=(gpu_node("n0", {}), gpu_node("n1", {})))
    page = render_report(snapshot, plan(snapshot, Options(solver="greedy", levels=())))
    assert "of 1.0 TiB</td>" in page
    tiny = Snapshot(nodes=(Node("tiny", {HOSTNAME_LABEL: "tiny"}, {"cpu": 1000, "memory": 1000}),))
    page = render_report(tiny, plan(tiny, Options(solver="greedy", levels=())))
    assert "of 1000 B</td>" in page


def test_a_nodes_tooltip_gives_its_use_before_and_after_the_plan() -> None:
    running = Pod("ml", "old", node_name="n0", phase=PodPhase.RUNNING, containers=(Container("main", {GPU: 4}),))
    group, pods = gang("job", 1, 4)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),), pods=(running, *pods), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    assert [p.node for p in result.placements] == ["n0"]
    page = render_report(snapshot, result)
    assert "\nGPU: 4 → 8 of 8 GPUs (50% → 100%)\n" in tiles_of(page)["n0"]["title"]
    assert '<div class="big">1</div><div>pod bound by this plan</div>' in page


@pytest.mark.parametrize("levels, limit", [((), 200), (("rack",), 64)])
def test_tiles_carry_their_names_up_to_the_limit(levels: tuple[str, ...], limit: int) -> None:
    """At most 64 nodes in a tree (200 with no levels) are drawn as wide tiles with their
    names: exactly that many are, one more are not."""
    for count in (limit, limit + 1):
        nodes = tuple(gpu_node(f"n{i}", {"rack": f"r{i % 4}"}) for i in range(count))
        snapshot = Snapshot(nodes=nodes)
        page = render_report(snapshot, plan(snapshot, Options(solver="greedy", levels=())), levels=levels)
        wide = [attrs for attrs in tiles_of(page).values() if "wide" in attrs["class"].split()]
        assert len(wide) == (count if count == limit else 0), count


def test_every_group_in_the_legend_can_be_found_on_the_map(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    """Hovering a legend entry (data-g) highlights its nodes through a CSS rule for it: the
    last entry too."""
    _, _, page = gpu_cluster
    entries = [attrs["data-g"] for tag, attrs in parse(page).elements if tag == "li" and "data-g" in attrs]
    assert len(entries) > 1
    for g in entries:
        assert f'body[data-f="{g}"] .n.g{g}{{' in page, g


def test_bars_and_tiles_of_an_over_committed_node_stop_at_100_percent() -> None:
    """A bar is drawn out of 100%: a node whose running pods ask for more GPUs than it has
    fills its tile and its rack's bar, no further."""
    over = Pod("ml", "over", node_name="n0", phase=PodPhase.RUNNING, containers=(Container("main", {GPU: 12}),))
    group, pods = gang("job", 1, 8)
    snapshot = Snapshot(
        nodes=(gpu_node("n0", {"rack": "r0"}), gpu_node("n1", {"rack": "r1"})), pods=(over, *pods), pod_groups=(group,)
    )
    result = plan(snapshot, Options(solver="greedy", levels=("rack",)))
    page = render_report(snapshot, result)
    styles = [attrs["style"] for _, attrs in parse(page).elements if "style" in attrs]
    figures = [float(x) for style in styles for x in re.findall(r"(-?[0-9.]+)%", style)]
    assert figures and max(figures) == 100.0 and min(figures) >= 0.0


def test_placements_the_snapshot_cannot_account_for_are_said_and_still_drawn(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    """Up to three unknown nodes are named (an ellipsis only beyond three); a placed pod the
    snapshot does not have still puts its group on the node and in the legend."""
    snapshot, result, _ = gpu_cluster
    node = snapshot.nodes[0].name
    ghost = Placement("ml", "ghost", node, group="ml/ghost")
    for unknown in (3, 4):
        lost = tuple(Placement("ml", f"lost-{i}", f"x{i}", group="ml/lost") for i in range(unknown))
        page = render_report(snapshot, dataclasses.replace(result, placements=(*result.placements, ghost, *lost)))
        shown = ", ".join(f"x{i}" for i in range(3)) + (", …" if unknown > 3 else "")
        assert f"<li>{unknown} node(s) in the plan are not in the snapshot: {shown}</li>" in page
        assert "<li>1 placed pod(s) are not pending pods of the snapshot; their requests are not counted</li>" in page
        assert f"<summary>{len(result.warnings) + 2} warning(s)</summary>" in page
        assert "ml/ghost" in swatches(page)
        assert "\n▶ ml/ghost (1 pod): ghost" in tiles_of(page)[node]["title"]


def test_group_colours_do_not_follow_the_node_order(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    """A colour comes from the group's name, so listing the nodes in another order keeps it."""
    snapshot, result, page = gpu_cluster
    reordered = dataclasses.replace(snapshot, nodes=tuple(reversed(snapshot.nodes)))
    assert swatches(render_report(reordered, result, title="gpu-cluster")) == swatches(page)


def test_twenty_groups_get_twenty_colours() -> None:
    """Past the palette's 16 colours, groups still get colours of their own."""
    nodes = tuple(gpu_node(f"n{i}", {}) for i in range(3))
    made = [gang(f"job-{i:02d}", 1, 1) for i in range(20)]
    snapshot = Snapshot(nodes=nodes, pods=tuple(p for _, ps in made for p in ps), pod_groups=tuple(g for g, _ in made))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    assert sum(g.placed for g in result.groups) == 20
    colours = swatches(render_report(snapshot, result))
    assert len(colours) == 20 and len(set(colours.values())) == 20


def test_the_solver_card_says_which_plan_was_kept_and_the_gap_as_the_summary_line() -> None:
    """"plan kept from greedy" only when the solver kept another's plan; the gap with two
    decimals, as the summary line gives it (README: "cp-sat OPTIMAL gap 0.00%")."""
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),))
    kept = SolverReport("cp-sat", "optimal", "FEASIBLE", "greedy", gap=0.125)
    page = render_report(snapshot, Plan((), (), kept))
    assert "solver <b>cp-sat</b> · policy <b>optimal</b> · status <b>FEASIBLE</b> · plan kept from <b>greedy</b> · gap 12.50%</div>" in page
    own = render_report(snapshot, Plan((), (), dataclasses.replace(kept, chosen="cp-sat", gap=None)))
    assert "kept from" not in own and "gap" not in own.split('<div class="card solver">', 1)[1].split("</div>", 1)[0]


ZONE, RACK = "topology.kubernetes.io/zone", "example.com/rack"


def test_where_a_group_landed_names_up_to_three_domains_per_level() -> None:
    """The legend says where a group went: each level's domains by their own value (r0, not
    z0/r0), up to three of them (more are counted), the nodes outside the topology, and
    the node count; levels go by the last part of their label key. The header counts the
    nodes outside too, a tile's tooltip gives its path."""
    nodes = (
        gpu_node("n0", {ZONE: "z0", RACK: "r0"}),
        gpu_node("n1", {ZONE: "z0", RACK: "r0"}),
        gpu_node("n2", {ZONE: "z0", RACK: "r1"}),
        gpu_node("n3", {ZONE: "z1", RACK: "r2"}),
        gpu_node("n4", {}),
    )
    group, pods = gang("wide", 5, 8)
    snapshot = Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=(ZONE, RACK)))
    assert sorted(p.node for p in result.placements) == ["n0", "n1", "n2", "n3", "n4"]
    page = render_report(snapshot, result)
    where = page.split('<div class="where">', 1)[1].split("</div>", 1)[0]
    assert re.sub(r' title="[^"]*"', "", where) == (
        "<span>zone z0, z1</span> · <span>rack r0, r1, r2</span> · 1 outside the topology · <span>5 nodes</span>"
    )
    assert "<div>nodes · 2 zone · 3 rack · 1 node outside</div>" in page
    assert '<td class="abs">0 → 40 of 40 GPUs</td>' in page  # the header: before → after of allocatable
    assert '<span class="lv">outside the topology</span><span class="dn">1 node</span>' in page
    assert "\nzone z0 › rack r1\n" in tiles_of(page)["n2"]["title"]


def test_the_groups_card_is_marked_when_a_group_is_not_placed(gpu_cluster: tuple[Snapshot, Plan, str]) -> None:
    _, result, page = gpu_cluster
    assert any(g.waiting and not g.placed for g in result.groups)
    assert '<div class="card warn"><div class="big">' in page
    group, pods = gang("job", 1, 1)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),), pods=tuple(pods), pod_groups=(group,))
    placed = render_report(snapshot, plan(snapshot, Options(solver="greedy", levels=())))
    assert '<div class="card"><div class="big">1/1</div><div>groups placed</div></div>' in placed


def test_the_legend_tells_running_members_and_jobgroups_apart() -> None:
    """A group's legend entry counts the members it already runs, and names its JobGroup
    only when that is another group (a JobGroup's top group is its own)."""
    running = Pod(
        "ml", "job-old", node_name="n0", phase=PodPhase.RUNNING, labels={"scheduling.x-k8s.io/pod-group": "job"},
        containers=(Container("main", {GPU: 1}),),
    )
    group, pods = gang("job", 3, 1)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),), pods=(running, *pods[:2]), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    (outcome,) = result.groups
    assert outcome.placed and outcome.running == 1 and outcome.job_group in ("", outcome.key)
    page = render_report(snapshot, result)
    assert '<b>ml/job</b> <span class="muted">2 pods bound · minMember 3 · 1 running · priority 0</span>' in page
    assert "JobGroup" not in page


@pytest.mark.parametrize("implicit", ["pod", "Kueue pod group"])
def test_a_group_with_no_podgroup_object_named_like_a_podgroup_has_its_own_legend_entry(implicit: str) -> None:
    """A bare pod, or a Kueue pod group, may have a PodGroup's name in its namespace; both are
    planned (README). The legend gives each its own entry and count, the implicit one told by
    its kind, where one name counted both groups' pods twice ('3 pods bound · minMember 2')
    and the first entry found no tile to highlight."""
    group, pods = gang("job", 2, 1)
    if implicit == "pod":
        others = [Pod("ml", "job", containers=(Container("main", {GPU: 1}),))]
    else:
        kueue = {"kueue.x-k8s.io/pod-group-name": "job"}
        others = [Pod("ml", f"kueue-{i}", labels=kueue, annotations={"kueue.x-k8s.io/pod-group-total-count": "3"},
                      containers=(Container("main", {GPU: 1}),)) for i in range(3)]
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),), pods=(*pods, *others), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    assert [g.placed for g in result.groups] == [True, True]
    page = render_report(snapshot, result)
    parse(page)
    entries = re.findall(r'<li data-g="(\d+)"[^>]*>.*?<b>([^<]*)</b> <span class="muted">([^<]*)</span>', page)
    assert sorted(entries) == [
        ("0", "ml/job", "2 pods bound · minMember 2 · priority 0"),
        ("1", f"ml/job ({implicit})", f"{len(others)} pod{'s' if len(others) > 1 else ''} bound · minMember {len(others)} · priority 0"),
    ]
    assert re.search(r'class="n [^"]*\bg0\b[^"]*\bg1\b', page)  # n0's tile holds both, each found by its entry


def test_every_group_in_the_side_lists_says_its_state() -> None:
    """An unplaced group with no reason recorded says so; a group placed with nothing new to
    bind counts its succeeded members, which count toward minMember (seed 001)."""
    unplaced = GroupOutcome("ml/late", "ml/late", False, 0, 2, 0, 2, 0)
    done = GroupOutcome(f"ml/done{EVIL}", "ml/done", True, 0, 2, 1, 0, 0, succeeded=1)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),))
    page = render_report(snapshot, Plan((), (unplaced, done), SolverReport("greedy", "optimal", "GREEDY", "greedy")))
    parse(page)
    assert '<b>ml/late</b> <span class="muted">minMember 2 · 2 pending · priority 0</span><div class="reason">no reason given</div>' in page
    assert f'<b>ml/done{html.escape(EVIL)}</b> <span class="muted">1 running · 1 succeeded · minMember 2 · priority 0</span>' in page


def test_reasons_and_notes_quoting_the_input_are_escaped() -> None:
    """A reason quotes names from the input (a node, a label value, a pod), and so may the
    solver's note: escaped, as every name the page shows."""
    late = GroupOutcome("ml/late", "ml/late", False, 0, 2, 0, 2, 0, reason=f"nodeSelector rack={EVIL} matches no node")
    solver = SolverReport("cp-sat", "optimal", "FEASIBLE", "cp-sat", note=f"stopped at {EVIL}")
    page = render_report(Snapshot(nodes=(gpu_node("n0", {}),)), Plan((), (late,), solver))
    assert [tag for tag, _ in parse(page).elements].count("script") == 0
    assert f'<div class="reason">nodeSelector rack={html.escape(EVIL)} matches no node</div>' in page
    assert f'<div class="note">stopped at {html.escape(EVIL)}</div>' in page


def test_a_box_is_coloured_and_barred_by_its_use_before_and_after_the_plan() -> None:
    """The key: a box is "coloured by its GPU utilisation after the plan ...; its thin bars and
    label show before → after"; a box above the racks marks each group placed below it with
    a dot, in legend order, that counts its pods. Here n0 runs 4 of its 8 GPUs and the plan
    adds two pods of 2 GPUs: 50% → 100%."""
    running = Pod("ml", "old", node_name="n0", phase=PodPhase.RUNNING, containers=(Container("main", {GPU: 4}),))
    first, first_pods = gang("zz", 1, 2)  # first in the legend: its pods have the higher priority
    second, second_pods = gang("aa", 1, 2)
    urgent = [dataclasses.replace(p, priority=100) for p in first_pods]
    snapshot = Snapshot(
        nodes=(gpu_node("n0", {"zone": "z0", "rack": "r0"}),), pods=(running, *urgent, *second_pods), pod_groups=(first, second)
    )
    result = plan(snapshot, Options(solver="greedy", levels=("zone", "rack")))
    assert [g.key for g in result.groups] == ["ml/zz", "ml/aa"] and len(result.placements) == 2
    page = render_report(snapshot, result)
    full = page.split("linear-gradient(90deg,", 1)[1].split(")", 1)[0].rsplit(",", 1)[1].removesuffix(" 100%")
    bars = (
        '<span class="bars"><span class="tb"><i style="width:50.0%"></i><em style="left:50.0%;width:0.0%"></em></span>'
        '<span class="tb"><i style="width:50.0%"></i><em style="left:50.0%;width:50.0%"></em></span></span>'
    )
    zone = page.split('<span class="lv">zone</span>', 1)[0].rsplit('<div class="dh" style="background:', 1)[1]
    assert zone == f'{full}">'  # the scale's 100% colour
    assert f'<span class="dn">z0</span><span class="dv">GPU 50% → 100%</span>{bars}<span class="dots">' in page
    assert f'<span class="dn">r0</span><span class="dv">50% → 100%</span>{bars}</div>' in page
    dots = re.findall(r'<i class="dot (g\d)" style="[^"]*" title="([^"]*)">', page)
    assert dots == [("g0", "ml/zz: 1 pod here"), ("g1", "ml/aa: 1 pod here")]


def test_a_box_without_gpus_says_it_shows_cpu() -> None:
    nodes = tuple(gpu_node(f"n{i}", {"zone": "z0", "rack": f"r{i}"}, gpus=0) for i in range(2))
    pods = (Pod("ml", "w", containers=(Container("main", {"cpu": 32000}),)),)
    snapshot = Snapshot(nodes=nodes, pods=pods)
    result = plan(snapshot, Options(solver="greedy", levels=("zone", "rack")))
    page = render_report(snapshot, result)
    assert '<span class="dn">z0</span><span class="dv">CPU 0% → 25%</span>' in page  # 32 of 128 cores


@pytest.mark.parametrize("members", [1, 8, 9])
def test_a_tiles_tooltip_lists_up_to_eight_pods_of_a_group(members: int) -> None:
    """A node's tooltip names each group's pods there by name (without the namespace), eight
    at most, then counts the rest; a labelled tile gives its GPUs before → after of allocatable."""
    group, pods = gang("job", members, 0)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),), pods=tuple(pods), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    assert len(result.placements) == members
    title = tiles_of(page := render_report(snapshot, result))["n0"]["title"]
    names = ", ".join(f"job-{i}" for i in range(min(members, 8)))
    more = f", +{members - 8} more" if members > 8 else ""
    assert f"\n▶ ml/job ({members} pod{'s' if members > 1 else ''}): {names}{more}" in title
    assert title.endswith(more or names)
    assert "<small>0→0/8 GPU</small>" in page


def test_an_empty_tile_is_plain_white_not_a_gradient_of_one_stop() -> None:
    """A CSS gradient takes two colour stops at least: one stop is invalid, and the browser
    drops the whole background. A node with nothing in use is white."""
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),))
    page = render_report(snapshot, plan(snapshot, Options(solver="greedy", levels=())))
    assert '<i style="background:#ffffff"></i>' in page
    assert re.search(r"linear-gradient\(90deg,[^,)]*\)", page) is None


def test_the_nodes_a_group_landed_on_are_escaped_in_the_legend() -> None:
    group, pods = gang("job", 1, 1)
    snapshot = Snapshot(nodes=(gpu_node(f"n{EVIL}", {}),), pods=tuple(pods), pod_groups=(group,))
    page = render_report(snapshot, plan(snapshot, Options(solver="greedy", levels=())))
    parser = parse(page)
    assert [tag for tag, _ in parser.elements].count("script") == 1 and "alert" not in "".join(parser.scripts)
    assert f'<div class="where"><span title="n{html.escape(EVIL)}">1 node</span></div>' in page


def test_a_group_at_quorum_whose_extra_pod_fits_nowhere_is_still_listed() -> None:
    """README: the page lists every group. A group whose running member meets minMember is
    placed, yet its pending pod fits on no node: nothing is bound for it, so it is listed
    among the groups placed with nothing new to bind, not left off the page."""
    labels = {"scheduling.x-k8s.io/pod-group": "job"}
    running = Pod("ml", "job-0", node_name="n0", phase=PodPhase.RUNNING, labels=labels, containers=(Container("main", {GPU: 1}),))
    big = Pod("ml", "job-1", labels=labels, containers=(Container("main", {GPU: 16}),))
    group = PodGroup("ml", "job", PodGroupAPI.SCHEDULER_PLUGINS, 1)
    snapshot = Snapshot(nodes=(gpu_node("n0", {}),), pods=(running, big), pod_groups=(group,))
    result = plan(snapshot, Options(solver="greedy", levels=()))
    ((outcome,), ()) = (result.groups, result.placements)
    assert outcome.placed and outcome.waiting
    page = render_report(snapshot, result)
    assert '<b>ml/job</b> <span class="muted">1 running · minMember 1 · priority 0</span>' in page


def test_where_a_group_landed_tells_repeated_rack_names_apart(tmp_path: Path) -> None:
    """Racks named alike under two blocks (a Topology's levels, which Kueue reads as paths): a
    group on b1/r1 and b2/r1 was said to be on 'rack r1, r1'. Names that repeat are shown whole."""
    objects = [
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: dc}\n"
        "spec: {levels: [{nodeLabel: block}, {nodeLabel: rack}]}\n",
        *(f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: {{block: {b}, rack: r1}}}}\n"
          "status: {allocatable: {cpu: '1', pods: '110'}}\n" for n, b in (("a", "b1"), ("b", "b2"))),
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {minMember: 2}\n",
        *(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: g-{i}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: g}}}}\n"
          "spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n" for i in range(2)),
    ]
    path = tmp_path / "s.yaml"
    path.write_text("---\n".join(objects))
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver="greedy"))
    page = render_report(snapshot, result)
    parse(page)
    assert '<span title="b1/r1&#10;b2/r1">rack b1/r1, b2/r1</span>' in page
    assert '<span title="b1&#10;b2">block b1, b2</span>' in page  # names that do not repeat stay short

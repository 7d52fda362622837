"""The HTML report: one self-contained, escaped, deterministic page of a plan."""

from __future__ import annotations

import hashlib
import html
import os
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
from gangplan.plan import Plan
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

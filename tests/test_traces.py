"""Node inventories of the public traces: each format read into Flavours, its errors with file
and line, a generated topology over them, and the real inventories read at run time.

The inventories here are made up in each trace's format; no trace data is copied."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gangplan.errors import InputError
from gangplan.generate import BIGPOD, DEFAULT_FLAVOURS, GI, INSTANCE_TYPE, MINIPOD, TOR, Flavour, NodeSpec, generate
from gangplan.kube import name_problem
from gangplan.loader import load_snapshot
from gangplan.planner import Options, plan
from gangplan.traces import SPOT_MEMORY_PER_CPU, trace_nodes
from gangplan.verify import verify

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"


def of_kind(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in doc["items"] if o["kind"] == kind]


def write_inventory(folder: Path) -> Path:
    """A made-up inventory in the openb node-list format (cluster-trace-gpu-v2023)."""
    folder.mkdir(exist_ok=True)
    rows = ["sn,cpu_milli,memory_mib,gpu,model"]
    rows += [f"inv-node-{i:03d},96000,393216,8,G2" for i in range(11)]
    rows += [f"inv-node-{i:03d},64000,262144,2,P100" for i in range(11, 18)]
    rows += [f"inv-node-{i:03d},32000,131072,0," for i in range(18, 21)]
    path = folder / "nodes.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def write_pai(folder: Path) -> Path:
    """A made-up machine table in the PAI format (cluster-trace-gpu-v2020): no header row."""
    folder.mkdir(exist_ok=True)
    rows = [f"{i:024x},V100M32,96,384,8" for i in range(5)]
    rows += [f"{i:024x},P100,64,512,2" for i in range(5, 9)]
    rows += [f"{i:024x},CPU,96,512,0" for i in range(9, 11)]
    path = folder / "pai_machine_spec.csv"
    path.write_text("\n".join(rows) + "\n")
    (folder / "pai_machine_spec.header").write_text("machine,gpu_type,cap_cpu,cap_mem,cap_gpu\n")
    return path


def write_spot(folder: Path) -> Path:
    """A made-up inventory in the spot format (cluster-trace-v2026-spot-gpu): no memory."""
    folder.mkdir(exist_ok=True)
    rows = ["gpu_model,gpu_capacity_num,cpu_num,node_name"]
    rows += [f"A10,1,128,{i}" for i in range(6)]
    rows += [f"H800,8,192,{i}" for i in range(6, 10)]
    path = folder / "node_info_df.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_openb_format(tmp_path: Path) -> None:
    specs = trace_nodes(str(write_inventory(tmp_path)))
    assert len(specs) == 21
    assert specs[0] == NodeSpec("inv-node-000", specs[0].flavour)
    g2 = specs[0].flavour
    assert (g2.instance_type, g2.cpu, g2.memory, g2.gpus, g2.gpu_product) == ("openb-g2x8-96c-384g", 96_000, 384 * GI, 8, "G2")
    assert specs[10].flavour is g2
    assert specs[-1].flavour.gpus == 0 and specs[-1].flavour.gpu_product == ""
    assert specs[-1].flavour.instance_type == "openb-cpu-32c-128g"
    assert len({s.flavour for s in specs}) == 3


def test_the_pai_format(tmp_path: Path) -> None:
    folder = tmp_path / "alibaba-pai-gpu-v2020"
    path = write_pai(folder)
    specs = trace_nodes(str(folder))
    assert specs == trace_nodes(str(path))
    assert [s.name for s in specs[:2]] == [f"{0:024x}", f"{1:024x}"]
    v100 = specs[0].flavour
    assert (v100.instance_type, v100.cpu, v100.memory, v100.gpus, v100.gpu_product) == (
        "pai-v100m32x8-96c-384g", 96_000, 384 * GI, 8, "V100M32"
    )
    cpu = specs[-1].flavour
    assert (cpu.instance_type, cpu.gpus, cpu.gpu_product) == ("pai-cpu-96c-512g", 0, "")
    assert [len([s for s in specs if s.flavour is f]) for f in (v100, specs[5].flavour, cpu)] == [5, 4, 2]


def test_the_spot_format(tmp_path: Path) -> None:
    folder = tmp_path / "alibaba-spot-gpu-v2026"
    write_spot(folder)
    specs = trace_nodes(str(folder))
    assert [s.name for s in specs] == [f"spot-{i}" for i in range(10)]
    a10, h800 = specs[0].flavour, specs[-1].flavour
    assert (a10.instance_type, a10.cpu, a10.memory, a10.gpus, a10.gpu_product) == (
        "spot-a10x1-128c", 128_000, 128 * SPOT_MEMORY_PER_CPU, 1, "A10"
    )
    assert (h800.instance_type, h800.gpus) == ("spot-h800x8-192c", 8)
    assert len({s.flavour for s in specs}) == 2


@pytest.mark.parametrize(
    "name, text, error",
    [
        ("bad.csv", "name,cpu\nx,1\n", r"bad.csv:1:1: not a node inventory"),
        ("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nx,lots,1,0,\n", r"bad.csv:2:1: cpu_milli, memory_mib and gpu must be integers"),
        ("bad.csv", "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128,7\n\nA10,1,128,7\n", r"bad.csv:4:1: node spot-7 is listed twice"),
        ("pai_machine_spec.csv", "m1,T4,96,512,2\nm2,T4,96\n", r"pai_machine_spec.csv:2:1: expected 5 columns, got 3"),
        ("pai_machine_spec.csv", "m1,T4,96,0,2\n", r"pai_machine_spec.csv:1:1: expected positive CPU and memory"),
        ("pai_machine_spec.csv", "m1,T4,96,512,2\nM_2,T4,96,512,2\n", r'pai_machine_spec.csv:2:1: node name "M_2" is not a Kubernetes name \(lowercase'),
        ("pai_machine_spec.csv", ",T4,96,512,2\n", r'pai_machine_spec.csv:1:1: node name "" is not a Kubernetes name'),
        # Python's csv module refuses a cell over 128 KiB (an unclosed quote swallows the rest of a file).
        ("bad.csv", 'sn,cpu_milli,memory_mib,gpu,model\nn1,96000,1024,8,A10\nn2,96000,1024,8,"' + "x" * 200_000 + "\n",
         r"bad.csv:3:1: not a CSV row gangplan can read \(field larger than field limit"),
        # What generate cannot write nodes of is refused at the row that makes the flavour (helper-84).
        ("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,A100\nn2,96000,786432,8,A100 SXM\n",
         r"bad.csv:3:1: flavour 'openb-a100 sxmx8-96c-768g': label value"),
        ("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,8,A100\n", r"bad.csv:2:1: flavour '[^']+': its allocatable"),
        ("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,a100\nn2,96000,786432,8,A100\n",
         r"bad.csv:3:1: flavour 'openb-a100x8-96c-768g' is given two different shapes \(line 2 and this one\)"),
    ],
)
def test_errors_name_the_file_and_line(tmp_path: Path, name: str, text: str, error: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=error):
        trace_nodes(str(tmp_path / name))


def test_missing_inventories(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        trace_nodes(str(tmp_path / "missing.csv"))
    with pytest.raises(InputError, match="no node inventory here: expected one of openb_node_list_gpu_node.csv"):
        trace_nodes(str(tmp_path))


CELL = st.one_of(st.integers(-3, 300).map(str), st.sampled_from(["", " ", "A10", "CPU", "x", "1.5", "-0"]), st.text(max_size=4))


@settings(max_examples=200, deadline=None)
@example(header="sn,cpu_milli,memory_mib,gpu,model", rows=[["node\x00", "96000", "1024", "8", "G2"]])
@example(header=None, rows=[["Machine-1", "T4", "96", "512", "2"]])
@given(
    header=st.sampled_from(["sn,cpu_milli,memory_mib,gpu,model", "gpu_model,gpu_capacity_num,cpu_num,node_name", None]),
    rows=st.lists(st.lists(CELL, max_size=6), max_size=6),
)
def test_any_rows_are_read_or_refused_with_a_position(tmp_path_factory: Any, header: str | None, rows: list[list[str]]) -> None:
    """Whatever the rows hold, a list of nodes or an InputError naming the file: never another
    exception (which the CLI would show as an internal error), and never a node an API server
    would refuse (a name with a NUL or an upper-case letter)."""
    folder = tmp_path_factory.mktemp("rows")
    path = folder / ("nodes.csv" if header else "pai_machine_spec.csv")
    lines = ([header] if header else []) + [",".join(cell.replace(",", ";") for cell in row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        specs = trace_nodes(str(path))
    except InputError as exc:
        assert str(path) in str(exc)
        return
    assert len({s.name for s in specs}) == len(specs)
    assert all(name_problem(s.name) is None for s in specs)
    assert all(s.flavour.cpu > 0 and s.flavour.memory > 0 and s.flavour.gpus >= 0 for s in specs)


@pytest.mark.parametrize("writer", [write_inventory, write_pai, write_spot])
def test_topology_over_an_inventory(tmp_path: Path, writer: Any) -> None:
    specs = trace_nodes(str(writer(tmp_path / "trace")))
    doc = generate(shape=(1, 2, 2, 4), groups=10, seed=1, nodes_from=specs, max_gang=8)
    nodes = of_kind(doc, "Node")
    assert sorted(n["metadata"]["name"] for n in nodes) == sorted(s.name for s in specs)
    tors: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        labels = node["metadata"]["labels"]
        tors[labels[TOR]].add(labels[INSTANCE_TYPE])
        assert labels[BIGPOD] and labels[MINIPOD]
    assert all(len(kinds) == 1 for kinds in tors.values())  # a tor never mixes flavours
    per_flavour: defaultdict[Flavour, int] = defaultdict(int)
    for spec in specs:
        per_flavour[spec.flavour] += 1
    assert len(tors) == sum(-(-count // 4) for count in per_flavour.values())  # tors of 4
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver="greedy"))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    flavours_only = generate(shape=(1, 1, 2, 2), groups=2, nodes_from=[DEFAULT_FLAVOURS[1]] * 5)
    assert len(of_kind(flavours_only, "Node")) == 5


@pytest.mark.parametrize(
    "folder, nodes, gpus",
    [("alibaba-gpu-v2023", 1213, 6212), ("alibaba-pai-gpu-v2020", 1897, 6742), ("alibaba-spot-gpu-v2026", 4278, 10412)],
)
def test_real_inventories_at_run_time(folder: str, nodes: int, gpus: int) -> None:
    """The counts the traces' READMEs state; CI has ../shared beside the checkout."""
    path = TRACES / folder
    if not path.is_dir():
        pytest.skip(f"{path} is not beside this checkout (CI has it)")
    specs = trace_nodes(str(path))
    assert len(specs) == nodes and sum(s.flavour.gpus for s in specs) == gpus
    assert len({s.name for s in specs}) == nodes
    doc = generate(shape=(1, 4, 8, 16), groups=20, seed=0, nodes_from=specs, max_gang=16)
    assert len(of_kind(doc, "Node")) == nodes


# ---------------------------------------------------------------- hand-made mutation audit


def test_machines_differing_only_in_memory_are_two_flavours(tmp_path: Path) -> None:
    """PAI's V100 machines come with 512 or 384 GB (its README): nodes of one shape share one
    Flavour, so these are two, each with its own memory and instance type."""
    path = tmp_path / "pai_machine_spec.csv"
    path.write_text("m1,V100,96,512,8\nm2,V100,96,384,8\nm3,V100,96,512,8\n")
    specs = trace_nodes(str(path))
    assert specs[0].flavour is specs[2].flavour and specs[0].flavour != specs[1].flavour
    assert [s.flavour.memory for s in specs] == [512 * GI, 384 * GI, 512 * GI]
    assert [s.flavour.instance_type for s in specs[:2]] == ["pai-v100x8-96c-512g", "pai-v100x8-96c-384g"]


def test_shapes_apart_by_a_fraction_of_a_core_get_their_own_instance_types(tmp_path: Path) -> None:
    """openb gives CPU in millicores: 96000 and 96500 are two shapes, so two instance types, and
    generate (which refuses one instance type with two shapes) takes the inventory."""
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,G2\nn2,96500,393216,8,G2\n")
    specs = trace_nodes(str(path))
    assert specs[0].flavour.cpu == 96_000 and specs[1].flavour.cpu == 96_500
    assert specs[0].flavour.instance_type != specs[1].flavour.instance_type
    assert len(of_kind(generate(shape=(1, 1, 1, 2), groups=1, nodes_from=specs), "Node")) == 2


def test_an_inventory_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    """A file that is not text is refused with its name (exit 2), not an internal error."""
    path = tmp_path / "nodes.csv"
    path.write_bytes(b"sn,cpu_milli,memory_mib,gpu,model\n\xff\xfe\x00,1,1,1,x\n")
    with pytest.raises(InputError, match="nodes.csv"):
        trace_nodes(str(path))


def test_an_openb_folder_means_its_gpu_node_list(tmp_path: Path) -> None:
    """The v2023 folder holds both node lists; a folder means its GPU-node list (the docstring),
    not the one with the CPU-only nodes too."""
    folder = tmp_path / "alibaba-gpu-v2023"
    folder.mkdir()
    header = "sn,cpu_milli,memory_mib,gpu,model\n"
    (folder / "openb_node_list_gpu_node.csv").write_text(header + "g1,96000,393216,8,G2\n")
    (folder / "openb_node_list_all_node.csv").write_text(header + "g1,96000,393216,8,G2\nc1,32000,131072,0,\n")
    assert [s.name for s in trace_nodes(str(folder))] == ["g1"]


def test_an_inventory_fills_tors_then_minipods_then_bigpods_by_the_shape(tmp_path: Path) -> None:
    """shape[3] nodes per tor, shape[2] tors per miniPod, shape[1] miniPods per bigPod; the
    bigPods follow from the inventory. Nodes are grouped by flavour (first appearance order)
    even when the inventory interleaves them, so a tor never mixes flavours and no more tors
    are made than the flavours need. Label values are unique along the path."""
    rows = ["sn,cpu_milli,memory_mib,gpu,model"]
    rows += [f"n{i:02d},96000,393216,8,G2" if i % 2 else f"n{i:02d},64000,262144,2,P100" for i in range(40)]
    path = tmp_path / "nodes.csv"
    path.write_text("\n".join(rows) + "\n")
    doc = generate(shape=(9, 2, 3, 4), groups=4, seed=1, nodes_from=trace_nodes(str(path)))
    tors: dict[str, set[str]] = defaultdict(set)
    minipods: dict[str, set[str]] = defaultdict(set)
    bigpods: dict[str, set[str]] = defaultdict(set)
    sizes: Counter[str] = Counter()
    for node in of_kind(doc, "Node"):
        labels = node["metadata"]["labels"]
        tors[labels[TOR]].add(labels[INSTANCE_TYPE])
        sizes[labels[TOR]] += 1
        minipods[labels[MINIPOD]].add(labels[TOR])
        bigpods[labels[BIGPOD]].add(labels[MINIPOD])
        assert labels[TOR].startswith(labels[MINIPOD].replace("mp-", "tor-") + "-")
        assert labels[MINIPOD].startswith(labels[BIGPOD].replace("bp-", "mp-") + "-")
    assert all(len(kinds) == 1 for kinds in tors.values()) and len(tors) == 10 and set(sizes.values()) == {4}
    assert all(len(t) <= 3 for t in minipods.values()) and len(minipods) == 4  # ceil(10 / 3)
    assert all(len(m) <= 2 for m in bigpods.values()) and len(bigpods) == 2  # ceil(4 / 2), not shape[0]



def test_shapes_apart_by_less_than_a_gib_get_their_own_instance_types(tmp_path: Path) -> None:
    """openb gives memory in MiB: 393216 and 393500 MiB are two shapes, so two Flavours (the
    docstring: nodes of one shape share one Flavour), and generate, which refuses one instance
    type with two shapes, must take the inventory. Both were named openb-g2x8-96c-384g (the
    <GiB>g part is rounded down), and --from-trace refused a well-formed inventory: 'flavour
    'openb-g2x8-96c-384g' is given two different shapes', a flavour the user never named."""
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,G2\nn2,96000,393500,8,G2\n")
    specs = trace_nodes(str(path))
    assert specs[0].flavour.memory == 393216 * 2**20 and specs[1].flavour.memory == 393500 * 2**20
    assert specs[0].flavour.instance_type != specs[1].flavour.instance_type
    assert len(of_kind(generate(shape=(1, 1, 1, 2), groups=1, nodes_from=specs), "Node")) == 2


@pytest.mark.parametrize(
    "name, text, columns",
    [
        ("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8\n", 5),
        ("pai_machine_spec.csv", "m1,T4,96,512\n", 5),
        ("nodes.csv", "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128\n", 4),
    ],
)
def test_a_row_one_column_short_is_refused_at_its_line(tmp_path: Path, name: str, text: str, columns: int) -> None:
    """Each format has its columns (the traces' READMEs): a row missing the last one is an
    InputError naming the count and the line, not a shape read from the wrong cells."""
    (tmp_path / name).write_text(text)
    line = text.count("\n")
    with pytest.raises(InputError, match=rf"{name}:{line}:1: expected {columns} columns, got {columns - 1}"):
        trace_nodes(str(tmp_path / name))


@pytest.mark.parametrize("row", ["n1,0,393216,8,G2", "n1,96000,393216,-1,G2"])
def test_a_node_without_cpu_or_with_negative_gpus_is_refused(tmp_path: Path, row: str) -> None:
    """A node has some CPU and 0, 1, 2, 4 or 8 GPUs (the v2023 README): 0 millicores or -1 GPUs
    is a broken row, refused at its line, not a Flavour generate would refuse without a line."""
    path = tmp_path / "nodes.csv"
    path.write_text(f"sn,cpu_milli,memory_mib,gpu,model\n{row}\n")
    with pytest.raises(InputError, match=r"nodes.csv:2:1: expected positive CPU and memory, and GPUs >= 0"):
        trace_nodes(str(path))

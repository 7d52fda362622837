"""Real node inventories from the public cluster traces, for ``gangplan generate --from-trace``.

Each trace writes its node list its own way; this module is the one place that knows how.
A trace gives nodes and their shapes only: the topology and the gangs laid over them stay
synthetic (``generate.generate(nodes_from=...)``). The data is for research and study use:
read it at run time, never ship it.

- Alibaba cluster-trace-gpu-v2023 (``openb_node_list_*.csv``): header
  ``sn,cpu_milli,memory_mib,gpu,model``; a folder means its GPU-node list.
- Alibaba cluster-trace-gpu-v2020, PAI (``pai_machine_spec.csv``): no header row (the
  columns ``machine,gpu_type,cap_cpu,cap_mem,cap_gpu`` are in a file beside it); cores and GB.
  ``gpu_type`` CPU marks a machine with no GPUs.
- Alibaba cluster-trace-v2026-spot-gpu (``node_info_df.csv``): header
  ``gpu_model,gpu_capacity_num,cpu_num,node_name``; vCPUs and no memory at all. A node gets
  SPOT_MEMORY_PER_CPU per vCPU (what cloud GPU instances commonly have). Generated pods ask
  memory in proportion to their node's, so the figure hardly matters: at 2, 4 and 16 GiB per
  vCPU one generated case had the same running pods and greedy placed as many pods (1,023),
  though on other nodes where memory broke a tie. Node names are integers there; they
  become ``spot-<id>``.

Nodes of one shape share one Flavour, named ``<trace>-<model>x<gpus>-<cores>c[-<GiB>g]``
(``<trace>-cpu-...`` without GPUs; memory that is no whole GiB is written ``-<MiB>mi``, so
two shapes never share a name).
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from typing import Callable

from .errors import InputError, Position
from .generate import GI, MI, Flavour, NodeSpec, flavour_problem
from .kube import name_problem

__all__ = ["SPOT_MEMORY_PER_CPU", "trace_nodes"]

SPOT_MEMORY_PER_CPU = 4 * GI


@dataclass(frozen=True, slots=True)
class _Shape:
    """One node as a trace describes it, in the units gangplan uses."""

    name: str
    cpu: int  # millicores
    memory: int  # bytes
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class _Format:
    prefix: str  # of flavour names
    header: tuple[str, ...] | None  # the first row, or None when the file has no header row
    folder_file: str  # the file a folder of this trace is read from
    row: Callable[[list[str]], _Shape]  # raises ValueError with what is wrong
    memory_in_name: bool = True


def _integers(cells: list[str], what: str) -> list[int]:
    try:
        return [int(cell) for cell in cells]
    except ValueError:
        raise ValueError(f"{what} must be integers") from None


def _openb(row: list[str]) -> _Shape:
    cpu, mib, gpus = _integers(row[1:4], "cpu_milli, memory_mib and gpu")
    return _Shape(row[0], cpu, mib * MI, gpus, row[4])


def _pai(row: list[str]) -> _Shape:
    cores, gb, gpus = _integers(row[2:5], "cap_cpu, cap_mem and cap_gpu")
    return _Shape(row[0], cores * 1000, gb * GI, gpus, "" if row[1].upper() == "CPU" else row[1])


def _spot(row: list[str]) -> _Shape:
    gpus, cores, node = _integers(row[1:4], "gpu_capacity_num, cpu_num and node_name")
    return _Shape(f"spot-{node}", cores * 1000, cores * SPOT_MEMORY_PER_CPU, gpus, row[0])


_FORMATS = (
    _Format("openb", ("sn", "cpu_milli", "memory_mib", "gpu", "model"), "openb_node_list_gpu_node.csv", _openb),
    _Format("pai", None, "pai_machine_spec.csv", _pai),
    _Format("spot", ("gpu_model", "gpu_capacity_num", "cpu_num", "node_name"), "node_info_df.csv", _spot, memory_in_name=False),
)
_PAI_COLUMNS = 5


def inventory_file(path: str) -> str:
    """The CSV ``trace_nodes`` reads: ``path`` itself, or the inventory in a trace folder."""
    if os.path.isdir(path):
        found = [f for f in _FORMATS if os.path.isfile(os.path.join(path, f.folder_file))]
        if not found:
            names = ", ".join(f.folder_file for f in _FORMATS)
            raise InputError(f"no node inventory here: expected one of {names}", Position(path))
        path = os.path.join(path, found[0].folder_file)
    return path


def trace_nodes(path: str) -> list[NodeSpec]:
    """The node inventory in ``path``: one of the CSVs above, or the trace folder holding it."""
    path = inventory_file(path)
    rows: list[list[str]] = []
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            rows.extend(csv.reader(stream))
    except FileNotFoundError:
        raise InputError("no such file or directory", Position(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", Position(path)) from None
    except csv.Error as exc:
        raise InputError(f"not a CSV row gangplan can read ({exc})", Position(path, len(rows) + 1, 1)) from None
    trace = _format(path, rows)
    start = 1 if trace.header else 0
    columns = len(trace.header) if trace.header else _PAI_COLUMNS
    flavours: dict[tuple[int, int, int, str], Flavour] = {}
    specs: list[NodeSpec] = []
    seen: set[str] = set()
    named: dict[str, int] = {}  # a flavour's name -> the line that made it
    for line, row in enumerate(rows[start:], start=start + 1):
        if not any(cell.strip() for cell in row):
            continue
        where = Position(path, line, 1)
        if len(row) < columns:
            raise InputError(f"expected {columns} columns, got {len(row)}", where)
        try:
            shape = trace.row([cell.strip() for cell in row])
        except ValueError as exc:
            raise InputError(str(exc), where) from None
        if shape.cpu <= 0 or shape.memory <= 0 or shape.gpus < 0:
            raise InputError("expected positive CPU and memory, and GPUs >= 0", where)
        if problem := name_problem(shape.name):
            raise InputError(f"node name {json.dumps(shape.name)} is not a Kubernetes name ({problem})", where)
        if shape.name in seen:
            raise InputError(f"node {shape.name} is listed twice", where)
        seen.add(shape.name)
        model = shape.model if shape.gpus else ""
        key = (shape.cpu, shape.memory, shape.gpus, model)
        if (flavour := flavours.get(key)) is None:
            flavour = flavours[key] = Flavour(_flavour_name(trace, shape, model), shape.cpu, shape.memory, shape.gpus, model)
            # What generate would refuse later, said at the row that makes it.
            if (problem := flavour_problem(flavour)) is not None:
                raise InputError(f"flavour {flavour.instance_type!r}: {problem}", where)
            if (first := named.setdefault(flavour.instance_type, line)) != line:
                raise InputError(f"flavour {flavour.instance_type!r} is given two different shapes (line {first} and this one)", where)
        specs.append(NodeSpec(shape.name, flavour))
    return specs


def _format(path: str, rows: list[list[str]]) -> _Format:
    first = tuple(cell.strip() for cell in rows[0]) if rows else ()
    for trace in _FORMATS:
        if trace.header is not None and first[: len(trace.header)] == trace.header:
            return trace
    if os.path.basename(path).startswith("pai_machine_spec"):
        return _FORMATS[1]
    headers = "; ".join(",".join(f.header) for f in _FORMATS if f.header)
    raise InputError(
        f"not a node inventory: expected the header {headers}, or a pai_machine_spec.csv",
        Position(path, 1, 1),
    )


def _flavour_name(trace: _Format, shape: _Shape, model: str) -> str:
    kind = f"{model.lower()}x{shape.gpus}" if shape.gpus else "cpu"
    cores = f"{shape.cpu // 1000}" if shape.cpu % 1000 == 0 else f"{shape.cpu}m"
    memory = f"-{shape.memory // GI}g" if shape.memory % GI == 0 else f"-{shape.memory // MI}mi"
    return f"{trace.prefix}-{kind}-{cores}c{memory if trace.memory_in_name else ''}"

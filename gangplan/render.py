"""Renderings of a Plan as text, for stdout or a file. Pure: strings in, strings out.

The rich table lives in the CLI (the one module that draws on a terminal); everything here
is plain data that kubectl or another tool reads.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import re
from typing import Any

import yaml

from .errors import SolverError
from .kube import DNS_LABEL, LABEL_LIMIT, name_problem
from .model import Snapshot
from .plan import Plan, plan_to_dict
from .semantics import group_pods
from .verify import MINIMUM_RULES, verify

# Plain scalars that kubectl's YAML reader (go-yaml v2 under sigs.k8s.io/yaml) takes for a
# boolean, null or number where PyYAML's YAML 1.1 resolver sees a string: "y", "1e3", "0o17".
_GO_YAML_NOT_STRING = re.compile(
    r"y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|~|null|Null|NULL|<<"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9][0-9_]*)"
)


class _Dumper(yaml.SafeDumper):
    """PyYAML's own emitter, not libyaml's, so the bytes do not depend on how PyYAML was
    built (libyaml escapes characters beyond the BMP); strings kubectl would read back as
    something else are quoted."""


def _kubectl_reads_otherwise(text: str) -> bool:
    # go-yaml drops every "_" before it tries a number: "1_0e5" is 1000000 to kubectl.
    return bool(_GO_YAML_NOT_STRING.fullmatch(text) or ("_" in text and _GO_YAML_NOT_STRING.fullmatch(text.replace("_", ""))))


# YAML 1.1 readers (PyYAML, go-yaml) fold these as line breaks unless they are escaped, which
# only double quotes do: PyYAML would write them raw inside single quotes.
_UNICODE_BREAKS = re.compile("[\x85\u2028\u2029]")


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    if _UNICODE_BREAKS.search(text):
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
    if _kubectl_reads_otherwise(text):
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="'")
    return dumper.represent_str(text)


_Dumper.add_representer(str, _represent_str)


def held_back(plan: Plan, snapshot: Snapshot | None) -> frozenset[str]:
    """The placed pods the List leaves unbound: those behind Kueue's gate (the API server binds
    no gated pod), and with them every pod of a JobGroup the rest would start short of a
    minimum (minMember, a task's minTaskMember, minResources), as the verifier judges the
    List: Bindings skip the scheduler's gang check, and the List gangplan writes is one its
    own verify accepts. Without the snapshot, only the gated pods."""
    gated = frozenset(p.pod for p in plan.placements if p.gated)
    if not gated or snapshot is None:
        return gated
    placed = {p.pod for p in plan.placements}
    # A group's key -> the placed pods of its JobGroup; a key a bare pod or a Kueue pod group
    # shares with a PodGroup is the PodGroup's, as the verifier names it.
    implicit: dict[str, set[str]] = {}
    pods_of: dict[str, set[str]] = {}
    for job_group in group_pods(snapshot).job_groups:
        mine = {pod.key for gang in job_group.gangs for pod in gang.pending if pod.key in placed}
        for gang in job_group.gangs:
            (implicit if gang.implicit else pods_of)[gang.key] = mine
    pods_of = {**implicit, **pods_of}
    held = set(gated)
    levels = plan.topology_levels()
    while True:
        bound = [p for p in plan.placements if p.pod not in held]
        short = {v.subject for v in verify(snapshot, bound, levels).violations if v.rule in MINIMUM_RULES}
        more = set().union(*(pods_of.get(key, set()) for key in short)) - held
        if not more:
            return frozenset(held)
        held |= more


def bindings_list(plan: Plan, snapshot: Snapshot | None = None, held: frozenset[str] | None = None) -> dict[str, Any]:
    """A v1 List of v1 Bindings, as kube-scheduler's binder would create them.

    Pods that do not exist yet (Gang, Volcano Job, --gang) come as v1 Pods with spec.nodeName;
    such a pod behind a scheduling gate comes as given, unbound (the API server refuses a
    nodeName beside a gate), so that applying the list still creates the whole workload.
    """
    items = []
    held = held_back(plan, snapshot) if held is None else held
    for p in plan.placements:
        if p.manifest is not None:
            pod = copy.deepcopy(dict(p.manifest))
            if p.pod not in held:
                pod["spec"] = {**pod.get("spec", {}), "nodeName": p.node}
            items.append(pod)
            continue
        if p.pod in held:
            continue  # gated, or its gang's quorum needs a gated pod: the plan's warning says so
        metadata: dict[str, Any] = {"name": p.name, "namespace": p.namespace}
        if p.uid:
            metadata["uid"] = p.uid
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": metadata,
                "target": {"apiVersion": "v1", "kind": "Node", "name": p.node},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def _valid(value: object, *rule: Any) -> bool:
    return type(value) is str and name_problem(value, *rule) is None


def check_output_names(plan: Plan, snapshot: Snapshot | None = None) -> None:
    """Defensive: every name a binding or a pod carries is a Kubernetes name, taken from the input.

    The loader refuses invalid names, so this never fails on any input; if it does, gangplan
    itself is wrong, and writing nothing (SolverError, exit 3) is the only safe answer.
    """
    pending: dict[tuple[str, str], Any] = {}
    nodes: set[str] = set()
    if snapshot is not None:
        pending = {(p.namespace, p.name): p for p in snapshot.pods if p.node_name is None}
        nodes = {n.name for n in snapshot.nodes}
    for p in plan.placements:
        if not (
            _valid(p.name)
            and _valid(p.namespace, LABEL_LIMIT, DNS_LABEL)
            and _valid(p.node)
        ):
            names = json.dumps([p.namespace, p.name, p.node])
            raise SolverError(f"refusing to write a binding with an invalid name: {names}")
        if snapshot is not None:
            pod = pending.get((p.namespace, p.name))
            if pod is None or p.node not in nodes or (p.uid or None) != (pod.uid or None):
                raise SolverError(
                    f"refusing to write a binding that is not from the input: {p.pod} -> {p.node}"
                )
            if p.manifest is not None and p.manifest != pod.manifest:
                raise SolverError(f"refusing to write pod {p.pod}: it is not the input's pod")
        if p.manifest is not None:
            meta = p.manifest.get("metadata")
            if (
                not isinstance(meta, dict)
                or meta.get("name") != p.name
                or (meta.get("namespace") or "default") != p.namespace
            ):
                raise SolverError(f"refusing to write pod {p.pod}: its manifest names another pod")


def to_json(data: Any) -> str:
    return json.dumps(data, indent=4, sort_keys=True, ensure_ascii=False) + "\n"


def to_yaml(data: Any) -> str:
    """PyYAML's block YAML, byte for byte. Its Python emitter takes about 10 µs a node: 7 s of
    ``generate -o yaml`` at 2,048 nodes, 2 s of ``plan -o yaml`` at 8,192. Data made only of
    mappings with string keys, lists, integers, booleans, null and printable strings that
    PyYAML writes plain or single-quoted is written here directly: each distinct string's
    style is PyYAML's own, and a long one is folded at its spaces as PyYAML's emitter folds it
    (``_folded``). Anything else (floats, line breaks, double quotes, a list or mapping met
    twice, which PyYAML would anchor) goes to PyYAML."""
    fast = _block_yaml(data)
    return fast if fast is not None else yaml.dump(data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False)


class _NotSimple(Exception):
    """Data ``_block_yaml`` leaves to PyYAML."""


_WIDTH = 80  # PyYAML's default best_width
_KEY_LIMIT = 100  # below PyYAML's 128 characters for a simple key


def _block_yaml(data: Any) -> str | None:
    if type(data) not in (dict, list) or not data:
        return None
    out: list[str] = []
    try:
        _write_block(data, 0, False, out, set())
    except _NotSimple:
        return None
    return "".join(out)


def _write_block(node: dict[str, Any] | list[Any], indent: int, continues: bool, out: list[str], seen: set[int]) -> None:
    """A non-empty mapping or list whose keys or dashes stand at column ``indent``, its first
    line after a "- " already written when ``continues``. Lists in a mapping are not indented,
    as PyYAML writes them; a scalar's folded lines are indented two more."""
    _once(node, seen)
    pad = " " * indent
    first = True
    if type(node) is dict:
        if any(type(key) is not str for key in node):
            raise _NotSimple
        for key in sorted(node):
            written = _styled(key)
            if not key or len(written[1]) >= _KEY_LIMIT:  # PyYAML writes these as "? key"
                raise _NotSimple
            head = ("" if first and continues else pad) + written[1] + ":"
            first = False
            value = node[key]
            kind = type(value)
            if (kind is dict or kind is list) and value:
                out.append(head + "\n")
                _write_block(value, indent + 2 if kind is dict else indent, False, out, seen)
            else:
                if kind is dict or kind is list:
                    _once(value, seen)
                out.append(f"{head} {_scalar(value, indent + len(written[1]) + 2, indent + 2)}\n")
    else:
        item: Any
        for item in node:
            head = ("" if first and continues else pad) + "- "
            first = False
            kind = type(item)
            if (kind is dict or kind is list) and item:
                out.append(head)
                _write_block(item, indent + 2, True, out, seen)
            else:
                if kind is dict or kind is list:
                    _once(item, seen)
                out.append(f"{head}{_scalar(item, indent + 2, indent + 2)}\n")


def _once(node: dict[str, Any] | list[Any], seen: set[int]) -> None:
    """A list or mapping met twice (empty ones too) is one PyYAML writes with an anchor and an alias."""
    if id(node) in seen:
        raise _NotSimple
    seen.add(id(node))


def _scalar(value: Any, column: int, indent: int) -> str:
    """``value`` as PyYAML writes it starting at ``column``, folded lines at ``indent``."""
    kind = type(value)
    if kind is str:
        style, written = _styled(value)
        if column + len(written) <= _WIDTH or " " not in value:
            return written
        return _folded(value, style, column, indent)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if kind is dict or kind is list:  # empty
        return "{}" if kind is dict else "[]"
    raise _NotSimple


# Names, uids, images, quantities: nothing in them that PyYAML's emitter would quote, so such a
# string is written plain unless a reader would take it for something else (``_styled``).
_PLAIN_CHARACTERS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")


@functools.lru_cache(maxsize=1 << 16)
def _styled(text: str) -> tuple[str, str]:
    """PyYAML's style for ``text`` ("" plain or "'") and the text so written on one line: the
    style does not depend on where the scalar stands, only the folding does."""
    if _PLAIN_CHARACTERS.fullmatch(text) and not _kubectl_reads_otherwise(text) and _reads_as_str(text):
        return "", text  # what yaml.dump gives, without its 50 µs (XL's uids and names)
    if not text.isprintable():  # line breaks among them
        raise _NotSimple
    written = yaml.dump(text, Dumper=_Dumper, allow_unicode=True, width=1 << 30)
    written = written.removesuffix("\n...\n") if written.endswith("\n...\n") else written.removesuffix("\n")
    if "\n" in written or written.startswith('"'):  # double quotes may break anywhere
        raise _NotSimple
    return ("'" if written.startswith("'") else ""), written


def _reads_as_str(text: str) -> bool:
    """Whether PyYAML's own resolver reads ``text`` written plain as a string (not 1.5, yes,
    2024-06-13 or null): the serializer's test for writing it plain."""
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"


_RESOLVER = _Dumper(io.StringIO())  # only its resolver is used


@functools.lru_cache(maxsize=1 << 12)
def _folded(text: str, style: str, column: int, indent: int) -> str:
    """PyYAML's Emitter.write_plain and write_single_quoted on text without line breaks: a
    single space past the width becomes a line break and ``indent`` spaces (a single-quoted
    scalar's first and last characters never do); each "'" inside single quotes is doubled."""
    quoted = style == "'"
    parts = ["'"] if quoted else []
    column += len(parts)
    start = end = 0
    spaces = False
    while end <= len(text):
        ch = text[end] if end < len(text) else None
        if spaces:
            if ch != " ":
                if start + 1 == end and column > _WIDTH and (not quoted or (start != 0 and end != len(text))):
                    parts.append("\n" + " " * indent)
                    column = indent
                else:
                    parts.append(text[start:end])
                    column += end - start
                start = end
        elif ch is None or ch == " " or (quoted and ch == "'"):
            if start < end:
                parts.append(text[start:end])
                column += end - start
                start = end
        if quoted and ch == "'":
            parts.append("''")
            column += 2
            start = end + 1
        if ch is not None:
            spaces = ch == " "
        end += 1
    return "".join(parts) + ("'" if quoted else "")


def render(plan: Plan, output: str, *, snapshot: Snapshot | None = None, held: frozenset[str] | None = None) -> str:
    """Every non-table output format; bindings and pods only after ``check_output_names``.
    ``held``: ``held_back``'s answer, when the caller has it already (it runs the verifier)."""
    if output in ("json", "yaml", "name", "plan"):
        check_output_names(plan, snapshot)
    if output in ("json", "yaml", "name") and held is None:
        held = held_back(plan, snapshot)
    if output == "json":
        return to_json(bindings_list(plan, snapshot, held))
    if output == "yaml":
        return to_yaml(bindings_list(plan, snapshot, held))
    if output == "name":
        assert held is not None
        return "".join(
            f"{'pod' if p.manifest is not None else 'binding'}/{p.name}\n"
            for p in plan.placements if p.manifest is not None or p.pod not in held
        )
    if output == "plan":
        return to_json(plan_to_dict(plan))
    raise ValueError(f"unknown output {output!r}")

"""What `gangplan check` reports where CI looks: GitHub Actions workflow commands on the
lines that wrote each group, JUnit XML for test reporters, and which groups a pull request's
files write. Plain strings and ElementTree, no terminal: the CLI only picks one and writes it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence
from xml.etree import ElementTree

from .errors import Position, one_line
from .loader import STDIN, locate_all
from .model import Origin
from .plan import GroupId, GroupOutcome, Plan, SolverReport, group_id, group_name, shared_keys
from .semantics import Grouping

__all__ = [
    "GroupId",
    "annotation",
    "check_report",
    "checked_groups",
    "escape_data",
    "from_workspace",
    "github_annotation",
    "group_id",
    "group_positions",
    "junit_error",
    "junit_report",
    "made_in",
    "warning_annotation",
    "written_in",
]

def _names(groups: Iterable[GroupOutcome]) -> dict[GroupId, str]:
    """The name each group goes by in check's output, as in plan's table and diff: a bare pod
    or a Kueue pod group with a PodGroup's name in its namespace says its kind (`ns/name (pod)`).
    Check selects, annotates and judges each by its (kind, key)."""
    ids = [group_id(g) for g in groups]
    shared = shared_keys(ids)
    return {gid: group_name(gid, shared) for gid in ids}


def checked_groups(
    result: Plan, grouping: Grouping, origins: Mapping[GroupId, Origin], named: Sequence[str], groups_from: Sequence[str],
    *, chosen: bool,
) -> list[GroupOutcome]:
    """The groups `check` answers for. Those ``named`` (--group), then those written in
    ``groups_from``'s files (``origins``: group_origins), when either is ``chosen``; else
    every group with something waiting, gated members too: a gang made only of them fails,
    with why, and so does a PodGroup manifest given without the pods to place."""
    if not chosen:
        return [g for g in result.groups if g.waiting]
    written = written_in(groups_from, origins, made_in(grouping))
    # A name asked (--group) is the PodGroup where a bare pod has its name too (Plan.by_key); a
    # group written there is taken by its kind as well: a pull request's bare Pod named like the
    # cluster's PodGroup is checked, and the PodGroup, not the pull request's, is not.
    by_key = result.by_key()
    found = {group_id(by_key[key]): by_key[key] for key in named}
    for g in result.groups:
        if group_id(g) in written:
            found.setdefault(group_id(g), g)
    return list(found.values())


def check_report(
    format: str, selected: Sequence[GroupOutcome], result: Plan, origins: Mapping[GroupId, Origin], unread: str,
    with_junit: bool,
) -> tuple[str, str | None]:
    """What `check` prints in ``format`` (text, github or junit), and the JUnit report when
    ``with_junit`` asks for one as well. Lines are looked up only for the groups a report
    shows, in one read of each file."""
    failed = [g for g in selected if not g.placed]
    names = _names(result.groups)
    with_junit = with_junit or format == "junit"
    shown = selected if with_junit else failed if format == "github" else []
    where = group_positions(origins, (group_id(g) for g in shown))
    report = junit_report(list(selected), where, result.solver, unread, result.warnings, names) if with_junit else None
    if format == "junit":
        assert report is not None
        return report, report
    if format == "github":
        # A gate that passes on a stale snapshot should say so where reviewers look.
        text = "".join(warning_annotation("gangplan check", w) for w in [unread, *result.warnings] if w)
        return text + "".join(github_annotation(g, where.get(group_id(g)), names.get(group_id(g))) for g in failed), report
    text = "".join(f"FAIL {names.get(group_id(g), g.key)}: {g.reason}\n" for g in failed)
    return text + f"{len(selected) - len(failed)}/{len(selected)} groups placed\n", report


def group_origins(grouping: Grouping, groups_from: Sequence[str] = ()) -> dict[GroupId, Origin]:
    """Where each group was written, by (kind, key): its PodGroup object, or its first pod for
    implicit groups (a bare pod named like a PodGroup has its own); for a group a workload in
    ``groups_from`` joins (a pull request's Job joining a PodGroup the cluster has), that
    workload, which is where a reviewer wants the annotation."""
    inside = _under(groups_from)
    origins = {}
    for job_group in grouping.job_groups:
        for gang in job_group.gangs:
            origin = gang.group.origin
            if groups_from and not inside(origin.file):
                joining = [pod for pod in (*gang.pending, *gang.blocked) if inside(pod.origin.file)]
                origin = min(joining, key=lambda pod: pod.name).origin if joining else origin  # not by dump order
            origins[group_id(gang)] = origin
    return origins


def group_positions(origins: Mapping[GroupId, Origin], ids: Iterable[GroupId]) -> dict[GroupId, Position]:
    """The file, line and column of the groups ``ids`` names, found together: locating each
    one alone composed a big dump into nodes (33 s at L)."""
    chosen = [gid for gid in dict.fromkeys(ids) if gid in origins]
    return dict(zip(chosen, locate_all([(origins[gid], ()) for gid in chosen])))


def made_in(grouping: Grouping) -> dict[GroupId, list[str]]:
    """The files that write each group's pods to place, or the workloads making them: a job
    folder's Job, or Pods, joining a PodGroup the cluster already has is that group's change.
    By (kind, key): a bare Pod named like a PodGroup makes its own group, not the PodGroup's."""
    made: dict[GroupId, list[str]] = {}
    for job_group in grouping.job_groups:
        for gang in job_group.gangs:
            if found := sorted({pod.origin.file for pod in (*gang.pending, *gang.blocked)}):
                made[group_id(gang)] = found
    return made


def escape_data(text: str) -> str:
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(g: GroupOutcome, position: Optional[Position], name: Optional[str] = None) -> str:
    """A GitHub Actions workflow command that marks the PodGroup's document in the diff;
    ``name`` the group goes by, its key unless a PodGroup shares it (`ns/name (pod)`)."""
    return annotation(f"{name or g.key} cannot be placed", position, g.reason or "not placed")


def from_workspace(file: str) -> str:
    """A path as GitHub's runner reads ``file=`` (and JUnit reporters a test case's file):
    relative to the repository root ($GITHUB_WORKSPACE), whatever folder the step runs in; as
    given outside a workflow."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if not workspace:
        return file
    try:
        return Path(file).resolve().relative_to(Path(workspace).resolve()).as_posix()
    except ValueError:
        return file


def annotation(title: str, position: Optional[Position], message: str) -> str:
    properties = [f"title={_escape_property(title)}"]
    if position is not None and position.file not in ("-", "<stdin>"):
        properties.insert(0, f"file={_escape_property(from_workspace(position.file))}")
        if position.line is not None:
            properties.insert(1, f"line={position.line}")
            properties.insert(2, f"col={position.column or 1}")
    return f"::error {','.join(properties)}::{escape_data(message)}\n"


def _under(paths: Sequence[str]) -> Callable[[str], bool]:
    """Whether a file is one of ``paths`` or under one of them."""
    roots = [Path(p).resolve() for p in paths]

    def inside(name: str) -> bool:
        if name in ("-", STDIN):
            return False
        file = Path(name).resolve()
        return any(file == root or root in file.parents for root in roots)

    return inside


def written_in(
    paths: Sequence[str], origins: Mapping[GroupId, Origin], made: Mapping[GroupId, Sequence[str]] = {}
) -> set[GroupId]:
    """The groups, by (kind, key), whose object (or first pod), or a workload making their
    pods, is written in one of ``paths`` or under it."""
    inside = _under(paths)
    return {key for key, origin in origins.items() if inside(origin.file)} | {
        key for key, files in made.items() if any(map(inside, files))
    }


def junit_report(
    groups: list[GroupOutcome], where: Mapping[GroupId, Position], solver: SolverReport, skipped: str = "",
    warnings: Sequence[str] = (), names: Mapping[GroupId, str] = {},
) -> str:
    """One JUnit test case per group, failed when the group is not placed; the solver's
    status and gap as properties, since which groups fail can depend on the time limit. An
    empty selection is one skipped case that says why. A case is named as ``names`` has the
    group (`ns/name (pod)` beside a PodGroup of that name), else by its key."""
    # The deterministic time, not the wall time: the same input gives the same report.
    seconds = solver.deterministic_time if solver.workers <= 1 else solver.wall_time
    suite = ElementTree.Element(
        "testsuite",
        name="gangplan check",
        tests=str(len(groups) or (1 if skipped else 0)),
        failures=str(sum(1 for g in groups if not g.placed)),
        errors="0",
        time=f"{seconds:.3f}",
    )
    if skipped:
        suite.set("skipped", "1")
    properties = ElementTree.SubElement(suite, "properties")
    shown = {
        "solver": solver.solver,
        "policy": solver.policy,
        "status": solver.status,
        "gap": "" if solver.gap is None else f"{solver.gap:.2%}",
        "timeLimit": f"{solver.time_limit:g}",
    }
    for name, value in shown.items():
        ElementTree.SubElement(properties, "property", name=name, value=value)
    if skipped:
        case = ElementTree.SubElement(suite, "testcase", classname="gangplan", name="selection", time="0")
        ElementTree.SubElement(case, "skipped", message=skipped)
    for g in groups:
        name = names.get(group_id(g), g.key)
        case = _case(suite, g.key.split("/", 1)[0], name, where.get(group_id(g)))
        if not g.placed:
            failure = ElementTree.SubElement(case, "failure", message=g.reason or "not placed", type="Unplaced")
            failure.text = f"{name}: {g.counted + g.scheduled}/{g.min_member} pods; {g.reason}"
    if warnings:
        ElementTree.SubElement(suite, "system-err").text = "".join(f"warning: {w}\n" for w in warnings)
    return _xml_document(suite)


def _case(suite: ElementTree.Element, classname: str, name: str, position: Optional[Position]) -> ElementTree.Element:
    """A test case that names the file and line the group (or the bad input) was written at."""
    if position is not None and position.file in ("-", STDIN):
        position = None  # standard input has no file, as in annotations
    case = ElementTree.SubElement(
        suite, "testcase", classname=classname, name=name, time="0", file=from_workspace(position.file) if position else ""
    )
    if position is not None and position.line is not None:
        case.set("line", str(position.line))
    return case


def _xml_document(root: ElementTree.Element) -> str:
    """The report as text; input quoted in it is escaped as on stderr, line by line (ElementTree
    writes a control character as it is, and XML 1.0 cannot hold one: reporters refuse the file)."""
    for element in root.iter():
        element.attrib = {name: one_line(value) for name, value in element.attrib.items()}
        if element.text:
            element.text = "\n".join(map(one_line, element.text.split("\n")))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def warning_annotation(title: str, message: str) -> str:
    """A GitHub Actions warning with no place: a gate that passes on a stale snapshot should
    say so where reviewers look."""
    return f"::warning title={_escape_property(title)}::{escape_data(message)}\n"


def junit_error(message: str, kind: str, position: Optional[Position]) -> str:
    """A JUnit report of one errored case (bad input, or a bad option when ``position`` is
    None), so the report step of a failed CI job still has a file to read."""
    suite = ElementTree.Element("testsuite", name="gangplan check", tests="1", failures="0", errors="1", time="0.000")
    case = _case(suite, "gangplan", "input" if position else "usage", position)
    error = ElementTree.SubElement(case, "error", message=message, type=kind)
    error.text = message
    return _xml_document(suite)

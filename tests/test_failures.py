"""Failure modes, end to end: the solver finding nothing better than greedy in time, bad
time limits, every group unplaceable, the solver failing or running out of memory, Ctrl-C
(in process and with a real SIGINT in the middle of a CP-SAT solve), and output safety:
only valid Kubernetes names taken from the input reach bindings and pods, and output files
are written whole or not at all."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import stat
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

import gangplan.aggregate as aggregate
import gangplan.cli as cli
import gangplan.cpsat as cpsat
import gangplan.planner as planner
from gangplan.cli import app
from gangplan.errors import OutputError, SolverError
from gangplan.generate import generate
from gangplan.loader import load_snapshot
from gangplan.model import Snapshot
from gangplan.objective import Assignment
from gangplan.plan import Placement, Plan
from gangplan.planner import Options, plan
from gangplan.problem import build_problem, candidate_count
from gangplan.render import check_output_names, render
from gangplan.stages import SolveResult
from gangplan.verify import verify

from spies import altered

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "snapshots" / "small.yaml"
GPU_CLUSTER = ROOT / "snapshots" / "gpu-cluster.yaml"
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
runner = CliRunner()


def invoke(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def only_error(result: Result, code: int, phrase: str = "") -> str:
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("error: ") and phrase in last, result.stderr
    assert sum(line.startswith("error:") for line in result.stderr.splitlines()) == 1
    return last


def no_files_but(directory: Path, *names: str) -> None:
    assert sorted(p.name for p in directory.iterdir()) == sorted(names)


# ---------------------------------------------------------------- the solver runs out of time


def test_a_tiny_time_limit_falls_back_to_greedy_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = invoke("plan", str(GPU_CLUSTER), "--time-limit", "0.001", "-o", "plan", "--output-file", str(out))
    assert result.exit_code == 0, result.stderr
    solver = json.loads(out.read_text())["solver"]
    assert solver["status"] == "GREEDY" and solver["chosen"] == "greedy"
    # 1 ms is less than the deterministic charge for building the problem and greedy; the note
    # says what limit would leave the solver time, and a limit just past it does.
    used_up = "building the problem and the greedy plan used up the time limit; the greedy plan is used"
    assert solver["note"].startswith(used_up + " (the solver gets what a --time-limit leaves beyond ")
    assert "cp-sat GREEDY" in result.stderr and f"note: {solver['note']}" in result.stderr
    limit_named = re.search(r"beyond ([0-9.e-]+) s here\)$", solver["note"])
    assert limit_named is not None
    beyond = float(limit_named.group(1))
    retried = tmp_path / "retried.json"
    for limit, solved in ((beyond * 0.9, False), (beyond * 1.1, True)):
        again = invoke("plan", str(GPU_CLUSTER), "--time-limit", str(limit), "-o", "plan", "--output-file", str(retried))
        assert again.exit_code == 0, again.stderr
        assert (used_up not in json.loads(retried.read_text())["solver"]["note"]) == solved, (limit, again.stderr)
    check = invoke("verify", str(GPU_CLUSTER), "--plan", str(out))
    assert check.exit_code == 0, check.stdout


def test_the_solver_is_charged_the_work_around_it_by_estimate_or_by_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """README, "Deterministic and parallel modes": one worker's deterministic limit is charged
    1.5 µs per (pod group, candidate node) pair, from the input alone; `--workers 2`'s
    wall-clock limit covers the whole plan, so what building the problem and greedy took comes
    off CP-SAT's share, and so does the estimate of what follows it (0.9 µs a pair). Here the
    planner's clock moves a second at each reading: at least that second comes off."""
    snapshot = load_snapshot([str(SMALL)])
    pairs = candidate_count(build_problem(snapshot))
    limits: list[float] = []
    solve = cpsat.solve_cpsat

    def spy(*args: Any, **kwargs: Any) -> SolveResult[Assignment]:
        limits.append(kwargs["time_limit"])
        return solve(*args, **kwargs)

    monkeypatch.setattr(cpsat, "solve_cpsat", spy)
    ticks = itertools.count()
    monkeypatch.setattr(planner, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    one = plan(snapshot, Options(time_limit=10))
    assert limits == [10 - pairs * 1.5e-6] and not verify(snapshot, one.placements, one.topology_levels()).violations
    two = plan(snapshot, Options(time_limit=10, workers=2))
    assert len(limits) == 2 and 0 < limits[1] <= 10 - 1 - pairs * 0.9e-6, limits
    assert one.solver.time_limit == two.solver.time_limit == 10
    assert not verify(snapshot, two.placements, two.topology_levels()).violations


def test_the_limit_the_used_up_note_names_leaves_the_solver_time_just_past_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The note says the solver gets what a `--time-limit` leaves beyond the seconds it names,
    so those are the charge rounded up, never down: a limit just past them leaves the solver
    time, and one of the charge itself leaves it none (README: the charge alone meets the
    limit). The charge per pair is raised here so that the small snapshot is charged 2.3 s."""
    snapshot = load_snapshot([str(SMALL)])
    pairs = candidate_count(build_problem(snapshot))
    monkeypatch.setattr(planner, "SECONDS_PER_CANDIDATE", 2.3 / pairs)
    charge = pairs * planner.SECONDS_PER_CANDIDATE
    used_up = "building the problem and the greedy plan used up the time limit"
    noted = plan(snapshot, Options(time_limit=1.0))
    named = re.search(r"beyond ([0-9.e-]+) s here\)$", noted.solver.note)
    assert used_up in noted.solver.note and named is not None and noted.solver.status == "GREEDY"
    assert float(named.group(1)) >= charge
    assert used_up in plan(snapshot, Options(time_limit=charge)).solver.note
    past = plan(snapshot, Options(time_limit=float(named.group(1)) + 0.01))
    assert used_up not in past.solver.note
    assert verify(snapshot, past.placements, past.topology_levels()).ok


@pytest.mark.parametrize(
    "solved",
    [SolveResult(None, "UNKNOWN"), SolveResult(Assignment({}, frozenset()), "OPTIMAL")],
    ids=["nothing-in-time", "worse-than-greedy"],
)
def test_when_cp_sat_has_nothing_better_the_greedy_plan_is_used(
    monkeypatch: pytest.MonkeyPatch, solved: SolveResult[Assignment]
) -> None:
    """No solution in time, or (a solver bug) one worse than greedy's: the greedy plan is
    used, and the status says GREEDY, not FEASIBLE or OPTIMAL."""
    snapshot = load_snapshot([str(SMALL)])
    greedy_only = plan(snapshot, Options(solver="greedy"))
    monkeypatch.setattr(cpsat, "solve_cpsat", lambda *a, **k: solved)
    result = plan(snapshot, Options())
    assert result.solver.status == "GREEDY" and result.solver.chosen == "greedy"
    assert "greedy plan is used" in result.solver.note
    assert result.placements == greedy_only.placements



def test_a_scale_plan_left_as_greedys_says_a_longer_limit_may_do_better(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the bucket path the note named the model and no more: `cp-sat GREEDY` at 8,192 nodes
    and the default 10 s read like a plan CP-SAT chose. Where greedy's plan is not proven
    optimal on objective 1, the note now says it is used and what to try, as the node-level
    path says; where it is proven, there is nothing to try."""
    snapshot = load_snapshot([str(SMALL)])
    nothing_in_time = altered(
        aggregate.solve_buckets, lambda found: dataclasses.replace(found, solve=SolveResult(None, "UNKNOWN"), upper=[])
    )
    monkeypatch.setattr(aggregate, "solve_buckets", nothing_in_time)
    proven = plan(snapshot, Options(model="buckets"))
    assert proven.solver.status == "GREEDY" and proven.solver.gap == 0.0
    assert planner.NOTHING_BETTER not in proven.solver.note
    monkeypatch.setattr(planner, "_bucket_proof", lambda *args: (set(), 0.25, None))
    unproven = plan(snapshot, Options(model="buckets"))
    assert unproven.solver.status == "GREEDY" and unproven.solver.note.endswith(planner.NOTHING_BETTER)
    assert "--time-limit" in planner.NOTHING_BETTER and unproven.placements == proven.placements


@pytest.mark.broken_plan_expected
def test_a_solver_plan_that_breaks_a_rule_is_replaced_by_greedys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner checks its plan with the independent verifier before it answers: a solver
    plan that breaks a rule (here every pending pod crammed onto one node, more than it holds)
    is a bug, said so in a warning, and the greedy plan, which keeps the rules, is used."""
    snapshot = load_snapshot([str(SMALL)])
    greedy_only = plan(snapshot, Options(solver="greedy"))
    problem = planner.build_problem(snapshot)
    crammed = {(r, int(role.nodes[0])): role.count for r, role in enumerate(problem.roles) if len(role.nodes)}
    every = frozenset(range(len(problem.job_groups)))
    monkeypatch.setattr(cpsat, "solve_cpsat", lambda *a, **k: SolveResult(Assignment(crammed, every), "OPTIMAL"))
    result = plan(snapshot, Options())
    assert result.solver.status == "GREEDY" and result.solver.chosen == "greedy"
    assert result.placements == greedy_only.placements
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    (warning,) = [w for w in result.warnings if "breaks a rule" in w]
    assert warning.startswith("the cp-sat plan breaks a rule (capacity") and "bug in gangplan" in warning
    assert all(o.bound is None for o in result.solver.objective) and result.solver.gap is None


@pytest.mark.broken_plan_expected
@pytest.mark.parametrize("solver", ["greedy", "cp-sat"])
def test_a_plan_that_breaks_a_rule_with_nothing_to_fall_back_on_stops_the_run(monkeypatch: pytest.MonkeyPatch, solver: str) -> None:
    """Greedy's own plan breaking a rule leaves no plan to answer with: exit 3, one line, no
    output (rather than bindings that break the rule); README: "if greedy's own plan breaks one
    the run stops", also when it is the fallback for a solver plan that breaks one too."""
    problem = planner.build_problem(load_snapshot([str(SMALL)]))
    crammed = {(r, int(role.nodes[0])): role.count for r, role in enumerate(problem.roles) if len(role.nodes)}
    every = frozenset(range(len(problem.job_groups)))
    monkeypatch.setattr(planner, "greedy", lambda *a, **k: Assignment(crammed, every))
    monkeypatch.setattr(cpsat, "solve_cpsat", lambda *a, **k: SolveResult(Assignment(dict(crammed), every), "OPTIMAL"))
    result = invoke("plan", str(SMALL), "--solver", solver)
    only_error(result, 3, "error: the plan breaks a rule (capacity")
    assert result.stdout == ""

@pytest.mark.parametrize("command", ["plan", "check", "explain"])
@pytest.mark.parametrize("limit", ["0", "-1", "-0.001", "nan", "-inf"])
def test_a_time_limit_that_is_not_positive_is_a_usage_error(command: str, limit: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["explain", "ml/pytorch-ddp", str(SMALL)] if command == "explain" else [command, str(SMALL)]
    extra = ["--output-file", str(out)] if command != "explain" else []
    result = invoke(*args, *extra, "--time-limit", limit)
    line = only_error(result, 2, "--time-limit must be a positive number of seconds")
    assert len(result.stderr.splitlines()) == 1, line  # refused before the snapshot is read
    no_files_but(tmp_path)


# ---------------------------------------------------------------- nothing fits


UNPLACEABLE = """\
apiVersion: v1
kind: Node
metadata: {name: small-node}
status: {allocatable: {cpu: "2", nvidia.com/gpu: "1"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: big, namespace: ml}
spec: {minMember: 2}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: big-0, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: big}}, spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: big-1, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: big}}, spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: hungry, namespace: ml}, spec: {containers: [{name: c, resources: {requests: {cpu: "3"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: picky, namespace: ml}, spec: {nodeSelector: {pool: gpu}, containers: [{name: c}]}}
"""


@pytest.mark.parametrize("solver,policy", [("cp-sat", "optimal"), ("greedy", "optimal"), ("cp-sat", "ordered")])
def test_every_group_unplaceable(tmp_path: Path, solver: str, policy: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(UNPLACEABLE)
    options = ["--solver", solver, "--policy", policy]
    result = invoke("plan", str(path), "-o", "plan", *options)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["placements"] == [] and "groups placed 0/3" in result.stderr
    reasons = {g["name"]: g["reason"] for g in data["groups"]}
    assert not any(g["placed"] for g in data["groups"])
    assert "insufficient nvidia.com/gpu" in reasons["ml/big"]
    assert "cpu" in reasons["ml/hungry"] and "nodeSelector" in reasons["ml/picky"]
    bindings = invoke("plan", str(path), "-o", "json", *options)
    assert bindings.exit_code == 0 and json.loads(bindings.stdout)["items"] == []
    check = invoke("check", str(path), *options)
    assert check.exit_code == 1
    assert check.stdout.count("FAIL ") == 3 and check.stdout.endswith("0/3 groups placed\n")
    assert all(f"FAIL {key}: {reason}" in check.stdout for key, reason in reasons.items())
    junit = invoke("check", str(path), "--format", "junit", *options)
    assert junit.exit_code == 1 and 'failures="3"' in junit.stdout


@pytest.mark.parametrize("solver,policy", [("cp-sat", "optimal"), ("greedy", "optimal"), ("greedy", "ordered")])
def test_a_snapshot_without_nodes_leaves_every_group_unplaced(tmp_path: Path, solver: str, policy: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(UNPLACEABLE.split("---\n", 1)[1])  # the same groups, and no node at all
    result = invoke("plan", str(path), "-o", "plan", "--solver", solver, "--policy", policy)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["placements"] == [] and not any(g["placed"] for g in data["groups"])
    assert all(g["reason"] for g in data["groups"])
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: only}\n")
    nothing = invoke("plan", str(path), "-o", "json", "--solver", solver, "--policy", policy)
    assert nothing.exit_code == 0 and json.loads(nothing.stdout)["items"] == []


# ---------------------------------------------------------------- the solver or gangplan fails


def _existing_output(tmp_path: Path) -> Path:
    out = tmp_path / "out.json"
    out.write_text("the previous plan\n")
    return out


@pytest.mark.parametrize(
    "error,code,phrase",
    [
        (SolverError("CP-SAT returned MODEL_INVALID on a model whose hint is feasible; this is a bug"), 3, "MODEL_INVALID"),
        (MemoryError(), 3, "out of memory"),
        (RuntimeError("boom"), 3, "internal error: RuntimeError: boom"),
        (KeyboardInterrupt(), 130, ""),
    ],
    ids=["solver-error", "out-of-memory", "bug", "ctrl-c"],
)
def test_a_failing_planner_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: BaseException, code: int, phrase: str
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(cli, "make_plan", fail)
    out = _existing_output(tmp_path)
    report = tmp_path / "report.html"
    result = invoke("plan", str(SMALL), "-o", "json", "--output-file", str(out), "--report", str(report))
    if code == 130:
        assert result.exit_code == 130 and result.stderr.endswith("interrupted\n")
    else:
        only_error(result, code, phrase)
    assert result.stdout == ""
    assert out.read_text() == "the previous plan\n"
    no_files_but(tmp_path, "out.json")


def test_the_solver_failing_inside_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise SolverError("CP-SAT returned MODEL_INVALID on a model whose hint is feasible; this is a bug")

    monkeypatch.setattr(cpsat, "solve_cpsat", fail)
    only_error(invoke("check", str(SMALL)), 3, "error: CP-SAT returned MODEL_INVALID")


def test_ctrl_c_while_writing_leaves_the_old_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    out = _existing_output(tmp_path)
    monkeypatch.setattr(cli.os, "replace", interrupted)
    result = invoke("plan", str(SMALL), "-o", "json", "--output-file", str(out))
    assert result.exit_code == 130 and result.stderr.endswith("interrupted\n")
    assert out.read_text() == "the previous plan\n"
    no_files_but(tmp_path, "out.json")


@pytest.mark.parametrize(
    "where,phrase", [("missing/out.json", "no such directory"), (".", "is a directory"), ("link.json", "no such directory")]
)
@pytest.mark.parametrize("option", ["--output-file", "--report", "--junit-file"])
def test_an_output_path_that_cannot_be_written_is_bad_usage_before_planning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str, phrase: str, option: str
) -> None:
    """--junit-file was checked only when written, after planning: exit 3. So was a symlink
    into a missing folder, which is written through (helper-61)."""
    if where == "link.json":
        (tmp_path / where).symlink_to(tmp_path / "missing" / "out.json")

    def must_not_plan(*args: object, **kwargs: object) -> None:
        raise AssertionError("planned before the output path was checked")

    monkeypatch.setattr(cli, "make_plan", must_not_plan)
    other = "--report" if option == "--output-file" else "--output-file"
    command = ["check", str(SMALL)] if option == "--junit-file" else ["plan", str(SMALL), "-o", "json"]
    result = invoke(*command, option, str(tmp_path / where), other, str(tmp_path / "other"))
    only_error(result, 2, phrase)
    no_files_but(tmp_path, *([where] if where == "link.json" else []))


@pytest.mark.parametrize("option", ["--report", "--junit-file"])
def test_a_dash_for_a_second_output_is_stdout_only_when_stdout_is_free(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, option: str
) -> None:
    """README: `-` is stdout for --report and --junit-file too. --report - wrote a file named
    "-"; --junit-file - was refused even with the report sent to --output-file."""
    monkeypatch.chdir(tmp_path)
    command = ["check", str(SMALL)] if option == "--junit-file" else ["plan", str(SMALL), "-o", "json"]
    refused = invoke(*command, option, "-")
    only_error(refused, 2, f"{option} - would write to stdout, which carries the command's output")
    assert refused.stdout == ""
    written = invoke(*command, option, "-", "--output-file", "out.txt")
    assert written.exit_code in (0, 1), written.stderr
    assert written.stdout.startswith("<!DOCTYPE html>" if option == "--report" else "<?xml")
    assert Path("out.txt").read_text().strip()
    no_files_but(tmp_path, "out.txt")


def test_a_dash_for_two_outputs_is_refused_as_two_outputs_on_one_stdout(tmp_path: Path) -> None:
    """README: more than one output on one stdout is bad usage (exit 2). `--output-file -` is
    stdout, as no --output-file is, so `--report -` beside it would mix the HTML page into the
    bindings; nothing is planned or written."""
    refused = invoke("plan", str(SMALL), "-o", "json", "--output-file", "-", "--report", "-")
    only_error(refused, 2, "--report - would write to stdout, which carries the command's output")
    assert refused.stdout == ""
    junit = invoke("check", str(SMALL), "--output-file", "-", "--junit-file", "-")
    only_error(junit, 2, "--junit-file - would write to stdout")
    assert junit.stdout == ""


def test_a_failed_write_of_one_file_leaves_both_as_they_were(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--output-file and --report are staged together: the plan file failing to be written (a
    full disk) leaves the old report too, not a new report beside an old plan."""
    real_chmod = os.chmod

    def disk_full_on_plan(path: str, mode: int) -> None:
        if Path(path).name.startswith(".out.json."):
            raise OSError(28, "No space left on device")
        real_chmod(path, mode)

    out = _existing_output(tmp_path)
    report = tmp_path / "report.html"
    report.write_text("the previous report\n")
    monkeypatch.setattr(cli.os, "chmod", disk_full_on_plan)
    result = invoke("plan", str(SMALL), "-o", "json", "--output-file", str(out), "--report", str(report))
    assert result.exit_code != 0 and "No space left" in result.stderr
    assert out.read_text() == "the previous plan\n"
    assert report.read_text() == "the previous report\n"
    no_files_but(tmp_path, "out.json", "report.html")


def test_a_stdout_that_cannot_be_written_leaves_the_report_as_it_was(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The bindings on stdout and --report FILE are one output: stdout is written before any
    file is replaced, so a stdout that fails (a full disk behind `> out.json`) leaves the old
    report, not a new report beside bindings that never arrived."""

    def stdout_fails(text: str) -> None:
        raise OutputError("cannot write the output: No space left on device")

    report = tmp_path / "report.html"
    report.write_text("the previous report\n")
    monkeypatch.setattr(cli, "write_stdout", stdout_fails)
    result = invoke("plan", str(SMALL), "-o", "json", "--report", str(report))
    only_error(result, 3, "cannot write the output")
    assert report.read_text() == "the previous report\n"
    no_files_but(tmp_path, "report.html")


def test_an_internal_error_is_one_line_that_says_how_to_see_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug is exit 3 with one `error: internal error:` line and no traceback; README's way to
    see one is --debug, so the line names it, and with --debug (the traceback shown) it need not."""

    def broken(*args: object, **kwargs: object) -> Plan:
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "make_plan", broken)
    line = only_error(invoke("plan", str(SMALL)), 3, "internal error: RuntimeError: a bug")
    assert "--debug" in line
    debugged = invoke("--debug", "plan", str(SMALL))
    assert debugged.exit_code == 3 and "Traceback" in debugged.stderr
    assert debugged.stderr.splitlines()[-1] == "error: internal error: RuntimeError: a bug"


def test_a_reader_that_stops_reading_gets_no_error() -> None:
    """`gangplan plan ... | head` where the reader is gone: no 'internal error' line and no
    traceback, and the status of a process SIGPIPE killed, as kubectl and coreutils give."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "gangplan", "plan", str(SMALL), "-o", "yaml"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    assert "error" not in proc.stderr.lower() and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("skipped objects") or proc.stderr.startswith("groups placed")


def test_a_reader_that_stops_after_the_first_64_kib_still_gets_141() -> None:
    """More than a pipe's 64 KiB: the first write is partial, and Python's buffered writer
    dropped the broken pipe that followed, so the truncated output ended with exit 0."""
    proc = subprocess.Popen([sys.executable, "-m", "gangplan", "generate", "--shape", "2x4x4x16", "--groups", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    assert proc.wait(timeout=120) == 141
    assert proc.stderr.read() == b""
    proc.stderr.close()


@pytest.mark.parametrize("closed", ["stdin", "stdout"])
def test_a_closed_stdin_or_stdout_is_one_error_line(closed: str) -> None:
    args = [sys.executable, "-m", "gangplan", "plan", "-" if closed == "stdin" else str(SMALL), "-o", "name"]
    proc = subprocess.run(args, stderr=subprocess.PIPE, text=True, timeout=120,
                          stdin=subprocess.DEVNULL if closed == "stdin" else None,
                          stdout=subprocess.DEVNULL if closed == "stdout" else None,
                          preexec_fn=lambda: os.close(0 if closed == "stdin" else 1))
    assert proc.returncode == (2 if closed == "stdin" else 3)
    assert proc.stderr.splitlines()[-1] == (
        "error: <stdin>: cannot read: stdin is closed" if closed == "stdin" else "error: cannot write the output: stdout is closed"
    )


@pytest.mark.parametrize("command", [["plan"], ["plan", "-o", "wide"], ["topology"], ["diff", "--plan"]], ids=" ".join)
def test_a_closed_stdout_is_the_same_error_line_for_every_output(command: list[str], tmp_path: Path) -> None:
    """The table, wide, topology and diff outputs asked sys.stdout, None when closed, whether it
    is a terminal: 'internal error: AttributeError', where -o name says stdout is closed."""
    args = [str(SMALL), *command[1:]]
    if command[0] == "diff":
        made = tmp_path / "plan.json"
        assert invoke("plan", str(SMALL), "--solver", "greedy", "-o", "plan", "--output-file", str(made)).exit_code == 0
        args.append(str(made))
    proc = subprocess.run([sys.executable, "-m", "gangplan", "-q", command[0], *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 3
    assert proc.stderr == "error: cannot write the output: stdout is closed\n"


def test_output_file_writes_through_a_symlink_into_a_fifo_and_dash_is_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, link = tmp_path / "target.txt", tmp_path / "link"
    link.symlink_to(target.name)
    assert invoke("plan", str(SMALL), "-o", "name", "--output-file", str(link)).exit_code == 0
    assert link.is_symlink() and target.read_text().startswith("binding/")  # the link was replaced by a file
    # In a folder of its own: the current one is shared by tests side by side (pytest-xdist), and
    # a "-" another test wrote there would fail this one (or stay in the checkout for the next run).
    monkeypatch.chdir(tmp_path)
    result = invoke("plan", str(SMALL), "-o", "name", "--output-file", "-")
    assert result.exit_code == 0 and result.stdout.startswith("binding/") and not Path("-").exists()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    assert invoke("plan", str(SMALL), "-o", "name", "--output-file", str(fifo)).exit_code == 0
    assert reader.communicate(timeout=60)[0] == target.read_text()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # written into, not replaced by a regular file


def test_output_file_dev_stdout_writes_into_a_pipe() -> None:
    """`--output-file /dev/stdout | cat` was 'cannot write /dev/stdout', exit 3: the path was
    resolved to /proc/PID/fd/pipe:[N], which does not exist, to put a temporary file beside."""
    args = [sys.executable, "-m", "gangplan", "-q", "plan", str(SMALL), "-o", "name", "--output-file", "/dev/stdout"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == invoke("plan", str(SMALL), "-o", "name").stdout


def test_an_unwritable_output_is_one_error_line_not_an_internal_error(tmp_path: Path) -> None:
    # Not /dev/full: code that replaces the path instead of writing into it would replace the device.
    result = invoke("plan", str(SMALL), "-o", "name", "--output-file", "/proc/gangplan-plan.txt")
    only_error(result, 3)
    assert re.fullmatch(r"error: cannot write /proc/gangplan-plan\.txt: [A-Z][a-z].*", result.stderr.splitlines()[-1])


def test_a_failed_write_leaves_the_old_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    out = _existing_output(tmp_path)
    monkeypatch.setattr(cli.os, "replace", disk_full)
    result = invoke("plan", str(SMALL), "-o", "json", "--output-file", str(out))
    only_error(result, 3)
    assert out.read_text() == "the previous plan\n"
    no_files_but(tmp_path, "out.json")


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a running process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to tell when the solve has started")
@pytest.mark.parametrize("stop,code,said", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_a_cp_sat_solve_stops_at_once_and_writes_nothing(
    tmp_path: Path, stop: signal.Signals, code: int, said: str
) -> None:
    """A real Ctrl-C (or a CI job's cancel, SIGTERM) in the middle of a solve with a 1000 s
    budget: exit 130 (143) instead of solving on (``communicate``'s timeout is the hang guard,
    not a speed target).

    CP-SAT holds the thread that calls it in C++ and installs its own SIGINT handler for each
    solve; without the CLI's care the signal either waited for the time limit, killed the
    process without cleanup, or aborted it (std::bad_function_call). SIGTERM's default action
    killed the process, leaving a half-written temporary file when it came during the write
    (user review F)."""
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(generate(shape=(2, 4, 4, 8), groups=120, seed=1, max_gang=32)))
    out = tmp_path / "out.json"
    command = [sys.executable, "-m", "gangplan", "plan", str(snapshot), "-o", "plan", "--output-file", str(out)]
    # Everything before the solve (start-up, loading, the problem, greedy) costs what a whole
    # greedy run costs; past that much CPU time (and a second more) the child is in CP-SAT.
    spent = _cpu_seconds_of_children()
    subprocess.run([*command, "--solver", "greedy"], check=True, capture_output=True, cwd=tmp_path)
    before_solve = _cpu_seconds_of_children() - spent
    out.unlink()
    child = subprocess.Popen(
        [*command, "--time-limit", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        deadline = time.monotonic() + 120
        while _cpu_seconds(child.pid) < before_solve + 1.0 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None, child.communicate()
        child.send_signal(stop)
        stdout, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == code, (child.returncode, stderr)
    assert stderr.decode().endswith(f"{said}\n") and stdout == b""
    no_files_but(tmp_path, "s.json")


@pytest.mark.parametrize("stop,code,said", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_while_gangplan_starts_is_answered_without_a_traceback(
    tmp_path: Path, stop: signal.Signals, code: int, said: str
) -> None:
    """Importing the CLI (OR-Tools, numpy) takes most of a second; a Ctrl-C then printed a
    KeyboardInterrupt traceback from inside an import (review 17 F5). The entry point now
    answers from the instant its handler is in place, as the CLI does later. The signal is
    sent as soon as the child's handler is installed, so it comes while imports run; a fixed
    delay had raced the interpreter's own start-up on a loaded machine (killed, -15)."""
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(generate(shape=(1, 2, 4, 8), groups=60, seed=1, max_gang=16)))
    child = subprocess.Popen(
        [sys.executable, "-m", "gangplan", "plan", str(snapshot), "--time-limit", "1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, preexec_fn=_as_from_a_terminal,
    )
    try:
        _wait_for_handler(child)
        child.send_signal(stop)
        stdout, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == code, (child.returncode, stderr)
    assert stderr.decode().endswith(f"{said}\n") and b"Traceback" not in stderr and stdout == b""


def _as_from_a_terminal() -> None:
    """In the child before it runs: SIGINT at its default action. A suite started in the
    background with no job control (`pytest &` in a script) has SIGINT ignored, children inherit
    that, and gangplan keeps an inherited SIG_IGN as it keeps nohup's: the start-up test's Ctrl-C
    was then ignored and the child planned on for its 1000 s."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_handler(child: subprocess.Popen) -> None:
    """Until the child catches SIGHUP, the last of the signals the entry point takes over
    (Python catches SIGINT itself from the start); on Linux, from its SigCgt mask. Under
    nohup the child inherits SIGHUP ignored and keeps it so: then SIGTERM, the one before."""
    status = Path(f"/proc/{child.pid}/status")
    if not status.exists():
        time.sleep(0.5)
        return
    last = signal.SIGTERM if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN else signal.SIGHUP
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and child.poll() is None:
        caught = next((line for line in status.read_text().splitlines() if line.startswith("SigCgt:")), "SigCgt: 0")
        if int(caught.split()[1], 16) >> (last - 1) & 1:
            return
        time.sleep(0.001)
    raise AssertionError(f"the child never caught {last.name}")


def _cpu_seconds_of_children() -> float:
    times = os.times()
    return times.children_user + times.children_system


# ---------------------------------------------------------------- output safety


@pytest.mark.parametrize(
    "meta,field",
    [
        ({"name": "Node_1"}, "name"),
        ({"name": "n\nevil"}, "name"),
        ({"name": "a" * 254}, "name"),
        ({"name": "\x1b[2Jclear"}, "name"),
    ],
    ids=["underscore", "newline", "too-long", "escape"],
)
def test_node_names_must_be_kubernetes_names(tmp_path: Path, meta: dict, field: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": {"cpu": "1"}}}))
    line = only_error(invoke("plan", str(path)), 2, f"metadata.{field}:")
    assert "not a valid Node name" in line and "\x1b" not in line
    assert len(invoke("plan", str(path)).stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "kind,meta,phrase",
    [
        ("Pod", {"name": "p\n--- ", "namespace": "default"}, "not a valid Pod name"),
        ("Pod", {"name": "p", "namespace": "Team A"}, "not a valid Pod namespace"),
        ("Pod", {"name": "p", "namespace": "a" * 64}, "more than 63"),
        ("Pod", {"name": "ünï", "namespace": "default"}, "\\u00fcn\\u00ef"),
        ("PodGroup", {"name": "../g", "namespace": "ml"}, "not a valid PodGroup name"),
    ],
)
def test_pod_and_group_names_must_be_kubernetes_names(tmp_path: Path, kind: str, meta: dict, phrase: str) -> None:
    obj: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}
    if kind == "PodGroup":
        obj = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta, "spec": {"minMember": 1}}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}, obj]))
    only_error(invoke("plan", str(path), "-o", "name"), 2, phrase)


def test_messages_quoting_input_stay_on_one_line(tmp_path: Path) -> None:
    """Whatever a message quotes from the input, stderr gets one escaped line."""
    path = tmp_path / "gang.yaml"
    path.write_text(
        'apiVersion: extensions/v1beta1\nkind: Gang\nmetadata: {name: g}\nspec:\n'
        '  replicationControllers:\n  - name: "a\\nb\\u001b[31m"\n    replicas: 1\n'
        "    template: {spec: {containers: [{name: c}]}}\n"
    )
    line = only_error(invoke("plan", str(path)), 2)
    assert "\x1b" not in line and "\\u001b" in line and "\\n" in line


def _all_names(snapshot: Snapshot) -> tuple[set[tuple[str, str]], set[str]]:
    return {(p.namespace, p.name) for p in snapshot.pods if p.node_name is None}, {n.name for n in snapshot.nodes}


@pytest.mark.parametrize("output", ["json", "yaml", "name"])
def test_bindings_and_pods_carry_only_names_from_the_input(tmp_path: Path, output: str) -> None:
    gang = tmp_path / "gang.yaml"
    gang.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: ml}\nspec:\n  replicas: 2\n"
        "  template:\n    spec:\n      containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
    )
    result = invoke("plan", str(SMALL), "-o", output, "--gang", f"web={gang}")
    assert result.exit_code == 0, result.stderr
    snapshot = load_snapshot([str(SMALL)])
    pending, nodes = _all_names(snapshot)
    pending |= {("ml", "web-0"), ("ml", "web-1")}
    if output == "name":
        names = [line.split("/", 1)[1] for line in result.stdout.splitlines()]
        assert names and all(SUBDOMAIN.fullmatch(n) for n in names)
        assert set(names) <= {name for _, name in pending}
        return
    items = (json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout))["items"]
    assert {item["kind"] for item in items} == {"Binding", "Pod"}
    for item in items:
        meta = item["metadata"]
        node = item["target"]["name"] if item["kind"] == "Binding" else item["spec"]["nodeName"]
        assert SUBDOMAIN.fullmatch(meta["name"]) and len(meta["name"]) <= 253
        assert LABEL.fullmatch(meta["namespace"]) and len(meta["namespace"]) <= 63
        assert (meta["namespace"], meta["name"]) in pending and node in nodes


def test_render_refuses_a_binding_not_from_the_input() -> None:
    snapshot = load_snapshot([str(SMALL)])
    result = plan(snapshot, Options(solver="greedy"))
    check_output_names(result, snapshot)  # the real plan passes
    real = result.placements[0]
    forged = [
        Placement(real.namespace, "not-in-the-snapshot", real.node, real.uid, real.group),
        Placement(real.namespace, real.name, "elsewhere", real.uid, real.group),
        Placement(real.namespace, real.name, real.node, "another-uid", real.group),
        Placement(real.namespace, "bad\nname", real.node),
        Placement("Bad NS", real.name, real.node),
    ]
    for placement in forged:
        bad = type(result)((placement,), result.groups, result.solver)
        with pytest.raises(SolverError, match="refusing to write"):
            render(bad, "json", snapshot=snapshot)
        if "\n" in placement.name or " " in placement.namespace:
            with pytest.raises(SolverError):
                render(bad, "name")  # invalid names are refused even without the snapshot


def test_a_forged_plan_fails_the_run_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    snapshot = load_snapshot([str(SMALL)])
    real = plan(snapshot, Options(solver="greedy"))
    first = real.placements[0]
    forged = type(real)((Placement(first.namespace, first.name, "attacker-node", first.uid),), real.groups, real.solver)
    monkeypatch.setattr(cli, "make_plan", lambda *a, **k: forged)
    out = tmp_path / "bindings.json"
    result = invoke("plan", str(SMALL), "-o", "json", "--output-file", str(out))
    only_error(result, 3, "refusing to write a binding that is not from the input")
    no_files_but(tmp_path)


def test_output_files_are_replaced_whole(tmp_path: Path) -> None:
    out = _existing_output(tmp_path)
    result = invoke("plan", str(SMALL), "-o", "plan", "--output-file", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    data = json.loads(out.read_text())
    assert data["kind"] == "Plan"
    placements = []
    for p in data["placements"]:
        namespace, name = p["pod"].split("/")
        placements.append(Placement(namespace, name, p["node"]))
    assert placements and verify(load_snapshot([str(SMALL)]), placements, ()).ok
    no_files_but(tmp_path, "out.json")
    assert os.stat(out).st_size == len(out.read_bytes())


@pytest.mark.parametrize("stderr", ["closed", "reader gone"])
def test_a_stderr_nobody_reads_changes_neither_the_output_nor_the_exit_status(stderr: str, tmp_path: Path) -> None:
    """`2>&-`, or `2>&1 | head -1` once head is gone: messages are advice. plan and check
    exited 1 there and wrote nothing, which a CI job read as 'does not fit' (user review F)."""
    out = tmp_path / "plan.json"
    for args, code in ((["plan", str(SMALL), "-o", "plan", "--output-file", str(out)], 0), (["check", str(SMALL)], 1)):
        command = [sys.executable, "-m", "gangplan", *args]
        if stderr == "closed":
            proc = subprocess.run(command, stdout=subprocess.PIPE, timeout=120, preexec_fn=lambda: os.close(2))
        else:
            read, write = os.pipe()
            os.close(read)
            proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=write, timeout=120)
            os.close(write)
        assert proc.returncode == code, args
    assert json.loads(out.read_text())["kind"] == "Plan"
    assert b"FAIL ml/llm-pretrain" in proc.stdout


def test_an_output_file_that_is_an_input_or_another_output_is_refused(tmp_path: Path) -> None:
    """--output-file naming the snapshot replaced it with the Plan; the same path for
    --output-file and --report kept only the report (user review F). Exit 2, nothing written."""
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text(SMALL.read_text())
    result = runner.invoke(app, ["plan", str(snapshot), "-o", "plan", "--output-file", str(snapshot)])
    assert result.exit_code == 2 and snapshot.read_text() == SMALL.read_text()
    assert result.stderr.splitlines()[-1] == f"error: {snapshot} is also an input; write the output to another file"
    both = tmp_path / "out"
    result = runner.invoke(app, ["plan", str(snapshot), "-o", "plan", "--output-file", str(both), "--report", str(both)])
    assert result.exit_code == 2 and not both.exists()
    assert result.stderr.splitlines()[-1] == f"error: --output-file and --report both name {both}; give each output its own file"
    # One file by two names: both names shown, each with its option.
    alias = tmp_path / "alias"
    alias.symlink_to(both)
    result = runner.invoke(app, ["plan", str(snapshot), "-o", "plan", "--output-file", str(both), "--report", str(alias)])
    assert result.exit_code == 2 and not both.exists()
    assert result.stderr.splitlines()[-1] == f"error: --output-file {both} and --report {alias} are the same file; give each output its own"
    assert runner.invoke(app, ["plan", str(snapshot), "-o", "plan", "--output-file", str(tmp_path / "p.json")]).exit_code == 0


def test_no_output_replaces_a_gang_file_a_plan_file_or_a_trace_inventory(tmp_path: Path) -> None:
    """Only snapshot files were inputs: --output-file, --report or --junit-file naming a --gang
    workload file, `diff --plan`'s plan or `generate --from-trace`'s CSV replaced it, exit 0.
    Every file gangplan reads is an input: exit 2, the file as it was."""
    gang = tmp_path / "deploy.yaml"
    gang.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: ml}\nspec:\n  replicas: 2\n"
        "  template:\n    spec:\n      containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
    )
    kept = gang.read_text()
    for args in (
        ["plan", str(SMALL), "--gang", f"t={gang}", "--output-file", str(gang)],
        ["plan", str(SMALL), "--gang", f"t={gang}", "--report", str(gang)],
        ["check", str(SMALL), "--gang", f"t={gang}", "--junit-file", str(gang)],
    ):
        only_error(invoke("-q", *args), 2, f"{gang} is also an input")
        assert gang.read_text() == kept, args
    made = tmp_path / "p.json"
    assert invoke("plan", str(SMALL), "-o", "plan", "--output-file", str(made)).exit_code == 0
    kept = made.read_text()
    for args in (["diff", str(SMALL), "--plan", str(made)], ["diff", "--plan", str(made), "--plan", str(made)]):
        only_error(invoke(*args, "--output-file", str(made)), 2, f"{made} is also an input")
        assert made.read_text() == kept, args
    inventory = tmp_path / "openb_node_list_gpu_node.csv"
    inventory.write_text("sn,cpu_milli,memory_mib,gpu,model\n" + "".join(f"n{i},96000,393216,8,G2\n" for i in range(4)))
    kept = inventory.read_text()
    for given in (inventory, tmp_path):
        result = invoke("generate", "--shape", "1x1x2x2", "--groups", "1", "--from-trace", str(given), "--output-file", str(inventory))
        only_error(result, 2, f"{inventory} is also an input")
        assert inventory.read_text() == kept


def test_an_output_naming_an_input_or_another_output_is_refused_before_planning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """It was refused only once the plan was made (19 s on a big snapshot), unlike a missing
    folder or an output in an input folder."""

    def no_planning(*args: object, **kwargs: object) -> None:
        raise AssertionError("planned")

    monkeypatch.setattr(cli, "make_plan", no_planning)
    snapshot, gang, out = tmp_path / "snap.yaml", tmp_path / "gang.yaml", tmp_path / "out"
    snapshot.write_text(SMALL.read_text())
    gang.write_text("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: ml}\nspec: {replicas: 1}\n")
    for args, phrase in (
        (["plan", str(snapshot), "--output-file", str(snapshot)], "is also an input"),
        (["plan", str(snapshot), "--gang", f"t={gang}", "--report", str(gang)], "is also an input"),
        (["plan", str(snapshot), "--output-file", str(out), "--report", str(out)], "--output-file and --report both name"),
        (["check", str(snapshot), "-o", "junit", "--junit-file", str(snapshot)], "is also an input"),
        (["check", str(snapshot), "--output-file", str(out), "--junit-file", str(out)], "--output-file and --junit-file both name"),
    ):
        only_error(invoke(*args), 2, phrase)
    assert snapshot.read_text() == SMALL.read_text()
    no_files_but(tmp_path, "snap.yaml", "gang.yaml")


@pytest.mark.parametrize("imports", ["from gangplan import Options, plan", "from gangplan import Plan, plan", "import gangplan.loader; from gangplan import plan, Options"])
def test_the_python_api_gives_the_plan_function_in_any_import_order(imports: str) -> None:
    """Review 18 O F2: with the package's imports made lazy (for a fast start-up), importing
    Plan or Options before plan gave the gangplan.plan module instead of the function."""
    code = f"{imports}\nimport inspect\nassert inspect.isfunction(plan), plan\nprint(plan(__import__('gangplan').load_snapshot([{str(ROOT / 'snapshots' / 'small.yaml')!r}]), Options(time_limit=2)).solver.status)"
    if "Options" not in imports:
        code = code.replace("Options(time_limit=2)", "__import__('gangplan').Options(time_limit=2)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "OPTIMAL\n", proc.stderr


def test_render_refuses_names_and_bindings_the_api_server_would_not_take() -> None:
    """README: namespaces are DNS-1123 labels (no '.', at most 63 characters), stricter than the
    subdomains pods and nodes are named by, and every binding is checked against the snapshot:
    a pod it already runs on a node is not one to bind (the API server refuses a second
    Binding of it)."""
    snapshot = load_snapshot([str(SMALL)])
    result = plan(snapshot, Options(solver="greedy"))
    real = next(p for p in result.placements if not p.gated)
    bound = next(p for p in snapshot.pods if p.node_name is not None)

    def alone(placement: Placement) -> Plan:
        return Plan((placement,), result.groups, result.solver)

    for namespace in ("ml.team", "n" * 64):
        bad = alone(Placement(namespace, real.name, real.node, real.uid, real.group))
        for output in ("json", "yaml", "name", "plan"):
            with pytest.raises(SolverError, match="invalid name"):
                render(bad, output)
    with pytest.raises(SolverError, match="invalid name"):
        render(alone(Placement(real.namespace, real.name, "Node_1", real.uid, real.group)), "json")
    again = alone(Placement(bound.namespace, bound.name, bound.node_name or "", bound.uid))
    with pytest.raises(SolverError, match="not from the input"):
        render(again, "json", snapshot=snapshot)
    # A pod to create is the input's own manifest, and it names the pod it is placed as.
    made = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": real.name, "namespace": real.namespace}}
    with pytest.raises(SolverError, match="not the input's pod"):
        render(alone(dataclasses.replace(real, manifest=made)), "json", snapshot=snapshot)
    other = {**made, "metadata": {"name": "someone-else", "namespace": real.namespace}}
    with pytest.raises(SolverError, match="names another pod"):
        render(alone(dataclasses.replace(real, manifest=other)), "json")

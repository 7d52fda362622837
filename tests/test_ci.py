"""gangplan.ci: what `check` writes where CI looks. GitHub Actions workflow commands (escaped
as the Actions toolkit escapes them), paths as the runner reads them, JUnit XML, and which
groups --group and --groups-from select."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import pytest

from gangplan import ci, cli
from gangplan.ci import annotation, escape_data, from_workspace, warning_annotation
from gangplan.errors import Position
from gangplan.semantics import Grouping
from spies import recording
from test_cli import CLUSTER, invoke, job_manifest


def unescape_data(text: str) -> str:
    """The runner's reading of a command's message (actions/runner's ActionCommand): %0D, %0A,
    then %25, the reverse of the toolkit's escapeData."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def test_a_message_is_escaped_as_the_actions_toolkit_escapes_data() -> None:
    """actions/toolkit packages/core/src/command.ts escapeData: % first (as %25), then \\r
    (%0D) and \\n (%0A), so that a workflow command stays one line and the runner reads the
    message back as written, a literal '%0A' included."""
    message = "50% done\r\nnext: a, b\nliteral %0A"
    escaped = escape_data(message)
    assert escaped == "50%25 done%0D%0Anext: a, b%0Aliteral %250A"
    assert "\n" not in escaped and "\r" not in escaped and unescape_data(escaped) == message


def test_properties_are_escaped_as_the_actions_toolkit_escapes_them() -> None:
    """escapeProperty also escapes ':' (%3A) and ',' (%2C): a property value with a comma
    would otherwise end there and start a bogus property."""
    title = "ns/a,b: 100%\nfails"
    line = warning_annotation(title, "x")
    assert line == "::warning title=ns/a%2Cb%3A 100%25%0Afails::x\n"
    properties = line[len("::warning ") : line.index("::", 2)]
    assert [unescape_property(p.split("=", 1)[1]) for p in properties.split(",")] == [title]


def test_an_annotation_message_and_title_are_escaped_and_stay_on_one_line() -> None:
    message = "insufficient cpu\nsecond line 5%"
    line = annotation("ns/a,b cannot be placed", Position("jobs/a,b.yaml", 3, 2), message)
    assert line.count("\n") == 1 and line.endswith("::insufficient cpu%0Asecond line 5%25\n")
    assert line.startswith("::error file=jobs/a%2Cb.yaml,line=3,col=2,title=ns/a%2Cb cannot be placed::")


@pytest.mark.parametrize("stream", ["-", "<stdin>"])
def test_an_annotation_of_standard_input_names_no_file(stream: str) -> None:
    """file= is a path in the repository; what was read from standard input has none, so the
    annotation has only its title (a file=- would point at no file of the diff)."""
    assert annotation("t", Position(stream, 4, 29), "bad") == "::error title=t::bad\n"


def test_a_junit_case_of_standard_input_names_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """helper-65: the case's file was '<stdin>' resolved against the workspace, a path that
    does not exist, where the annotation of the same run had none."""
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    result = invoke("check", "cluster.yaml", "-", "-o", "junit", input=job_manifest("train", 1, 1))
    cases = {case.get("name"): case for case in ElementTree.fromstring(result.stdout).iter("testcase")}
    assert (cases["ml/train"].get("file"), cases["ml/train"].get("line")) == ("", None), result.stdout


def test_an_annotation_gives_line_and_col_only_when_known_and_col_1_for_a_line_alone() -> None:
    """A position without a line is a file alone (no 'line=None'); a line without a column
    starts at column 1."""
    assert annotation("t", Position("a.yaml"), "m") == "::error file=a.yaml,title=t::m\n"
    assert annotation("t", Position("a.yaml", 7), "m") == "::error file=a.yaml,line=7,col=1,title=t::m\n"


def test_paths_are_relative_to_the_workspace_whatever_folder_the_step_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner reads file= from the repository root ($GITHUB_WORKSPACE): a path typed
    relative to a step's working-directory (a subfolder) is made relative to the root, and a
    workspace named through a symbolic link is the same folder."""
    root = tmp_path / "repo"
    (root / "sub" / "jobs").mkdir(parents=True)
    (root / "sub" / "jobs" / "x.yaml").write_text("")
    monkeypatch.chdir(root / "sub")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(root))
    assert from_workspace("jobs/x.yaml") == "sub/jobs/x.yaml"
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(link))
    assert from_workspace(str(root / "sub" / "jobs" / "x.yaml")) == "sub/jobs/x.yaml"
    monkeypatch.delenv("GITHUB_WORKSPACE")
    assert from_workspace("jobs/x.yaml") == "jobs/x.yaml"  # outside a workflow: as given


def junit_cases(text: str) -> list[str]:
    return [str(case.get("name")) for case in ElementTree.fromstring(text).iter("testcase")]


def test_each_group_is_checked_once_and_the_named_ones_first(tmp_path: Path) -> None:
    """check's contract: the groups --group names, in that order, then those written in
    --groups-from's files; a group named twice (by namespace/name and by its bare name) or both
    named and written is one group, one JUnit test case and one count in 'n/m groups placed'."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER)
    jobs.mkdir()
    (jobs / "train.yaml").write_text(job_manifest("train", 2, 4))
    junit = invoke("check", str(cluster), "--groups-from", str(jobs), "--group", "ops/debug-shell", "-o", "junit")
    assert junit.exit_code == 1 and junit_cases(junit.stdout) == ["ops/debug-shell", "ml/train"]
    twice = ["--group", "ops/debug-shell", "--group", "debug-shell", "--group", "ml/train"]
    text = invoke("check", str(cluster), "--groups-from", str(jobs), *twice)
    assert text.exit_code == 1
    assert [line.split(":")[0] for line in text.stdout.splitlines()] == ["FAIL ops/debug-shell", "1/2 groups placed"]


@pytest.mark.parametrize("asked", [[], ["--group", "ml/train"]])
def test_check_groups_the_snapshots_pods_once_for_its_origins_and_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked: list[str]
) -> None:
    """Where each group is written, which files make it and the groups asked for all read one
    grouping: check had grouped the snapshot's pods twice more after planning (helper reviews),
    and once more with --group (helper-80)."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER)
    jobs.mkdir()
    (jobs / "train.yaml").write_text(job_manifest("train", 2, 4))
    groupings: list[Grouping] = []
    monkeypatch.setattr(cli, "group_pods", recording(cli.group_pods, groupings))
    monkeypatch.setattr(ci, "group_pods", recording(cli.group_pods, groupings), raising=False)
    result = invoke("check", str(cluster), "--groups-from", str(jobs), *asked, "-o", "junit")
    assert result.exit_code == 0 and junit_cases(result.stdout) == ["ml/train"], result.output
    assert len(groupings) == 1


def test_the_junit_report_carries_the_plans_warnings(tmp_path: Path) -> None:
    """A gate that passes on a stale snapshot should say so where reviewers look: in JUnit's
    system-err, as on stderr and in GitHub's warnings."""
    cluster, stale = tmp_path / "cluster.yaml", tmp_path / "stale.yaml"
    cluster.write_text(CLUSTER)
    stale.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  nodeName: gone\n"
        "  containers: [{name: c, image: x}]\nstatus: {phase: Running}\n"
    )
    result = invoke("check", str(cluster), str(stale), "-o", "junit")
    suite = ElementTree.fromstring(result.stdout)
    said = suite.findtext("system-err") or ""
    assert "warning: pod ml/p runs on node gone, not in the snapshot" in said
    assert "warning: pod ml/p runs on node gone, not in the snapshot" in result.stderr


def test_control_characters_quoted_from_input_are_escaped_in_junit_and_annotations(tmp_path: Path) -> None:
    """helper-51: a priorityClassName holding U+0001 reached JUnit's system-err as it was, and
    XML 1.0 cannot hold it even as &#1;: the reporter step refused the file. It is written as
    on stderr (\\u0001), in the report and in the GitHub warning alike."""
    cluster, odd = tmp_path / "cluster.yaml", tmp_path / "odd.yaml"
    cluster.write_text(CLUSTER)
    odd.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  priorityClassName: \"hi\\x01gh\"\n"
        "  containers: [{name: c, image: x}]\n---\napiVersion: v1\nkind: \"Odd\\x02Kind\"\nmetadata: {name: o}\n"
    )
    said = "PriorityClass hi\\u0001gh is not in the snapshot"
    result = invoke("check", str(cluster), str(odd), "-o", "junit")
    assert "\x01" not in result.stdout and "\x02" not in result.stdout
    suite = ElementTree.fromstring(result.stdout)
    assert said in (suite.findtext("system-err") or "") and said in result.stderr
    github = invoke("check", str(cluster), str(odd), "-o", "github")
    assert "\x01" not in github.stdout and said in github.stdout


def test_what_is_said_of_the_inputs_before_planning_reaches_ci_too(tmp_path: Path) -> None:
    """An empty input file (a kubectl that failed in the step before) and a cluster whose
    GPUs go by another name were said on stderr only: GitHub's annotations and JUnit's
    system-err, which promise every warning of the run, left them out (a review's case)."""
    cluster, empty = tmp_path / "cluster.yaml", tmp_path / "empty.yaml"
    cluster.write_text(CLUSTER.replace("nvidia.com/gpu", "amd.com/gpu"))
    empty.write_text("")
    said = [f"{empty}: no Kubernetes objects in it (was it written by a command that failed?)",
            "no node has nvidia.com/gpu; give --gpu-resource amd.com/gpu to count amd.com/gpu as GPUs"]
    github = invoke("check", str(cluster), str(empty), "-o", "github")
    warnings = [line for line in github.stdout.splitlines() if line.startswith("::warning")]
    assert warnings[:2] == [f"::warning title=gangplan check::{text}" for text in said]
    junit = invoke("check", str(cluster), str(empty), "-o", "junit")
    system_err = ElementTree.fromstring(junit.stdout).findtext("system-err") or ""
    assert system_err.splitlines()[:2] == [f"warning: {text}" for text in said]
    assert all(f"warning: {text}" in junit.stderr for text in said)


def test_a_group_named_beside_groups_from_is_annotated_where_it_is_written(tmp_path: Path) -> None:
    """--groups-from moves a group's annotation to the pull request's workload that joins it;
    a group only named (--group), whose Job is in no --groups-from file, keeps it on its
    PodGroup, as without --groups-from."""
    cluster, jobs, other = tmp_path / "cluster.yaml", tmp_path / "jobs", tmp_path / "other"
    podgroup, job = job_manifest("train", 2, 64).split("---\n", 1)
    cluster.write_text(CLUSTER + "---\n" + podgroup)
    jobs.mkdir()
    (jobs / "job.yaml").write_text(job)
    other.mkdir()
    (other / "x.yaml").write_text(job_manifest("small", 1, 1))
    plain = invoke("check", str(cluster), str(jobs), "--group", "ml/train", "-o", "github")
    with_other = invoke(
        "check", str(cluster), str(jobs), "--groups-from", str(other), "--group", "ml/train", "-o", "github"
    )
    [annotated] = [line for line in plain.stdout.splitlines() if line.startswith("::error")]
    assert annotated.startswith(f"::error file={cluster},line=")
    assert annotated in with_other.stdout.splitlines()


def test_what_standard_input_gives_is_not_written_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kubectl get ... -o yaml | gangplan check - --groups-from .`: the cluster piped in is in
    no folder, so it is not the pull request's change; only the Job in the folder is checked
    (the cluster's pod that fits nowhere, ops/debug-shell, is not)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.yaml").write_text(job_manifest("train", 2, 4))
    result = invoke("check", "-", "--groups-from", ".", input=CLUSTER)
    assert result.exit_code == 0 and result.stdout == "1/1 groups placed\n", result.output


PR_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml{labels}}}\n"
    "spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: '1', nvidia.com/gpu: '64'}}}}}}]}}\n"
)


def test_groups_from_takes_a_groups_first_pod_there_and_a_pod_joining_a_podgroup_elsewhere(
    tmp_path: Path,
) -> None:
    """README, 'In CI': --groups-from checks the groups written there: a PodGroup's object, the
    first pod of a group without one, or a pod to place there (or a workload making some). A
    bare Pod in the folder is a group of one written there (it fits nowhere: FAIL); a Pod
    there that joins a PodGroup of the cluster's file is that group's change: it was not
    checked, and a job that fits nowhere passed the gate (helper-65)."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    podgroup = job_manifest("train", 1, 1).split("---\n", 1)[0]
    cluster.write_text(CLUSTER + "---\n" + podgroup)
    jobs.mkdir()
    (jobs / "pod.yaml").write_text(PR_POD.format(name="solo", labels=""))
    alone = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert alone.exit_code == 1, alone.output
    assert alone.stdout.startswith("FAIL ml/solo: ") and alone.stdout.endswith("0/1 groups placed\n")
    joining = PR_POD.format(name="train-0", labels=", labels: {scheduling.x-k8s.io/pod-group: train}")
    (jobs / "pod.yaml").write_text(joining)
    member = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "github")
    assert member.exit_code == 1, member.output
    assert member.stdout.startswith(f"::error file={jobs / 'pod.yaml'},line=1,col=1,title=ml/train cannot be placed::")
    # A bare Pod there named like the cluster's PodGroup is not that PodGroup's change: the
    # PodGroup's pod that fits nowhere is not blamed on the pull request (helper-66).
    cluster.write_text(cluster.read_text() + "---\n" + PR_POD.format(name="train-0", labels=", labels: {scheduling.x-k8s.io/pod-group: train}"))
    (jobs / "pod.yaml").write_text(PR_POD.format(name="train", labels="").replace("'64'", "'1'"))
    named_alike = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert named_alike.exit_code == 0, named_alike.output


def test_a_junit_failure_counts_the_members_running_toward_min_member(tmp_path: Path) -> None:
    """Two of minMember 4 run and the other two fit nowhere (one free CPU): the failure says
    2/4 pods, the members that count toward minMember after the plan (running, succeeded and
    placed), as the table's PODS column does."""
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: b-{i}, namespace: ml, uid: u-{i}, labels: {{scheduling.x-k8s.io/pod-group: b}}}}\n"
        f"spec: {{{'nodeName: n1, ' if i < 2 else ''}"
        "containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
        f"status: {{phase: {'Running' if i < 2 else 'Pending'}}}\n"
        for i in range(4)
    )
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '3', pods: '110'}}\n---\n"
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: b, namespace: ml, uid: u-b}\n"
        "spec: {minMember: 4}\nstatus: {phase: Running}\n" + pods
    )
    result = invoke("check", str(snapshot), "-o", "junit")
    failure = ElementTree.fromstring(result.stdout).find("testcase/failure")
    assert result.exit_code == 1 and failure is not None and (failure.text or "").startswith("ml/b: 2/4 pods; ")


def test_junit_files_are_relative_to_the_workspace_and_the_report_is_also_the_junit_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README: paths relative to $GITHUB_WORKSPACE when it is set, as the runner (and a
    reporter of the JUnit artifact) reads them; --junit-file writes the report beside whatever
    --format prints, so with -o junit both are the same report."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    report = tmp_path / "out" / "report.xml"
    report.parent.mkdir()
    result = invoke("check", str(cluster), "-o", "junit", "--junit-file", str(report))
    assert result.exit_code == 1
    assert report.read_text() == result.stdout
    [case] = ElementTree.fromstring(result.stdout).iter("testcase")
    assert (case.get("name"), case.get("file")) == ("ops/debug-shell", "cluster.yaml")


def test_a_junit_error_case_carries_the_error_as_its_text(tmp_path: Path) -> None:
    """A reporter shows an error case's text as its details: bad input's report has the
    error there as well as in its message."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: [4]}}\n")
    result = invoke("check", str(bad), "-o", "junit")
    error = ElementTree.fromstring(result.stdout).find("testcase/error")
    assert result.exit_code == 2 and error is not None
    assert error.text == error.get("message") and "status.allocatable.cpu" in (error.text or "")


def test_a_warning_message_is_escaped_as_data() -> None:
    """A warning of several lines stays one workflow command (escapeData: %, \\r, \\n)."""
    assert warning_annotation("gangplan check", "a\nb 5%") == "::warning title=gangplan check::a%0Ab 5%25\n"


def test_check_annotates_the_podgroup_a_bare_pod_queued_before_it_is_named_like(tmp_path: Path) -> None:
    """A bare pod default/g queued before the PodGroup default/g that cannot fit: check's
    warning says check takes the PodGroup, so the annotation goes on the PodGroup's document,
    as test_check_github_annotations_point_at_the_podgroup_document asks."""
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '110'}}\n"
    group = (
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata: {name: g, namespace: default, creationTimestamp: '2024-01-01T00:00:00Z'}\nspec: {minMember: 2}\n"
    )
    members = "".join(
        f"---\napiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: g-{i}, namespace: default, labels: {{scheduling.x-k8s.io/pod-group: g}}}}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '3'}}}]}\n"
        for i in range(2)
    )
    lone = (
        "---\napiVersion: v1\nkind: Pod\n"
        "metadata: {name: g, namespace: default, creationTimestamp: '2023-01-01T00:00:00Z'}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    )
    path = tmp_path / "cluster.yaml"
    path.write_text(node + "---\n" + group + members + lone)
    result = invoke("check", str(path), "-o", "github")
    [error] = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    line = int(error.split(",line=")[1].split(",")[0])
    assert result.exit_code == 1
    document = path.read_text().splitlines()[line - 1 : line + 1]
    assert document == ["apiVersion: scheduling.x-k8s.io/v1alpha1", "kind: PodGroup"]


def test_a_pull_requests_bare_pod_named_like_the_clusters_podgroup_is_checked_as_itself(tmp_path: Path) -> None:
    """check --groups-from selects and judges groups by kind and name, as plan and diff tell
    them apart: a bare Pod in the pull request named like a PodGroup of the cluster is a group
    of one written there, checked (FAIL with its reason, annotated on its own document, a JUnit
    case `ml/train (pod)`) or passed; the cluster's PodGroup, whose pod fits nowhere, is not
    the pull request's. It was not checked at all: '0/0 groups placed', exit 0, with 'no group
    written in jobs to check' (after 1b4b771 stopped it selecting the PodGroup)."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    podgroup = job_manifest("train", 1, 1).split("---\n", 1)[0]
    member = PR_POD.format(name="train-0", labels=", labels: {scheduling.x-k8s.io/pod-group: train}")
    cluster.write_text(CLUSTER + "---\n" + podgroup + "---\n" + member)
    jobs.mkdir()
    pod = jobs / "pod.yaml"
    pod.write_text(PR_POD.format(name="train", labels=""))
    text = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert text.exit_code == 1, text.output
    [failed, count] = text.stdout.splitlines()
    assert failed.startswith("FAIL ml/train (pod): ") and "nvidia.com/gpu" in failed and count == "0/1 groups placed"
    github = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "github")
    [error] = [line for line in github.stdout.splitlines() if line.startswith("::error")]
    assert error.startswith(f"::error file={pod},line=1,col=1,title=ml/train (pod) cannot be placed::"), github.output
    junit = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "junit")
    [case] = ElementTree.fromstring(junit.stdout).iter("testcase")
    assert (case.get("name"), case.get("file"), case.get("line")) == ("ml/train (pod)", str(pod), "1")
    failure = case.find("failure")
    assert failure is not None and (failure.text or "").startswith("ml/train (pod): 0/1 pods; ")
    # It fits: the gate passes, and the cluster's PodGroup that fits nowhere is not blamed.
    pod.write_text(PR_POD.format(name="train", labels="").replace("'64'", "'1'"))
    fits = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "junit")
    assert fits.exit_code == 0, fits.output
    assert junit_cases(fits.stdout) == ["ml/train (pod)"]


def test_a_pull_requests_podgroup_named_like_a_clusters_bare_pod_is_checked_and_not_the_pod(tmp_path: Path) -> None:
    """The other way round: the pull request's PodGroup and Job ml/train fit, and the
    cluster's pending bare pod ml/train, which fits nowhere, is not the pull request's."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER + "---\n" + PR_POD.format(name="train", labels=""))
    jobs.mkdir()
    (jobs / "train.yaml").write_text(job_manifest("train", 2, 4))
    result = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "junit")
    assert result.exit_code == 0, result.output
    [case] = ElementTree.fromstring(result.stdout).iter("testcase")
    assert (case.get("name"), case.get("file"), case.get("line")) == ("ml/train", str(jobs / "train.yaml"), "1")


def test_a_bare_pod_and_a_podgroup_of_one_name_fail_apart_where_each_is_written(tmp_path: Path) -> None:
    """Without a selection both are checked: each FAIL line, annotation and JUnit case names
    its own group (`ml/train (pod)` for the bare pod) and points at its own document; both
    read 'ml/train' and pointed at the PodGroup."""
    cluster = tmp_path / "cluster.yaml"
    podgroup = job_manifest("train", 1, 1).split("---\n", 1)[0]
    member = PR_POD.format(name="train-0", labels=", labels: {scheduling.x-k8s.io/pod-group: train}")
    cluster.write_text(CLUSTER + "---\n" + podgroup + "---\n" + member + "---\n" + PR_POD.format(name="train", labels=""))
    lines = cluster.read_text().splitlines()
    text = invoke("check", str(cluster))
    assert text.exit_code == 1
    assert sorted(line.split(":")[0] for line in text.stdout.splitlines() if line.startswith("FAIL ml/")) == [
        "FAIL ml/train", "FAIL ml/train (pod)"
    ]
    github = invoke("check", str(cluster), "-o", "github")
    errors = {
        line.split("title=")[1].split("::")[0]: int(line.split(",line=")[1].split(",")[0])
        for line in github.stdout.splitlines() if line.startswith("::error") and "ml/train" in line
    }
    assert set(errors) == {"ml/train cannot be placed", "ml/train (pod) cannot be placed"}
    assert lines[errors["ml/train cannot be placed"] :][:2] == ["kind: PodGroup", "metadata: {name: train, namespace: ml}"]
    assert lines[errors["ml/train (pod) cannot be placed"] :][:2] == ["kind: Pod", "metadata: {name: train, namespace: ml}"]
    junit = invoke("check", str(cluster), "-o", "junit")
    assert sorted(n for n in junit_cases(junit.stdout) if n.startswith("ml/")) == ["ml/train", "ml/train (pod)"]


@pytest.mark.parametrize("reverse", [False, True])
def test_a_group_split_over_files_is_annotated_at_its_first_pod_by_name_whatever_the_file_order(
    tmp_path: Path, reverse: bool
) -> None:
    """A Kueue pod group (no object of its own) and a pull request's pods joining a cluster
    PodGroup, each with pods in two files: the annotation is at the pod first by name, not the
    one the files given first list (helper-68: swapping the files moved it)."""
    kueue = ", labels: {{kueue.x-k8s.io/pod-group-name: grp}}, annotations: {{kueue.x-k8s.io/pod-group-total-count: '2'}}"
    joining = ", labels: {{scheduling.x-k8s.io/pod-group: train}}"
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER + "---\n" + job_manifest("train", 2, 1).split("---\n", 1)[0])
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for file, suffix in (("b.yaml", "b"), ("z.yaml", "a")):  # the pods first by name are in z.yaml
        pods = (PR_POD.format(name=f"{group}-{suffix}", labels=labels.format()) for group, labels in (("grp", kueue), ("train", joining)))
        (jobs / file).write_text("---\n".join(pods))
    files = [str(jobs / "b.yaml"), str(jobs / "z.yaml")]
    result = invoke("check", str(cluster), *(files[::-1] if reverse else files), "--groups-from", str(jobs), "-o", "github")
    assert result.exit_code == 1, result.output
    titles = {line.split("title=")[1].split(" cannot")[0]: line.split(",")[0] for line in result.stdout.splitlines()}
    assert titles == {"ml/grp": f"::error file={jobs / 'z.yaml'}", "ml/train": f"::error file={jobs / 'z.yaml'}"}

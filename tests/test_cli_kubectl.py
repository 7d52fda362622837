"""kubectl habits and CI formats: check's exit codes and outputs parsed back, -o wide,
help texts, completion, colour switches, and strict OpenAPI validation of what we emit."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml
from typer.testing import CliRunner

from gangplan.cli import app

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "snapshots" / "small.yaml")
runner = CliRunner()


def test_check_exits_1_and_lists_each_failure_with_its_reason() -> None:
    result = runner.invoke(app, ["check", SMALL])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FAIL ml/llm-pretrain: insufficient nvidia.com/gpu")
    assert lines[-1] == "7/8 groups placed"


def test_check_exits_0_when_the_selected_groups_are_placed() -> None:
    result = runner.invoke(app, ["check", SMALL, "--group", "ml/pytorch-ddp", "--group", "analytics/ray-tune"])
    assert result.exit_code == 0 and result.stdout == "2/2 groups placed\n"


def test_check_unknown_group_is_a_usage_error() -> None:
    result = runner.invoke(app, ["check", SMALL, "--group", "ml/nope"])
    assert result.exit_code == 2 and result.stderr.splitlines()[-1].startswith("error: --group ml/nope")


def test_check_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [\n")
    assert runner.invoke(app, ["check", str(bad)]).exit_code == 2


def test_check_github_annotations_point_at_the_podgroup_document() -> None:
    result = runner.invoke(app, ["check", SMALL, "--format", "github"])
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    match = re.fullmatch(r"::error file=(?P<file>[^,]+),line=(?P<line>\d+),col=(?P<col>\d+),title=(?P<title>[^:]+)::(?P<msg>.+)", line)
    assert match, line
    assert match["file"] == SMALL.replace(":", "%3A")
    text = Path(SMALL).read_text().splitlines()
    document = "\n".join(text[int(match["line"]) - 1 : int(match["line"]) + 12])
    assert "kind: PodGroup" in document or "PodGroup" in text[int(match["line"]) - 1]
    assert "name: llm-pretrain" in document
    assert match["title"] == "ml/llm-pretrain cannot be placed"
    assert match["msg"].startswith("insufficient nvidia.com/gpu")


def test_check_junit_report_has_one_case_per_group(tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    result = runner.invoke(app, ["check", SMALL, "--format", "junit", "--output-file", str(out)])
    assert result.exit_code == 1
    suite = ElementTree.parse(out).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "8" and suite.get("failures") == "1"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert len(cases) == 8
    failure = cases["ml/llm-pretrain"].find("failure")
    assert failure is not None and "insufficient nvidia.com/gpu" in failure.get("message", "")
    assert cases["ml/pytorch-ddp"].find("failure") is None
    assert all(case.get("file") == SMALL and case.get("line", "").isdigit() for case in cases.values())
    again = tmp_path / "again.xml"
    runner.invoke(app, ["check", SMALL, "--format", "junit", "--output-file", str(again)])
    assert again.read_bytes() == out.read_bytes()  # deterministic, time included
    planned = json.loads(runner.invoke(app, ["plan", SMALL, "-o", "plan"]).stdout)
    assert suite.get("time") == f"{planned['solver']['deterministicTime']:.3f}"


def test_wide_output_adds_columns() -> None:
    result = runner.invoke(app, ["plan", SMALL, "-o", "wide"])
    header = result.stdout.splitlines()[0].split()
    assert header[:5] == ["GROUP", "KIND", "PRIORITY", "STATUS", "PODS"]
    assert {"JOBGROUP", "RUNNING", "PENDING", "SCHEDULED", "NODES"} <= set(header)
    row = next(line for line in result.stdout.splitlines() if line.startswith("ml/pytorch-ddp"))
    assert "node-gpu-" in row


@pytest.mark.parametrize("command", ["plan", "check", "diff", "explain", "verify", "topology", "generate"])
def test_every_command_has_help_with_an_example(command: str) -> None:
    """Each example on its own line, as typed (not folded into the text around it), and
    options named by what they take (NAME=FILE, KEY[,KEY...]), not by Python types."""
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and any(line.strip() in ("Example:", "Examples:") for line in lines)
    examples = [line for line in lines if line.startswith("    gangplan ")]
    assert examples and all(line.count("gangplan ") == 1 for line in examples)
    options = [line for line in lines if line.lstrip().startswith("--")]
    assert options and not any("<list[str]>" in line or "<str>" in line for line in options)
    # The usage line and the arguments too, as kubectl's: `SNAPSHOT...`, `GROUP`, not `{GROUP}
    # {SNAPSHOT}...` and `SNAPSHOT <list[str]>` (user review); files are FILE, not <path>.
    usage = lines[0]
    assert usage.startswith("Usage: ") and "{" not in usage and "<" not in usage
    if command != "generate":
        assert usage.endswith(("[OPTIONS] SNAPSHOT...", "[OPTIONS] [SNAPSHOT]...", "[OPTIONS] GROUP SNAPSHOT..."))
        arguments = lines[lines.index("Arguments:") + 1 : lines.index("Options:")]
        assert any(line.startswith("  SNAPSHOT...  ") for line in arguments) and not any("<" in line for line in arguments)
    assert not any("<path>" in line for line in lines)
    # -h as kubectl takes it (was: "No such option: -h")
    assert runner.invoke(app, [command, "-h"], env={"COLUMNS": "200"}).stdout == result.stdout


def test_shell_completion_script() -> None:
    # --show-completion detects the parent shell, which a CI job may not have: ask for bash.
    result = runner.invoke(app, [], env={"_GANGPLAN_COMPLETE": "source_bash"}, prog_name="gangplan")
    assert result.exit_code == 0 and "complete -o default -F _gangplan_completion gangplan" in result.stdout


def test_no_color_and_plain_output_when_piped() -> None:
    for args, env in ((["--no-color", "plan", SMALL], {}), (["plan", SMALL], {"NO_COLOR": "1"})):
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 0 and "\x1b[" not in result.stdout and "\x1b[" not in result.stderr


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("output", ["table", "wide"])
def test_the_table_on_a_narrow_terminal_keeps_every_column(monkeypatch: pytest.MonkeyPatch, output: str) -> None:
    """On an 80-column terminal the table fitted its width: PODS and REASON went, the other
    columns were cut. kubectl prints whole rows and lets the terminal wrap them."""
    import gangplan.cli as cli

    piped = runner.invoke(app, ["plan", SMALL, "--solver", "greedy", "-o", output]).stdout
    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    monkeypatch.setenv("COLUMNS", "80")
    result = runner.invoke(app, ["plan", SMALL, "--solver", "greedy", "-o", output])
    assert result.exit_code == 0 and "\x1b[" in result.stdout  # styled, as on a terminal
    assert ANSI.sub("", result.stdout) == piped
    assert max(map(len, piped.splitlines())) > 80 and "PODS" in piped and "REASON" in piped


def test_no_color_holds_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table re-emitted the recorded styles on a terminal (a bold header, red unplaced rows)
    whatever --no-color or NO_COLOR said; diff honoured them."""
    import gangplan.cli as cli

    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    plain = runner.invoke(app, ["plan", SMALL, "--solver", "greedy"], env={"NO_COLOR": None})
    assert "\x1b[" in plain.stdout
    for args, env in ((["--no-color", "plan", SMALL], {"NO_COLOR": None}), (["plan", SMALL], {"NO_COLOR": "1"})):
        result = runner.invoke(app, [*args, "--solver", "greedy"], env=env)
        assert result.exit_code == 0 and "\x1b[" not in result.stdout
        assert result.stdout == ANSI.sub("", plain.stdout)


def test_on_a_terminal_only_the_unplaced_rows_are_red(monkeypatch: pytest.MonkeyPatch) -> None:
    """README: the table is coloured on a terminal, "unplaced rows red"; a placed row or a
    running group's is not, so the eye finds what needs attention."""
    import gangplan.cli as cli

    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    result = runner.invoke(app, ["plan", SMALL, "--solver", "greedy"], env={"NO_COLOR": None})
    assert result.exit_code == 0
    rows = result.stdout.splitlines()[1:]
    red = [ANSI.sub("", row).split()[0] for row in rows if "\x1b[31m" in row]
    assert red == ["ml/llm-pretrain"]  # the one group check reports as FAIL


def test_output_file_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    out = tmp_path / "bindings.json"
    out.write_text("previous")
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {}\n")
    assert runner.invoke(app, ["plan", str(bad), "-o", "json", "--output-file", str(out)]).exit_code == 2
    assert out.read_text() == "previous"
    assert runner.invoke(app, ["plan", SMALL, "-o", "json", "--output-file", str(out)]).exit_code == 0
    assert out.read_text().startswith("{")
    assert {p.name for p in tmp_path.iterdir()} == {"bad.yaml", "bindings.json"}  # no temporary files left


# ----------------------------------------------------------------- strict OpenAPI validation

kubernetes_validate = pytest.importorskip("kubernetes_validate")


def _versions() -> tuple[str, str]:
    from kubernetes_validate.utils import all_versions

    versions = sorted(set(all_versions()), key=lambda v: tuple(int(x) for x in v.split(".")))
    return versions[0], versions[-1]


@pytest.mark.parametrize("snapshot", sorted((ROOT / "snapshots").glob("*.yaml")), ids=lambda p: p.name)
def test_every_emitted_binding_validates_strictly(snapshot: Path) -> None:
    result = runner.invoke(app, ["plan", str(snapshot), "-o", "yaml", "--solver", "greedy"])
    items = yaml.safe_load(result.stdout)["items"]
    assert items
    for version in _versions():
        for item in items:
            kubernetes_validate.validate(item, version, strict=True)


def test_plan_report_writes_a_self_contained_page(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["plan", SMALL, "--report", str(page), "-o", "name"])
    assert result.exit_code == 0 and result.stdout.startswith("binding/")
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "ml/pytorch-ddp" in html and "ml/llm-pretrain" in html
    assert "https://" not in html and "http://" not in html
    for node in ("node-cpu-01", "node-gpu-04"):
        assert node in html


# ----------------------------------------------------------------- diff

def _plan_file(tmp_path: Path, name: str, *options: str) -> str:
    out = tmp_path / name
    result = runner.invoke(app, ["plan", SMALL, "-o", "plan", "--output-file", str(out), *options])
    assert result.exit_code == 0, result.output
    return str(out)


def test_diff_snapshot_against_plan_lists_every_placement(tmp_path: Path) -> None:
    plan = _plan_file(tmp_path, "plan.json")
    placements = json.loads(Path(plan).read_text())["placements"]
    result = runner.invoke(app, ["diff", SMALL, "--plan", plan])
    assert result.exit_code == 0
    added = [line for line in result.stdout.splitlines() if line.startswith("+ pod ")]
    assert len(added) == len(placements) > 0
    assert "  group ml/llm-pretrain stays pending: insufficient" in result.stdout
    assert "\x1b[" not in result.stdout  # plain when piped
    data = json.loads(runner.invoke(app, ["diff", SMALL, "--plan", plan, "-o", "json"]).stdout)
    assert data["kind"] == "PlanDiff" and len(data["pods"]) == len(placements)


def test_diff_two_plans_and_exit_code(tmp_path: Path) -> None:
    a = _plan_file(tmp_path, "a.json")
    same = runner.invoke(app, ["diff", "--plan", a, "--plan", a, "--exit-code"])
    assert same.exit_code == 0 and same.stdout == ""
    bindings = yaml.safe_load(runner.invoke(app, ["plan", SMALL, "-o", "yaml"]).stdout)
    moved = bindings["items"][0]
    moved["target"]["name"] = "node-cpu-07"
    b = tmp_path / "b.yaml"
    b.write_text(yaml.safe_dump(bindings))
    differs = runner.invoke(app, ["diff", "--plan", a, "--plan", str(b), "--exit-code"])
    assert differs.exit_code == 1
    name = f"{moved['metadata']['namespace']}/{moved['metadata']['name']}"
    assert any(line.startswith(f"~ pod {name} ") and "-> node-cpu-07" in line for line in differs.stdout.splitlines())


def test_diff_needs_a_snapshot_or_two_plans(tmp_path: Path) -> None:
    a = _plan_file(tmp_path, "a.json")
    assert runner.invoke(app, ["diff", "--plan", a]).exit_code == 2
    assert runner.invoke(app, ["diff", SMALL]).exit_code == 2


def test_diff_of_two_plans_refuses_a_gang_it_has_no_snapshot_to_add_to(tmp_path: Path) -> None:
    """--gang adds pods to a snapshot; between two plans there is none, so the flag would be
    dropped unseen: bad usage (exit 2, one error line), not a diff that ignored it."""
    a = _plan_file(tmp_path, "a.json")
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec: {containers: [{name: c, image: x}]}\n")
    result = runner.invoke(app, ["diff", "--plan", a, "--plan", a, "--gang", f"train={job}"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == "error: diff --gang adds to a snapshot: give the snapshot too"


def test_diff_is_not_coloured_on_a_terminal_when_no_color_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR (no-color.org) and --no-color hold for diff's lines as for the table: on a
    terminal the lines are coloured, with either switch they are the same lines, plain.
    FORCE_COLOR makes rich take the test runner's stdout for the terminal _is_terminal says it is."""
    import gangplan.cli as cli

    a = _plan_file(tmp_path, "a.json")
    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    coloured = runner.invoke(app, ["diff", SMALL, "--plan", a], env={"NO_COLOR": None, "FORCE_COLOR": "1"})
    assert coloured.exit_code == 0 and "\x1b[" in coloured.stdout
    switches = ((["--no-color", "diff", SMALL, "--plan", a], {"NO_COLOR": None}), (["diff", SMALL, "--plan", a], {"NO_COLOR": "1"}))
    for args, env in switches:
        plain = runner.invoke(app, args, env={**env, "FORCE_COLOR": "1"})
        assert plain.exit_code == 0 and "\x1b[" not in plain.stdout, args
        assert plain.stdout == ANSI.sub("", coloured.stdout)


def test_plan_diff_goes_to_stderr(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", SMALL, "-o", "json", "--diff"])
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays the bindings alone
    assert "+ pod " in result.stderr and "@@ groups @@" in result.stderr
    quiet = runner.invoke(app, ["-q", "plan", SMALL, "-o", "json", "--diff"])  # asked for: not silenced
    assert quiet.exit_code == 0 and quiet.stdout == result.stdout
    assert "@@ groups @@" in quiet.stderr and "groups placed" not in quiet.stderr


def test_every_emitted_pod_validates_strictly(tmp_path: Path) -> None:
    gang = tmp_path / "gang.yaml"
    gang.write_text(
        "apiVersion: extensions/v1beta1\nkind: Gang\nmetadata: {name: mygang, namespace: ml}\nspec:\n"
        "  replicationControllers:\n  - name: myapp\n    replicas: 2\n    template:\n"
        "      metadata: {labels: {name: myapp}}\n      spec:\n        containers:\n"
        "        - {name: myapp1, image: myapp1, resources: {requests: {cpu: 100m}}, ports: [{containerPort: 6222}]}\n"
        "  pods:\n  - name: mydb\n    labels: {name: mydb}\n    containers:\n"
        "    - {name: mydb, image: mydb, ports: [{containerPort: 6224}]}\n"
    )
    result = runner.invoke(app, ["plan", SMALL, str(gang), "-o", "json"])
    assert result.exit_code == 0, result.output
    pods = [i for i in json.loads(result.stdout)["items"] if i["kind"] == "Pod"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["myapp-0", "myapp-1", "mydb"]
    for version in _versions():
        for pod in pods:
            kubernetes_validate.validate(pod, version, strict=True)


def test_status_output_is_each_podgroup_with_its_status() -> None:
    result = runner.invoke(app, ["plan", SMALL, "-o", "status"])
    assert result.exit_code == 0
    items = {i["metadata"]["name"]: i for i in yaml.safe_load(result.stdout)["items"]}
    assert all(i["kind"] == "PodGroup" for i in items.values())
    stuck = items["llm-pretrain"]["status"]
    assert stuck["phase"] == "Scheduling"  # all 5 pods exist and wait, as its controller says
    (condition,) = [c for c in stuck["conditions"] if c["type"] == "Unschedulable"]
    assert condition["status"] == "True" and condition["reason"] == "NotEnoughResources"
    assert "nvidia.com/gpu" in condition["message"]
    assert items["pytorch-ddp"]["status"]["phase"] == "Scheduling"
    assert items["pytorch-ddp"]["status"]["scheduled"] == 4


def test_no_progress_display_when_stderr_is_not_a_terminal() -> None:
    result = runner.invoke(app, ["plan", str(ROOT / "snapshots" / "gpu-cluster.yaml"), "-o", "name", "--time-limit", "3"])
    assert result.exit_code == 0 and "CP-SAT" not in result.stderr and "stage" not in result.stderr


def test_wide_output_is_one_line_per_group_when_piped(tmp_path: Path) -> None:
    """Reasons run long (a 'lost to' list); folded, a row became two lines and broke grep/awk."""
    from gangplan.generate import generate

    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(generate(shape=(1, 2, 2, 4), groups=10, seed=3)))
    result = runner.invoke(app, ["plan", str(path), "-o", "wide"])
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and len(lines) == 1 + 10
    assert max(len(line) for line in lines) > 400  # the old fixed width, which folded these


def test_check_with_nothing_it_reads_says_so(tmp_path: Path) -> None:
    """A training job of a kind gangplan skips (a PyTorchJob) leaves check nothing to check: the
    gate stays green (no group failed), but not silently."""
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4"}}},
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "train", "namespace": "ml"},
         "spec": {}},
    ]))
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 0 and result.stdout == "0/0 groups placed\n"
    assert "warning: no pending group to check; gangplan does not read these inputs: PyTorchJob" in result.stderr
    running = runner.invoke(app, ["check", SMALL, "--group", "ml/pytorch-ddp"])
    assert "no pending group to check" not in running.stderr


def test_the_topology_cell_names_a_domain_unambiguously() -> None:
    """`tor tor-2` repeats under miniPods: the first domain shown is its whole path; a group
    with only a hostname term shows its node (it showed nothing) (second user review)."""
    from gangplan.cli import _domains_cell
    from gangplan.plan import GroupOutcome

    def cell(domains: dict[str, tuple[str, ...]]) -> str:
        return _domains_cell(GroupOutcome("ml/g", "ml/g", True, 0, 2, 0, 2, 2, domains=domains))

    assert cell({"example.com/tor": ("mp-b/tor-2",), "node": ("n1", "n2")}) == "tor mp-b/tor-2"
    assert cell({"example.com/minipod": ("mp-a",), "example.com/tor": ("mp-a/t1", "mp-a/t2")}) == "minipod mp-a · tor ×2"
    assert cell({"example.com/minipod": ("mp-a",), "example.com/tor": ("mp-a/t1",)}) == "minipod mp-a · tor t1"
    assert cell({"node": ("n3",)}) == "node n3"
    assert cell({}) == ""


def test_yaml_output_quotes_what_kubectl_would_read_as_another_type() -> None:
    """review 18 K F1/F3: PyYAML left y, n, 1e3, 1e-4 and 0o17 plain, which kubectl's go-yaml
    reads as booleans and numbers (an env value LEARNING_RATE "1e-4" became 0.0001), and
    libyaml escaped characters beyond the BMP where PyYAML's emitter does not."""
    from gangplan.render import to_yaml

    text = to_yaml({"values": ["y", "N", "1e3", "1e-4", "1E5", "0o17", "0x1F", "1_000", "+1", "abc", "e5", "v1", "🚀"]})
    assert text == (
        "values:\n- 'y'\n- 'N'\n- '1e3'\n- '1e-4'\n- '1E5'\n- '0o17'\n- '0x1F'\n- '1_000'\n- '+1'\n- abc\n- e5\n- v1\n- 🚀\n"
    )
    # go-yaml drops underscores before it reads a number (review 18 L F7); "_" alone is a string.
    assert to_yaml(["0_x1", "1_0e5", "1_0.5e3", "_", "a_1"]) == "- '0_x1'\n- '1_0e5'\n- '1_0.5e3'\n- _\n- a_1\n"
    assert yaml.safe_load(text)["values"][0] == "y"


def test_yaml_output_writes_each_object_whole_without_anchors(tmp_path: Path) -> None:
    """Pods made from one template share their labels and containers in memory: written as
    they were, PyYAML anchored the first pod's and aliased them in the next (`labels: *id001`),
    which kubectl never writes and which leaves an item cut out of the List without its
    fields. -o yaml is the same List as -o json, every item whole."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: only, labels: {kubernetes.io/hostname: only}}\n"
        "status:\n  allocatable: {cpu: '8', memory: 32Gi, pods: '110'}\n  conditions: [{type: Ready, status: 'True'}]\n"
    )
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  parallelism: 2\n"
        "  template:\n    spec:\n      schedulingGates: [{name: kueue.x-k8s.io/admission}]\n      restartPolicy: Never\n"
        "      containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
    )
    as_json = runner.invoke(app, ["plan", str(cluster), "--gang", f"g={job}", "-o", "json"])
    as_yaml = runner.invoke(app, ["plan", str(cluster), "--gang", f"g={job}", "-o", "yaml"])
    assert as_json.exit_code == as_yaml.exit_code == 0, as_yaml.output
    items = yaml.safe_load(as_yaml.stdout)["items"]
    assert len(items) == 2 and yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)
    events = list(yaml.parse(as_yaml.stdout))
    assert not any(isinstance(e, yaml.AliasEvent) or getattr(e, "anchor", None) for e in events)



@pytest.mark.parametrize("output", ["json", "yaml", "name", "plan"])
def test_every_text_output_ends_its_last_line(output: str) -> None:
    """A POSIX text file ends each line with a newline, kubectl's printers end theirs so, and
    `cat`, `wc -l` and `read` rely on it: one newline at the end, not none or two."""
    result = runner.invoke(app, ["plan", SMALL, "-o", output, "--solver", "greedy"])
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("\n") and not result.stdout.endswith("\n\n")

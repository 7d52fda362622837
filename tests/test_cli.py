"""The CLI end to end through typer's CliRunner: every shipped snapshot plans, and verifies."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from typer.testing import CliRunner, Result

from gangplan.cli import app
from gangplan.loader import load_snapshot
from gangplan.plan import plan_from_dict
from gangplan.verify import verify

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = sorted((ROOT / "snapshots").glob("*.yaml"))
runner = CliRunner()


def invoke(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def plan_json(*args: str) -> dict:
    result = invoke("plan", *args, "-o", "plan")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.name)
@pytest.mark.parametrize("solver", ["cp-sat", "greedy"])
def test_every_shipped_snapshot_plans_and_verifies(snapshot: Path, solver: str, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = invoke("plan", str(snapshot), "-o", "plan", "--solver", solver, "--output-file", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["kind"] == "Plan" and data["schemaVersion"] == 1
    assert data["solver"]["status"] in ("OPTIMAL", "FEASIBLE", "GREEDY")
    assert data["placements"], "every shipped snapshot has something to place"
    assert any(not g["placed"] for g in data["groups"]), "every shipped snapshot has a group that cannot fit"
    placements = plan_from_dict(data).placements
    assert verify(load_snapshot([str(snapshot)]), placements, tuple(data["topology"]["levels"])).ok
    checked = invoke("verify", str(snapshot), "--plan", str(out))
    assert checked.exit_code == 0, checked.output


def test_a_flat_plan_records_its_levels_and_verifies_by_them(tmp_path: Path) -> None:
    """``--levels ''`` plans the gpu-cluster as flat, its topology terms ignored with a
    warning. The plan records that it has no levels, and verify checks it by those, not by
    the levels it would infer from the snapshot (a Bindings list records none, so it does)."""
    snapshot = str(ROOT / "snapshots" / "gpu-cluster.yaml")
    out = tmp_path / "plan.json"
    result = invoke("plan", snapshot, "--levels", "", "-o", "plan", "--output-file", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["topology"]["levels"] == [] and any("is not a topology level" in w for w in data["warnings"])
    checked = invoke("verify", snapshot, "--plan", str(out))
    assert checked.exit_code == 0
    # It passes, but not in silence: the terms it leaves unchecked are said (user review C).
    assert "warning: the Plan's levels (none) are not the snapshot's (network.example.com/bigpod, network.example.com/minipod, " \
        "network.example.com/tor); checked on the Plan's; --levels network.example.com/bigpod,network.example.com/minipod," \
        "network.example.com/tor checks them on the snapshot's" in checked.stderr
    assert "levels" not in invoke("verify", snapshot, "--plan", str(out), "--levels", "").stderr
    bindings = tmp_path / "bindings.json"
    assert invoke("plan", snapshot, "--levels", "", "-o", "json", "--output-file", str(bindings)).exit_code == 0
    inferred = invoke("verify", snapshot, "--plan", str(bindings))
    assert inferred.exit_code == 1 and "required-topology" in inferred.stdout
    assert invoke("verify", snapshot, "--plan", str(bindings), "--levels", "").exit_code == 0


def test_verify_suggests_levels_a_shell_can_pass_when_the_snapshot_infers_none(tmp_path: Path) -> None:
    """A plan made with --levels on a snapshot whose groups name no level: verify's warning
    suggested '--levels ' with no value, a usage error; it says --levels '' now."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    out = tmp_path / "plan.json"
    made = invoke("plan", snapshot, "--levels", "topology.kubernetes.io/zone", "-o", "plan", "--output-file", str(out))
    assert made.exit_code == 0, made.output
    assert json.loads(out.read_text())["topology"]["levels"]
    checked = invoke("verify", snapshot, "--plan", str(out))
    assert "are not the snapshot's (none); checked on the Plan's; --levels '' checks them on the snapshot's" in checked.stderr
    assert invoke("verify", snapshot, "--plan", str(out), "--levels", "").exit_code == 0


def test_a_binding_whose_target_is_not_a_node_is_bad_input(tmp_path: Path) -> None:
    """The API server refuses it ("must be empty or Node"); verify said ok (user review C)."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    data = json.loads(invoke("plan", snapshot, "-o", "json").stdout)
    data["items"][1]["target"]["kind"] = "Pod"
    out = tmp_path / "bindings.json"
    out.write_text(json.dumps(data, indent=1))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 2
    line = 1 + next(i for i, text in enumerate(out.read_text().splitlines()) if '"kind": "Pod"' in text)
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {out}:{line}:13: items[1].target.kind: a Binding's target must be a Node, got 'Pod'"
    )


def test_a_plan_whose_levels_are_not_a_list_of_keys_is_bad_input(tmp_path: Path) -> None:
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    data = plan_json(snapshot)
    data["topology"]["levels"] = "tor"  # read as characters, it would be three levels
    out = tmp_path / "plan.json"
    out.write_text(json.dumps(data, indent=1))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 2
    line = 1 + next(i for i, text in enumerate(out.read_text().splitlines()) if '"levels": "tor"' in text)
    assert result.stderr.strip().splitlines()[-1] == f"error: {out}:{line}:13: topology.levels: expected a list of label keys"


def test_cp_sat_is_never_worse_than_greedy_on_the_gpu_cluster() -> None:
    snapshot = str(ROOT / "snapshots" / "gpu-cluster.yaml")
    default = plan_json(snapshot)
    greedy = plan_json(snapshot, "--solver", "greedy")
    key = [o["value"] if o["sense"] == "maximize" else -o["value"] for o in default["solver"]["objective"]]
    base = [o["value"] if o["sense"] == "maximize" else -o["value"] for o in greedy["solver"]["objective"]]
    assert key >= base


def test_a_greedy_plan_cp_sat_proves_optimal_is_reported_optimal() -> None:
    # On the small snapshot greedy's plan is already optimal; CP-SAT proves it and keeps it.
    data = plan_json(str(ROOT / "snapshots" / "small.yaml"))
    assert (data["solver"]["status"], data["solver"]["gap"]) == ("OPTIMAL", 0.0)
    greedy = plan_json(str(ROOT / "snapshots" / "small.yaml"), "--solver", "greedy")
    assert [o["value"] for o in data["solver"]["objective"]] == [o["value"] for o in greedy["solver"]["objective"]]
    assert all(o["bound"] == o["value"] for o in data["solver"]["objective"])


def test_default_mode_output_is_byte_identical() -> None:
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    for output in ("json", "yaml", "name", "table"):
        first = invoke("plan", snapshot, "-o", output)
        second = invoke("plan", snapshot, "-o", output)
        assert first.exit_code == second.exit_code == 0
        assert first.stdout == second.stdout and first.stdout
    a, b = plan_json(snapshot), plan_json(snapshot)
    a["solver"].pop("wallTime"), b["solver"].pop("wallTime")
    assert a == b


def test_bindings_list_is_what_kubectl_create_accepts() -> None:
    snapshot = ROOT / "snapshots" / "small.yaml"
    result = invoke("plan", str(snapshot), "-o", "yaml")
    assert result.exit_code == 0
    data = yaml.safe_load(result.stdout)
    assert data["apiVersion"] == "v1" and data["kind"] == "List"
    items = data["items"]
    assert items and all(i["apiVersion"] == "v1" and i["kind"] == "Binding" for i in items)
    keys = [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items]
    assert keys == sorted(keys)
    pods = {p.key: p for p in load_snapshot([str(snapshot)]).pods}
    for item in items:
        pod = pods[f"{item['metadata']['namespace']}/{item['metadata']['name']}"]
        assert pod.node_name is None
        assert item["metadata"].get("uid") == pod.uid
        assert item["target"]["kind"] == "Node" and item["target"]["name"]
    names = invoke("plan", str(snapshot), "-o", "name").stdout.splitlines()
    assert names == [f"binding/{i['metadata']['name']}" for i in items]


def test_table_has_a_row_per_group_and_summary_on_stderr() -> None:
    result = invoke("plan", str(ROOT / "snapshots" / "small.yaml"))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["GROUP", "KIND", "PRIORITY", "STATUS"]
    assert "ml/llm-pretrain" in result.stdout and "Unplaced" in result.stdout
    assert "groups placed" not in result.stdout
    assert "groups placed" in result.stderr and "cp-sat" in result.stderr


def test_plan_reads_stdin() -> None:
    text = (ROOT / "snapshots" / "small.yaml").read_text()
    from_stdin = invoke("plan", "-", "-o", "json", input=text)
    from_file = invoke("plan", str(ROOT / "snapshots" / "small.yaml"), "-o", "json")
    assert from_stdin.exit_code == 0 and from_stdin.stdout == from_file.stdout


def test_verify_reports_a_broken_plan(tmp_path: Path) -> None:
    snapshot = ROOT / "snapshots" / "small.yaml"
    bindings = yaml.safe_load(invoke("plan", str(snapshot), "-o", "yaml").stdout)
    for item in bindings["items"]:
        item["target"]["name"] = "node-cpu-08"  # the cordoned node
    broken = tmp_path / "bindings.yaml"
    broken.write_text(yaml.safe_dump(bindings))
    result = invoke("verify", str(snapshot), "--plan", str(broken))
    assert result.exit_code == 1
    assert "unschedulable" in result.stdout


def test_verify_takes_the_plan_as_an_argument_as_design_names_it(tmp_path: Path) -> None:
    """DESIGN section 4 says `verify SNAPSHOT PLAN`; only --plan was taken, and the plan file
    was read as a snapshot (a skipped Plan) before "Missing option '--plan'"."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    made, bindings, other = tmp_path / "plan.json", tmp_path / "bindings.yaml", tmp_path / "other.json"
    assert invoke("plan", snapshot, "--solver", "greedy", "-o", "plan", "--output-file", str(made)).exit_code == 0
    assert invoke("plan", snapshot, "--solver", "greedy", "-o", "yaml", "--output-file", str(bindings)).exit_code == 0
    for plan in (made, bindings):
        expected = invoke("verify", snapshot, "--plan", str(plan))
        assert expected.exit_code == 0, expected.stderr
        for args in ([snapshot, str(plan)], [str(plan), snapshot]):
            result = invoke("verify", *args)
            assert result.exit_code == 0 and result.stdout == expected.stdout and result.stderr == expected.stderr, result.stderr
    other.write_text(made.read_text())
    # Both plan files named, in the order given, whichever one was taken for the plan (helper reviews).
    for args in ([str(other), str(made)], [str(made), str(other)]):
        twice = invoke("verify", snapshot, *args)
        assert twice.exit_code == 2 and twice.stderr.splitlines()[-1] == (
            f"error: {args[0]} and {args[1]} both hold a plan; name the one to check with --plan FILE"
        )
    piped = invoke("verify", snapshot, "-", str(made), input=bindings.read_text())
    assert piped.exit_code == 2 and piped.stderr.splitlines()[-1] == (
        f"error: - (stdin) and {made} both hold a plan; name the one to check with --plan FILE"
    )
    none = invoke("verify", snapshot)
    assert none.exit_code == 2 and none.stderr == (
        "error: verify needs a plan: verify SNAPSHOT... PLAN, or --plan FILE (a Plan or a List of Bindings; - for stdin)\n"
    )
    alone = invoke("verify", str(made))
    assert alone.exit_code == 2 and "give the snapshot the plan was made from too" in alone.stderr
    twice_named = invoke("verify", str(made), "--plan", str(made))
    assert twice_named.exit_code == 2 and twice_named.stderr == f"error: {made} is the plan; give the snapshot it was made from too\n"
    # A plan kept in a snapshot folder is skipped as the snapshot is read, and not looked for.
    dump = tmp_path / "dump"
    (dump / "sub").mkdir(parents=True)
    (dump / "small.yaml").write_text(Path(snapshot).read_text())
    (dump / "sub" / "plan.json").write_text(made.read_text())
    in_folder = invoke("verify", str(dump))
    assert in_folder.exit_code == 2 and in_folder.stderr.splitlines()[-1].endswith(
        "; a folder is read as snapshot files, not searched for one"
    ), in_folder.stderr
    assert invoke("verify", str(dump), "--plan", str(dump / "sub" / "plan.json")).exit_code == 0
    in_folder_too = invoke("verify", str(dump), str(made))
    assert in_folder_too.exit_code == 2 and in_folder_too.stderr.splitlines()[-1] == (
        f"error: {dump / 'sub' / 'plan.json'} and {made} both hold a plan; name the one to check with --plan FILE"
    )


def test_a_plan_linked_into_a_snapshot_folder_is_named_by_its_place_there(tmp_path: Path) -> None:
    """A folder's file is named where the folder holds it, as the loader names it: a link to a
    plan kept elsewhere read 'dump/../plan.json', a path that names no file (helper reviews)."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    kept, made, dump = tmp_path / "kept" / "plan.json", tmp_path / "plan.json", tmp_path / "dump"
    kept.parent.mkdir()
    dump.mkdir()
    assert invoke("plan", snapshot, "--solver", "greedy", "-o", "plan", "--output-file", str(made)).exit_code == 0
    kept.write_text(made.read_text())
    (dump / "small.yaml").write_text(Path(snapshot).read_text())
    (dump / "link.json").symlink_to(kept)
    for command, advice in (("verify", "name the one to check with --plan FILE"), ("diff", "compare two plans with --plan A --plan B")):
        result = invoke(command, str(dump), str(made))
        assert result.exit_code == 2 and result.stderr.splitlines()[-1] == (
            f"error: {dump / 'link.json'} and {made} both hold a plan; {advice}"
        ), result.stderr


def test_verify_and_diff_find_a_plan_piped_on_stdin_or_a_lone_binding(tmp_path: Path) -> None:
    """`gangplan plan S -o json | gangplan verify S -` read the plan as a second snapshot and
    said "verify needs a plan"; so did a file holding one bare Binding, which --plan took."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    made = invoke("plan", snapshot, "--solver", "greedy", "-o", "json")
    assert made.exit_code == 0
    for command in ("verify", "diff"):
        expected = invoke(command, snapshot, "--plan", "-", input=made.stdout)
        assert expected.exit_code == 0, expected.stderr
        for args in ([snapshot, "-"], ["-", snapshot]):
            piped = invoke(command, *args, input=made.stdout)
            assert piped.exit_code == 0 and piped.stdout == expected.stdout, piped.stderr
    snapshot_piped = invoke("verify", "-", snapshot, input=Path(snapshot).read_text())
    assert snapshot_piped.exit_code == 2 and snapshot_piped.stderr.splitlines()[-1].startswith("error: verify needs a plan: ")
    # Told that stdin was looked at: the table piped by mistake, or nothing at all.
    for piped in (invoke("plan", snapshot).stdout, ""):
        wrong = invoke("verify", snapshot, "-", input=piped)
        assert wrong.exit_code == 2 and wrong.stderr.splitlines()[-1].endswith("; - (stdin) holds neither"), wrong.stderr
    binding = next(item for item in json.loads(made.stdout)["items"] if item["kind"] == "Binding")
    lone = tmp_path / "one.json"
    lone.write_text(json.dumps(binding))
    expected = invoke("verify", snapshot, "--plan", str(lone))  # one pod of a gang: a violation
    found = invoke("verify", snapshot, str(lone))
    assert expected.exit_code == found.exit_code == 1 and "min-member" in found.stdout and found.stdout == expected.stdout


def test_diff_takes_the_plan_as_an_argument_as_verify_does(tmp_path: Path) -> None:
    """`verify SNAPSHOT PLAN` found the plan among its arguments; `diff SNAPSHOT PLAN` was refused."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    made, other = tmp_path / "plan.json", tmp_path / "other.json"
    assert invoke("plan", snapshot, "--solver", "greedy", "-o", "plan", "--output-file", str(made)).exit_code == 0
    expected = invoke("diff", snapshot, "--plan", str(made))
    assert expected.exit_code == 0 and "placed" in expected.stdout, expected.stderr
    for args in ([snapshot, str(made)], [str(made), snapshot]):
        result = invoke("diff", *args)
        assert result.exit_code == 0 and result.stdout == expected.stdout, result.stderr
    other.write_text(made.read_text())
    two = invoke("diff", str(other), str(made))
    assert two.exit_code == 2 and two.stderr.splitlines()[-1] == (
        f"error: {other} and {made} both hold a plan; compare two plans with --plan A --plan B"
    )
    none = invoke("diff", snapshot)
    assert none.exit_code == 2 and none.stderr.splitlines()[-1].startswith("error: diff needs a plan: diff SNAPSHOT... PLAN")
    alone = invoke("diff", str(made))
    assert alone.exit_code == 2 and "give the snapshot the plan was made from too" in alone.stderr
    planned = invoke("plan", str(made))
    assert "warning: the input holds Plan objects and no cluster" in planned.stderr
    assert "warning: the input holds" not in invoke("plan", snapshot).stderr


def test_explain_takes_the_group_after_the_snapshot_too(tmp_path: Path) -> None:
    """`explain SNAPSHOT GROUP` said "GROUP: no such file or directory", having read the
    snapshot's path as the group's name."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    expected = invoke("explain", "ml/llm-pretrain", snapshot, "--solver", "greedy")
    assert expected.exit_code == 0 and "not placed: insufficient nvidia.com/gpu" in expected.stdout, expected.stderr
    swapped = invoke("explain", snapshot, "ml/llm-pretrain", "--solver", "greedy")
    assert swapped.exit_code == 0 and swapped.stdout == expected.stdout, swapped.stderr
    folder = tmp_path / "cluster"
    folder.mkdir()
    (folder / "small.yaml").write_text(Path(snapshot).read_text())
    assert invoke("explain", str(folder), "llm-pretrain", "--solver", "greedy").stdout == expected.stdout
    # Two paths that name nothing: which is the group is not known, so neither is taken for it.
    unclear = invoke("explain", snapshot, "ml/llm-pretrain", str(tmp_path / "absent.yaml"))
    assert unclear.exit_code == 2 and "no such file or directory" in unclear.stderr
    typo = invoke("explain", snapshot, "ml/llm-pretrian", "--solver", "greedy")
    assert typo.exit_code == 2 and "ml/llm-pretrain" in typo.stderr, typo.stderr
    # stdin, or a snapshot's name mistyped, first: the typo is named, not the group.
    piped = invoke("explain", "-", "ml/llm-pretrain", "--solver", "greedy", input=Path(snapshot).read_text())
    assert piped.exit_code == 0 and piped.stdout == expected.stdout, piped.stderr
    mistyped = invoke("explain", str(tmp_path / "smal.yaml"), "ml/llm-pretrain")
    assert mistyped.exit_code == 2 and mistyped.stderr == f"error: {tmp_path / 'smal.yaml'}: no such file or directory\n"


def test_explain_given_a_pod_names_its_group(tmp_path: Path) -> None:
    """A pod's name, as `kubectl get pods` shows it, was "no such group"; a name in another
    case was matched to a group of another namespace."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    pod = invoke("explain", "ray-tune-head-g5lbv", snapshot)
    assert pod.exit_code == 2 and pod.stderr.splitlines()[-1] == (
        "error: explain ray-tune-head-g5lbv: that is a pod of the group analytics/ray-tune; give the group"
    )
    two = tmp_path / "two.yaml"
    two.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8'}}\n" + "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: job, namespace: {ns}}}\nspec: {{containers: [{{name: c}}]}}\n"
        for ns in ("b", "a")
    ))
    upper = invoke("explain", "A/job", str(two))
    assert upper.exit_code == 2 and upper.stderr.splitlines()[-1].endswith("no such group in the snapshot; did you mean a/job?")


def test_a_volcano_jobs_name_finds_the_podgroup_its_controller_made() -> None:
    """Volcano names a Job's PodGroup <job>-<uid>, which no one types: `explain tf-resnet` on
    the shipped snapshot was "no such group" with no hint (a review's case). The Job's name,
    bare or with its namespace, now finds that group; a name that only starts alike does not."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    key = "training/tf-resnet-b8e6f606-da5e-5505-8af6-f4b3ed8f6eb2"
    expected = invoke("explain", key, snapshot, "--solver", "greedy")
    assert expected.exit_code == 0 and expected.stdout.startswith(f"{key} (volcano")
    for name in ("tf-resnet", "training/tf-resnet"):
        assert invoke("explain", name, snapshot, "--solver", "greedy").stdout == expected.stdout
    for name in ("tf", "other/tf-resnet"):
        assert "no such group in the snapshot" in invoke("explain", name, snapshot, "--solver", "greedy").stderr


def test_a_name_several_volcano_jobs_or_pods_share_asks_for_the_namespace() -> None:
    """Job `a` in two namespaces was "no such group" with no hint, as a pod's name in two
    groups was (a review's case); a Job whose name starts another's still finds its own."""
    from gangplan.cli import find_group
    from gangplan.errors import UsageError

    uid = "-b8e6f606-da5e-5505-8af6-f4b3ed8f6eb2"
    keys = [f"ml/a{uid}", f"ml/a-b{uid}", f"other/a{uid}"]
    with pytest.raises(UsageError, match=rf"explain a: several Volcano Jobs' PodGroups have that name \(ml/a{uid}, other/a{uid}\); give namespace/name"):
        find_group(keys, "a", "explain")
    assert [find_group(keys, name, "explain") for name in ("a-b", "ml/a", "other/a")] == [keys[1], keys[0], keys[2]]
    pods = {"ml/p": "ml/g", "x/p": "x/h", "x/q": "x/h"}
    with pytest.raises(UsageError, match=r"explain p: pods of that name are in several groups \(ml/g, x/h\)"):
        find_group(["ml/g", "x/h"], "p", "explain", pods)
    with pytest.raises(UsageError, match=r"that is a pod of the group x/h; give the group"):
        find_group(["ml/g", "x/h"], "x/p", "explain", pods)


def test_a_snapshot_piped_without_a_dash_is_told_how_to_read_it() -> None:
    """`kubectl get ... -o json | gangplan plan` said only that SNAPSHOT is missing; from a
    terminal, where nothing is piped, the hint stays the usual one."""
    import subprocess

    small = (ROOT / "snapshots" / "small.yaml").read_bytes()
    for command in (["plan"], ["explain", "ml/llm-pretrain"], ["verify"]):
        piped = subprocess.run([sys.executable, "-m", "gangplan", *command], input=small, capture_output=True)
        assert piped.returncode == 2
        hint = f"(give - to read it from stdin; see 'python -m gangplan {command[0]} --help')"
        assert piped.stderr.decode() == f"error: Missing argument 'SNAPSHOT'. {hint}\n"
    leader, follower = os.openpty()
    try:
        typed = subprocess.run([sys.executable, "-m", "gangplan", "plan"], stdin=follower, capture_output=True)
    finally:
        os.close(leader)
        os.close(follower)
    assert typed.returncode == 2
    assert typed.stderr.decode().endswith("(see 'python -m gangplan plan --help')\n"), typed.stderr


def test_explain_given_only_a_snapshot_asks_for_the_group() -> None:
    """`gangplan explain snapshot.yaml` said SNAPSHOT was missing (and, with stdin a pipe, to
    give - for it), having taken the file for the group."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    for given in (None, ""):
        result = invoke("explain", snapshot, input=given)
        assert result.exit_code == 2 and result.stderr == (
            f"error: explain {snapshot}: name the group to explain too (explain GROUP SNAPSHOT...) (see 'gangplan explain --help')\n"
        )


def test_a_plan_without_a_schema_version_is_said_to_lack_one(tmp_path: Path) -> None:
    """It said 'schemaVersion None is not supported (expected 1)', Python's None for a key not there."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    data = plan_json(snapshot, "--solver", "greedy")
    for value in ("absent", None, 2):
        if value == "absent":
            del data["schemaVersion"]
        else:
            data["schemaVersion"] = value
        made = tmp_path / "plan.json"
        made.write_text(json.dumps(data))
        result = invoke("verify", snapshot, "--plan", str(made))
        said = "schemaVersion 2 is not supported (expected 1)" if value == 2 else "schemaVersion is missing (expected 1, as -o plan writes it)"
        assert result.exit_code == 2 and result.stderr.splitlines()[-1] == f"error: {made}:1:1: {said}", result.stderr


def test_version_and_python_dash_m() -> None:
    import subprocess

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.startswith("gangplan ")
    proc = subprocess.run([sys.executable, "-m", "gangplan", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == result.stdout



@pytest.mark.parametrize("params", ["log_search_progress:true", "log_to_stdout:true log_search_progress:true"])
def test_solver_parameters_cannot_send_its_log_to_stdout(params: str) -> None:
    """CP-SAT logs to stdout when asked to log with no callback: GANGPLAN_CPSAT_PARAMS could
    turn ``-o json`` into 146 KB of log and JSON (review 21)."""
    import json
    import subprocess

    env = {**os.environ, "GANGPLAN_CPSAT_PARAMS": params}
    small = str(ROOT / "snapshots" / "small.yaml")
    proc = subprocess.run([sys.executable, "-m", "gangplan", "plan", small, "-o", "json"], env=env,
                          capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout)["kind"] == "List"


def test_the_solver_log_goes_to_stderr_and_stdout_keeps_only_the_output() -> None:
    """GANGPLAN_CPSAT_LOG=1 shows CP-SAT's search; CP-SAT writes it to the process's stdout
    unless told otherwise, which would break ``-o name | xargs ...`` and ``-o json | kubectl``."""
    import subprocess

    env = {**os.environ, "GANGPLAN_CPSAT_LOG": "1"}
    small = str(ROOT / "snapshots" / "small.yaml")
    proc = subprocess.run([sys.executable, "-m", "gangplan", "plan", small, "-o", "name"], env=env,
                          capture_output=True, text=True, check=True)
    assert proc.stdout and all(line.startswith("binding/") for line in proc.stdout.splitlines())
    assert "CpSolverResponse summary" in proc.stderr


def test_solver_parameters_set_in_the_environment_are_noted_beside_the_summary() -> None:
    """GANGPLAN_CPSAT_PARAMS changes plans (README, 'Security and limits'): a user comparing
    two plans is told, on stderr, where the summary's notes are, and stdout stays the output."""
    small = str(ROOT / "snapshots" / "small.yaml")
    env = {"GANGPLAN_CPSAT_PARAMS": " relative_gap_limit:0.5   random_seed:3 "}
    tuned = runner.invoke(app, ["plan", small, "-o", "json"], env=env)
    assert tuned.exit_code == 0 and json.loads(tuned.stdout)["kind"] == "List"
    lines = tuned.stderr.splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith("groups placed "))
    assert lines[summary + 1] == (
        "note: GANGPLAN_CPSAT_PARAMS sets CP-SAT's parameters (relative_gap_limit:0.5 random_seed:3);"
        " a plan made without them may differ"
    )
    for args, environment in (([], {"GANGPLAN_CPSAT_PARAMS": ""}), (["--solver", "greedy"], env)):
        plain = runner.invoke(app, ["plan", small, *args], env=environment)
        assert plain.exit_code == 0 and "GANGPLAN_CPSAT_PARAMS" not in plain.stderr
    assert runner.invoke(app, ["-q", "plan", small], env=env).stderr == ""


def test_a_plan_file_records_the_solver_parameters_set_in_the_environment() -> None:
    """The note on stderr is gone once the plan is saved: the Plan says what made it, as it
    says the seed and time limit, so two plans that differ can be told apart later."""
    small = str(ROOT / "snapshots" / "small.yaml")
    env = {"GANGPLAN_CPSAT_PARAMS": "relative_gap_limit:0.5 random_seed:3"}
    tuned = json.loads(runner.invoke(app, ["plan", small, "-o", "plan"], env=env).stdout)
    assert tuned["solver"]["parameters"] == {"relative_gap_limit": "0.5", "random_seed": "3"}
    for args, environment in (([], {"GANGPLAN_CPSAT_PARAMS": ""}), (["--solver", "greedy"], env)):
        plain = json.loads(runner.invoke(app, ["plan", small, "-o", "plan", *args], env=environment).stdout)
        assert "parameters" not in plain["solver"] and plain["solver"]["seed"] == 0


@pytest.mark.parametrize("params", ["num_workers=2", "no_such_parameter:1", "max_time_in_seconds:soon", "ignore_subsolvers:x"])
def test_solver_parameters_it_cannot_set_are_a_usage_error(params: str) -> None:
    """GANGPLAN_CPSAT_PARAMS (benchmarks/README) with a typo had ended in an internal error,
    exit 3 (review 19 T F4)."""
    small = str(ROOT / "snapshots" / "small.yaml")
    result = runner.invoke(app, ["plan", small], env={"GANGPLAN_CPSAT_PARAMS": f"random_seed:3 {params}"})
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"error: GANGPLAN_CPSAT_PARAMS: {params!r} is not key:value for a CP-SAT parameter of one value"
    )
    assert runner.invoke(app, ["plan", small], env={"GANGPLAN_CPSAT_PARAMS": "random_seed:3 use_lns:false"}).exit_code == 0


def test_the_summary_says_which_objective_stage_a_gap_is_at() -> None:
    """Objective 1 is lexicographic, so a gap belongs to its first stage not proven: the summary
    names it (the first term whose bound is not its value), with the count of JobGroups and the
    most there can be where that term is a count, and says nothing more at 0%."""
    from dataclasses import replace

    from gangplan.cli import _summary
    from gangplan.plan import ObjectiveValue, Plan, SolverReport

    objective = (
        ObjectiveValue("quorum-demand@1000", 10, "maximize", 10),
        ObjectiveValue("job-groups@1000", 3, "maximize", None),
        ObjectiveValue("quorum-demand@100", 7, "maximize", None),
    )
    report = SolverReport("cp-sat", "optimal", "FEASIBLE", "cp-sat", objective, gap=0.125)
    assert "cp-sat FEASIBLE gap 12.50% at job-groups@1000 |" in _summary(Plan((), (), report))
    proven = replace(report, gap=0.0, status="OPTIMAL")
    assert "cp-sat OPTIMAL gap 0.00% |" in _summary(Plan((), (), proven))
    bounded = replace(report, objective=(objective[0], replace(objective[1], bound=4), objective[2]))
    assert "gap 12.50% at job-groups@1000 (3 placed, at most 4) |" in _summary(Plan((), (), bounded))
    demand = replace(report, objective=(replace(objective[0], bound=12), *objective[1:]))
    assert "gap 12.50% at quorum-demand@1000 |" in _summary(Plan((), (), demand))


def test_the_summary_line_shows_cpu_memory_and_the_resources_the_plan_moves_most() -> None:
    """A cluster of many extended resources made a summary line of hundreds: past six it shows
    cpu and memory whatever they moved, then those the plan moved most (ties by name), in name
    order, and counts the rest; six or fewer are all shown."""
    from gangplan.cli import _summary
    from gangplan.plan import Plan, SolverReport

    report = SolverReport("greedy", "optimal", "GREEDY", "greedy", ())
    moves = {"cpu": 0, "memory": 0, "pods": 50, **{f"x.io/r{i}": i % 4 * 10 for i in range(7)}}
    before = {name: (0, 100) for name in moves}
    after = {name: (move, 100) for name, move in moves.items()}
    line = _summary(Plan((), (), report, before, after))
    shown = [part.split()[0] for part in line.split(" | ")[1:-3]]
    assert shown == ["cpu", "memory", "x.io/r1", "x.io/r2", "x.io/r3", "x.io/r6"], line  # r1 before r5 by name
    assert " | 3 more resources in -o plan | " in line
    few = {name: moves[name] for name in ("cpu", "memory", "pods", "x.io/r0", "x.io/r1", "x.io/r2", "x.io/r3")}
    line = _summary(Plan((), (), report, {n: (0, 100) for n in few}, {n: (m, 100) for n, m in few.items()}))
    assert [part.split()[0] for part in line.split(" | ")[1:-2]] == ["cpu", "memory", "x.io/r0", "x.io/r1", "x.io/r2", "x.io/r3"]
    assert "more resource" not in line


def test_the_summary_does_not_round_a_change_away() -> None:
    """'rdma/hca_shared_devices_a 0% -> 0%' for 124 -> 204 of 253000: the summary adds digits
    where whole percent would hide a change, as diff does; an unchanged figure stays whole."""
    from gangplan.cli import _summary
    from gangplan.plan import Plan, SolverReport

    result = Plan(
        (),
        (),
        SolverReport("greedy", "optimal", "GREEDY", "greedy"),
        resources_before={"cpu": (400, 1000), "example.com/dev": (124, 253000), "example.com/none": (0, 0)},
        resources_after={"cpu": (400, 1000), "example.com/dev": (204, 253000), "example.com/none": (0, 0)},
    )
    line = _summary(result)
    assert "| cpu 40% -> 40% | example.com/dev 0.0% -> 0.1% | example.com/none - -> - |" in line


@pytest.mark.parametrize("where", ["before", "after"])
def test_global_options_are_taken_before_or_after_the_command(where: str) -> None:
    """As kubectl's: `gangplan plan x.yaml -q --max-objects 1` is where a user types them."""
    small = str(ROOT / "snapshots" / "small.yaml")
    options = ["-q", "--max-objects", "1"]
    args = [*options, "plan", small] if where == "before" else ["plan", small, *options]
    result = invoke(*args)
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and "--max-objects" in result.stderr
    quiet = invoke(*(["-q", "plan", small] if where == "before" else ["plan", small, "--quiet", "-o", "name"]))
    assert quiet.exit_code == 0 and quiet.stderr == ""


FINISHED_MEMBERS = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "8"}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: done, namespace: ml, creationTimestamp: "2026-01-01T00:00:00Z"}
  spec: {minMember: 2}
  status: {phase: PHASE}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: half, namespace: ml, creationTimestamp: "2026-01-01T00:00:01Z"}
  spec: {minMember: 2, minTaskMember: {worker: 2}, minResources: {nvidia.com/gpu: "8"}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: broken, namespace: ml, creationTimestamp: "2026-01-01T00:00:02Z"}
  spec: {minMember: 2}
""" + "".join(
    f"""\
- apiVersion: v1
  kind: Pod
  metadata:
    name: {name}
    namespace: ml
    annotations: {{scheduling.k8s.io/group-name: {group}, volcano.sh/task-spec: worker}}
  spec:
    {"nodeName: n1" if phase != "Pending" else "schedulerName: volcano"}
    containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1", nvidia.com/gpu: "4"}}}}}}]
  status: {{phase: {phase}}}
"""
    for name, group, phase in [
        ("done-0", "done", "Succeeded"),
        ("done-1", "done", "Succeeded"),
        ("half-0", "half", "Succeeded"),
        ("half-1", "half", "Pending"),
        ("broken-0", "broken", "Failed"),
        ("broken-1", "broken", "Pending"),
    ]
)


@pytest.mark.parametrize("given_phase", ["Running", "Failed"])
def test_succeeded_members_count_toward_min_member_and_hold_nothing(tmp_path: Path, given_phase: str) -> None:
    """As Volcano's ready tasks and scheduler-plugins' assigned pods: a finished job's PodGroup
    is settled, not short; a Succeeded member counts toward minMember, minTaskMember and
    minResources; a Failed one does not. Either is still a member, named as one."""
    snapshot = tmp_path / "finished.yaml"
    snapshot.write_text(FINISHED_MEMBERS.replace("PHASE", given_phase))
    table = invoke("plan", str(snapshot), "-o", "wide")
    assert table.exit_code == 0, table.output
    rows = {line.split()[0]: line.split() for line in table.output.splitlines()[1:] if line.startswith("ml/")}
    assert rows["ml/done"][3:5] == ["Finished", "2/2"] and len(rows["ml/done"]) == 10  # no reason
    assert rows["ml/half"][3:5] == ["Placed", "2/2"] and rows["ml/half"][-1] == "n1"
    assert rows["ml/broken"][3:5] == ["Unplaced", "0/2"]
    assert "NotEnoughTasks: 1 pod exists (1 failed, which do not count), minMember is 2" in table.output

    checked = invoke("check", str(snapshot))
    assert checked.exit_code == 1 and "FAIL ml/broken" in checked.output and "ml/half" not in checked.output

    out = tmp_path / "plan.json"
    assert invoke("plan", str(snapshot), "-o", "plan", "--output-file", str(out)).exit_code == 0
    groups = {g["name"]: g for g in json.loads(out.read_text())["groups"]}
    assert (groups["ml/done"]["succeeded"], groups["ml/done"]["placed"]) == (2, True)
    assert (groups["ml/half"]["succeeded"], groups["ml/half"]["scheduled"]) == (1, 1)
    assert "succeeded" not in groups["ml/broken"]
    assert verify(load_snapshot([str(snapshot)]), plan_from_dict(json.loads(out.read_text())).placements).ok
    assert invoke("verify", str(snapshot), "--plan", str(out)).exit_code == 0

    status = {i["metadata"]["name"]: i["status"] for i in yaml.safe_load(invoke("plan", str(snapshot), "-o", "status").stdout)["items"]}
    # a controller's terminal phase stays; otherwise Volcano's word for a job whose members all succeeded
    assert status["done"]["phase"] == ("Failed" if given_phase == "Failed" else "Completed")
    assert "conditions" not in status["done"] and status["done"]["succeeded"] == 2
    # Volcano's scheduler calls an allocated gang Running, and its status has no `scheduled`
    assert status["half"]["phase"] == "Running" and "scheduled" not in status["half"]
    assert status["broken"]["conditions"][0]["reason"] == "PodFailed"  # seed 001: short for its failed member

    explained = invoke("explain", "ml/done", str(snapshot))
    assert "pods: 0 running, 2 succeeded, 0 pending, minMember 2" in explained.output
    assert "nothing to place: its members have finished (2 succeeded)" in explained.output
    assert "+ group ml/half placed (2/2)" in invoke("diff", str(snapshot), "--plan", str(out)).output
    # `kubectl get pods` lists finished pods too: naming one points at its group, as a running one's does
    member = invoke("explain", "half-0", str(snapshot))
    assert member.exit_code == 2 and member.stderr.splitlines()[-1].endswith("that is a pod of the group ml/half; give the group")


def test_a_group_with_nothing_pending_shows_its_phase_not_running(tmp_path: Path) -> None:
    """A PodGroup created before its pods is Pending, one whose members run but too few is
    Unknown (seed 001), in the table as in -o status; neither is 'Running'."""
    snapshot = tmp_path / "short.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '8', pods: '110'}}}\n"
        "- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: empty, namespace: ml},"
        " spec: {minMember: 2}}\n"
        "- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: short, namespace: ml},"
        " spec: {minMember: 2}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: short-0, namespace: ml,"
        " labels: {scheduling.x-k8s.io/pod-group: short}}, spec: {nodeName: n1,"
        " containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}, status: {phase: Running}}\n"
    )
    table = invoke("plan", str(snapshot))
    rows = {line.split()[0]: line.split()[3:5] for line in table.stdout.splitlines()[1:]}
    assert rows == {"ml/empty": ["Pending", "0/2"], "ml/short": ["Unknown", "1/2"]}
    status = yaml.safe_load(invoke("plan", str(snapshot), "-o", "status").stdout)["items"]
    assert [i["status"]["phase"] for i in status] == ["Pending", "Unknown"]
    assert "not placed: NotEnoughTasks: 0 pods exist" in invoke("explain", "ml/empty", str(snapshot)).stdout


def _pod_yaml(name: str, group: str | None, node: str | None, cpu: str = "2") -> str:
    labels = f", labels: {{scheduling.x-k8s.io/pod-group: {group}}}" if group else ""
    bound = f"nodeName: {node}, " if node else ""
    phase = "Running" if node else "Pending"
    return (
        f"- {{apiVersion: v1, kind: Pod, metadata: {{name: {name}, namespace: ml{labels}}}, spec: {{{bound}"
        f"containers: [{{name: c, image: x, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}, status: {{phase: {phase}}}}}\n"
    )


def test_pods_on_nodes_the_snapshot_lacks_are_a_warning_and_gang_members_among_them_run(tmp_path: Path) -> None:
    """`kubectl get nodes -l pool=gpu` with every pod: pods elsewhere hold no planned room; a
    gang member among them counts toward minMember, but cannot be placed in a domain, so a
    required term on that gang cannot be known to hold."""
    snapshot = tmp_path / "partial.yaml"
    nodes = "".join(
        f"- {{apiVersion: v1, kind: Node, metadata: {{name: {n}, labels: {{rack: {r}}}}},"
        f" status: {{allocatable: {{cpu: '4', pods: '110'}}}}}}\n"
        for n, r in [("n1", "a"), ("n2", "b")]
    )
    groups = "".join(
        f"- {{apiVersion: scheduling.godel.kubewharf.io/v1alpha1, kind: PodGroup, metadata: {{name: {g}, namespace: ml}},"
        f" spec: {{minMember: 3{extra}}}}}\n"
        for g, extra in [("free", ""), ("racked", ", affinity: {podGroupAffinity: {required: [{topologyKey: rack}]}}")]
    )
    pods = (
        _pod_yaml("web", None, "cpu-7", cpu="64")
        + _pod_yaml("free-0", "free", "cpu-7")
        + _pod_yaml("free-1", "free", None)
        + _pod_yaml("free-2", "free", None)
        + _pod_yaml("racked-0", "racked", "cpu-8")
        + _pod_yaml("racked-1", "racked", None)
        + _pod_yaml("racked-2", "racked", None)
    )
    snapshot.write_text("apiVersion: v1\nkind: List\nitems:\n" + nodes + groups + pods)
    out = tmp_path / "plan.json"
    result = invoke("plan", str(snapshot), "-o", "plan", "--output-file", str(out))
    assert result.exit_code == 0, result.output
    assert "pod ml/free-0 and 2 more run on 2 nodes (cpu-7, ...), not in the snapshot: their room is not planned" in result.output
    groups_out = {g["name"]: g for g in json.loads(out.read_text())["groups"]}
    assert (groups_out["ml/free"]["placed"], groups_out["ml/free"]["running"], groups_out["ml/free"]["scheduled"]) == (
        True, 1, 2
    )
    assert not groups_out["ml/racked"]["placed"]
    assert groups_out["ml/racked"]["reason"] == (
        "required rack: running member ml/racked-0 is on node cpu-8, which is not in the snapshot"
    )
    assert invoke("verify", str(snapshot), "--plan", str(out)).exit_code == 0
    for args in (["plan", "-o", "wide"], ["plan", "-o", "status"], ["check"], ["topology"], ["diff", "--plan", str(out)]):
        ran = invoke(*args, str(snapshot))
        assert ran.exit_code in (0, 1) and (ran.exception is None or isinstance(ran.exception, SystemExit)), args
    explained = invoke("explain", "ml/racked", str(snapshot))
    assert "not placed: required rack: running member ml/racked-0 is on node cpu-8" in explained.stdout
    # the verifier refuses what the planner refused: a placement it cannot check the term of
    bindings = tmp_path / "bindings.json"
    bindings.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": "ml"},
         "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}} for name in ("racked-1", "racked-2")
    ]}))
    refused = invoke("verify", str(snapshot), "--plan", str(bindings))
    assert refused.exit_code == 1
    assert "required-topology ml/racked: required rack: running member ml/racked-0 is on node cpu-8" in refused.stdout


def test_the_running_member_off_the_snapshot_a_reason_names_does_not_follow_the_input_order(tmp_path: Path) -> None:
    """Two running members of a required-term group on nodes the snapshot lacks: the reason (and
    verify's violation) names the first by name, whichever the dump lists first, so the same
    cluster gives the same output (DESIGN, Determinism)."""
    node = "- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {rack: a}}, status: {allocatable: {cpu: '8'}}}\n"
    group = (
        "- {apiVersion: scheduling.godel.kubewharf.io/v1alpha1, kind: PodGroup, metadata: {name: racked, namespace: ml},"
        " spec: {minMember: 3, affinity: {podGroupAffinity: {required: [{topologyKey: rack}]}}}}\n"
    )
    running = [_pod_yaml("racked-0", "racked", "gone-b"), _pod_yaml("racked-1", "racked", "gone-a")]
    bindings = tmp_path / "bindings.json"
    bindings.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "racked-2", "namespace": "ml"},
         "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    ]}))
    seen = []
    for order in (running, running[::-1]):
        snapshot = tmp_path / "snapshot.yaml"
        snapshot.write_text("apiVersion: v1\nkind: List\nitems:\n" + node + group + "".join(order) + _pod_yaml("racked-2", "racked", None))
        planned = invoke("plan", str(snapshot), "-o", "plan")
        assert planned.exit_code == 0, planned.output
        (outcome,) = [g for g in json.loads(planned.stdout)["groups"] if g["name"] == "ml/racked"]
        refused = invoke("verify", str(snapshot), "--plan", str(bindings))
        assert refused.exit_code == 1, refused.output
        seen.append((outcome["reason"], [line for line in refused.output.splitlines() if "racked-" in line]))
    assert seen[0][0] == "required rack: running member ml/racked-0 is on node gone-b, which is not in the snapshot"
    assert seen[0][1] and any("ml/racked-0 is on node gone-b" in line for line in seen[0][1])
    assert seen[0] == seen[1]


def test_verify_counts_in_words(tmp_path: Path) -> None:
    """One placement, one violation: 'ok: 1 placement satisfies', '1 violation in 1
    placement', not '1 violation(s) in 1 placements' (helper-74's nit)."""
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '2', pods: '110'}}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}, spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}}\n"
    )
    bindings = invoke("plan", str(snapshot), "-o", "json").stdout
    assert "ok: 1 placement satisfies every rule" in invoke("verify", str(snapshot), "--plan", "-", input=bindings).stderr
    refused = invoke("verify", str(snapshot), "--plan", "-", input=bindings.replace('"n1"', '"n9"'))
    assert refused.exit_code == 1 and "1 violation in 1 placement\n" in refused.stderr, refused.stderr


def test_stdin_feeds_a_plan_once_and_an_input_without_nodes_is_said(tmp_path: Path) -> None:
    """`plan -o json | verify SNAPSHOT --plan -` works as kubectl's `-f -` does; `-` twice is a
    usage error, not a duplicate Node; pods with no Node objects get a warning and a reason."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    bindings = invoke("plan", snapshot, "-o", "json").stdout
    checked = invoke("verify", snapshot, "--plan", "-", input=bindings)
    assert checked.exit_code == 0 and "satisfy every rule" in checked.stderr
    text = Path(snapshot).read_text()
    for args in (["plan", "-", "-"], ["verify", "-", "--plan", "-"], ["diff", "-", "--plan", "-"]):
        twice = invoke(*args, input=text)
        assert twice.exit_code == 2 and twice.stderr.strip().endswith("error: - (stdin) is given twice; it can feed one input")
    pods_only = tmp_path / "pods.yaml"
    pods_only.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    )
    alone = invoke("plan", str(pods_only))
    assert "warning: the input has no Node objects, so nothing can be placed" in alone.stderr
    assert "0/0 nodes are available: the input has no Node objects" in alone.stdout


def test_check_github_says_when_it_read_nothing_and_kueue_counts_that_disagree_are_warned(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: j, namespace: ml}\nspec: {}\n")
    github = invoke("check", str(job), "-o", "github")
    assert github.exit_code == 0
    assert github.stdout == "::warning title=gangplan check::no pending group to check; gangplan does not read these inputs: PyTorchJob\n"
    kueue = tmp_path / "kueue.yaml"
    kueue.write_text("".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: k-{i}, namespace: ml, labels: {{kueue.x-k8s.io/pod-group-name: k}},"
        f" annotations: {{kueue.x-k8s.io/pod-group-total-count: '{count}'}}}}\nspec: {{containers: [{{name: c, image: x}}]}}\n"
        for i, count in enumerate([3, 2, 3])
    ) + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', pods: '110'}}\n")
    planned = invoke("plan", str(kueue), "-o", "wide")
    assert "warning: Kueue pod group ml/k: its members disagree on kueue.x-k8s.io/pod-group-total-count (2, 3); the largest, 3, is its minMember" in planned.stderr
    assert planned.stdout.splitlines()[1].split()[:5] == ["ml/k", "kueue", "0", "Placed", "3/3"]


def test_verify_checks_what_a_plan_says_of_each_group_against_its_placements(tmp_path: Path) -> None:
    """A Plan is more than its placements: one that calls a group placed without placing it, or
    not placed while placing it, was reported "ok" (second user review)."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    out = tmp_path / "plan.json"
    assert invoke("plan", snapshot, "-o", "plan", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    assert invoke("verify", snapshot, "--plan", str(out)).exit_code == 0
    placed = next(g for g in data["groups"] if g["placed"] and g["scheduled"])
    dropped = dict(data, placements=[p for p in data["placements"] if p["group"] != placed["name"]])
    out.write_text(json.dumps(dropped))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 1
    assert f"outcome {placed['name']}: the plan says placed, {placed['scheduled']} scheduled; its placements place 0" in result.stdout
    denied = dict(data, groups=[dict(g, placed=False) if g["name"] == placed["name"] else g for g in data["groups"]])
    out.write_text(json.dumps(denied))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 1 and f"outcome {placed['name']}: the plan says not placed" in result.stdout


def test_verify_checks_a_plans_pending_count_against_the_snapshot(tmp_path: Path) -> None:
    """A Plan's "pending" per group was never checked (review 17 C F7): one that said 9 pending
    pods of a group with 4 passed. A group entry without "pending" says nothing, so it is not
    held to 0."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    out = tmp_path / "plan.json"
    assert invoke("plan", snapshot, "-o", "plan", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    group = next(g for g in data["groups"] if g["pending"])
    out.write_text(json.dumps(dict(data, groups=[dict(g, pending=g["pending"] + 5) if g is group else g for g in data["groups"]])))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 1
    assert [line for line in result.stdout.splitlines() if line.startswith("outcome")] == [
        f"outcome {group['name']}: the plan says {group['pending'] + 5} pending; the snapshot has"
        f" {group['pending']} pending pods of it that may be bound"
    ]
    unsaid = [{k: v for k, v in g.items() if k != "pending"} for g in data["groups"]]
    out.write_text(json.dumps(dict(data, groups=unsaid)))
    assert invoke("verify", snapshot, "--plan", str(out)).exit_code == 0


@pytest.mark.parametrize(
    "text, expected",
    [
        ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Binding\n  metadata: {name: p}\n  target: n1\n",
         ":7:11: items[0].target: expected an object, got a string"),
        ("apiVersion: v1\nkind: List\nitems: 5\n", ":3:8: items: expected a list, got a number"),
        ("", ": expected a Plan or a List of Bindings, got an empty document"),
        # review 18 J F9: the API server has Bindings at v1 only, and refuses one without a target node
        ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v9\n  kind: Binding\n  metadata: {name: p}\n  target: {name: n1}\n",
         ":4:15: items[0].apiVersion: a Binding is apiVersion v1, got 'v9'"),
        ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Binding\n  metadata: {name: p}\n  target: {name: ''}\n",
         ":4:3: items[0]: a Binding needs metadata.name and target.name"),
    ],
)
def test_a_bad_placement_file_is_located_in_its_own_words(tmp_path: Path, text: str, expected: str) -> None:
    """Was Python's text ('str' object has no attribute 'get'; 'int' object is not iterable)
    with no line or column."""
    out = tmp_path / "bindings.yaml"
    out.write_text(text)
    result = invoke("verify", str(ROOT / "snapshots" / "small.yaml"), "--plan", str(out))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {out}{expected}"


def test_check_says_bad_input_where_ci_looks(tmp_path: Path) -> None:
    """Exit 2 and one error line on stderr, as everywhere; a GitHub annotation on the bad
    line, and a JUnit file with an error case (the report step found no file)."""
    from xml.etree import ElementTree

    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: [4]}}\n")
    github = invoke("check", str(bad), "-o", "github")
    assert github.exit_code == 2 and len(github.stderr.splitlines()) == 1
    assert github.stdout.startswith(f"::error file={bad},line=4,col=29,title=gangplan check%3A bad input::status.allocatable.cpu: ")
    report = tmp_path / "report.xml"
    junit = invoke("check", str(bad), "-o", "junit", "--output-file", str(report))
    assert junit.exit_code == 2 and junit.stderr.startswith(f"error: {bad}:4:29: ")
    suite = ElementTree.parse(report).getroot()
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    (case,) = suite
    assert (case.get("file"), case.get("line"), case[0].tag) == (str(bad), "4", "error")
    text = invoke("check", str(bad))
    assert text.exit_code == 2 and text.stdout == ""


def test_an_empty_input_file_among_others_is_warned(tmp_path: Path) -> None:
    """`kubectl get pods -o yaml > pods.yaml` that failed leaves an empty file; check passed
    on the rest in silence. An empty List is what kubectl prints for no objects: no warning."""
    empty, no_pods = tmp_path / "pods.yaml", tmp_path / "none.yaml"
    empty.write_text("")
    no_pods.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    result = invoke("check", str(ROOT / "snapshots" / "small.yaml"), str(empty), str(no_pods))
    warned = [line for line in result.stderr.splitlines() if "no Kubernetes objects" in line]
    assert warned == [f"warning: {empty}: no Kubernetes objects in it (was it written by a command that failed?)"]


CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '8', pods: '110', nvidia.com/gpu: '4'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: '8', pods: '110', nvidia.com/gpu: '4'}}
---
apiVersion: v1
kind: Pod
metadata: {name: debug-shell, namespace: ops, uid: 6d0c1a52-1111-4c4c-9a9a-000000000001}
spec:
  nodeSelector: {pool: retired}
  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]
"""


def job_manifest(name: str, pods: int, gpus: int, *, uid: str = "") -> str:
    """A PodGroup and the batch/v1 Job that creates its pods, as a CI job folder holds them."""
    meta = f"{{name: {name}, namespace: ml{', uid: ' + uid if uid else ''}}}"
    return f"""\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: {name}, namespace: ml}}
spec: {{minMember: {pods}}}
---
apiVersion: batch/v1
kind: Job
metadata: {meta}
spec:
  parallelism: {pods}
  template:
    metadata: {{labels: {{scheduling.x-k8s.io/pod-group: {name}}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: '1', nvidia.com/gpu: '{gpus}'}}}}}}]
"""


def test_verify_and_diff_find_a_plan_that_only_creates_pods(tmp_path: Path) -> None:
    """helper-51: `plan S -o json | verify S -` said "verify needs a plan" when every group was
    new (a Job's pods to create, no Binding), though --plan read the same text. A List of Pods
    each given a node and none made yet (no uid, no status) is such a plan; a snapshot's is not."""
    nodes, job = tmp_path / "nodes.yaml", tmp_path / "job.yaml"
    nodes.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    job.write_text(job_manifest("train", 2, 4))
    made = invoke("plan", str(nodes), str(job), "-o", "json")
    kinds = {item["kind"] for item in json.loads(made.stdout)["items"]}
    assert made.exit_code == 0 and kinds == {"Pod"}, made.stderr
    (tmp_path / "made.json").write_text(made.stdout)
    for command in ("verify", "diff"):
        for given in ("-", str(tmp_path / "made.json")):
            expected = invoke(command, str(nodes), str(job), "--plan", given, input=made.stdout)
            found = invoke(command, str(nodes), str(job), given, input=made.stdout)
            assert expected.exit_code == found.exit_code == 0 and found.stdout == expected.stdout, found.stderr
    # Pods that exist (a uid) are a snapshot's, whatever their nodeName: still no plan there.
    running = made.stdout.replace('"namespace": "ml"', '"namespace": "ml", "uid": "u"')
    wrong = invoke("verify", str(nodes), "-", input=running)
    assert wrong.exit_code == 2 and "verify needs a plan" in wrong.stderr, wrong.stderr


@pytest.mark.parametrize("gpus", [4, 64])
def test_check_groups_from_checks_a_job_whose_podgroup_the_cluster_already_has(gpus: int, tmp_path: Path) -> None:
    """Session 22's workload review F3: a job folder's Job whose pods join a PodGroup already in
    the snapshot (created earlier, waiting for its pods) selected nothing: '0/0 groups placed',
    exit 0, even for 64 GPUs a pod on an 8-GPU cluster. The group is the folder's change."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    podgroup, job = job_manifest("train", 2, gpus).split("---\n", 1)
    cluster.write_text(CLUSTER + "---\n" + podgroup)
    jobs.mkdir()
    (jobs / "job.yaml").write_text(job)
    checked = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert checked.exit_code == (0 if gpus == 4 else 1), checked.stdout
    assert checked.stdout.startswith("1/1 groups placed" if gpus == 4 else "FAIL ml/train")


def test_check_answers_for_a_podgroup_once_beside_a_bare_pod_of_its_name(tmp_path: Path) -> None:
    """A pending bare pod ml/train beside the PodGroup ml/train (both planned; the warning says
    check takes the PodGroup). With --groups-from naming the PodGroup's Job, check printed the
    PodGroup's FAIL twice and '0/2 groups placed'; its annotation went on the pod's document,
    queued last, not the PodGroup's."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    podgroup, job = job_manifest("train", 2, 64).split("---\n", 1)
    podgroup = podgroup.replace("namespace: ml}", "namespace: ml, creationTimestamp: '2024-01-01T00:00:00Z'}")
    lone = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train, namespace: ml, uid: u-lone, creationTimestamp: '2030-01-01T00:00:00Z'}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\nstatus: {phase: Pending}\n"
    )
    cluster.write_text(CLUSTER + "---\n" + podgroup + "---\n" + lone)
    jobs.mkdir()
    (jobs / "job.yaml").write_text(job)
    checked = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert checked.exit_code == 1 and checked.stdout.count("FAIL ml/train") == 1, checked.stdout
    assert checked.stdout.startswith("FAIL ml/train: 0/2 nodes are available: 2 resource nvidia.com/gpu")
    assert checked.stdout.endswith("\n0/1 groups placed\n"), checked.stdout
    # Without --groups-from the annotation points at the PodGroup, where the name is written.
    github = invoke("check", str(cluster), "--format", "github")
    (error,) = [line for line in github.stdout.splitlines() if line.startswith("::error") and "ml/train" in line]
    line = int(error.split(",line=")[1].split(",")[0])
    assert cluster.read_text().splitlines()[line - 1 : line + 1] == ["apiVersion: scheduling.x-k8s.io/v1alpha1", "kind: PodGroup"], error


def test_a_job_manifest_beside_its_podgroup_is_checked_before_its_pods_exist(tmp_path: Path) -> None:
    """review 18 H F1/F4: a PodGroup and the Job that makes its pods, the usual CI manifest,
    gave "0/0 groups placed" and exit 0 even for 64 GPUs on an 8-GPU cluster: the Job was
    skipped and a PodGroup without pods was never selected. Now the Job's pods are planned as
    members of the group its template names; a Job from a cluster (with a uid) is not."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER)
    jobs.mkdir()
    (jobs / "huge.yaml").write_text(job_manifest("huge", 16, 4))
    result = invoke("check", str(cluster), str(jobs), "--group", "ml/huge")
    assert result.exit_code == 1
    assert result.stdout.startswith("FAIL ml/huge: insufficient nvidia.com/gpu (quorum needs 64, 8 free) on Ready, schedulable nodes\n")
    (jobs / "huge.yaml").write_text(job_manifest("huge", 2, 4))
    assert invoke("check", str(cluster), str(jobs), "--group", "ml/huge").exit_code == 0
    planned = invoke("plan", str(cluster), str(jobs), "-o", "json")
    created = [i for i in json.loads(planned.stdout)["items"] if i["kind"] == "Pod"]
    assert sorted(p["metadata"]["name"] for p in created) == ["huge-0", "huge-1"]
    assert {p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] for p in created} == {"huge"}
    # From a cluster: its controller made its pods (here none are given), so it is not expanded.
    (jobs / "huge.yaml").write_text(job_manifest("huge", 2, 4, uid="0b5f3c3e-2222-4d4d-8b8b-000000000002"))
    live = invoke("check", str(cluster), str(jobs), "--group", "ml/huge")
    assert live.exit_code == 1 and live.stdout.startswith("FAIL ml/huge: NotEnoughTasks: 0 pods exist, minMember is 2")
    assert "skipped objects gangplan does not use: 1 Job (batch/v1, already created)" in live.stderr
    # Suspended (Kueue holds a Job so until it admits it), though from a cluster: its pods are
    # not made yet, so they come from its template and join its group, as a manifest's do.
    def suspended(gpus: int, group: str = "huge") -> str:
        made = job_manifest("huge", 2, gpus, uid="0b5f3c3e-2222-4d4d-8b8b-000000000002")
        return made.replace("spec:\n  parallelism", "spec:\n  suspend: true\n  parallelism").replace(
            "scheduling.x-k8s.io/pod-group: huge", f"scheduling.x-k8s.io/pod-group: {group}" if group else "app: huge"
        )

    (jobs / "huge.yaml").write_text(suspended(4))
    assert invoke("check", str(cluster), str(jobs), "--group", "ml/huge").exit_code == 0
    held = invoke("plan", str(cluster), str(jobs), "-o", "json")
    created = [i for i in json.loads(held.stdout)["items"] if i["kind"] == "Pod"]
    assert sorted(p["metadata"]["name"] for p in created) == ["huge-0", "huge-1"]
    (jobs / "huge.yaml").write_text(suspended(64))
    too_big = invoke("check", str(cluster), str(jobs), "--group", "ml/huge")
    assert too_big.exit_code == 1 and too_big.stdout.startswith("FAIL ml/huge: 0/2 nodes are available")
    # Naming no group, it cannot join one: --gang takes only workloads, so it needs a file of its own.
    (jobs / "huge.yaml").write_text(suspended(4, group=""))
    alone = invoke("check", str(cluster), str(jobs), "--group", "ml/huge")
    assert (
        "1 Job (batch/v1, suspended, so its pods are not made yet, and its pod template names no pod group; to plan "
        "them as one gang, save it to a file of its own and pass --gang NAME=FILE)"
    ) in alone.stderr


def test_a_podgroup_manifest_without_its_pods_fails_check_by_default(tmp_path: Path) -> None:
    """review 18 H F1: selected by default (it is written to be created) and failed with how to
    give its pods; a PodGroup read from a cluster (with a status) is not selected."""
    cluster, group = tmp_path / "cluster.yaml", tmp_path / "pg.yaml"
    cluster.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    group.write_text("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: huge, namespace: ml}\nspec: {minMember: 16}\n")
    result = invoke("check", str(cluster), str(group))
    assert result.exit_code == 1
    assert result.stdout == (
        "FAIL ml/huge: NotEnoughTasks: 0 pods exist, minMember is 16; give the workload that creates its pods"
        " (a Job or Deployment whose pod template names the group) beside it\n0/1 groups placed\n"
    )
    assert "groups placed 0/1 |" in result.stderr  # the summary counts what check counts (review 18 L F8)
    group.write_text(group.read_text() + "status: {phase: Pending}\n")
    live = invoke("check", str(cluster), str(group))
    assert live.exit_code == 0 and live.stdout == "0/0 groups placed\n"
    assert "warning: no pending group to check" in live.stderr


def test_check_groups_from_checks_only_the_jobs_a_pr_adds(tmp_path: Path) -> None:
    """review 18 H F2: the README's recipe checked every pending group of the snapshot, so one
    stray unplaceable pod there failed every PR. --groups-from reads the folder as an input
    and checks only what is written in it; one run writes annotations and the JUnit file."""
    from xml.etree import ElementTree

    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER)
    jobs.mkdir()
    (jobs / "train.yaml").write_text(job_manifest("train", 2, 4))
    everything = invoke("check", str(cluster), str(jobs))
    assert everything.exit_code == 1 and "FAIL ops/debug-shell" in everything.stdout
    report = tmp_path / "report.xml"
    ours = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "github", "--junit-file", str(report))
    assert ours.exit_code == 0 and ours.stdout == ""
    suite = ElementTree.parse(report).getroot()
    assert [c.get("name") for c in suite.iter("testcase")] == ["ml/train"]
    assert {p.get("name"): p.get("value") for p in suite.iter("property")} == {
        "solver": "cp-sat", "policy": "optimal", "status": "OPTIMAL", "gap": "0.00%", "timeLimit": "10",
    }
    (jobs / "train.yaml").write_text(job_manifest("train", 3, 4))
    too_big = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "github")
    assert too_big.exit_code == 1
    assert too_big.stdout.startswith(f"::error file={jobs / 'train.yaml'},line=1,col=1,title=ml/train cannot be placed::")
    # The PodGroup in the cluster's file, the pull request's Job joining it: the annotation goes
    # on the Job, where a reviewer sees it (it went on the cluster's PodGroup).
    group, job = job_manifest("train", 3, 4).split("---\n", 1)
    joined = tmp_path / "joined"
    joined.mkdir()
    (joined / "cluster.yaml").write_text(CLUSTER + "---\n" + group)
    (jobs / "train.yaml").write_text(job)
    on_job = invoke("check", str(joined), "--groups-from", str(jobs), "-o", "github")
    assert on_job.exit_code == 1 and on_job.stdout.startswith(f"::error file={jobs / 'train.yaml'},line="), on_job.stdout
    (jobs / "train.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    # What the cluster's own file skips (a Service) is not what the job folder holds (review 19 U F3).
    cluster.write_text(cluster.read_text() + "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    empty = invoke("check", str(cluster), "--groups-from", str(jobs), "-o", "junit")
    assert empty.exit_code == 0
    suite = ElementTree.fromstring(empty.stdout)
    assert (suite.get("tests"), suite.get("skipped")) == ("1", "1")
    skipped = suite.find("testcase/skipped")
    assert skipped is not None
    assert skipped.get("message") == (
        f"no group written in {jobs} to check; gangplan does not read these inputs: ConfigMap"
    )
    # A Job whose group already runs in the cluster is not expanded, and the reason says so
    # (review 19 V F3: read alone, the folder's Job had been expanded, and the reason lost; then
    # the reason said "already created" of a Job the pull request adds).
    running = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: train-abc, namespace: ml, uid: u1, labels: {scheduling.x-k8s.io/pod-group: train}}\n"
               "spec: {nodeName: n1, containers: [{name: c, image: x}]}\nstatus: {phase: Running}\n")
    cluster.write_text(cluster.read_text() + running)
    (jobs / "train.yaml").write_text(job_manifest("train", 2, 4).split("---\n", 1)[1])
    created = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert created.exit_code == 0
    assert f"warning: no group written in {jobs} to check; gangplan does not read these inputs: Job (batch/v1, its group ml/train has pods in the cluster already)" in created.stderr


def test_check_says_a_bad_option_and_warnings_where_ci_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """review 18 H F6-F8: a --group no longer in the snapshot had no annotation and no JUnit
    file; annotations named files as typed, which GitHub reads from the repository root; a
    stale snapshot's warnings reached stderr only."""
    from xml.etree import ElementTree

    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    report = tmp_path / "report.xml"
    typo = invoke("check", str(cluster), "--group", "ml/nope", "-o", "github", "--junit-file", str(report))
    assert typo.exit_code == 2
    assert typo.stdout == "::error title=gangplan check%3A bad usage::--group ml/nope: no such group in the snapshot\n"
    (case,) = ElementTree.parse(report).getroot()
    assert (case.get("name"), case[0].get("type")) == ("usage", "UsageError")
    stale = tmp_path / "stale.yaml"
    stale.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  nodeName: gone\n"
        "  containers: [{name: c, image: x}]\nstatus: {phase: Running}\n"
    )
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    result = invoke("check", str(cluster), str(stale), "-o", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::warning title=gangplan check::pod ml/p runs on node gone, not in the snapshot")
    assert lines[1].startswith("::error file=cluster.yaml,line=11,col=1,title=ops/debug-shell cannot be placed::")


def test_verify_holds_a_placed_claim_to_the_groups_minimums_and_tells_same_named_groups_apart(tmp_path: Path) -> None:
    """review 18 J F1: a Plan that called an unplaced group placed (and placed none of its pods)
    passed, since only groups with placements were checked against minMember. J F4: a pending
    pod of no group named like a PodGroup (or Kueue plain pods named like one) made verify
    refuse gangplan's own valid plan: the claims were keyed by name alone."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    out = tmp_path / "plan.json"
    assert invoke("plan", snapshot, "-o", "plan", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    flipped = [dict(g, placed=True, reason="") if g["name"] == "ml/llm-pretrain" else g for g in data["groups"]]
    out.write_text(json.dumps(dict(data, groups=flipped)))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == "outcome ml/llm-pretrain: the plan says placed, but min-member: 0 of minMember 5 (running 0 + placed 0)"
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '110'}}\n"
    pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default{labels}}}\nspec: {{containers: [{{name: c, image: x}}]}}\n"
    collide = tmp_path / "collide.yaml"
    collide.write_text(
        node
        + "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: train, namespace: default}\nspec: {minMember: 2}\n"
        + "".join(pod.format(name=f"train-{i}", labels=", labels: {scheduling.x-k8s.io/pod-group: train}") for i in range(2))
        + pod.format(name="train", labels="")
        + "".join(
            pod.format(name=f"k-{i}", labels=", labels: {kueue.x-k8s.io/pod-group-name: train}, annotations: {kueue.x-k8s.io/pod-group-total-count: '2'}")
            for i in range(2)
        )
    )
    assert invoke("plan", str(collide), "-o", "plan", "--output-file", str(out)).exit_code == 0
    assert sorted((g["name"], g["api"], g["scheduled"]) for g in json.loads(out.read_text())["groups"]) == [
        ("default/train", "kueue.x-k8s.io/pod-group", 2), ("default/train", "scheduling.x-k8s.io/v1alpha1", 2), ("default/train", "v1/Pod", 1)
    ]
    checked = invoke("verify", str(collide), "--plan", str(out))
    assert checked.exit_code == 0, checked.stdout


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda d: d["groups"][0].update(placed="false"), 'groups[0].placed: expected true or false, got a string'),
        (lambda d: d.pop("groups"), "groups: a Plan says what happened to each group (make one with -o plan)"),
        (lambda d: d["groups"].__setitem__(0, "oops"), "groups[0]: expected an object, got a string"),
        (lambda d: d["groups"][0].pop("name"), "groups[0].name: expected a group's namespace/name"),
        (lambda d: d["placements"][0].update(uid=12345), "placements[0].uid: expected a string, got a number"),
    ],
)
def test_a_plan_with_a_field_dropped_or_mistyped_is_bad_input(
    tmp_path: Path, edit: Callable[[dict[str, Any]], object], expected: str
) -> None:
    """review 18 J F6: each of these turned the outcome checks off in silence (a string "false"
    read as true, a non-object entry skipped, a missing groups list read as none)."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    out = tmp_path / "plan.json"
    assert invoke("plan", snapshot, "-o", "plan", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    edit(data)
    out.write_text(json.dumps(data, indent=1))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].split(": ", 2)[-1] == expected


def test_a_plan_without_its_solver_name_is_still_held_to_its_claims(tmp_path: Path) -> None:
    """review 18 J F6: a Plan whose solver.solver was dropped was read as a List of Bindings,
    so what it says of its groups went unchecked."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    out = tmp_path / "plan.json"
    assert invoke("plan", snapshot, "-o", "plan", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    data["solver"].pop("solver")
    data["groups"] = [dict(g, placed=False) if g["scheduled"] else g for g in data["groups"]]
    out.write_text(json.dumps(data))
    result = invoke("verify", snapshot, "--plan", str(out))
    assert result.exit_code == 1 and "the plan says not placed" in result.stdout


TOPOLOGY_CLUSTER = """\
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Topology
metadata: {name: dc}
spec:
  levels: [{nodeLabel: zone}, {nodeLabel: rack}]
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a1, labels: {zone: za, rack: r1, group: x}}, status: {allocatable: {cpu: '4', pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: b1, labels: {zone: zb, rack: r1, group: x}}, status: {allocatable: {cpu: '4', pods: '110'}}}
---
apiVersion: scheduling.godel.kubewharf.io/v1alpha1
kind: PodGroup
metadata: {name: req, namespace: default}
spec: {minMember: 2, affinity: {podGroupAffinity: {required: [{topologyKey: KEY}]}}}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: req-0, namespace: default, annotations: {godel.bytedance.com/pod-group-name: req}}, spec: {containers: [{name: c, image: x}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: req-1, namespace: default, annotations: {godel.bytedance.com/pod-group-name: req}}, spec: {containers: [{name: c, image: x}]}}
"""


def split_bindings(path: Path) -> None:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "namespace": "default"},
         "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        for pod, node in (("req-0", "a1"), ("req-1", "b1"))
    ]}))


def test_verify_takes_the_levels_from_the_snapshots_topology_not_the_plan(tmp_path: Path) -> None:
    """review 18 J F2: an edited Plan whose levels dropped the upper level (or reversed them)
    made a required rack split over two zones pass (r1 under za and r1 under zb are two
    domains), with no warning, though the snapshot's Topology object defines the levels."""
    snapshot, out = tmp_path / "snapshot.yaml", tmp_path / "plan.json"
    snapshot.write_text(TOPOLOGY_CLUSTER.replace("KEY", "rack"))
    assert invoke("plan", str(snapshot), "-o", "plan", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    assert data["topology"]["levels"] == ["zone", "rack"]
    edited = dict(data, placements=[
        {"pod": f"default/{pod}", "node": node, "group": "default/req"} for pod, node in (("req-0", "a1"), ("req-1", "b1"))
    ], groups=[dict(g, placed=True, scheduled=2, reason="") for g in data["groups"]])
    for levels in (["rack"], ["rack", "zone"], []):
        out.write_text(json.dumps(dict(edited, topology={"levels": levels})))
        result = invoke("verify", str(snapshot), "--plan", str(out))
        assert result.exit_code == 1, levels
        assert "required-topology default/req: required rack: members span 2 domains (za/r1: 1 pod, zb/r1: 1 pod)" in result.stdout
        assert f"warning: the Plan's levels ({', '.join(levels) or 'none'}) are not the snapshot's Topology's (zone, rack)" in result.stderr


@pytest.mark.parametrize(
    "key, why",
    [
        ("group", "not a level of the snapshot's Topology (zone, rack), so the term cannot be held"),
        ("rakc", "no node carries that label, so the term cannot be held"),
    ],
)
def test_verify_reports_a_placement_of_a_group_whose_required_term_cannot_be_held(tmp_path: Path, key: str, why: str) -> None:
    """review 18 J F3: the planner refuses such a group (Kueue would not admit it), but verify
    skipped the term and passed any split of it."""
    snapshot, bindings = tmp_path / "snapshot.yaml", tmp_path / "bindings.json"
    snapshot.write_text(TOPOLOGY_CLUSTER.replace("KEY", key))
    assert f"required {key}" in invoke("plan", str(snapshot)).stdout
    split_bindings(bindings)
    result = invoke("verify", str(snapshot), "--plan", str(bindings))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == f"required-topology default/req: required {key}: {why}"


def test_an_output_file_replaced_keeps_its_mode(tmp_path: Path) -> None:
    """review 18 K F6: a 0664 file came back 0644 (the umask's), as a fresh one does; the
    replace is atomic, and so a plain open() would have kept the mode."""
    out = tmp_path / "out.json"
    out.write_text("old\n")
    out.chmod(0o664)
    assert invoke("plan", str(ROOT / "snapshots" / "small.yaml"), "-o", "json", "--output-file", str(out)).exit_code == 0
    assert out.stat().st_mode & 0o7777 == 0o664 and json.loads(out.read_text())["kind"] == "List"
    out.chmod(0o600)
    assert invoke("plan", str(ROOT / "snapshots" / "small.yaml"), "-o", "name", "--output-file", str(out)).exit_code == 0
    assert out.stat().st_mode & 0o7777 == 0o600


def test_warnings_and_spans_do_not_follow_the_order_of_the_input(tmp_path: Path) -> None:
    """review 18 K F2: the same objects in another file order changed the Plan's warnings (gated
    pods in input order; a pod on a missing node named beside another pod's node) and verify's
    spans lines."""
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {tor: t1}}\nstatus: {allocatable: {cpu: '8', pods: '110'}}\n"
    (tmp_path / "node.yaml").write_text(node)
    for x in "ab":
        (tmp_path / f"pods-{x}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: gated-{x}, namespace: default}}\n"
            "spec: {schedulingGates: [{name: example.com/gate}], containers: [{name: c, image: x}]}\n---\n"
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: ghost-{x}, namespace: default}}\n"
            f"spec: {{nodeName: gone-node-{x}, containers: [{{name: c, image: x}}]}}\nstatus: {{phase: Running}}\n---\n"
            "apiVersion: scheduling.godel.kubewharf.io/v1alpha1\nkind: PodGroup\n"
            f"metadata: {{name: {x}, namespace: default}}\nspec: {{minMember: 1, affinity: {{podGroupAffinity: {{preferred: [{{topologyKey: tor}}]}}}}}}\n---\n"
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {x}-0, namespace: default, annotations: {{godel.bytedance.com/pod-group-name: {x}}}}}\n"
            "spec: {containers: [{name: c, image: x}]}\n"
        )
    outputs = []
    for order in ("ab", "ba"):
        files = [str(tmp_path / "node.yaml"), *(str(tmp_path / f"pods-{x}.yaml") for x in order)]
        data = json.loads(invoke("plan", *files, "-o", "plan").stdout)
        data["solver"].pop("wallTime")
        out = tmp_path / f"{order}.json"
        out.write_text(json.dumps(data))
        outputs.append((data, invoke("verify", *files, "--plan", str(out)).stdout))
    assert outputs[0] == outputs[1]
    assert "pod default/ghost-a and 1 more run on 2 nodes (gone-node-a, ...), not in the snapshot" in outputs[0][0]["warnings"][-1]
    assert outputs[0][1].splitlines()[:2] == ["default/a spans tor 1, node 1", "default/b spans tor 1, node 1"]


VOLCANO_JOB = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '8', pods: '110', nvidia.com/gpu: '2'}}
---
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: default}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj, namespace: default}
spec:
  minAvailable: 2
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: '1'}}}]
"""


def test_verify_holds_a_pod_object_to_the_pod_its_workload_makes(tmp_path: Path) -> None:
    """review 18 J F5: for pods to create, verify read only the name and nodeName, so a Pod asking
    for 2 GPUs (4 on a 2-GPU node), or for another node selector, passed; and a Pod object for a
    pod that exists (kubectl create fails) was accepted as a placement."""
    snapshot, out = tmp_path / "snapshot.yaml", tmp_path / "pods.json"
    snapshot.write_text(VOLCANO_JOB)
    assert invoke("plan", str(snapshot), "-o", "json", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    assert invoke("verify", str(snapshot), "--plan", str(out)).exit_code == 0
    for item in data["items"]:
        if item["kind"] == "Pod":
            item["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "2"
    out.write_text(json.dumps(data))
    result = invoke("verify", str(snapshot), "--plan", str(out))
    assert result.exit_code == 1
    assert "pod-object default/vj-worker-0: the Pod to create is not the one its workload makes (spec differs)" in result.stdout
    out.write_text(json.dumps({"apiVersion": "v1", "kind": "PodList", "items": [
        {"metadata": {"name": "old", "namespace": "default"}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}}
    ]}))
    existing = invoke("verify", str(snapshot), "--plan", str(out))
    assert existing.exit_code == 1
    assert existing.stdout == (
        "pod-object default/old: a Pod object for a pod the snapshot already has: kubectl create fails"
        " (AlreadyExists); bind it with a Binding\n"
    )


def test_which_workload_manifests_are_expanded(tmp_path: Path) -> None:
    """review 18 L F1, F5, F6, F14: a finished Job exported without its uid (but with its
    status) made new pending pods that took a real group's room; a launcher Pod manifest beside
    a worker Job made the Job "already created"; a Job named by generateName was exit 2; a Job of
    parallelism 2,000,000 and 2 completions (2 pods) was refused by --max-objects."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    jobs.mkdir()
    done = job_manifest("old", 2, 4).replace("spec:\n  parallelism", "status: {succeeded: 2}\nspec:\n  parallelism")
    (jobs / "old.yaml").write_text(done)
    result = invoke("plan", str(cluster), str(jobs), "-o", "wide")
    assert "skipped objects gangplan does not use: 1 Job (batch/v1, already created)" in result.stderr
    assert "NotEnoughTasks: 0 pods exist, minMember is 2" in result.stdout
    (jobs / "old.yaml").unlink()
    launcher = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: mpi-launcher, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: mpi}}\n"
        "spec: {containers: [{name: c, image: x}]}\n"
    )
    (jobs / "mpi.yaml").write_text(job_manifest("mpi", 3, 1).replace("minMember: 3", "minMember: 4") + launcher)
    mpi = invoke("check", str(cluster), "--groups-from", str(jobs))
    assert mpi.exit_code == 0 and mpi.stdout == "1/1 groups placed\n"
    generated = job_manifest("gen", 2, 1).replace("metadata: {name: gen, namespace: ml}\nspec:\n  parallelism", "metadata: {generateName: gen-, namespace: ml}\nspec:\n  parallelism")
    (jobs / "mpi.yaml").write_text(generated.replace("parallelism: 2", "parallelism: 2000000\n  completions: 2"))
    names = invoke("plan", str(cluster), str(jobs), "-o", "name")
    assert names.exit_code == 0 and names.stdout == "pod/gen-0\npod/gen-1\n"


def test_a_launcher_pod_manifest_beside_its_workers_job_is_a_pod_to_create(tmp_path: Path) -> None:
    """review 19 U F1: the workers' Job became Pods to create and the launcher's Pod manifest a
    Binding, which the API server answers NotFound (the pod does not exist): `-o json | kubectl
    create -f -` left the gang half made. verify refuses such a Binding."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    jobs.mkdir()
    launcher = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: mpi-launcher, labels: {scheduling.x-k8s.io/pod-group: mpi}}\n"
        "spec: {containers: [{name: c, image: x}]}\n"
    )
    (jobs / "mpi.yaml").write_text(job_manifest("mpi", 3, 1).replace("minMember: 3", "minMember: 4").replace("namespace: ml", "namespace: default") + launcher)
    names = invoke("plan", str(cluster), str(jobs), "-o", "name")
    assert names.stdout == "pod/mpi-0\npod/mpi-1\npod/mpi-2\npod/mpi-launcher\n"
    out = tmp_path / "out.json"
    assert invoke("plan", str(cluster), str(jobs), "-o", "json", "--output-file", str(out)).exit_code == 0
    data = json.loads(out.read_text())
    (made,) = [item for item in data["items"] if item["metadata"]["name"] == "mpi-launcher"]
    assert made["kind"] == "Pod" and made["metadata"]["namespace"] == "default" and made["spec"]["nodeName"]
    assert invoke("verify", str(cluster), str(jobs), "--plan", str(out)).exit_code == 0
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "mpi-launcher", "namespace": "default"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": made["spec"]["nodeName"]}}
    data["items"] = [binding if item is made else item for item in data["items"]]
    out.write_text(json.dumps(data))
    refused = invoke("verify", str(cluster), str(jobs), "--plan", str(out))
    assert refused.exit_code == 1
    assert refused.stdout.startswith("pod-object default/mpi-launcher: a Binding for a pod that does not exist yet")
    # A Pod manifest with no workload beside it is planned as a pod of the snapshot, as before.
    alone = tmp_path / "alone.yaml"
    alone.write_text(launcher.replace("mpi-launcher", "solo").replace(", labels: {scheduling.x-k8s.io/pod-group: mpi}", ""))
    assert invoke("plan", str(cluster), str(alone), "-o", "name").stdout == "binding/solo\n"


SPREADING = (
    '{"workloadLabelSelectors": [{"key": "app", "operator": "In", "values": ["svc"]}],'
    ' "rules": [{"topologyKey": "rack", "maxShareAllowingPlacement": "0.5"}]}'
)


@pytest.mark.parametrize(
    ("rule", "key", "annotations"),
    [
        ("slices", "kueue.x-k8s.io/podset-slice-required-topology",
         "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: '2'"),
        ("slices", "kueue.x-k8s.io/podset-slice-required-topology-constraints",
         "kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{\"topology\": \"rack\", \"size\": 2}]'"),
        ("spreading", "kueue.x-k8s.io/podset-topology-spreading",
         f"kueue.x-k8s.io/podset-topology-spreading: '{SPREADING}'"),
    ],
)
def test_kueue_topology_rules_gangplan_does_not_model_are_warned_about(
    tmp_path: Path, rule: str, key: str, annotations: str
) -> None:
    """review 18 N F4: podset-slice-required-topology was dropped in silence; gangplan said
    Placed where Kueue would not admit the group. helper-83: so were the multi-layer slices
    (podset-slice-required-topology-constraints, a JSON list of levels and sizes that each
    must hold whole). helper-85: and podset-topology-spreading (TASTopologySpreading: a domain
    already holding more than maxShareAllowingPlacement of the Workloads the selectors match
    takes no further one, by default as a hard rule)."""
    path = tmp_path / "kueue.yaml"
    path.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0] + "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: k-{i}\n  namespace: ml\n  labels: {{kueue.x-k8s.io/pod-group-name: k}}\n"
        f"  annotations: {{kueue.x-k8s.io/pod-group-total-count: '2', {annotations}}}\n"
        "spec: {containers: [{name: c, image: x}]}\n"
        for i in range(2)
    ))
    result = invoke("plan", str(path))
    assert (
        f"warning: Kueue topology {rule} ({key}) is not modelled, so the plan may"
        " break it: pod ml/k-0, pod ml/k-1 ask for it"
    ) in result.stderr


def test_a_volcano_jobs_hard_network_topology_is_warned_about(tmp_path: Path) -> None:
    """review 18 M F4: the PodGroup's was warned about, the Volcano Job's (which its controller
    copies into the PodGroup) and a sub-group policy's were not."""
    snapshot = tmp_path / "snapshot.yaml"
    for extra in ("  networkTopology: {highestTierAllowed: 1}\n", "  subGroupPolicy: [{name: g, networkTopology: {mode: hard}}]\n"):
        snapshot.write_text(VOLCANO_JOB.replace("  minAvailable: 2\n", "  minAvailable: 2\n" + extra))
        result = invoke("plan", str(snapshot))
        assert "warning: Volcano networkTopology (mode hard; HyperNode tiers) is not modelled, so the plan may break it: PodGroup default/vj asks for it" in result.stderr
    snapshot.write_text(VOLCANO_JOB.replace("  minAvailable: 2\n", "  minAvailable: 2\n  networkTopology: {mode: soft}\n"))
    assert "not modelled" not in invoke("plan", str(snapshot)).stderr


def test_volcano_status_says_not_enough_pods_of_task(tmp_path: Path) -> None:
    """review 18 M F5: a task short of its minTaskMember is Volcano's NotEnoughPodsOfTask, not
    NotEnoughTasks (which it keeps for too few pods against minMember)."""
    snapshot = tmp_path / "snapshot.yaml"
    pod = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml, annotations: {{scheduling.k8s.io/group-name: tf,"
        " volcano.sh/task-spec: {task}}}}}\nspec: {{containers: [{{name: c, image: x}}]}}\n"
    )
    snapshot.write_text(
        CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0]
        + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: tf, namespace: ml}\n"
        "spec: {minMember: 3, minTaskMember: {ps: 1, worker: 2}}\n"
        + pod.format(name="tf-ps-0", task="ps") + pod.format(name="tf-ps-1", task="ps") + pod.format(name="tf-worker-0", task="worker")
    )
    result = invoke("plan", str(snapshot), "-o", "status")
    (condition,) = yaml.safe_load(result.stdout)["items"][0]["status"]["conditions"]
    assert (condition["reason"], condition["message"]) == ("NotEnoughPodsOfTask", "NotEnoughTasks: task worker: 1 pod exists, minTaskMember is 2")
    # Short of minMember as well (2 of 3): Volcano's gang plugin checks the tasks first
    # (CheckTaskValid, then ValidTaskNum), so it is still NotEnoughPodsOfTask (session 22's
    # workload review F5).
    snapshot.write_text(snapshot.read_text().replace(pod.format(name="tf-ps-1", task="ps"), ""))
    result = invoke("plan", str(snapshot), "-o", "status")
    (condition,) = yaml.safe_load(result.stdout)["items"][0]["status"]["conditions"]
    assert (condition["reason"], condition["message"]) == ("NotEnoughPodsOfTask", "NotEnoughTasks: task worker: 1 pod exists, minTaskMember is 2")


def test_a_volcano_job_waiting_to_be_enqueued_is_planned_with_its_podgroup(tmp_path: Path) -> None:
    """review 18 M F1: Volcano's job controller makes a Job's pods only once its PodGroup leaves
    Pending, so a stuck Job has a status, a PodGroup and no pods. It was skipped as "already
    created" and its PodGroup called NotEnoughTasks (check passed 0/0). Its pods now come from
    its templates and join the PodGroup its controller made; once pods exist, it is skipped."""
    uid = "11111111-2222-3333-4444-555555555555"
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(
        VOLCANO_JOB.replace("metadata: {name: vj, namespace: default}", f"metadata: {{name: vj, namespace: default, uid: {uid}}}")
        + "status: {state: {phase: Pending}}\n"
        + f"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: vj-{uid}\n  namespace: default\n"
        f"  ownerReferences: [{{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: vj, uid: {uid}, controller: true}}]\n"
        "spec: {minMember: 2, minTaskMember: {worker: 2}, queue: default}\nstatus: {phase: Pending}\n"
    )
    result = invoke("check", str(snapshot))
    assert result.exit_code == 0 and result.stdout == "2/2 groups placed\n"  # the Job's and the lone pod default/old
    created = [i for i in json.loads(invoke("plan", str(snapshot), "-o", "json").stdout)["items"] if i["kind"] == "Pod"]
    assert [(p["metadata"]["name"], p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]) for p in created] == [
        ("vj-worker-0", f"vj-{uid}"), ("vj-worker-1", f"vj-{uid}"),
    ]
    # Beside a PodGroup of the older name <job> too, the controller's getPodGroupByJob finds
    # <job>-<uid> first (the Job was skipped: "give its PodGroup").
    both = tmp_path / "both.yaml"
    both.write_text(snapshot.read_text() + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                    "metadata: {name: vj, namespace: default}\nspec: {minMember: 2}\n")
    created = [i for i in json.loads(invoke("plan", str(both), "-o", "json").stdout)["items"] if i["kind"] == "Pod"]
    assert {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in created} == {f"vj-{uid}"}
    snapshot.write_text(snapshot.read_text() + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: vj-worker-0, namespace: default, "
                        f"uid: a1, annotations: {{scheduling.k8s.io/group-name: vj-{uid}}}}}\nspec: {{nodeName: n1, containers: [{{name: c, image: x}}]}}\n"
                        "status: {phase: Running}\n")
    running = invoke("plan", str(snapshot))
    assert "1 Job (batch.volcano.sh/v1alpha1, already created)" in running.stderr


def test_groups_from_and_outputs_see_the_files_an_input_folder_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """review 18 L F3/F4: --groups-from ./jobs beside jobs/ as an input read the folder twice
    (exit 2, a PodGroup "duplicate" of itself); an output file inside an input folder replaced
    the job manifest there; --junit-file - wrote a file named "-"."""
    cluster, jobs = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    jobs.mkdir()
    (jobs / "train.yaml").write_text(job_manifest("train", 2, 4))
    for given in (str(jobs), f"{tmp_path}/./jobs", str(jobs / "train.yaml")):
        result = invoke("check", str(cluster), str(jobs), "--groups-from", given)
        assert result.exit_code == 0 and result.stdout == "1/1 groups placed\n", given
    kept = (jobs / "train.yaml").read_text()
    result = invoke("check", str(cluster), "--groups-from", str(jobs), "--junit-file", str(jobs / "train.yaml"))
    assert result.exit_code == 2 and result.stderr.strip().endswith("is also an input; write the output to another file")
    assert (jobs / "train.yaml").read_text() == kept
    # In a folder of its own: the current one is shared by tests side by side (pytest-xdist), and
    # a "-" another test wrote there would fail this one (or stay in the checkout for the next run).
    monkeypatch.chdir(tmp_path)
    dash = invoke("check", str(cluster), "--groups-from", str(jobs), "--junit-file", "-")
    assert dash.exit_code == 2 and "--junit-file - would write to stdout" in dash.stderr and not Path("-").exists()
    assert dash.stdout == ""
    # A new file there would be read by the next run, as a duplicate of the PodGroup it
    # reports on (review 19 U F7); a report (.xml, .html) or a hidden file is not read.
    status = jobs / "sub" / "status.YAML"
    status.parent.mkdir()
    refused = invoke("plan", str(cluster), str(jobs), "-o", "status", "--output-file", str(status))
    assert refused.exit_code == 2 and not status.exists()
    assert refused.stderr.splitlines()[-1] == (
        f"error: {status} is in the input folder {jobs}, which the next run would read; write the output elsewhere"
    )
    for allowed in (jobs / "report.xml", jobs / ".status.yaml", tmp_path / "status.yaml"):
        assert invoke("plan", str(cluster), str(jobs), "-o", "status", "--output-file", str(allowed)).exit_code == 0, allowed
    # A Plan there is skipped by the next run (review 19 V F2: plan . -o plan, then verify . --plan, is a workflow).
    assert invoke("plan", str(cluster), str(jobs), "-o", "plan", "--output-file", str(jobs / "plan.json")).exit_code == 0
    assert invoke("verify", str(cluster), str(jobs), "--plan", str(jobs / "plan.json")).exit_code == 0
    # Run again, the same command replaces its own Plan and diff (it said "is also an input"); a
    # plan named among the arguments is not also a second plan of the folder's; topology's
    # output, which the next run could not read, is refused there.
    for _ in range(2):
        again = invoke("plan", str(cluster), str(jobs), "-o", "plan", "--output-file", str(jobs / "plan.json"))
        assert again.exit_code == 0, again.stderr
        compared = invoke("diff", str(cluster), str(jobs), "--plan", str(jobs / "plan.json"), "-o", "json", "--output-file", str(jobs / "d.json"))
        assert compared.exit_code == 0, compared.stderr
    for command in ("verify", "diff"):
        among = invoke(command, str(cluster), str(jobs), str(jobs / "plan.json"))
        assert among.exit_code == 0, among.stderr
    mine = invoke("diff", str(cluster), str(jobs), "--plan", str(jobs / "plan.json"), "-o", "json", "--output-file", str(jobs / "plan.json"))
    assert mine.exit_code == 2 and mine.stderr.endswith("plan.json is also an input; write the output to another file\n")
    tree = invoke("topology", str(cluster), str(jobs), "-o", "json", "--output-file", str(jobs / "topology.json"))
    assert tree.exit_code == 2 and "which the next run would read" in tree.stderr and not (jobs / "topology.json").exists()


def test_only_a_volcano_job_still_pending_is_planned_from_its_templates(tmp_path: Path) -> None:
    """Review 18 O F1: a Volcano Job Completed, Running or Aborted whose pods are not in the dump
    was planned again (bare pods to rerun it); only a Job still Pending, its PodGroup Pending or
    Inqueue, waits for its pods."""
    uid = "11111111-2222-3333-4444-555555555555"
    snapshot = tmp_path / "snapshot.yaml"
    for job_phase, group_phase, planned in (("Completed", "Completed", False), ("Running", "Running", False),
                                            ("Aborted", "Pending", False), ("Pending", "Inqueue", True)):
        snapshot.write_text(
            VOLCANO_JOB.replace("metadata: {name: vj, namespace: default}", f"metadata: {{name: vj, namespace: default, uid: {uid}}}")
            + f"status: {{state: {{phase: {job_phase}}}}}\n"
            + f"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: vj-{uid}, namespace: default}}\n"
            f"spec: {{minMember: 2, queue: default}}\nstatus: {{phase: {group_phase}}}\n"
        )
        names = invoke("plan", str(snapshot), "-o", "name").stdout.split()
        assert ("pod/vj-worker-0" in names) is planned, job_phase


def test_a_job_beside_bound_pods_exported_without_uids_is_not_expanded(tmp_path: Path) -> None:
    """Review 18 O F3: pods exported without uids (kubectl-neat) but bound to nodes are the
    group's pods from a cluster: its Job, also without uid and status, is not expanded again."""
    cluster, snapshot = tmp_path / "cluster.yaml", tmp_path / "export.yaml"
    cluster.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    snapshot.write_text(job_manifest("train", 2, 1) + "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: train-x{i}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: train}}}}\n"
        f"spec: {{nodeName: n{i + 1}, containers: [{{name: c, image: x}}]}}\nstatus: {{phase: Running}}\n"
        for i in range(2)
    ))
    result = invoke("plan", str(cluster), str(snapshot), "-o", "wide")
    assert "1 Job (batch/v1, its group ml/train has pods in the cluster already)" in result.stderr
    assert result.stdout.splitlines()[1].split()[:5] == ["ml/train", "scheduler-plugins", "0", "Running", "2/2"]


def test_groups_from_an_empty_folder_is_bad_input(tmp_path: Path) -> None:
    """Review 18 O F5: a --groups-from folder with nothing to read passed (0/0 groups placed)."""
    cluster, empty = tmp_path / "cluster.yaml", tmp_path / "jobs"
    cluster.write_text(CLUSTER)
    empty.mkdir()
    result = invoke("check", str(cluster), "--groups-from", str(empty))
    assert result.exit_code == 2 and result.stderr.strip().endswith("no .yaml, .yml or .json files in this directory")


def test_a_podgroup_manifest_whose_pods_failed_and_a_pinned_launcher(tmp_path: Path) -> None:
    """Review 18 P F3/F4: a PodGroup manifest whose only pods failed was no longer checked (exit
    0); a launcher Pod manifest pinned with nodeName was taken for a pod from a cluster, so its
    group's StatefulSet was skipped and the group was short."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER.split("---\napiVersion: v1\nkind: Pod")[0])
    group = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ml}}\nspec: {{minMember: {n}}}\n"
    failed = tmp_path / "failed.yaml"
    failed.write_text(group.format(name="pg", n=2) + "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: pg-{i}, namespace: ml, labels: {{scheduling.x-k8s.io/pod-group: pg}}}}\n"
        "spec: {containers: [{name: c, image: x}]}\nstatus: {phase: Failed}\n" for i in range(2)
    ))
    result = invoke("check", str(cluster), str(failed))
    assert result.exit_code == 1 and result.stdout.startswith("FAIL ml/pg: NotEnoughTasks: 0 pods exist (2 failed, which do not count)")
    mpi = tmp_path / "mpi.yaml"
    mpi.write_text(
        group.format(name="mpi", n=3)
        + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: mpi-launcher, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: mpi}}\n"
        "spec: {nodeName: n1, containers: [{name: c, image: x}]}\n"
        "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: mpi-worker, namespace: ml}\n"
        "spec: {replicas: 2, template: {metadata: {labels: {scheduling.x-k8s.io/pod-group: mpi}}, spec: {containers: [{name: c, image: x}]}}}\n"
    )
    checked = invoke("check", str(cluster), "--groups-from", str(mpi))
    assert checked.exit_code == 0 and checked.stdout == "1/1 groups placed\n"


@pytest.mark.parametrize("command", ["gangplan plan snapshots/small.yaml", "gangplan explain ml/llm-pretrain snapshots/small.yaml"])
def test_the_readme_shows_what_the_command_prints(command: str) -> None:
    """The README's console examples are output, not prose: review 19 U F4 found one showing
    'cpu (...)' where the program prints figures. stderr lines (the summary with its time)
    are compared by their start, stdout exactly."""
    import re
    import shlex

    readme = (ROOT / "README.md").read_text()
    block = re.search(rf"```console\n\$ {re.escape(command)}\n(.*?)```", readme, re.S)
    assert block is not None, command
    shown = block.group(1).splitlines()
    result = runner.invoke(app, [str(ROOT / a) if a.startswith("snapshots/") else a for a in shlex.split(command)[1:]])
    assert result.exit_code == 0
    out = result.stdout.splitlines()
    assert shown[len(shown) - len(out):] == out
    said = [line.rsplit(" | ", 1)[0] for line in result.stderr.splitlines()]
    assert [line.rsplit(" | ", 1)[0] for line in shown[: len(shown) - len(out)]] == said[: len(shown) - len(out)]


@pytest.mark.parametrize("pod_first", [True, False])
def test_explain_and_check_take_the_podgroup_a_bare_pod_is_named_like(pod_first: bool, tmp_path: Path) -> None:
    """Session 22's semantics review F3: a bare pod default/g beside the PodGroup default/g that
    cannot fit. explain explained the pod, and check --group judged whichever came last."""
    lone = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g", "namespace": "default",
            "creationTimestamp": "2023-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    members = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"g-{i}", "namespace": "default",
                "labels": {"scheduling.x-k8s.io/pod-group": "g"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}} for i in range(2)]
    pods = [lone, *members] if pod_first else [*members, lone]
    snapshot = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "g", "namespace": "default", "creationTimestamp": "2024-01-01T00:00:00Z"},
         "spec": {"minMember": 2}},
        *pods,
    ]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snapshot))
    explained = invoke("explain", "default/g", str(path))
    assert explained.exit_code == 0
    assert explained.stdout.startswith("default/g (scheduler-plugins") and "not placed" in explained.stdout
    checked = invoke("check", str(path), "--group", "default/g")
    assert checked.exit_code == 1, checked.stdout
    assert "has the name of a PodGroup in its namespace" in checked.stderr


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.name)
@pytest.mark.parametrize("as_json", [False, True], ids=["yaml", "json"])
def test_check_places_every_group_from_its_items_text(
    snapshot: Path, as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JUnit names each group's line: read from each group's List item alone (a walk of the
    whole dump's parser events took 8 s at L from a live cluster's YAML, composing it into
    nodes 33 s), and the same lines the walk and the composer give."""
    from xml.etree import ElementTree

    from gangplan import loader

    if as_json:  # as kubectl get -o json prints it
        converted = tmp_path / f"{snapshot.stem}.json"
        converted.write_text(json.dumps(yaml.safe_load(snapshot.read_text()), indent=4))
        snapshot = converted

    def never(*args: object) -> None:
        raise AssertionError(f"{args[0]} read whole")

    with monkeypatch.context() as patched:
        patched.setattr(loader, "_composed", never)
        patched.setattr(loader, "_walked", never)
        from_items = invoke("check", str(snapshot), "--solver", "greedy", "-o", "junit")
    monkeypatch.setattr(loader, "_in_items", lambda file, places: [None] * len(places))
    with monkeypatch.context() as patched:
        patched.setattr(loader, "_composed", never)
        walked = invoke("check", str(snapshot), "--solver", "greedy", "-o", "junit")
    monkeypatch.setattr(loader, "_walked", lambda file, wanted: None)
    composed = invoke("check", str(snapshot), "--solver", "greedy", "-o", "junit")
    assert from_items.exit_code == walked.exit_code == composed.exit_code and walked.exit_code in (0, 1), walked.output
    assert from_items.stdout == walked.stdout == composed.stdout
    cases = [case for case in ElementTree.fromstring(walked.stdout) if case.tag == "testcase"]
    assert cases and all(case.get("line") for case in cases)


def test_only_a_cp_sat_plan_imports_or_tools(tmp_path: Path) -> None:
    """OR-Tools is a third of the CLI's start: a greedy plan and the commands that only read,
    check or compare plans must not load it, and a CP-SAT plan loads it without pandas."""
    import subprocess

    small = str(ROOT / "snapshots" / "small.yaml")
    saved = tmp_path / "plan.yaml"
    assert invoke("plan", small, "--solver", "greedy", "-o", "plan", "--output-file", str(saved)).exit_code == 0
    runs = {
        "greedy": ["plan", small, "--solver", "greedy", "-o", "json"],
        "check": ["check", small, "--solver", "greedy"],
        "verify": ["verify", small, "--plan", str(saved)],
        "diff": ["diff", small, "--plan", str(saved)],
        "topology": ["topology", small],
        "generate": ["generate", "--shape", "1x1x2x2", "--groups", "2"],
        "cp-sat": ["plan", small, "-o", "json"],
    }
    script = (
        "import sys\nfrom gangplan.cli import app\nsys.argv = ['gangplan', *sys.argv[1:]]\n"
        "try:\n    app()\nexcept SystemExit as done:\n    code = done.code\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'ortools', 'pandas'}), file=sys.stderr)\n"
    )
    loaded = {}
    for name, args in runs.items():
        proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True)
        loaded[name] = proc.stderr.splitlines()[-1]
    # check exits 1: one group of the small snapshot does not fit
    assert loaded == {**{name: "0 []" for name in runs}, "check": "1 []", "cp-sat": "0 ['ortools']"}


def test_the_cli_leaves_without_the_interpreters_teardown_once_its_output_is_out(tmp_path: Path) -> None:
    """Interpreter shutdown takes 0.3 s after a CP-SAT plan (OR-Tools' own teardown): ``main``
    leaves with os._exit once stdout and stderr are flushed, with the same code and the whole output."""
    import json
    import subprocess

    script = (
        "import atexit, sys\natexit.register(lambda: sys.stderr.write('teardown ran\\n'))\n"
        "from gangplan.cli import main\nsys.argv = ['gangplan', *sys.argv[1:]]\nmain()\n"
    )
    small = str(ROOT / "snapshots" / "small.yaml")
    planned = subprocess.run([sys.executable, "-c", script, "plan", small, "-o", "json"], capture_output=True, text=True)
    assert planned.returncode == 0 and json.loads(planned.stdout)["kind"] == "List"
    refused = subprocess.run([sys.executable, "-c", script, "plan", str(tmp_path / "none.yaml")], capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.splitlines()[-1].startswith("error: ")
    assert "teardown ran" not in planned.stderr + refused.stderr


def test_a_stream_that_cannot_be_flushed_leaves_the_ordinary_way(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import gangplan.cli as cli

    class Full(io.StringIO):
        def flush(self) -> None:
            raise OSError(28, "No space left on device")

    assert cli._flushed()
    monkeypatch.setattr(sys, "stdout", Full())
    assert not cli._flushed()


def test_nodes_with_another_vendors_gpus_name_the_gpu_resource_to_give(tmp_path: Path) -> None:
    """With AMD's GPUs and the default --gpu-resource, the report and topology counted no GPU
    (\"gpu 0/0\") and said nothing of the flag."""
    snapshot = tmp_path / "amd.yaml"
    snapshot.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', amd.com/gpu: '8'}}\n")
    hint = "warning: no node has nvidia.com/gpu; give --gpu-resource amd.com/gpu to count amd.com/gpu as GPUs\n"
    for command in (["plan"], ["topology"]):
        assert hint in invoke(*command, str(snapshot)).stderr, command
        assert "warning" not in invoke(*command, str(snapshot), "--gpu-resource", "amd.com/gpu").stderr, command


def test_an_input_without_nodes_is_said_when_some_pods_are_already_bound(tmp_path: Path) -> None:
    """A dump of Pods without `kubectl get nodes`: one pending pod is enough for "nothing can be
    placed" to be true and said, even when other pods are bound (to nodes the input lacks)."""
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bound, namespace: ml}\n"
        "spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
        "status: {phase: Running}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: waiting, namespace: ml}\n"
        "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    )
    result = invoke("plan", str(pods))
    assert result.exit_code == 0, result.stderr
    assert "warning: the input has no Node objects, so nothing can be placed" in result.stderr


def test_a_gpu_resource_no_node_has_any_of_is_not_offered_as_the_one_to_give(tmp_path: Path) -> None:
    """The hint names another vendor's GPUs only when nodes have some: amd.com/gpu: 0 (a device
    plugin registered, no device) counts no GPU either, so "give --gpu-resource amd.com/gpu"
    would send the user to a resource that changes nothing."""
    snapshot = tmp_path / "none.yaml"
    snapshot.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', amd.com/gpu: '0'}}\n")
    for command in (["plan"], ["topology"]):
        result = invoke(*command, str(snapshot))
        assert result.exit_code == 0, result.stderr
        assert "--gpu-resource" not in result.stderr, command


def test_a_plan_named_both_as_an_argument_and_by_plan_is_read_as_the_plan(tmp_path: Path) -> None:
    """`verify SNAPSHOT PLAN --plan PLAN`: the plan file is not part of the snapshot (_load skips
    it), and the snapshot beside it is still there, so this is no "give the snapshot too" error."""
    bindings = tmp_path / "plan.json"
    bindings.write_text(invoke("plan", str(ROOT / "snapshots" / "small.yaml"), "-o", "json").stdout)
    for command in ("verify", "diff"):
        result = invoke(command, str(ROOT / "snapshots" / "small.yaml"), str(bindings), "--plan", str(bindings))
        assert result.exit_code == 0, (command, result.stderr)
        assert "error" not in result.stderr, command


@pytest.mark.parametrize("command", [["plan"], ["check"], ["explain", "ml/pytorch-ddp"]])
def test_the_defaults_are_designs_one_worker_and_ten_seconds(command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """DESIGN: "--time-limit defaults to 10 s" and by default one solver worker, which makes the
    output byte-identical on any machine; two workers would be the non-reproducible mode."""
    import gangplan.cli as cli

    seen: list[Any] = []
    real = cli.make_plan

    def spy(snapshot: Any, options: Any, reporter: Any = None) -> Any:
        seen.append(options)
        return real(snapshot, options, reporter)

    monkeypatch.setattr(cli, "make_plan", spy)
    result = invoke(*command, str(ROOT / "snapshots" / "small.yaml"), "--solver", "greedy")
    assert result.exit_code in (0, 1), result.stderr
    (options,) = seen
    assert (options.workers, options.time_limit, options.seed) == (1, 10.0, 0)


def test_levels_may_be_given_with_spaces_after_the_commas(tmp_path: Path) -> None:
    """`--levels "a, b"` is the same two keys as `--levels a,b`: the spaces are around the
    keys, not in them (a label key holds no space)."""
    snapshot = str(ROOT / "snapshots" / "gpu-cluster.yaml")
    tight = invoke("topology", snapshot, "--levels", "network.example.com/minipod,network.example.com/tor")
    spaced = invoke("topology", snapshot, "--levels", " network.example.com/minipod , network.example.com/tor ")
    assert tight.exit_code == 0 and spaced.exit_code == 0, spaced.stderr
    assert spaced.stdout == tight.stdout
    assert "topology: network.example.com/minipod > network.example.com/tor" in spaced.stdout


def test_a_table_written_to_a_file_is_plain_even_from_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Colour is for a terminal: the table sent to --output-file from a terminal session is read
    by grep and awk, so it carries no escape codes, as `> file` gives none."""
    import gangplan.cli as cli

    monkeypatch.setattr(cli, "_is_terminal", lambda stream: True)
    out = tmp_path / "table.txt"
    result = invoke("plan", str(ROOT / "snapshots" / "small.yaml"), "--solver", "greedy", "--output-file", str(out))
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert text.startswith("GROUP") and "\x1b[" not in text


def test_groups_from_stdin_is_bad_usage(tmp_path: Path) -> None:
    """check --groups-from names a file or folder whose groups are checked; stdin feeds the
    snapshot (`-`), so `--groups-from -` is a usage error (exit 2, one line), not a silent read."""
    snapshot = ROOT / "snapshots" / "small.yaml"
    result = invoke("check", str(snapshot), "--groups-from", "-", input=snapshot.read_text())
    assert result.exit_code == 2, result.stderr
    assert result.stderr.splitlines()[-1] == "error: --groups-from takes a file or folder, not - (stdin)"
    assert result.stdout == ""


def test_explain_names_four_nodes_and_counts_the_rest_as_wide_does() -> None:
    """explain's "placed:" line lists at most four nodes and says how many more, as `-o wide`'s
    NODES column does (",+2"): the count of nodes in the line and the names shown agree."""
    snapshot = str(ROOT / "snapshots" / "gpu-cluster.yaml")
    wide = invoke("plan", snapshot, "--solver", "greedy", "-o", "wide").stdout
    row = next(line.split() for line in wide.splitlines() if line.startswith("llm/reward-model "))
    shown = next(cell for cell in row if cell.endswith(",+2"))
    result = invoke("explain", "llm/reward-model", snapshot, "--solver", "greedy")
    assert result.exit_code == 0, result.stderr
    placed = next(line for line in result.stdout.splitlines() if line.startswith("placed: "))
    assert placed.endswith(f"on 6 nodes ({', '.join(shown.split(',')[:4])} and 2 more)"), placed


def test_a_plan_file_of_two_documents_is_bad_input(tmp_path: Path) -> None:
    """--plan names "a Plan or a List of Bindings": a file of two YAML documents is neither, and
    taking the first would check half of what the user meant (exit 2, the file named)."""
    snapshot = str(ROOT / "snapshots" / "small.yaml")
    bindings = invoke("plan", snapshot, "-o", "yaml").stdout
    two = tmp_path / "two.yaml"
    two.write_text(bindings + "---\n" + bindings)
    for command in ("verify", "diff"):
        result = invoke(command, snapshot, "--plan", str(two))
        assert result.exit_code == 2, (command, result.stderr)
        last = result.stderr.splitlines()[-1]
        assert last.startswith(f"error: {two}") and "expected one Plan or List of Bindings, found 2 documents" in last


def test_the_topology_tree_marks_cordoned_and_not_ready_nodes() -> None:
    """topology's "free" counts only Ready, schedulable nodes (its help): a node with nothing
    free for that reason says why, so "0 free" is not read as "full". small.yaml has one of each."""
    result = invoke("topology", str(ROOT / "snapshots" / "small.yaml"))
    assert result.exit_code == 0, result.stderr
    marked = {line.split()[1]: line.split()[-1] for line in result.stdout.splitlines() if line.endswith(")") and "node-" in line}
    assert marked == {"node-cpu-08": "(cordoned)", "node-gpu-04": "(NotReady)"}


@pytest.mark.parametrize("kueue", [False, True], ids=["bare-pod", "kueue-pod-group"])
def test_wide_nodes_keep_a_podgroup_and_a_same_named_implicit_group_apart(kueue: bool, tmp_path: Path) -> None:
    """A bare pod (or a Kueue pod group) default/g beside the PodGroup default/g: both are
    planned, one 2-cpu pod each on its own 2-cpu node, and -o wide gave both rows both nodes
    (its NODES column was keyed by the group's name alone). The report tells them apart."""
    member = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g-0", "namespace": "default",
              "labels": {"scheduling.x-k8s.io/pod-group": "g"}},
              "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}
    other: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g" if not kueue else "k-0", "namespace": "default"},
                             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}
    if kueue:
        other["metadata"]["labels"] = {"kueue.x-k8s.io/managed": "true", "kueue.x-k8s.io/pod-group-name": "g"}
        other["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-group-total-count": "1"}
    snapshot = {"apiVersion": "v1", "kind": "List", "items": [
        *({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": "2", "pods": "110"}}}
          for name in ("n1", "n2")),
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "g", "namespace": "default"}, "spec": {"minMember": 1}},
        member, other,
    ]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snapshot))
    placed = {p["pod"]: p["node"] for p in plan_json(str(path))["placements"]}
    result = invoke("plan", str(path), "-o", "wide")
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    nodes = header.index("NODES")
    shown = sorted(row[nodes:].split()[0] for row in rows)
    assert shown == sorted(placed.values()) and len(set(shown)) == 2, result.stdout

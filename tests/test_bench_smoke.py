"""The benchmark scripts run end to end (S size or the small snapshot, a short time limit); no timing is asserted."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_scale_benchmark_smoke(tmp_path: Path) -> None:
    # A temporary directory of its own: tests run side by side (pytest-xdist), and another
    # benchmark's snapshots in the shared one would look like this run's left behind.
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "S", "--runs", "1",
         "--modes", "cp-sat,greedy", "--time-limit", "0.5"],
        capture_output=True, text=True, timeout=600, check=True, env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    rows = [line for line in out.stdout.splitlines() if line.startswith("S ")]
    # Greedy runs first whatever the order given: the ratios and verdicts are against it.
    assert [row.split()[1:3] for row in rows] == [["512", "greedy"], ["512", "cp-sat"]]
    assert "WORSE" not in out.stdout  # the default plan is never worse than greedy on objective 1
    for row in rows:
        placed = next(cell for cell in row.split() if "/" in cell)
        assert int(placed.split("/")[1]) == 100
        gap = next(cell for cell in row.split() if cell.endswith("%") or cell == "-")
        # A gap short of 0 names the objective-1 stage it is at, as the CLI's summary does.
        stage = row.split(" gap at ")[1] if " gap at " in row else None
        assert (gap in ("-", "0.00%")) == (stage is None)
        assert stage is None or stage.split("@")[0] in ("quorum-demand", "job-groups", "queue-order")
        # Objective 1 per priority level only: not the topology terms (sort-rank@<level key>).
        levels = [part.split(":")[0] for part in row.split("  ")[-1].split("; ")]
        assert levels == ["p1000", "p100", "p10"], levels
    assert "growth against node count" in out.stdout and "cp-sat      S 512 nodes" in out.stdout
    assert list(tmp_path.iterdir()) == []  # its snapshots removed


def test_scale_benchmark_reads_yaml_snapshots_and_padded_dumps(tmp_path: Path) -> None:
    """``--format yaml`` writes the snapshot as kubectl's YAML, and ``--kubectl-fields`` pads it
    with what a live cluster's dump also holds; the plans are the same as from the plain JSON."""
    rows, written = {}, {}
    for form, *more in (("json",), ("yaml",), ("json", "--kubectl-fields")):
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "S", "--runs", "1",
             "--modes", "greedy", "--format", form, *more, "--workdir", str(tmp_path / (form + "".join(more)))],
            capture_output=True, text=True, timeout=600, check=True,
        )
        lines = out.stdout.splitlines()
        assert lines[0].startswith(f"snapshots ({form}{', with kubectl fields' if more else ''}) in ")
        key = form + "".join(more)
        written[key] = (Path(lines[0].split(" in ", 1)[1]) / f"S.{form}").read_text()
        row = next(line for line in lines if line.startswith("S "))
        rows[key] = row.split()[7:]  # from groups placed on: not the times and memory
    assert rows["json"] == rows["yaml"] == rows["json--kubectl-fields"] and rows["json"][0] != "0/100"
    assert written["yaml"].startswith("apiVersion: v1\n")  # YAML as kubectl writes it, not JSON
    assert yaml.load(written["yaml"], Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == json.loads(written["json"])
    padded = json.loads(written["json--kubectl-fields"])
    assert len(written["json--kubectl-fields"]) > 5 * len(written["json"])
    assert all(len(node["status"]["images"]) == 50 for node in padded["items"] if node["kind"] == "Node")


def test_scale_benchmark_makes_groups_exclusive(tmp_path: Path) -> None:
    """``--exclusive tor:all`` requires every Godel PodGroup at the tor and gives each of their
    pending pods JobSet's anti-affinity to every other job's there; greedy's plan of it keeps
    each tor to one of those groups placed there, and nothing is warned about as not modelled."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "S", "--runs", "1", "--modes", "greedy",
         "--exclusive", "tor:all", "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=True,
    )
    assert out.stdout.splitlines()[0].startswith("snapshots (json, JobSet-exclusive at tor:all) in ")
    items = json.loads((tmp_path / "S.json").read_text())["items"]
    groups = [i for i in items if i["kind"] == "PodGroup" and i["apiVersion"].startswith("scheduling.orchestration.bytedance.com/")]
    assert len(groups) > 30
    assert all(g["spec"]["affinity"]["podGroupAffinity"]["required"] == [{"topologyKey": "network.example.com/tor"}] for g in groups)
    godel = {f"{g['metadata']['namespace']}/{g['metadata']['name']}" for g in groups}
    pending = [
        i for i in items
        if i["kind"] == "Pod" and not i["spec"].get("nodeName") and "godel.bytedance.com/pod-group-name" in i["metadata"].get("annotations", {})
    ]
    assert len(pending) > 100
    for pod in pending:
        (term,) = pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        job = pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-key"]
        assert term["labelSelector"]["matchExpressions"][1] == {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": [job]}
    from gangplan.loader import load_snapshot
    from gangplan.planner import Options, plan
    from gangplan.verify import verify

    snapshot = load_snapshot([str(tmp_path / "S.json")])
    result = plan(snapshot, Options(solver="greedy"))
    assert not [w for w in result.warnings if "not modelled" in w]
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    tor = {n.name: n.labels["network.example.com/tor"] for n in snapshot.nodes}
    groups_in: dict[str, set[str]] = {}
    for p in result.placements:
        if p.group in godel:
            groups_in.setdefault(tor[p.node], set()).add(p.group)
    assert len(groups_in) > 8 and all(len(g) == 1 for g in groups_in.values())


def _plan(objective: list[tuple[str, int]]) -> dict:
    return {"solver": {"objective": [{"name": name, "value": value} for name, value in objective]}}


def test_bench_compares_objective_one_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan equal to greedy's on objective 1 whose groups span fewer tors is not WORSE:
    the topology terms after objective 1 are minimised, and compared along with it they
    made gpu-cluster's default plan WORSE than greedy's (17 tor spans against 19). A plan
    that differs only in the queue-order tie-break is not equal (scale.py's verdict left
    the tie-break out)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    bench = importlib.import_module("bench")
    greedy = _plan([("quorum-demand@100", 50), ("job-groups@100", 2), ("queue-order@100", 3),
                    ("extra-pods", 4), ("preferred-spans@example.com/tor", 19), ("nodes-opened", 80)])
    fewer_spans = _plan([("quorum-demand@100", 50), ("job-groups@100", 2), ("queue-order@100", 3),
                         ("extra-pods", 4), ("preferred-spans@example.com/tor", 17), ("nodes-opened", 84)])
    more_demand = _plan([("quorum-demand@100", 51), ("job-groups@100", 1), ("queue-order@100", 1),
                         ("extra-pods", 0), ("preferred-spans@example.com/tor", 30), ("nodes-opened", 90)])
    earlier = _plan([("quorum-demand@100", 50), ("job-groups@100", 2), ("queue-order@100", 4),
                     ("extra-pods", 0), ("preferred-spans@example.com/tor", 30), ("nodes-opened", 90)])
    assert bench.versus(fewer_spans, greedy) == "="
    assert bench.versus(more_demand, greedy) == "better"
    assert bench.versus(greedy, more_demand) == "WORSE"
    # The queue-order tie-break is objective 1's last term (DESIGN), in both scripts' verdicts.
    assert bench.versus(earlier, greedy) == "better"


def test_bench_script_smoke() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--runs", "1", "--time-limit", "1",
         str(ROOT / "snapshots" / "small.yaml")],
        capture_output=True, text=True, timeout=600, check=True,
    )
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("small.yaml")]
    assert [row[1] for row in rows] == ["greedy", "cp-sat", "cp-sat"]  # the last is "cp-sat -w2"
    assert all(row[-1] in ("=", "better") for row in rows), out.stdout


@pytest.mark.parametrize("args", [["--sizes", "S,XXL"], ["--sizes", "s"], ["--runs", "0"]])
def test_scale_benchmark_refuses_a_size_it_does_not_know_and_no_runs(args: list[str]) -> None:
    """An unknown size was a KeyError traceback; `--runs 0` generated S, then failed taking the
    median of no runs. Both are refused before anything is generated, as argparse refuses."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), *args],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stdout == ""
    assert f"error: argument {args[0]}" in out.stderr

"""The scale benchmark runs end to end (S size, a short time limit); no timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_scale_benchmark_smoke() -> None:
    before = set(Path(tempfile.gettempdir()).glob("gangplan-bench-*"))
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "S", "--runs", "1",
         "--modes", "cp-sat,greedy", "--time-limit", "0.5"],
        capture_output=True, text=True, timeout=600, check=True,
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
    assert set(Path(tempfile.gettempdir()).glob("gangplan-bench-*")) == before  # its snapshots removed


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

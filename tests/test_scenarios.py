"""Scenario tests are data: each file in tests/scenarios/ is a small cluster plus a
``kind: Scenario`` document with the expected outcome per solver. A new case is a new file.

Expectations per mode (``cp-sat``, ``greedy``, optionally ``ordered``): ``placed`` (groups that must be placed), ``unplaced`` (group -> a phrase its
reason must contain), ``scheduled`` (group -> pending pods placed). Every plan is verified.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gangplan.loader import load_snapshot
from gangplan.planner import Options, plan
from gangplan.plan import claims_of
from gangplan.verify import verify

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


def expectation(path: Path) -> dict:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    found = [d for d in docs if d.get("kind") == "Scenario"]
    assert len(found) == 1, f"{path.name} needs exactly one kind: Scenario document"
    return found[0]["expect"]


MODES = {
    "cp-sat": Options(),
    "greedy": Options(solver="greedy"),
    "ordered": Options(policy="ordered"),
}


CASES = [(path, mode) for path in SCENARIOS for mode in sorted(expectation(path))]


def test_every_scenario_expects_both_solvers() -> None:
    for path in SCENARIOS:
        assert {"cp-sat", "greedy"} <= set(expectation(path)) <= set(MODES), path.name


@pytest.mark.parametrize("path,mode", CASES, ids=[f"{p.stem}-{m}" for p, m in CASES])
def test_scenario(path: Path, mode: str) -> None:
    expect = expectation(path)[mode]
    snapshot = load_snapshot([str(path)])
    assert snapshot.skipped_kinds == {"Scenario": 1}
    result = plan(snapshot, MODES[mode])
    assert result.solver.policy == MODES[mode].policy
    claims = claims_of(result.groups)
    check = verify(snapshot, result.placements, result.topology_levels(), claims)
    assert check.ok, check.violations
    outcome = {g.key: g for g in result.groups}
    for key in expect.get("placed", []):
        assert outcome[key].placed, f"{key}: {outcome[key].reason}"
    for key, phrase in (expect.get("unplaced") or {}).items():
        assert not outcome[key].placed
        assert outcome[key].scheduled == 0
        assert phrase in outcome[key].reason, outcome[key].reason
    for key, count in (expect.get("scheduled") or {}).items():
        assert outcome[key].scheduled == count
    named = set(expect.get("placed", [])) | set(expect.get("unplaced") or {})
    assert named == {k for k, g in outcome.items() if g.pending}, "a scenario names every pending group"

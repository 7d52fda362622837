"""Every in-process plan in the suite must keep the rules by itself: the planner's last check
(a broken plan replaced by greedy's, with a warning) would otherwise hide a solver bug from
the tests that verify plans. Its record of each group (placed, scheduled, pending) must agree
with the verifier too, where the planner only warns. A test that breaks a plan on purpose is
marked ``broken_plan_expected``."""

from __future__ import annotations

import pytest

import gangplan.planner as planner


@pytest.fixture(autouse=True)
def _plans_keep_the_rules(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("broken_plan_expected"):
        return
    check = planner._broken_rule

    def strict(*args, **kwargs) -> str:
        broken = check(*args, **kwargs)
        assert not broken, f"the planner made a plan that breaks a rule: {broken}"
        return broken

    monkeypatch.setattr(planner, "_broken_rule", strict)
    claim = planner._broken_claim

    def strict_claim(*args, **kwargs) -> str:
        broken = claim(*args, **kwargs)
        assert not broken, f"the plan's record of a group disagrees with the verifier: {broken}"
        return broken

    monkeypatch.setattr(planner, "_broken_claim", strict_claim)

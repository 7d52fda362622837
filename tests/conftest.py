"""Every in-process plan in the suite must keep the rules by itself: the planner's last check
(a broken plan replaced by greedy's, with a warning) would otherwise hide a solver bug from
the tests that verify plans. Its record of each group (placed, scheduled, pending) must agree
with the verifier too, where the planner only warns. A test that breaks a plan on purpose is
marked ``broken_plan_expected``."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import gangplan.planner as planner


def _strict(check: Callable[..., str], what: str) -> Callable[..., str]:
    def strict(*args: Any, **kwargs: Any) -> str:
        broken = check(*args, **kwargs)
        assert not broken, f"{what}: {broken}"
        return broken

    return strict


@pytest.fixture(autouse=True)
def _plans_keep_the_rules(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("broken_plan_expected"):
        return
    for name, what in (
        ("_broken_rule", "the planner made a plan that breaks a rule"),
        ("_broken_claim", "the plan's record of a group disagrees with the verifier"),
    ):
        monkeypatch.setattr(planner, name, _strict(getattr(planner, name), what))

"""Kueue's conventions on plain Pods (gangplan.kueue), read as Kueue's Go code reads them:
the total count with strconv.Atoi, the unconstrained request with strconv.ParseBool, and the
PodSet's topology request by which annotation is present (NewPodSetTopologyRequest)."""

from __future__ import annotations

import pytest

from gangplan import kueue
from gangplan.model import Pod
from gangplan.semantics import blocked_by

# strconv.Atoi: an optional sign and ASCII digits, nothing else (no spaces, no "_", no other
# scripts' digits, no base prefix, no fraction).
ATOI_READS = {"3": 3, "+3": 3, "-3": -3, "007": 7, "2147483648": 2147483648}
ATOI_REFUSES = ["", "+", "-", " 3", "3 ", "1_0", "\u0663", "\uff13", "0x3", "3.0", "3e1", "three"]


@pytest.mark.parametrize("raw,count", ATOI_READS.items())
def test_total_count_reads_what_atoi_reads(raw: str, count: int) -> None:
    assert kueue.total_count({kueue.TOTAL_COUNT: raw}) == count


@pytest.mark.parametrize("raw", ATOI_REFUSES)
def test_total_count_is_none_where_atoi_fails(raw: str) -> None:
    """Kueue's groupTotalCount fails on what strconv.Atoi refuses: no count, not a guess."""
    assert kueue.total_count({kueue.TOTAL_COUNT: raw}) is None


def test_total_count_is_none_when_missing_and_reads_its_own_key_only() -> None:
    assert kueue.total_count({}) is None
    assert kueue.total_count({kueue.GROUP_LABEL: "3"}) is None


# strconv.ParseBool: these six are true, these six false, anything else an error.
PARSE_BOOL_TRUE = ["1", "t", "T", "TRUE", "true", "True"]
PARSE_BOOL_FALSE = ["0", "f", "F", "FALSE", "false", "False"]
PARSE_BOOL_ERROR = ["", "yes", "on", "tRUE", "TRue", " true", "true ", "2"]


@pytest.mark.parametrize("value", PARSE_BOOL_TRUE)
def test_unconstrained_is_true_for_what_parse_bool_reads_as_true(value: str) -> None:
    assert kueue.unconstrained({kueue.UNCONSTRAINED_TOPOLOGY: value}) is True


@pytest.mark.parametrize("value", PARSE_BOOL_FALSE + PARSE_BOOL_ERROR)
def test_unconstrained_is_false_for_any_other_value(value: str) -> None:
    """False, or a value ParseBool cannot read: not an unconstrained request."""
    assert kueue.unconstrained({kueue.UNCONSTRAINED_TOPOLOGY: value}) is False


@pytest.mark.parametrize("other", [kueue.REQUIRED_TOPOLOGY, kueue.PREFERRED_TOPOLOGY])
@pytest.mark.parametrize("level", ["example.com/rack", ""])
def test_a_required_or_preferred_annotation_wins_over_unconstrained(other: str, level: str) -> None:
    """Kueue's switch tests the required annotation, then the preferred, then unconstrained,
    each by its presence: one that is there, even empty, leaves no unconstrained request."""
    assert kueue.unconstrained({kueue.UNCONSTRAINED_TOPOLOGY: "true", other: level}) is None
    assert kueue.unconstrained({}) is None


def test_topology_requests_are_required_then_preferred() -> None:
    both = {kueue.REQUIRED_TOPOLOGY: "example.com/rack", kueue.PREFERRED_TOPOLOGY: "example.com/block"}
    assert kueue.topology_requests(both) == ("example.com/rack", "example.com/block")
    assert kueue.topology_requests({kueue.PREFERRED_TOPOLOGY: "example.com/block"}) == ("", "example.com/block")
    assert kueue.topology_requests({}) == ("", "")


@pytest.mark.parametrize("gate", ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"])
def test_kueues_scheduling_gates_are_lifted_by_kueue(gate: str) -> None:
    """Kueue lifts its admission gate when it admits the workload and its TAS topology gate
    once it has written the assigned domain: neither holds a pod back from the plan; another
    controller's gate does."""
    assert blocked_by(Pod("ml", "p", scheduling_gates=(gate,))) == ""
    held = Pod("ml", "p", scheduling_gates=(gate, "example.com/wait"))
    assert blocked_by(held) == "scheduling gates example.com/wait"

"""Lexicographic objectives in stages: which terms are solved together, their weights, and
what a stage's bound says of each term. Nothing here needs a solver, so a plan without CP-SAT
(``--solver greedy``, ``verify``, ``check``) never imports OR-Tools, a third of the CLI's start
(``sat`` imports it without the pandas it would load).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Mapping, Protocol, TypeVar

from .objective import Term

# Weighted stages stay below this: CP-SAT bounds objectives in doubles, and proofs need exact steps.
_STAGE_RANGE = 2**40


@dataclass(frozen=True, slots=True)
class Tuning:
    """CP-SAT's own knobs, for benchmarks and experiments (benchmarks/README): where its search
    log goes, and parameters set by name. The CLI reads them from the environment."""

    log: Callable[[str], None] | None = None
    parameters: tuple[tuple[str, str], ...] = ()


class Reporter(Protocol):
    """How the solver tells the outside world it is making progress (no printing in the core)."""

    def stage(self, name: str, index: int, total: int) -> None: ...

    def solution(self, objective: float, bound: float, elapsed: float) -> None: ...


@dataclass(slots=True)
class StageResult:
    terms: list[str]
    status: str
    value: int | None
    bound: int | None


Solution = TypeVar("Solution")  # an Assignment on nodes, or a model's own (per domain, say)


@dataclass(slots=True)
class SolveResult(Generic[Solution]):
    assignment: Solution | None
    status: str  # OPTIMAL when every stage was proven, FEASIBLE otherwise, UNKNOWN if none ran
    stages: list[StageResult] = field(default_factory=list)
    gap: float | None = None  # relative gap on objective 1 (placement); later terms only set status
    gap_stage: StageResult | None = None  # the stage the gap is at, with the bound it is measured against
    deterministic_time: float = 0.0
    wall_time: float = 0.0
    variables: int = 0


def stage_terms(terms: list[Term]) -> list[list[Term]]:
    """Group consecutive terms into stages whose weighted sum stays within range."""
    stages: list[list[Term]] = []
    span = 0
    for term in terms:
        width = term.upper + 1
        if stages and span * width <= _STAGE_RANGE and term.exact and stages[-1][-1].exact:
            stages[-1].append(term)
            span *= width
        else:
            stages.append([term])
            span = width
    return stages


def stage_upper(stage: list[Term]) -> int:
    """The most a stage's weighted objective can be (every maximised term at its upper)."""
    return sum(w * t.upper for w, t in zip(stage_weights(stage), stage) if t.sense == "maximize")


def stage_objective(stage: list[Term], expression: Callable[[Term], Any]) -> Any:
    """A stage's terms weighted into one maximised value: a solver expression, or a number
    when ``expression`` gives a term's value in a plan."""
    return sum(w * (1 if t.sense == "maximize" else -1) * expression(t) for w, t in zip(stage_weights(stage), stage))


def term_bounds(stage: list[Term], bound: int, values: Mapping[str, int]) -> dict[str, int]:
    """What a bound on a stage's weighted objective says of each of its terms in a plan with
    these ``values``: term by term, the most the first can be; while that is its value, the
    term is proven (no plan as good has it otherwise) and the next one gets what is left. The
    walk stops at the first term left short, so a plan shows its bound term by term: 64 JobGroups
    of at most 74, rather than one large weighted number. Empty if the plan beats the bound."""
    weights = stage_weights(stage)
    signs = [1 if t.sense == "maximize" else -1 for t in stage]
    left = bound
    bounds: dict[str, int] = {}
    for i, (term, weight, sign) in enumerate(zip(stage, weights, signs)):
        # Later minimised terms can take at most this off the stage's sum: less than ``weight``.
        slack = sum(w * t.upper for w, t, g in zip(weights[i + 1 :], stage[i + 1 :], signs[i + 1 :]) if g < 0)
        most = min((left + slack) // weight, term.upper if sign > 0 else 0)  # of the signed value
        value = values[term.name]
        if most < sign * value:
            return {}
        bounds[term.name] = sign * most
        if most != sign * value:
            break
        left -= weight * sign * value
    return bounds


def stage_weights(stage: list[Term]) -> list[int]:
    """Each term's weight in its stage's objective: lexicographic within the stage."""
    weights = []
    weight = 1
    for term in reversed(stage):
        weights.append(weight)
        weight *= term.upper + 1
    weights.reverse()
    return weights

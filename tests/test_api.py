"""The Python API as README's "Python API" section shows it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gangplan

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "snapshots" / "small.yaml"


def test_the_readme_example_runs_as_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Python API") :]
    code = section[section.index("```python\n") + len("```python\n") : section.index("```\n", section.index("```python"))]
    (tmp_path / "snapshot.yaml").write_text(SMALL.read_text())
    monkeypatch.chdir(tmp_path)
    printed: list[tuple[object, ...]] = []
    exec(code, {"print": lambda *args: printed.append(args)})
    assert ("ml/llm-pretrain", False) in {args[:2] for args in printed} and len(printed) == 8


def test_one_path_is_a_snapshot_not_its_characters() -> None:
    """load_snapshot("snapshot.yaml") read "s", "n", ... as paths ("s: no such file")."""
    whole = gangplan.load_snapshot([str(SMALL)])
    assert gangplan.load_snapshot(str(SMALL)) == whole == gangplan.load_snapshot(SMALL)


def test_levels_given_as_one_string_are_refused() -> None:
    """Options(levels="example.com/block") planned with one level per character."""
    with pytest.raises(gangplan.UsageError, match="levels must be a tuple of label keys"):
        gangplan.plan(gangplan.load_snapshot(SMALL), gangplan.Options(levels="example.com/block"))  # type: ignore[arg-type]


def test_options_default_to_the_documented_plan() -> None:
    """DESIGN: CP-SAT with `--time-limit` 10 s, one solver worker by default (byte-identical
    output), the default policy `optimal`; README: GPU is `nvidia.com/gpu` unless
    `--gpu-resource` names another, and `--model auto` is the default. The Python API's
    Options() is that same default run."""
    options = gangplan.Options()
    assert (options.solver, options.policy, options.time_limit, options.workers) == ("cp-sat", "optimal", 10.0, 1)
    assert (options.gpu_resource, options.model, options.levels) == ("nvidia.com/gpu", "auto", None)


@pytest.mark.parametrize(
    ("field", "accepted", "refused", "phrase"),
    [
        ("workers", 256, 257, "--workers must be from 1 to 256"),
        ("workers", 1, 0, "--workers must be from 1 to 256"),
        ("seed", 2**31 - 1, 2**31, "--seed must be a 32-bit integer"),
        ("seed", -(2**31), -(2**31) - 1, "--seed must be a 32-bit integer"),
        ("time_limit", 7 * 24 * 3600.0, 7 * 24 * 3600.0 + 1, "--time-limit must be at most 604800 seconds"),
        ("gpu_resource", "amd.com/gpu", " ", "--gpu-resource must not be empty"),
        ("policy", "ordered", "orderd", "--policy must be one of optimal, ordered"),
    ],
)
def test_options_are_refused_just_past_the_range_they_state(field: str, accepted: object, refused: object, phrase: str) -> None:
    """Each refusal states its range, and the edges are in it: CP-SAT's random_seed and
    num_workers are int32 fields (sat_parameters.proto), a week is 604,800 s; a name of only
    blanks is no resource, and a misspelt policy is not quietly planned as `optimal`."""
    gangplan.Options(**{field: accepted}).check()  # type: ignore[arg-type]
    with pytest.raises(gangplan.UsageError, match=re.escape(phrase)):
        gangplan.Options(**{field: refused}).check()  # type: ignore[arg-type]

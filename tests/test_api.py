"""The Python API as README's "Python API" section shows it."""

from __future__ import annotations

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

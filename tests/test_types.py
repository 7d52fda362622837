"""gangplan's own type hints agree with each other, and the benchmark's, scripts' and tests'
with them (mypy, configured in pyproject.toml).

Third-party packages are read as Any there, so only a change to gangplan (or to the pinned
mypy) can turn this red."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def test_type_hints_hold(tmp_path: Path) -> None:
    stdout, stderr, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path)]
        + [str(ROOT / folder) for folder in ("gangplan", "benchmarks", "scripts", "tests")]
    )
    assert status == 0, stdout + stderr
    assert "Success" in stdout

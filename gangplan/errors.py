"""gangplan's errors: one small tree, each class knowing its exit code.

    GangplanError            exit 3 unless a subclass says otherwise
    ├── InputError           exit 2: bad input, with the place it was found
    ├── UsageError           exit 2: bad options or arguments
    ├── OutputError          exit 3: an output could not be written (a full disk, no such device)
    └── SolverError          exit 3: the solver or the program failed

The CLI catches ``GangplanError`` only and prints ``error: <str(exc)>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Origin

# Control characters, line breaks and bidi overrides: input text shown on stderr, in CI
# annotations or in JUnit XML is escaped, so a message stays one line, cannot drive the
# terminal, and is a character XML 1.0 can hold.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]")


def one_line(text: str) -> str:
    """``text`` with what ``_UNPRINTABLE`` names written as JSON escapes (\\n, \\u0001)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return json.dumps(char)[1:-1] if char in "\n\t\r" else f"\\u{ord(char):04x}"

    return _UNPRINTABLE.sub(escape, text)


def dotted(path: tuple[str | int, ...]) -> str:
    """A field path as messages write it: spec.containers[0].resources["nvidia.com/gpu"]."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        elif "." in step:
            text += f"[{json.dumps(step)}]"
        else:
            text += f".{step}" if text else step
    return text


class GangplanError(Exception):
    exit_code = 3


@dataclass(frozen=True, slots=True)
class Position:
    """Where a problem was found: a file, and a 1-based line and column when known."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"


class InputError(GangplanError):
    """The input is not what gangplan can read; the message says what was expected."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        position: Position | None = None,
        *,
        origin: Origin | None = None,
        field: tuple[str | int, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.origin = origin  # the CLI may turn it into a position
        self.field = field  # the path inside that object the message is about

    def __str__(self) -> str:
        return f"{self.position}: {self.message}" if self.position else self.message


class UsageError(GangplanError):
    exit_code = 2


class SolverError(GangplanError):
    exit_code = 3


class OutputError(GangplanError):
    """The output could not be written; nothing half-written is left at the path."""

"""The command line: parse, call the core, render. The only module that imports typer and rich.

Every command is wrapped by ``_run``, which turns a ``GangplanError`` into one
``error: ...`` line and its exit code, Ctrl-C into 130, and never shows a traceback
unless ``--debug`` asks for one.
"""

from __future__ import annotations

import difflib
import functools
import io
import re
import shlex
import signal
import stat
import threading
import time
import traceback
import json
import math
import os
import sys
import tempfile
from collections import defaultdict
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Mapping, Optional, Sequence, TypeVar

import typer
from typer.core import TyperArgument, TyperGroup
from rich.cells import cell_len
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from . import __version__
from .errors import GangplanError, InputError, OutputError, Position, UsageError, one_line
from .loader import STDIN, SUFFIXES, Limits, check_snapshot, files_read, folder_files, load_snapshot, locate, read_bounded, read_documents, read_objects, within_limits
from .kube import label_problem
from .manifests import gang_from_objects, with_gang
from .model import Node, Origin, PodGroupAPI, Snapshot
from .quantity import QuantityError, counted, describe_amount, parse_quantity, percent_apart, plural
from .plan import API_VERSION, GroupOutcome, Plan, PlanFormatError, claims_of, plan_from_document
from .planner import Options, plan as make_plan
from .ci import annotation, check_report, checked_groups, group_origins, junit_error
from .diff import PlanDiff, diff_plans, diff_snapshot
from .render import held_back, render, to_json, to_yaml
from .report import GroupNames, render_report
from .semantics import Grouping, group_pods, unmodelled_warnings
from .stages import Reporter, Tuning
from .status import status_list
from .topology import (
    DEFAULT_GPU_RESOURCE,
    HOSTNAME_LABEL,
    TopologyTree,
    Usage,
    build_tree,
    domain_usage,
    node_usage,
    resolve_levels,
    topology_to_dict,
)
from .verify import format_spans, format_verification, verify

_GLOBAL_FLAGS = frozenset({"--debug", "--quiet", "-q", "--no-color"})
_GLOBAL_VALUED = frozenset({"--max-file-size", "--max-documents", "--max-objects"})


def _command_at(args: Sequence[str], commands: Any) -> int | None:
    """Where the command is among the words given: the first that names one."""
    return next((i for i, a in enumerate(args) if a in commands), None)


def _globals_first(args: list[str], commands: Any) -> list[str]:
    """The global options moved before the command when given after it, as kubectl takes its
    global flags anywhere: `gangplan plan x.yaml --debug` is what an error's hint leads to."""
    at = _command_at(args, commands)
    if at is None:
        return args
    moved: list[str] = []
    rest: list[str] = []
    tail = iter(args[at + 1 :])
    for arg in tail:
        if arg == "--":
            rest += [arg, *tail]
        elif arg in _GLOBAL_FLAGS or ("=" in arg and arg.split("=", 1)[0] in _GLOBAL_VALUED):
            moved.append(arg)
        elif arg in _GLOBAL_VALUED:
            moved += [arg, next(tail, "")]
        else:
            rest.append(arg)
    return [*args[:at], *moved, args[at], *rest]


class _Argument(TyperArgument):
    """kubectl's metavars: `SNAPSHOT...` and `GROUP`, where typer writes `{SNAPSHOT}...` in the
    usage line and the Python type (`SNAPSHOT <list[str]>`, `GROUP <str>`) in the help."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")

    def display_type_rich(self, ctx: Any) -> None:
        return None


class _Commands(TyperGroup):
    """Click's usage errors print usage, a hint and the message on three lines; gangplan's
    contract for bad input is one `error:` line and exit 2, for option values too. Global
    options are taken after the command as well."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            for param in command.params:
                if type(param) is TyperArgument:
                    param.__class__ = _Argument  # typer offers no way to choose the class

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _globals_first(args, self.commands))

    def _command_path(self, given: Sequence[str] | None) -> str:
        """The command an error raised before its context exists belongs to (`plan -o` with
        no value)."""
        words = list(given) if given is not None else sys.argv[1:]
        at = _command_at(words, self.commands)
        return f"{self.name} {words[at]}" if at is not None else str(self.name)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except typer.Abort:
            _to_stderr(lambda: sys.stderr.write("aborted\n"))
            sys.exit(1)
        except Exception as exc:
            message = getattr(exc, "format_message", None)
            if message is None or not isinstance(getattr(exc, "exit_code", None), int):
                raise
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError":
                exc.show()  # type: ignore[attr-defined]
            else:
                path = ctx.command_path if ctx is not None else self._command_path(kwargs.get("args", args[0] if args else None))
                hint = f" (see '{path} --help')"
                said = message().replace("Value error, ", "", 1)  # pydantic's prefix, as typer passes it on
                said = _PYDANTIC_NUMBER.sub(lambda m: _NUMBER_WORDS[m.group(1)], said)
                if (group := _group_missing(exc)) and ctx is not None:
                    said = f"explain {group}: name the group to explain too (explain GROUP SNAPSHOT...)"
                elif _snapshot_piped_unnamed(exc) and ctx is not None:
                    hint = f" (give - to read it from stdin; see '{ctx.command_path} --help')"
                _to_stderr(lambda: sys.stderr.write(f"error: {one_line(said)}{hint}\n"))
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        sys.exit(code if isinstance(code, int) else 0)


# What pydantic (through typer) says of "--time-limit abc", in click's plainer words.
_PYDANTIC_NUMBER = re.compile(r"Input should be a valid (number|integer)(, unable to parse string as an? (number|integer))?")
_NUMBER_WORDS = {"number": "expected a number", "integer": "expected a whole number"}


def _snapshot_missing(exc: Exception) -> bool:
    return type(exc).__name__ == "MissingParameter" and getattr(getattr(exc, "param", None), "name", None) == "snapshot"


def _group_missing(exc: Exception) -> str:
    """`gangplan explain snapshot.yaml`: the one argument, a file, was taken for the group, and
    the snapshot is "missing" (or, with stdin a pipe, to be read from it): the group is."""
    ctx = getattr(exc, "ctx", None)
    if not _snapshot_missing(exc) or ctx is None or ctx.command.name != "explain":
        return ""
    group = ctx.params.get("group")
    return group if isinstance(group, str) and os.path.exists(group) else ""


def _snapshot_piped_unnamed(exc: Exception) -> bool:
    """`kubectl get ... -o json | gangplan plan`: the snapshot is on stdin, but only `-` reads it."""
    return _snapshot_missing(exc) and sys.stdin is not None and not _is_terminal(sys.stdin)


app = typer.Typer(
    cls=_Commands,
    name="gangplan",
    help="Plan all-or-nothing gang placements on a Kubernetes cluster snapshot, offline.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # -h, as kubectl takes it
)

F = TypeVar("F", bound=Callable[..., Any])


class Output(str, Enum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    name = "name"
    plan = "plan"
    status = "status"


_BINDINGS = (Output.json, Output.yaml, Output.name)  # the outputs that bind pods (held_back applies)


class Solver(str, Enum):
    cp_sat = "cp-sat"
    greedy = "greedy"


class _State:
    debug = False
    quiet = False
    no_color = False
    limits = Limits()
    limit_names: dict[str, str] = {}  # option -> the environment variable that set it instead
    inputs: set[str] = set()  # real paths of the input files named, which no output may replace
    named: set[str] = set()  # those named as files, not found in a folder
    stdin: Optional[bytes] = None  # read once: verify and diff look in it for the plan first
    warned: list[str] = []  # warnings about the inputs, said before planning: check reports them too


def _say(message: str) -> None:
    if not _State.quiet:
        _to_stderr(lambda: sys.stderr.write(one_line(message) + "\n"))  # not rich: it exits 1 on a broken pipe


def _warn(message: str) -> None:
    _State.warned.append(message)
    _say(f"warning: {message}")


def _fail(message: str, code: int) -> None:
    _to_stderr(lambda: sys.stderr.write(f"error: {one_line(message)}\n"))
    raise typer.Exit(code)


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a CI job cancelled, a terminal closed): stop as Ctrl-C stops, with
    no output file half-written and no temporary file left, and the signal's own status."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated(signum)


def _to_stderr(write: Callable[[], object]) -> None:
    """Messages are advice: a stderr nobody reads (its reader gone, `2>&1 | head -1`) must not
    change what gangplan writes or its exit status. Once it fails it is sent to the void, so
    the exit-time flush does not fail again."""
    try:
        write()
        sys.stderr.flush()
    except (OSError, ValueError):
        _stderr_to_devnull()


def _stderr_to_devnull() -> None:
    """Point descriptor 2 at /dev/null: when it is closed (`2>&-`), a file opened later would
    take it and receive every library's diagnostics."""
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 2:
        os.dup2(fd, 2)
        os.close(fd)
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - for the process's lifetime


def _run(command: F) -> F:
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except typer.Exit:
            raise
        except InputError as exc:
            _traceback()
            if exc.position is None and exc.origin is not None:
                exc.position = locate(exc.origin, exc.field)
            _fail(str(exc), exc.exit_code)
        except GangplanError as exc:
            _traceback()
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt as exc:
            stopped = exc.signum if isinstance(exc, _Terminated) else 0
            _to_stderr(lambda: sys.stderr.write("terminated\n" if stopped else "interrupted\n"))
            raise typer.Exit(128 + stopped if stopped else 130)
        except BrokenPipeError:
            # The reader stopped reading (`| head`): quietly, with the status a process killed
            # by SIGPIPE gets, as kubectl and coreutils do; devnull spares the exit-time flush.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141)
        except MemoryError:
            _traceback()
            _fail(
                "out of memory: the input is too large for the memory available (nothing was written)",
                3,
            )
        except Exception as exc:  # a bug: say so in one line, exit 3
            _traceback()
            hint = "" if _State.debug else " (run with --debug for a traceback)"
            _fail(f"internal error: {type(exc).__name__}: {exc}{hint}", 3)

    return wrapper  # type: ignore[return-value]


def _traceback() -> None:
    """--debug adds the traceback before the error line; it changes neither the line nor the
    exit code, which scripts and `check` in CI read."""
    if _State.debug:
        _to_stderr(lambda: traceback.print_exc(file=sys.stderr))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gangplan {__version__}")
        raise typer.Exit()


_DEFAULT_LIMITS = Limits()


def _byte_size(option: str, text: str) -> int:
    """A size in bytes: a plain integer or a quantity such as 512Mi or 4Gi."""
    try:
        value = parse_quantity(text.strip())
    except QuantityError:
        value = None
    if value is None or value.denominator != 1 or value < 1:
        shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}..."
        raise UsageError(f"{option} must be a positive number of bytes such as 4294967296 or 4Gi, got {shown}")
    return int(value)


@app.callback()
def _main(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Also show a traceback on errors; the exit code stays the same.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Nothing on stderr but errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
    max_file_size: Annotated[
        str,
        typer.Option(
            "--max-file-size",
            envvar="GANGPLAN_MAX_FILE_SIZE",
            metavar="SIZE",
            help="Refuse an input file larger than this: bytes, or a quantity such as 4Gi.",
        ),
    ] = "2Gi",
    max_documents: Annotated[
        int,
        typer.Option(
            "--max-documents",
            envvar="GANGPLAN_MAX_DOCUMENTS",
            metavar="N",
            help="Refuse inputs with more YAML documents than this.",
        ),
    ] = _DEFAULT_LIMITS.max_documents,
    max_objects: Annotated[
        int,
        typer.Option(
            "--max-objects",
            envvar="GANGPLAN_MAX_OBJECTS",
            metavar="N",
            help="Refuse inputs with more Kubernetes objects than this (List items count one by one).",
        ),
    ] = _DEFAULT_LIMITS.max_objects,
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = None,
) -> None:
    _State.debug, _State.quiet, _State.no_color = debug, quiet, no_color
    _State.inputs, _State.named, _State.stdin, _State.warned = set(), set(), None, []
    # A limit set in the environment is named by its variable: the user typed no option.
    _State.limit_names = {
        f"--{name.replace('_', '-')}": f"GANGPLAN_{name.upper()}"
        for name in ("max_file_size", "max_documents", "max_objects")
        if getattr(ctx.get_parameter_source(name), "name", "") == "ENVIRONMENT"
    }
    try:
        for option, value in (("--max-documents", max_documents), ("--max-objects", max_objects)):
            if value < 1:
                raise UsageError(f"{_limit_name(option)} must be at least 1, got {value}")
        _State.limits = Limits(
            max_file_bytes=_byte_size(_limit_name("--max-file-size"), max_file_size),
            max_documents=max_documents,
            max_objects=max_objects,
        )
    except UsageError as exc:
        _fail(str(exc), exc.exit_code)


def _limit_name(option: str) -> str:
    return _State.limit_names.get(option, option)


def _load(paths: list[str], plans: Sequence[str] = ()) -> Snapshot:
    """The snapshot; ``plans``, the plan files verify and diff read, are not part of it when an
    input folder holds them."""
    _stdin_once(paths)
    skipped = {os.path.realpath(p) for p in plans if p != "-"}
    if skipped and all(p != "-" and os.path.realpath(p) in skipped for p in paths):
        raise UsageError(f"{paths[0]} is the plan; give the snapshot it was made from too")
    _State.inputs = _State.inputs | files_read(paths)
    stdin = _read_stdin() if "-" in paths else None
    snapshot = load_snapshot(paths, stdin=stdin, limits=_State.limits, skip=plans)
    for name in snapshot.empty_inputs:
        _warn(f"{name}: no Kubernetes objects in it (was it written by a command that failed?)")
    if snapshot.skipped_kinds:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(snapshot.skipped_kinds.items()))
        _say(f"skipped objects gangplan does not use: {counts}")
    if not snapshot.nodes and any(p.node_name is None for p in snapshot.pods):
        _warn("the input has no Node objects, so nothing can be placed (add kubectl get nodes -o yaml)")
    if not (snapshot.nodes or snapshot.pods or snapshot.pod_groups) and (plans := _plans_beside(snapshot)):
        _warn(f"the input holds {plans} objects and no cluster (Nodes, Pods, PodGroups); verify and diff read a plan beside its snapshot")
    return snapshot


def _say_gpu_resource(loaded: Snapshot, gpu_resource: str) -> None:
    """Nodes with AMD's or Intel's GPUs and the default --gpu-resource: sort rules, figures,
    the report and topology would count no GPU at all, without saying why."""
    if any(gpu_resource in node.allocatable for node in loaded.nodes):
        return
    others = sorted({name for node in loaded.nodes for name in node.allocatable if name.endswith("/gpu") and node.allocatable[name]})
    if others:
        _warn(f"no node has {gpu_resource}; give --gpu-resource {others[0]} to count {', '.join(others)} as GPUs")


def _refuse_objects_in_inputs(output_file: Optional[Path], inputs: Sequence[str]) -> None:
    """Before planning: Kubernetes objects gangplan reads (PodGroups with status, Pods to
    create) written into an input folder would be read again by the next run, as duplicates
    of what they were made from, and `topology`'s output, which has no kind, not at all. A
    Plan, a diff or a report there is skipped, so allowed."""
    if output_file is None or str(output_file) == "-":
        return
    folders = {os.path.realpath(p) for p in inputs if p != "-" and os.path.isdir(p)}
    if folder := _read_next_time(os.path.realpath(output_file), folders):
        raise UsageError(f"{output_file} is in the input folder {folder}, which the next run would read; write the output elsewhere")


def _read_next_time(target: str, folders: set[str]) -> str:
    """The input folder a run would read ``target`` from (as a snapshot file), or ''."""
    if not target.lower().endswith(SUFFIXES):
        return ""
    for folder in sorted(folders):
        inside = os.path.relpath(target, folder)
        if inside != ".." and not inside.startswith(".." + os.sep) and not any(p.startswith(".") for p in inside.split(os.sep)):
            return folder
    return ""


def _claim_outputs(inputs: Sequence[str], output_file: Optional[Path], *others: tuple[str, Optional[Path]]) -> None:
    """Before any work, as for a missing folder: an output naming a file the run reads, or two
    outputs naming one file, is bad usage that ``write_output`` would find only after planning.
    ``others`` are (option, path) of the outputs besides the command's own; ``-`` is stdout for
    any one of them, so it is refused where stdout already carries the command's output."""
    _State.inputs = _State.inputs | files_read(inputs)
    _State.named |= {os.path.realpath(p) for p in inputs if p != "-" and os.path.isfile(p)}
    for option, path in others:
        if path is not None and str(path) == "-" and (output_file is None or str(output_file) == "-"):
            raise UsageError(
                f"{option} - would write to stdout, which carries the command's output; "
                f"give {option} a file, or the output --output-file FILE"
            )
    outputs = [("--output-file", output_file), *others]
    _refuse_clashes([(option, path) for option, path in outputs if path is not None and str(path) != "-"])


def _refuse_clashes(outputs: Sequence[tuple[str, Path]]) -> None:
    """``outputs``: each path with the option that names it ('' where none is known)."""
    seen: dict[str, tuple[str, Path]] = {}
    for option, path in outputs:
        target = os.path.realpath(path)
        if target in _State.inputs and (target in _State.named or not _gangplan_output(target)):
            raise UsageError(f"{path} is also an input; write the output to another file")
        if target in seen:
            first_option, first = seen[target]
            if first_option and option and str(first) == str(path):
                raise UsageError(f"{first_option} and {option} both name {path}; give each output its own file")
            named = f"{first_option} {first} and {option} {path}" if first_option and option else f"{first} and {path}"
            raise UsageError(f"{named} are the same file; give each output its own")
        seen[target] = (option, path)


def _gangplan_output(path: str) -> bool:
    """A Plan or a diff gangplan wrote (its JSON opens with gangplan's apiVersion): a run that
    finds it in an input folder skips it, so a later run may write it again."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(b'{\n    "apiVersion": "' + API_VERSION.encode() + b'"')


def write_output(text: str, output_file: Optional[Path], *more: tuple[str, Path]) -> None:
    """stdout (also for ``-``), or a file replaced atomically: never a half-written output file.
    ``more`` files are written with it, every one staged before any is replaced, so a failure
    writing one (a full disk) leaves all as they were. A symlink is written through (its target
    replaced), and a device or a FIFO (/dev/stdout, a named pipe) is written into, not replaced."""
    if output_file is not None and str(output_file) == "-":
        output_file = None
    out = [text] if output_file is None else []
    out += [content for content, path in more if str(path) == "-"]
    files = [*([(text, output_file)] if output_file is not None else []), *((c, p) for c, p in more if str(p) != "-")]
    _refuse_clashes([("", path) for _, path in files])
    staged: list[tuple[str, Path, Path]] = []
    into: list[tuple[str, Path]] = []
    path = Path()
    try:
        for content, path in files:
            if _written_into(path):
                into.append((content, path))
                continue
            target = Path(os.path.realpath(path))
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=_directory(target))
            staged.append((tmp, target, path))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(content)
            # mkstemp makes 0600; a replaced file keeps its mode, a new one gets open()'s.
            os.chmod(tmp, (target.stat().st_mode & 0o7777) if target.exists() else 0o666 & ~_umask())
        for content in out:
            write_stdout(content)  # before any file is replaced: a failure here leaves them as they were
        for tmp, target, path in staged:
            os.replace(tmp, target)
        for content, path in into:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(content)
    except BaseException as exc:
        for tmp, _, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def _written_into(path: Path) -> bool:
    """An existing path that is not a regular file (a device, a FIFO, /dev/stdout on a pipe) is
    opened and written: there is no file to replace, and realpath cannot name a pipe."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def write_stdout(text: str) -> None:
    """Straight to the file descriptor: Python's buffered writer loses a broken pipe after a
    partial write (more than 64 KiB into ``| head``), so exit 141 would become 0."""
    if sys.stdout is None:
        raise OutputError("cannot write the output: stdout is closed")
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test runner's capture)
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    view = memoryview(text.encode("utf-8"))
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the output: {exc.strerror or exc}") from None


def _no_colour() -> bool:
    return _State.no_color or "NO_COLOR" in os.environ


def _is_terminal(stream: Any) -> bool:
    """False for a closed stream too (``>&-`` leaves sys.stdout None): write_stdout says so."""
    return stream is not None and stream.isatty()


def _directory(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _writable(path: Optional[Path]) -> Optional[Path]:
    """An output path checked before any work: a missing directory is bad usage (exit 2), not
    a failure found after minutes of planning."""
    if path is not None and path.is_dir():
        raise typer.BadParameter(f"{path} is a directory")
    if path is not None and not _directory(path).is_dir():
        raise typer.BadParameter(f"no such directory: {_directory(path)}")
    if path is not None and str(path) != "-" and not (linked := _directory(Path(os.path.realpath(path)))).is_dir():
        # A symlink is written through: its target's folder must be there.
        raise typer.BadParameter(f"no such directory: {linked} (where {path} links)")
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


SnapshotArg = Annotated[
    list[str], typer.Argument(help="Snapshot files, folders, or - for stdin.", show_default=False, metavar="SNAPSHOT")
]
LevelsOpt = Annotated[
    Optional[str],
    typer.Option(
        "--levels",
        metavar="KEY[,KEY...]",
        help="Topology level label keys, largest first, comma-separated (a Topology object in the snapshot wins).",
    ),
]
GpuOpt = Annotated[
    str, typer.Option("--gpu-resource", metavar="RESOURCE", help="The resource sort rules and figures call GPU.")
]


def _gpu_resource(name: str) -> str:
    """Refused as the planner's Options refuse it, for the commands that plan nothing."""
    if not name.strip():
        raise UsageError("--gpu-resource must not be empty")
    return name


def _levels(levels: Optional[str]) -> tuple[str, ...] | None:
    if levels is None:
        return None
    keys = tuple(k.strip() for k in levels.split(",") if k.strip())
    for key in keys:
        if problem := label_problem(key, ""):
            raise UsageError(f"--levels: {problem}")
    return keys


OutputFileOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--output-file", metavar="FILE", help="Write the output here (atomically) instead of stdout.", callback=_writable
    ),
]


class Policy(str, Enum):
    optimal = "optimal"
    ordered = "ordered"


SolverOpt = Annotated[Solver, typer.Option(help="cp-sat (default) or greedy alone.")]
PolicyOpt = Annotated[
    Policy, typer.Option(help="optimal: one model for all groups; ordered: one at a time in queue order.")
]
class Model(str, Enum):
    auto = "auto"
    nodes = "nodes"
    buckets = "buckets"


ModelOpt = Annotated[
    Model,
    typer.Option(
        help="CP-SAT model for objective 1: nodes (one count per group and node), buckets (per group and "
        "bucket of alike nodes in a tor, then put on nodes), or auto (buckets above 8,000 candidate pairs)."
    ),
]
TimeLimitOpt = Annotated[
    float,
    typer.Option(
        "--time-limit", metavar="SECONDS",
        help="Solver budget in seconds: CP-SAT's deterministic time with one worker (wall time follows the machine), "
        "wall time with --workers 2 or more; loading is not counted.",
    ),
]
WorkersOpt = Annotated[int, typer.Option(help="CP-SAT workers; 2 or more is the parallel, non-deterministic mode.")]
SeedOpt = Annotated[int, typer.Option(help="CP-SAT random seed.")]
GangOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--gang",
        metavar="NAME=FILE[,FILE...]",
        help="NAME=FILE[,FILE...]: plan the Pods and workloads in these files as one gang (all of them); repeatable.",
    ),
]


def _gang_files(gangs: Optional[list[str]]) -> list[str]:
    """The files --gang NAME=FILE[,FILE...] names, for the checks made before reading them."""
    return [path for spec in gangs or [] for path in spec.partition("=")[2].split(",") if path]


def _with_gangs(snapshot: Snapshot, gangs: Optional[list[str]]) -> Snapshot:
    """Seed 002's --gang: workload manifests that do not exist yet, made one all-or-nothing gang."""
    owner: dict[str, str] = {}  # file -> the --gang that took it
    for spec in gangs or []:
        name, sep, files = spec.partition("=")
        paths = [f for f in files.split(",") if f]
        if not sep or not name or not paths:
            raise UsageError(f"--gang {spec!r}: expected NAME=FILE[,FILE...]")
        if name in owner.values():
            raise UsageError(f"--gang {name} is given twice; give each gang its own name")
        for path in paths:
            if path in owner:
                where = "is given twice" if owner[path] == name else f"is already in --gang {owner[path]}"
                raise UsageError(f"--gang {name}: {path} {where}")
            owner[path] = name
        _State.inputs = _State.inputs | files_read(paths)
        objects = within_limits(read_objects(paths, limits=_State.limits), _State.limits, workloads=True)
        group, pods = gang_from_objects(name, objects)
        snapshot = with_gang(snapshot, group, pods)
    if gangs:
        check_snapshot(snapshot, _State.limits)  # the gangs' pods count in the totals too
    return snapshot


class _Progress:
    """CP-SAT progress on stderr — elapsed, best objective, bound — once a solve passes ~1 s.

    Shown only on a terminal and without --quiet; it disappears when planning ends.
    """

    DELAY = 1.0

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.stage_name, self.stage_index, self.stages = "", 0, 0
        self.objective: float | None = None
        self.bound: float | None = None
        self.live: Live | None = None
        if not _State.quiet and sys.stderr.isatty():
            console = Console(stderr=True, no_color=_no_colour())
            self.live = Live(self, console=console, refresh_per_second=4, transient=True)

    def __enter__(self) -> "_Progress":
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()

    def stage(self, name: str, index: int, total: int) -> None:
        self.stage_name, self.stage_index, self.stages = name, index, total
        self.objective = self.bound = None

    def solution(self, objective: float, bound: float, elapsed: float) -> None:
        self.objective, self.bound = objective, bound

    def __rich__(self) -> Text:
        elapsed = time.perf_counter() - self.start
        if elapsed < self.DELAY or not self.stages:
            return Text("")
        line = f"CP-SAT {elapsed:5.1f}s  stage {self.stage_index + 1}/{self.stages} ({self.stage_name})"
        if self.objective is not None:
            line += f"  best {self.objective:.6g}  bound {self.bound:.6g}"
        return Text(line, style="dim")


def solver_tuning() -> Tuning:
    """For benchmarks and experiments (benchmarks/README): GANGPLAN_CPSAT_LOG sends CP-SAT's
    search log to stderr, GANGPLAN_CPSAT_PARAMS="key:value ..." sets its parameters."""
    parameters: tuple[tuple[str, str], ...] = ()
    if text := os.environ.get("GANGPLAN_CPSAT_PARAMS", "").strip():
        from .cpsat import parse_parameters  # OR-Tools, only when asked: see planner

        try:
            parameters = parse_parameters(text)
        except ValueError as error:
            raise UsageError(f"GANGPLAN_CPSAT_PARAMS: {error}") from None
    log = (lambda line: _to_stderr(lambda: sys.stderr.write(line + "\n"))) if os.environ.get("GANGPLAN_CPSAT_LOG") else None
    return Tuning(log, parameters)


def _planned(
    snapshot: list[str], solver: Solver, policy: Policy, time_limit: float, workers: int, seed: int,
    levels: Optional[str], gpu_resource: str, gangs: Optional[list[str]] = None, model: Model = Model.auto,
    asked: Sequence[str] = (), asked_by: str = "",
) -> tuple[Snapshot, Plan, list[str], Grouping | None]:
    """Options checked before anything is read, and the groups ``asked`` for (their keys are
    returned, with the grouping they were found in) before any planning; warnings and the
    summary line on stderr."""
    options = Options(
        solver=solver.value,
        policy=policy.value,
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        levels=_levels(levels),
        gpu_resource=gpu_resource,
        model=model.value,
        tuning=solver_tuning(),
    )
    options.check()
    loaded = _with_gangs(_load(snapshot), gangs)
    _say_gpu_resource(loaded, gpu_resource)
    grouping = group_pods(loaded) if asked else None
    gangs_asked = [gang for job_group in grouping.job_groups for gang in job_group.gangs] if grouping else []
    keys = [gang.key for gang in gangs_asked]
    pods = {pod.key: gang.key for gang in gangs_asked for pod in gang.members}
    found = [find_group(keys, name, asked_by, pods) for name in asked]  # a typo found before minutes of planning
    with _Progress() as progress:
        result = _plan_interruptibly(loaded, options, progress if progress.live is not None else None)
    for warning in result.warnings:
        _say(f"warning: {warning}")
    for line in _summary(result).split("\n"):
        _say(line)
    if options.solver == "cp-sat" and options.tuning.parameters:
        # Plans differ for it and nothing else says so: the environment is not on the command line.
        given = " ".join(f"{key}:{value}" for key, value in options.tuning.parameters)
        _say(f"note: GANGPLAN_CPSAT_PARAMS sets CP-SAT's parameters ({given}); a plan made without them may differ")
    return loaded, result, found, grouping


class _Worker:
    """Set while a planning thread runs: Ctrl-C can leave it running inside the solver."""

    running: Optional[threading.Event] = None  # set when planning ends

    @classmethod
    def abandoned(cls) -> bool:
        return cls.running is not None and not cls.running.is_set()


def _plan_interruptibly(loaded: Snapshot, options: Options, reporter: Reporter | None) -> Plan:
    """Plan in a worker thread while the main thread waits, so that Ctrl-C stops the run at once.

    CP-SAT keeps the thread that calls it inside C++ for a whole solve, where Python cannot act
    on a signal (gangplan's solves leave ``catch_sigint_signal`` off, so CP-SAT installs no
    handler of its own). So SIGINT is blocked while planning (the worker and the solver's
    threads inherit the mask) and the main thread takes it with ``sigtimedwait``, whatever
    handler is installed; Python's handler is restored afterwards, in case a library changed it.
    """
    outcome: dict[str, Any] = {}
    done = threading.Event()  # not Thread.join: an interrupted join marks a live thread stopped (3.11)

    def work() -> None:
        try:
            outcome["plan"] = make_plan(loaded, options, reporter)
        except BaseException as exc:  # handed to the main thread, which reports it
            outcome["error"] = exc
        finally:
            done.set()

    in_main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if in_main else None
    waits = in_main and hasattr(signal, "sigtimedwait") and hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if waits else None
    _Worker.running = done
    try:
        threading.Thread(target=work, name="gangplan-plan", daemon=True).start()
        while not done.is_set():
            if waits:
                if signal.sigtimedwait({signal.SIGINT}, 0.1) is not None:
                    raise KeyboardInterrupt
            else:  # no sigtimedwait (macOS, Windows): wait, and put Python's handler back
                done.wait(0.1)
                if handler is not None:
                    signal.signal(signal.SIGINT, handler)
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["plan"]


@app.command("plan")
@_run
def plan_command(
    snapshot: SnapshotArg,
    output: Annotated[
        Output, typer.Option("--output", "-o", help="table, wide, json, yaml, name, plan or status.")
    ] = Output.table,
    output_file: OutputFileOpt = None,
    solver: SolverOpt = Solver.cp_sat,
    policy: PolicyOpt = Policy.optimal,
    time_limit: TimeLimitOpt = 10.0,
    workers: WorkersOpt = 1,
    seed: SeedOpt = 0,
    levels: LevelsOpt = None,
    gpu_resource: GpuOpt = DEFAULT_GPU_RESOURCE,
    model: ModelOpt = Model.auto,
    report: Annotated[
        Optional[Path],
        typer.Option(
            "--report", metavar="FILE", help="Also write a self-contained HTML page of the plan here.", callback=_writable
        ),
    ] = None,
    diff: Annotated[bool, typer.Option("--diff", help="Also show what the plan changes against the snapshot (on stderr, even with --quiet: you asked for it).")] = False,
    gang: GangOpt = None,
) -> None:
    """Plan where every pending gang goes, all-or-nothing.

    \b
    Examples:
      gangplan plan snapshots/small.yaml -o json | kubectl create --dry-run=server -f -
      gangplan plan cluster.yaml --gang train=deploy.yaml,sts.yaml -o yaml
    """
    _claim_outputs([*snapshot, *_gang_files(gang)], output_file, ("--report", report))
    if output in (Output.status, Output.json, Output.yaml):
        _refuse_objects_in_inputs(output_file, snapshot)
    loaded, result, _, _ = _planned(snapshot, solver, policy, time_limit, workers, seed, levels, gpu_resource, gang, model)
    held: frozenset[str] = frozenset()
    # Everything is rendered before anything is written: a failure leaves no file behind.
    if output in (Output.table, Output.wide):
        text = _table(result, output_file is None, wide=output is Output.wide, snapshot=loaded)
    elif output is Output.status:
        text = to_yaml(status_list(result, loaded))
    else:
        held = held_back(result, loaded) if output in _BINDINGS else frozenset()
        text = render(result, output.value, snapshot=loaded, held=held)
        if held:
            gated = sorted(p.pod for p in result.placements if p.gated)
            groups = sorted({p.group for p in result.placements if p.gated})
            waiting = sorted({p.group for p in result.placements if p.pod in held and not p.gated})
            # Ungated pods wait too where the List would start their JobGroup short without the gated ones.
            _say(
                f"warning: no Bindings for {plural(len(gated), 'placed pod')} of {counted(groups)}"
                f"{'' if gated == groups else f' (first: {gated[0]})'}: "
                "they wait for Kueue to lift their gate (kueue.x-k8s.io/...: admission, or the topology its TAS "
                "assigns an admitted workload, which gangplan does not read), and the API server binds no gated pod "
                "(pods to create are given unbound, with their gate)"
                + (
                    f"; nor for the {plural(len(held) - len(gated), 'ungated pod')} of {counted(waiting)}, "
                    "whose minimums (or JobGroup) need them: all or nothing (pods to create are given unbound)"
                    if waiting
                    else ""
                )
                + "; the table and -o plan show where they would go"
            )
    page = (
        render_report(loaded, result, gpu_resource=gpu_resource, held=held if output in _BINDINGS else None)
        if report is not None
        else None
    )
    if diff:
        _emit_diff(diff_snapshot(loaded, result, gpu_resource=gpu_resource), DiffOutput.diff, None, to_stderr=True)
    write_output(text, output_file, *([(page, report)] if page is not None and report is not None else []))


class CheckFormat(str, Enum):
    text = "text"
    github = "github"
    junit = "junit"


@app.command("check")
@_run
def check_command(
    snapshot: SnapshotArg,
    group: Annotated[
        Optional[list[str]],
        typer.Option("--group", metavar="NS/NAME", help="Only these groups (namespace/name, or a name unique across namespaces); repeatable."),
    ] = None,
    format: Annotated[
        CheckFormat, typer.Option("--format", "-o", "--output", help="text, github (annotations) or junit (XML).")
    ] = CheckFormat.text,
    output_file: OutputFileOpt = None,
    solver: SolverOpt = Solver.cp_sat,
    policy: PolicyOpt = Policy.optimal,
    time_limit: TimeLimitOpt = 10.0,
    workers: WorkersOpt = 1,
    seed: SeedOpt = 0,
    levels: LevelsOpt = None,
    gpu_resource: GpuOpt = DEFAULT_GPU_RESOURCE,
    model: ModelOpt = Model.auto,
    gang: GangOpt = None,
    groups_from: Annotated[
        Optional[list[str]],
        typer.Option(
            "--groups-from",
            metavar="PATH",
            help="Only the groups written in this file or folder (a PR's jobs/), which is read as an input too; repeatable.",
        ),
    ] = None,
    junit_file: Annotated[
        Optional[Path],
        typer.Option(
            "--junit-file", metavar="FILE", help="Also write the JUnit report to FILE, whatever --format prints.", callback=_writable
        ),
    ] = None,
) -> None:
    """For CI: plan, then exit 0 when every selected group is placed and 1 when any is not.

    Without --group or --groups-from, every group with pending pods (or pods held by
    scheduling gates), and every PodGroup manifest, is checked.

    \b
    Example:
      gangplan check cluster/snapshot.yaml --groups-from jobs/ --format github
    """
    # A --groups-from path the inputs already read (the same folder, or a file in one) is not read twice.
    read = files_read(snapshot)
    inputs = [*snapshot, *(p for p in dict.fromkeys(groups_from or ()) if p == "-" or not (files := files_read([p])) or not files <= read)]
    _claim_outputs([*inputs, *_gang_files(gang)], output_file, ("--junit-file", junit_file))
    try:
        if "-" in (groups_from or ()):
            raise UsageError("--groups-from takes a file or folder, not - (stdin)")
        loaded, result, keys, asked_in = _planned(
            inputs, solver, policy, time_limit, workers, seed, levels, gpu_resource, gang, model, group or (), "--group"
        )
    except (InputError, UsageError) as exc:
        _input_error_for_ci(exc, format, output_file, junit_file)
        raise
    grouping = asked_in or group_pods(loaded)
    origins = group_origins(grouping, groups_from or ())
    selected = checked_groups(result, grouping, origins, keys, groups_from or (), chosen=bool(group or groups_from))
    unread = "" if selected else _nothing_to_check(loaded, groups_from or ())
    if unread:
        _say(f"warning: {unread}")
    # What was said of the inputs before planning goes where CI looks too, first, as on stderr.
    result = replace(result, warnings=(*_State.warned, *result.warnings))
    text, junit = check_report(format.value, selected, result, origins, unread, junit_file is not None)
    write_output(text, output_file, *([(junit, junit_file)] if junit is not None and junit_file is not None else []))
    if any(not g.placed for g in selected):
        raise typer.Exit(1)


def _nothing_to_check(loaded: Snapshot, groups_from: Sequence[str]) -> str:
    """A CI gate green for want of anything to check says so, and what it did not read: of
    --groups-from's files, the kinds they hold, not the snapshot's ConfigMaps."""
    unread = f"no group written in {', '.join(groups_from)} to check" if groups_from else "no pending group to check"
    skipped = loaded.skipped_kinds
    if groups_from:
        try:
            kinds = {str(obj.get("kind")) for obj, _ in read_objects(list(groups_from), limits=_State.limits)}
        except GangplanError:
            kinds = set()
        skipped = {label: n for label, n in skipped.items() if label.split(" (")[0] in kinds}
    if skipped:
        unread += f"; gangplan does not read these inputs: {', '.join(sorted(skipped))}"
    return unread


def _input_error_for_ci(
    exc: InputError | UsageError, format: "CheckFormat", output_file: Optional[Path], junit_file: Optional[Path] = None
) -> None:
    """Bad input or a bad option (a --group no longer in the snapshot) stops check with exit 2,
    as everywhere; in a CI format it is also said where CI looks: an annotation (on the line,
    for input), or a JUnit error case, so the report step has a file."""
    position: Optional[Position] = None
    message = str(exc)
    if isinstance(exc, InputError):
        if exc.position is None and exc.origin is not None:
            exc.position = locate(exc.origin, exc.field)
        position, message = exc.position or Position("<stdin>"), exc.message
    title = f"gangplan check: bad {'input' if isinstance(exc, InputError) else 'usage'}"
    text = junit = None
    if format is CheckFormat.github:
        text = annotation(title, position, message)
    if format is CheckFormat.junit or junit_file is not None:
        junit = junit_error(str(exc), type(exc).__name__, position)
        if format is CheckFormat.junit:
            text = junit
    more = [(junit, junit_file)] if junit is not None and junit_file is not None else []
    if text is not None:
        write_output(text, output_file, *more)  # staged together, as the normal path writes them
    elif more:
        write_output(*more[0])


_JOB_GROUP = re.compile(r"([^/]+)/(.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def find_group(keys: Sequence[str], name: str, asked_by: str, pods: Optional[Mapping[str, str]] = None) -> str:
    """A group's key by namespace/name, or by a name no other namespace uses (as `kubectl get`
    takes a name in the current namespace), or a Volcano Job's name for the PodGroup its
    controller made; a near miss is suggested, and for a pod's name
    (``pods``: pod key -> its group's key), what `kubectl get pods` shows, its group."""
    if name in keys:
        return name

    def one(found: list[str], several: str) -> str | None:
        if len(found) > 1:
            raise UsageError(f"{asked_by} {name}: {several} ({', '.join(found[:3])}); give namespace/name")
        return found[0] if found else None

    if group := one([k for k in keys if "/" not in name and k.split("/", 1)[1] == name], "several groups have that name"):
        return group
    # Volcano's job controller names a Job's PodGroup <job>-<job's uid>: the Job's name finds it.
    of_job = [k for k in keys if (m := _JOB_GROUP.fullmatch(k)) and name in (m[2], f"{m[1]}/{m[2]}")]
    if group := one(of_job, "several Volcano Jobs' PodGroups have that name"):
        return group
    of_pod = sorted({group for pod, group in (pods or {}).items() if pod == name or ("/" not in name and pod.split("/", 1)[1] == name)})
    if group := one(of_pod, "pods of that name are in several groups"):
        raise UsageError(f"{asked_by} {name}: that is a pod of the group {group}; give the group")
    by_key = {k: k for k in keys} | {k.split("/", 1)[1]: k for k in keys if "/" not in name}
    # Kubernetes names are lower case: "A/job" is nearest a/job, not b/job.
    near = difflib.get_close_matches(name.lower(), list(by_key), n=1, cutoff=0.6)
    hint = f"; did you mean {by_key[near[0]]}?" if near else ""
    raise UsageError(f"{asked_by} {name}: no such group in the snapshot{hint}")


class DiffOutput(str, Enum):
    diff = "diff"
    json = "json"


_DIFF_STYLES = {"header": "bold", "add": "green", "remove": "red", "change": "yellow", "context": ""}


@app.command("diff")
@_run
def diff_command(
    snapshot: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="Snapshot files, folders, or - for stdin; then the plan file, unless --plan names it.",
            show_default=False,
            metavar="SNAPSHOT",
        ),
    ] = None,
    plan_files: Annotated[
        list[str], typer.Option("--plan", metavar="FILE", help="A Plan or List of Bindings; give it twice to compare two plans.")
    ] = [],
    output: Annotated[DiffOutput, typer.Option("--output", "-o", help="diff (unified style) or json.")] = DiffOutput.diff,
    output_file: OutputFileOpt = None,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when anything differs, like git diff --exit-code.")] = False,
    gang: GangOpt = None,
    levels: LevelsOpt = None,
    gpu_resource: GpuOpt = DEFAULT_GPU_RESOURCE,
) -> None:
    """What a plan changes against the snapshot, or what differs between two plans.

    The plan is --plan FILE, or else the one file named among the arguments that holds a Plan
    or a List of Bindings, as for `verify`. Topology levels come from the snapshot's Topology
    object, else --levels, else the levels the plans agree on, else as for `plan`: the same
    whichever plan is given first.

    \b
    Examples:
      gangplan diff snapshots/gpu-cluster.yaml plan.json
      gangplan diff --plan ordered.json --plan optimal.json --exit-code
    """
    _gpu_resource(gpu_resource)
    documents, given_paths = None, snapshot or []
    if not plan_files and snapshot:
        snapshot, found, documents = _plan_among(snapshot, "diff")
        plan_files = [found]
    if len(plan_files) not in (1, 2):
        raise UsageError("diff takes a snapshot and a plan (diff SNAPSHOT... PLAN, or --plan PLAN), or two plans (--plan A --plan B)")
    if len(plan_files) == 1 and not snapshot:
        raise UsageError("diff --plan PLAN needs the snapshot the plan was made from")
    if gang and not snapshot:
        raise UsageError("diff --gang adds to a snapshot: give the snapshot too")
    _stdin_once([*(snapshot or []), *plan_files])
    _claim_outputs([*(snapshot or []), *_gang_files(gang), *plan_files], output_file)
    loaded = _with_gangs(_load(snapshot, plan_files), gang) if snapshot else None
    if documents is not None and loaded is not None and _plans_beside(loaded):
        raise UsageError(f"{_two_plans(given_paths, plan_files[0])}; compare two plans with --plan A --plan B")
    plans = [read_plan(path, documents) for path in plan_files]
    # Levels by diff_levels' rule: Topology, --levels, what the plans agree on, inferred.
    given = _levels(levels)
    if len(plans) == 1:
        assert loaded is not None
        if left_out := _gangs_left_out(plans[0], loaded, "diff"):
            _say(f"warning: {left_out}")
        result = diff_snapshot(loaded, plans[0], levels=given, gpu_resource=gpu_resource, new_label=plan_files[0])
    else:
        result = diff_plans(
            plans[0], plans[1], loaded, levels=given, gpu_resource=gpu_resource,
            old_label=plan_files[0], new_label=plan_files[1],
        )
    _emit_diff(result, output, output_file)
    if exit_code and not result.empty:
        raise typer.Exit(1)


def _emit_diff(result: PlanDiff, output: DiffOutput, output_file: Optional[Path], to_stderr: bool = False) -> None:
    for warning in result.warnings:
        _say(f"warning: {warning}")
    if output is DiffOutput.json:
        write_output(to_json(result.to_dict()), output_file)
        return
    lines = result.unified_lines()
    stream = sys.stderr if to_stderr else sys.stdout
    colour = output_file is None and _is_terminal(stream) and not _no_colour()
    if colour:
        console = Console(file=stream, highlight=False, soft_wrap=True)
        for kind, text in lines:
            console.print(Text(text, style=_DIFF_STYLES.get(kind, "")))
    elif to_stderr:
        stream.write("".join(text + "\n" for _, text in lines))
    else:
        write_output("".join(text + "\n" for _, text in lines), output_file)


@app.command("explain")
@_run
def explain_command(
    group: Annotated[
        str, typer.Argument(metavar="GROUP", help="The group (a PodGroup, a Kueue pod group, a lone pod, a --gang): namespace/name, or a name unique across namespaces.")
    ],
    snapshot: SnapshotArg,
    solver: SolverOpt = Solver.cp_sat,
    policy: PolicyOpt = Policy.optimal,
    time_limit: TimeLimitOpt = 10.0,
    workers: WorkersOpt = 1,
    seed: SeedOpt = 0,
    levels: LevelsOpt = None,
    gpu_resource: GpuOpt = DEFAULT_GPU_RESOURCE,
    model: ModelOpt = Model.auto,
    gang: GangOpt = None,
) -> None:
    """Plan, then say what happens to one group and, if it is not placed, the first thing that stops it.

    \b
    Example:
      gangplan explain ml/llm-pretrain snapshots/small.yaml
    """
    group, snapshot = _group_among(group, snapshot)
    _, result, (key,), _ = _planned(
        snapshot, solver, policy, time_limit, workers, seed, levels, gpu_resource, gang, model, (group,), "explain"
    )
    g = result.by_key()[key]
    lines = [f"{g.key} ({_API_SHORT.get(g.api, g.api)}, priority {g.priority}, JobGroup {g.job_group})"]
    finished = f"{g.succeeded} succeeded, " if g.succeeded else ""
    lines.append(f"pods: {g.running} running, {finished}{g.pending} pending, minMember {g.min_member}")
    if not g.pending and g.placed:
        if g.finished and g.counted < g.min_member:
            phase = "Completed" if g.api == PodGroupAPI.VOLCANO.value else "Finished"
            lines.append(f"nothing to place: its PodGroup is {phase} and no pod of it waits")
        elif not g.succeeded:
            lines.append("nothing to place: every member is already bound")
        elif not g.running:
            lines.append(f"nothing to place: its members have finished ({g.succeeded} succeeded)")
        else:
            lines.append(f"nothing to place: {g.running} running and {g.succeeded} succeeded members meet minMember")
    elif g.placed:
        nodes = sorted({p.node for p in result.placements if p.group == g.key})
        shown = counted(nodes, 4)
        if g.scheduled:
            lines.append(f"placed: {plural(g.scheduled, 'pending pod')} on {plural(len(nodes), 'node')} ({shown})")
        else:
            already = f", {g.counted} members already count" if g.counted else ""
            lines.append(f"placed: its quorum needs no pending pod (minMember {g.min_member}{already})")
        for level, names in g.domains.items():
            lines.append(f"  {level}: {', '.join(names)}")
        held = next((o for o in result.groups if o.job_group == g.job_group and not o.placed), None)
        if (left := g.pending - g.scheduled) and held is not None:
            # A settled member: its quorum runs, and its other pods wait with its JobGroup.
            wait = "waits" if left == 1 else "wait"
            lines.append(f"not placed: {plural(left, 'pending pod')} beyond minMember, which {wait} with its JobGroup: {held.reason}")
        elif left:
            lines.append(f"not placed: {plural(left, 'pending pod')} beyond minMember, for which the plan found no place")
    else:
        lines.append(f"not placed: {g.reason}")
    write_output("\n".join(lines) + "\n", None)


def _group_among(group: str, snapshot: list[str]) -> tuple[str, list[str]]:
    """`explain SNAPSHOT GROUP` as `explain GROUP SNAPSHOT`, as verify and diff find their plan
    among their arguments: when GROUP names a file or folder (or stdin, or a file name that
    is not there: a typo is then reported as one) and exactly one of the others names nothing
    on disk, that one is the group."""
    if not (group == "-" or os.path.exists(group) or group.lower().endswith((".yaml", ".yml", ".json"))):
        return group, snapshot
    missing = [i for i, path in enumerate(snapshot) if path != "-" and not os.path.exists(path)]
    if len(missing) != 1:
        return group, snapshot
    named = snapshot[missing[0]]
    return named, [group if i == missing[0] else path for i, path in enumerate(snapshot)]


@app.command("verify")
@_run
def verify_command(
    snapshot: Annotated[
        list[str],
        typer.Argument(
            help="Snapshot files, folders, or - for stdin; then the plan file, unless --plan names it.",
            show_default=False,
            metavar="SNAPSHOT",
        ),
    ],
    plan_file: Annotated[
        Optional[str],
        typer.Option(
            "--plan",
            metavar="FILE",
            help="A Plan (-o plan) or a List of Bindings (-o json/yaml); without it, the one file among the arguments that holds one.",
        ),
    ] = None,
    levels: LevelsOpt = None,
    gang: GangOpt = None,
) -> None:
    """Check a placement against every rule gangplan models, independently of the solver; report spans. Exit 1 on a violation.

    The plan is --plan FILE, or else the one file named among the arguments that holds a Plan,
    a List of Bindings, one Binding, or `-o json`'s Pods to create. Topology levels come from
    the snapshot's Topology object when it has one, else --levels, else from the Plan when it
    records them, else as for `plan`.

    \b
    Examples:
      gangplan verify snapshots/small.yaml plan.json
      gangplan verify snapshots/small.yaml --plan plan.json
    """
    documents, given_paths = None, snapshot
    if plan_file is None:
        snapshot, plan_file, documents = _plan_among(snapshot, "verify")
    _stdin_once([*snapshot, plan_file])
    loaded = _with_gangs(_load(snapshot, [plan_file]), gang)
    if documents is not None and _plans_beside(loaded):
        raise UsageError(f"{_two_plans(given_paths, plan_file)}; name the one to check with --plan FILE")
    given = read_plan(plan_file, documents)
    if left_out := _gangs_left_out(given, loaded, "verify"):
        _say(f"warning: {left_out}")
    placements = list(given.placements)
    own = resolve_levels(loaded, _levels(levels))[0]
    # The snapshot's Topology object defines the levels, whatever the Plan records (an edited
    # Plan could drop or reorder them); without one, a Plan made with --levels is checked on its own.
    keys = given.levels if given.levels is not None and levels is None and not loaded.topologies else own
    if given.levels is not None and levels is None and tuple(given.levels) != tuple(own):
        shown, theirs = ", ".join(given.levels) or "none", ", ".join(own) or "none"
        if loaded.topologies:
            _say(f"warning: the Plan's levels ({shown}) are not the snapshot's Topology's ({theirs}); checked on the Topology's")
        else:
            # Domains are paths from the top level down: other levels are other domains.
            # Quoted as a shell needs it: a bare "--levels" with no levels is a usage error.
            _say(f"warning: the Plan's levels ({shown}) are not the snapshot's ({theirs}); checked on the Plan's; --levels {shlex.quote(','.join(own))} checks them on the snapshot's")
    claims = None if given.placements_only else claims_of(given.groups, given.pending_said)
    for warning in unmodelled_warnings(group_pods(loaded).unmodelled, "verify does not check it"):
        _say(f"warning: {warning}")
    result = verify(loaded, placements, keys, claims, objects=given.placements_only)
    write_stdout("".join(line + "\n" for line in [*format_verification(result), *format_spans(result)]))
    if not result.ok:
        _say(f"{plural(len(result.violations), 'violation')} in {plural(len(placements), 'placement')}")
        raise typer.Exit(1)
    _say(f"ok: {plural(len(placements), 'placement')} {'satisfies' if len(placements) == 1 else 'satisfy'} every rule gangplan checks")


def _read_stdin() -> bytes:
    if _State.stdin is None:
        if sys.stdin is None:
            raise InputError("cannot read: stdin is closed", Position(STDIN))
        _State.stdin = read_bounded(sys.stdin.buffer, _State.limits.max_file_bytes)
    return _State.stdin


def _stdin_once(paths: list[str]) -> None:
    if paths.count("-") > 1:
        raise UsageError("- (stdin) is given twice; it can feed one input")


def _plan_among(paths: list[str], command: str) -> tuple[list[str], str, list[Any]]:
    """`verify SNAPSHOT... PLAN` (DESIGN's form) and `diff SNAPSHOT... PLAN`: the one file named
    that holds a Plan or a List of Bindings (or ``-``, stdin, as `gangplan plan ... -o json |
    gangplan verify SNAPSHOT -` pipes it), its documents, and the other paths. Looked for from
    the last file, where the plan usually is, and in stdin only when no file holds it, so that
    the snapshot is not parsed twice; a second plan among the others shows when they are
    loaded (_plans_beside)."""
    files = [p for p in reversed(paths) if p != "-" and os.path.isfile(p)]
    to_create: list[tuple[str, list[Any]]] = []  # -o json of a plan whose groups are all new has no Binding
    for path in files + (["-"] if "-" in paths else []):
        documents = read_documents(path, limits=_State.limits, stdin=_read_stdin() if path == "-" else None)
        if len(documents) == 1 and _is_plan(documents[0]):
            return _beside_plan(paths, path, documents, command)
        if len(documents) == 1 and _pods_to_create(documents[0]):
            to_create.append((path, documents))
    if len(to_create) == 1 and len(paths) > 1:
        return _beside_plan(paths, *to_create[0], command)
    why = [*(["- (stdin) holds neither"] if "-" in paths else []),
           *(["a folder is read as snapshot files, not searched for one"] if any(os.path.isdir(p) for p in paths) else [])]
    raise UsageError(
        f"{command} needs a plan: {command} SNAPSHOT... PLAN, or --plan FILE (a Plan or a List of Bindings; - for stdin)"
        + "".join(f"; {reason}" for reason in why)
    )


def _beside_plan(paths: list[str], path: str, documents: list[Any], command: str) -> tuple[list[str], str, list[Any]]:
    rest = [p for p in paths if p != path]
    if not rest:
        raise UsageError(f"{command} {path}: give the snapshot the plan was made from too")
    return rest, path, documents


def _pods_to_create(document: Any) -> bool:
    """A List of Pods each given a node and none yet made (no uid, no status), as -o json
    writes the pods a plan creates: no snapshot's pods look so."""
    items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else None
    return isinstance(items, list) and bool(items) and all(
        isinstance(item, dict)
        and item.get("kind") == "Pod"
        and "status" not in item
        and isinstance(item.get("metadata"), dict)
        and not item["metadata"].get("uid")
        and isinstance(item.get("spec"), dict)
        and bool(item["spec"].get("nodeName"))
        for item in items
    )


def _gangs_left_out(given: Plan, loaded: Snapshot, command: str) -> str:
    """A plan made with --gang places pods only that flag adds: read against the snapshot
    alone they are "not in the snapshot", which blames the wrong input."""
    have = {f"{g.namespace}/{g.name}" for g in loaded.pod_groups}
    missing = sorted(g.key for g in given.groups if g.api == PodGroupAPI.MANIFESTS.value and g.key not in have)
    if not missing:
        return ""
    flags = " ".join(f"--gang {key.split('/', 1)[1]}=FILE" for key in missing[:2]) + (" ..." if len(missing) > 2 else "")
    return f"the plan was made with --gang ({', '.join(missing)}); give {command} the same {flags} to read those pods"


def _plans_beside(loaded: Snapshot) -> str:
    """The kinds of plan object the snapshot's inputs hold ('' when none), which a loaded
    snapshot skips: a second plan named where one was expected."""
    return " and ".join(sorted(k for k in loaded.skipped_kinds if k in ("Plan", "Binding")))


def _two_plans(given: Sequence[str], plan_file: str) -> str:
    """'A and B both hold a plan', in the order ``given`` names them (``plan_file``, the one
    taken, among them): the snapshot loaded with a plan skipped in it, and its files are read
    again, on this error only, to say which."""
    taken = "" if plan_file == "-" else os.path.realpath(plan_file)
    named = []
    for path in given:
        if path == plan_file:
            named.append("- (stdin)" if path == "-" else path)
        elif path == "-" or os.path.isfile(path):
            named += ["- (stdin)" if path == "-" else path] if _holds_plan(path) else []
        elif found := next((f for f in folder_files(path) if os.path.realpath(f) != taken and _holds_plan(f)), None):
            named.append(found)
    if len(named) < 2:
        return f"{plan_file} and another input both hold a plan"
    return f"{named[0]} and {named[1]} both hold a plan"


def _holds_plan(path: str) -> bool:
    """Whether the file holds what a loaded snapshot skips as a plan: a Plan or a Binding."""
    try:
        documents = read_documents(path, limits=_State.limits, stdin=_read_stdin() if path == "-" else None)
    except InputError:
        return False
    for document in documents:
        listed = isinstance(document, dict) and document.get("kind") == "List" and isinstance(document.get("items"), list)
        items = document["items"] if listed else [document]
        if any(isinstance(item, dict) and item.get("kind") in _PLAN_KINDS for item in items):
            return True
    return False


_PLAN_KINDS = ("Plan", "BindingList", "Binding")  # a document of these kinds is a plan


def _is_plan(document: Any) -> bool:
    """A Plan, or a List of Bindings (Pods with nodeName beside them, as -o json writes for pods
    to create): not a List of Pods alone, which is a snapshot."""
    if not isinstance(document, dict):
        return False
    if document.get("kind") in _PLAN_KINDS:
        return True
    items = document.get("items") if document.get("kind") == "List" else None
    kinds = {item.get("kind") for item in items if isinstance(item, dict)} if isinstance(items, list) else set()
    return "Binding" in kinds and kinds <= {"Binding", "Pod"}


def read_plan(path: str, documents: Optional[list[Any]] = None) -> Plan:
    """A Plan (-o plan) or a v1 List of Bindings / Pods with nodeName, from gangplan or any tool
    (``documents``: the file's, when already read)."""
    if os.path.isdir(path):
        raise InputError("is a directory, not a Plan or a List of Bindings", Position(path))
    _State.inputs = _State.inputs | files_read([path])
    if documents is None:
        stdin = _read_stdin() if path == "-" else None
        documents = read_documents(path, limits=_State.limits, stdin=stdin)  # size, aliases and nesting bounded
    if len(documents) > 1:
        raise InputError(f"expected one Plan or List of Bindings, found {len(documents)} documents", Position(path))
    try:
        return plan_from_document(documents[0] if documents else None)
    except PlanFormatError as exc:
        name = STDIN if path == "-" else path
        raise InputError(str(exc), locate(Origin(name, 0, ()), exc.path) if name != STDIN else Position(name)) from None
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as exc:
        # A field of the wrong type deep inside: still bad input, not a failure of gangplan.
        raise InputError(
            f"not a Plan or a List of Bindings gangplan can read: {type(exc).__name__}: {exc}", Position(path)
        ) from None


SUMMARY_RESOURCES = 6  # past this many, the summary line shows cpu, memory and those the plan moves most


def _summary(result: Plan) -> str:
    groups = [g for g in result.groups if g.waiting]  # the groups check takes by default
    placed = sum(1 for g in groups if g.placed)
    parts = [f"groups placed {placed}/{len(groups)}"]
    names = [name for name in sorted(result.resources_before) if name != "pods"]

    def moved(name: str) -> float:
        (before, total), (after, _) = result.resources_before[name], result.resources_after[name]
        return (after - before) / total if total else 0.0

    kept = set(sorted(names, key=lambda n: (n not in ("cpu", "memory"), -moved(n), n))[:SUMMARY_RESOURCES])
    for name in (n for n in names if n in kept):
        (before, total), (after, _) = result.resources_before[name], result.resources_after[name]
        shown = percent_apart(before, after, total) if total else ("-", "-")  # digits enough to show a change
        parts.append(f"{name} {shown[0]} -> {shown[1]}")
    if len(names) > len(kept):
        parts.append(f"{plural(len(names) - len(kept), 'more resource')} in -o plan")
    s = result.solver
    # The ordered policy's status is each step's (one group at a time), not the whole plan's.
    status = f"{s.solver} {s.status}"
    if s.policy == "ordered":
        status = f"{s.solver} ordered" + (f", each step {s.status}" if s.status != "GREEDY" else "")
    if s.gap is not None:
        status += f" gap {100 * s.gap:.2f}%"
        status += f" at {s.gap_at}" if s.gap_at else ""
        at = next((o for o in s.objective if o.name == s.gap_at), None)
        if at is not None and at.bound is not None and at.name.startswith("job-groups@"):
            status += f" ({at.value} placed, at most {at.bound})"
    parts.append(status)
    parts.append(f"{s.wall_time:.2f}s")
    line = " | ".join(parts)
    return line + (f"\nnote: {s.note}" if s.note else "")


_API_SHORT = {
    "scheduling.x-k8s.io/v1alpha1": "scheduler-plugins",
    "scheduling.sigs.k8s.io/v1alpha1": "scheduler-plugins",
    "scheduling.volcano.sh/v1beta1": "volcano",
    "scheduling.godel.kubewharf.io/v1alpha1": "godel",
    "scheduling.orchestration.bytedance.com/v1alpha1": "godel",
    "kueue.x-k8s.io/pod-group": "kueue",
    "v1/Pod": "pod",
    "extensions/v1beta1": "gang",
    "batch.volcano.sh/v1alpha1": "volcano-job",
    "gangplan.io/gang": "--gang",
}


def _table(result: Plan, to_terminal: bool, wide: bool = False, snapshot: Snapshot | None = None) -> str:
    """kubectl-style columns; ``wide`` adds the JobGroup, pod counts and nodes, like ``-o wide``
    (with ``snapshot``, a bare pod or Kueue pod group with a PodGroup's name has its own nodes)."""
    columns = ["GROUP", "KIND", "PRIORITY", "STATUS", "PODS"]
    if wide:
        columns += ["JOBGROUP", "RUNNING", "PENDING", "SCHEDULED", "NODES"]
    with_topology = any(g.domains for g in result.groups)
    if with_topology:
        columns.append("TOPOLOGY")
    columns.append("REASON")
    nodes_of: dict[str, set[str]] = defaultdict(set)
    names = GroupNames(snapshot, result) if wide and snapshot is not None else None
    for p in result.placements if wide else ():
        nodes_of[names.placed(p) if names else p.group].add(p.node)
    rows: list[tuple[list[str], str | None]] = []
    for g in result.groups:
        status = ("Placed" if g.placed else "Unplaced") if g.pending else _settled(g)
        pods = f"{g.counted + g.scheduled}/{g.min_member}"
        cells = [g.key, _API_SHORT.get(g.api, g.api), str(g.priority), status, pods]
        if wide:
            nodes = sorted(nodes_of[names.group(g) if names else g.key])
            shown = ",".join(nodes[:4]) + (f",+{len(nodes) - 4}" if len(nodes) > 4 else "")
            cells += [g.job_group, str(g.running), str(g.pending), str(g.scheduled), shown or "-"]
        if with_topology:
            cells.append(_domains_cell(g))
        left = g.pending - g.scheduled if g.placed else 0
        cells.append(g.reason or (f"{plural(left, 'pending pod')} beyond minMember not placed" if left else ""))
        rows.append((cells, None if g.placed or not g.pending else "red"))
    if not _styled(to_terminal) and not any("\n" in cell for cells, _ in rows for cell in cells):
        return _columns([columns, *(cells for cells, _ in rows)])
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column, no_wrap=column not in ("REASON", "TOPOLOGY"), overflow="fold")
    for cells, style in rows:
        table.add_row(*cells, style=style)
    return _rendered(table, to_terminal)


def _columns(rows: list[list[str]]) -> str:
    """The text rich prints for these rows unstyled (box=None, no edge padding: two spaces
    between columns), without its layout: that took 5 s for 5,000 groups."""
    widths = [max(map(cell_len, column)) for column in zip(*rows)]
    return "".join(
        "  ".join(cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths)).rstrip() + "\n" for row in rows
    )


def _settled(g: GroupOutcome) -> str:
    """A group with nothing pending, in seed 001's phases, plus scheduler-plugins' Finished for
    one whose members all succeeded (`-o status` writes Volcano's Completed there)."""
    if g.counted >= g.min_member:
        return "Finished" if not g.running and g.succeeded else "Running"
    if g.finished:
        return "Finished"  # its PodGroup says so, its pods gone
    return "Unknown" if g.counted else "Pending"


def _domains_cell(g: GroupOutcome) -> str:
    """`minipod mp-0-1 · tor ×3` — the domain when it is one, else the span count. The first
    domain shown is its whole path (`tor-2` repeats under miniPods; `mp-b/tor-2` does not); the
    node level shows only when it is the one level the group has (a hostname term)."""
    parts: list[str] = []
    levels = [level for level in g.domains if level != "node"] or list(g.domains)
    for level in levels:
        names = g.domains[level]
        short = level.rsplit("/", 1)[-1]
        name = names[0] if not parts else names[0].rsplit("/", 1)[-1]
        parts.append(f"{short} {name}" if len(names) == 1 else f"{short} ×{len(names)}")
    return " · ".join(parts)


class TopologyOutput(str, Enum):
    tree = "tree"
    json = "json"


_LEAVES_SHOWN = 16


@app.command("topology")
@_run
def topology_command(
    snapshot: SnapshotArg,
    levels: LevelsOpt = None,
    output: Annotated[TopologyOutput, typer.Option("--output", "-o", help="tree or json.")] = TopologyOutput.tree,
    output_file: OutputFileOpt = None,
    gpu_resource: GpuOpt = DEFAULT_GPU_RESOURCE,
) -> None:
    """Show the network-topology tree with allocatable and free resources per domain.

    Free counts only Ready, schedulable nodes, net of running pods' requests. In JSON, cpu is
    in millicores and memory in bytes.

    \b
    Example:
      gangplan topology snapshots/gpu-cluster.yaml --levels network.example.com/minipod,network.example.com/tor
    """
    _gpu_resource(gpu_resource)
    _claim_outputs(snapshot, output_file)
    _refuse_objects_in_inputs(output_file, snapshot)  # no kind: the next run could not read it
    loaded = _load(snapshot)
    _say_gpu_resource(loaded, gpu_resource)
    keys, warnings = resolve_levels(loaded, _levels(levels))
    tree = build_tree(loaded.nodes, keys)
    for warning in [*warnings, *tree.warnings]:
        _say(f"warning: {warning}")
    if not keys and levels is None and not loaded.topologies and (shared := _shared_labels(loaded.nodes)):
        _say(
            f"note: no levels (no Topology object, no --levels, no group names one); the nodes share "
            f"{', '.join(shared)}: --levels KEY,... (largest first) draws the tree by them"
        )
    if output is TopologyOutput.json:
        data = topology_to_dict(tree, loaded, gpu_resource)
        write_output(json.dumps(data, indent=4, sort_keys=True) + "\n", output_file)
    else:
        write_output(_topology_tree(tree, loaded, gpu_resource, output_file is None), output_file)


class GenerateOutput(str, Enum):
    json = "json"
    yaml = "yaml"


_GENERATE_OPTIONS = frozenset({
    "--groups", "--max-gang", "--utilisation", "--required-share", "--preferred-share", "--selector-share",
    "--toleration-share", "--taint-share", "--hostname-share", "--gpu-resource",
})


def _shape(text: str) -> tuple[int, ...]:
    parts = text.lower().split("x")
    if len(parts) != 4 or not all(p.isascii() and p.isdigit() and int(p) >= 1 for p in parts):
        raise UsageError(f"--shape must be four positive integers like 4x4x8x16 (bigPods x miniPods x tors x nodes), got {text!r}")
    return tuple(int(p) for p in parts)


def _flavour(text: str) -> Any:
    from .generate import Flavour
    from .quantity import to_amount

    parts = text.split(":")
    try:
        if len(parts) not in (4, 5) or not parts[0]:
            raise ValueError
        gpus, cpu, memory = int(parts[1]), to_amount("cpu", parts[2]), to_amount("memory", parts[3])
        weight = float(parts[4]) if len(parts) == 5 else 1.0
        if gpus < 0 or cpu <= 0 or memory <= 0 or not weight > 0:
            raise ValueError
    except (ValueError, InputError):
        raise UsageError(
            f"--flavour must be INSTANCE_TYPE:GPUS:CPU:MEMORY[:WEIGHT] with GPUS >= 0, positive CPU, "
            f"MEMORY and WEIGHT, e.g. gpu-h100x8:8:192:2Ti:0.5; got {text!r}"
        ) from None
    return Flavour(parts[0], cpu, memory, gpus, "NVIDIA-GPU" if gpus else "", weight)


@app.command("generate")
@_run
def generate_command(
    shape: Annotated[
        str,
        typer.Option("--shape", metavar="BxMxTxN", help="bigPods x miniPods per bigPod x tors per miniPod x nodes per tor."),
    ] = "4x4x8x16",
    groups: Annotated[int, typer.Option("--groups", help="Pending PodGroups to create.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Same seed and options, same snapshot.")] = 0,
    utilisation: Annotated[float, typer.Option("--utilisation", help="Share of GPUs held by running pods (0-1).")] = 0.5,
    max_gang: Annotated[int, typer.Option("--max-gang", help="Largest gang, in pods, rounded down to a power of two.")] = 256,
    required_share: Annotated[float, typer.Option("--required-share", help="Share of groups with a required topology term.")] = 0.3,
    preferred_share: Annotated[float, typer.Option("--preferred-share", help="Share of groups with a preferred topology term.")] = 0.4,
    hostname_share: Annotated[float, typer.Option("--hostname-share", help="Share of required terms on kubernetes.io/hostname (one node), among gangs that fit on one node.")] = 0.0,
    selector_share: Annotated[float, typer.Option("--selector-share", help="Share of groups that select nodes.")] = 0.1,
    toleration_share: Annotated[float, typer.Option("--toleration-share", help="Share of groups tolerating the GPU taint.")] = 0.2,
    taint_share: Annotated[float, typer.Option("--taint-share", help="Share of GPU tors tainted NoSchedule.")] = 0.25,
    flavour: Annotated[
        Optional[list[str]],
        typer.Option(
            "--flavour",
            metavar="TYPE:GPUS:CPU:MEMORY[:WEIGHT]",
            help="A node flavour INSTANCE_TYPE:GPUS:CPU:MEMORY[:WEIGHT], e.g. gpu-h100x8:8:192:2Ti:0.5; repeat for a mix (default: H100, A100 and L40S nodes); not with --from-trace.",
        ),
    ] = None,
    topology_object: Annotated[bool, typer.Option("--topology-object/--no-topology-object", help="Add a Kueue Topology object naming the levels.")] = False,
    from_trace: Annotated[
        Optional[Path],
        typer.Option(
            "--from-trace",
            metavar="PATH",
            help="Take the nodes from a public trace's inventory: a folder or CSV of Alibaba's cluster-trace-gpu-v2023, cluster-trace-gpu-v2020 (PAI) or cluster-trace-v2026-spot-gpu (the topology and the groups stay synthetic). Every node of it is taken: --shape's last three numbers lay them out, the number of bigPods follows.",
        ),
    ] = None,
    output: Annotated[GenerateOutput, typer.Option("--output", "-o", help="json (fastest to load) or yaml.")] = GenerateOutput.json,
    output_file: OutputFileOpt = None,
    gpu_resource: Annotated[
        str, typer.Option("--gpu-resource", metavar="RESOURCE", help="The GPU resource name the generated nodes and pods use.")
    ] = DEFAULT_GPU_RESOURCE,
) -> None:
    """Write a synthetic cluster snapshot in kubectl-dump form (one v1 List).

    Nodes in a bigPod > miniPod > tor tree with GPU flavours, running pods holding about
    --utilisation of the GPUs, PriorityClasses, and --groups pending PodGroups (1-256 pods,
    1-8 GPUs each; required / preferred topology terms, priorities, node selectors and
    tolerations) in the scheduler-plugins, Volcano and Godel dialects.

    \b
    Example:
      gangplan generate --shape 4x4x8x16 --groups 400 --seed 1 --output-file m.json
    """
    nodes_from = None
    if from_trace is not None and flavour:
        # The trace's inventory gives every node its shape; a flavour would be dropped unseen.
        raise UsageError("--flavour and --from-trace do not go together: the trace's inventory gives the nodes")
    if from_trace is not None:
        from .traces import inventory_file, trace_nodes

        _claim_outputs([inventory_file(str(from_trace))], output_file)
        nodes_from = trace_nodes(str(from_trace))
    from .generate import DEFAULT_FLAVOURS, generate

    dimensions = _shape(shape)
    nodes = math.prod(dimensions)
    if nodes + groups > _State.limits.max_objects:  # what gangplan would refuse to read back
        raise UsageError(
            f"--shape {shape} and --groups {groups} make more than {_limit_name('--max-objects')} {_State.limits.max_objects} "
            f"objects ({nodes} nodes)"
        )
    try:
        data = generate(
            shape=dimensions, groups=groups, seed=seed, utilisation=utilisation, max_gang=max_gang,
            flavours=tuple(_flavour(text) for text in flavour) if flavour else DEFAULT_FLAVOURS,
            required_share=required_share, preferred_share=preferred_share, selector_share=selector_share,
            toleration_share=toleration_share, taint_share=taint_share, topology=topology_object,
            hostname_share=hostname_share, gpu_resource=gpu_resource, nodes_from=nodes_from,
        )
    except UsageError as exc:  # the core names its parameters; the user typed options
        first, _, rest = str(exc).partition(" ")
        if first.isidentifier() and f"--{first.replace('_', '-')}" in _GENERATE_OPTIONS:
            raise UsageError(f"--{first.replace('_', '-')} {rest}") from None
        raise
    # The check above bounds the work; the pods are only known now, and a snapshot with more
    # objects than the limit would be refused by every other command under the same limit.
    if len(data["items"]) > _State.limits.max_objects:
        raise UsageError(
            f"--shape {shape} and --groups {groups} make {len(data['items'])} objects with their pods, more than "
            f"{_limit_name('--max-objects')} {_State.limits.max_objects}"
        )
    write_output(json.dumps(data, indent=1) + "\n" if output is GenerateOutput.json else to_yaml(data), output_file)


_NOT_TOPOLOGY = ("beta.kubernetes.io/", "feature.node.kubernetes.io/", "nvidia.com/")  # per machine, not per place


def _shared_labels(nodes: Sequence[Node]) -> list[str]:
    """Label keys that group nodes (more than one value, fewer values than nodes): the levels
    a user of `topology` with none found most likely meant, fewest values first, at most 3."""
    values: dict[str, set[str]] = defaultdict(set)
    carriers: dict[str, int] = defaultdict(int)
    for node in nodes:
        for key, value in node.labels.items():
            values[key].add(value)
            carriers[key] += 1
    shared = [
        k for k in values
        if k != HOSTNAME_LABEL and 1 < len(values[k]) < carriers[k] and not k.startswith(_NOT_TOPOLOGY)
        and k.rpartition("/")[2] not in ("instance-type", "arch", "os")
    ]
    return sorted(shared, key=lambda k: (len(values[k]), k))[:3]


def _figures(usage: Usage, gpu_resource: str, domain: bool = False) -> str:
    parts = [f"nodes {usage.nodes}"] if domain else []
    for name, label in (("cpu", "cpu"), ("memory", "memory"), (gpu_resource, "gpu")):
        free, cap = describe_amount(name, usage.free[name]), describe_amount(name, usage.allocatable[name])
        parts.append(f"{label} {free}/{cap}")
    return "  ".join(parts)


def _node_line(node: Node, usage: Usage, gpu_resource: str) -> str:
    state = ", ".join(word for word, is_so in (("NotReady", not node.ready), ("cordoned", node.unschedulable)) if is_so)
    return f"{node.name}  {_figures(usage, gpu_resource)}" + (f"  ({state})" if state else "")


def _topology_tree(tree: TopologyTree, snapshot: Snapshot, gpu_resource: str, to_terminal: bool) -> str:
    per_node = node_usage(snapshot, gpu_resource)
    usage = domain_usage(tree, snapshot, gpu_resource)
    nodes = {node.name: node for node in snapshot.nodes}
    inside = len(tree.node_names) - len(tree.outside)
    title = " > ".join(tree.levels) if tree.levels else "no levels"
    root = Tree(f"topology: {title}  ({plural(inside, 'node')} inside, {len(tree.outside)} outside; free/allocatable)")

    def summed(indices: list[int]) -> str:
        parts = [per_node[tree.node_names[i]] for i in indices]
        names = ("cpu", "memory", gpu_resource)
        return _figures(Usage(
            nodes=len(parts), usable=sum(p.usable for p in parts),
            allocatable={name: sum(p.allocatable[name] for p in parts) for name in names},
            free={name: sum(p.free[name] for p in parts) for name in names},
        ), gpu_resource)

    def add_nodes(parent: Tree, indices: list[int], figures: bool = False) -> None:
        if len(indices) > _LEAVES_SHOWN:
            # the sums, where the line above has none: a flat cluster said only how many nodes
            parent.add(f"… {len(indices)} nodes" + (f"  {summed(indices)}" if figures else ""))
            return
        for i in indices:
            name = tree.node_names[i]
            parent.add(_node_line(nodes[name], per_node[name], gpu_resource))

    def add_domains(parent: Tree, graph_id: Any) -> None:
        leaves = []
        for child in tree.graph.successors(graph_id):
            if child[0] == "node":
                leaves.append(tree.graph.nodes[child]["index"])
                continue
            level, path = child
            figures = usage[level][tree.domain_index(level, path)]
            branch = parent.add(f"{tree.levels[level]}={path[-1]}  {_figures(figures, gpu_resource, domain=True)}")
            add_domains(branch, child)
        if leaves:
            add_nodes(parent, leaves, figures=graph_id == "")  # the root

    add_domains(root, "")
    if tree.outside:
        outside = sorted(tree.outside)
        add_nodes(root.add(f"outside the topology: {plural(len(outside), 'node')}  {summed(outside)}"), outside)
    return _rendered(root, to_terminal)


# A styled line's end: its cells' padding, inside the row's style codes.
_STYLED_END = re.compile(r"(?:\s|\x1b\[[0-9;]*m)+$")


def _styled(to_terminal: bool) -> bool:
    return to_terminal and _is_terminal(sys.stdout) and not _no_colour()


def _rendered(renderable: Any, to_terminal: bool) -> str:
    """Rich output as text, one line per row, wide enough for any row: kubectl drops no column
    to fit a terminal (it wraps the line), and grep and awk read whole rows. Styled on a terminal."""
    styled = _styled(to_terminal)
    # No emoji codes either: a name or reason holding ":a:" is printed as written.
    console = Console(
        width=1_000_000, no_color=not styled, force_terminal=styled, record=True, file=io.StringIO(), emoji=False
    )
    console.print(renderable, markup=False, highlight=False)
    text = console.export_text(styles=styled)  # the recorded styles, whatever no_color says
    if not styled:
        return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    return "\n".join(_STYLED_END.sub("\x1b[0m", line) if "\x1b[" in line else line.rstrip() for line in text.splitlines()) + "\n"


def main() -> None:
    try:
        os.fstat(2)
    except OSError:
        _stderr_to_devnull()
    for stop in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if stop is not None and signal.getsignal(stop) is signal.SIG_DFL:  # nohup's SIG_IGN stays
            signal.signal(stop, _terminate)
    try:
        app()
    except SystemExit as exc:
        # Everything is written by now (outputs are whole files, renamed into place, or stdout),
        # so the interpreter's shutdown is skipped once stdout and stderr are flushed: it takes
        # 0.3 s after a CP-SAT plan (OR-Tools' own teardown), 0.1 s otherwise. It is the only
        # way out after an interrupt while the solver runs on in C++, which cannot be joined.
        if (_flushed() and isinstance(exc.code, int)) or _Worker.abandoned():
            os._exit(exc.code if isinstance(exc.code, int) else 1)
        raise


def _flushed() -> bool:
    """False when a stream could not be flushed: the ordinary shutdown then says so as before."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


__all__ = ["app", "main"]

"""Reading snapshot files: files, folders and stdin to Kubernetes objects, then to a Snapshot.

Positions are not tracked while loading: a 20,000-node dump must load fast, and errors are
rare. Each object remembers only its ``Origin``; when an error is raised, ``locate`` parses
the file again with the YAML composer and walks to the field for its line and column.
"""

from __future__ import annotations

import gc
import functools
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import yaml
from yaml import nodes as _nodes
from yaml.composer import Composer
from yaml.reader import ReaderError

from gangplan import kube
from gangplan.errors import InputError, Position
from gangplan.model import Origin, Snapshot

__all__ = ["Limits", "STDIN", "load_snapshot", "read_objects", "locate"]

STDIN = "<stdin>"
SUFFIXES = (".yaml", ".yml", ".json")

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BASES = (_BaseLoader,) if issubclass(_BaseLoader, Composer) else (Composer, _BaseLoader)
_STR, _SEQ, _MAP = ("tag:yaml.org,2002:" + name for name in ("str", "seq", "map"))


class _Loader(*_BASES):  # type: ignore[misc]
    """Safe loading from libyaml's parser, with three changes.

    Nodes are composed by PyYAML's Python composer: libyaml's recurses in C and crashes the
    interpreter on a deeply nested document, where Python's raises RecursionError (refused
    as input); it costs little, as libyaml's composer calls back into Python for every node
    anyway. Timestamps stay strings (``creationTimestamp`` is kept as written), and ``=`` is
    a plain string rather than PyYAML's unconstructable ``value`` tag.
    """

    def __init__(self, stream: str) -> None:
        _BaseLoader.__init__(self, stream)
        Composer.__init__(self)

    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if not tag.endswith((":timestamp", ":value"))]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }

    def construct_document(self, node: _nodes.Node) -> Any:
        """PyYAML's safe constructor, short-cut for strings, lists and string-keyed mappings.

        Construction in Python dominates loading a large dump, and these are nearly all of
        it; every other node (numbers, merge keys, tags) goes to the safe constructor.
        """
        try:
            return self._build(node, {})
        finally:
            self.constructed_objects = {}
            self.recursive_objects = {}
            self.state_generators = []
            self.deep_construct = False

    def _build(self, node: _nodes.Node, built: dict[int, Any]) -> Any:
        kind = type(node)
        if kind is _nodes.ScalarNode:
            return node.value if node.tag == _STR else self.construct_object(node, deep=True)
        done = built.get(id(node))
        if done is not None:
            return done
        if kind is _nodes.SequenceNode and node.tag == _SEQ:
            items: list[Any] = []
            built[id(node)] = items
            items.extend([self._build(child, built) for child in node.value])
            return items
        if kind is _nodes.MappingNode and node.tag == _MAP:
            mapping: dict[str, Any] = {}
            built[id(node)] = mapping
            for key, value in node.value:
                if type(key) is not _nodes.ScalarNode or key.tag != _STR:
                    break
                mapping[key.value] = self._build(value, built)
            else:
                return mapping
        built[id(node)] = result = self.construct_object(node, deep=True)
        return result


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that turn hostile or absurd input into an error instead of memory exhaustion."""

    max_file_bytes: int = 2 * 1024**3
    max_documents: int = 1_000_000
    max_expanded_nodes: int = 10_000_000
    max_aliases: int = 10_000


# Text read from stdin, kept so that errors found after reading can still be located.
_in_memory: dict[str, str] = {}

_LEADING_SPACE = re.compile(r"\s*")
# Only a real anchor and a real alias make the alias pre-pass worth its cost; a bare `&` or
# `*` inside strings (URLs, RBAC wildcards) is common in cluster dumps.
_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s\[\]{},]")
_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s\[\]{},]")


def load_snapshot(
    paths: Sequence[str], *, stdin: bytes | None = None, limits: Limits = Limits()
) -> Snapshot:
    """Read every input and convert it in one pass; the first bad field stops the run."""
    # The loaded trees hold no cycles, yet the collector would rescan them again and again
    # as they grow: on a large dump that more than doubles the loading time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        snapshot = kube.to_snapshot(read_objects(paths, stdin=stdin, limits=limits))
    finally:
        if collecting:
            gc.enable()
    if not (
        snapshot.nodes
        or snapshot.pods
        or snapshot.pod_groups
        or snapshot.priority_classes
        or snapshot.topologies
        or snapshot.skipped_kinds
    ):
        only = [STDIN if p == "-" else p for p in paths]
        raise InputError(
            "no Kubernetes objects found", Position(only[0]) if len(only) == 1 else None
        )
    return snapshot


def read_objects(
    paths: Sequence[str], *, stdin: bytes | None = None, limits: Limits = Limits()
) -> Iterator[tuple[dict[str, Any], Origin]]:
    """Every object in the inputs, in order, List items unwrapped, each with its origin."""
    documents = 0
    for name, path in _input_files(paths):
        if path is None:
            if stdin is None:
                stdin = sys.stdin.buffer.read()
            text = _decode(name, _within(name, stdin, limits))
            _in_memory[name] = text
        else:
            text = _read(name, path, limits)
        for index, document in enumerate(_documents(name, text, limits)):
            documents += 1
            if documents > limits.max_documents:
                raise InputError(
                    f"more than {limits.max_documents} YAML documents in the input",
                    locate(Origin(name, index)),
                )
            if document is None:
                continue
            yield from _objects(document, Origin(name, index))


def _input_files(paths: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """(name shown in errors, path to read, or None for stdin)."""
    for path in paths:
        if path == "-":
            yield STDIN, None
        elif os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found += [
                    os.path.join(root, f)
                    for f in files
                    if f.lower().endswith(SUFFIXES) and not f.startswith(".")
                ]
            if not found:
                raise InputError("no .yaml, .yml or .json files in this directory", Position(path))
            for file in sorted(found, key=lambda file: file.split(os.sep)):
                yield file, file
        else:
            yield path, path


def _read(name: str, path: str, limits: Limits) -> str:
    try:
        with open(path, "rb") as stream:
            if os.fstat(stream.fileno()).st_size > limits.max_file_bytes:
                raise _too_big(name, limits)
            data = _within(name, stream.read(limits.max_file_bytes + 1), limits)
    except FileNotFoundError:
        raise InputError("no such file or directory", Position(name)) from None
    except PermissionError:
        raise InputError("permission denied", Position(name)) from None
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise InputError(f"cannot read: {reason}", Position(name)) from None
    return _decode(name, data)


def _too_big(name: str, limits: Limits) -> InputError:
    return InputError(
        f"file is larger than the limit of {limits.max_file_bytes} bytes", Position(name)
    )


def _within(name: str, data: bytes, limits: Limits) -> bytes:
    if len(data) > limits.max_file_bytes:
        raise _too_big(name, limits)
    return data


def _decode(name: str, data: bytes) -> str:
    if b"\0" in data:
        raise InputError("not a text file (it contains NUL bytes)", Position(name))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not a text file (it is not UTF-8)", Position(name)) from None
    return text.removeprefix("\ufeff")


def _documents(name: str, text: str, limits: Limits) -> Iterator[Any]:
    """The documents of one file: JSON when it looks like JSON, else YAML, safely."""
    start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    json_error: ValueError | None = None
    if text[start : start + 1] in ("{", "["):
        try:
            yield json.loads(text)
            return
        except ValueError as exc:
            json_error = exc  # maybe a YAML flow mapping; let YAML decide
        except RecursionError:
            raise InputError("nested too deeply to be a Kubernetes object", Position(name)) from None
    try:
        if _ANCHOR.search(text) and _ALIAS.search(text):
            _check_aliases(name, text, limits)
        yield from yaml.load_all(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        if isinstance(json_error, json.JSONDecodeError):
            raise InputError(
                f"not valid JSON: {json_error.msg}",
                Position(name, json_error.lineno, json_error.colno),
            ) from None
        raise _yaml_error(name, text, exc) from None
    except RecursionError:
        raise InputError("nested too deeply to be a Kubernetes object", Position(name)) from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise InputError(f"cannot read: {exc}", Position(name)) from None


def _yaml_error(name: str, text: str, exc: yaml.YAMLError) -> InputError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        if exc.problem and exc.context and exc.context_mark and "block" not in exc.context:
            problem += f" ({exc.context} at line {exc.context_mark.line + 1})"
        if mark is None:
            return InputError(f"not valid YAML: {problem}", Position(name))
        position = Position(name, mark.line + 1, mark.column + 1)
        return InputError(f"not valid YAML: {problem}", position)
    if isinstance(exc, ReaderError):
        before = text[: exc.position]
        line = before.count("\n") + 1
        column = exc.position - (before.rfind("\n") + 1) + 1
        return InputError(
            f"not valid YAML: character #x{exc.character:04x} is not allowed ({exc.reason})",
            Position(name, line, column),
        )
    return InputError(f"not valid YAML: {exc}", Position(name))


def _check_aliases(name: str, text: str, limits: Limits) -> None:
    """Refuse a billion-laughs document before it is loaded.

    Loading shares aliased nodes, but every later walk over the data expands them; so the
    nodes that aliases would add are counted, each anchor knowing its expanded size.
    """
    sizes: dict[str, int] = {}
    open_collections: list[tuple[str | None, int]] = []
    nodes = expanded = aliases = 0
    for event in yaml.parse(text, Loader=_Loader):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            nodes += 1
            open_collections.append((event.anchor, nodes))
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            anchor, first = open_collections.pop()
            if anchor is not None:
                sizes[anchor] = nodes - first + 1
        elif kind is yaml.AliasEvent:
            aliases += 1
            size = sizes.get(event.anchor, 1)
            nodes += size
            expanded += size
            if aliases > limits.max_aliases:
                problem = f"more than {limits.max_aliases} YAML aliases"
            elif expanded > limits.max_expanded_nodes:
                problem = f"YAML aliases expand to more than {limits.max_expanded_nodes} nodes"
            else:
                continue
            mark = event.start_mark
            position = Position(name, mark.line + 1, mark.column + 1)
            raise InputError(f"{problem} (alias bomb?)", position)


def _objects(document: Any, origin: Origin) -> Iterator[tuple[dict[str, Any], Origin]]:
    if not isinstance(document, dict):
        raise _not_an_object(origin, ())
    kind = document.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List")):
        yield document, origin
        return
    items = document.get("items")
    if items is None:
        return
    if not isinstance(items, list):
        message = f"items: expected a list of objects in a {kind}"
        raise InputError(message, locate(origin, ("items",)))
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _not_an_object(origin, ("items", index))
        yield item, Origin(origin.file, origin.document, ("items", index))


def _not_an_object(origin: Origin, path: tuple[str | int, ...]) -> InputError:
    return InputError(
        "expected a Kubernetes object (a mapping with apiVersion and kind)", locate(origin, path)
    )


def _composed(file: str) -> list[Any] | None:
    """Every document of a file as YAML nodes with marks; cached, as ``check`` locates many groups."""
    if file in _in_memory:
        text = _in_memory[file]
        return _composed_version(file, (hash(text), len(text), 0))
    try:
        stat = os.stat(file)
    except OSError:
        return None
    return _composed_version(file, (stat.st_mtime_ns, stat.st_size, stat.st_ino))


@functools.lru_cache(maxsize=2)
def _composed_version(file: str, version: tuple[int, int, int]) -> list[Any] | None:
    text = _in_memory.get(file)
    if text is None:
        try:
            with open(file, "rb") as stream:
                text = _decode(file, stream.read())
        except (OSError, InputError):
            return None
    try:
        return list(yaml.compose_all(text, Loader=_Loader))
    except (yaml.YAMLError, RecursionError):
        return None


def locate(origin: Origin, field_path: tuple[str | int, ...] = ()) -> Position:
    """Where ``field_path`` of the object at ``origin`` is written, for an error message.

    Falls back to the nearest enclosing node that exists, and to the bare file name when the
    file cannot be read or composed again.
    """
    roots = _composed(origin.file)
    if roots is None or origin.document >= len(roots):
        return Position(origin.file)
    root = roots[origin.document]
    if root is None:
        return Position(origin.file)
    node = root
    try:
        for step in origin.path + field_path:
            found = _child(node, step)
            if found is None:
                break
            node = found
    except RecursionError:  # a merge key that includes its own mapping
        pass
    mark = node.start_mark
    return Position(origin.file, mark.line + 1, mark.column + 1)


def _child(node: _nodes.Node, step: str | int) -> _nodes.Node | None:
    """The node under ``step``; for an empty value, its key (the value has no useful mark)."""
    if isinstance(node, _nodes.SequenceNode):
        if isinstance(step, int) and 0 <= step < len(node.value):
            return node.value[step]
        return None
    if not isinstance(node, _nodes.MappingNode):
        return None
    found = None
    merges = []
    for key, value in node.value:
        if isinstance(key, _nodes.ScalarNode):
            if key.value == step:
                found = key if _is_empty(value) else value
            elif key.tag == "tag:yaml.org,2002:merge":
                merges.append(value)
    if found is not None:
        return found
    for merged in merges:
        for candidate in merged.value if isinstance(merged, _nodes.SequenceNode) else [merged]:
            found = _child(candidate, step)
            if found is not None:
                return found
    return None


def _is_empty(node: _nodes.Node) -> bool:
    return isinstance(node, _nodes.ScalarNode) and node.value == "" and not node.style

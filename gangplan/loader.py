"""Reading snapshot files: files, folders and stdin to Kubernetes objects, then to a Snapshot.

Positions are not tracked while loading, but for where each List item is written: a
20,000-node dump must load fast, and errors are rare. Each object remembers only its
``Origin``; when an error is raised, ``locate`` reads again, for the field's line and column,
the List item the field is in, or else the file's parser events or, failing those, its nodes.
"""

from __future__ import annotations

import dataclasses
import gc
import codecs
import functools
import itertools
import json
import marshal
import os
import re
import signal
import sys
import threading
from array import array
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, NoReturn, Sequence

import yaml
from yaml import nodes as _nodes
from yaml.composer import Composer
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError

from gangplan import kube, kueue
from gangplan.errors import InputError, Position, dotted as _dotted
from gangplan.model import Node, Origin, Pod, PodGroup, Snapshot
from gangplan.semantics import GODEL_POD_GROUP_KEY, POD_GROUP_ANNOTATIONS, POD_GROUP_LABELS

__all__ = [
    "Limits",
    "MAX_TOTAL_AMOUNT",
    "STDIN",
    "folder_files",
    "load_snapshot",
    "locate",
    "locate_all",
    "read_bounded",
    "read_documents",
    "read_objects",
    "within_limits",
]

STDIN = "<stdin>"
SUFFIXES = (".yaml", ".yml", ".json")

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BASES = (_BaseLoader,) if issubclass(_BaseLoader, Composer) else (Composer, _BaseLoader)
_STR, _SEQ, _MAP, _MERGE, _VALUE = ("tag:yaml.org,2002:" + name for name in ("str", "seq", "map", "merge", "value"))


# YAML 1.1's base-60 numbers (`1:30` is 90) are gone from YAML 1.2 and from the YAML reader
# kubectl uses: there `cpu: 1:30` is the string "1:30", refused as a quantity, not 90 cores.
_NO_SEXAGESIMAL = {
    "tag:yaml.org,2002:int": re.compile(
        r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$", re.X
    ),
    "tag:yaml.org,2002:float": re.compile(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        re.X,
    ),
}


class _Loader(*_BASES):  # type: ignore[misc]
    """Safe loading from libyaml's parser, with three changes.

    Nodes are composed by PyYAML's Python composer: libyaml's recurses in C and crashes the
    interpreter on a deeply nested document, where Python's raises RecursionError (refused
    as input); it costs little, as libyaml's composer calls back into Python for every node
    anyway. Timestamps stay strings (``creationTimestamp`` is kept as written), ``=`` is a
    plain string rather than PyYAML's unconstructable ``value`` tag, and merge keys follow
    YAML's rule (below).
    """

    def __init__(self, stream: str) -> None:
        _BaseLoader.__init__(self, stream)
        Composer.__init__(self)

    yaml_implicit_resolvers = {
        first: [
            (tag, _NO_SEXAGESIMAL.get(tag, rx)) for tag, rx in resolvers if not tag.endswith((":timestamp", ":value"))
        ]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }

    def flatten_mapping(self, node: _nodes.MappingNode) -> None:
        """YAML's merge key (yaml.org/type/merge.html), as go-yaml reads it for kubectl: a key
        written in the mapping wins, then the mapping earliest in a ``<<`` sequence. PyYAML
        6.0.4 keeps the last for a key longer than one character (yaml/pyyaml#953), and
        ``locate`` follows the rule, so an error was shown at a value never read."""
        for key, _ in node.value:
            if key.tag == _VALUE:
                key.tag = _STR
        merges = [value for key, value in node.value if key.tag == _MERGE]
        if not merges:
            return
        own = node.value = [pair for pair in node.value if pair[0].tag != _MERGE]  # before a mapping merging itself
        merged: list[_nodes.MappingNode] = []
        for value in merges:
            for sub in value.value if isinstance(value, _nodes.SequenceNode) else [value]:
                if not isinstance(sub, _nodes.MappingNode):
                    raise ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"expected a mapping or list of mappings for merging, but found {sub.id}", sub.start_mark,
                    )
                self.flatten_mapping(sub)
                merged.append(sub)
        written = {_key_identity(key) for key, _ in own}
        taken: dict[Any, tuple[_nodes.Node, _nodes.Node]] = {}
        for sub in merged:
            last = {_key_identity(pair[0]): pair for pair in sub.value}  # its own keys follow its merged ones
            for identity, pair in last.items():
                if identity not in written:
                    taken.setdefault(identity, pair)
        node.value = [*taken.values(), *own]

    def construct_document(self, node: _nodes.Node) -> Any:
        """PyYAML's safe constructor, short-cut for strings, lists and string-keyed mappings.

        Construction in Python dominates loading a large dump, and these are nearly all of
        it; every other node (numbers, merge keys, tags) goes to the safe constructor.
        """
        try:
            return self._build(node, {})
        finally:
            self.constructed_objects: dict[Any, Any] = {}
            self.recursive_objects: dict[Any, Any] = {}
            self.state_generators: list[Any] = []
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
                if key.value in mapping:  # kubectl refuses it; the last one would silently win
                    raise ConstructorError(None, None, f"key {key.value!r} is given twice in one mapping", key.start_mark)
                mapping[key.value] = self._build(value, built)
            else:
                return mapping
        built[id(node)] = result = self.construct_object(node, deep=True)
        return result


# An explicit !!timestamp stays a string too: PyYAML's constructor fails with AttributeError on
# one its own pattern does not parse ("!!timestamp 2001-12-14x"), which is not an input error.
_Loader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def _construct_int(loader: _Loader, node: _nodes.ScalarNode) -> int:
    try:
        return _BaseLoader.construct_yaml_int(loader, node)
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise ConstructorError(None, None, "an integer with too many digits", node.start_mark) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class _Unusual(Exception):
    """YAML the event readers (``_load_all``, ``_walked``) leave to PyYAML's composer."""


_NO_KEY = object()
# Deeper than this, a document goes the composer's way (kubectl's objects nest about 15 deep).
_EVENT_NESTING = 100


def _load_all(text: str, spans: dict[int, array] | None = None) -> Iterator[Any]:
    """``yaml.load_all`` with ``_Loader``: the same values and the same errors, in half the time.

    Composing nodes in Python, only to turn them into dicts and lists, took 60% of reading
    a kubectl YAML dump (0.8 of 1.3 s at 2,048 nodes); objects are built straight from
    libyaml's events instead. A document with anything but plain structure (a tag, an
    anchor or alias, a key that is a collection or is given twice, a scalar the constructor
    refuses, deep nesting) is read again by the composer from that document on, so whatever
    it makes of it, value or error, stands. ``spans`` gets, by document, where each item of
    a List read that way is written (``_item_spans``).
    """
    if (whole := _in_halves(text, spans)) is not None:
        yield whole
        return
    done = 0
    try:
        for document in _from_events(text, spans):
            yield document
            done += 1
        return
    except _Unusual:
        pass
    for index, document in enumerate(yaml.load_all(text, Loader=_Loader)):
        if index >= done:
            yield document


def _from_events(text: str, spans: dict[int, array] | None = None) -> Iterator[Any]:
    loader = _Loader(text)
    plain: dict[str, Any] = {}  # a plain scalar's value by its text: a dump repeats most of them
    try:
        loader.get_event()  # the stream's start
        index = 0
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # the document's start
            found = None if spans is None else array("q")
            document = _event_document(loader, plain, found)
            loader.get_event()  # its end
            if found:
                spans[index] = found  # type: ignore[index]
            index += 1
            yield document
    finally:
        loader.dispose()


def _event_document(loader: _Loader, plain: dict[str, Any], spans: array | None = None) -> Any:
    """One document's value from its events; ``spans`` gets where each item of its ``items``
    is written when that is a block sequence under a root mapping (a kubectl List): its start's
    offset, line and column, then its end's offset (``_ITEM``)."""
    scalar, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    open_: list[Any] = []  # the collections being filled, innermost last
    keys: list[Any] = []  # per collection, the key whose value comes next (_NO_KEY: none)
    listed: list[Any] | None = None  # the List's items, once open
    while True:
        event = loader.get_event()
        kind = type(event)
        opened: dict[str, Any] | list[Any] | None = None
        if kind is scalar:
            if event.anchor is not None or event.tag is not None:
                raise _Unusual
            if event.implicit[0]:  # plain: resolved as the composer would, by its text
                value = plain.get(event.value, _NO_KEY)
                if value is _NO_KEY:
                    value = plain[event.value] = _plain_scalar(loader, event)
            else:
                value = event.value
        elif kind is mapping_start or kind is sequence_start:
            if event.anchor is not None or event.tag is not None or len(open_) >= _EVENT_NESTING:
                raise _Unusual
            value = opened = {} if kind is mapping_start else []
        elif kind in ends:
            value = open_.pop()
            keys.pop()
            if not open_:
                return value
            if open_[-1] is listed:
                spans.append(event.end_mark.index)  # type: ignore[union-attr]
            continue
        else:  # an alias
            raise _Unusual
        if open_:
            parent = open_[-1]
            if type(parent) is list:
                if parent is listed:
                    mark = event.start_mark
                    spans.extend((mark.index, mark.line, mark.column))  # type: ignore[union-attr]
                    if opened is None:
                        spans.append(event.end_mark.index)  # type: ignore[union-attr]
                parent.append(value)
            elif keys[-1] is _NO_KEY:
                if opened is not None or value in parent:
                    raise _Unusual
                keys[-1] = value
                continue
            else:
                parent[keys[-1]] = value
                keys[-1] = _NO_KEY
        elif opened is None:
            return value
        if opened is not None:
            if (
                kind is sequence_start
                and spans is not None
                and len(open_) == 1
                and not event.flow_style
                and type(open_[0]) is dict
                and open_[0].get("items") is opened
            ):
                listed = opened
            open_.append(opened)
            keys.append(_NO_KEY)


def _plain_scalar(loader: _Loader, event: yaml.ScalarEvent) -> Any:
    tag = loader.resolve(_nodes.ScalarNode, event.value, event.implicit)
    if tag == _STR:
        return event.value
    try:
        return loader.yaml_constructors[tag](loader, _nodes.ScalarNode(tag, event.value, event.start_mark, event.end_mark))
    except Exception:  # a merge key (no constructor), an integer Python refuses: the composer's way says
        raise _Unusual from None


# A YAML dump this large is read in two halves at once (a live-cluster-sized dump of 2,048
# nodes, 40 MB: 2.7 -> 1.6 s on 2 cores); below it, forking costs more than it saves.
PARALLEL_FROM = 4 * 1024**2
# The `items:` key of a kubectl List is its second: it is looked for in the text's first
# lines, within this many characters, and then this many events.
_ITEMS_WITHIN = 1_000
_ITEMS_FROM = 1 << 16


def _in_halves(text: str, spans: dict[int, array] | None = None) -> Any | None:
    """The one document of a large kubectl List dump, read in two halves at once; None when
    the text is to be read in one piece."""
    if len(text) < PARALLEL_FROM or not _can_fork():
        return None
    at = text.find("\n- ", _middle(text))
    return None if at < 0 else _halves(text, at + 1, spans)


def _halves(text: str, at: int, spans: dict[int, array] | None = None) -> Any | None:
    """``text[:at]`` read here and ``text[at:]``, behind ``items:``, in a forked child, joined.

    ``at`` begins a line with ``- ``. The text is one document (no markers), a mapping whose
    ``items`` is an indentless sequence. When the first half reads without error as a mapping
    whose last key is that ``items``, no token runs across ``at`` (an open quote or bracket
    would have failed it; a ``-`` at column 0 ends plain and block scalars), so the second
    half's tokens are the whole text's and ``at`` is in that sequence. Anything else (an error
    in either half, a key given in both, a child that failed) gives None: the text read in one
    piece then says what is wrong, and where."""
    if _has_markers(text) or not _indentless_items(text):
        return None
    read, write = os.pipe()
    try:
        child = os.fork()
    except OSError:  # no room for another process: read it here
        os.close(read)
        os.close(write)
        return None
    if child == 0:
        _read_tail(text, at, read, write)
    os.close(write)
    source = os.fdopen(read, "rb")
    read_all = False
    head_spans: dict[int, array] = {}
    try:
        try:
            head = list(_from_events(text[:at], head_spans))
        except Exception:
            return None
        blob = source.read()
        read_all = True
    finally:
        if not read_all:
            os.kill(child, signal.SIGKILL)
        source.close()
        os.waitpid(child, 0)
    try:
        tail, tail_spans = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):  # the child wrote nothing: it failed
        return None
    if len(head) != 1 or len(tail) != 1 or type(head[0]) is not dict or type(tail[0]) is not dict:
        return None
    first, rest = head[0], tail[0]
    if not first or next(reversed(first)) != "items" or type(first["items"]) is not list:
        return None
    if type(rest.get("items")) is not list or any(key in first for key in rest if key != "items"):
        return None
    first["items"].extend(rest.pop("items"))
    first.update(rest)
    if spans is not None and 0 in head_spans and tail_spans:
        spans[0] = head_spans[0] + array("q", tail_spans)
    return first


_TAIL_KEY = "items:\n"
# Per List item: where it starts (offset, line, column), then the offset where it ends.
_ITEM = 4


def _moved(spans: array, offset: int, lines: int) -> None:
    """Item spans read from a later part of the text, made the whole text's."""
    for at in range(0, len(spans), _ITEM):
        spans[at] += offset
        spans[at + 1] += lines
        spans[at + 3] += offset


def _read_tail(text: str, at: int, read: int, write: int) -> NoReturn:
    """The forked child: the second half, marshalled to ``write``; nothing at all if it fails."""
    try:
        for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(stop, signal.SIG_DFL)  # the parent answers a Ctrl-C; the child just ends
        os.close(read)
        spans: dict[int, array] = {}
        documents = list(_from_events(_TAIL_KEY + text[at:], spans))
        if 0 in spans:  # the text read began with the key's line, then text[at:]
            _moved(spans[0], at - len(_TAIL_KEY), text.count("\n", 0, at) - 1)
        blob = marshal.dumps((documents, spans[0].tobytes() if 0 in spans else b""))
        with os.fdopen(write, "wb") as sink:
            sink.write(blob)
    finally:
        os._exit(0)


def _can_fork() -> bool:
    """A second core to read on, and no thread a fork could leave holding a lock (the CLI
    starts its first after loading)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1 and len(os.sched_getaffinity(0)) > 1


def _has_markers(text: str) -> bool:
    """Document markers or directives: a stream of several documents is read in one piece."""
    return text.startswith(("---", "...", "%")) or _MARKER.search(text) is not None


# Begun with the line break, one search skips ahead as fast as `in` does (0.02 s on 40 MB,
# where three `in` tests took 0.08 s).
_MARKER = re.compile(r"\n(?:---|\.\.\.|%)")


def _indentless_items(text: str) -> bool:
    """Whether the first document is a mapping with an ``items`` key among its first ones, whose
    value is a block sequence at column 0, as kubectl prints a List. The first lines are
    enough: cut at a line's end, they give the whole text's events up to the cut."""
    loader = _Loader(text[: text.rfind("\n", 0, _ITEMS_FROM) + 1])
    try:
        events = itertools.islice(iter(loader.get_event, None), _ITEMS_WITHIN)
        opening = [type(next(events)) for _ in range(3)]
        if opening != [yaml.StreamStartEvent, yaml.DocumentStartEvent, yaml.MappingStartEvent]:
            return False
        for key in events:
            if type(key) is not yaml.ScalarEvent:
                return False
            value = next(events)
            if key.value == "items":
                return type(value) is yaml.SequenceStartEvent and value.start_mark.column == 0
            _skip(value, events)
        return False
    except (yaml.YAMLError, StopIteration):
        return False
    finally:
        loader.dispose()


def _middle(text: str) -> int:
    """Where half the lines are behind, to a 64th: reading time goes with lines more than with
    bytes (a node's images are long lines, a pod's spec short ones)."""
    step = max(1, len(text) // 64)
    counts = [text.count("\n", start, start + step) for start in range(0, len(text), step)]
    half, behind = sum(counts) // 2, 0
    for index, count in enumerate(counts):
        if behind + count >= half:
            return index * step
        behind += count
    return 0


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that turn hostile or absurd input into an error instead of memory exhaustion.

    The first three are per run and can be raised from the command line (``--max-file-size``,
    ``--max-documents``, ``--max-objects``): a 20,000-node dump is well inside the defaults.
    The alias limits only matter for YAML that uses anchors, which no ``kubectl`` dump does.
    """

    max_file_bytes: int = 2 * 1024**3  # per file, checked before it is read
    max_documents: int = 1_000_000  # YAML documents over all inputs
    max_objects: int = 1_000_000  # Kubernetes objects over all inputs, List items counted singly
    max_expanded_nodes: int = 1_000_000  # what aliases add: -o status writes PodGroups back out expanded
    max_expanded_bytes: int = 16 * 1024**2  # the scalar text aliases add (one long string, repeated)
    max_aliases: int = 10_000
    max_depth: int = 100  # nesting of the PodGroups and pod manifests gangplan writes back out


# Quantities of one resource over all nodes, or over all pods, must stay below this (2**60
# bytes is 1 EiB; 2**60 millicores, a billion billion): the greedy placer counts in 64-bit
# integers, and CP-SAT refuses a constraint whose terms could add up to 2**62.
MAX_TOTAL_AMOUNT = 2**60


# Text read from stdin, kept so that errors found after reading can still be located.
_in_memory: dict[str, str] = {}

_LEADING_SPACE = re.compile(r"\s*")
_TOO_DEEP = "nested too deeply to be a Kubernetes object"
# libyaml 0.2.5 and later (bundled from PyYAML 6.0.4) refuse nesting deeper than 1,000 levels
# themselves, with this in the problem; older ones leave it to the RecursionError guard.
_LIBYAML_NESTING = "exceeded maximum nesting depth"
# Only a real anchor and a real alias make the alias pre-pass worth its cost; a bare `&` or
# `*` inside strings (URLs, RBAC wildcards) is common in cluster dumps. Begun with the
# indicator itself, a search skips ahead at memchr speed: 0.01 s on a 40 MB dump, against
# 0.65 s when it tested the preceding character (start, space, `[`, `{`, `,`, or the `:` of a
# quoted flow key, `"k":&a`) first.
_ANCHOR = re.compile(r"&(?<![^\s\[{,:]&)[^\s\[\]{},]")
_ALIAS = re.compile(r"\*(?<![^\s\[{,:]\*)[^\s\[\]{},]")


def load_snapshot(
    paths: Sequence[str], *, stdin: bytes | None = None, limits: Limits = Limits(), skip: Sequence[str] = ()
) -> Snapshot:
    """Read every input and convert it in one pass; the first bad field stops the run.
    ``skip``: files a folder among ``paths`` may hold that are not part of the snapshot (the
    plan `verify` reads from a file beside it)."""
    # The loaded trees hold no cycles, yet the collector would rescan them again and again
    # as they grow: on a large dump that more than doubles the loading time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        empty: list[str] = []
        objects = within_limits(read_objects(paths, stdin=stdin, limits=limits, empty=empty, skip=skip), limits)
        snapshot = dataclasses.replace(kube.to_snapshot(_named(objects)), empty_inputs=tuple(empty))
    finally:
        if collecting:
            gc.enable()
    check_snapshot(snapshot, limits)
    if not (
        snapshot.nodes
        or snapshot.pods
        or snapshot.pod_groups
        or snapshot.priority_classes
        or snapshot.topologies
        or snapshot.workload_priority_classes
        or snapshot.skipped_kinds
    ):
        only = [STDIN if p == "-" else p for p in paths]
        raise InputError(
            "no Kubernetes objects found", Position(only[0]) if len(only) == 1 else None
        )
    return snapshot


def read_objects(
    paths: Sequence[str],
    *,
    stdin: bytes | None = None,
    limits: Limits = Limits(),
    empty: list[str] | None = None,
    skip: Sequence[str] = (),
) -> Iterator[tuple[dict[str, Any], Origin]]:
    """Every object in the inputs, in order, List items unwrapped, each with its origin; the
    names of inputs with no document at all (an empty List is a document) go to ``empty``. A
    file is read once however often the inputs name it."""
    documents = objects = 0
    # A file named twice (a folder and a file in it, ./x and x) is read once; one skipped, never.
    seen = {os.path.realpath(p) for p in skip if p != "-"}
    for name, path in _input_files(paths):
        if path is not None:
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
        if path is None:
            if stdin is None:
                stdin = read_bounded(sys.stdin.buffer, limits.max_file_bytes)
            text = _decode(name, _within(name, stdin, limits))
            _in_memory[name] = text
        else:
            text = _read(name, path, limits)
        found_any = False
        for index, document in enumerate(_documents(name, text, limits)):
            found_any = found_any or document is not None
            documents += 1
            if documents > limits.max_documents:
                raise InputError(
                    f"more than {limits.max_documents} YAML documents in the input "
                    "(raise the limit with --max-documents)",
                    locate(Origin(name, index)),
                )
            if document is None:
                continue
            for found in _objects(document, Origin(name, index)):
                objects += 1
                if objects > limits.max_objects:
                    raise InputError(
                        f"more than {limits.max_objects} Kubernetes objects in the input "
                        "(raise the limit with --max-objects)",
                        locate(found[1]),
                    )
                yield found
        if not found_any and empty is not None:
            empty.append(name)


def read_documents(path: str, *, limits: Limits = Limits(), stdin: bytes | None = None) -> list[Any]:
    """Every document of one file (JSON or YAML), read within ``limits``: for plan files.
    ``path`` "-" reads ``stdin``, the bytes the caller read from it."""
    if path == "-":
        path = STDIN
        text = _decode(path, _within(path, stdin or b"", limits))
    else:
        text = _read(path, path, limits)
    documents = []
    for index, document in enumerate(_documents(path, text, limits)):
        if index >= limits.max_documents:
            raise InputError(
                f"more than {limits.max_documents} YAML documents "
                "(raise the limit with --max-documents)",
                Position(path),
            )
        documents.append(document)
    return documents


# ---------------------------------------------------------------- names and amounts: output safety

# Objects whose names gangplan writes out (bindings name pods and nodes), by (apiVersion, kind).
_NAMED = {("v1", "Node"), ("v1", "Pod")} | {(api.value, "PodGroup") for api in kube.POD_GROUP_APIS}


def _name_error(kind: str, field: str, value: str, problem: str, position: Position) -> InputError:
    what = "a DNS-1123 label" if field == "namespace" else "a DNS-1123 subdomain"
    shown = json.dumps(value if len(value) <= 80 else value[:77] + "...", ensure_ascii=True)
    return InputError(
        f"metadata.{field}: {shown} is not a valid {kind} {field}: expected {what} ({problem})",
        position,
    )


@functools.lru_cache(maxsize=1024)
def _namespace_problem(namespace: str) -> str | None:
    """Why a namespace is not a DNS-1123 label, or None; memoised, as every pod names one."""
    return kube.name_problem(namespace, kube.LABEL_LIMIT, kube.DNS_LABEL)


_NAME_RULES = (("name", kube.name_problem), ("namespace", _namespace_problem))


def _check_name(kind: str, meta: Any, origin: Origin, own_path: tuple[str | int, ...] = ()) -> None:
    """Names gangplan may write into bindings and pods must be Kubernetes names; anything else
    (a newline, a quote, a path) is refused here, so no output can carry it."""
    if not isinstance(meta, dict):
        return  # kube reports the wrong type
    for field, problem_of in _NAME_RULES:
        value = meta.get(field)
        if type(value) is not str or (field == "namespace" and (value == "" or kind == "Node")):
            continue  # a wrong type or a missing name is kube's to report; "" is "default"
        problem = problem_of(value)
        if problem is not None:
            position = locate(origin, own_path + ("metadata", field))
            raise _name_error(kind, field, value, problem, position)


def _named(
    objects: Iterator[tuple[dict[str, Any], Origin]],
) -> Iterator[tuple[dict[str, Any], Origin]]:
    """Objects on their way to ``kube``, names checked before any message can quote them."""
    for obj, origin in objects:
        api, kind = obj.get("apiVersion"), obj.get("kind")
        if type(api) is str and type(kind) is str and (api, kind) in _NAMED:
            _check_name(kind, obj.get("metadata"), origin)
        yield obj, origin


_INT32 = 2**31 - 1
_REPLICATED = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
_MEMBERSHIP_KEYS = frozenset({*POD_GROUP_LABELS, *POD_GROUP_ANNOTATIONS, GODEL_POD_GROUP_KEY})


def _expanded_workload(obj: dict[str, Any], spec: dict[str, Any]) -> bool:
    """A workload manifest (no uid) whose pod template names a group: an input that
    ``manifests.expand_workloads`` may expand."""
    meta, template = obj.get("metadata"), spec.get("template")
    if not isinstance(meta, dict) or meta.get("uid") or obj.get("status") or not isinstance(template, dict):
        return False
    template_meta = template.get("metadata")
    if not isinstance(template_meta, dict):
        return False
    keys = {key for where in ("labels", "annotations") if isinstance(template_meta.get(where), dict) for key in template_meta[where]}
    return bool(keys & _MEMBERSHIP_KEYS)


def _replicas(obj: dict[str, Any], workloads: bool) -> Iterator[tuple[int, tuple[str | int, ...]]]:
    """(pods, where the count is written) for every pod count an object expands into."""
    kind, spec = obj.get("kind"), obj.get("spec")
    if not isinstance(spec, dict):
        return
    counts: list[tuple[Any, tuple[str | int, ...]]] = []
    if kind == "Gang":
        items = spec.get("replicationControllers")
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                at: tuple[str | int, ...] = ("spec", "replicationControllers", i)
                if ("metadata" in item or "spec" in item) and isinstance(item.get("spec"), dict):
                    item, at = item["spec"], at + ("spec",)
                counts.append((item.get("replicas"), at + ("replicas",)))
    elif kind == "Job" and obj.get("apiVersion") == "batch.volcano.sh/v1alpha1":
        tasks = spec.get("tasks")
        for i, task in enumerate(tasks if isinstance(tasks, list) else []):
            if isinstance(task, dict):
                counts.append((task.get("replicas"), ("spec", "tasks", i, "replicas")))
    elif kind in _REPLICATED and (workloads or _expanded_workload(obj, spec)):
        counts.append((spec.get("replicas"), ("spec", "replicas")))
    elif kind == "Job" and (workloads or _expanded_workload(obj, spec)):
        # A Job runs parallelism pods at once, never more than its completions.
        parallelism, completions = spec.get("parallelism"), spec.get("completions")
        if type(parallelism) is int and type(completions) is int and 0 <= completions < parallelism:
            counts.append((completions, ("spec", "completions")))
        else:
            counts.append((parallelism, ("spec", "parallelism")))
    for count, at in counts:
        if type(count) is int and count > 0:  # other types are kube's and manifests' to refuse
            yield count, at


def within_limits(
    objects: Iterable[tuple[dict[str, Any], Origin]], limits: Limits, *, workloads: bool = False
) -> Iterator[tuple[dict[str, Any], Origin]]:
    """Objects, with the pods that Gangs and Volcano Jobs (and, for ``--gang``, any workload:
    ``workloads``) expand into counted against ``max_objects`` before any is made."""
    total = 0
    for obj, origin in objects:
        total += 1
        if total > limits.max_objects:  # objects after pods that workloads expand into
            raise InputError(
                f"more than {limits.max_objects} Kubernetes objects in the input, counting "
                "the pods of workloads (raise the limit with --max-objects)",
                locate(origin),
            )
        for count, at in _replicas(obj, workloads):
            total += count
            if total > limits.max_objects:
                shown = count if count < 10**15 else f"{count:.3e}"
                raise InputError(
                    f"{_dotted(at)}: {shown} pods would make more than {limits.max_objects} "
                    "objects in the input (raise the limit with --max-objects)",
                    locate(origin, at),
                )
        yield obj, origin


def _deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels (without recursing itself)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            items: Iterable[Any] = item.values()
        elif type(item) is list:
            items = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in items)
    return False


def check_snapshot(snapshot: Snapshot, limits: Limits) -> None:
    """Names of objects made from workloads (Gang, Volcano Job pods), bounded amounts, and
    bounded nesting of what is written back out (``-o status`` PodGroups, pods to create)."""
    for kind, written in (
        ("PodGroup", ((g, g.raw) for g in snapshot.pod_groups)),
        ("Pod", ((p, p.manifest) for p in snapshot.pods if p.manifest is not None)),
    ):
        for item, raw in written:
            if raw is not None and _deeper(raw, limits.max_depth):
                raise InputError(
                    f"{kind} {item.key} is nested more than {limits.max_depth} levels deep",
                    locate(item.origin),
                )
    named: tuple[tuple[str, Sequence[Node | Pod | PodGroup]], ...] = (
        ("Node", snapshot.nodes), ("Pod", snapshot.pods), ("PodGroup", snapshot.pod_groups)
    )
    for kind, items in named:
        for named_object in items:
            meta = {"name": named_object.name}
            if not isinstance(named_object, Node):
                meta["namespace"] = named_object.namespace
            _check_name(kind, meta, named_object.origin)
    for group in snapshot.pod_groups:  # int32 in every PodGroup API; the solver's coefficients
        counts: list[tuple[tuple[str | int, ...], int]] = [(("spec", "minMember"), group.min_member)]
        tasks = group.min_task_member.items()
        counts += [(("spec", "minTaskMember", task), n) for task, n in tasks]
        for path, count in counts:
            if count > _INT32:
                message = f"{_dotted(path)}: {count} is more than {_INT32}"
                raise InputError(message, locate(group.origin, path))
    for pod in snapshot.pods:
        total = kueue.total_count(pod.annotations)
        if total is not None and total > _INT32:
            path = ("metadata", "annotations", kueue.TOTAL_COUNT)
            message = f"{_dotted(path)}: {pod.annotations[kueue.TOTAL_COUNT][:20]} is more than {_INT32}"
            raise InputError(message, locate(pod.origin, path))
    totals: dict[tuple[str, str], int] = {}
    asked = {"pods"}  # resources some pod or PodGroup asks for: the only ones nodes are checked for

    def add(name: str, amount: int, what: str, origin: Origin, path: tuple[str | int, ...]) -> None:
        key = (what, name)
        totals[key] = totals.get(key, 0) + amount
        asked.add(name)
        if amount > MAX_TOTAL_AMOUNT or totals[key] > MAX_TOTAL_AMOUNT:
            # Shown from the object's own root: past the List items (a List in a List too) it
            # sits in, so a pod made from a workload's template is shown where the template is.
            shown = origin.path
            while len(shown) > 1 and shown[0] == "items" and isinstance(shown[1], int):
                shown = shown[2:]
            raise InputError(
                f"{_dotted(shown + path)}: {name} quantities this large cannot be planned: the {what} "
                f"add up to more than 2^60 {'millicores' if name == 'cpu' else 'units'}",
                locate(origin, path),
            )

    for pod in snapshot.pods:
        lists = (("containers", pod.containers), ("initContainers", pod.init_containers))
        for field, containers in lists:
            for index, container in enumerate(containers):
                for name, amount in container.requests.items():
                    path = ("spec", field, index, "resources", "requests", name)
                    add(name, amount, "pods' requests", pod.origin, path)
        for name, amount in pod.overhead.items():
            add(name, amount, "pods' requests", pod.origin, ("spec", "overhead", name))
        for name, amount in pod.pod_level_requests.items():  # its requests, or its limits where none
            add(name, amount, "pods' requests", pod.origin, ("spec", "resources"))
    for group in snapshot.pod_groups:
        for name, amount in group.min_resources.items():
            path = ("spec", "minResources", name)
            add(name, amount, f"minResources of {group.key}", group.origin, path)
    for node in snapshot.nodes:
        for name, amount in node.allocatable.items():
            if name in asked:
                path = ("status", "allocatable", name)
                add(name, amount, "nodes' allocatable", node.origin, path)


def files_read(paths: Sequence[str]) -> set[str]:
    """The real paths of the files ``paths`` name, folders walked as when reading them (stdin
    and folders with nothing to read left out): what an output must not replace."""
    found: set[str] = set()
    for path in paths:
        try:
            found |= {os.path.realpath(file) for _, file in _input_files([path]) if file is not None}
        except InputError:
            continue
    return found


def folder_files(path: str) -> list[str]:
    """The files a folder is read as, in the order read and by the names errors give them:
    under the folder as given, a link by its own name, not its target's."""
    try:
        return [name for name, _ in _input_files([path])]
    except InputError:
        return []


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
            size = os.fstat(stream.fileno()).st_size
            if size > limits.max_file_bytes:
                raise _too_big(name, limits)
            data = _within(name, read_bounded(stream, limits.max_file_bytes, size), limits)
    except FileNotFoundError:
        raise InputError("no such file or directory", Position(name)) from None
    except PermissionError:
        raise InputError("permission denied", Position(name)) from None
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise InputError(f"cannot read: {reason}", Position(name)) from None
    return _decode(name, data)


def read_bounded(stream: Any, limit: int, size_hint: int = 0) -> bytes:
    """At most ``limit + 1`` bytes of a binary stream (one more tells that it is too big).

    Never ``stream.read(limit + 1)``: that allocates the whole limit up front (2 GiB by
    default), which fails under a memory limit however small the file is.
    """
    chunks: list[bytes] = []
    total = 0
    want = size_hint + 1 if size_hint else 1 << 20
    while total <= limit:
        chunk = stream.read(min(want, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = max(1 << 20, min(total, 64 << 20))  # a file that grew, or a pipe: chunks
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_big(name: str, limits: Limits) -> InputError:
    return InputError(
        f"file is larger than the limit of {limits.max_file_bytes} bytes "
        "(raise it with --max-file-size)",
        Position(name),
    )


def _within(name: str, data: bytes, limits: Limits) -> bytes:
    if len(data) > limits.max_file_bytes:
        raise _too_big(name, limits)
    return data


_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16's: FF FE starts both
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def _decode(name: str, data: bytes) -> str:
    # YAML streams may be UTF-16 or UTF-32 with a byte-order mark: Windows PowerShell's `>`
    # writes `kubectl get -o yaml` that way.
    encoding = next((encoding for bom, encoding in _WIDE_BOMS if data.startswith(bom)), None)
    if encoding is not None:
        try:
            return data.decode(encoding).removeprefix("\ufeff")
        except UnicodeDecodeError:
            raise InputError(f"not a text file (it starts as {encoding.upper()} but is not)", Position(name)) from None
    if data.startswith(b"\x1f\x8b"):
        raise InputError("not a text file (it is gzip-compressed: zcat it into gangplan's stdin, -)", Position(name))
    if b"\0" in data:
        # Text such as a dump's in UTF-16: every other byte NUL, the bytes between not.
        head = data[:64]
        wide = len(head) >= 2 and any(not any(head[at::2]) and all(head[1 - at :: 2]) for at in (0, 1))
        problem = "it looks like UTF-16 without a byte-order mark; save it as UTF-8" if wide else "it contains NUL bytes"
        raise InputError(f"not a text file ({problem})", Position(name))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not a text file (it is not UTF-8)", Position(name)) from None
    return text.removeprefix("\ufeff")


# An escape whose backslash is not escaped itself: "\\ud800" is a backslash and the text ud800.
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*(\\(?:u|U0000)([dD][89a-fA-F][0-9a-fA-F]{2}))")
# What such an escape starts with, escaped backslash or not: unlike the pattern above it opens
# with a literal, which re finds 100 times faster: the pattern above took half of M's load.
_SURROGATE_HINT = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")


def _documents(name: str, text: str, limits: Limits) -> Iterator[Any]:
    """The documents of one file, refusing a string that holds half a UTF-16 surrogate pair
    (JSON's and YAML's \\u escapes can write one; no output could carry it)."""
    escaped = _SURROGATE_HINT.search(text) is not None
    for document in _parsed(name, text, limits):
        if escaped and _holds_surrogate(document):
            raise InputError(
                "a \\u escape writes half of a UTF-16 surrogate pair, which is not a character",
                _lone_surrogate(name, text),
            )
        yield document


def _holds_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is str:
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def _lone_surrogate(name: str, text: str) -> Position:
    """Where the first escape that is not half of a high-then-low pair is written."""
    matches = list(_SURROGATE_ESCAPE.finditer(text))
    index = 0
    while index < len(matches):
        match = matches[index]
        high = match.group(2)[1].lower() in "89ab"
        after = matches[index + 1] if index + 1 < len(matches) else None
        if high and after is not None and after.start(1) == match.end() and after.group(2)[1].lower() in "cdef":
            index += 2
            continue
        break
    else:
        match = matches[0]
    start = match.start(1)
    return Position(name, text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start))


def _parsed(name: str, text: str, limits: Limits) -> Iterator[Any]:
    """The documents of one file: JSON when it looks like JSON, else YAML, safely."""
    _read_spans.pop(name, None)
    start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    json_error: ValueError | None = None
    if text[start : start + 1] in ("{", "["):
        try:
            yield json.loads(text)
            return
        except json.JSONDecodeError as exc:
            json_error = exc  # maybe a YAML flow mapping; let YAML decide
            if exc.msg == "Extra data":
                stream = _json_stream(text, start)
                if not isinstance(stream, json.JSONDecodeError):
                    yield from stream  # kubectl prints one object per get: a loop's output is a stream
                    return
                json_error = stream
        except ValueError as exc:
            json_error = exc
        except RecursionError:
            raise InputError(_TOO_DEEP, Position(name)) from None
    try:
        if _ANCHOR.search(text) and _ALIAS.search(text):
            _check_aliases(name, text, limits)
        spans: dict[int, array] = {}
        _read_spans[name] = (len(text), spans)
        yield from _load_all(text, spans)
    except yaml.YAMLError as exc:
        if isinstance(json_error, json.JSONDecodeError):
            raise InputError(
                f"not valid JSON: {json_error.msg}",
                Position(name, json_error.lineno, json_error.colno),
            ) from None
        raise _yaml_error(name, text, exc) from None
    except RecursionError:
        raise InputError(_TOO_DEEP, Position(name)) from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise InputError(f"cannot read: {exc}", Position(name)) from None


def _json_stream(text: str, start: int) -> list[Any] | json.JSONDecodeError:
    """Concatenated JSON values (JSON Lines too), as kubectl reads them; or the first value's
    error, where it is."""
    values = []
    for span in _json_spans(text, start):
        if isinstance(span, json.JSONDecodeError):
            return span
        values.append(span[2])
    return values


def _json_spans(text: str, start: int) -> Iterator[tuple[int, int, Any] | json.JSONDecodeError]:
    """(start, end, value) of each JSON value in a stream, then its error if one is bad."""
    decoder, at = json.JSONDecoder(), start
    while at < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            yield exc
            return
        yield at, end, value
        at = _LEADING_SPACE.match(text, end).end()  # type: ignore[union-attr]


def _yaml_error(name: str, text: str, exc: yaml.YAMLError) -> InputError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        position = Position(name) if mark is None else Position(name, mark.line + 1, mark.column + 1)
        if _LIBYAML_NESTING in problem:  # the same refusal as RecursionError's, said the same way
            return InputError(_TOO_DEEP, position)
        if exc.problem and exc.context and exc.context_mark and "block" not in exc.context:
            problem += f" ({exc.context} at line {exc.context_mark.line + 1})"
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
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, scalar characters) it expands to
    open_collections: list[tuple[str | None, int, int]] = []
    nodes = characters = expanded = expanded_characters = aliases = 0
    for event in yaml.parse(text, Loader=_Loader):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            nodes += 1
            characters += len(event.value)
            if event.anchor is not None:
                sizes[event.anchor] = (1, len(event.value))
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            nodes += 1
            open_collections.append((event.anchor, nodes, characters))
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            anchor, first, first_characters = open_collections.pop()
            if anchor is not None:
                sizes[anchor] = (nodes - first + 1, characters - first_characters)
        elif kind is yaml.AliasEvent:
            aliases += 1
            size, text_size = sizes.get(event.anchor, (1, 0))
            nodes += size
            characters += text_size
            expanded += size
            expanded_characters += text_size
            if aliases > limits.max_aliases:
                problem = f"more than {limits.max_aliases} YAML aliases"
            elif expanded > limits.max_expanded_nodes:
                problem = f"YAML aliases expand to more than {limits.max_expanded_nodes} nodes"
            elif expanded_characters > limits.max_expanded_bytes:
                problem = f"YAML aliases expand to more than {limits.max_expanded_bytes} characters of text"
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
        if kind != "List" and item.get("kind") is None:
            # The API server's typed lists (kubectl get --raw /api/v1/nodes) leave out their
            # items' kind and apiVersion: the list's own name them, as kubectl decodes them.
            item["kind"] = kind.removesuffix("List")
            if item.get("apiVersion") is None and document.get("apiVersion") is not None:
                item["apiVersion"] = document["apiVersion"]
        yield from _objects(item, Origin(origin.file, origin.document, (*origin.path, "items", index)))  # kubectl flattens a List in a List


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


def _text(file: str) -> str | None:
    text = _in_memory.get(file)
    if text is None:
        try:
            with open(file, "rb") as stream:
                text = _decode(file, stream.read())
        except (OSError, InputError):
            return None
    return text


@functools.lru_cache(maxsize=2)
def _composed_version(file: str, version: tuple[int, int, int]) -> list[Any] | None:
    text = _text(file)
    if text is None:
        return None
    try:
        return list(yaml.compose_all(text, Loader=_Loader))
    except (yaml.YAMLError, RecursionError):
        pass
    start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    if text[start : start + 1] not in ("{", "["):
        return None
    roots = []  # a JSON stream: each value composed alone, padded to where it stands in the file
    for span in _json_spans(text, start):
        if isinstance(span, json.JSONDecodeError):
            return None
        first, end, _ = span
        line = text.count("\n", 0, first)
        column = first - (text.rfind("\n", 0, first) + 1)
        try:
            roots.append(yaml.compose("\n" * line + " " * column + text[first:end], Loader=_Loader))
        except (yaml.YAMLError, RecursionError):
            return None
    return roots


def locate(origin: Origin, field_path: tuple[str | int, ...] = ()) -> Position:
    """Where ``field_path`` of the object at ``origin`` is written, for an error message.

    Falls back to the nearest enclosing node that exists, and to the bare file name when the
    file cannot be read or composed again. The first few places asked for in a file are found
    by reading its parser events (``_walked``): composing a 56 MB dump into nodes took over a
    minute and 2 GB for one error's line and column. After those the file is composed once and
    kept. Many places known at once are cheaper with ``locate_all``.
    """
    steps = origin.path + field_path
    position = _in_items(origin.file, [(origin.document, steps)])[0]
    if position is not None:
        return position
    marks = None
    if _walks.get(origin.file, 0) < _WALKS_PER_FILE:
        _walks[origin.file] = _walks.get(origin.file, 0) + 1
        marks = _walked(origin.file, {(origin.document, steps)})
    return _placed(origin, steps, marks)


def locate_all(places: Sequence[tuple[Origin, tuple[str | int, ...]]]) -> list[Position]:
    """``locate`` for many places at once (``check`` places every group): those in List items
    from their items' text, the rest in one walk of each file's parser events, where composing
    L's dump took 33 s."""
    by_file: dict[str, list[int]] = {}
    for index, (origin, _) in enumerate(places):
        by_file.setdefault(origin.file, []).append(index)
    found: list[Position | None] = [None] * len(places)
    for file, indices in by_file.items():
        wanted = [(places[index][0].document, places[index][0].path + places[index][1]) for index in indices]
        for index, position in zip(indices, _in_items(file, wanted)):
            found[index] = position
        rest = [(index, place) for index, place in zip(indices, wanted) if found[index] is None]
        if rest:
            marks = _walked(file, {place for _, place in rest})
            for index, (_, steps) in rest:
                found[index] = _placed(places[index][0], steps, marks)
    return found  # type: ignore[return-value]


def _in_items(file: str, places: Sequence[tuple[int, tuple[str | int, ...]]]) -> list[Position | None]:
    """Where each (document, steps) inside a List item is written, from that item's text
    alone: walking the events of a 152 MB dump to find its groups took 8 s. None for a place
    in no item whose text is known, or in one its events do not say (``_walk``)."""
    found: list[Position | None] = [None] * len(places)
    inside = [
        (index, document, item)
        for index, (document, steps) in enumerate(places)
        if len(steps) > 1 and steps[0] == "items" and type(item := steps[1]) is int and item >= 0
    ]
    spans, piece = _item_spans(file) if inside else ({}, None)
    by_item: dict[tuple[int, ...], list[int]] = {}
    for index, document, item in inside:
        known = spans.get(document)
        if known is not None and _ITEM * item < len(known):
            by_item.setdefault(tuple(known[_ITEM * item : _ITEM * (item + 1)]), []).append(index)
    for start, line, column, end in sorted(by_item):
        text = piece(start, end)  # type: ignore[misc]
        # A block node keeps its column, so its lines' indentation means what it did; in a flow
        # node (a JSON item, on a line of millions of characters maybe) the first line is moved.
        shift = column if text.startswith(("{", "[")) else 0
        wanted = by_item[(start, line, column, end)]
        marks = _walk(" " * (column - shift) + text, {(0, places[index][1][2:]) for index in wanted})
        if marks is None:
            continue
        for index in wanted:
            mark = _nearest(marks, 0, places[index][1][2:])
            found[index] = Position(file, line + mark.line + 1, mark.column + 1 + (0 if mark.line else shift))
    return found


# By file: its length in characters, and by document where each of its List's items is
# written (``_ITEM``), as the event reader found them.
_read_spans: dict[str, tuple[int, dict[int, array]]] = {}


def _item_spans(file: str) -> tuple[dict[int, array], Callable[[int, int], str] | None]:
    """Where the items of each document's List are written, and how to read the text between
    two offsets: as the YAML event reader found them while loading, or for a file that is one
    JSON object, found now by JSON's decoder. A file with as many bytes as it had characters
    (ASCII, no byte-order mark: the offsets are its bytes') is not read again, only each item:
    reading 152 MB again took 230 MiB more than planning did."""
    read = _read_spans.get(file)
    if read is not None and file not in _in_memory:
        try:
            one_byte_each = os.stat(file).st_size == read[0]
        except OSError:
            one_byte_each = False
        if one_byte_each:
            return read[1], functools.partial(_file_piece, file)
    text = _text(file)
    if text is None:
        return {}, None
    if read is None or read[0] != len(text):
        items = _json_items(text)
        read = _read_spans[file] = (len(text), {} if items is None else {0: items})
    whole = text
    return read[1], lambda start, end: whole[start:end]


def _file_piece(file: str, start: int, end: int) -> str:
    with open(file, "rb") as stream:
        stream.seek(start)
        return stream.read(end - start).decode("ascii", errors="replace")


def _json_items(text: str) -> array | None:
    """Where each item of the ``items`` array of a text that is one JSON object is written
    (``_ITEM``; the last ``items``, as ``json.loads`` keeps it); None for any other text."""
    decoder = json.JSONDecoder()
    at = _past_space(text, 0)
    if not text.startswith("{", at):
        return None
    spans = None
    try:
        at = _past_space(text, at + 1)
        while not text.startswith("}", at):
            key, at = decoder.raw_decode(text, at)
            at = _past_space(text, at)
            if type(key) is not str or not text.startswith(":", at):
                return None
            at = _past_space(text, at + 1)
            if key == "items" and text.startswith("[", at):
                spans, at = _json_array(decoder, text, _past_space(text, at + 1))
            else:
                spans = None if key == "items" else spans
                at = decoder.raw_decode(text, at)[1]
            at = _past_space(text, at)
            if text.startswith(",", at):
                at = _past_space(text, at + 1)
            elif not text.startswith("}", at):
                return None
    except json.JSONDecodeError:
        return None
    return spans if _past_space(text, at + 1) == len(text) else None


def _json_array(decoder: json.JSONDecoder, text: str, at: int) -> tuple[array, int]:
    """Where each value of the array whose first value (or closing bracket) is at ``at`` is
    written (``_ITEM``), and where the array ends."""
    spans = array("q")
    line = line_start = counted = 0
    while not text.startswith("]", at):
        end = decoder.raw_decode(text, at)[1]
        line += text.count("\n", counted, at)
        line_start = max(line_start, text.rfind("\n", counted, at) + 1)
        counted = at
        spans.extend((at, line, at - line_start, end))
        at = _past_space(text, end)
        if text.startswith(",", at):
            at = _past_space(text, at + 1)
        elif not text.startswith("]", at):
            raise json.JSONDecodeError("expected , or ]", text, at)
    return spans, at + 1


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _past_space(text: str, at: int) -> int:
    found = _JSON_SPACE.match(text, at)
    assert found is not None  # the pattern matches the empty string too
    return found.end()


def _placed(origin: Origin, steps: tuple[str | int, ...], marks: _Marks | None) -> Position:
    """From a walk's marks, or from the composed file where there are none."""
    if marks is None:
        return _composed_position(origin, steps)
    return _position(origin.file, _nearest(marks, origin.document, steps))


def _position(file: str, mark: yaml.Mark) -> Position:
    return Position(file, mark.line + 1, mark.column + 1)


def _composed_position(origin: Origin, steps: tuple[str | int, ...]) -> Position:
    roots = _composed(origin.file)
    if roots is None or origin.document >= len(roots):
        return Position(origin.file)
    root = roots[origin.document]
    if root is None:
        return Position(origin.file)
    node = root
    try:
        for step in steps:
            found = _child(node, step)
            if found is None:
                break
            node = found
    except RecursionError:  # a merge key that includes its own mapping
        pass
    return _position(origin.file, node.start_mark)


_WALKS_PER_FILE = 3
_walks: dict[str, int] = {}

_Marks = dict[tuple[str | int, ...], yaml.Mark]  # (document, *steps) -> where that node starts


def _walked(file: str, wanted: set[tuple[int, tuple[str | int, ...]]]) -> _Marks | None:
    text = _text(file)
    return None if text is None else _walk(text, wanted)


def _walk(text: str, wanted: set[tuple[int, tuple[str | int, ...]]]) -> _Marks | None:
    """Where each node on the way to each wanted (document, steps) starts, from the text's
    parser events; None where only the composer can tell: a text that is not one YAML stream
    (a JSON stream), an alias or merge key on the way, a key given twice in a mapping on the
    way (JSON keeps the last), a document that is not there."""
    tries: dict[int, dict[Any, Any]] = {}
    for document, steps in wanted:
        trie = tries.setdefault(document, {})
        for step in steps:
            trie = trie.setdefault(step, {})
    marks: _Marks = {}
    document = -1
    events = yaml.parse(text, Loader=_Loader)
    try:
        # Read to the end: a file the composer cannot read is left to it.
        for event in events:
            if type(event) is yaml.DocumentStartEvent:
                document += 1
                asked = tries.get(document)
                if asked is None:
                    _skip(next(events), events)
                else:
                    _visit(next(events), events, asked, (document,), marks)
    except (_Unusual, yaml.YAMLError, StopIteration):
        return None
    finally:
        events.close()
    return marks if max(tries) <= document else None


def _visit(event: Any, events: Iterator[Any], trie: dict, at: tuple[str | int, ...], marks: _Marks) -> None:
    """Reads the node ``event`` starts, marking it and the nodes under it that ``trie`` asks
    for: the composer's ``_child`` step by step, an empty value standing for its key."""
    kind = type(event)
    if kind is yaml.AliasEvent:
        raise _Unusual
    marks[at] = event.start_mark
    if kind is yaml.SequenceStartEvent and trie:
        index = 0
        while type(item := next(events)) is not yaml.SequenceEndEvent:
            below = trie.get(index)
            if below is None:
                _skip(item, events)
            else:
                _visit(item, events, below, (*at, index), marks)
            index += 1
    elif kind is yaml.MappingStartEvent and trie:
        seen = set()
        while type(key := next(events)) is not yaml.MappingEndEvent:
            if type(key) is yaml.AliasEvent:
                raise _Unusual  # a key the composer may read as the scalar it stands for
            if type(key) is not yaml.ScalarEvent:
                _skip(key, events)
            elif key.value == "<<" and key.implicit[0]:
                raise _Unusual  # a merge key
            elif (below := trie.get(key.value)) is not None:
                if key.value in seen:
                    raise _Unusual  # the composer takes the last
                seen.add(key.value)
                value = next(events)
                if type(value) is yaml.ScalarEvent and value.value == "" and not value.style:
                    marks[(*at, key.value)] = key.start_mark
                else:
                    _visit(value, events, below, (*at, key.value), marks)
                continue
            _skip(next(events), events)
    else:
        _skip(event, events)


def _nearest(marks: _Marks, document: int, steps: tuple[str | int, ...]) -> yaml.Mark:
    """The deepest node on the way that is there: the whole way, or where it stops."""
    for end in range(len(steps), 0, -1):
        mark = marks.get((document, *steps[:end]))
        if mark is not None:
            return mark
    return marks[(document,)]


def _skip(event: Any, events: Iterator[Any]) -> bool:
    """Reads past the node ``event`` starts; True when ``event`` ends a collection instead."""
    kind = type(event)
    if kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
        return True
    if kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
        depth = 1
        while depth:
            kind = type(next(events))
            if kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
                depth += 1
            elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
                depth -= 1
    return False


def _key_identity(key: _nodes.Node) -> Any:
    """Two scalar keys of one tag and text are one key; any other key is itself."""
    return (key.tag, key.value) if isinstance(key, _nodes.ScalarNode) else id(key)


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

"""Fuzzing the loader and the CLI with malformed input: never a traceback, never exit 3.

Every case is one CLI run (typer's CliRunner, in process) on a mutated input: random bytes,
truncated or corrupted YAML and JSON, a wrong type or an absurd value at a field the loader
reads (huge, negative and zero quantities, unicode and injected names), deep nesting, YAML
tags, anchors and merge keys, broken plan files for ``verify`` and ``diff``, and mutated
workload manifests for ``--gang`` (beside a snapshot that loads, half the time). Each must end
with exit 0, 1 (only where the command means "found something": check, verify, diff) or 2,
and for 2 with exactly one ``error:`` line, the last one on stderr. Exit 3 would mean
gangplan failed on input it should have refused; a traceback is never acceptable.

Cases are drawn from one seeded generator, so a failure names the case number that
reproduces it. A short run is part of the normal suite; the long one is the same test with
more cases (about 30 a second on a 2-core machine):

    GANGPLAN_FUZZ_CASES=10000 python -m pytest -n 0 -m fuzz -s tests/test_fuzz.py

``GANGPLAN_FUZZ_SEED`` picks another sequence of cases; ``GANGPLAN_FUZZ_CASE=N`` reruns
only case N and prints its input and output.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from typer.testing import CliRunner

from gangplan.cli import app
from gangplan.generate import generate

ROOT = Path(__file__).resolve().parent
CASES = int(os.environ.get("GANGPLAN_FUZZ_CASES", "300"))
SEED = int(os.environ.get("GANGPLAN_FUZZ_SEED", "0"))
ONLY = os.environ.get("GANGPLAN_FUZZ_CASE")

runner = CliRunner()

# ---------------------------------------------------------------- the seed corpus

# Every kind and dialect the loader reads, with every field it reads at least once.
SEED_SNAPSHOT = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels: {pool: gpu, example.com/rack: r1, example.com/zone: z1, kubernetes.io/hostname: gpu-1}
spec:
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
status:
  allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: cpu-1
  labels: {pool: cpu, example.com/rack: r2, example.com/zone: z1, kubernetes.io/hostname: cpu-1}
spec: {unschedulable: false}
status:
  capacity: {cpu: 8, memory: 32Gi}
---
apiVersion: v1
kind: Pod
metadata:
  name: running-0
  namespace: ml
  uid: 6b1c2f9e-0000-4000-8000-000000000001
  ownerReferences: [{kind: DaemonSet, name: agent, controller: true}]
spec:
  nodeName: cpu-1
  priority: 10
  hostNetwork: true
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}
  containers: [{name: c, ports: [{containerPort: 9100}], resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "1"}}}]
status: {phase: Running}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: false
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: ml, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  minMember: 2
  scheduleTimeoutSeconds: 60
  minResources: {cpu: "2"}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: train-0
    namespace: ml
    uid: 6b1c2f9e-0000-4000-8000-000000000002
    labels: {scheduling.x-k8s.io/pod-group: train}
  spec:
    priorityClassName: high
    nodeSelector: {pool: gpu}
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    overhead: {cpu: 100m}
    initContainers: [{name: init, restartPolicy: Always, resources: {requests: {cpu: "1"}}}]
    containers: [{name: c, resources: {requests: {cpu: "1", nvidia.com/gpu: "2"}}}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: train-1
    namespace: ml
    labels: {scheduling.x-k8s.io/pod-group: train}
  spec:
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchExpressions: [{key: scheduling.x-k8s.io/pod-group, operator: In, values: [train]}]}
          topologyKey: kubernetes.io/hostname
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: pool, operator: In, values: [gpu]}]
            matchFields: [{key: metadata.name, operator: NotIn, values: [cpu-1]}]
    tolerations: [{key: nvidia.com/gpu, operator: Equal, value: present}]
    containers: [{name: c, ports: [{containerPort: 29500, hostPort: 29500, hostIP: 10.0.0.1, protocol: UDP}], resources: {requests: {cpu: "1", nvidia.com/gpu: "2"}}}]
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: sweep, namespace: research}
spec:
  minMember: 1
  minTaskMember: {worker: 1}
  queue: research
  priorityClassName: high
  subGroup: ""
---
apiVersion: v1
kind: Pod
metadata:
  name: sweep-worker-0
  namespace: research
  annotations: {scheduling.k8s.io/group-name: sweep, volcano.sh/task-spec: worker}
spec:
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
---
apiVersion: scheduling.godel.kubewharf.io/v1alpha1
kind: PodGroup
metadata: {name: ring, namespace: llm}
spec:
  minMember: 2
  priorityClassName: high
  affinity:
    podGroupAffinity:
      required: [{topologyKey: example.com/zone}]
      preferred: [{topologyKey: example.com/rack}]
      sortRules: [{resource: GPU, dimension: Available, order: Descending}]
      nodeSelector:
        nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: Exists}]}]
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: ring-0, namespace: llm, annotations: {godel.bytedance.com/pod-group-name: ring}}
  spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: ring-1, namespace: llm, annotations: {godel.bytedance.com/pod-group-name: ring}}
  spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
- apiVersion: v1
  kind: Pod
  metadata:
    name: sim-0
    namespace: team-a
    labels: {kueue.x-k8s.io/pod-group-name: sim}
    annotations:
      kueue.x-k8s.io/pod-group-total-count: "2"
      kueue.x-k8s.io/podset-preferred-topology: example.com/rack
  spec: {containers: [{name: c, resources: {requests: {cpu: 250m}}}]}
- apiVersion: v1
  kind: Pod
  metadata:
    name: sim-1
    namespace: team-a
    labels: {kueue.x-k8s.io/pod-group-name: sim}
    annotations: {kueue.x-k8s.io/pod-group-total-count: "2"}
  spec: {containers: [{name: c, resources: {requests: {cpu: 250m}}}]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: net}
spec:
  levels: [{nodeLabel: example.com/zone}, {nodeLabel: example.com/rack}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
data: {a: b}
"""

SEED_WORKLOADS = """\
apiVersion: extensions/v1beta1
kind: Gang
metadata: {name: mygang, namespace: apps}
spec:
  replicationControllers:
  - name: myapp
    replicas: 2
    template:
      metadata: {labels: {name: myapp}}
      spec:
        containers: [{name: a, resources: {requests: {cpu: 100m}}}]
  pods:
  - name: mydb
    labels: {name: mydb}
    containers: [{name: db, resources: {requests: {cpu: 200m}}}]
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tf, namespace: ml}
spec:
  minAvailable: 2
  queue: research
  tasks:
  - name: ps
    replicas: 1
    template:
      spec:
        containers: [{name: ps, resources: {requests: {cpu: "1"}}}]
  - name: worker
    replicas: 2
    minAvailable: 1
    template:
      spec:
        containers: [{name: w, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8"}}
"""


# A --gang's workload manifests (drawn at the end of a case, so earlier cases keep their inputs).
SEED_GANG = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: work}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: high
      nodeSelector: {pool: gpu}
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      initContainers: [{name: proxy, restartPolicy: Always, ports: [{containerPort: 15001, hostPort: 15001}]}]
      containers:
      - name: c
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: work}
spec:
  parallelism: 2
  completions: 3
  completionMode: Indexed
  template:
    spec:
      initContainers: [{name: init, resources: {requests: {cpu: "2"}}}]
      containers: [{name: c, resources: {requests: {cpu: 500m}, limits: {memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: work}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: c, resources: {requests: {cpu: 250m}}}]
  volumeClaimTemplates: [{metadata: {name: data}}]
---
apiVersion: v1
kind: Pod
metadata: {name: launcher, namespace: work}
spec:
  containers: [{name: c, resources: {requests: {cpu: 100m}}}]
"""
SEED_GANG_DOCS = [d for d in yaml.safe_load_all(SEED_GANG) if isinstance(d, dict)]


def _corpus() -> list[str]:
    texts = [SEED_SNAPSHOT, SEED_WORKLOADS]
    texts += [p.read_text() for p in sorted((ROOT / "scenarios").glob("*.yaml"))]
    texts.append(json.dumps(generate(shape=(1, 1, 2, 2), groups=4, seed=3, max_gang=4), indent=1))
    return texts


CORPUS = _corpus()
SEED_DOCS = [[d for d in yaml.safe_load_all(text) if isinstance(d, dict)] for text in CORPUS]

# ---------------------------------------------------------------- values that break things

HUGE = ["1e30", "99999999999999999999", "9Ei", "999999999999Ei", "1e400", "1" + "0" * 60, "4611686018427387904"]
QUANTITIES = [
    "-1", "-0", "0", "0m", "-500m", "1e-9", "0.0001m", "1n", "1.5.0", "1Qi", "Ki", "", " 1", "1 ",
    "+3", ".5", "5.", "1E3", "0x10", "1_000", "∞", "1e+2", "1.0000000000000000000001", *HUGE,
]
NAMES = [
    "", "-lead", "trail-", "UPPER", "dots..dots", "a" * 254, "ünïcødé", "名前", "a b", "a\nb",
    "a\tb", "../../etc/passwd", "a/b", "x\u202eevil", "\x1b[31mred", "a:b", "'quoted'", '"q"',
    "*", "&", "null", "true", "0", "a" * 64, "emoji-🙂", "a\x00b", "\ud7ff",
]
SCALARS = [
    None, True, False, 0, -1, 1, 2**31, 2**63, -(2**63), 10**30, -(10**30), 1.5, -0.0, 1e308,
    float("inf"), float("nan"), "", "x", "0", "-1", "true", "null", "~", "[]", "{}",
]
COLLECTIONS: list[Any] = [[], {}, [None], [1, "a", None], {"a": 1}, {"": None}, [[[[]]]], {"k": {"k": {"k": []}}}]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "in", "Near", ""]
KINDS = ["Node", "Pod", "PodGroup", "PriorityClass", "Topology", "List", "PodList", "Gang", "Job", "Binding", ""]
APIS = [
    "v1", "v2", "scheduling.x-k8s.io/v1alpha1", "scheduling.x-k8s.io/v1", "scheduling.sigs.k8s.io/v1alpha1",
    "scheduling.volcano.sh/v1beta1", "scheduling.godel.kubewharf.io/v1alpha1", "kueue.x-k8s.io/v1beta1",
    "scheduling.k8s.io/v1", "batch.volcano.sh/v1alpha1", "extensions/v1beta1", "",
]

# Fields the loader reads, per kind, that a seed object may lack: set them too.
FIELDS: dict[str, list[tuple[str | int, ...]]] = {
    "Node": [
        ("metadata", "name"), ("metadata", "labels", "example.com/rack"), ("spec", "taints"),
        ("spec", "unschedulable"), ("status", "allocatable", "cpu"), ("status", "allocatable", "pods"),
        ("status", "capacity", "nvidia.com/gpu"), ("status", "conditions"),
    ],
    "Pod": [
        ("metadata", "name"), ("metadata", "namespace"), ("metadata", "uid"), ("metadata", "ownerReferences"),
        ("metadata", "labels", "scheduling.x-k8s.io/pod-group"), ("metadata", "annotations", "scheduling.k8s.io/group-name"),
        ("metadata", "labels", "kueue.x-k8s.io/pod-group-name"),
        ("metadata", "annotations", "kueue.x-k8s.io/pod-group-total-count"),
        ("metadata", "annotations", "kueue.x-k8s.io/podset-required-topology"),
        ("metadata", "annotations", "kueue.x-k8s.io/podset-unconstrained-topology"),
        ("metadata", "creationTimestamp"), ("spec", "nodeName"), ("spec", "priority"), ("spec", "priorityClassName"),
        ("spec", "overhead", "cpu"), ("spec", "nodeSelector"), ("spec", "tolerations"), ("spec", "initContainers"),
        ("spec", "containers"), ("spec", "affinity", "nodeAffinity"), ("status", "phase"),
        ("spec", "hostNetwork"), ("spec", "containers", 0, "ports"), ("spec", "containers", 0, "ports", 0, "hostIP"),
        ("spec", "affinity", "podAntiAffinity"),
        ("spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", 0, "topologyKey"),
    ],
    "PodGroup": [
        ("metadata", "name"), ("metadata", "namespace"), ("spec", "minMember"), ("spec", "minResources", "cpu"),
        ("spec", "minTaskMember", "worker"), ("spec", "queue"), ("spec", "subGroup"), ("spec", "priorityClassName"),
        ("spec", "scheduleTimeoutSeconds"), ("spec", "affinity", "podGroupAffinity", "required"),
        ("spec", "affinity", "podGroupAffinity", "preferred"), ("spec", "affinity", "podGroupAffinity", "sortRules"),
        ("spec", "affinity", "podGroupAffinity", "nodeSelector"),
    ],
    "PriorityClass": [("value",), ("globalDefault",), ("metadata", "name")],
    "Topology": [("spec", "levels"), ("spec", "levels", 0, "nodeLabel")],
    "Gang": [("spec", "pods"), ("spec", "replicationControllers"), ("spec", "replicationControllers", 0, "replicas")],
    "Job": [("spec", "tasks"), ("spec", "minAvailable"), ("spec", "tasks", 0, "replicas"), ("spec", "tasks", 0, "name")],
    **{
        kind: [
            ("spec", "replicas"), ("spec", "template", "spec", "containers", 0, "ports"),
            ("spec", "template", "spec", "containers", 0, "ports", 0, "hostPort"),
            ("spec", "template", "spec", "containers", 0, "resources", "requests", "cpu"),
            ("spec", "template", "metadata", "labels", "scheduling.x-k8s.io/pod-group"),
            ("spec", "template", "spec", "initContainers", 0, "restartPolicy"), ("spec", "volumeClaimTemplates"),
        ]
        for kind in ("Deployment", "StatefulSet", "ReplicaSet")
    },
}

YAML_SPECIALS = [
    "!!python/object/apply:os.system ['echo pwned']", "!!python/name:os.system", "!!binary aGVsbG8=",
    "!!set {a, b}", "!!omap [a: 1]", "!!timestamp 2001-12-14", "!!float .nan", "!!int 0x1F", "!foo bar",
    "*undefined", "&a", "<<: *a", "? complex key", "|\n  block", ">-\n  folded", "'unterminated", '"unterminated',
    "{a: 1", "[1, 2", "%YAML 1.1", "---", "...", "\t", "@reserved", "`reserved", "= ", "2001-12-14t21:59:43.10-05:00",
    "0o17", "1_000", "0b101", "+.inf", "-.inf", ".NaN", "~", "Null", "YES", "off",
]


def evil_value(rng: random.Random, path: tuple[Any, ...]) -> Any:
    last = str(path[-1]) if path else ""
    choice = rng.random()
    if last in ("cpu", "memory", "pods", "nvidia.com/gpu") or (len(path) > 1 and str(path[-2]) in ("requests", "limits", "allocatable", "capacity", "overhead", "minResources")):
        if choice < 0.6:
            return rng.choice(QUANTITIES)
    if last == "kueue.x-k8s.io/podset-unconstrained-topology" and choice < 0.5:
        return rng.choice(["true", "1", "T", "false", "yes", ""])
    if last in ("topologyKey", "nodeLabel") and choice < 0.3:
        return rng.choice(["kubernetes.io/hostname", "example.com/rack", "example.com/zone"])
    if last in ("name", "namespace", "nodeName", "key", "topologyKey", "nodeLabel", "priorityClassName") and choice < 0.6:
        return rng.choice(NAMES)
    if last == "operator" and choice < 0.6:
        return rng.choice(OPERATORS)
    if last == "kind" and choice < 0.6:
        return rng.choice(KINDS)
    if last == "apiVersion" and choice < 0.6:
        return rng.choice(APIS)
    if last in ("minMember", "value", "priority", "replicas", "minAvailable", "scheduleTimeoutSeconds") and choice < 0.6:
        return rng.choice([0, -1, -(2**31), 2**31, 2**63, 10**30, 10**100, "3", 3.0, True, None])
    if choice < 0.75:
        return rng.choice(SCALARS)
    if choice < 0.9:
        return copy.deepcopy(rng.choice(COLLECTIONS))
    return rng.choice(NAMES + QUANTITIES)


# ---------------------------------------------------------------- mutators


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if depth > 12:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, prefix + (index,), depth + 1)
    return found


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        if isinstance(obj, dict):
            if not isinstance(obj.get(step), (dict, list)):
                obj[step] = {} if not isinstance(step, int) else []
            obj = obj[step]
        elif isinstance(obj, list):
            if not obj:
                obj.append({})
            obj = obj[min(step, len(obj) - 1) if isinstance(step, int) else 0]
        else:
            return
    last = path[-1]
    if isinstance(obj, dict):
        obj[last] = value
    elif isinstance(obj, list):
        if isinstance(last, int) and last < len(obj):
            obj[last] = value
        else:
            obj.append(value)


def _delete(obj: Any, path: tuple[Any, ...]) -> None:
    for step in path[:-1]:
        obj = obj[step]
    if isinstance(obj, dict):
        obj.pop(path[-1], None)
    elif isinstance(obj, list) and isinstance(path[-1], int) and path[-1] < len(obj):
        del obj[path[-1]]


def _objects_in(docs: list[Any]) -> list[dict[str, Any]]:
    found = []
    for doc in docs:
        if isinstance(doc, dict):
            found.append(doc)
            if isinstance(doc.get("items"), list):
                found += [item for item in doc["items"] if isinstance(item, dict)]
    return found


def _dump(rng: random.Random, docs: list[Any]) -> str:
    style = rng.random()
    try:
        if style < 0.35:
            return "\n".join(json.dumps(d, indent=rng.choice([None, 1])) for d in docs[:1]) if len(docs) == 1 else json.dumps(
                {"apiVersion": "v1", "kind": "List", "items": docs}
            )
        return yaml.safe_dump_all(docs, default_flow_style=rng.random() < 0.3, allow_unicode=rng.random() < 0.5)
    except (ValueError, yaml.YAMLError, RecursionError):
        return yaml.dump_all([repr(d)[:2000] for d in docs])


def mutate_fields(rng: random.Random) -> str:
    """Wrong types and absurd values at the fields the loader reads, then dump as YAML or JSON."""
    return _mutated(rng, copy.deepcopy(rng.choice(SEED_DOCS)))


def _mutated(rng: random.Random, docs: list[Any]) -> str:
    objects = _objects_in(docs)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        obj = rng.choice(objects)
        action = rng.random()
        kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
        if action < 0.3 and kind in FIELDS:
            path = rng.choice(FIELDS[kind])
            _set(obj, path, evil_value(rng, path))
        elif action < 0.8:
            paths = _paths(obj)
            if paths:
                path = rng.choice(paths)
                _set(obj, path, evil_value(rng, path))
        elif action < 0.9:
            paths = _paths(obj)
            if paths:
                _delete(obj, rng.choice(paths))
        else:
            paths = [p for p in _paths(obj) if p]
            if paths:  # a field moved where another was expected
                a, b = rng.choice(paths), rng.choice(paths)
                try:
                    value = obj
                    for step in a:
                        value = value[step]
                    _set(obj, b, copy.deepcopy(value))
                except (KeyError, IndexError, TypeError):
                    pass
    if rng.random() < 0.1:
        docs.append(copy.deepcopy(rng.choice(docs)))  # duplicates
    return _dump(rng, docs)


def mutate_text(rng: random.Random) -> str:
    """Corrupt the text itself: truncate, splice, insert YAML syntax, or swap lines."""
    text = rng.choice(CORPUS)
    action = rng.random()
    if action < 0.3:
        return text[: rng.randrange(len(text) + 1)]
    chars = list(text)
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(chars) + 1)
        op = rng.random()
        if op < 0.4:
            chars[at:at] = list(rng.choice(YAML_SPECIALS + ["\n", " ", ":", "-", "{", "}", "[", "]", ",", "#", "\\", "\r"]))
        elif op < 0.7 and chars:
            del chars[at : at + rng.randint(1, 40)]
        else:
            chars[at:at] = list(rng.choice(NAMES + QUANTITIES))
    text = "".join(chars)
    if action > 0.85:
        lines = text.splitlines()
        rng.shuffle(lines)
        text = "\n".join(lines[: rng.randint(0, len(lines))])
    return text


def random_bytes(rng: random.Random) -> bytes:
    size = rng.choice([0, 1, 2, 16, 100, 1000, 5000])
    action = rng.random()
    if action < 0.4:
        return bytes(rng.getrandbits(8) for _ in range(size))
    if action < 0.7:  # valid UTF-8, any code points
        return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x2FFF), rng.randrange(0x1F300, 0x1F6FF), 10, 9])) for _ in range(size)).encode()
    seed = rng.choice(CORPUS).encode()
    data = bytearray(seed)
    for _ in range(rng.randint(1, 20)):
        data[rng.randrange(len(data))] = rng.getrandbits(8)
    return bytes(data)


def deep_nesting(rng: random.Random) -> str:
    depth = rng.choice([50, 200, 999, 1000, 5000, 50_000])
    style = rng.randrange(6)
    if style == 0:
        return "[" * depth + "]" * depth
    if style == 1:
        return '{"a":' * depth + "1" + "}" * depth
    if style == 2:
        return "".join("  " * i + "a:\n" for i in range(min(depth, 3000))) + "  " * min(depth, 3000) + "b\n"
    if style == 3:
        return "- " * min(depth, 5000) + "x\n"
    inner: Any = "x"
    for _ in range(min(depth, 300 if style == 4 else 60)):
        inner = {"k": [inner]}
    docs = copy.deepcopy(rng.choice(SEED_DOCS))
    target = rng.choice(_objects_in(docs))
    paths = _paths(target) or [("metadata",)]
    _set(target, rng.choice(paths), inner)
    try:
        return json.dumps(docs[0] if len(docs) == 1 else {"apiVersion": "v1", "kind": "List", "items": docs})
    except RecursionError:
        return "[" * 100 + "]" * 100


def alias_games(rng: random.Random) -> str:
    width, levels = rng.randint(2, 12), rng.randint(1, 9)
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    if rng.random() < 0.5:  # inside a real object, with a merge key
        lines = [
            "apiVersion: v1", "kind: Node", "metadata: &meta {name: n1, labels: &labels {a: b}}",
            "status: {allocatable: {cpu: '4'}}", "---", "apiVersion: v1", "kind: Pod",
            "metadata: {<<: *meta, name: p, namespace: default}",
            "spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}], nodeSelector: *labels}",
            "x-bomb:", *("  " + line for line in lines),
        ]
    return "\n".join(lines) + "\n"


def many_documents(rng: random.Random) -> str:
    count = rng.choice([0, 1, 100, 3000])
    filler = rng.choice(["", "~", "{}", "[]", "x", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}"])
    return ("---\n" + filler + "\n") * count


def plan_file(rng: random.Random) -> str:
    """A Plan or a List of Bindings for verify and diff, broken somewhere."""
    placements = [
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "train-0", "namespace": "ml"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "gpu-1"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ring-0", "namespace": "llm"}, "spec": {"nodeName": "cpu-1"}},
    ]
    plan: dict[str, Any] = {
        "apiVersion": "gangplan.io/v1alpha1", "kind": "Plan", "schemaVersion": 1,
        "solver": {"solver": "cp-sat", "policy": "optimal", "status": "OPTIMAL", "chosen": "cp-sat", "objective": [], "gap": 0.0},
        "levels": ["example.com/zone"],
        "placements": [{"namespace": "ml", "name": "train-0", "node": "gpu-1", "group": "ml/train"}],
        "groups": [{"key": "ml/train", "jobGroup": "ml/train", "placed": True, "priority": 0, "minMember": 2}],
    }
    doc: Any = rng.choice([plan, {"apiVersion": "v1", "kind": "List", "items": placements}])
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(0, 4)):
        paths = _paths(doc)
        if paths:
            path = rng.choice(paths)
            _set(doc, path, evil_value(rng, path))
    text = json.dumps(doc) if rng.random() < 0.5 else yaml.safe_dump(doc)
    if rng.random() < 0.2:
        text = text[: rng.randrange(len(text) + 1)]
    return text


MUTATORS: list[tuple[float, str, Callable[[random.Random], str | bytes]]] = [
    (0.40, "fields", mutate_fields),
    (0.22, "text", mutate_text),
    (0.10, "bytes", random_bytes),
    (0.10, "nesting", deep_nesting),
    (0.08, "aliases", alias_games),
    (0.03, "documents", many_documents),
    (0.07, "seed", lambda rng: rng.choice(CORPUS)),
]

# ---------------------------------------------------------------- one case


def make_case(index: int, tmp: Path) -> tuple[str, list[str], bytes | None, Path | None]:
    """(mutator name, CLI arguments, stdin, output file) for case ``index``."""
    rng = random.Random(f"{SEED}:{index}")
    weights = [w for w, _, _ in MUTATORS]
    _, name, mutator = rng.choices(MUTATORS, weights)[0]
    data = mutator(rng)
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    path = tmp / rng.choice(["snapshot.yaml", "snapshot.json", "s.yml"])
    stdin = None
    if rng.random() < 0.1:
        source = "-"
        stdin = raw
    else:
        path.write_bytes(raw)
        source = str(path)
    out: Path | None = None
    roll = rng.random()
    limits: list[str] = []
    if rng.random() < 0.05:
        limits = rng.choice([["--max-objects", "5"], ["--max-documents", "3"], ["--max-file-size", "2Ki"]])
    if roll < 0.55:
        args = ["plan", source, "-o", rng.choice(["table", "wide", "json", "yaml", "name", "plan", "status"])]
        args += rng.choice([[], ["--solver", "greedy"], ["--policy", "ordered"], ["--solver", "greedy", "--policy", "ordered"]])
        if rng.random() < 0.3:
            out = tmp / "out.txt"
            args += ["--output-file", str(out)]
        if rng.random() < 0.15:  # none (flat), fewer, or the node named as a level
            args += ["--levels", rng.choice(["", "example.com/rack", "kubernetes.io/hostname,example.com/zone"])]
    elif roll < 0.7:
        args = ["check", source, "--format", rng.choice(["text", "github", "junit"])]
    elif roll < 0.78:
        args = ["topology", source, "-o", rng.choice(["tree", "json"])]
    elif roll < 0.85:
        args = ["explain", rng.choice(["ml/train", "ring", "sim", "nope"]), source]
    elif roll < 0.95:
        plan_path = tmp / "plan.json"
        plan_path.write_text(plan_file(rng) if rng.random() < 0.7 else json.dumps({"kind": "List", "items": []}))
        args = ["verify", source, "--plan", str(plan_path)]
    else:
        plan_path = tmp / "plan.json"
        plan_path.write_text(plan_file(rng))
        args = ["diff", source, "--plan", str(plan_path)] if rng.random() < 0.5 else ["diff", "--plan", str(plan_path), "--plan", str(plan_path)]
    if args[0] in ("plan", "check", "explain"):
        args += ["--time-limit", "0.5"]
        if rng.random() < 0.15:  # drawn last, so the cases before it was added keep their inputs
            gang = tmp / "gang.yaml"
            gang.write_text(_mutated(rng, copy.deepcopy(SEED_GANG_DOCS)) if rng.random() < 0.9 else SEED_GANG)
            if source != "-" and rng.random() < 0.5:
                path.write_text(SEED_SNAPSHOT)  # a snapshot that loads, so the gang is read
            args += ["--gang", f"t={gang}"]
    return name, ["--no-color", *limits, *args], stdin, out


COMMANDS = ("plan", "check", "topology", "explain", "verify", "diff")


def run_case(index: int, tmp: Path) -> tuple[int, str]:
    """Run case ``index``; return (exit code, "" or what is wrong)."""
    for leftover in tmp.iterdir():
        leftover.unlink()
    name, args, stdin, out = make_case(index, tmp)
    result = runner.invoke(app, args, input=stdin)
    code = result.exit_code
    stderr = result.stderr
    lines = stderr.splitlines()
    problems = []
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        problems.append(f"exception {type(result.exception).__name__}: {result.exception}")
    if "Traceback" in result.stdout + stderr:
        problems.append("a traceback")
    command = next(a for a in args if a in COMMANDS)
    allowed = {0, 1, 2} if command in ("check", "verify", "diff") else {0, 2}
    if code not in allowed:
        problems.append(f"exit {code}")
    if code == 2:
        errors = [line for line in lines if line.startswith("error:")]
        if len(errors) != 1 or not lines or not lines[-1].startswith("error:"):
            problems.append(f"exit 2 without exactly one error: line, last ({len(errors)} found)")
    if out is not None:
        others = [p.name for p in tmp.iterdir() if p.name.startswith(".out.txt")]
        if others:
            problems.append(f"temporary files left: {others}")
        if code != 0 and out.exists():
            problems.append("an output file was written by a failed run")
    if problems:
        return code, f"case {index} ({name}) {args}: {'; '.join(problems)}\nstderr: {stderr[-600:]!r}"
    return code, ""


@pytest.mark.fuzz
def test_fuzz_the_cli(tmp_path: Path) -> None:
    indices = [int(ONLY)] if ONLY is not None else range(CASES)
    codes: Counter[int] = Counter()
    failures: dict[str, list[str]] = {}  # by kind of failure: the last stderr line, numbers and paths dropped
    start = time.perf_counter()
    for index in indices:
        code, problem = run_case(index, tmp_path)
        codes[code] += 1
        if problem:
            last = problem.rsplit("stderr: ", 1)[-1]
            kind = re.sub(r"[0-9]+|/\S+", "#", last.split("\\n")[-2] if "\\n" in last else last)[:100]
            failures.setdefault(kind, []).append(problem)
        if ONLY is not None:
            name, args, stdin, _ = make_case(index, tmp_path)
            shown = stdin if stdin is not None else next(tmp_path.glob("s*")).read_bytes()
            print(f"\ncase {index} ({name}): {args}\ninput: {shown[:3000]!r}\nexit {code}\n{problem}")
    elapsed = time.perf_counter() - start
    print(f"\nfuzz: {sum(codes.values())} cases in {elapsed:.1f}s, exit codes {dict(sorted(codes.items()))}")
    report = [f"{len(cases)} like: {cases[0]}" for cases in sorted(failures.values(), key=len, reverse=True)]
    assert not failures, f"{sum(map(len, failures.values()))} failing cases:\n" + "\n".join(report)


@pytest.mark.parametrize("index", [5763, 5913, 6550, 8437])
def test_fuzz_cases_where_the_planner_and_the_verifier_disagreed(index: int, tmp_path: Path) -> None:
    """Found by a 10,000-case run once the planner verified its own plans: topologyKeys that
    name no level (the planner ignores them, the verifier checked them by label) and a Kueue
    pod without its total-count annotation (the planner grouped it, the verifier did not).
    Each ended in exit 3; now a plan with a warning, or an input error naming the pod."""
    code, problem = run_case(index, tmp_path)
    assert not problem and code in (0, 1, 2)

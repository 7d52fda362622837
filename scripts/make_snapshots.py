#!/usr/bin/env python3
"""Generate the realistic example snapshots in ``snapshots/``.

gangplan's promise is that a real cluster dump is a valid snapshot, unchanged (DESIGN.md
section 1). Hand-written test clusters are small and tidy; these two files are instead
shaped like what ``kubectl get nodes,pods,podgroups,priorityclasses -A -o yaml`` prints:
one ``v1`` ``List`` with full-looking objects (uids, resourceVersions, managed labels,
kubelet-reported capacity and allocatable, node conditions, admission-filled pod fields,
container statuses), so the loader meets the noise of real input and the examples in the
README run on something that looks like a cluster.

- ``snapshots/small.yaml``: 12 nodes (8 CPU workers, 4 tainted 8-GPU nodes; one cordoned,
  one NotReady), DaemonSet and Deployment pods, a completed Job pod, PriorityClasses, and
  pending gangs in every dialect gangplan reads: scheduler-plugins, Volcano, Godel
  (kubewharf API group, group nodeSelector), a Kueue plain-pod group, a group with
  ``minResources``, one with a member already running, one that cannot fit (40 GPUs), and
  a lone pending pod. A ConfigMap and a Service are included because gangplan skips them.
- ``snapshots/gpu-cluster.yaml``: a ~290-node H100 cluster labelled with a network
  topology (bigPod > miniPod > tor > node, as in seed 003), about half of its GPUs held by
  running training jobs (whole and partial nodes), and a dozen pending gangs of mixed sizes
  and dialects, including Godel (bytedance API group) groups with required/preferred
  topology terms, a nodeSelector and sortRules, a Volcano subGroup pair (seed 004) and one
  gang that asks for more GPUs than are free.

The output is deterministic: every random choice comes from a ``random.Random`` seeded
with the file's name, uids are UUIDv5 of the object's identity, and times are fixed.
Running the script twice gives identical bytes.

Usage::

    python scripts/make_snapshots.py          # (re)write snapshots/*.yaml
    python scripts/make_snapshots.py --check  # exit 1 if the files differ from a fresh run

Needs only the standard library and PyYAML.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import random
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT_DIR = ROOT / "snapshots"

KI = 1024
MI = KI * KI
GI = MI * KI
TI = GI * KI

GPU = "nvidia.com/gpu"
RDMA = "rdma/hca_shared_devices_a"
TOPO = "network.example.com"
BIGPOD, MINIPOD, TOR = f"{TOPO}/bigpod", f"{TOPO}/minipod", f"{TOPO}/tor"

KUBE_VERSION = "v1.29.4"
UID_NAMESPACE = uuid.UUID("5d2f8f0e-6a53-4c1e-9a57-6b7a3c1f0e42")
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what Kubernetes uses for generated names

SP_API = "scheduling.x-k8s.io/v1alpha1"
VOLCANO_API = "scheduling.volcano.sh/v1beta1"
GODEL_KUBEWHARF_API = "scheduling.godel.kubewharf.io/v1alpha1"
GODEL_BYTEDANCE_API = "scheduling.orchestration.bytedance.com/v1alpha1"

Json = dict[str, Any]
Res = dict[str, int]  # cpu in millicores, memory and storage in bytes, the rest in units


# --------------------------------------------------------------------------- quantities


def res(cpu: str | None = None, memory: str | None = None, **extended: int) -> Res:
    """Requests from the literals used in this file: ``res("500m", "2Gi", gpu=2)``."""
    out: Res = {}
    if cpu is not None:
        out["cpu"] = int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)
    if memory is not None:
        for suffix, size in (("Ti", TI), ("Gi", GI), ("Mi", MI), ("Ki", KI)):
            if memory.endswith(suffix):
                out["memory"] = int(memory[: -len(suffix)]) * size
                break
        else:
            out["memory"] = int(memory)
    names = {"gpu": GPU, "rdma": RDMA}
    for key, value in extended.items():
        out[names.get(key, key)] = value
    return out


def fmt_quantity(name: str, value: int) -> str:
    """Canonical Kubernetes form, as the API server prints it."""
    if name == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        if value == 0:
            return "0"
        for suffix, size in (("Ti", TI), ("Gi", GI), ("Mi", MI), ("Ki", KI)):
            if value % size == 0:
                return f"{value // size}{suffix}"
        return str(value)
    return str(value)


def fmt_resources(r: Res) -> dict[str, str]:
    return {k: fmt_quantity(k, v) for k, v in r.items()}


def add_res(a: Res, b: Res) -> Res:
    return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def fits(used: Res, extra: Res, alloc: Res) -> bool:
    return all(used.get(k, 0) + v <= alloc.get(k, 0) for k, v in extra.items() if v)


# --------------------------------------------------------------------------- objects


def ts(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Flavour:
    instance_type: str
    cpu: int  # cores
    memory_ki: int  # as the kubelet reports it: a little under the nominal size
    gpus: int = 0
    gpu_product: str = ""
    rdma: int = 0
    disk_ki: int = 959_786_032  # ~915 GiB root disk

    def capacity(self) -> dict[str, str]:
        cap = {
            "cpu": str(self.cpu),
            "ephemeral-storage": f"{self.disk_ki}Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{self.memory_ki}Ki",
            "pods": "110",
        }
        if self.gpus:
            cap[GPU] = str(self.gpus)
        if self.rdma:
            cap[RDMA] = str(self.rdma)
        return cap

    def allocatable(self, gpus: int | None = None) -> tuple[dict[str, str], Res]:
        """Capacity minus kube/system reservations and the eviction threshold (GKE's table)."""
        cores = self.cpu
        reserved_m = 60 + (10 if cores > 1 else 0) + 5 * min(max(cores - 2, 0), 2)
        reserved_m += (25 * max(cores - 4, 0)) // 10
        mem = self.memory_ki * KI
        gib = mem / GI
        reserved = 0.25 * min(gib, 4) + 0.2 * min(max(gib - 4, 0), 4)
        reserved += 0.1 * min(max(gib - 8, 0), 8) + 0.06 * min(max(gib - 16, 0), 112)
        reserved += 0.02 * max(gib - 128, 0)
        mem_alloc_ki = self.memory_ki - int(reserved * MI) - 100 * KI  # + 100Mi eviction
        disk_alloc = int(self.disk_ki * KI * 0.9)
        alloc = {
            "cpu": fmt_quantity("cpu", cores * 1000 - reserved_m),
            "ephemeral-storage": str(disk_alloc),
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{mem_alloc_ki}Ki",
            "pods": "110",
        }
        internal: Res = {"cpu": cores * 1000 - reserved_m, "memory": mem_alloc_ki * KI, "pods": 110}
        if self.gpus:
            g = self.gpus if gpus is None else gpus
            alloc[GPU] = str(g)
            internal[GPU] = g
        if self.rdma:
            alloc[RDMA] = str(self.rdma)
            internal[RDMA] = self.rdma
        return alloc, internal


@dataclass
class Container:
    name: str
    image: str
    requests: Res = field(default_factory=dict)
    limits: Res = field(default_factory=dict)
    command: list[str] | None = None
    ports: list[Json] | None = None
    mounts: list[Json] = field(default_factory=list)


DEFAULT_TOLERATIONS = [
    {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "tolerationSeconds": 300,
    },
    {
        "effect": "NoExecute",
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "tolerationSeconds": 300,
    },
]

DAEMONSET_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
]

GPU_TOLERATION = {"effect": "NoSchedule", "key": GPU, "operator": "Exists"}
GPU_TAINT = {"effect": "NoSchedule", "key": GPU, "value": "present"}


class Cluster:
    """Accumulates the objects of one snapshot and the running usage of every node."""

    def __init__(self, name: str, now: dt.datetime, born: dt.datetime) -> None:
        self.name = name
        self.now = now
        self.born = born
        self.rng = random.Random(f"gangplan-snapshot/{name}")
        self._rv = 4_100_000
        self.nodes: list[Json] = []
        self.pods: list[Json] = []
        self.podgroups: list[Json] = []
        self.priorityclasses: list[Json] = []
        self.others: list[Json] = []
        self.alloc: dict[str, Res] = {}
        self.used: dict[str, Res] = {}
        self.usable: dict[str, bool] = {}  # Ready and schedulable
        self.ready: dict[str, bool] = {}
        self.node_labels: dict[str, dict[str, str]] = {}
        self.node_ip: dict[str, str] = {}
        self.pod_cidr: dict[str, str] = {}
        self._next_pod_ip: dict[str, int] = {}
        self.priority_value: dict[str, int] = {}
        self.default_class: str | None = None

    # ----------------------------------------------------------------- metadata

    def uid(self, kind: str, namespace: str | None, name: str) -> str:
        return str(uuid.uuid5(UID_NAMESPACE, f"{self.name}/{kind}/{namespace or ''}/{name}"))

    def rv(self) -> str:
        self._rv += self.rng.randint(3, 400)
        return str(self._rv)

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(NAME_ALPHABET) for _ in range(n))

    def digest(self, *parts: str, n: int = 64) -> str:
        return hashlib.sha256("/".join((self.name, *parts)).encode()).hexdigest()[:n]

    def meta(
        self,
        kind: str,
        name: str,
        created: dt.datetime,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        owners: list[Json] | None = None,
        generate_name: str | None = None,
        **extra: Any,
    ) -> Json:
        m: Json = {"name": name}
        if namespace:
            m["namespace"] = namespace
        if generate_name:
            m["generateName"] = generate_name
        if labels:
            m["labels"] = labels
        if annotations:
            m["annotations"] = annotations
        if owners:
            m["ownerReferences"] = owners
        m["creationTimestamp"] = ts(created)
        m["resourceVersion"] = self.rv()
        m["uid"] = self.uid(kind, namespace, name)
        m.update(extra)
        return m

    def owner(self, api_version: str, kind: str, name: str, namespace: str | None) -> Json:
        return {
            "apiVersion": api_version,
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": kind,
            "name": name,
            "uid": self.uid(kind, namespace, name),
        }

    # ----------------------------------------------------------------- cluster-scoped

    def add_priority_class(
        self,
        name: str,
        value: int,
        description: str,
        global_default: bool = False,
        preemption: str = "PreemptLowerPriority",
        created: dt.datetime | None = None,
    ) -> None:
        pc: Json = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": self.meta(
                "PriorityClass", name, created or self.born + dt.timedelta(hours=1), generation=1
            ),
            "value": value,
            "description": description,
            "preemptionPolicy": preemption,
        }
        if global_default:
            pc["globalDefault"] = True
            self.default_class = name
        self.priority_value[name] = value
        self.priorityclasses.append(pc)

    def add_system_priority_classes(self) -> None:
        self.add_priority_class(
            "system-cluster-critical",
            2_000_000_000,
            "Used for system critical pods that must run in the cluster, but can be moved to "
            "another node if necessary.",
            created=self.born,
        )
        self.add_priority_class(
            "system-node-critical",
            2_000_001_000,
            "Used for system critical pods that must not be moved from their current node.",
            created=self.born,
        )

    def add_node(
        self,
        name: str,
        flavour: Flavour,
        created: dt.datetime,
        labels: dict[str, str] | None = None,
        taints: list[Json] | None = None,
        cordoned: bool = False,
        ready: bool = True,
        gpus_allocatable: int | None = None,
    ) -> None:
        index = len(self.nodes)
        ip = f"10.0.{index // 200}.{10 + index % 200}"
        cidr = f"10.{64 + index // 256}.{index % 256}.0/24"
        all_labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": flavour.instance_type,
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": flavour.instance_type,
        }
        if flavour.gpus:
            all_labels.update(
                {
                    "nvidia.com/cuda.driver.major": "550",
                    "nvidia.com/gpu.count": str(flavour.gpus),
                    "nvidia.com/gpu.memory": "81559",
                    "nvidia.com/gpu.present": "true",
                    "nvidia.com/gpu.product": flavour.gpu_product,
                }
            )
        all_labels.update(labels or {})
        all_taints = list(taints or [])
        heartbeat = ts(self.now - dt.timedelta(seconds=self.rng.randint(5, 40)))
        since = ts(created + dt.timedelta(minutes=2))
        if ready:
            conditions = [
                ("MemoryPressure", "False", "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
                ("DiskPressure", "False", "KubeletHasNoDiskPressure",
                 "kubelet has no disk pressure"),
                ("PIDPressure", "False", "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
                ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ]
        else:
            lost = self.now - dt.timedelta(hours=3, minutes=self.rng.randint(0, 50))
            heartbeat = ts(lost - dt.timedelta(seconds=20))
            since = ts(lost)
            conditions = [
                (t, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ]
            for effect in ("NoSchedule", "NoExecute"):
                all_taints.append(
                    {"effect": effect, "key": "node.kubernetes.io/unreachable",
                     "timeAdded": since}
                )
        if cordoned:
            all_taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/unschedulable",
                    "timeAdded": ts(self.now - dt.timedelta(hours=self.rng.randint(2, 30))),
                }
            )
        spec: Json = {"podCIDR": cidr, "podCIDRs": [cidr]}
        if all_taints:
            spec["taints"] = all_taints
        if cordoned:
            spec["unschedulable"] = True
        alloc_out, alloc_internal = flavour.allocatable(gpus_allocatable)
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": self.meta(
                "Node",
                name,
                created,
                labels=all_labels,
                annotations={
                    "kubeadm.alpha.kubernetes.io/cri-socket":
                        "unix:///var/run/containerd/containerd.sock",
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            ),
            "spec": spec,
            "status": {
                "addresses": [
                    {"address": ip, "type": "InternalIP"},
                    {"address": name, "type": "Hostname"},
                ],
                "allocatable": alloc_out,
                "capacity": flavour.capacity(),
                "conditions": [
                    {
                        "lastHeartbeatTime": heartbeat,
                        "lastTransitionTime": since,
                        "message": message,
                        "reason": reason,
                        "status": status,
                        "type": ctype,
                    }
                    for ctype, status, reason, message in conditions
                ],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": self.uid("boot", None, name),
                    "containerRuntimeVersion": "containerd://1.7.13",
                    "kernelVersion": "5.15.0-107-generic",
                    "kubeProxyVersion": KUBE_VERSION,
                    "kubeletVersion": KUBE_VERSION,
                    "machineID": self.digest("machine", name, n=32),
                    "operatingSystem": "linux",
                    "osImage": "Ubuntu 22.04.4 LTS",
                    "systemUUID": self.uid("system", None, name),
                },
            },
        }
        self.nodes.append(node)
        self.alloc[name] = alloc_internal
        self.used[name] = {}
        self.usable[name] = ready and not cordoned
        self.ready[name] = ready
        self.node_labels[name] = all_labels
        self.node_ip[name] = ip
        self.pod_cidr[name] = cidr
        self._next_pod_ip[name] = 2

    # ----------------------------------------------------------------- pods

    def pod_ip(self, node: str) -> str:
        n = self._next_pod_ip[node]
        self._next_pod_ip[node] += 1
        return self.pod_cidr[node].rsplit(".", 1)[0] + f".{n}"

    def add_pod(
        self,
        namespace: str,
        name: str,
        containers: list[Container],
        created: dt.datetime,
        *,
        owner: Json | None = None,
        generate_name: str | None = None,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        node: str | None = None,
        phase: str | None = None,
        priority_class: str | None = None,
        scheduler: str = "default-scheduler",
        tolerations: list[Json] | None = None,
        daemonset: bool = False,
        node_selector: dict[str, str] | None = None,
        affinity: Json | None = None,
        restart_policy: str = "Always",
        host_network: bool = False,
        volumes: list[Json] | None = None,
        scheduling_gates: list[str] | None = None,
        finalizers: list[str] | None = None,
        service_account: str = "default",
    ) -> Json:
        """A pod as the API server returns it: admission defaults filled, status by phase."""
        phase = phase or ("Running" if node else "Pending")
        requests: Res = {}
        for c in containers:
            requests = add_res(requests, c.requests)
        requests["pods"] = 1
        if node and phase in ("Running", "Pending"):
            used = self.used[node]
            if not fits(used, requests, self.alloc[node]):
                raise AssertionError(f"{namespace}/{name} does not fit on {node}: {used}")
            self.used[node] = add_res(used, requests)

        pc = priority_class or self.default_class
        token = f"kube-api-access-{self.suffix()}"
        spec_containers = []
        for c in containers:
            sc: Json = {
                "image": c.image,
                "imagePullPolicy": "IfNotPresent",
                "name": c.name,
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [
                    *c.mounts,
                    {
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        "name": token,
                        "readOnly": True,
                    },
                ],
            }
            if c.command:
                sc["command"] = c.command
            if c.ports:
                sc["ports"] = c.ports
            if c.requests:
                sc["resources"]["requests"] = fmt_resources(c.requests)
            if c.limits:
                sc["resources"]["limits"] = fmt_resources(c.limits)
            spec_containers.append(sc)

        gpu_pod = any(GPU in c.requests or GPU in c.limits for c in containers)
        tols = list(tolerations or [])
        if gpu_pod and GPU_TOLERATION not in tols:
            tols.append(GPU_TOLERATION)  # the ExtendedResourceToleration admission plugin
        if daemonset:
            tols += [t for t in DAEMONSET_TOLERATIONS if t not in tols]
            if host_network:
                tols.append(
                    {"effect": "NoSchedule", "key": "node.kubernetes.io/network-unavailable",
                     "operator": "Exists"}
                )
        else:
            tols += DEFAULT_TOLERATIONS

        spec: Json = {
            "containers": spec_containers,
            "dnsPolicy": "ClusterFirstWithHostNet" if host_network else "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": self.priority_value.get(pc, 0) if pc else 0,
            "restartPolicy": restart_policy,
            "schedulerName": scheduler,
            "securityContext": {},
            "serviceAccount": service_account,
            "serviceAccountName": service_account,
            "terminationGracePeriodSeconds": 30,
            "tolerations": tols,
            "volumes": [
                *(volumes or []),
                {
                    "name": token,
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                                           "name": "kube-root-ca.crt"}},
                            {"downwardAPI": {"items": [{"fieldRef": {
                                "apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                "path": "namespace"}]}},
                        ],
                    },
                },
            ],
        }
        if pc:
            spec["priorityClassName"] = pc
        if node:
            spec["nodeName"] = node
        if node_selector:
            spec["nodeSelector"] = node_selector
        if affinity:
            spec["affinity"] = affinity
        if host_network:
            spec["hostNetwork"] = True
        if scheduling_gates:
            spec["schedulingGates"] = [{"name": g} for g in scheduling_gates]

        pod: Json = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(
                "Pod",
                name,
                created,
                namespace=namespace,
                labels=labels,
                annotations=annotations,
                owners=[owner] if owner else None,
                generate_name=generate_name,
                **({"finalizers": finalizers} if finalizers else {}),
            ),
            "spec": spec,
            "status": self._pod_status(name, namespace, containers, created, node, phase,
                                       host_network, bool(scheduling_gates)),
        }
        self.pods.append(pod)
        return pod

    def _pod_status(
        self,
        name: str,
        namespace: str,
        containers: list[Container],
        created: dt.datetime,
        node: str | None,
        phase: str,
        host_network: bool,
        gated: bool,
    ) -> Json:
        qos = qos_class(containers)
        if not node:
            status: Json = {"phase": "Pending", "qosClass": qos}
            if gated:
                status["conditions"] = [
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": ts(created),
                        "message": "Scheduling is blocked due to non-empty scheduling gates",
                        "reason": "SchedulingGated",
                        "status": "False",
                        "type": "PodScheduled",
                    }
                ]
            return status
        scheduled = created + dt.timedelta(seconds=self.rng.randint(1, 20))
        started = scheduled + dt.timedelta(seconds=self.rng.randint(3, 90))
        ready = phase == "Running" and self.ready[node]
        conditions = [
            ("PodReadyToStartContainers", "True" if phase == "Running" else "False", started),
            ("Initialized", "True", scheduled),
            ("Ready", "True" if ready else "False", started),
            ("ContainersReady", "True" if ready else "False", started),
            ("PodScheduled", "True", scheduled),
        ]
        statuses = []
        for c in containers:
            cs: Json = {
                "containerID": "containerd://" + self.digest("container", namespace, name, c.name),
                "image": full_image(c.image),
                "imageID": full_image(c.image).rsplit(":", 1)[0] + "@sha256:"
                           + self.digest("image", c.image),
                "lastState": {},
                "name": c.name,
                "ready": ready,
                "restartCount": 0,
                "started": phase == "Running",
            }
            if phase == "Running":
                cs["state"] = {"running": {"startedAt": ts(started)}}
            else:
                cs["state"] = {
                    "terminated": {
                        "containerID": cs["containerID"],
                        "exitCode": 0,
                        "finishedAt": ts(started + dt.timedelta(minutes=self.rng.randint(3, 40))),
                        "reason": "Completed",
                        "startedAt": ts(started),
                    }
                }
            statuses.append(cs)
        pod_ip = self.node_ip[node] if host_network else self.pod_ip(node)
        out: Json = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": ts(t),
                    "status": s,
                    "type": ctype,
                    **({"reason": "PodCompleted"} if phase == "Succeeded" and s == "False"
                       else {}),
                }
                for ctype, s, t in conditions
            ],
            "containerStatuses": statuses,
            "hostIP": self.node_ip[node],
            "hostIPs": [{"ip": self.node_ip[node]}],
            "phase": phase,
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "qosClass": qos,
            "startTime": ts(scheduled),
        }
        return out

    # ----------------------------------------------------------------- controllers

    def add_daemonset(
        self,
        namespace: str,
        name: str,
        container: Container,
        nodes: Iterable[str],
        created: dt.datetime,
        *,
        app_labels: dict[str, str],
        priority_class: str = "system-node-critical",
        host_network: bool = False,
        tolerations: list[Json] | None = None,
    ) -> None:
        revision = self.suffix(10)
        for node in nodes:
            pod_name = f"{name}-{self.suffix()}"
            self.add_pod(
                namespace,
                pod_name,
                [container],
                created + dt.timedelta(minutes=self.rng.randint(1, 600)),
                owner=self.owner("apps/v1", "DaemonSet", name, namespace),
                generate_name=f"{name}-",
                labels={
                    **app_labels,
                    "controller-revision-hash": revision,
                    "pod-template-generation": "1",
                },
                node=node,
                priority_class=priority_class,
                tolerations=tolerations,
                daemonset=True,
                host_network=host_network,
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In",
                                                  "values": [node]}]}
                            ]
                        }
                    }
                },
            )

    def add_deployment(
        self,
        namespace: str,
        name: str,
        container: Container,
        nodes: list[str],
        created: dt.datetime,
        *,
        app_labels: dict[str, str],
        priority_class: str | None = None,
    ) -> None:
        template_hash = self.suffix(10)
        rs = f"{name}-{template_hash}"
        for node in nodes:
            self.add_pod(
                namespace,
                f"{rs}-{self.suffix()}",
                [container],
                created + dt.timedelta(seconds=self.rng.randint(1, 30)),
                owner=self.owner("apps/v1", "ReplicaSet", rs, namespace),
                generate_name=f"{rs}-",
                labels={**app_labels, "pod-template-hash": template_hash},
                node=node,
                priority_class=priority_class,
            )

    # ----------------------------------------------------------------- placement helpers

    def pick_node(self, candidates: list[str], request: Res) -> str:
        """A random candidate with room (running pods in the generated past)."""
        request = {**request, "pods": 1}
        room = [n for n in candidates if self.ready[n] and fits(self.used[n], request,
                                                                  self.alloc[n])]
        if not room:
            raise AssertionError(f"no room for {request}")
        return self.rng.choice(room)

    def take_whole_nodes(self, candidates: list[str], count: int, skip: float = 0.0) -> list[str]:
        """``count`` GPU nodes that are still entirely free, in candidate order.

        ``skip`` leaves some free nodes behind, so that the running jobs fragment the
        topology a little, as they do in a cluster that has lived for a while.
        """
        chosen: list[str] = []
        for n in candidates:
            if len(chosen) == count:
                break
            if not self.usable[n] or self.used[n].get(GPU, 0) or self.alloc[n].get(GPU, 0) < 8:
                continue
            if skip and self.rng.random() < skip:
                continue
            chosen.append(n)
        if len(chosen) < count:
            raise AssertionError(f"only {len(chosen)} free whole nodes, wanted {count}")
        return chosen

    # ----------------------------------------------------------------- output

    def document(self) -> Json:
        def key(o: Json) -> tuple[str, str]:
            return (o["metadata"].get("namespace", ""), o["metadata"]["name"])

        items = (
            sorted(self.nodes, key=key)
            + sorted(self.pods, key=key)
            + sorted(self.podgroups, key=lambda o: (o["apiVersion"], *key(o)))
            + sorted(self.priorityclasses, key=key)
            + self.others
        )
        return {"apiVersion": "v1", "items": items, "kind": "List",
                "metadata": {"resourceVersion": ""}}


def full_image(ref: str) -> str:
    """The image reference as the container runtime reports it (``docker.io/library/...``)."""
    first = ref.split("/", 1)[0]
    if "/" in ref and ("." in first or ":" in first):
        return ref
    return f"docker.io/{ref}" if "/" in ref else f"docker.io/library/{ref}"


def qos_class(containers: list[Container]) -> str:
    if not any(c.requests.get(r) or c.limits.get(r) for c in containers
               for r in ("cpu", "memory")):
        return "BestEffort"
    for c in containers:
        for r in ("cpu", "memory"):
            if r not in c.limits or c.requests.get(r, c.limits[r]) != c.limits[r]:
                return "Burstable"
    return "Guaranteed"


def shm_volume(size: str) -> tuple[list[Json], list[Json]]:
    """The /dev/shm emptyDir every NCCL job mounts: (volumes, volumeMounts)."""
    return (
        [{"emptyDir": {"medium": "Memory", "sizeLimit": size}, "name": "dshm"}],
        [{"mountPath": "/dev/shm", "name": "dshm"}],
    )


# --------------------------------------------------------------------------- gang dialects


@dataclass
class Gang:
    """One gang's pods: ``count`` replicas of one request, some already running."""

    namespace: str
    name: str
    count: int
    requests: Res
    image: str
    created: dt.datetime
    priority_class: str | None = None
    running_on: list[str] = field(default_factory=list)  # nodes of the first members
    succeeded_on: list[str] = field(default_factory=list)  # finished members
    role: str = "worker"
    command: list[str] | None = None


def gpu_container(g: Gang, name: str) -> Container:
    limits = {k: v for k, v in g.requests.items() if k in ("cpu", "memory", GPU, RDMA)}
    mounts = shm_volume("64Gi")[1] if g.requests.get(GPU) else []
    return Container(name, g.image, dict(g.requests), limits, command=g.command, mounts=mounts)


def member_nodes(g: Gang) -> list[tuple[str | None, str | None]]:
    """(node, phase) for each member: running ones first, then succeeded, then pending."""
    out: list[tuple[str | None, str | None]] = [(n, "Running") for n in g.running_on]
    out += [(n, "Succeeded") for n in g.succeeded_on]
    out += [(None, None)] * (g.count - len(out))
    return out


def pytorchjob_gang(c: Cluster, g: Gang, min_member: int | None = None,
                    min_resources: Res | None = None, timeout: int | None = None) -> None:
    """A Kubeflow PyTorchJob gang-scheduled by scheduler-plugins coscheduling."""
    min_member = g.count if min_member is None else min_member
    owner = c.owner("kubeflow.org/v1", "PyTorchJob", g.name, g.namespace)
    volumes = shm_volume("64Gi")[0] if g.requests.get(GPU) else None
    for i, (node, phase) in enumerate(member_nodes(g)):
        rtype, index = ("master", 0) if i == 0 else ("worker", i - 1)
        c.add_pod(
            g.namespace,
            f"{g.name}-{rtype}-{index}",
            [gpu_container(g, "pytorch")],
            g.created + dt.timedelta(seconds=2),
            owner=owner,
            labels={
                "scheduling.x-k8s.io/pod-group": g.name,
                "training.kubeflow.org/job-name": g.name,
                "training.kubeflow.org/job-role": "master" if i == 0 else "worker",
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-index": str(index),
                "training.kubeflow.org/replica-type": rtype,
            },
            node=node,
            phase=phase,
            priority_class=g.priority_class,
            scheduler="scheduler-plugins-scheduler",
            restart_policy="OnFailure",
            volumes=volumes,
        )
    running = len(g.running_on)
    spec: Json = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = fmt_resources(min_resources)
    if timeout:
        spec["scheduleTimeoutSeconds"] = timeout
    phase = ("Running" if running >= min_member else "Scheduling") if g.count >= min_member else "Pending"  # its reconciler's
    status: Json = {
        "occupiedBy": f"{g.namespace}/{g.name}",
        "phase": phase,
        "running": running,
        "scheduled": running,
        "succeeded": len(g.succeeded_on),
        "failed": 0,
        "scheduleStartTime": ts(g.created + dt.timedelta(seconds=3)),
    }
    c.podgroups.append(
        {
            "apiVersion": SP_API,
            "kind": "PodGroup",
            "metadata": c.meta("PodGroup", g.name, g.created, namespace=g.namespace,
                               owners=[owner], generation=1),
            "spec": spec,
            "status": status,
        }
    )


def volcano_gang(
    c: Cluster,
    job: str,
    namespace: str,
    queue: str,
    tasks: list[Gang],
    priority_class: str | None,
    min_member: int | None = None,
    sub_group: str | None = None,
    min_resources: Res | None = None,
) -> str:
    """A Volcano Job: one PodGroup ``<job>-<job uid>`` and pods ``<job>-<task>-<i>``."""
    created = tasks[0].created
    job_uid = c.uid("Job.batch.volcano.sh", namespace, job)
    pg_name = f"{job}-{job_uid}"
    owner = c.owner("batch.volcano.sh/v1alpha1", "Job", job, namespace)
    owner["uid"] = job_uid
    total_req: Res = {}
    running = 0
    for t in tasks:
        volumes = shm_volume("64Gi")[0] if t.requests.get(GPU) else None
        for i, (node, phase) in enumerate(member_nodes(t)):
            running += phase == "Running"
            c.add_pod(
                namespace,
                f"{job}-{t.role}-{i}",
                [gpu_container(t, t.role)],
                created + dt.timedelta(seconds=1),
                owner=owner,
                labels={
                    "volcano.sh/job-name": job,
                    "volcano.sh/job-namespace": namespace,
                    "volcano.sh/queue-name": queue,
                    "volcano.sh/task-index": str(i),
                    "volcano.sh/task-spec": t.role,
                },
                annotations={
                    "scheduling.k8s.io/group-name": pg_name,
                    "volcano.sh/job-name": job,
                    "volcano.sh/job-version": "0",
                    "volcano.sh/queue-name": queue,
                    "volcano.sh/task-index": str(i),
                    "volcano.sh/task-spec": t.role,
                    "volcano.sh/template-uid": f"{job}-{t.role}",
                },
                node=node,
                phase=phase,
                priority_class=priority_class,
                scheduler="volcano",
                restart_policy="OnFailure",
                volumes=volumes,
            )
        for _ in range(t.count):
            total_req = add_res(total_req, t.requests)
    min_member = sum(t.count for t in tasks) if min_member is None else min_member
    spec: Json = {
        "minMember": min_member,
        "minResources": fmt_resources(min_resources or total_req),
        "minTaskMember": {t.role: t.count for t in tasks},
        "queue": queue,
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if sub_group:
        spec["subGroup"] = sub_group
    stamp = ts(created + dt.timedelta(seconds=5))
    if running >= min_member:
        status: Json = {
            "conditions": [{"lastTransitionTime": stamp, "reason": "tasks in gang are ready",
                            "status": "True", "transitionID": c.uid("transition", namespace, job),
                            "type": "Scheduled"}],
            "phase": "Running",
            "running": running,
        }
    else:
        pending = sum(t.count for t in tasks) - running
        status = {
            "conditions": [{
                "lastTransitionTime": stamp,
                "message": f"{pending}/{pending + running} tasks in gang unschedulable: pod group "
                           f"is not ready, {pending} Pending, {min_member} minAvailable; "
                           f"Pending: {pending} Unschedulable",
                "reason": "NotEnoughResources",
                "status": "True",
                "transitionID": c.uid("transition", namespace, job),
                "type": "Unschedulable",
            }],
            "phase": "Inqueue" if running else "Pending",
        }
        if running:
            status["running"] = running
    c.podgroups.append(
        {
            "apiVersion": VOLCANO_API,
            "kind": "PodGroup",
            "metadata": c.meta("PodGroup", pg_name, created, namespace=namespace,
                               owners=[owner], generation=2),
            "spec": spec,
            "status": status,
        }
    )
    return pg_name


def godel_gang(
    c: Cluster,
    api: str,
    g: Gang,
    affinity: Json | None,
    timeout: int = 3000,
    min_member: int | None = None,
) -> None:
    """A Godel PodGroup over the pods of an indexed batch/v1 Job."""
    min_member = g.count if min_member is None else min_member
    owner = c.owner("batch/v1", "Job", g.name, g.namespace)
    controller_uid = owner["uid"]
    volumes = shm_volume("64Gi")[0] if g.requests.get(GPU) else None
    running = 0
    for i, (node, phase) in enumerate(member_nodes(g)):
        running += phase == "Running"
        c.add_pod(
            g.namespace,
            f"{g.name}-{i}-{c.suffix()}",
            [gpu_container(g, g.role)],
            g.created + dt.timedelta(seconds=1),
            owner=owner,
            generate_name=f"{g.name}-{i}-",
            labels={
                "batch.kubernetes.io/controller-uid": controller_uid,
                "batch.kubernetes.io/job-completion-index": str(i),
                "batch.kubernetes.io/job-name": g.name,
                "controller-uid": controller_uid,
                "job-name": g.name,
            },
            annotations={
                "batch.kubernetes.io/job-completion-index": str(i),
                "godel.bytedance.com/pod-group-name": g.name,
                "godel.bytedance.com/pod-launcher": "kubelet",
                "godel.bytedance.com/pod-resource-type": "guaranteed",
            },
            node=node,
            phase=phase,
            priority_class=g.priority_class,
            scheduler="godel-scheduler",
            restart_policy="Never",
            volumes=volumes,
            finalizers=["batch.kubernetes.io/job-tracking"],
        )
    spec: Json = {"minMember": min_member, "scheduleTimeoutSeconds": timeout}
    if g.priority_class:
        spec["priorityClassName"] = g.priority_class
    if affinity:
        spec["affinity"] = affinity
    status: Json = {"phase": "Running" if running >= min_member else "Pending"}
    if running >= min_member:
        status["scheduleStartTime"] = ts(g.created + dt.timedelta(seconds=2))
    c.podgroups.append(
        {
            "apiVersion": api,
            "kind": "PodGroup",
            "metadata": c.meta("PodGroup", g.name, g.created, namespace=g.namespace,
                               generation=1),
            "spec": spec,
            "status": status,
        }
    )


def kueue_plain_gang(c: Cluster, g: Gang, queue: str, extra_annotations: dict[str, str]
                     | None = None) -> None:
    """Kueue plain pods: no PodGroup object; gated until Kueue admits the workload."""
    role_hash = c.digest("role", g.namespace, g.name, n=8)
    for i in range(g.count):
        c.add_pod(
            g.namespace,
            f"{g.name}-{i}",
            [gpu_container(g, g.role)],
            g.created,
            labels={
                "kueue.x-k8s.io/managed": "true",
                "kueue.x-k8s.io/pod-group-name": g.name,
                "kueue.x-k8s.io/queue-name": queue,
            },
            annotations={
                "kueue.x-k8s.io/pod-group-total-count": str(g.count),
                "kueue.x-k8s.io/role-hash": role_hash,
                **(extra_annotations or {}),
            },
            priority_class=g.priority_class,
            restart_policy="Never",
            scheduling_gates=["kueue.x-k8s.io/admission"],
            finalizers=["kueue.x-k8s.io/managed"],
        )


def cronjob_pod(c: Cluster, namespace: str, cronjob: str, run: int, container: Container,
                created: dt.datetime, node: str | None, phase: str | None,
                priority_class: str | None = None) -> None:
    job = f"{cronjob}-{run}"
    job_uid = c.uid("Job", namespace, job)
    c.add_pod(
        namespace,
        f"{job}-{c.suffix()}",
        [container],
        created,
        owner=c.owner("batch/v1", "Job", job, namespace),
        generate_name=f"{job}-",
        labels={
            "batch.kubernetes.io/controller-uid": job_uid,
            "batch.kubernetes.io/job-name": job,
            "controller-uid": job_uid,
            "job-name": job,
        },
        node=node,
        phase=phase,
        priority_class=priority_class,
        restart_policy="OnFailure",
        finalizers=None if phase == "Succeeded" else ["batch.kubernetes.io/job-tracking"],
    )


# --------------------------------------------------------------------------- small.yaml


def build_small() -> Cluster:
    now = dt.datetime(2024, 6, 13, 9, 30, 0)
    born = dt.datetime(2024, 2, 5, 14, 12, 0)
    c = Cluster("small", now, born)
    c.add_system_priority_classes()
    c.add_priority_class("high", 1000, "Production training and serving.")
    c.add_priority_class("low", 100, "Experiments and batch work; preemptible.")

    cpu_flavour = Flavour("m6i.4xlarge", 16, 65_842_416)
    gpu_flavour = Flavour("gpu-a100x8-64c-512g", 64, 528_281_844, gpus=8,
                          gpu_product="NVIDIA-A100-SXM4-80GB")
    cpu_nodes = [f"node-cpu-{i:02d}" for i in range(1, 9)]
    gpu_nodes = [f"node-gpu-{i:02d}" for i in range(1, 5)]
    for i, n in enumerate(cpu_nodes):
        c.add_node(n, cpu_flavour, born + dt.timedelta(minutes=3 * i),
                   labels={"topology.kubernetes.io/zone": "zone-a" if i < 4 else "zone-b"},
                   cordoned=n == "node-cpu-08")
    for i, n in enumerate(gpu_nodes):
        c.add_node(n, gpu_flavour, born + dt.timedelta(days=20, minutes=5 * i),
                   labels={"topology.kubernetes.io/zone": "zone-a" if i < 2 else "zone-b"},
                   taints=[GPU_TAINT], ready=n != "node-gpu-04")

    # Node agents.
    all_nodes = cpu_nodes + gpu_nodes
    c.add_daemonset(
        "kube-system", "kube-proxy",
        Container("kube-proxy", f"registry.k8s.io/kube-proxy:{KUBE_VERSION}",
                  command=["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                           "--hostname-override=$(NODE_NAME)"]),
        all_nodes, born, app_labels={"k8s-app": "kube-proxy"}, host_network=True)
    c.add_daemonset(
        "monitoring", "node-exporter",
        Container("node-exporter", "quay.io/prometheus/node-exporter:v1.8.1",
                  res("100m", "180Mi"), res("250m", "180Mi"),
                  ports=[{"containerPort": 9100, "hostPort": 9100, "name": "metrics",
                          "protocol": "TCP"}]),
        all_nodes, born + dt.timedelta(days=1),
        app_labels={"app.kubernetes.io/name": "node-exporter"}, host_network=True,
        tolerations=[{"operator": "Exists"}])
    c.add_daemonset(
        "kube-system", "nvidia-device-plugin-daemonset",
        Container("nvidia-device-plugin-ctr", "nvcr.io/nvidia/k8s-device-plugin:v0.15.0"),
        gpu_nodes, born + dt.timedelta(days=20),
        app_labels={"name": "nvidia-device-plugin-ds"}, tolerations=[GPU_TOLERATION])

    # Services.
    c.add_deployment(
        "kube-system", "coredns",
        Container("coredns", "registry.k8s.io/coredns/coredns:v1.11.1",
                  res("100m", "70Mi"), res(memory="170Mi")),
        ["node-cpu-01", "node-cpu-05"], born,
        app_labels={"k8s-app": "kube-dns"}, priority_class="system-cluster-critical")
    c.add_deployment(
        "web", "frontend",
        Container("nginx", "nginx:1.25.5", res("250m", "256Mi"), res("500m", "512Mi"),
                  ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}]),
        ["node-cpu-02", "node-cpu-03", "node-cpu-06"], now - dt.timedelta(days=6),
        app_labels={"app": "frontend"}, priority_class="high")
    c.add_deployment(
        "web", "api",
        Container("api", "registry.example.com/web/api:2.14.0", res("1", "2Gi"),
                  res("2", "2Gi")),
        ["node-cpu-01", "node-cpu-06"], now - dt.timedelta(days=2, hours=4),
        app_labels={"app": "api"}, priority_class="high")
    c.add_deployment(
        "ml", "triton-inference",
        Container("triton", "nvcr.io/nvidia/tritonserver:24.05-py3",
                  res("8", "64Gi", gpu=2), res("8", "64Gi", gpu=2)),
        ["node-gpu-01"], now - dt.timedelta(days=3),
        app_labels={"app": "triton-inference"}, priority_class="high")
    report = Container("report", "registry.example.com/batch/report:1.3.0",
                       res("500m", "1Gi"), res(memory="1Gi"))
    cronjob_pod(c, "batch", "nightly-report", 28_641_060, report,
                now - dt.timedelta(hours=9, minutes=30), "node-cpu-04", "Succeeded")

    # The lone pending pod: tonight's run, no gang.
    cronjob_pod(c, "batch", "nightly-report", 28_641_120, report,
                now - dt.timedelta(minutes=30), None, None)

    pytorch = "nvcr.io/nvidia/pytorch:24.05-py3"
    # scheduler-plugins: 4 x 2 GPUs, fits on one node or across two.
    pytorchjob_gang(c, Gang("ml", "pytorch-ddp", 4, res("8", "64Gi", gpu=2), pytorch,
                            now - dt.timedelta(minutes=12), "high"),
                    timeout=600)
    # scheduler-plugins: 3 x 2 GPUs, the master is already running (the workers were
    # recreated after a node drain), so 2 pods are pending and minMember counts all 3.
    pytorchjob_gang(c, Gang("ml", "bert-sweep", 3, res("8", "64Gi", gpu=2), pytorch,
                            now - dt.timedelta(hours=2), "low", running_on=["node-gpu-01"]))
    # scheduler-plugins: cannot fit, 5 x 8 = 40 GPUs in a cluster of 32.
    pytorchjob_gang(c, Gang("ml", "llm-pretrain", 5, res("60", "480Gi", gpu=8), pytorch,
                            now - dt.timedelta(minutes=40), "high"),
                    timeout=1800)
    # scheduler-plugins with minResources: a KubeRay cluster, head + 4 workers, CPU only.
    ray_created = now - dt.timedelta(minutes=25)
    ray_owner = c.owner("ray.io/v1", "RayCluster", "ray-tune", "analytics")
    ray_members = [("head", res("2", "8Gi"))] + [("worker", res("4", "16Gi"))] * 4
    for kind, req in ray_members:
        group = "headgroup" if kind == "head" else "cpu-workers"
        name = (f"ray-tune-head-{c.suffix()}" if kind == "head"
                else f"ray-tune-{group}-worker-{c.suffix()}")
        c.add_pod(
            "analytics", name,
            [Container("ray-head" if kind == "head" else "ray-worker", "rayproject/ray:2.23.0",
                       req, req)],
            ray_created + dt.timedelta(seconds=2),
            owner=ray_owner, generate_name=name[:-5],
            labels={"app.kubernetes.io/created-by": "kuberay-operator",
                    "app.kubernetes.io/name": "kuberay", "ray.io/cluster": "ray-tune",
                    "ray.io/group": group, "ray.io/node-type": kind,
                    "scheduling.x-k8s.io/pod-group": "ray-tune"},
            scheduler="scheduler-plugins-scheduler")
    c.podgroups.append({
        "apiVersion": SP_API, "kind": "PodGroup",
        "metadata": c.meta("PodGroup", "ray-tune", ray_created, namespace="analytics",
                           owners=[ray_owner], generation=1),
        "spec": {"minMember": 5, "minResources": {"cpu": "18", "memory": "72Gi"},
                 "scheduleTimeoutSeconds": 300},
        "status": {"occupiedBy": "analytics/ray-tune", "phase": "Scheduling",
                   "scheduleStartTime": ts(ray_created + dt.timedelta(seconds=3))},
    })
    # Volcano: a TF job, 1 CPU parameter server + 2 GPU workers, in queue research.
    volcano_gang(c, "tf-resnet", "training", "research", [
        Gang("training", "tf-resnet", 1, res("2", "4Gi"), "tensorflow/tensorflow:2.16.1",
             now - dt.timedelta(minutes=18), role="ps"),
        Gang("training", "tf-resnet", 2, res("8", "32Gi", gpu=2),
             "tensorflow/tensorflow:2.16.1-gpu", now - dt.timedelta(minutes=18)),
    ], priority_class="low")
    # Godel (kubewharf API group): CPU ETL restricted to zone-a by the group's nodeSelector.
    godel_gang(c, GODEL_KUBEWHARF_API,
               Gang("batch", "etl-shuffle", 3, res("4", "16Gi"),
                    "registry.example.com/data/etl-worker:1.8.0",
                    now - dt.timedelta(minutes=8), role="etl"),
               {"podGroupAffinity": {"nodeSelector": {"nodeSelectorTerms": [{
                   "matchExpressions": [{"key": "topology.kubernetes.io/zone",
                                         "operator": "In", "values": ["zone-a"]}]}]}}},
               timeout=600)
    # Kueue plain-pod group of 3.
    kueue_plain_gang(c, Gang("team-a", "sim-7f3k2", 3, res("2", "4Gi"),
                             "registry.example.com/sim/runner:0.9.2",
                             now - dt.timedelta(minutes=5), role="sim"),
                     queue="user-queue")

    # Kinds gangplan skips.
    c.others.append({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": c.meta("ConfigMap", "kube-root-ca.crt", born, namespace="default",
                           annotations={"kubernetes.io/description": "Contains a CA bundle "
                                        "that can be used to verify the kube-apiserver when "
                                        "using internal endpoints such as the internal service "
                                        "IP or kubernetes.default.svc. No other usage is "
                                        "guaranteed across distributions of Kubernetes "
                                        "clusters."}),
        "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nMIIC/jCCAeagAwIBAgIBADANBgkqhkiG9w0B"
                           "AQsFADAVMRMwEQYDVQQDEwprdWJlcm5ldGVz\n-----END CERTIFICATE-----\n"},
    })
    c.others.append({
        "apiVersion": "v1", "kind": "Service",
        "metadata": c.meta("Service", "kubernetes", born, namespace="default",
                           labels={"component": "apiserver", "provider": "kubernetes"}),
        "spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
                 "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"],
                 "ipFamilyPolicy": "SingleStack",
                 "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                            "targetPort": 6443}],
                 "sessionAffinity": "None", "type": "ClusterIP"},
        "status": {"loadBalancer": {}},
    })
    return c


# --------------------------------------------------------------------------- gpu-cluster.yaml


def build_gpu_cluster() -> Cluster:
    now = dt.datetime(2024, 6, 13, 10, 0, 0)
    born = dt.datetime(2023, 11, 20, 6, 0, 0)
    c = Cluster("gpu-cluster", now, born)
    c.add_system_priority_classes()
    c.add_priority_class("training-high", 10000, "Flagship pre-training runs.")
    c.add_priority_class("inference", 5000, "Online inference; never preempts.",
                         preemption="Never")
    c.add_priority_class("training", 1000, "Regular training and fine-tuning jobs.")
    c.add_priority_class("batch-low", 100, "Default for everything else; first to be "
                         "preempted.", global_default=True)

    h100_big = Flavour("gpu-h100x8-192c-2t", 192, 2_113_505_220, gpus=8,
                       gpu_product="NVIDIA-H100-80GB-HBM3", rdma=1000,
                       disk_ki=7_499_362_856)
    h100_small = Flavour("gpu-h100x8-96c-1t", 96, 1_056_455_432, gpus=8,
                         gpu_product="NVIDIA-H100-80GB-HBM3", rdma=1000,
                         disk_ki=3_749_681_428)
    cpu_flavour = Flavour("cpu-64c-256g", 64, 263_921_400, disk_ki=1_874_840_714)

    # Topology: 2 bigPods x 4 miniPods x 4 tors; each tor (rack) holds 7-9 GPU nodes and
    # one CPU node. miniPods mp-0-2 and mp-0-3 are the older 96-core / 1 TiB generation.
    racks: dict[tuple[int, int, int], list[str]] = {}
    minipods: dict[tuple[int, int], list[str]] = {}
    gpu_nodes: list[str] = []
    cpu_nodes: list[str] = []
    rack = 0
    for b in range(2):
        for m in range(4):
            for t in range(4):
                labels = {BIGPOD: f"bp-{b}", MINIPOD: f"mp-{b}-{m}", TOR: f"tor-{b}-{m}-{t}",
                          "topology.kubernetes.io/region": "dc1",
                          "topology.kubernetes.io/zone": f"dc1-hall{b + 1}"}
                flavour = h100_small if (b, m) in ((0, 2), (0, 3)) else h100_big
                members = []
                created = born + dt.timedelta(days=40 * b + 7 * m, hours=t)
                for s in range(1, c.rng.randint(7, 9) + 1):
                    name = f"h100-r{rack:02d}-{s:02d}"
                    members.append(name)
                    c.add_node(
                        name, flavour, created + dt.timedelta(minutes=2 * s),
                        labels=labels,
                        # Hall 2's GPU nodes are reserved for GPU pods; hall 1's are not.
                        taints=[GPU_TAINT] if b == 1 else None,
                        ready=name != "h100-r05-03",  # lost its kubelet: NotReady
                        cordoned=name == "h100-r20-07",  # drained for an HCA replacement
                        gpus_allocatable=7 if name == "h100-r27-02" else None,  # a GPU fell off
                    )
                cpu_name = f"cpu-r{rack:02d}-01"
                c.add_node(cpu_name, cpu_flavour, created, labels=labels,
                           cordoned=cpu_name == "cpu-r11-01")
                cpu_nodes.append(cpu_name)
                racks[(b, m, t)] = members
                minipods.setdefault((b, m), []).extend(members)
                gpu_nodes.extend(members)
                rack += 1
    all_nodes = sorted(gpu_nodes + cpu_nodes)

    c.add_daemonset(
        "monitoring", "node-exporter",
        Container("node-exporter", "quay.io/prometheus/node-exporter:v1.8.1",
                  res("100m", "180Mi"), res("250m", "180Mi")),
        all_nodes, born, app_labels={"app.kubernetes.io/name": "node-exporter"},
        host_network=True, tolerations=[{"operator": "Exists"}])
    c.add_daemonset(
        "gpu-operator", "nvidia-device-plugin-daemonset",
        Container("nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.15.0"),
        sorted(gpu_nodes), born, app_labels={"app": "nvidia-device-plugin-daemonset"},
        tolerations=[GPU_TOLERATION])

    # Running work, placed as a scheduler would have: gangs whole-node and compact within
    # their miniPod, smaller pods scattered; a few free nodes left behind as holes.
    big = res("80", "800Gi", gpu=8, rdma=1)
    megatron = "registry.example.com/llm/megatron:24.04"
    pytorch = "nvcr.io/nvidia/pytorch:24.05-py3"
    mmdet = "registry.example.com/vision/mmdet:3.3.0"

    def whole(domain: list[str], count: int, skip: float = 0.08) -> list[str]:
        return c.take_whole_nodes(domain, count, skip)

    def partial(domain: list[str], request: Res, count: int) -> list[str]:
        chosen = []
        for _ in range(count):
            n = c.pick_node(domain, request)
            c.used[n] = add_res(c.used[n], {**request, "pods": 1})  # reserve while choosing
            chosen.append(n)
        for n in chosen:  # add_pod adds it again
            c.used[n] = {k: v - request.get(k, 0) - (k == "pods") for k, v in c.used[n].items()}
        return chosen

    mp = minipods
    godel_gang(c, GODEL_BYTEDANCE_API,
               Gang("llm", "moe-pretrain-v2", 40, res("176", "1800Gi", gpu=8, rdma=1),
                    megatron, now - dt.timedelta(days=6), "training-high",
                    running_on=whole(mp[0, 1] + mp[0, 0], 40, skip=0.0), role="trainer"),
               {"podGroupAffinity": {
                   "required": [{"topologyKey": BIGPOD}],
                   "preferred": [{"topologyKey": MINIPOD}, {"topologyKey": TOR}]}},
               timeout=3600)
    pytorchjob_gang(c, Gang("llm", "llama-70b-sft", 28, big, pytorch,
                            now - dt.timedelta(days=2, hours=5), "training-high",
                            running_on=whole(mp[0, 2], 28)))
    volcano_gang(c, "vit-22b", "vision", "vision", [
        Gang("vision", "vit-22b", 12, big, mmdet, now - dt.timedelta(days=1, hours=3),
             running_on=whole(mp[0, 3], 12))], priority_class="training")
    volcano_gang(c, "conformer-xl", "speech", "speech", [
        Gang("speech", "conformer-xl", 10, big, pytorch, now - dt.timedelta(hours=20),
             running_on=whole(mp[1, 0], 10))], priority_class="training")
    pytorchjob_gang(c, Gang("rl", "ppo-rlhf", 8, big, pytorch,
                            now - dt.timedelta(hours=9), "training",
                            running_on=whole(mp[1, 0], 8)))
    pytorchjob_gang(c, Gang("llm", "code-sft", 16, big, pytorch,
                            now - dt.timedelta(hours=30), "training",
                            running_on=whole(mp[1, 1], 16)))
    pytorchjob_gang(c, Gang("llm", "tokenizer-distill", 8, big, pytorch,
                            now - dt.timedelta(hours=14), "training",
                            running_on=whole(mp[0, 3], 8)))
    half = res("40", "400Gi", gpu=4)
    pytorchjob_gang(c, Gang("recsys", "dlrm-train", 10, half,
                            "registry.example.com/recsys/torchrec:0.7.0",
                            now - dt.timedelta(hours=7), "training",
                            running_on=partial(mp[0, 3], half, 10)))
    volcano_gang(c, "asr-finetune", "speech", "speech", [
        Gang("speech", "asr-finetune", 6, half, pytorch, now - dt.timedelta(hours=3),
             running_on=partial(mp[0, 2] + mp[0, 3], half, 6))], priority_class="batch-low")
    vllm = res("16", "160Gi", gpu=2)
    c.add_deployment(
        "inference", "vllm-llama3-8b",
        Container("vllm", "vllm/vllm-openai:v0.4.3", vllm, vllm,
                  ports=[{"containerPort": 8000, "name": "http", "protocol": "TCP"}]),
        partial(mp[1, 2], vllm, 8), now - dt.timedelta(days=4),
        app_labels={"app.kubernetes.io/name": "vllm-llama3-8b"}, priority_class="inference")
    one = res("12", "96Gi", gpu=1)
    for i, n in enumerate(partial(mp[0, 3] + mp[1, 2], one, 10)):
        user = ["ana", "bo", "chen", "dmitri", "eve", "femi", "gita", "hugo", "ines", "jun"][i]
        c.add_pod("research", f"jupyter-{user}",
                  [Container("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2024-06-10",
                             one, {GPU: 1, "memory": one["memory"]})],
                  now - dt.timedelta(hours=c.rng.randint(1, 50)),
                  labels={"app": "jupyterhub", "component": "singleuser-server",
                          "hub.jupyter.org/username": user},
                  node=n, priority_class="batch-low")
    evals = partial(mp[1, 1] + mp[1, 2], one, 16)
    eval_c = Container("eval", "registry.example.com/eval/lm-eval-harness:0.4.2", one,
                       {GPU: 1, "memory": one["memory"]})
    for i, n in enumerate(evals):
        # The first four have finished: on their nodes but holding nothing.
        cronjob_pod(c, "eval", f"nightly-eval-shard{i:02d}", 28_641_000, eval_c,
                    now - dt.timedelta(hours=4), n, "Succeeded" if i < 4 else "Running",
                    priority_class="batch-low")

    # ---------------- pending gangs
    t0 = now - dt.timedelta(hours=1)
    # Godel, required bigPod, preferred miniPod then tor; only the 2 TiB nodes (hall 2 and
    # mp-0-0/mp-0-1) can take these pods, and the nodeSelector says so too.
    godel_gang(c, GODEL_BYTEDANCE_API,
               Gang("llm", "dense-70b-pretrain", 48, res("176", "1800Gi", gpu=8, rdma=1),
                    megatron, t0 + dt.timedelta(minutes=3), "training-high", role="trainer"),
               {"podGroupAffinity": {
                   "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "node.kubernetes.io/instance-type", "operator": "In",
                        "values": ["gpu-h100x8-192c-2t"]}]}]},
                   "preferred": [{"topologyKey": MINIPOD}, {"topologyKey": TOR}],
                   "required": [{"topologyKey": BIGPOD}],
                   "sortRules": [
                       {"dimension": "Available", "order": "Descending", "resource": "GPU"},
                       {"dimension": "Capacity", "order": "Ascending", "resource": "CPU"}]}},
               timeout=3600)
    # Godel, required miniPod, preferred tor, bin-packing sort rule.
    godel_gang(c, GODEL_BYTEDANCE_API,
               Gang("llm", "mixtral-sft", 16, big, megatron, t0 + dt.timedelta(minutes=11),
                    "training", role="trainer"),
               {"podGroupAffinity": {
                   "preferred": [{"topologyKey": TOR}],
                   "required": [{"topologyKey": MINIPOD}],
                   "sortRules": [
                       {"dimension": "Available", "order": "Ascending", "resource": "GPU"}]}})
    # Godel, required tor (one rack).
    godel_gang(c, GODEL_BYTEDANCE_API,
               Gang("llm", "reward-model", 6, big, megatron, t0 + dt.timedelta(minutes=20),
                    "training", role="trainer"),
               {"podGroupAffinity": {"required": [{"topologyKey": TOR}]}})
    # scheduler-plugins, 12 x 8 with two members already running and minResources.
    whisper_req = res("80", "800Gi", gpu=8, rdma=1)
    pytorchjob_gang(c, Gang("speech", "whisper-large", 12, whisper_req, pytorch,
                            t0 + dt.timedelta(minutes=7), "training",
                            running_on=whole(racks[1, 1, 2], 2, skip=0.0)),
                    min_resources=res("960", "9600Gi", gpu=96), timeout=1800)
    # Volcano, queue vision: 8 x 4 GPUs.
    volcano_gang(c, "sam-finetune", "vision", "vision", [
        Gang("vision", "sam-finetune", 8, half, mmdet, t0 + dt.timedelta(minutes=25))],
        priority_class="training")
    # Volcano subGroup pair (seed 004): teacher and student run together or not at all.
    volcano_gang(c, "distill-teacher", "vision", "vision", [
        Gang("vision", "distill-teacher", 2, half, mmdet, t0 + dt.timedelta(minutes=30))],
        priority_class="training", sub_group="distill-0613")
    volcano_gang(c, "distill-student", "vision", "vision", [
        Gang("vision", "distill-student", 4, one, mmdet, t0 + dt.timedelta(minutes=30))],
        priority_class="training", sub_group="distill-0613")
    # scheduler-plugins, elastic: 10 pods, quorum 6.
    pytorchjob_gang(c, Gang("research", "hparam-sweep", 10, one, pytorch,
                            t0 + dt.timedelta(minutes=33), "batch-low"),
                    min_member=6)
    # scheduler-plugins, tiny, default priority class.
    pytorchjob_gang(c, Gang("research", "tiny-ablation", 2, one, pytorch,
                            t0 + dt.timedelta(minutes=41)))
    # Volcano, 32 x 1 GPU evaluation sweep, low priority.
    volcano_gang(c, "eval-harness", "llm", "default", [
        Gang("llm", "eval-harness", 32, one, "registry.example.com/eval/lm-eval-harness:0.4.2",
             t0 + dt.timedelta(minutes=44))], priority_class="batch-low")
    # Kueue plain pods, 4 x 2 GPUs, preferring one tor.
    kueue_plain_gang(c, Gang("rl", "grpo-rollout", 4, res("16", "160Gi", gpu=2),
                             "registry.example.com/rl/verl:0.1.0", t0 + dt.timedelta(minutes=47),
                             "training", role="rollout"),
                     queue="rl",
                     extra_annotations={"kueue.x-k8s.io/podset-preferred-topology": TOR})
    # scheduler-plugins, CPU only: tokenisation shards.
    pytorchjob_gang(c, Gang("data", "tokenize-shards", 8, res("30", "120Gi"),
                            "registry.example.com/data/tokenizer:2.1.0",
                            t0 + dt.timedelta(minutes=50), "batch-low"))
    # Volcano, cannot fit: 128 x 8 = 1024 GPUs, more than the cluster has free.
    volcano_gang(c, "moe-1t-pretrain", "frontier", "frontier", [
        Gang("frontier", "moe-1t-pretrain", 128, res("176", "1800Gi", gpu=8, rdma=1), megatron,
             t0 + dt.timedelta(minutes=1))], priority_class="training-high")
    # A lone pending pod.
    c.add_pod("research", "gpu-debug-ana",
              [Container("debug", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", one,
                         {GPU: 1, "memory": one["memory"]}, command=["sleep", "infinity"])],
              now - dt.timedelta(minutes=4), priority_class="batch-low")

    free = sum(c.alloc[n].get(GPU, 0) - c.used[n].get(GPU, 0) for n in gpu_nodes if c.usable[n])
    if free >= 1024:
        raise AssertionError(f"moe-1t-pretrain must not fit: {free} GPUs are free")
    return c


# --------------------------------------------------------------------------- output


class KubectlDumper(yaml.SafeDumper):
    """PyYAML dumper that writes like kubectl: no anchors or aliases, double quotes."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def choose_scalar_style(self) -> str | None:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def render(cluster: Cluster) -> str:
    return yaml.dump(cluster.document(), Dumper=KubectlDumper, sort_keys=True,
                     default_flow_style=False, allow_unicode=True, width=1 << 30)


BUILDERS: dict[str, Callable[[], Cluster]] = {
    "small.yaml": build_small,
    "gpu-cluster.yaml": build_gpu_cluster,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory; exit 1 if a file in snapshots/ differs")
    args = parser.parse_args(argv)
    stale = []
    for filename, build in BUILDERS.items():
        text = render(build())
        path = SNAPSHOT_DIR / filename
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(filename)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)} ({len(text.encode()):,} bytes)",
                  file=sys.stderr)
    if stale:
        print(f"out of date: {', '.join(stale)}; run scripts/make_snapshots.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

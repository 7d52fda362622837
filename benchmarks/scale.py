"""Scale benchmark: greedy vs CP-SAT on generated clusters S, M, L, XL (and trace cases).

Every run is a fresh process (`--one`), timed for loading and planning separately, with its
own peak RSS (VmHWM). The table prints medians over `--runs`, objective 1 per priority
level, GPU allocation, mean spans at the preferred level, CP-SAT's status and gap, and the
ratios CP-SAT / greedy from the same run. Run from the repository root:

    python benchmarks/scale.py --sizes S,M --runs 3
    python benchmarks/scale.py --sizes L --time-limit 60
    python benchmarks/scale.py --sizes S --trace ../shared/traces/alibaba-gpu-v2023
    python benchmarks/scale.py --sizes '' --trace ../shared/traces/alibaba-pai-gpu-v2020 --trace ../shared/traces/alibaba-spot-gpu-v2026
    python benchmarks/scale.py --sizes S,M --modes greedy,nodes,buckets --time-limit 60
    python benchmarks/scale.py --sizes S,M,L --modes greedy --format yaml
    python benchmarks/scale.py --sizes M --modes greedy,cp-sat --exclusive tor
    python benchmarks/scale.py --sizes M --modes greedy,cp-sat --exclusive tor:all

Snapshots are written as compact JSON (kubectl's `-o json` is the same data indented), or with `--format yaml` as
`kubectl get -o yaml` does (keys sorted), to time the YAML reader instead. The generator
writes only what gangplan reads; `--kubectl-fields` adds what a live cluster's dump also
holds (node images, conditions and nodeInfo; pod env, volumes, conditions and container
statuses), about eight times the bytes, to time loading a real dump.

`--exclusive LEVEL` gives the pods of every Godel PodGroup required at LEVEL (tor, minipod or
bigpod) JobSet's exclusive placement there (`alpha.jobset.sigs.k8s.io/exclusive-topology`:
anti-affinity to every other such group's `jobset.sigs.k8s.io/job-key`), to time the gangs kept
apart; `LEVEL:all` requires every Godel PodGroup at LEVEL first (the generator's other kinds of
group are left as they are).

A trace case lays the generated topology (tors of 16 nodes, 8 tors a miniPod, 4 miniPods a
bigPod) over a trace's node inventory, with one pending group per TRACE_GPUS_PER_GROUP GPUs
(300 groups on the 2023 trace's 6,212 GPUs).
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TRACE_SHAPE = (1, 4, 8, 16)
TRACE_GPUS_PER_GROUP = 6212 / 300
SIZES = {  # name: (shape bigPods x miniPods x tors x nodes, groups)
    "S": ((2, 4, 4, 16), 100),
    "M": ((4, 4, 8, 16), 400),
    "L": ((4, 8, 16, 16), 1500),
    "XL": ((4, 8, 20, 32), 4000),
}
MODES = {
    "greedy": ["--solver", "greedy"],
    "cp-sat": [],
    "cp-sat -w2": ["--workers", "2"],
    # Point 4 of the scale issue: what the bucket decomposition loses against the monolithic
    # node model, both forced (`--modes greedy,nodes,buckets`).
    "nodes": ["--model", "nodes"],
    "buckets": ["--model", "buckets"],
    # `--policy ordered`, one JobGroup at a time: its time limit is charged per step, not timed.
    "ordered": ["--policy", "ordered"],
}
DEFAULT_MODES = "greedy,cp-sat,cp-sat -w2"
PRIMARY_KINDS = ("quorum-demand", "job-groups", "queue-order")  # objective 1's terms, per priority level


def one(path: str, mode: str, time_limit: float) -> None:
    """Child process: load, plan, print one JSON line of figures."""
    from gangplan.cli import solver_tuning
    from gangplan.loader import load_snapshot
    from gangplan.planner import Options, plan

    args = MODES[mode]
    options = Options(
        solver="greedy" if "greedy" in args else "cp-sat",
        workers=int(args[args.index("--workers") + 1]) if "--workers" in args else 1,
        time_limit=time_limit,
        model=args[args.index("--model") + 1] if "--model" in args else "auto",
        policy=args[args.index("--policy") + 1] if "--policy" in args else "optimal",
        tuning=solver_tuning(),  # GANGPLAN_CPSAT_LOG and _PARAMS, as the CLI reads them
    )
    start = time.perf_counter()
    snapshot = load_snapshot([path])
    loaded = time.perf_counter()
    result = plan(snapshot, options)
    done = time.perf_counter()
    gpu = result.resources_after.get("nvidia.com/gpu", (0, 0))
    spans = [
        len(g.domains.get(g.preferred[-1], ())) for g in result.groups if g.placed and g.pending and g.preferred
    ]
    print(json.dumps({
        "load": loaded - start,
        "plan": done - loaded,
        "rss": peak_rss_mib(),
        "objective": [(o.name, o.value) for o in result.solver.objective if o.name.split("@")[0] in PRIMARY_KINDS],
        "gpu": 100 * gpu[0] / gpu[1] if gpu[1] else 0.0,
        "spans": statistics.mean(spans) if spans else 0.0,
        "status": result.solver.status,
        "gap": result.solver.gap,
        "gap_at": result.solver.gap_at,
        "placed": sum(1 for g in result.groups if g.pending and g.placed),
        "groups": sum(1 for g in result.groups if g.pending),
    }))


def with_kubectl_fields(snapshot: dict) -> dict:
    """The snapshot padded as a live cluster's `kubectl get nodes,pods -o yaml` is (managedFields
    hidden, kubectl's default since 1.21). Only fields gangplan does not read are added, and no
    label is changed, so the plans stay the same."""
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    images: list[dict[str, Any]] = [
        {"names": [f"registry.example.com/team{i % 7}/image-{i}@sha256:{digest(str(i))}",
                   f"registry.example.com/team{i % 7}/image-{i}:v1.{i}.0"], "sizeBytes": 10**9 + i * 7919}
        for i in range(50)  # the kubelet reports up to 50 images
    ]
    stamp = "2024-06-13T09:18:14Z"
    for obj in snapshot["items"]:
        name = obj["metadata"]["name"]
        obj["metadata"]["resourceVersion"] = str(int(digest(name)[:8], 16))
        if obj["kind"] == "Node":
            labels = obj["metadata"].setdefault("labels", {})
            for flag in ("ADX", "AESNI", "AVX", "AVX2", "AVX512BW", "AVX512F", "FMA3", "SHA", "VMX"):
                labels.setdefault(f"feature.node.kubernetes.io/cpu-cpuid.{flag}", "true")
            for key, value in {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "nvidia.com/cuda.driver.major": "535",
                               "node.kubernetes.io/instance-type": "p5.48xlarge"}.items():
                labels.setdefault(key, value)
            obj["metadata"].setdefault("annotations", {}).update({
                "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": "i-" + digest(name)[:17]}),
            })
            obj["spec"].update(podCIDR="10.1.0.0/24", providerID="aws:///us-east-1a/i-" + digest(name)[:17])
            status = obj["status"]
            status["addresses"] = [{"address": "10.0.0.1", "type": "InternalIP"}, {"address": name, "type": "Hostname"}]
            status.setdefault("conditions", []).extend(
                {"type": kind, "status": "False", "reason": reason, "message": f"kubelet has {reason[9:]}",
                 "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}
                for kind, reason in [("MemoryPressure", "KubeletHasSufficientMemory"), ("DiskPressure", "KubeletHasNoDiskPressure"),
                                     ("PIDPressure", "KubeletHasSufficientPID")]
            )
            status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
            status["images"] = [dict(image, names=list(image["names"])) for image in images]  # no YAML aliases
            status["nodeInfo"] = {
                "architecture": "amd64", "bootID": digest(name + "b")[:36], "containerRuntimeVersion": "containerd://1.7.11",
                "kernelVersion": "5.10.205-195.807.amzn2.x86_64", "kubeProxyVersion": "v1.29.0", "kubeletVersion": "v1.29.0",
                "machineID": digest(name + "m")[:32], "operatingSystem": "linux", "osImage": "Amazon Linux 2",
            }
        elif obj["kind"] == "Pod":
            spec, status = obj["spec"], obj["status"]
            for container in spec["containers"]:
                container["env"] = [{"name": f"ENV_{i}", "value": f"value-{i}"} for i in range(8)] + [
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]
                container["volumeMounts"] = [{"mountPath": "/dev/shm", "name": "dshm"},
                                             {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": True}]
                container.update(command=["torchrun", "--nproc-per-node=8", "train.py"], imagePullPolicy="IfNotPresent",
                                 terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File")
            spec.update(dnsPolicy="ClusterFirst", enableServiceLinks=True, restartPolicy="Never", serviceAccountName="default",
                        terminationGracePeriodSeconds=30)
            spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}, {"name": "kube-api-access", "projected": {
                "defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                                                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}}]}}]
            status["qosClass"] = "Burstable"
            if status.get("phase") == "Running":
                status["containerStatuses"] = [
                    {"name": c["name"], "image": c["image"], "containerID": "containerd://" + digest(name), "ready": True,
                     "restartCount": 0, "started": True, "state": {"running": {"startedAt": stamp}}, "lastState": {}}
                    for c in spec["containers"]
                ]
                status.update(hostIP="10.0.0.1", podIP="10.1.0.5", podIPs=[{"ip": "10.1.0.5"}], startTime=stamp)
    return snapshot


JOB_KEY = "jobset.sigs.k8s.io/job-key"


def with_exclusive(snapshot: dict, level: str) -> dict:
    """The snapshot with JobSet's exclusive placement at ``level`` (see the module's text): each
    member pod of a Godel PodGroup required there labelled with its ``job-key``, and each
    pending one repelling every other ``job-key`` at the level, as JobSet's webhook writes it."""
    name, _, everyone = level.partition(":")
    key = f"network.example.com/{name}"
    chosen = set()
    for item in snapshot["items"]:
        if item["kind"] != "PodGroup" or not item["apiVersion"].startswith("scheduling.orchestration.bytedance.com/"):
            continue
        required = item["spec"].get("affinity", {}).get("podGroupAffinity", {}).get("required", [])
        if everyone and not any(t.get("topologyKey") == key for t in required):
            required = [{"topologyKey": key}]
            item["spec"].setdefault("affinity", {}).setdefault("podGroupAffinity", {})["required"] = required
        if any(t.get("topologyKey") == key for t in required):
            chosen.add((item["metadata"]["namespace"], item["metadata"]["name"]))
    for item in snapshot["items"]:
        meta = item["metadata"]
        group = (meta.get("namespace"), meta.get("annotations", {}).get("godel.bytedance.com/pod-group-name"))
        if item["kind"] != "Pod" or group not in chosen:
            continue
        job = f"{group[0]}.{group[1]}"
        meta.setdefault("labels", {})[JOB_KEY] = job
        if not item["spec"].get("nodeName"):
            selector = [{"key": JOB_KEY, "operator": "Exists"}, {"key": JOB_KEY, "operator": "NotIn", "values": [job]}]
            term = {"labelSelector": {"matchExpressions": selector}, "topologyKey": key, "namespaceSelector": {}}
            item["spec"].setdefault("affinity", {})["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    return snapshot


def peak_rss_mib() -> float:
    """This process's peak resident memory. Not getrusage's ru_maxrss: on Linux that keeps, across
    exec, the RSS the parent had when it forked, so every child of a parent holding the XL
    snapshot would report at least that (a 13 MiB child of a 500 MiB parent reads 513 MiB)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere


def run(path: Path, mode: str, time_limit: float) -> dict:
    cmd = [sys.executable, __file__, "--one", str(path), mode, str(time_limit)]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{mode} on {path} failed:\n{out.stderr}")
    figures = json.loads(out.stdout.splitlines()[-1])
    figures["wall"] = time.perf_counter() - start
    return figures


def objective_text(objective: list, base: list) -> str:
    """Per priority level: JobGroups placed and quorum demand placed relative to greedy's."""
    def levels(items: list) -> dict[str, dict[str, int]]:
        found: dict[str, dict[str, int]] = {}
        for name, value in items:
            kind, level = name.split("@")
            found.setdefault(level, {})[kind] = value
        return found

    mine, theirs = levels(objective), levels(base)
    parts = []
    for level, v in mine.items():
        demand, reference = v.get("quorum-demand", 0), theirs.get(level, {}).get("quorum-demand", 0)
        ratio = f"{demand / reference:.3f}x" if reference else ("=" if demand == reference else "+")
        parts.append(f"p{level}: {v.get('job-groups', 0)} JG, demand {ratio}")
    return "; ".join(parts)


def verdict(objective: list, base: list) -> str:
    """Objective 1 against the base's, stage by stage in DESIGN's order: per priority level
    quorum demand, JobGroups, then the queue-order tie-break (which the verdict once left out)."""
    mine, theirs = ([value for name, value in items if name.split("@")[0] in PRIMARY_KINDS] for items in (objective, base))
    return "=" if mine == theirs else ("better" if mine > theirs else "WORSE")


def growth(rows: list[tuple[str, int, str, float, float]]) -> None:
    """Time and memory against node count, with the exponent between consecutive sizes."""
    print()
    print("growth against node count (time and memory exponents between consecutive sizes):")
    modes = sorted({mode for _, _, mode, _, _ in rows}, key=list(MODES).index)
    for mode in modes:
        points = [(nodes, wall, rss, case) for case, nodes, m, wall, rss in rows if m == mode and case in SIZES]
        if not points:
            continue
        text = []
        for i, (nodes, wall, rss, case) in enumerate(points):
            item = f"{case} {nodes} nodes {wall:.1f} s {rss:.0f} MiB"
            if i:
                n0, w0, r0, _ = points[i - 1]
                item += f" (time ^{math.log(wall / w0) / math.log(nodes / n0):.2f}, memory ^{math.log(rss / r0) / math.log(nodes / n0):.2f})"
            text.append(item)
        print(f"  {mode:<11} " + " -> ".join(text))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        sys.stdout.flush()
        os._exit(0)  # as gangplan's CLI leaves: without the interpreter's teardown (cli.main)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="S,M")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--modes", default=DEFAULT_MODES, help=f"comma-separated, of: {', '.join(MODES)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trace", action="append", default=[], help="a trace folder, e.g. ../shared/traces/alibaba-gpu-v2023; repeat for several")
    parser.add_argument("--format", choices=("json", "yaml"), default="json", help="how the snapshots are written")
    parser.add_argument("--kubectl-fields", action="store_true", help="pad the snapshots with what a live cluster's dump also holds")
    parser.add_argument("--exclusive", metavar="LEVEL[:all]", help="JobSet's exclusive placement at tor, minipod or bigpod (see above)")
    parser.add_argument("--workdir", help="write the snapshots to this folder and keep them (by default a temporary one, removed at the end)")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not modes or not set(modes) <= set(MODES):
        parser.error(f"--modes takes a comma-separated list of: {', '.join(MODES)}")
    sizes = [s for s in args.sizes.split(",") if s]
    if unknown := [s for s in sizes if s not in SIZES]:
        parser.error(f"argument --sizes: unknown size {unknown[0]!r}; a comma-separated list of: {', '.join(SIZES)}")
    if args.runs < 1:
        parser.error(f"argument --runs: must be at least 1, got {args.runs}")
    if args.exclusive is not None and args.exclusive.partition(":")[::2] not in {
        (level, every) for level in ("tor", "minipod", "bigpod") for every in ("", "all")
    }:
        parser.error(f"argument --exclusive: tor, minipod or bigpod, with :all or without, got {args.exclusive!r}")
    # Ratios and verdicts are against the first mode run, so greedy goes first wherever it was given.
    modes.sort(key=lambda m: m != "greedy")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from gangplan.generate import generate
    from gangplan.traces import trace_nodes

    if args.workdir:
        workdir = Path(args.workdir)
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="gangplan-bench-"))
        atexit.register(shutil.rmtree, workdir, True)

    def write(name: str, snapshot: dict) -> Path:
        path = workdir / f"{name}.{args.format}"
        if args.exclusive:
            snapshot = with_exclusive(snapshot, args.exclusive)
        if args.kubectl_fields:
            snapshot = with_kubectl_fields(snapshot)
        if args.format == "json":
            path.write_text(json.dumps(snapshot))
        else:
            import yaml

            path.write_text(yaml.dump(snapshot, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=True))
        return path

    cases = []
    for size in sizes:
        shape, groups = SIZES[size]
        path = write(size, generate(shape=shape, groups=groups, seed=args.seed))
        cases.append((size, path, shape[0] * shape[1] * shape[2] * shape[3]))
    for trace in args.trace:
        inventory = trace_nodes(trace)
        name = Path(trace).name if Path(trace).is_dir() else Path(trace).stem
        groups = round(sum(node.flavour.gpus for node in inventory) / TRACE_GPUS_PER_GROUP)
        path = write(name, generate(shape=TRACE_SHAPE, groups=groups, seed=args.seed, nodes_from=inventory))
        cases.append((name, path, len(inventory)))
    header = (
        f"{'case':<22} {'nodes':>6} {'mode':<11} {'wall s':>7} {'load s':>7} {'plan s':>7} {'MiB':>6} {'placed':>9} "
        f"{'GPU %':>6} {'spans':>6} {'status':<9} {'gap':>7} {'wall x':>7} {'mem x':>6}  objective 1 per priority vs greedy"
    )
    exclusive = f", JobSet-exclusive at {args.exclusive}" if args.exclusive else ""
    print(f"snapshots ({args.format}{', with kubectl fields' if args.kubectl_fields else ''}{exclusive}) in {workdir}")
    print(header)
    print("-" * len(header))
    if modes[0] != "greedy":
        print(f"no greedy mode: ratios and verdicts are against {modes[0]}")
    rows = []
    for case, path, nodes in cases:
        base = None
        for mode in modes:
            runs = [run(path, mode, args.time_limit) for _ in range(args.runs)]
            med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "load", "plan", "rss")}
            first = runs[0]
            if base is None:
                base = (med["wall"], med["rss"], first["objective"])
            versus = verdict(first["objective"], base[2])
            gap = "-" if first["gap"] is None else f"{100 * first['gap']:.2f}%"
            rows.append((case, nodes, mode, med["wall"], med["rss"]))
            print(
                f"{case:<22} {nodes:>6} {mode:<11} {med['wall']:>7.2f} {med['load']:>7.2f} {med['plan']:>7.2f} {med['rss']:>6.0f} "
                f"{first['placed']:>4}/{first['groups']:<4} {first['gpu']:>6.1f} {first['spans']:>6.2f} "
                f"{first['status']:<9} {gap:>7} {med['wall'] / base[0]:>7.2f} {med['rss'] / base[1]:>6.2f}  "
                f"{objective_text(first['objective'], base[2])} [{versus}]"
                + (f" gap at {first['gap_at']}" if first.get("gap_at") else ""),
                flush=True,
            )
    growth(rows)

if __name__ == "__main__":
    main()

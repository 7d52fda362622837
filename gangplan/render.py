"""Renderings of a Plan as text, for stdout or a file. Pure: strings in, strings out.

The rich table lives in the CLI (the one module that draws on a terminal); everything here
is plain data that kubectl or another tool reads.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from .plan import Plan, plan_to_dict

OUTPUTS = ("table", "json", "yaml", "name", "plan")

try:
    _Dumper: type = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Dumper = yaml.SafeDumper


def bindings_list(plan: Plan) -> dict[str, Any]:
    """A v1 List of v1 Bindings, as kube-scheduler's binder would create them.

    Pods that do not exist yet (Gang, Volcano Job, --gang) come as v1 Pods with spec.nodeName.
    """
    items = []
    for p in plan.placements:
        if p.manifest is not None:
            pod = copy.deepcopy(dict(p.manifest))
            pod["spec"] = {**pod.get("spec", {}), "nodeName": p.node}
            items.append(pod)
            continue
        metadata: dict[str, Any] = {"name": p.name, "namespace": p.namespace}
        if p.uid:
            metadata["uid"] = p.uid
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": metadata,
                "target": {"apiVersion": "v1", "kind": "Node", "name": p.node},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def to_json(data: Any) -> str:
    return json.dumps(data, indent=4, sort_keys=True, ensure_ascii=False) + "\n"


def to_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False)


def render(plan: Plan, output: str) -> str:
    """Every non-table output format."""
    if output == "json":
        return to_json(bindings_list(plan))
    if output == "yaml":
        return to_yaml(bindings_list(plan))
    if output == "name":
        return "".join(f"{'pod' if p.manifest is not None else 'binding'}/{p.name}\n" for p in plan.placements)
    if output == "plan":
        return to_json(plan_to_dict(plan))
    raise ValueError(f"unknown output {output!r}")

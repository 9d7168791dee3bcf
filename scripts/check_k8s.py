#!/usr/bin/env python3
"""Validate Kubernetes manifests against the API's schemas, as the official Python client
(`pip install kubernetes pyyaml`) models them: every document's kind must be a known API
object, every field must exist in that object's schema (the client itself would silently drop
a misspelt one, so this checks the names recursively), values must have the schema's types,
and the client's constructors must accept them (they refuse a missing required field).

Usage: check_k8s.py MANIFEST.yaml...   Exits non-zero naming the file, document and field.
"""
import re
import sys

import kubernetes.client as k8s
import yaml
from kubernetes.client import ApiClient

PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object,
              "bytes": str, "datetime": str}


def model_class(api_version, kind):
    group_version = api_version.split("/")[-1]  # apps/v1 -> v1
    name = group_version[0].upper() + group_version[1:] + kind
    cls = getattr(k8s, name, None)
    if cls is None:
        raise ValueError(f"unknown apiVersion/kind {api_version}/{kind}")
    return cls


def check(value, type_name, where):
    """Check `value` against the client's type string `type_name` (`V1PodSpec`,
    `List[V1Container]`, `Dict[str, str]`, `str`, ...; older clients write `list[...]` and
    `dict(..., ...)`)."""
    m = re.fullmatch(r"(?:list|List)\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            check(item, m.group(1), f"{where}[{i}]")
        return
    m = re.fullmatch(r"(?:dict\((.+), (.+)\)|Dict\[(.+), (.+)\])", type_name)
    if m:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected a mapping, got {type(value).__name__}")
        for k, v in value.items():
            check(v, m.group(2) or m.group(4), f"{where}.{k}")
        return
    if type_name in PRIMITIVES:
        if not isinstance(value, PRIMITIVES[type_name]) or (
                type_name == "int" and isinstance(value, bool)):
            raise ValueError(f"{where}: expected {type_name}, got {value!r}")
        return
    cls = getattr(k8s, type_name)
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a {type_name} mapping, got {value!r}")
    by_json = {json: attr for attr, json in cls.attribute_map.items()}
    for key, v in value.items():
        if key not in by_json:
            raise ValueError(f"{where}: {type_name} has no field `{key}`")
        check(v, cls.openapi_types[by_json[key]], f"{where}.{key}")


def main(paths):
    client = ApiClient()
    count = 0
    for path in paths:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        for i, doc in enumerate(docs):
            where = f"{path} document {i + 1}"
            try:
                cls = model_class(doc.get("apiVersion", ""), doc.get("kind", ""))
                check(doc, cls.__name__, f"{where} ({doc['kind']})")
                # The constructors refuse a required field left out.
                client._ApiClient__deserialize(doc, cls.__name__)
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                sys.exit(str(e) if str(e).startswith(where) else f"{where}: {e}")
            count += 1
    print(f"{count} Kubernetes objects valid")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])

"""Comparing a document with what an SDK made of it: shared by `sdk_check.py` and
`record_rest_fixtures.py`."""

from __future__ import annotations

import json
from typing import Any


def missing(inp: Any, out: Any, path: str, proto_defaults: bool) -> list[str]:
    """Where ``out`` lacks or changes something ``inp`` says."""
    problems: list[str] = []
    if isinstance(inp, dict):
        if not isinstance(out, dict):
            return [f"{path}: became {type(out).__name__}"]
        for key, value in inp.items():
            where = f"{path}.{key}" if path else key
            if key not in out:
                if value is None or (proto_defaults and value in ("", [], {}, False, 0)):
                    continue
                problems.append(f"{where}: dropped (was {json.dumps(value)[:80]})")
            else:
                problems += missing(value, out[key], where, proto_defaults)
        return problems
    if isinstance(inp, list):
        if not isinstance(out, list) or len(out) != len(inp):
            return [f"{path}: list changed ({json.dumps(inp)[:80]} -> {json.dumps(out)[:80]})"]
        for i, (a, b) in enumerate(zip(inp, out)):
            problems += missing(a, b, f"{path}[{i}]", proto_defaults)
        return problems
    if isinstance(inp, bool) or isinstance(out, bool):
        same = inp is out
    else:
        same = inp == out
    return [] if same else [f"{path}: changed {json.dumps(inp)} -> {json.dumps(out)}"]


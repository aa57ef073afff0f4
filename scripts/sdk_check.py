#!/usr/bin/env python3
"""Hands every document the bridge's encoders wrote to the real SDK of that revision.

    .venv/a2a-0.3/bin/python scripts/sdk_check.py [target/sdk-check/0.3]
    .venv/a2a-1.0/bin/python scripts/sdk_check.py [target/sdk-check/1.0]

The golden check (crates/bridge-golden, tests/it) writes each encoder output to
target/sdk-check/<revision>/<method>/<case>.json (cross-revision translations) and
<case>.roundtrip.json (same-revision re-encodings). This script parses each file with the
installed SDK's own parser and fails when

- the SDK rejects it: 0.3 pydantic validation of the JSON-RPC request/response model (or
  AgentCard); 1.0 ``json_format.ParseDict`` into the proto message the 1.0 JSON-RPC dispatcher
  or client would use, with ``ignore_unknown_fields=False``, plus the JSON-RPC envelope rules and
  the ``google.rpc.ErrorInfo`` detail array of 1.0 errors;
- the SDK silently drops or changes a field: the parsed object is serialised again with the SDK
  and every member of the input must come back with the same value (numbers compared by value;
  members the SDK adds, such as defaults, are fine; on 1.0, ProtoJSON default values ``""``,
  ``[]``, ``{}``, ``false``, ``0`` count as absent, as they do for every ProtoJSON reader).

It prints one line per failure and a final line ``sdk-check: N passed, N failed``, and exits
non-zero when anything failed or there was nothing to check.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

try:
    from a2a.types import a2a_pb2  # noqa: F401

    REV = "1.0"
except ImportError:
    REV = "0.3"


class Rejected(Exception):
    """The SDK refused the document."""


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


# ---- 0.3 -----------------------------------------------------------------------------------------


def check_03(method: str, doc: Any) -> list[str]:
    from pydantic import ValidationError
    from a2a import types as t

    results = {
        "send_message": t.SendMessageSuccessResponse,
        "send_streaming_message": t.SendStreamingMessageSuccessResponse,
        "subscribe_to_task": t.SendStreamingMessageSuccessResponse,
        "get_task": t.GetTaskSuccessResponse,
        "cancel_task": t.CancelTaskSuccessResponse,
        "create_push_config": t.SetTaskPushNotificationConfigSuccessResponse,
        "get_push_config": t.GetTaskPushNotificationConfigSuccessResponse,
        "list_push_configs": t.ListTaskPushNotificationConfigSuccessResponse,
        "delete_push_config": t.DeleteTaskPushNotificationConfigSuccessResponse,
        "get_extended_card": t.GetAuthenticatedExtendedCardSuccessResponse,
    }
    try:
        if method == "agent_card":
            model: Any = t.AgentCard.model_validate(doc)
        elif not isinstance(doc, dict):
            raise Rejected("not a JSON object")
        elif "method" in doc:
            model = t.A2ARequest.model_validate(doc).root
        elif "error" in doc:
            model = t.JSONRPCErrorResponse.model_validate(doc)
        elif "result" in doc:
            if method not in results:
                raise Rejected(f"0.3 has no {method} result")
            model = results[method].model_validate(doc)
        else:
            raise Rejected("neither a request, a result nor an error")
    except ValidationError as e:
        raise Rejected(str(e).replace("\n", " | ")) from e
    again = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    if method != "agent_card":
        expected_method = {"send_message": "message/send", "send_streaming_message": "message/stream",
                           "get_task": "tasks/get", "cancel_task": "tasks/cancel",
                           "subscribe_to_task": "tasks/resubscribe",
                           "create_push_config": "tasks/pushNotificationConfig/set",
                           "get_push_config": "tasks/pushNotificationConfig/get",
                           "list_push_configs": "tasks/pushNotificationConfig/list",
                           "delete_push_config": "tasks/pushNotificationConfig/delete",
                           "get_extended_card": "agent/getAuthenticatedExtendedCard"}.get(method)
        if "method" in doc and doc["method"] != expected_method:
            raise Rejected(f"method {doc['method']!r} is not {expected_method!r}")
        if "id" not in doc:
            raise Rejected("no id")
    return missing(doc, again, "", proto_defaults=False)


# ---- 1.0 -----------------------------------------------------------------------------------------


def check_10(method: str, doc: Any) -> list[str]:
    from google.protobuf import json_format
    from google.rpc import error_details_pb2
    from a2a.types import a2a_pb2 as pb
    from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

    def parse(value: Any, message: Any) -> dict:
        try:
            json_format.ParseDict(value, message, ignore_unknown_fields=False)
        except json_format.ParseError as e:
            raise Rejected(f"{type(message).__name__}: " + str(e).replace("\n", " ")) from e
        return json_format.MessageToDict(message, preserving_proto_field_name=False)

    if method == "agent_card":
        return missing(doc, parse(doc, pb.AgentCard()), "", True)
    if not isinstance(doc, dict) or doc.get("jsonrpc") != "2.0" or "id" not in doc:
        raise Rejected("not a JSON-RPC 2.0 message with an id")
    if "method" in doc:
        names = {"send_message": "SendMessage", "send_streaming_message": "SendStreamingMessage",
                 "get_task": "GetTask", "list_tasks": "ListTasks", "cancel_task": "CancelTask",
                 "subscribe_to_task": "SubscribeToTask",
                 "create_push_config": "CreateTaskPushNotificationConfig",
                 "get_push_config": "GetTaskPushNotificationConfig",
                 "list_push_configs": "ListTaskPushNotificationConfigs",
                 "delete_push_config": "DeleteTaskPushNotificationConfig",
                 "get_extended_card": "GetExtendedAgentCard"}
        if doc["method"] != names.get(method):
            raise Rejected(f"method {doc['method']!r} is not {names.get(method)!r}")
        model = JsonRpcDispatcher.METHOD_TO_MODEL[doc["method"]]
        params = doc.get("params", {})
        return missing(params, parse(params, model()), "params", True)
    if "error" in doc:
        error = doc["error"]
        if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
            raise Rejected("error without an integer code and a string message")
        data = error.get("data")
        if not isinstance(data, list) or not data:
            raise Rejected("1.0 error without a google.protobuf.Any data array")
        problems: list[str] = []
        kinds = {"type.googleapis.com/google.rpc.ErrorInfo": error_details_pb2.ErrorInfo,
                 "type.googleapis.com/google.rpc.BadRequest": error_details_pb2.BadRequest}
        if data[0].get("@type") != "type.googleapis.com/google.rpc.ErrorInfo":
            raise Rejected("the first data entry is not a google.rpc.ErrorInfo")
        for i, detail in enumerate(data):
            cls = kinds.get(detail.get("@type"))
            if cls is None:
                continue
            body = {k: v for k, v in detail.items() if k != "@type"}
            problems += missing(body, parse(body, cls()), f"error.data[{i}]", True)
        return problems
    if "result" not in doc:
        raise Rejected("neither a request, a result nor an error")
    result = doc["result"]
    if method == "delete_push_config":
        if result not in (None, {}):
            raise Rejected("DeleteTaskPushNotificationConfig result is not null or {}")
        return []
    models = {"send_message": pb.SendMessageResponse, "send_streaming_message": pb.StreamResponse,
              "subscribe_to_task": pb.StreamResponse, "get_task": pb.Task, "cancel_task": pb.Task,
              "list_tasks": pb.ListTasksResponse, "create_push_config": pb.TaskPushNotificationConfig,
              "get_push_config": pb.TaskPushNotificationConfig,
              "list_push_configs": pb.ListTaskPushNotificationConfigsResponse,
              "get_extended_card": pb.AgentCard}
    return missing(result, parse(result, models[method]()), "result", True)


def main() -> int:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "sdk-check" / REV
    files = sorted(base.glob("*/*.json"))
    check = check_03 if REV == "0.3" else check_10
    passed, failures = 0, []
    for path in files:
        rel = path.relative_to(base)
        try:
            doc = json.loads(path.read_text())
            problems = check(path.parent.name, doc)
        except Rejected as e:
            problems = [f"rejected: {e}"]
        except json.JSONDecodeError as e:
            problems = [f"not JSON: {e}"]
        if problems:
            failures.append((rel, problems))
        else:
            passed += 1
    for rel, problems in failures:
        for problem in problems:
            print(f"FAIL {REV}/{rel}: {problem}")
    if not files:
        print(f"sdk-check: no files under {base} (run cargo test -p bridge-golden first)")
    print(f"sdk-check: {passed} passed, {len(failures)} failed")
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())

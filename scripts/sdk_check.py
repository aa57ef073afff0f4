#!/usr/bin/env python3
"""Hands every document the bridge's encoders wrote to the real SDK of that revision.

    .venv/a2a-0.3/bin/python scripts/sdk_check.py [target/sdk-check/0.3]        # JSON-RPC
    .venv/a2a-1.0/bin/python scripts/sdk_check.py [target/sdk-check/1.0]
    .venv/a2a-0.3/bin/python scripts/sdk_check.py target/sdk-check/rest/0.3     # HTTP+JSON (REST)
    .venv/a2a-1.0/bin/python scripts/sdk_check.py target/sdk-check/rest/1.0
    .venv/a2a-1.0/bin/python scripts/sdk_check.py --rest                        # = target/sdk-check/rest/<rev>

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

REST mode (the directory path has a ``rest`` component, or ``--rest``): the files are
target/sdk-check/rest/<revision>/<method>/<case>[.roundtrip|.binding].json in the fixture format of
tests/fixtures/rest (request ``{method, path, query, body}``, response/error ``{status, body}``,
event ``{data}``); the kind comes from tests/fixtures/rest/manifest.json by method and case. Each
file goes through the SDK's own REST code (scripts/record_rest_fixtures.py drives it):

- request: the body must parse strictly (unknown fields rejected) into the message the SDK's
  RestTransport writes for the method (methods whose client sends no body must have none); the
  request is sent in-process (httpx.ASGITransport, 1.0 with ``A2A-Version: 1.0``) to the SDK's
  REST server app (0.3 ``A2ARESTFastAPIApplication``, 1.0 ``create_rest_routes``) with a handler
  stub, which must be reached for that method; what the handler got (1.0: with the path's tenant
  from the call context) is handed back to the SDK's RestTransport, and the request it writes
  must have the same method and path and every query and body member of the input (ProtoJSON
  defaults count as absent). A body member the SDK server never reads (the handler gets the same
  thing without it, e.g. 1.0 cancel's metadata or 0.3 ``config.name``) is not counted as dropped;
  it has passed the strict parse.
- response / event: the body (event: the data, sent as one SSE ``data:`` line) must parse strictly
  into the message RestTransport reads (0.3 /v1/card: the pydantic AgentCard); RestTransport,
  answered through httpx.MockTransport, must return it; the handler stub returns (yields) what
  the client returned, and the SDK server app's answer must keep every input member. Responses
  must be status 200.
- error: 0.3 ``{"message": <string>}`` under a status of ``A2AErrorToHttpStatus``, for which
  RestTransport must raise ``A2AClientHTTPError`` with that status (resubscribe reads any non-SSE
  answer as 400); 1.0 ``{"error": {code, status, message, details}}`` whose ErrorInfo /
  BadRequest details parse strictly, whose ErrorInfo reason RestTransport maps to an A2A error
  (raised by the client call), with status, ``code`` and ``status`` as ``A2A_ERROR_MAPPING``
  says. Then the SDK server app renders that error (message, ErrorInfo metadata) again and must
  keep every input member (the 0.3 app renders errors of streaming methods on no route, so those
  are rendered through message:send).

Files of a method the SDK has no REST client for (0.3: list_tasks, list_push_configs,
delete_push_config; see the manifest's ``skipped`` reasons) cannot be checked: each is reported
on a ``SKIP`` line and counted neither as passed nor as failed.

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


sys.path.insert(0, str(Path(__file__).resolve().parent))

from documents import missing  # noqa: E402


class Rejected(Exception):
    """The SDK refused the document."""


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


# ---- REST (HTTP+JSON) ----------------------------------------------------------------------------

# The message the SDK's REST client writes as the body of each method (0.3 rest.py: a2a.grpc
# a2a_pb2 requests; 1.0 rest.py: MessageToDict(request)); methods not listed send no body.
REST_BODIES = {
    "0.3": {"send_message": "SendMessageRequest", "send_streaming_message": "SendMessageRequest",
            "cancel_task": "CancelTaskRequest", "create_push_config": "CreateTaskPushNotificationConfigRequest"},
    "1.0": {"send_message": "SendMessageRequest", "send_streaming_message": "SendMessageRequest",
            "cancel_task": "CancelTaskRequest", "create_push_config": "TaskPushNotificationConfig"},
}
# The message the SDK's REST client parses each answer into (0.3 /v1/card: the pydantic AgentCard).
REST_ANSWERS = {
    "0.3": {"send_message": "SendMessageResponse", "get_task": "Task", "cancel_task": "Task",
            "create_push_config": "TaskPushNotificationConfig", "get_push_config": "TaskPushNotificationConfig",
            "send_streaming_message": "StreamResponse", "subscribe_to_task": "StreamResponse"},
    "1.0": {"send_message": "SendMessageResponse", "get_task": "Task", "cancel_task": "Task",
            "list_tasks": "ListTasksResponse", "create_push_config": "TaskPushNotificationConfig",
            "get_push_config": "TaskPushNotificationConfig",
            "list_push_configs": "ListTaskPushNotificationConfigsResponse", "get_extended_card": "AgentCard",
            "send_streaming_message": "StreamResponse", "subscribe_to_task": "StreamResponse"},
}
REST_KEYS = {"request": {"method", "path", "query", "body"}, "response": {"status", "body"},
             "error": {"status", "body"}, "event": {"data"}}


def rest_pb() -> Any:
    if REV == "0.3":
        from a2a.grpc import a2a_pb2 as pb
    else:
        from a2a.types import a2a_pb2 as pb
    return pb


def rest_strict(value: Any, name: str, where: str) -> dict:
    """ParseDict with unknown fields rejected; returns the SDK's re-serialisation."""
    from google.protobuf import json_format

    message = getattr(rest_pb(), name)()
    try:
        json_format.ParseDict(value, message, ignore_unknown_fields=False)
    except json_format.ParseError as e:
        raise Rejected(f"{where} is no {name}: " + str(e).replace("\n", " ")) from e
    return json_format.MessageToDict(message)


def query_members(query: str | None) -> dict:
    from urllib.parse import parse_qs

    return {k: v if len(v) > 1 else v[0] for k, v in parse_qs(query or "", keep_blank_values=True).items()}


async def rest_request(rr: Any, sdk: Any, method: str, doc: dict) -> list[str]:
    from urllib.parse import unquote

    if not isinstance(doc["method"], str) or not isinstance(doc["path"], str) or not doc["path"].startswith("/"):
        raise Rejected("method and path must be strings, the path absolute")
    if doc["query"] is not None and not isinstance(doc["query"], str):
        raise Rejected("query must be a string or null")
    body_type = REST_BODIES[REV].get(method)
    if doc["body"] is not None:
        if body_type is None:
            raise Rejected(f"the SDK's REST binding sends no body for {method}")
        own = missing(doc["body"], rest_strict(doc["body"], body_type, "body"), "body", True)
        if own:
            return own
    answer, label, params, context = await rr.handler_reached(sdk, doc)
    if label is None:
        raise Rejected(f"the SDK app reached no handler: {answer}")
    if label != method:
        raise Rejected(f"the SDK app routed {doc['method']} {doc['path']} to {label}, not {method}")
    again = await rr.capture_request(sdk, method, sdk.reencode_params(method, params, context))
    problems: list[str] = []
    if again["method"] != doc["method"] or unquote(again["path"]) != unquote(doc["path"]):
        problems.append(f"the SDK would send what its handler got as {again['method']} {again['path']}, "
                        f"not {doc['method']} {doc['path']}")
    problems += missing(query_members(doc["query"]), query_members(again["query"]), "query", True)
    if doc["body"] is None:
        return problems
    view = sdk.handler_view(label, params, context)
    for problem in missing(doc["body"], again["body"], "body", True):
        # A member the SDK's server never reads (1.0 cancel's metadata, 0.3 config.name) cannot
        # reach the handler whatever it says; it passed the strict parse, so it is not a failure.
        if not await rest_unread(rr, sdk, method, doc, problem, view):
            problems.append(problem)
    return problems


async def rest_unread(rr: Any, sdk: Any, method: str, doc: dict, problem: str, view: Any) -> bool:
    """Whether the handler gets the same thing with the member ``problem`` names removed."""
    import copy
    import re

    tokens = re.findall(r"\.([^.\[:]+)|\[(\d+)\]", problem.split(": ", 1)[0][len("body"):])
    if not tokens:
        return False
    body = copy.deepcopy(doc["body"])
    node = body
    try:
        for key, index in tokens[:-1]:
            node = node[key] if key else node[int(index)]
        key, index = tokens[-1]
        del node[key if key else int(index)]
    except (KeyError, IndexError, TypeError):
        return False
    _, label, params, context = await rr.handler_reached(sdk, {**doc, "body": body})
    return label == method and sdk.handler_view(label, params, context) == view


def rest_status(doc: dict, ok: bool) -> None:
    status = doc["status"]
    if not isinstance(status, int) or isinstance(status, bool):
        raise Rejected("status must be an integer")
    if ok and status != 200:
        raise Rejected(f"status {status}: the SDK app answers 200")
    if not ok and status < 400:
        raise Rejected(f"status {status} is no error status")


async def rest_read(rr: Any, sdk: Any, cases: list, method: str, kind: str, doc: dict) -> Any:
    try:
        return await rr.client_read(sdk, method, kind, doc, rr.client_params(sdk, cases, method))
    except Exception as e:  # noqa: BLE001
        raise Rejected(f"the SDK client raised {type(e).__name__}: {str(e)[:300]}") from e


async def rest_response(rr: Any, sdk: Any, cases: list, method: str, doc: dict) -> list[str]:
    rest_status(doc, ok=True)
    body = doc["body"]
    card03 = REV == "0.3" and method == "get_extended_card"
    if method == "delete_push_config":
        if body not in ({}, None):
            raise Rejected("the SDK answers DeleteTaskPushNotificationConfig with {}")
    elif not card03:
        rest_strict(body, REST_ANSWERS[REV][method], "body")
    got = await rest_read(rr, sdk, cases, method, "response", doc)
    trig = await rr.trigger(sdk, cases, method, keep_query=True)
    again = await rr.serve_answer(sdk, method, "response", sdk.handler_value(method, got), trig)
    return missing(body, again["body"], "body", not card03)


async def rest_event(rr: Any, sdk: Any, cases: list, method: str, doc: dict) -> list[str]:
    rest_strict(doc["data"], "StreamResponse", "data")
    got = await rest_read(rr, sdk, cases, method, "event", doc)
    if len(got) != 1:
        raise Rejected(f"the SDK client read {len(got)} events from one data line")
    trig = await rr.trigger(sdk, cases, method, keep_query=True)
    again = await rr.serve_answer(sdk, method, "event", sdk.handler_value(method, got[0]), trig)
    return missing(doc["data"], again["data"], "data", True)


async def rest_error(rr: Any, sdk: Any, cases: list, method: str, doc: dict) -> list[str]:
    rest_status(doc, ok=False)
    status, body = doc["status"], doc["body"]
    trig = await rr.trigger(sdk, cases, method, keep_query=True)
    if REV == "0.3":
        from a2a.client.errors import A2AClientHTTPError
        from a2a.utils.error_handlers import A2AErrorToHttpStatus
        from a2a.utils.errors import ServerError

        classes = sorted((c for c, s in A2AErrorToHttpStatus.items() if s == status), key=lambda c: c.__name__)
        if not classes:
            raise Rejected(f"no 0.3 SDK error is answered with status {status}")
        if not isinstance(body, dict) or not isinstance(body.get("message"), str):
            raise Rejected("a 0.3 SDK error body is {\"message\": <string>}")
        try:
            await rr.client_read(sdk, method, "error", doc, rr.client_params(sdk, cases, method))
        except A2AClientHTTPError as e:
            # resubscribe reads any non-SSE answer as an SSE protocol error (400).
            if e.status_code != status and method != "subscribe_to_task":
                raise Rejected(f"the SDK client raised A2AClientHTTPError({e.status_code}), not {status}") from e
        except Exception as e:  # noqa: BLE001
            raise Rejected(f"the SDK client raised {type(e).__name__}: {str(e)[:200]}") from e
        else:
            raise Rejected("the SDK client raised nothing")
        exc = ServerError(error=classes[0](message=body["message"]))
        if method in rr.STREAMING:  # the 0.3 app renders errors on unary routes only
            method = "send_message"
            trig = await rr.trigger(sdk, cases, method)
        again = await rr.serve_answer(sdk, method, "error", exc, trig)
        problems = missing(body, again["body"], "body", False)
    else:
        from google.rpc import error_details_pb2
        from google.protobuf import json_format
        from a2a.client.transports.rest import _parse_rest_error
        from a2a.utils.errors import A2A_ERROR_MAPPING

        if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict):
            raise Rejected("a 1.0 SDK error body is {\"error\": {code, status, message, details}}")
        err = body["error"]
        extra = set(err) - {"code", "status", "message", "details"}
        if extra:
            raise Rejected(f"error has unknown members {sorted(extra)}")
        kinds = {"type.googleapis.com/google.rpc.ErrorInfo": error_details_pb2.ErrorInfo,
                 "type.googleapis.com/google.rpc.BadRequest": error_details_pb2.BadRequest}
        problems = []
        for i, detail in enumerate(err.get("details") or []):
            cls = kinds.get(detail.get("@type")) if isinstance(detail, dict) else None
            if cls is None:
                continue
            value = {k: v for k, v in detail.items() if k != "@type"}
            try:
                json_format.ParseDict(value, cls(), ignore_unknown_fields=False)
            except json_format.ParseError as e:
                raise Rejected(f"error.details[{i}] is no {cls.__name__}: " + str(e).replace("\n", " ")) from e
        mapped = _parse_rest_error(body, "")
        if mapped is None or type(mapped) not in A2A_ERROR_MAPPING:
            raise Rejected("the SDK client finds no A2A error in the body (no ErrorInfo with a known reason)")
        mapping = A2A_ERROR_MAPPING[type(mapped)]
        if status != mapping.http_code or err.get("code") != mapping.http_code or err.get("status") != mapping.grpc_status:
            problems.append(f"{type(mapped).__name__} is {mapping.http_code} {mapping.grpc_status} in the SDK, "
                            f"not {status} / {err.get('code')} {err.get('status')}")
        try:
            await rr.client_read(sdk, method, "error", doc, rr.client_params(sdk, cases, method))
        except type(mapped):
            pass
        except Exception as e:  # noqa: BLE001
            raise Rejected(f"the SDK client raised {type(e).__name__}, not {type(mapped).__name__}") from e
        else:
            raise Rejected("the SDK client raised nothing")
        exc = type(mapped)(message=err.get("message"), data=mapped.data)
        again = await rr.serve_answer(sdk, method, "error", exc, trig)
        if again["status"] != status:
            problems.append(f"the SDK app answers {type(mapped).__name__} with {again['status']}, not {status}")
        problems += missing(body, again["body"], "body", True)
    return problems


def check_rest(rr: Any, sdk: Any, cases: list, kinds: dict, method: str, case: str, doc: Any) -> list[str]:
    import asyncio

    kind = kinds.get((method, case))
    if kind is None:
        raise Rejected(f"{method}/{case} is not in tests/fixtures/rest/manifest.json")
    if not isinstance(doc, dict) or set(doc) != REST_KEYS[kind]:
        raise Rejected(f"a REST {kind} document has exactly the members {sorted(REST_KEYS[kind])}")
    check = {"request": rest_request, "response": rest_response, "event": rest_event, "error": rest_error}[kind]
    args = (rr, sdk, method, doc) if kind == "request" else (rr, sdk, cases, method, doc)
    return asyncio.run(check(*args))


def sdk_drops(problem: str) -> bool:
    """What the SDK's REST code drops from every document, whoever wrote it, so a document that
    carries it is not at fault: a2a-sdk 0.3.26 converts a TaskStatus to and from the proto
    without its ``timestamp`` (``proto_utils.ToProto.task_status`` / ``FromProto.task_status``
    copy state and message only), although the 0.3 proto has the field; a2a-sdk 1.3.0 reads an
    error into its exception class by the ``ErrorInfo`` reason alone, so a further detail (a
    ``google.rpc.BadRequest`` naming the field) does not come back when it renders the error
    again (the reason, status and message are still checked by ``rest_error``)."""
    where, _, what = problem.partition(": ")
    if REV == "0.3":
        return where.endswith("status.timestamp") and what.startswith("dropped")
    return where == "body.error.details" and what.startswith("list changed")


def rest_main(base: Path) -> int:
    import logging

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import record_rest_fixtures as rr

    logging.disable(logging.CRITICAL)  # the SDK logs every error it renders
    sdk = rr.Sdk03() if REV == "0.3" else rr.Sdk10()
    manifest = json.loads((rr.REST_FIXTURES / "manifest.json").read_text())
    kinds = {(c["method"], c["case"]): c["kind"] for c in manifest["cases"]}
    cases = rr.jsonrpc_cases()
    reasons = {(s["method"], s["case"]): s["reason"] for s in manifest["skipped"] if s["revision"] == REV}
    unsupported = {m: r for (m, _), r in sorted(reasons.items(), reverse=True) if m not in sdk.CLIENT}
    files = sorted(base.glob("*/*.json"))
    skipped, checkable = [], []
    for path in files:
        case = path.name.split(".", 1)[0]  # <case>[.roundtrip|.binding].json
        if path.parent.name in unsupported:
            reason = reasons.get((path.parent.name, case), unsupported[path.parent.name])
            skipped.append((path.relative_to(base), reason))
        else:
            checkable.append(path)
    for rel, reason in skipped:
        print(f"SKIP rest/{REV}/{rel}: the SDK cannot check it: {reason}")

    def one(path: Path, doc: Any) -> list[str]:
        problems = check_rest(rr, sdk, cases, kinds, path.parent.name, path.name.split(".", 1)[0], doc)
        return [p for p in problems if not sdk_drops(p)]

    return run(base, checkable, one, f"rest/{REV}", found=bool(files))


def run(base: Path, files: list[Path], check: Any, label: str, found: bool | None = None) -> int:
    """Checks each file with ``check(path, document)``, prints a line per failure and the tally,
    and answers the exit status: non-zero on a failure or when there was nothing to check."""
    passed, failures = 0, []
    for path in files:
        try:
            problems = check(path, json.loads(path.read_text()))
        except Rejected as e:
            problems = [f"rejected: {e}"]
        except json.JSONDecodeError as e:
            problems = [f"not JSON: {e}"]
        if problems:
            failures.append((path.relative_to(base), problems))
        else:
            passed += 1
    for rel, problems in failures:
        for problem in problems:
            print(f"FAIL {label}/{rel}: {problem}")
    found = bool(files) if found is None else found
    if not found:
        print(f"sdk-check: no files under {base} (run cargo test -p bridge-golden first)")
    print(f"sdk-check: {passed} passed, {len(failures)} failed")
    return 1 if failures or not found else 0

def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--rest"]
    rest = "--rest" in sys.argv[1:]
    if args:
        base = Path(args[0])
        rest = rest or "rest" in base.resolve().parts
    else:
        base = ROOT / "target" / "sdk-check" / ("rest" if rest else "") / REV
    if rest:
        return rest_main(base)
    check = check_03 if REV == "0.3" else check_10
    return run(base, sorted(base.glob("*/*.json")), lambda path, doc: check(path.parent.name, doc), REV)

if __name__ == "__main__":
    sys.exit(main())

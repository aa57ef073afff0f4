#!/usr/bin/env python3
"""Records the golden HTTP+JSON ("REST") fixtures of a2a-bridge from the two pinned SDKs.

Run once under each pinned SDK environment, after record_fixtures.py (see record_fixtures.sh):

    .venv/a2a-0.3/bin/python scripts/record_rest_fixtures.py   # writes tests/fixtures/rest/*/*.0.3.json
    .venv/a2a-1.0/bin/python scripts/record_rest_fixtures.py   # writes tests/fixtures/rest/*/*.1.0.json

Nothing is typed by hand. For every JSON-RPC fixture case of the running revision
(tests/fixtures/manifest.json and tests/fixtures/<method>/<case>.<rev>.json) the JSON-RPC
document is parsed with the SDK's own models (0.3: the pydantic request/response models of
``a2a.types``; 1.0: ``json_format.ParseDict`` into the ``a2a_pb2`` message the 1.0 JSON-RPC
dispatcher uses) and the SDK's REST code writes the REST form:

- requests: the SDK's REST client transport (``a2a.client.transports.rest.RestTransport`` in
  both SDKs) is called with the parsed params over an ``httpx.AsyncClient`` whose
  ``httpx.MockTransport`` captures the outgoing request (method, path below ``BASE_URL``, raw
  query string, JSON body) and answers ``{}`` (an empty event stream for streams);
- responses, events, errors: the SDK's REST server app (0.3 ``A2ARESTFastAPIApplication``; 1.0
  ``create_rest_routes`` in a Starlette app) is driven in-process through
  ``httpx.ASGITransport`` with a request handler stub whose method for the operation returns the
  parsed result, yields the one event, or raises the SDK error built from the JSON-RPC error's
  code, message and data. The app is reached with the REST request the SDK client writes for the
  method's first request case (query string left out). Status and JSON body are captured; for
  events, the JSON of the SSE event's data.

Then every recorded document is read back by the SDK's other REST side (requests by the server
app into the handler stub, answers by the client transport) and compared with the JSON-RPC
fixture it came from; what does not survive becomes the manifest ``note`` of that revision.

Cases the REST binding of a revision cannot carry are not written; ``SKIPS`` below says why, and
the manifest lists them. tests/fixtures/rest/manifest.json is merged: each run replaces only its
own revision's part (``revisions``, ``recorded_from``, ``note`` entries and ``skipped`` rows), so
after both runs the file is the same whatever the order. Output is deterministic (sorted keys,
indent 2, trailing newline). The script deletes its revision's REST fixtures before writing.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
REST_FIXTURES = FIXTURES / "rest"
BASE_URL = "http://agent.test"

sys.path.insert(0, str(Path(__file__).resolve().parent))

from documents import missing  # noqa: E402

try:
    from a2a.types import a2a_pb2  # noqa: F401

    REV = "1.0"
except ImportError:
    REV = "0.3"

STREAMING = ("send_streaming_message", "subscribe_to_task")


class RecordingError(Exception):
    """The SDK did not behave as the recorder expects."""


# --------------------------------------------------------------------------------------------
# What the REST binding of a revision cannot carry (read from the SDK sources)
# --------------------------------------------------------------------------------------------

_LIST03 = ("a2a-sdk 0.3.26 has no ListTasks: the 0.3 REST app routes GET /v1/tasks to "
           "RESTHandler.list_tasks, which raises NotImplementedError, RestTransport has no list "
           "method, and there is no 0.3 JSON-RPC fixture")
_LISTP03_REQ = ("a2a-sdk 0.3.26 RestTransport has no method for ListTaskPushNotificationConfig "
                "(the client cannot write the request)")
_LISTP03_RES = ("the 0.3 REST app routes GET /v1/tasks/{id}/pushNotificationConfigs to "
                "RESTHandler.list_push_notifications, which raises NotImplementedError (answered "
                "500 {\"message\": \"unknown exception\"}); no handler result reaches the wire")
_DELP03 = ("a2a-sdk 0.3.26 has no REST DeleteTaskPushNotificationConfig: RESTAdapter.routes() has "
           "no DELETE route and RestTransport no delete method")
_STREAM_ERR03 = ("the 0.3 REST app cannot answer a streaming method with an error: "
                 "RESTAdapter._handle_streaming_request returns the EventSourceResponse before the "
                 "handler runs, so the answer is already 200 text/event-stream when the handler "
                 "raises; the ServerError escapes the app and the client sees an empty stream")
_PARSE10 = ("JSONParseError (-32700) has no entry in a2a-sdk 1.3.0's A2A_ERROR_MAPPING: raised "
            "from a handler the REST app answers 500 INTERNAL with reason UNKNOWN_ERROR, which "
            "RestTransport cannot map back to an error; a body the app cannot parse is answered "
            "400 INVALID_ARGUMENT with reason INVALID_REQUEST and the protobuf parser's message")


def skip_reason(method: str, case: str, kind: str) -> str | None:
    """Why (method, case) has no REST form in the running revision, or None."""
    if REV == "0.3":
        if method == "list_tasks":
            return _LIST03
        if method == "list_push_configs":
            return _LISTP03_REQ if kind == "request" else _LISTP03_RES
        if method == "delete_push_config":
            return _DELP03
        if method in STREAMING and kind == "error":
            return _STREAM_ERR03
    else:
        if kind == "error" and case == "error_parse_error":
            return _PARSE10
    return None


async def verify_skip(sdk: Any, cases: list[dict], method: str, kind: str, reason: str) -> None:
    """Checks that the installed SDK still behaves as the skip reason says."""
    import httpx
    from a2a.client.transports.rest import RestTransport

    def fail(what: str) -> None:
        raise RecordingError(f"{method}: the skip reason no longer holds ({what}): {reason}")

    async def answer(app: Any, verb: str, path: str) -> httpx.Response:
        return await call_app(sdk, app, {"method": verb, "path": path, "query": None, "body": None})

    if reason in (_LIST03, _LISTP03_REQ, _LISTP03_RES, _DELP03):
        from a2a.server.apps.rest.rest_adapter import RESTAdapter

        stub = sdk.stub()
        routes = RESTAdapter(agent_card=sdk.card, http_handler=stub).routes()
        word = "delete" if method == "delete_push_config" else "list"
        if any(word in name for name in dir(RestTransport)):
            fail(f"RestTransport has a {word} method")
        if method == "delete_push_config":
            if any(verb == "DELETE" for _, verb in routes):
                fail("there is a DELETE route")
            return
        path = "/v1/tasks" if method == "list_tasks" else "/v1/tasks/{id}/pushNotificationConfigs"
        if (path, "GET") not in routes:
            fail(f"no GET {path} route")
        got = await answer(sdk.app(stub), "GET", path.replace("{id}", "task-1"))
        if got.status_code != 500 or got.json() != {"message": "unknown exception"} or stub.calls:
            fail(f"GET {path} answered {got.status_code} {got.text}")
    elif reason == _STREAM_ERR03:
        from a2a import types as t
        from a2a.utils.errors import ServerError

        stub = sdk.stub()
        stub.behaviour[method] = ("raise", ServerError(error=t.InternalError()))
        trig = await trigger(sdk, cases, method)
        app = sdk.app(stub)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
                                     base_url=BASE_URL) as http:
            got = await http.request(trig["method"], url_of(trig), json=trig["body"])
        if got.status_code != 200 or "text/event-stream" not in got.headers.get("content-type", "") or got.text:
            fail(f"the app answered {got.status_code} {got.headers.get('content-type')} {got.text!r}")
    elif reason == _PARSE10:
        from a2a.client.transports.rest import _parse_rest_error
        from a2a.utils.errors import JSONParseError

        got = await serve_answer(sdk, method, "error", JSONParseError(), await trigger(sdk, cases, method))
        err = got["body"]["error"]
        if got["status"] != 500 or err["status"] != "INTERNAL" or err["details"][0]["reason"] != "UNKNOWN_ERROR" \
                or _parse_rest_error(got["body"], "") is not None:
            fail(f"the app answered {got}")
    else:
        fail("no check for this reason")


# --------------------------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------------------------


def canonical(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def jsonrpc_cases() -> list[dict]:
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    return [c for c in manifest["cases"] if c["method"] != "agent_card"]


def jsonrpc_doc(method: str, case: str) -> Any:
    return json.loads((FIXTURES / method / f"{case}.{REV}.json").read_text())


def http_doc(request: Any) -> dict:
    """The fixture form of an outgoing httpx.Request."""
    raw = request.url.raw_path.decode("ascii")
    path = raw.split("?", 1)[0]
    base_path = BASE_URL.split("://", 1)[1].partition("/")[2]
    if base_path:
        path = path[len(base_path) + 1:]
    query = request.url.query.decode("ascii") or None
    content = request.content
    return {"method": request.method, "path": path, "query": query,
            "body": json.loads(content) if content else None}


def sse_events(text: str) -> list[tuple[str, str]]:
    """(event name, data) of each event of an SSE body (multi-line data joined with \\n)."""
    events: list[tuple[str, str]] = []
    name, data = "message", []
    for line in text.splitlines() + [""]:
        if not line:
            if data:
                events.append((name, "\n".join(data)))
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)
    return events


def sse_body(data: Any) -> bytes:
    return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


def url_of(doc: dict) -> str:
    return BASE_URL + doc["path"] + ("?" + doc["query"] if doc.get("query") else "")


# --------------------------------------------------------------------------------------------
# The request handler stub (either SDK)
# --------------------------------------------------------------------------------------------


def make_stub(base: type, names: dict[str, str]) -> Any:
    """A RequestHandler whose every method records its call and then does what
    ``stub.behaviour[label]`` says: ("return", value), ("yield", event) or ("raise", exc)."""

    def unary(label: str) -> Any:
        async def method(self: Any, params: Any, context: Any = None, *args: Any, **kw: Any) -> Any:
            self.calls.append((label, params, context))
            kind, value = self.behaviour.get(label, ("return", None))
            if kind == "raise":
                raise value
            return value

        return method

    def stream(label: str) -> Any:
        async def method(self: Any, params: Any, context: Any = None, *args: Any, **kw: Any) -> Any:
            self.calls.append((label, params, context))
            kind, value = self.behaviour.get(label, ("yield", None))
            if kind == "raise":
                raise value
            if value is not None:
                yield value

        return method

    attrs: dict[str, Any] = {}
    for attr, label in names.items():
        attrs[attr] = stream(label) if label in STREAMING else unary(label)
    cls = type("StubRequestHandler", (base,), attrs)
    cls.__abstractmethods__ = frozenset()
    stub = cls()
    stub.calls = []
    stub.behaviour = {}
    return stub


# --------------------------------------------------------------------------------------------
# a2a-sdk 0.3
# --------------------------------------------------------------------------------------------


class Sdk03:
    rev = "0.3"
    headers: dict[str, str] = {}
    proto_defaults = False

    HANDLER = {"on_get_task": "get_task", "on_cancel_task": "cancel_task",
               "on_message_send": "send_message", "on_message_send_stream": "send_streaming_message",
               "on_set_task_push_notification_config": "create_push_config",
               "on_get_task_push_notification_config": "get_push_config",
               "on_resubscribe_to_task": "subscribe_to_task",
               "on_list_task_push_notification_config": "list_push_configs",
               "on_delete_task_push_notification_config": "delete_push_config"}
    CLIENT = {"send_message": "send_message", "send_streaming_message": "send_message_streaming",
              "get_task": "get_task", "cancel_task": "cancel_task", "subscribe_to_task": "resubscribe",
              "create_push_config": "set_task_callback", "get_push_config": "get_task_callback",
              "get_extended_card": "get_card"}
    SERVER = {"send_message": "RESTHandler.on_message_send",
              "send_streaming_message": "RESTHandler.on_message_send_stream",
              "get_task": "RESTHandler.on_get_task", "cancel_task": "RESTHandler.on_cancel_task",
              "subscribe_to_task": "RESTHandler.on_resubscribe_to_task",
              "create_push_config": "RESTHandler.set_push_notification",
              "get_push_config": "RESTHandler.get_push_notification",
              "get_extended_card": "RESTAdapter.handle_authenticated_agent_card"}

    def __init__(self) -> None:
        from a2a import types as t

        self.t = t
        self.results = {
            "send_message": t.SendMessageSuccessResponse,
            "send_streaming_message": t.SendStreamingMessageSuccessResponse,
            "subscribe_to_task": t.SendStreamingMessageSuccessResponse,
            "get_task": t.GetTaskSuccessResponse,
            "cancel_task": t.CancelTaskSuccessResponse,
            "create_push_config": t.SetTaskPushNotificationConfigSuccessResponse,
            "get_push_config": t.GetTaskPushNotificationConfigSuccessResponse,
            "get_extended_card": t.GetAuthenticatedExtendedCardSuccessResponse,
        }
        self.card = t.AgentCard.model_validate(
            json.loads((FIXTURES / "agent_card" / f"legacy_interfaces.{self.rev}.json").read_text()))
        assert self.card.capabilities.streaming and self.card.capabilities.push_notifications
        assert self.card.supports_authenticated_extended_card

    # -- JSON-RPC documents -> SDK objects
    def params(self, method: str, doc: dict) -> Any:
        return self.t.A2ARequest.model_validate(doc).root.params if "params" in doc else None

    def jsonrpc_params(self, doc: dict) -> Any:
        return doc.get("params", {})

    def result(self, method: str, doc: dict) -> Any:
        return self.results[method].model_validate(doc).result

    def event(self, doc: dict) -> Any:
        return self.t.SendStreamingMessageSuccessResponse.model_validate(doc).result

    def error(self, doc: dict) -> Exception:
        from a2a.utils.errors import ServerError

        self.t.JSONRPCErrorResponse.model_validate(doc)
        err = self.t.A2AError.model_validate(doc["error"]).root  # the union of the named errors
        if err.code != doc["error"]["code"]:
            raise RecordingError(f"no 0.3 error class for {doc['error']}")
        return ServerError(error=err)

    def dump(self, obj: Any) -> Any:
        if obj is None:
            return None
        if isinstance(obj, list):
            return [self.dump(o) for o in obj]
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)

    def handler_view(self, label: str, params: Any, context: Any) -> Any:
        """What the handler got, in the JSON-RPC params vocabulary."""
        return {} if params is None else self.dump(params)

    def validation(self, params: Any) -> list[str]:
        return []  # 0.3 handlers get pydantic models, validated when they were built

    def reencode_params(self, method: str, params: Any, context: Any) -> Any:
        """The client params that say what the handler got (the handler and the client take
        the same pydantic models)."""
        return params

    def handler_value(self, method: str, got: Any) -> Any:
        """What a handler returns for what the client call returned (the same models)."""
        return got

    # -- SDK REST client
    async def client_call(self, method: str, params: Any, handler: Any) -> Any:
        import httpx
        from a2a.client.transports.rest import RestTransport

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            transport = RestTransport(http, agent_card=self.card, url=BASE_URL)
            fn = getattr(transport, self.CLIENT[method])
            if method in STREAMING:
                return [e async for e in fn(params)]
            if method == "get_extended_card":
                return await fn()
            return await fn(params)

    # -- SDK REST server
    def app(self, stub: Any, card: Any = None, card_error: Exception | None = None) -> Any:
        from a2a.server.apps import A2ARESTFastAPIApplication

        def modifier(c: Any, context: Any) -> Any:
            stub.calls.append(("get_extended_card", None, context))
            if card_error is not None:
                raise card_error
            return card if card is not None else c

        return A2ARESTFastAPIApplication(agent_card=self.card, http_handler=stub,
                                         extended_agent_card=card,
                                         extended_card_modifier=modifier).build()

    def stub(self) -> Any:
        from a2a.server.request_handlers.request_handler import RequestHandler

        return make_stub(RequestHandler, self.HANDLER)

    def serve(self, stub: Any, method: str, kind: str, value: Any) -> dict:
        """App keyword arguments and stub behaviour for one answer."""
        if method == "get_extended_card":
            return {"card": value} if kind != "error" else {"card_error": value}
        stub.behaviour[method] = ("raise" if kind == "error" else
                                  "yield" if method in STREAMING else "return", value)
        return {}

    # -- what the SDK's REST form loses, and why (read from the SDK sources)
    WHY = [
        ("status.timestamp", "ToProto.task_status writes only state and message, although the 0.3 "
                             "proto's TaskStatus has a timestamp"),
        ("referenceTaskIds", "The 0.3 proto's Message has no referenceTaskIds"),
        ("params.metadata", "For this method RestTransport writes only the ids (and historyLength), "
                            "and RESTHandler builds the handler's params from the path"),
        ("error.data", "rest_error_handler writes {\"message\"} only, and RestTransport reads nothing "
                       "but the status (A2AClientHTTPError)"),
    ]

    def explain(self, problems: list[str]) -> list[str]:
        return [why + "." for key, why in self.WHY if any(key in p.split(": ", 1)[0] for p in problems)]

    def error_remarks(self, doc: dict) -> list[str]:
        return []

    def error_note(self, doc: dict, status: int, body: Any) -> list[str]:
        from a2a.utils.error_handlers import A2AErrorToHttpStatus

        err = doc["error"]
        shared = sorted(cls.__name__ for cls, s in A2AErrorToHttpStatus.items() if s == status)
        problems = [f"error.code {err['code']} travels only as HTTP status {status}"
                    + (f" (shared by {', '.join(shared)})" if len(shared) > 1 else "")]
        problems += missing({k: v for k, v in err.items() if k != "code"}, body, "error", False)
        return problems


# --------------------------------------------------------------------------------------------
# a2a-sdk 1.x
# --------------------------------------------------------------------------------------------


class Sdk10:
    rev = "1.0"
    headers = {"A2A-Version": "1.0"}
    proto_defaults = True

    HANDLER = {"on_get_task": "get_task", "on_list_tasks": "list_tasks", "on_cancel_task": "cancel_task",
               "on_message_send": "send_message", "on_message_send_stream": "send_streaming_message",
               "on_create_task_push_notification_config": "create_push_config",
               "on_get_task_push_notification_config": "get_push_config",
               "on_subscribe_to_task": "subscribe_to_task",
               "on_list_task_push_notification_configs": "list_push_configs",
               "on_delete_task_push_notification_config": "delete_push_config",
               "on_get_extended_agent_card": "get_extended_card"}
    CLIENT = {"send_message": "send_message", "send_streaming_message": "send_message_streaming",
              "get_task": "get_task", "list_tasks": "list_tasks", "cancel_task": "cancel_task",
              "subscribe_to_task": "subscribe",
              "create_push_config": "create_task_push_notification_config",
              "get_push_config": "get_task_push_notification_config",
              "list_push_configs": "list_task_push_notification_configs",
              "delete_push_config": "delete_task_push_notification_config",
              "get_extended_card": "get_extended_agent_card"}
    SERVER = {"send_message": "on_message_send", "send_streaming_message": "on_message_send_stream",
              "get_task": "on_get_task", "list_tasks": "list_tasks", "cancel_task": "on_cancel_task",
              "subscribe_to_task": "on_subscribe_to_task", "create_push_config": "set_push_notification",
              "get_push_config": "get_push_notification", "list_push_configs": "list_push_notifications",
              "delete_push_config": "delete_push_notification",
              "get_extended_card": "handle_authenticated_agent_card"}
    SERVER = {k: "RestDispatcher." + v for k, v in SERVER.items()}

    def __init__(self) -> None:
        from google.protobuf import json_format
        from a2a.types import a2a_pb2 as pb
        from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

        self.jf = json_format
        self.pb = pb
        self.method_to_model = JsonRpcDispatcher.METHOD_TO_MODEL
        self.results = {"send_message": pb.SendMessageResponse, "get_task": pb.Task, "cancel_task": pb.Task,
                        "list_tasks": pb.ListTasksResponse, "create_push_config": pb.TaskPushNotificationConfig,
                        "get_push_config": pb.TaskPushNotificationConfig,
                        "list_push_configs": pb.ListTaskPushNotificationConfigsResponse,
                        "get_extended_card": pb.AgentCard}
        self.card = self.parse(json.loads(
            (FIXTURES / "agent_card" / f"legacy_interfaces.{self.rev}.json").read_text()), pb.AgentCard())
        assert self.card.capabilities.extended_agent_card

    def parse(self, value: Any, message: Any) -> Any:
        self.jf.ParseDict(value, message, ignore_unknown_fields=False)
        return message

    # -- JSON-RPC documents -> SDK objects
    def params(self, method: str, doc: dict) -> Any:
        return self.parse(doc.get("params", {}), self.method_to_model[doc["method"]]())

    def jsonrpc_params(self, doc: dict) -> Any:
        return doc.get("params", {})

    def result(self, method: str, doc: dict) -> Any:
        if method == "delete_push_config":
            return None
        msg = self.parse(doc["result"], self.results[method]())
        if method == "send_message":  # the handler answers a Task or a Message
            return getattr(msg, msg.WhichOneof("payload"))
        return msg

    def event(self, doc: dict) -> Any:
        msg = self.parse(doc["result"], self.pb.StreamResponse())
        return self.handler_value("send_streaming_message", msg)  # the handler yields the bare event

    def error(self, doc: dict) -> Exception:
        from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP

        err = doc["error"]
        classes = {code: cls for cls, code in JSON_RPC_ERROR_CODE_MAP.items()}
        info = next((d for d in err.get("data") or []
                     if d.get("@type") == "type.googleapis.com/google.rpc.ErrorInfo"), {})
        return classes[err["code"]](message=err["message"], data=info.get("metadata") or None)

    def dump(self, obj: Any) -> Any:
        return None if obj is None else self.jf.MessageToDict(obj)

    def reencode_params(self, method: str, params: Any, context: Any) -> Any:
        """The client request that says what the handler got: its params, with the tenant the
        dispatcher put into the call context (from the path)."""
        again = type(params)()
        again.CopyFrom(params)
        if context is not None and context.tenant and "tenant" in again.DESCRIPTOR.fields_by_name \
                and not again.tenant:
            again.tenant = context.tenant
        return again

    def handler_value(self, method: str, got: Any) -> Any:
        """What a handler returns for what the client call returned."""
        if method == "send_message":
            which = got.WhichOneof("payload")
            if which is None:
                raise RecordingError("SendMessageResponse with neither task nor message")
            return getattr(got, which)
        if method in STREAMING:
            return getattr(got, got.WhichOneof("payload"))
        return got

    def handler_view(self, label: str, params: Any, context: Any) -> Any:
        out = self.jf.MessageToDict(params)
        if context is not None and context.tenant and not out.get("tenant"):
            out["tenant"] = context.tenant  # RestDispatcher puts the path's tenant into the context
        return out

    # -- SDK REST client
    async def client_call(self, method: str, params: Any, handler: Any) -> Any:
        import httpx
        from a2a.client.transports.rest import RestTransport

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            transport = RestTransport(http, agent_card=self.card, url=BASE_URL)
            fn = getattr(transport, self.CLIENT[method])
            if method in STREAMING:
                return [e async for e in fn(params)]
            return await fn(params)

    # -- SDK REST server
    def app(self, stub: Any, **_: Any) -> Any:
        from starlette.applications import Starlette
        from a2a.server.routes.rest_routes import create_rest_routes

        return Starlette(routes=create_rest_routes(stub))

    def stub(self) -> Any:
        from a2a.server.request_handlers.request_handler import RequestHandler

        return make_stub(RequestHandler, self.HANDLER)

    def validation(self, params: Any) -> list[str]:
        """What the SDK's handler-side validation (``validate_request_params``, which
        DefaultRequestHandler applies to every method) says about the params the handler got."""
        from a2a.utils.errors import InvalidParamsError
        from a2a.utils.proto_utils import validate_proto_required_fields

        if params is None:
            return []
        try:
            validate_proto_required_fields(params)
        except InvalidParamsError as e:
            return [f"{v['field']}: {v['message']}" for v in (e.data or {}).get("errors", [])] or [e.message]
        return []

    def serve(self, stub: Any, method: str, kind: str, value: Any) -> dict:
        stub.behaviour[method] = ("raise" if kind == "error" else
                                  "yield" if method in STREAMING else "return", value)
        return {}

    WHY = [
        ("params.metadata", "RestDispatcher.on_cancel_task builds CancelTaskRequest(id=<path id>) and "
                            "never reads the body"),
    ]

    def explain(self, problems: list[str]) -> list[str]:
        return [why + "." for key, why in self.WHY if any(key in p.split(": ", 1)[0] for p in problems)]

    def error_remarks(self, doc: dict) -> list[str]:
        if any(d.get("@type") != "type.googleapis.com/google.rpc.ErrorInfo" for d in doc["error"].get("data") or []):
            return ["The error is raised with the ErrorInfo metadata as data: build_error_details adds a "
                    "google.rpc.BadRequest only for an InvalidParamsError whose data has an 'errors' list, "
                    "and then also copies that list into ErrorInfo.metadata, which is no map<string,string>."]
        return []

    def error_note(self, doc: dict, status: int, body: Any) -> list[str]:
        from a2a.client.transports.rest import _parse_rest_error
        from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP

        err = doc["error"]
        problems: list[str] = []
        exc = _parse_rest_error(body, "")
        if exc is None or JSON_RPC_ERROR_CODE_MAP.get(type(exc)) != err["code"]:
            problems.append(f"error.code {err['code']}: RestTransport reads the answer as {exc!r}")
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            rest = body["error"]
            if rest.get("message") != err["message"]:
                problems.append(f"error.message: changed {json.dumps(err['message'])} -> "
                                f"{json.dumps(rest.get('message'))}")
            details = rest.get("details") or []
            for i, detail in enumerate(err.get("data") or []):
                if i >= len(details):
                    problems.append(f"error.data[{i}] ({detail.get('@type')}): dropped")
                else:
                    problems += missing(detail, details[i], f"error.data[{i}]", True)
        return problems


# --------------------------------------------------------------------------------------------
# Driving the SDK
# --------------------------------------------------------------------------------------------


async def capture_request(sdk: Any, method: str, params: Any) -> dict:
    """The REST request the SDK client writes for ``params``."""
    import httpx

    captured: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        captured.append(http_doc(request))
        if method in STREAMING:
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")
        return httpx.Response(200, json={})

    try:
        await sdk.client_call(method, params, handler)
    except Exception:  # noqa: BLE001 - what the client makes of the {} answer does not matter
        if not captured:
            raise
    if len(captured) != 1:
        raise RecordingError(f"{method}: the client sent {len(captured)} requests")
    return captured[0]


async def call_app(sdk: Any, app: Any, doc: dict) -> Any:
    """Sends a fixture-form request to an ASGI app; returns the httpx.Response."""
    import httpx

    body = None if doc.get("body") is None else json.dumps(doc["body"]).encode()
    headers = dict(sdk.headers)
    if body is not None:
        headers["content-type"] = "application/json"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as http:
        return await http.request(doc["method"], url_of(doc), content=body, headers=headers)


async def serve_answer(sdk: Any, method: str, kind: str, value: Any, trigger: dict) -> dict:
    """The SDK server app's answer when the handler returns/yields/raises ``value``."""
    stub = sdk.stub()
    app = sdk.app(stub, **sdk.serve(stub, method, kind, value))
    answer = await call_app(sdk, app, trigger)
    if not stub.calls:
        raise RecordingError(f"{method}: the app did not reach the handler ({answer.status_code} {answer.text})")
    if kind == "event":
        events = sse_events(answer.text)
        if answer.status_code != 200 or len(events) != 1 or events[0][0] != "message":
            raise RecordingError(f"{method}: expected one SSE event, got {answer.status_code} {answer.text!r}")
        return {"data": json.loads(events[0][1])}
    return {"status": answer.status_code, "body": answer.json()}


async def handler_reached(sdk: Any, doc: dict) -> tuple[str, Any, Any, Any]:
    """Sends a fixture-form request to the server app with a fresh stub; returns (what the app
    answered, label, params, context) of the first handler call, label None when no handler
    was reached."""
    stub = sdk.stub()
    app = sdk.app(stub)
    try:
        answer = await call_app(sdk, app, doc)
        said = f"{answer.status_code} {answer.text[:300]}"
    except Exception as e:  # noqa: BLE001 - e.g. the 0.3 app fails inside a started stream
        said = f"the app raised {type(e).__name__}: {str(e)[:300]}"
    if not stub.calls:
        return said, None, None, None
    label, params, context = stub.calls[0]
    return said, label, params, context


async def handler_call(sdk: Any, doc: dict) -> tuple[str, Any, Any, list[str]]:
    """Like handler_reached, but returns (response, label, handler view in the JSON-RPC params
    vocabulary, validation complaints)."""
    answer, label, params, context = await handler_reached(sdk, doc)
    if label is None:
        return answer, None, None, []
    return answer, label, sdk.handler_view(label, params, context), sdk.validation(params)


async def client_read(sdk: Any, method: str, kind: str, doc: dict, params: Any) -> Any:
    """Hands a fixture-form answer to the SDK client; returns what the call returned (events:
    the list of events) or raises what it raised."""
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        if kind == "event":
            return httpx.Response(200, headers={"content-type": "text/event-stream"},
                                  content=sse_body(doc["data"]))
        return httpx.Response(doc["status"], json=doc["body"])

    return await sdk.client_call(method, params, handler)


def trigger_case(cases: list[dict], method: str) -> str:
    names = sorted(c["case"] for c in cases if c["method"] == method and c["kind"] == "request"
                   and REV in c["revisions"])
    if not names:
        raise RecordingError(f"no {REV} request case for {method}")
    return names[0]


async def trigger(sdk: Any, cases: list[dict], method: str, keep_query: bool = False) -> dict:
    """The request that makes the server app run ``method``: the client's request for the
    method's first request case, without its query string unless ``keep_query``."""
    doc = jsonrpc_doc(method, trigger_case(cases, method))
    req = await capture_request(sdk, method, sdk.params(method, doc))
    return req if keep_query else {**req, "query": None}


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------


def client_params(sdk: Any, cases: list[dict], method: str) -> Any:
    """The params a client call is made with when only its answer matters: those of the
    method's first request case."""
    return sdk.params(method, jsonrpc_doc(method, trigger_case(cases, method)))


async def record_case(sdk: Any, cases: list[dict], c: dict) -> tuple[dict, list[str], list[str]]:
    """(fixture document, what the REST form loses, other remarks) of one case."""
    method, kind = c["method"], c["kind"]
    doc = jsonrpc_doc(method, c["case"])
    if kind == "request":
        rest = await capture_request(sdk, method, sdk.params(method, doc))
        answer, label, view, invalid = await handler_call(sdk, rest)
        if label != method:
            raise RecordingError(f"{method}/{c['case']}: the SDK app did not route the SDK client's "
                                 f"request to the handler ({answer})")
        remarks = []
        if invalid:
            remarks.append("The SDK's own handler-side validation (validate_request_params, applied by "
                           "DefaultRequestHandler) rejects what its client wrote: " + ", ".join(v.rstrip(".") for v in invalid) + ".")
        drops = [where_lost(p, rest["body"]) for p in
                 missing(sdk.jsonrpc_params(doc), view, "params", sdk.proto_defaults)]
        return rest, drops, remarks
    trig = await trigger(sdk, cases, method)
    if kind == "error":
        rest = await serve_answer(sdk, method, kind, sdk.error(doc), trig)
        return rest, sdk.error_note(doc, rest["status"], rest["body"]), sdk.error_remarks(doc)
    value = sdk.event(doc) if kind == "event" else sdk.result(method, doc)
    rest = await serve_answer(sdk, method, kind, value, trig)
    got = await client_read(sdk, method, kind, rest, client_params(sdk, cases, method))
    if kind == "event":
        if len(got) != 1:
            raise RecordingError(f"{method}/{c['case']}: the client read {len(got)} events")
        got = got[0]
    return rest, missing(doc["result"], sdk.dump(got), "result", sdk.proto_defaults), []


def where_lost(problem: str, body: Any) -> str:
    """Says whether a member the handler did not get was in the SDK client's request body."""
    path = problem.split(": ", 1)[0].split(".")[1:]
    node = body
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return problem + " - the SDK client does not write it"
        node = node[key]
    return problem + " - the SDK client writes it in the body, the SDK server app does not pass it on"


def note_text(sdk: Any, kind: str, drops: list[str], remarks: list[str]) -> str | None:
    parts = []
    if drops:
        where = ("SDK client -> SDK server app -> request handler" if kind == "request" else
                 "SDK server app -> SDK client" if kind in ("response", "event") else
                 "the SDK server app's error answer")
        parts.append(f"Lost against the JSON-RPC fixture ({where}): " + "; ".join(drops) + ".")
        parts += sdk.explain(drops)
    parts += remarks
    return " ".join(parts) or None


def recorded_from(sdk: Any, method: str, kind: str) -> str:
    if kind == "request":
        return f"client transport RestTransport.{sdk.CLIENT[method]}"
    app = "A2ARESTFastAPIApplication" if REV == "0.3" else "create_rest_routes"
    return f"server app {app} -> {sdk.SERVER[method]}"


def merge_manifest(entries: list[dict], skipped: list[dict], kinds: dict) -> dict:
    path = REST_FIXTURES / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else {"cases": [], "skipped": []}
    cases: dict[tuple, dict] = {}
    for e in old["cases"]:
        e = {**e, "revisions": [r for r in e["revisions"] if r != REV],
             "recorded_from": {r: v for r, v in e["recorded_from"].items() if r != REV}}
        if "note" in e:
            e["note"] = {r: v for r, v in e["note"].items() if r != REV}
            if not e["note"]:
                del e["note"]
        if e["revisions"]:
            cases[(e["method"], e["case"])] = e
    for new in entries:
        key = (new["method"], new["case"])
        e = cases.setdefault(key, {"method": new["method"], "case": new["case"], "kind": kinds[key],
                                   "revisions": [], "recorded_from": {}})
        e["revisions"] = sorted(set(e["revisions"]) | {REV})
        e["recorded_from"][REV] = new["recorded_from"]
        if new.get("note"):
            e.setdefault("note", {})[REV] = new["note"]
    skips = [s for s in old["skipped"] if s["revision"] != REV] + skipped
    return {
        "format": 1,
        "description": "Golden HTTP+JSON cases; see docs/fixtures.md (REST fixtures). "
                       "Generated by scripts/record_rest_fixtures.py.",
        "cases": sorted(cases.values(), key=lambda e: (e["method"], e["case"])),
        "skipped": sorted(skips, key=lambda s: (s["method"], s["case"], s["revision"])),
    }


async def run() -> int:
    sdk = Sdk03() if REV == "0.3" else Sdk10()
    cases = jsonrpc_cases()
    kinds = {(c["method"], c["case"]): c["kind"] for c in cases}
    for stale in REST_FIXTURES.glob(f"*/*.{REV}.json"):
        stale.unlink()
    entries, skipped = [], []
    for c in sorted(cases, key=lambda c: (c["method"], c["case"])):
        method, name, kind = c["method"], c["case"], c["kind"]
        reason = skip_reason(method, name, kind)
        if reason:
            await verify_skip(sdk, cases, method, kind, reason)
            skipped.append({"method": method, "case": name, "revision": REV, "reason": reason})
            continue
        if REV not in c["revisions"]:
            raise RecordingError(f"{method}/{name} has no {REV} JSON-RPC fixture and no skip reason")
        doc, drops, remarks = await record_case(sdk, cases, c)
        path = REST_FIXTURES / method / f"{name}.{REV}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(canonical(doc))
        entry = {"method": method, "case": name, "recorded_from": recorded_from(sdk, method, kind)}
        note = note_text(sdk, kind, drops, remarks)
        if note:
            entry["note"] = note
        entries.append(entry)
    manifest = merge_manifest(entries, skipped, kinds)
    (REST_FIXTURES / "manifest.json").write_text(canonical(manifest))
    from importlib.metadata import version

    print(f"record_rest_fixtures: a2a-sdk {REV} ({version('a2a-sdk')}): wrote {len(entries)} "
          f"fixtures, skipped {len(skipped)}", file=sys.stderr)
    return 0


def main() -> int:
    import logging

    logging.disable(logging.CRITICAL)  # the SDK logs every error it renders
    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())

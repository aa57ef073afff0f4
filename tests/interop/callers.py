"""Raw A2A callers of both revisions over JSON-RPC, HTTP+JSON and gRPC, for the fleet fault tests
and the mixed soak: one request per call, written by hand from the wire shapes in
`tests/fixtures` (JSON-RPC and `rest/`) and, for gRPC, the stubs each SDK generates from its
revision's proto (`a2a.types.a2a_pb2` is `lf.a2a.v1`, `a2a.compat.v0_3.a2a_v0_3_pb2` is
`a2a.v1`; a2a-sdk 1.3.0 ships both, so one process speaks both).

# Why not the SDK clients

An SDK client hides the wire: it retries, resolves cards, and accepts shapes its model reads
leniently. The soak must see each answer as the bridge wrote it — the JSON-RPC id echoed on every
event, a 0.3 caller never seeing a `TASK_STATE_*` enum nor a 1.0 caller a `kind` member, an
HTTP+JSON error in its revision's form — and must count exactly one request per call. The
conversations of `tests/interop/clients` already prove what the SDKs accept.

Every call returns a revision-neutral view (`TaskView`, `Event`) after checking the answer's shape
for the caller's revision and binding; an A2A error answered in the caller's form raises
`Refused` (with `internal` set for InternalError, the error a store outage is answered with);
anything else — a transport failure, a wrong shape, a wrong id — raises `WrongAnswer`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as grpc03
from a2a.types import a2a_pb2 as pb10
from a2a.types import a2a_pb2_grpc as grpc10
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

REVISIONS = ('0.3', '1.0')
BINDINGS = ('jsonrpc', 'rest', 'grpc')
# The label `a2a_bridge_requests_total` gives each binding.
BINDING_LABEL = {'jsonrpc': 'jsonrpc', 'rest': 'http_json', 'grpc': 'grpc'}

# Task states as each form spells them: 0.3 JSON-RPC in kebab case; 1.0 (every binding) as the
# 1.0 proto enum; 0.3 HTTP+JSON and gRPC as the 0.3 proto enum, which spells CANCELLED.
V03_JSON_STATES = {
    'submitted', 'working', 'input-required', 'auth-required', 'completed', 'canceled',
    'failed', 'rejected', 'unknown',
}
V10_ENUM_STATES = {
    'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED',
    'TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED',
}
V03_ENUM_STATES = (V10_ENUM_STATES - {'TASK_STATE_CANCELED'}) | {'TASK_STATE_CANCELLED'}
TERMINAL = {'completed', 'canceled', 'failed', 'rejected'}


class WrongAnswer(Exception):
    """The call was not answered as the caller's revision and binding define: a transport
    failure, a deadline, or an answer of the wrong shape."""


class Refused(Exception):
    """The call was answered with an A2A error, in the caller's form."""

    def __init__(self, code: str, message: str, internal: bool) -> None:
        super().__init__(f'{code}: {message}')
        self.code = code
        self.message = message
        self.internal = internal

    @property
    def store_unavailable(self) -> bool:
        """The InternalError the bridge answers when its store does not answer."""
        return self.internal and "store is unavailable" in self.message


def expect(condition: Any, what: str, answer: Any) -> None:
    if not condition:
        raise WrongAnswer(f'{what}: {json.dumps(answer, default=str)[:1500]}')


def plain_state(state: str) -> str:
    """Any spelling of a task state in the 0.3 JSON-RPC spelling (`input-required`, `canceled`)."""
    name = state.removeprefix('TASK_STATE_').lower().replace('_', '-')
    return 'canceled' if name == 'cancelled' else name


@dataclass
class TaskView:
    """A task as any form carries it."""

    id: str
    context_id: str
    state: str
    artifacts: dict[str, str] = field(default_factory=dict)


@dataclass
class Event:
    """One stream event: `kind` is `task`, `status`, `artifact` or `message`."""

    kind: str
    task_id: str
    state: str | None = None
    final: bool = False
    text: str = ''


def texts_of(parts: list[dict[str, Any]] | None, form: str) -> str:
    """The text of a list of parts (0.3 JSON-RPC parts carry `kind: "text"`)."""
    out = []
    for part in parts or []:
        if form == 'v03-json':
            expect(part.get('kind') in ('text', 'data', 'file'), 'a 0.3 part without its kind', part)
        if 'text' in part:
            out.append(part['text'])
    return ''.join(out)


class Form:
    """How one revision in one binding writes documents: `v03-json` (0.3 JSON-RPC), `v10` (1.0,
    every binding: `ProtoJSON` of the 1.0 proto), `v03-proto` (0.3 HTTP+JSON and gRPC: `ProtoJSON`
    of the 0.3 proto)."""

    def __init__(self, revision: str, binding: str) -> None:
        self.revision = revision
        self.name = 'v10' if revision == '1.0' else ('v03-json' if binding == 'jsonrpc' else 'v03-proto')

    def state(self, status: Any) -> str:
        expect(isinstance(status, dict) and isinstance(status.get('state'), str), 'a status without a state', status)
        raw = status['state']
        allowed = {'v03-json': V03_JSON_STATES, 'v10': V10_ENUM_STATES, 'v03-proto': V03_ENUM_STATES}[self.name]
        expect(raw in allowed, f'a state not spelt as {self.name} spells it', status)
        return plain_state(raw)

    def task(self, body: Any) -> TaskView:
        expect(isinstance(body, dict) and body.get('id') and 'status' in body, 'not a task', body)
        if self.name == 'v03-json':
            expect(body.get('kind') == 'task', 'a 0.3 task without kind "task"', body)
        else:
            expect('"kind"' not in json.dumps(body), 'a kind member outside 0.3 JSON-RPC', body)
        artifacts = {}
        for artifact in body.get('artifacts') or []:
            artifacts[artifact.get('name') or artifact.get('artifactId')] = texts_of(artifact.get('parts'), self.name)
        return TaskView(body['id'], body.get('contextId', ''), self.state(body['status']), artifacts)

    def send_result(self, body: Any) -> TaskView:
        """A send's result: 0.3 JSON-RPC a bare task, every other form `{"task": …}`."""
        if self.name == 'v03-json':
            return self.task(body)
        expect(isinstance(body, dict) and set(body) == {'task'}, 'a send result that is not {"task": …}', body)
        return self.task(body['task'])

    def event(self, body: Any) -> Event:
        """One stream event's payload (the JSON-RPC result, or the HTTP+JSON/gRPC message)."""
        expect(isinstance(body, dict), 'an event that is not an object', body)
        if self.name == 'v03-json':
            kind = body.get('kind')
            expect(kind in ('task', 'status-update', 'artifact-update', 'message'), 'a 0.3 event of no kind', body)
            inner = body
            kind = {'status-update': 'status', 'artifact-update': 'artifact'}.get(kind, kind)
        else:
            members = [m for m in ('task', 'statusUpdate', 'artifactUpdate', 'message') if m in body]
            expect(len(members) == 1 and len(body) == 1, 'an event that is not one StreamResponse member', body)
            expect('"kind"' not in json.dumps(body), 'a kind member outside 0.3 JSON-RPC', body)
            kind = {'statusUpdate': 'status', 'artifactUpdate': 'artifact'}.get(members[0], members[0])
            inner = body[members[0]]
        if kind == 'task':
            view = self.task(inner)
            return Event('task', view.id, view.state)
        if kind == 'status':
            final = bool(inner.get('final'))
            if self.revision == '1.0':
                expect('final' not in inner, 'a 1.0 status update with the 0.3 final flag', inner)
            return Event('status', inner.get('taskId', ''), self.state(inner.get('status')), final)
        if kind == 'artifact':
            artifact = inner.get('artifact') or {}
            return Event('artifact', inner.get('taskId', ''), text=texts_of(artifact.get('parts'), self.name))
        return Event('message', inner.get('taskId', ''))

    def push_config(self, body: Any) -> dict[str, str]:
        """A created push config, as `{url, token, id}`: 0.3 JSON-RPC `{taskId,
        pushNotificationConfig}`, 0.3 proto `{name, pushNotificationConfig}`, 1.0 flat."""
        expect(isinstance(body, dict), 'a push config that is not an object', body)
        if self.revision == '0.3':
            inner = body.get('pushNotificationConfig')
            expect(isinstance(inner, dict), 'a 0.3 push config without pushNotificationConfig', body)
            return {'url': inner.get('url', ''), 'token': inner.get('token', ''), 'id': inner.get('id', '')}
        return {'url': body.get('url', ''), 'token': body.get('token', ''), 'id': body.get('id', '')}


def message_json(form: Form, text: str, task_id: str | None, context_id: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {'messageId': str(uuid.uuid4())}
    if form.name == 'v03-json':
        message.update(kind='message', role='user', parts=[{'kind': 'text', 'text': text}])
    elif form.name == 'v03-proto':
        message.update(role='ROLE_USER', content=[{'text': text}])
    else:
        message.update(role='ROLE_USER', parts=[{'text': text}])
    if task_id:
        message['taskId'] = task_id
    if context_id:
        message['contextId'] = context_id
    return message


def configuration(form: Form, blocking: bool) -> dict[str, Any]:
    if form.revision == '1.0':
        return {'returnImmediately': True} if not blocking else {}
    # 0.3 proto's `blocking` is false when absent; say it either way.
    return {'blocking': blocking}


class SseReader:
    """Splits an SSE byte stream into events (`event` name, `data` text)."""

    def __init__(self) -> None:
        self.name = 'message'
        self.data: list[str] = []

    def line(self, line: str) -> tuple[str, str] | None:
        if line == '':
            if not self.data:
                return None
            event = (self.name, '\n'.join(self.data))
            self.name, self.data = 'message', []
            return event
        if line.startswith(':'):
            return None
        key, _, value = line.partition(':')
        value = value.removeprefix(' ')
        if key == 'data':
            self.data.append(value)
        elif key == 'event':
            self.name = value
        return None


StopWhen = Callable[[list[Event]], bool]


class Caller:
    """One caller: a revision and a binding, toward one route of one instance."""

    revision: str
    binding: str

    def __init__(self, revision: str, binding: str) -> None:
        self.revision = revision
        self.binding = binding
        self.form = Form(revision, binding)

    @property
    def label(self) -> str:
        return f'{self.revision}/{self.binding}'

    async def send(self, text: str, *, blocking: bool = True, task_id: str | None = None,
                   context_id: str | None = None, timeout: float = 30.0) -> TaskView:
        raise NotImplementedError

    async def get(self, task_id: str, timeout: float = 30.0) -> TaskView:
        raise NotImplementedError

    async def cancel(self, task_id: str, timeout: float = 30.0) -> TaskView:
        raise NotImplementedError

    async def stream(self, text: str, *, stop: StopWhen | None = None, timeout: float = 30.0) -> list[Event]:
        """A streaming send read to its end, or until `stop` holds for the events so far, when
        the caller goes away (the connection or the gRPC call is dropped)."""
        raise NotImplementedError

    async def create_push(self, task_id: str, url: str, token: str, config_id: str,
                          timeout: float = 30.0) -> dict[str, str]:
        raise NotImplementedError

    async def list_tasks(self, page_size: int = 5, timeout: float = 30.0) -> list[TaskView]:
        raise NotImplementedError


# --- JSON-RPC ------------------------------------------------------------------------------------

METHODS = {
    '0.3': {'send': 'message/send', 'stream': 'message/stream', 'get': 'tasks/get', 'cancel': 'tasks/cancel',
            'push': 'tasks/pushNotificationConfig/set'},
    '1.0': {'send': 'SendMessage', 'stream': 'SendStreamingMessage', 'get': 'GetTask', 'cancel': 'CancelTask',
            'push': 'CreateTaskPushNotificationConfig', 'list': 'ListTasks'},
}


class JsonRpcCaller(Caller):
    def __init__(self, revision: str, http: httpx.AsyncClient, url: str) -> None:
        super().__init__(revision, 'jsonrpc')
        self.http = http
        self.url = url
        self.headers = {'A2A-Version': '1.0'} if revision == '1.0' else {}

    def envelope(self, what: str, params: dict[str, Any]) -> dict[str, Any]:
        # Ids of both types, so that echoing the type is checked too.
        rid: Any = str(uuid.uuid4()) if uuid.uuid4().int % 2 else uuid.uuid4().int % 10**9
        return {'jsonrpc': '2.0', 'id': rid, 'method': METHODS[self.revision][what], 'params': params}

    def result(self, request: dict[str, Any], answer: Any) -> Any:
        expect(isinstance(answer, dict) and answer.get('jsonrpc') == '2.0', 'not a JSON-RPC response', answer)
        expect(type(answer.get('id')) is type(request['id']) and answer.get('id') == request['id'],
               f'the id {request["id"]!r} not echoed', answer)
        if 'error' in answer:
            error = answer['error']
            expect(isinstance(error.get('code'), int) and isinstance(error.get('message'), str),
                   'an error without code and message', answer)
            raise Refused(str(error['code']), error['message'], error['code'] == -32603)
        expect('result' in answer, 'a response without result or error', answer)
        return answer['result']

    async def call(self, what: str, params: dict[str, Any], timeout: float) -> Any:
        request = self.envelope(what, params)
        try:
            response = await self.http.post(self.url, json=request, headers=self.headers, timeout=timeout)
        except httpx.HTTPError as exc:
            raise WrongAnswer(f'{self.label} {what}: {exc!r}') from None
        expect(response.status_code == 200, f'HTTP {response.status_code}', response.text)
        try:
            answer = response.json()
        except ValueError:
            raise WrongAnswer(f'{self.label} {what}: not JSON: {response.text[:500]}') from None
        return self.result(request, answer)

    async def send(self, text, *, blocking=True, task_id=None, context_id=None, timeout=30.0):
        params = {'message': message_json(self.form, text, task_id, context_id),
                  'configuration': configuration(self.form, blocking)}
        return self.form.send_result(await self.call('send', params, timeout))

    async def get(self, task_id, timeout=30.0):
        return self.form.task(await self.call('get', {'id': task_id}, timeout))

    async def cancel(self, task_id, timeout=30.0):
        return self.form.task(await self.call('cancel', {'id': task_id}, timeout))

    async def create_push(self, task_id, url, token, config_id, timeout=30.0):
        if self.revision == '0.3':
            params = {'taskId': task_id, 'pushNotificationConfig': {'id': config_id, 'url': url, 'token': token}}
        else:
            params = {'taskId': task_id, 'id': config_id, 'url': url, 'token': token}
        return self.form.push_config(await self.call('push', params, timeout))

    async def list_tasks(self, page_size=5, timeout=30.0):
        result = await self.call('list', {'pageSize': page_size}, timeout)
        expect(isinstance(result, dict) and isinstance(result.get('tasks', []), list), 'not a ListTasksResponse', result)
        return [self.form.task(t) for t in result.get('tasks', [])]

    async def stream(self, text, *, stop=None, timeout=30.0):
        request = self.envelope('stream', {'message': message_json(self.form, text, None, None)})
        events: list[Event] = []
        try:
            async with self.http.stream('POST', self.url, json=request, headers=self.headers,
                                        timeout=timeout) as response:
                expect(response.status_code == 200, f'HTTP {response.status_code}', response.status_code)
                if not response.headers.get('content-type', '').startswith('text/event-stream'):
                    # A streaming call refused before any event: a 1.0 caller's plain error.
                    self.result(request, json.loads(await response.aread()))
                    raise WrongAnswer(f'{self.label} stream answered plain JSON without an error')
                reader = SseReader()
                async for line in response.aiter_lines():
                    event = reader.line(line)
                    if event is None:
                        continue
                    events.append(self.form.event(self.result(request, json.loads(event[1]))))
                    if stop and stop(events):
                        return events
        except httpx.HTTPError as exc:
            raise WrongAnswer(f'{self.label} stream after {len(events)} events: {exc!r}') from None
        return events


# --- HTTP+JSON -----------------------------------------------------------------------------------


class RestCaller(Caller):
    def __init__(self, revision: str, http: httpx.AsyncClient, url: str) -> None:
        super().__init__(revision, 'rest')
        self.http = http
        self.base = url.rstrip('/') + ('/v1' if revision == '0.3' else '')
        self.headers = {'A2A-Version': '1.0'} if revision == '1.0' else {}

    def refusal(self, response: httpx.Response) -> Refused:
        """An error answer in the revision's HTTP+JSON form: 1.0 a `google.rpc.Status`, 0.3
        `{"message"}`."""
        try:
            body = response.json()
        except ValueError:
            raise WrongAnswer(f'{self.label}: HTTP {response.status_code}, not JSON: {response.text[:500]}') from None
        if self.revision == '1.0':
            error = body.get('error') if isinstance(body, dict) else None
            expect(isinstance(error, dict) and error.get('code') == response.status_code and error.get('status'),
                   f'HTTP {response.status_code} without a google.rpc.Status', body)
            return Refused(f'http_{response.status_code} {error["status"]}', error.get('message', ''),
                           error['status'] == 'INTERNAL')
        expect(isinstance(body, dict) and isinstance(body.get('message'), str),
               f'HTTP {response.status_code} without a 0.3 {{"message"}}', body)
        return Refused(f'http_{response.status_code}', body['message'], response.status_code == 500)

    async def call(self, method: str, path: str, body: Any, timeout: float, params: dict | None = None) -> Any:
        try:
            response = await self.http.request(method, self.base + path, json=body, params=params,
                                               headers=self.headers, timeout=timeout)
        except httpx.HTTPError as exc:
            raise WrongAnswer(f'{self.label} {method} {path}: {exc!r}') from None
        if response.status_code != 200:
            raise self.refusal(response)
        try:
            return response.json()
        except ValueError:
            raise WrongAnswer(f'{self.label} {method} {path}: not JSON: {response.text[:500]}') from None

    async def send(self, text, *, blocking=True, task_id=None, context_id=None, timeout=30.0):
        body = {'message': message_json(self.form, text, task_id, context_id),
                'configuration': configuration(self.form, blocking)}
        return self.form.send_result(await self.call('POST', '/message:send', body, timeout))

    async def get(self, task_id, timeout=30.0):
        return self.form.task(await self.call('GET', f'/tasks/{task_id}', None, timeout))

    async def cancel(self, task_id, timeout=30.0):
        body = {'name': f'tasks/{task_id}'} if self.revision == '0.3' else {'id': task_id}
        return self.form.task(await self.call('POST', f'/tasks/{task_id}:cancel', body, timeout))

    async def create_push(self, task_id, url, token, config_id, timeout=30.0):
        config = {'id': config_id, 'url': url, 'token': token}
        if self.revision == '0.3':
            body = {'parent': f'tasks/{task_id}', 'configId': config_id,
                    'config': {'name': f'tasks/{task_id}/pushNotificationConfigs/{config_id}',
                               'pushNotificationConfig': config}}
        else:
            body = {'taskId': task_id, **config}
        answer = await self.call('POST', f'/tasks/{task_id}/pushNotificationConfigs', body, timeout)
        return self.form.push_config(answer)

    async def list_tasks(self, page_size=5, timeout=30.0):
        result = await self.call('GET', '/tasks', None, timeout, params={'pageSize': page_size})
        expect(isinstance(result, dict) and isinstance(result.get('tasks', []), list), 'not a ListTasksResponse', result)
        return [self.form.task(t) for t in result.get('tasks', [])]

    async def stream(self, text, *, stop=None, timeout=30.0):
        body = {'message': message_json(self.form, text, None, None)}
        events: list[Event] = []
        try:
            async with self.http.stream('POST', self.base + '/message:stream', json=body, headers=self.headers,
                                        timeout=timeout) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise self.refusal(response)
                expect(response.headers.get('content-type', '').startswith('text/event-stream'),
                       'a stream that is not an event stream', dict(response.headers))
                reader = SseReader()
                async for line in response.aiter_lines():
                    event = reader.line(line)
                    if event is None:
                        continue
                    name, data = event
                    if name == 'error':
                        raise WrongAnswer(f'{self.label} stream ended with an error event: {data[:500]}')
                    events.append(self.form.event(json.loads(data)))
                    if stop and stop(events):
                        return events
        except httpx.HTTPError as exc:
            raise WrongAnswer(f'{self.label} stream after {len(events)} events: {exc!r}') from None
        return events


# --- gRPC ----------------------------------------------------------------------------------------


class GrpcCaller(Caller):
    """A gRPC caller: each answer is read back as its `ProtoJSON` (the HTTP+JSON form of the same
    revision) and checked as such."""

    def __init__(self, revision: str, channel: grpc.aio.Channel) -> None:
        super().__init__(revision, 'grpc')
        self.stub = (grpc10 if revision == '1.0' else grpc03).A2AServiceStub(channel)
        self.pb = pb10 if revision == '1.0' else pb03
        self.metadata = (('a2a-version', '1.0'),) if revision == '1.0' else ()

    @staticmethod
    def json(message: Any) -> Any:
        return json_format.MessageToDict(message)

    def refusal(self, failure: grpc.aio.AioRpcError) -> Refused | WrongAnswer:
        code = failure.code()
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED):
            return WrongAnswer(f'{self.label}: {code.name} {failure.details()}')
        details = failure.details() or ''
        if self.revision == '1.0':
            reasons = []
            for key, value in failure.trailing_metadata() or ():
                if key == 'grpc-status-details-bin':
                    status = status_pb2.Status.FromString(value)
                    for packed in status.details:
                        info = error_details_pb2.ErrorInfo()
                        if packed.Unpack(info):
                            reasons.append(info.reason)
            if not reasons:
                return WrongAnswer(f'{self.label}: {code.name} without an ErrorInfo: {details}')
            return Refused(f'grpc {code.name} {reasons[0]}', details, code == grpc.StatusCode.INTERNAL)
        if ': ' not in details or not details.split(': ', 1)[0].endswith('Error'):
            return WrongAnswer(f'{self.label}: {code.name} without the 0.3 error class: {details}')
        return Refused(f'grpc {code.name}', details, code == grpc.StatusCode.INTERNAL)

    async def unary(self, method: str, request: Any, timeout: float) -> Any:
        try:
            answer = await getattr(self.stub, method)(request, metadata=self.metadata, timeout=timeout)
        except grpc.aio.AioRpcError as failure:
            raise self.refusal(failure) from None
        return self.json(answer)

    def message(self, text: str, task_id: str | None = None, context_id: str | None = None) -> Any:
        fields = {'message_id': str(uuid.uuid4()), 'role': self.pb.ROLE_USER}
        if task_id:
            fields['task_id'] = task_id
        if context_id:
            fields['context_id'] = context_id
        if self.revision == '1.0':
            return pb10.Message(parts=[pb10.Part(text=text)], **fields)
        return pb03.Message(content=[pb03.Part(text=text)], **fields)

    def send_request(self, text: str, blocking: bool, task_id: str | None, context_id: str | None) -> Any:
        message = self.message(text, task_id, context_id)
        if self.revision == '1.0':
            return pb10.SendMessageRequest(message=message,
                                           configuration=pb10.SendMessageConfiguration(return_immediately=not blocking))
        return pb03.SendMessageRequest(request=message, configuration=pb03.SendMessageConfiguration(blocking=blocking))

    async def send(self, text, *, blocking=True, task_id=None, context_id=None, timeout=30.0):
        answer = await self.unary('SendMessage', self.send_request(text, blocking, task_id, context_id), timeout)
        return self.form.send_result(answer)

    async def get(self, task_id, timeout=30.0):
        request = pb10.GetTaskRequest(id=task_id) if self.revision == '1.0' else pb03.GetTaskRequest(name=f'tasks/{task_id}')
        return self.form.task(await self.unary('GetTask', request, timeout))

    async def cancel(self, task_id, timeout=30.0):
        request = (pb10.CancelTaskRequest(id=task_id) if self.revision == '1.0'
                   else pb03.CancelTaskRequest(name=f'tasks/{task_id}'))
        return self.form.task(await self.unary('CancelTask', request, timeout))

    async def create_push(self, task_id, url, token, config_id, timeout=30.0):
        if self.revision == '1.0':
            request = pb10.TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url, token=token)
        else:
            request = pb03.CreateTaskPushNotificationConfigRequest(
                parent=f'tasks/{task_id}',
                config_id=config_id,
                config=pb03.TaskPushNotificationConfig(
                    name=f'tasks/{task_id}/pushNotificationConfigs/{config_id}',
                    push_notification_config=pb03.PushNotificationConfig(id=config_id, url=url, token=token),
                ),
            )
        answer = await self.unary('CreateTaskPushNotificationConfig', request, timeout)
        return self.form.push_config(answer)

    async def list_tasks(self, page_size=5, timeout=30.0):
        result = await self.unary('ListTasks', pb10.ListTasksRequest(page_size=page_size), timeout)
        return [self.form.task(t) for t in result.get('tasks', [])]

    async def stream(self, text, *, stop=None, timeout=30.0):
        call = self.stub.SendStreamingMessage(self.send_request(text, True, None, None),
                                              metadata=self.metadata, timeout=timeout)
        events: list[Event] = []
        try:
            async for message in call:
                events.append(self.form.event(self.json(message)))
                if stop and stop(events):
                    call.cancel()
                    return events
        except grpc.aio.AioRpcError as failure:
            refusal = self.refusal(failure)
            if isinstance(refusal, Refused) and not events:
                raise refusal from None
            raise WrongAnswer(f'{self.label} stream after {len(events)} events: {refusal}') from None
        return events


class Channels:
    """One gRPC channel per target, kept for the life of the caller pool."""

    def __init__(self) -> None:
        self.open: dict[str, grpc.aio.Channel] = {}

    def get(self, target: str) -> grpc.aio.Channel:
        if target not in self.open:
            self.open[target] = grpc.aio.insecure_channel(target)
        return self.open[target]

    async def close(self) -> None:
        for channel in self.open.values():
            await channel.close()
        self.open.clear()


def caller(revision: str, binding: str, http: httpx.AsyncClient, channels: Channels, url: str,
           grpc_target: str) -> Caller:
    """The caller of `revision` over `binding` toward the route at `url` (gRPC: `grpc_target`)."""
    if binding == 'jsonrpc':
        return JsonRpcCaller(revision, http, url)
    if binding == 'rest':
        return RestCaller(revision, http, url)
    return GrpcCaller(revision, channels.get(grpc_target))

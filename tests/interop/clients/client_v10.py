"""A real A2A 1.0 client built from a2a-sdk 1.x's own client classes.

Usage: `python client_v10.py --base URL SCENARIO [SCENARIO ...]` (or `all`). Discovers the agent
through `A2ACardResolver`, talks to it through `ClientFactory`/`BaseClient`, and prints one JSON
document with what it observed (see `common.py` for the shapes).

# Why the transport factory is replaced

The 1.x `ClientFactory` picks its built-in 0.3 transport (`CompatJsonRpcTransport`) whenever the
chosen card interface advertises a 0.3 protocol version, silently: against a card that advertises
both revisions, or a 0.3-only card, a stock client would not be a 1.0 client at all. Here the
JSON-RPC producer is re-registered so that it always builds the 1.0 `JsonRpcTransport`, pointed
at the card's JSON-RPC interface with protocol version 1.x when there is one (else at whatever
JSON-RPC interface the card has, which then fails as a 1.0 peer would). The document reports the
transport class and every request's method and `A2A-Version` header, so the suite can assert that
only 1.0 was spoken.

`version_unsupported` is a raw httpx request: no SDK call lets a caller send a wrong
`A2A-Version`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import base64
import json
import uuid
from importlib.metadata import version as dist_version
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.transports.grpc import GrpcTransport
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.client.transports.rest import RestTransport
from a2a.types import (
    AgentCard,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import A2A_REASON_TO_ERROR, JSON_RPC_ERROR_CODE_MAP, A2AError
from google.protobuf import json_format, struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

import common as c

# --- neutral shapes ------------------------------------------------------------------------------


def state_name(state: int) -> str:
    name = TaskState.Name(state).removeprefix('TASK_STATE_').lower().replace('_', '-')
    return 'unknown' if name == 'unspecified' else name


def part_view(part: Part) -> dict[str, Any]:
    content = part.WhichOneof('content')
    if content == 'text':
        return {'text': part.text}
    if content == 'raw':
        return {
            'bytes': base64.b64encode(part.raw).decode('ascii'),
            'mediaType': part.media_type or None,
            'name': part.filename or None,
        }
    if content == 'url':
        return {'uri': part.url, 'mediaType': part.media_type or None, 'name': part.filename or None}
    if content == 'data':
        return {'data': json_format.MessageToDict(part.data)}
    return {'empty': True}


def message_view(message: Message) -> dict[str, Any]:
    return {
        'role': {Role.ROLE_USER: 'user', Role.ROLE_AGENT: 'agent'}.get(message.role, 'unspecified'),
        'messageId': message.message_id,
        'taskId': message.task_id or None,
        'contextId': message.context_id or None,
        'parts': [part_view(p) for p in message.parts],
    }


def status_text(message: Message | None) -> str | None:
    if message is None:
        return None
    texts = [p.text for p in message.parts if p.WhichOneof('content') == 'text']
    return '\n'.join(texts) if texts else None


def task_view(task: Task) -> dict[str, Any]:
    return {
        'id': task.id,
        'contextId': task.context_id or None,
        'state': state_name(task.status.state),
        'statusText': status_text(task.status.message) if task.status.HasField('message') else None,
        'artifacts': [
            {
                'artifactId': a.artifact_id,
                'name': a.name or None,
                'parts': [part_view(p) for p in a.parts],
            }
            for a in task.artifacts
        ],
        'history': [message_view(m) for m in task.history],
    }


def event_view(event: StreamResponse, t: float) -> dict[str, Any]:
    which = event.WhichOneof('payload')
    if which == 'task':
        return {'t': t, 'kind': 'task', 'task': task_view(event.task)}
    if which == 'message':
        return {'t': t, 'kind': 'message', 'message': message_view(event.message)}
    if which == 'status_update':
        u = event.status_update
        return {
            't': t,
            'kind': 'status-update',
            'taskId': u.task_id,
            'contextId': u.context_id or None,
            'state': state_name(u.status.state),
            'text': status_text(u.status.message) if u.status.HasField('message') else None,
        }
    if which == 'artifact_update':
        u = event.artifact_update
        return {
            't': t,
            'kind': 'artifact-update',
            'taskId': u.task_id,
            'contextId': u.context_id or None,
            'artifactId': u.artifact.artifact_id,
            'parts': [part_view(p) for p in u.artifact.parts],
            'append': u.append,
            'lastChunk': u.last_chunk,
        }
    return {'t': t, 'kind': 'empty'}


def result_view(event: StreamResponse) -> dict[str, Any]:
    if event.HasField('task'):
        return {'task': task_view(event.task)}
    if event.HasField('message'):
        return {'message': message_view(event.message)}
    return {'other': json_format.MessageToDict(event)}


def push_view(config: TaskPushNotificationConfig) -> dict[str, Any]:
    return {
        'taskId': config.task_id,
        'id': config.id,
        'url': config.url,
        'token': config.token or None,
    }


def card_view(card: AgentCard) -> dict[str, Any]:
    return {
        'name': card.name,
        'version': card.version,
        'interfaces': [
            {'url': i.url, 'binding': i.protocol_binding, 'protocolVersion': i.protocol_version}
            for i in card.supported_interfaces
        ],
        'defaultInputModes': list(card.default_input_modes),
        'defaultOutputModes': list(card.default_output_modes),
        'streaming': card.capabilities.streaming,
        'pushNotifications': card.capabilities.push_notifications,
        'extendedCard': card.capabilities.extended_agent_card,
        'skills': [s.id for s in card.skills],
    }


def to_error(exc: BaseException) -> dict[str, Any]:
    code = JSON_RPC_ERROR_CODE_MAP.get(type(exc)) if isinstance(exc, A2AError) else None
    message = getattr(exc, 'message', None) or str(exc)
    if code is None and isinstance(exc, A2AError):
        # The SDK keeps codes it does not know only in the text: "JSON-RPC Error <code>: ...".
        text = str(exc)
        if text.startswith('JSON-RPC Error '):
            head = text.removeprefix('JSON-RPC Error ').split(':', 1)[0]
            try:
                code = int(head)
            except ValueError:
                code = None
    return c.error_record(exc, code, message)


# --- the client ----------------------------------------------------------------------------------


class Peer:
    def __init__(self, base: str, binding: str = 'jsonrpc') -> None:
        self.base = base
        self.binding = binding
        self.wire = c.WireLog()
        self.raw_errors: list[dict[str, Any]] = []
        # A bridge that requires a credential gets the one INTEROP_BEARER_TOKEN names.
        token = os.environ.get('INTEROP_BEARER_TOKEN')
        self.http = httpx.AsyncClient(
            timeout=c.HTTP_TIMEOUT,
            headers={'Authorization': f'Bearer {token}'} if token else None,
            event_hooks={'request': [self.wire.on_request], 'response': [self._on_response]},
        )
        self.card: AgentCard | None = None
        self.protocol: dict[str, Any] = {}

    async def _on_response(self, response: httpx.Response) -> None:
        # Unary JSON bodies only: reading an SSE body here would buffer the stream.
        if response.headers.get('content-type', '').startswith('application/json'):
            await response.aread()
            try:
                body = response.json()
            except ValueError:
                return
            if isinstance(body, dict) and 'error' in body:
                self.raw_errors.append(body['error'])

    def factory(self, *, streaming: bool, polling: bool = False) -> ClientFactory:
        # Forced onto one binding, and onto its pure 1.0 transport: the SDK would otherwise pick
        # its 0.3 compat transport for an interface whose version is 0.x.
        binding = {
            'rest': TransportProtocol.HTTP_JSON,
            'grpc': TransportProtocol.GRPC,
        }.get(self.binding, TransportProtocol.JSONRPC)
        config = ClientConfig(
            streaming=streaming,
            polling=polling,
            httpx_client=self.http,
            supported_protocol_bindings=[binding],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )
        factory = ClientFactory(config)
        if self.binding == 'rest':
            factory.register(TransportProtocol.HTTP_JSON, self._pure_v10_rest_transport)
        elif self.binding == 'grpc':
            factory.register(TransportProtocol.GRPC, self._pure_v10_grpc_transport)
        else:
            factory.register(TransportProtocol.JSONRPC, self._pure_v10_transport)
        return factory

    def _pure_v10_grpc_transport(self, card: AgentCard, url: str, config: ClientConfig) -> GrpcTransport:
        offered = [i for i in card.supported_interfaces if i.protocol_binding == 'GRPC']
        v1 = [i for i in offered if i.protocol_version.split('.', 1)[0] == '1']
        if not v1:
            raise RuntimeError(f'the card offers no 1.0 GRPC interface: {card_view(card)["interfaces"]}')
        chosen = v1[0]
        transport = GrpcTransport(grpc.aio.insecure_channel(chosen.url), card)
        self.protocol = {
            'binding': 'GRPC',
            'version': '1.0',
            'transport': f'{type(transport).__module__}.{type(transport).__name__}',
            'url': chosen.url,
            'advertisedVersion': chosen.protocol_version,
        }
        return transport

    def _pure_v10_rest_transport(self, card: AgentCard, url: str, config: ClientConfig) -> RestTransport:
        rest = [i for i in card.supported_interfaces if i.protocol_binding == 'HTTP+JSON']
        v1 = [i for i in rest if i.protocol_version.split('.', 1)[0] == '1']
        if not v1:
            raise RuntimeError(f'the card offers no 1.0 HTTP+JSON interface: {card_view(card)["interfaces"]}')
        chosen = v1[0]
        transport = RestTransport(self.http, card, chosen.url, is_shared_httpx=True)
        self.protocol = {
            'binding': 'HTTP+JSON',
            'version': '1.0',
            'transport': f'{type(transport).__module__}.{type(transport).__name__}',
            'url': chosen.url,
            'advertisedVersion': chosen.protocol_version,
        }
        return transport

    def _pure_v10_transport(self, card: AgentCard, url: str, config: ClientConfig) -> JsonRpcTransport:
        jsonrpc = [i for i in card.supported_interfaces if i.protocol_binding == 'JSONRPC']
        v1 = [i for i in jsonrpc if i.protocol_version.split('.', 1)[0] == '1']
        chosen = v1[0] if v1 else next((i for i in jsonrpc if i.url == url), None)
        target = chosen.url if chosen else url
        transport = JsonRpcTransport(self.http, card, target, is_shared_httpx=True)
        self.protocol = {
            'binding': 'JSONRPC',
            'version': '1.0',
            'transport': f'{type(transport).__module__}.{type(transport).__name__}',
            'url': target,
            'advertisedVersion': chosen.protocol_version if chosen else None,
        }
        return transport

    async def discover(self) -> AgentCard:
        # The factory sets `A2A-Version: 1.0` on the shared httpx client; build one first so the
        # card fetch carries it too, as `ClientFactory.create_from_url` does.
        self.factory(streaming=False)
        resolver = A2ACardResolver(self.http, self.base)
        self.card = await resolver.get_agent_card()
        return self.card

    def client(self, *, streaming: bool, polling: bool = False):
        assert self.card is not None
        return self.factory(streaming=streaming, polling=polling).create(self.card)

    @staticmethod
    def user_message(text: str, extra: list[Part] | None = None, **ids: str) -> Message:
        return Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text=text), *(extra or [])],
            **ids,
        )

    async def send(self, message: Message, *, return_immediately: bool = False) -> StreamResponse:
        client = self.client(streaming=False)
        request = SendMessageRequest(
            message=message,
            configuration=SendMessageConfiguration(return_immediately=return_immediately),
        )
        results = [event async for event in client.send_message(request)]
        if len(results) != 1:
            raise RuntimeError(f'a unary send gave {len(results)} results')
        return results[0]

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        client = self.client(streaming=False)
        request = GetTaskRequest(id=task_id)
        if history_length is not None:
            request.history_length = history_length
        return await client.get_task(request)

    # --- scenarios ---------------------------------------------------------------------------

    async def run(self, name: str) -> dict[str, Any]:
        self.raw_errors = []
        out = await getattr(self, f'scenario_{name}')()
        out['rawErrors'] = self.raw_errors
        return out

    async def scenario_card(self) -> dict[str, Any]:
        assert self.card is not None
        return {'card': card_view(self.card)}

    async def scenario_send_blocking(self) -> dict[str, Any]:
        result = await self.send(self.user_message('echo hello interop'))
        return {'result': result_view(result)}

    async def scenario_send_nonblocking_get(self) -> dict[str, Any]:
        sent = await self.send(self.user_message('echo later'), return_immediately=True)
        if not sent.HasField('task'):
            return {'sent': result_view(sent)}
        task_id = sent.task.id

        async def fetch() -> dict[str, Any]:
            return task_view(await self.get(task_id))

        final, states = await c.poll_until(fetch, lambda t: t['state'] in c.TERMINAL)
        return {
            'sent': result_view(sent),
            'polledStates': states,
            'final': final,
            'historyUnset': task_view(await self.get(task_id)),
            'history1': task_view(await self.get(task_id, 1)),
            'history0': task_view(await self.get(task_id, 0)),
        }

    async def collect(self, stream, clock: c.Clock, events: list[dict[str, Any]]) -> None:
        async for event in stream:
            events.append(event_view(event, clock.now()))

    async def scenario_stream(self) -> dict[str, Any]:
        client = self.client(streaming=True)
        request = SendMessageRequest(message=self.user_message('stream please'))
        clock = c.Clock()
        events: list[dict[str, Any]] = []
        await self.collect(client.send_message(request), clock, events)
        return {'events': events, 'closedAt': clock.now()}

    async def start_slow(self) -> Task:
        sent = await self.send(self.user_message('slow job'), return_immediately=True)
        if not sent.HasField('task'):
            raise RuntimeError(f'slow send did not give a task: {result_view(sent)}')
        return sent.task

    async def scenario_cancel(self) -> dict[str, Any]:
        task = await self.start_slow()
        await asyncio.sleep(0.3)
        client = self.client(streaming=False)
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        after = await self.get(task.id)
        return {'sent': task_view(task), 'canceled': task_view(canceled), 'after': task_view(after)}

    async def scenario_resubscribe(self) -> dict[str, Any]:
        task = await self.start_slow()
        client = self.client(streaming=True)
        clock = c.Clock()
        events: list[dict[str, Any]] = []
        stream = client.subscribe(SubscribeToTaskRequest(id=task.id))
        collector = asyncio.ensure_future(self.collect(stream, clock, events))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5.0
        while len(events) < 3 and not collector.done() and loop.time() < deadline:
            await asyncio.sleep(0.05)
        cancel_at = clock.now()
        canceled = await self.client(streaming=False).cancel_task(CancelTaskRequest(id=task.id))
        ended = True
        stream_error = None
        try:
            await asyncio.wait_for(asyncio.shield(collector), 5.0)
        except TimeoutError:
            ended = False
            collector.cancel()
        except Exception as exc:  # noqa: BLE001 - an error ending the stream is an observation
            stream_error = to_error(exc)
        return {
            'taskId': task.id,
            'events': events,
            'cancelAt': cancel_at,
            'canceled': task_view(canceled),
            'ended': ended,
            'streamError': stream_error,
            'after': task_view(await self.get(task.id)),
        }

    async def scenario_subscribe_input_required(self) -> dict[str, Any]:
        first = await self.send(self.user_message('ask me something'))
        if not first.HasField('task'):
            return {'first': result_view(first)}
        task = first.task
        client = self.client(streaming=True)
        clock = c.Clock()
        events: list[dict[str, Any]] = []
        stream = client.subscribe(SubscribeToTaskRequest(id=task.id))
        collector = asyncio.ensure_future(self.collect(stream, clock, events))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5.0
        while not events and not collector.done() and loop.time() < deadline:
            await asyncio.sleep(0.02)
        follow_up_at = clock.now()
        follow = self.user_message('blue', task_id=task.id, context_id=task.context_id)
        second = await self.send(follow)
        ended = True
        stream_error = None
        try:
            await asyncio.wait_for(asyncio.shield(collector), 10.0)
        except TimeoutError:
            ended = False
            collector.cancel()
        except Exception as exc:  # noqa: BLE001 - an error ending the stream is an observation
            stream_error = to_error(exc)
        return {
            'taskId': task.id,
            'first': result_view(first),
            'events': events,
            'followUpAt': follow_up_at,
            'second': result_view(second),
            'ended': ended,
            'streamError': stream_error,
        }

    async def scenario_input_required(self) -> dict[str, Any]:
        first = await self.send(self.user_message('ask me something'))
        if not first.HasField('task'):
            return {'first': result_view(first)}
        follow = self.user_message('blue', task_id=first.task.id, context_id=first.task.context_id)
        second = await self.send(follow)
        return {'first': result_view(first), 'second': result_view(second)}

    async def scenario_parts(self) -> dict[str, Any]:
        data = json_format.ParseDict(c.DATA_VALUE, struct_pb2.Value())
        extra = [
            Part(raw=c.FILE_BYTES, media_type=c.FILE_MEDIA_TYPE, filename=c.FILE_NAME),
            Part(url=c.FILE_URI, media_type=c.URI_MEDIA_TYPE, filename=c.URI_NAME),
            Part(data=data),
        ]
        message = self.user_message('parts', extra)
        result = await self.send(message)
        return {
            'sent': [part_view(p) for p in extra],
            'expectedParts': c.expected_parts(),
            'expectedSummary': c.expected_summary(),
            'result': result_view(result),
        }

    async def scenario_push_config(self) -> dict[str, Any]:
        done = await self.send(self.user_message('echo push'))
        task_id = done.task.id
        client = self.client(streaming=False)
        created = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=task_id, id=c.PUSH_CONFIG_ID, url=c.PUSH_URL, token=c.PUSH_TOKEN
            )
        )
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id=c.PUSH_CONFIG_ID)
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=c.PUSH_CONFIG_ID)
        )
        listed_after = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        return {
            'taskId': task_id,
            'created': push_view(created),
            'got': push_view(got),
            'listed': [push_view(x) for x in listed.configs],
            'deleted': True,
            'listedAfterDelete': [push_view(x) for x in listed_after.configs],
        }

    async def scenario_push_delivery(self) -> dict[str, Any]:
        """A task that waits for input, a push config with a token and Bearer credentials on
        the webhook `INTEROP_WEBHOOK`, then the follow-up that completes it: the agent's push
        sender reports each step to the webhook."""
        webhook = os.environ['INTEROP_WEBHOOK']
        first = await self.send(self.user_message('ask push'))
        task = first.task
        client = self.client(streaming=False)
        created = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=task.id,
                id=c.PUSH_CONFIG_ID,
                url=webhook,
                token=c.PUSH_TOKEN,
                authentication=AuthenticationInfo(scheme='Bearer', credentials=c.PUSH_CREDENTIALS),
            )
        )
        second = await self.send(self.user_message('blue', task_id=task.id, context_id=task.context_id))
        return {
            'taskId': task.id,
            'created': {
                **push_view(created),
                'authentication': [created.authentication.scheme, created.authentication.credentials],
            },
            'first': result_view(first),
            'second': result_view(second),
        }

    async def scenario_unknown_task(self) -> dict[str, Any]:
        try:
            task = await self.get(f'no-such-task-{uuid.uuid4()}')
        except Exception as exc:  # noqa: BLE001 - the error is the observation
            return {'error': to_error(exc)}
        return {'unexpected': task_view(task)}

    async def scenario_undeclared_media(self) -> dict[str, Any]:
        extra = [Part(raw=b'\x00\x01opaque', media_type=c.UNDECLARED_MEDIA_TYPE, filename='x.bin')]
        try:
            result = await self.send(self.user_message('echo undeclared', extra))
        except Exception as exc:  # noqa: BLE001 - the error is the observation
            return {'error': to_error(exc)}
        return {'unexpected': result_view(result)}

    async def scenario_extended_card(self) -> dict[str, Any]:
        client = self.client(streaming=False)
        card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        return {'card': card_view(card)}

    async def scenario_list_tasks(self) -> dict[str, Any]:
        # Conversations of this run only: the agent (and the bridge's index) hold other tasks.
        tag = uuid.uuid4().hex[:8]
        ctx_a, ctx_b = f'list-a-{tag}', f'list-b-{tag}'
        made = {}
        for name, text, ctx in (('one', 'echo list one', ctx_a), ('two', 'ask list two', ctx_a),
                                ('three', 'echo list three', ctx_b)):
            result = await self.send(self.user_message(text, context_id=ctx))
            made[result.task.id] = name
        client = self.client(streaming=False)

        async def listed(**fields: Any) -> dict[str, Any]:
            page = await client.list_tasks(ListTasksRequest(**fields))
            return {
                'tasks': [
                    {
                        'name': made.get(task.id, task.id),
                        'state': state_name(task.status.state),
                        'history': len(task.history),
                        'artifacts': len(task.artifacts),
                    }
                    for task in page.tasks
                ],
                'nextPageToken': page.next_page_token,
                'pageSize': page.page_size,
                'totalSize': page.total_size,
            }

        pages = []
        token = ''
        for _ in range(4):
            page = await listed(context_id=ctx_a, page_size=1, page_token=token)
            pages.append(page)
            token = page['nextPageToken']
            if not token:
                break
        return {
            'all': await listed(context_id=ctx_a),
            'byStatus': await listed(context_id=ctx_a, status=TaskState.TASK_STATE_INPUT_REQUIRED),
            'pages': pages,
            'shaped': await listed(context_id=ctx_b, history_length=1, include_artifacts=True),
            'after': await listed(context_id=ctx_a, status_timestamp_after=json_format.Parse(
                '"2999-01-01T00:00:00Z"', Timestamp())),
        }

    async def scenario_message(self) -> dict[str, Any]:
        result = await self.send(self.user_message('message for you'))
        return {'result': result_view(result)}

    async def scenario_version_unsupported(self) -> dict[str, Any]:
        if self.binding == 'rest':
            return await self.version_unsupported_rest()
        if self.binding == 'grpc':
            return await self.version_unsupported_grpc()
        url = self.protocol.get('url') or self.base
        body = {
            'jsonrpc': '2.0',
            'id': 'version-check',
            'method': 'GetTask',
            'params': {'id': f'no-such-task-{uuid.uuid4()}'},
        }
        response = await self.http.post(url, json=body, headers={'A2A-Version': '99.0'})
        try:
            payload: Any = response.json()
        except ValueError:
            payload = response.text
        error = payload.get('error') if isinstance(payload, dict) else None
        return {
            'httpStatus': response.status_code,
            'body': payload,
            'error': {'type': 'JSON-RPC', 'code': error.get('code'), 'message': error.get('message')}
            if isinstance(error, dict)
            else None,
        }

    async def version_unsupported_grpc(self) -> dict[str, Any]:
        from a2a.types import a2a_pb2, a2a_pb2_grpc
        from google.rpc import error_details_pb2, status_pb2

        async with grpc.aio.insecure_channel(self.protocol['url']) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            try:
                await stub.GetTask(
                    a2a_pb2.GetTaskRequest(id=f'no-such-task-{uuid.uuid4()}'),
                    metadata=[('a2a-version', '99.0')],
                )
            except grpc.aio.AioRpcError as failure:
                details = []
                for key, value in failure.trailing_metadata() or []:
                    if key != 'grpc-status-details-bin':
                        continue
                    for packed in status_pb2.Status.FromString(value).details:
                        info = error_details_pb2.ErrorInfo()
                        if packed.Unpack(info):
                            details.append({'@type': c.ERROR_INFO_TYPE, 'reason': info.reason, 'domain': info.domain})
                kind = A2A_REASON_TO_ERROR.get(details[0]['reason']) if details else None
                return {
                    'grpcStatus': failure.code().name,
                    'body': {'error': {'data': details}},
                    'error': {
                        'type': 'GRPC',
                        'code': JSON_RPC_ERROR_CODE_MAP.get(kind) if kind else None,
                        'message': failure.details(),
                    },
                }
        return {'error': None}

    async def version_unsupported_rest(self) -> dict[str, Any]:
        url = (self.protocol.get('url') or self.base).rstrip('/')
        response = await self.http.get(
            f'{url}/tasks/no-such-task-{uuid.uuid4()}', headers={'A2A-Version': '99.0'}
        )
        try:
            payload: Any = response.json()
        except ValueError:
            payload = response.text
        error = payload.get('error') if isinstance(payload, dict) else None
        details = (error or {}).get('details') or []
        reasons = [d.get('reason') for d in details if isinstance(d, dict)]
        kind = A2A_REASON_TO_ERROR.get(reasons[0]) if reasons else None
        return {
            'httpStatus': response.status_code,
            # The REST error's details are the JSON-RPC error's data; the checks read them there.
            'body': {'error': {'data': details}},
            'error': {
                'type': 'HTTP+JSON',
                'code': JSON_RPC_ERROR_CODE_MAP.get(kind) if kind else None,
                'message': (error or {}).get('message'),
            },
        }

async def main_async(base: str, names: list[str], binding: str) -> dict[str, Any]:
    peer = Peer(base, binding)
    document: dict[str, Any] = {
        'client': '1.0',
        'binding': binding,
        'sdk': f'a2a-sdk {dist_version("a2a-sdk")}',
        'base': base,
    }
    try:
        try:
            await peer.discover()
            peer.client(streaming=False)
        except Exception as exc:  # noqa: BLE001 - discovery failure is the observation
            document['discoveryError'] = to_error(exc)
            document['wire'] = peer.wire.take()
            return document
        document['protocol'] = peer.protocol
        document['discoveryWire'] = peer.wire.take()
        document['scenarios'] = await c.run_scenarios(names, peer.run, peer.wire, to_error)
        document['protocol'] = peer.protocol
        return document
    finally:
        await peer.http.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--base', required=True)
    parser.add_argument('--binding', choices=['jsonrpc', 'rest', 'grpc'], default='jsonrpc')
    parser.add_argument('scenarios', nargs='+')
    args = parser.parse_args()
    names = c.SCENARIOS if args.scenarios == ['all'] else args.scenarios
    unknown = [n for n in names if n not in c.SCENARIOS and n not in c.ON_REQUEST]
    if unknown:
        parser.error(f'unknown scenarios: {unknown}')
    c.emit(asyncio.run(main_async(args.base, names, args.binding)))


if __name__ == '__main__':
    main()

"""A real A2A 0.3 client built from a2a-sdk 0.3.x's own client classes.

Usage: `python client_v03.py --base URL SCENARIO [SCENARIO ...]` (or `all`). Discovers the agent
through `A2ACardResolver`, talks to it through `ClientFactory`/`BaseClient` on the JSON-RPC
transport, and prints one JSON document with what it observed (see `common.py` for the shapes).

# Why two calls bypass `BaseClient`

The 0.3 `Client` has no method for `tasks/pushNotificationConfig/list` or `.../delete`, although
the 0.3 protocol has both. Those two go through the SDK's own JSON-RPC transport
(`JsonRpcTransport._send_request`), with the request and response built and validated by the
SDK's pydantic models (`ListTaskPushNotificationConfigRequest`, ...), so the wire form is still
exactly what the 0.3 SDK produces.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from importlib.metadata import version as dist_version
from typing import Any

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import (
    AgentCard,
    DataPart,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigResponse,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetTaskPushNotificationConfigParams,
    JSONRPCErrorResponse,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)

import common as c

# --- neutral shapes ------------------------------------------------------------------------------


def part_view(part: Part) -> dict[str, Any]:
    root = part.root
    if isinstance(root, TextPart):
        return {'text': root.text}
    if isinstance(root, FilePart) and isinstance(root.file, FileWithBytes):
        return {
            'bytes': c.normalize_b64(root.file.bytes),
            'mediaType': root.file.mime_type or None,
            'name': root.file.name or None,
        }
    if isinstance(root, FilePart) and isinstance(root.file, FileWithUri):
        return {'uri': root.file.uri, 'mediaType': root.file.mime_type or None, 'name': root.file.name or None}
    if isinstance(root, DataPart):
        return {'data': root.data}
    return {'empty': True}


def message_view(message: Message) -> dict[str, Any]:
    return {
        'role': message.role.value,
        'messageId': message.message_id,
        'taskId': message.task_id or None,
        'contextId': message.context_id or None,
        'parts': [part_view(p) for p in message.parts],
    }


def status_text(message: Message | None) -> str | None:
    if message is None:
        return None
    texts = [p.root.text for p in message.parts if isinstance(p.root, TextPart)]
    return '\n'.join(texts) if texts else None


def task_view(task: Task) -> dict[str, Any]:
    return {
        'id': task.id,
        'contextId': task.context_id or None,
        'state': task.status.state.value,
        'statusText': status_text(task.status.message),
        'artifacts': [
            {
                'artifactId': a.artifact_id,
                'name': a.name or None,
                'parts': [part_view(p) for p in a.parts],
            }
            for a in task.artifacts or []
        ],
        'history': [message_view(m) for m in task.history or []],
    }


def event_view(event: Any, t: float) -> dict[str, Any]:
    if isinstance(event, Task):
        return {'t': t, 'kind': 'task', 'task': task_view(event)}
    if isinstance(event, Message):
        return {'t': t, 'kind': 'message', 'message': message_view(event)}
    if isinstance(event, TaskStatusUpdateEvent):
        return {
            't': t,
            'kind': 'status-update',
            'taskId': event.task_id,
            'contextId': event.context_id or None,
            'state': event.status.state.value,
            'text': status_text(event.status.message),
            'final': event.final,
        }
    if isinstance(event, TaskArtifactUpdateEvent):
        return {
            't': t,
            'kind': 'artifact-update',
            'taskId': event.task_id,
            'contextId': event.context_id or None,
            'artifactId': event.artifact.artifact_id,
            'parts': [part_view(p) for p in event.artifact.parts],
            'append': bool(event.append),
            'lastChunk': bool(event.last_chunk),
        }
    return {'t': t, 'kind': type(event).__name__}


def result_view(result: Any) -> dict[str, Any]:
    if isinstance(result, Task):
        return {'task': task_view(result)}
    if isinstance(result, Message):
        return {'message': message_view(result)}
    return {'other': repr(result)}


def push_view(config: TaskPushNotificationConfig) -> dict[str, Any]:
    inner = config.push_notification_config
    return {'taskId': config.task_id, 'id': inner.id, 'url': inner.url, 'token': inner.token or None}


def card_view(card: AgentCard) -> dict[str, Any]:
    interfaces = [{'url': card.url, 'binding': card.preferred_transport or 'JSONRPC', 'protocolVersion': card.protocol_version}]
    interfaces += [
        {'url': i.url, 'binding': i.transport, 'protocolVersion': card.protocol_version}
        for i in card.additional_interfaces or []
    ]
    return {
        'name': card.name,
        'version': card.version,
        'url': card.url,
        'protocolVersion': card.protocol_version,
        'interfaces': interfaces,
        'defaultInputModes': list(card.default_input_modes),
        'defaultOutputModes': list(card.default_output_modes),
        'streaming': bool(card.capabilities.streaming),
        'pushNotifications': bool(card.capabilities.push_notifications),
        'extendedCard': bool(card.supports_authenticated_extended_card),
        'skills': [s.id for s in card.skills],
    }


def to_error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, A2AClientJSONRPCError):
        return c.error_record(exc, exc.error.code, exc.error.message)
    return c.error_record(exc, None)


def raise_if_error(response: Any) -> Any:
    if isinstance(response.root, JSONRPCErrorResponse):
        raise A2AClientJSONRPCError(response.root)
    return response.root.result


# --- the client ----------------------------------------------------------------------------------


class Peer:
    def __init__(self, base: str, binding: str = 'jsonrpc') -> None:
        self.base = base
        self.binding = binding
        self.wire = c.WireLog()
        self.http = httpx.AsyncClient(
            timeout=c.HTTP_TIMEOUT, event_hooks={'request': [self.wire.on_request]}
        )
        self.card: AgentCard | None = None
        self.protocol: dict[str, Any] = {}

    async def discover(self) -> AgentCard:
        self.card = await A2ACardResolver(self.http, self.base).get_agent_card()
        return self.card

    def client(self, *, streaming: bool):
        assert self.card is not None
        transport_name = {
            'rest': TransportProtocol.http_json,
            'grpc': TransportProtocol.grpc,
        }.get(self.binding, TransportProtocol.jsonrpc)
        config = ClientConfig(
            streaming=streaming,
            httpx_client=self.http,
            supported_transports=[transport_name],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )
        client = ClientFactory(config).create(self.card)
        transport = client._transport  # noqa: SLF001 - reported, and used for list/delete
        self.protocol = {
            'binding': {'rest': 'HTTP+JSON', 'grpc': 'GRPC'}.get(self.binding, 'JSONRPC'),
            'version': '0.3',
            'transport': f'{type(transport).__module__}.{type(transport).__name__}',
            'url': getattr(transport, 'url', None),
            'advertisedVersion': self.card.protocol_version,
        }
        return client

    def transport(self) -> JsonRpcTransport:
        transport = self.client(streaming=False)._transport  # noqa: SLF001
        assert isinstance(transport, JsonRpcTransport)
        return transport

    @staticmethod
    def user_message(text: str, extra: list[Part] | None = None, **ids: str) -> Message:
        return Message(
            role=Role.user,
            message_id=str(uuid.uuid4()),
            parts=[Part(root=TextPart(text=text)), *(extra or [])],
            **ids,
        )

    async def send(self, message: Message, *, blocking: bool = True) -> Any:
        client = self.client(streaming=False)
        results = [
            r
            async for r in client.send_message(
                message, configuration=MessageSendConfiguration(blocking=blocking)
            )
        ]
        if len(results) != 1:
            raise RuntimeError(f'a unary send gave {len(results)} results')
        result = results[0]
        return result[0] if isinstance(result, tuple) else result

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        client = self.client(streaming=False)
        return await client.get_task(TaskQueryParams(id=task_id, history_length=history_length))

    # --- scenarios ---------------------------------------------------------------------------

    async def run(self, name: str) -> dict[str, Any]:
        return await getattr(self, f'scenario_{name}')()

    async def scenario_card(self) -> dict[str, Any]:
        assert self.card is not None
        return {'card': card_view(self.card)}

    async def scenario_send_blocking(self) -> dict[str, Any]:
        return {'result': result_view(await self.send(self.user_message('echo hello interop')))}

    async def scenario_send_nonblocking_get(self) -> dict[str, Any]:
        sent = await self.send(self.user_message('echo later'), blocking=False)
        if not isinstance(sent, Task):
            return {'sent': result_view(sent)}

        async def fetch() -> dict[str, Any]:
            return task_view(await self.get(sent.id))

        final, states = await c.poll_until(fetch, lambda t: t['state'] in c.TERMINAL)
        return {
            'sent': result_view(sent),
            'polledStates': states,
            'final': final,
            'historyUnset': task_view(await self.get(sent.id)),
            'history1': task_view(await self.get(sent.id, 1)),
            'history0': task_view(await self.get(sent.id, 0)),
        }

    async def collect(self, stream, clock: c.Clock, events: list[dict[str, Any]]) -> None:
        async for item in stream:
            if isinstance(item, tuple):
                task, update = item
                events.append(event_view(update if update is not None else task, clock.now()))
            else:
                events.append(event_view(item, clock.now()))

    async def scenario_stream(self) -> dict[str, Any]:
        client = self.client(streaming=True)
        clock = c.Clock()
        events: list[dict[str, Any]] = []
        await self.collect(client.send_message(self.user_message('stream please')), clock, events)
        return {'events': events, 'closedAt': clock.now()}

    async def start_slow(self) -> Task:
        sent = await self.send(self.user_message('slow job'), blocking=False)
        if not isinstance(sent, Task):
            raise RuntimeError(f'slow send did not give a task: {result_view(sent)}')
        return sent

    async def scenario_cancel(self) -> dict[str, Any]:
        task = await self.start_slow()
        await asyncio.sleep(0.3)
        canceled = await self.client(streaming=False).cancel_task(TaskIdParams(id=task.id))
        after = await self.get(task.id)
        return {'sent': task_view(task), 'canceled': task_view(canceled), 'after': task_view(after)}

    async def scenario_resubscribe(self) -> dict[str, Any]:
        task = await self.start_slow()
        client = self.client(streaming=True)
        clock = c.Clock()
        events: list[dict[str, Any]] = []
        collector = asyncio.ensure_future(
            self.collect(client.resubscribe(TaskIdParams(id=task.id)), clock, events)
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5.0
        while len(events) < 3 and not collector.done() and loop.time() < deadline:
            await asyncio.sleep(0.05)
        cancel_at = clock.now()
        canceled = await self.client(streaming=False).cancel_task(TaskIdParams(id=task.id))
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
        if not isinstance(first, Task):
            return {'first': result_view(first)}
        client = self.client(streaming=True)
        clock = c.Clock()
        events: list[dict[str, Any]] = []
        collector = asyncio.ensure_future(
            self.collect(client.resubscribe(TaskIdParams(id=first.id)), clock, events)
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5.0
        while not events and not collector.done() and loop.time() < deadline:
            await asyncio.sleep(0.02)
        follow_up_at = clock.now()
        follow = self.user_message('blue', task_id=first.id, context_id=first.context_id)
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
            'taskId': first.id,
            'first': result_view(first),
            'events': events,
            'followUpAt': follow_up_at,
            'second': result_view(second),
            'ended': ended,
            'streamError': stream_error,
        }

    async def scenario_input_required(self) -> dict[str, Any]:
        first = await self.send(self.user_message('ask me something'))
        if not isinstance(first, Task):
            return {'first': result_view(first)}
        follow = self.user_message('blue', task_id=first.id, context_id=first.context_id)
        second = await self.send(follow)
        return {'first': result_view(first), 'second': result_view(second)}

    async def scenario_push_delivery(self) -> dict[str, Any]:
        """A task that waits for input, a push config with a token on the webhook
        `INTEROP_WEBHOOK`, then the follow-up that completes it: the agent's push sender
        reports each step to the webhook."""
        webhook = os.environ['INTEROP_WEBHOOK']
        first = await self.send(self.user_message('ask push'))
        client = self.client(streaming=False)
        created = await client.set_task_callback(
            TaskPushNotificationConfig(
                task_id=first.id,
                push_notification_config=PushNotificationConfig(
                    id=c.PUSH_CONFIG_ID, url=webhook, token=c.PUSH_TOKEN
                ),
            )
        )
        second = await self.send(self.user_message('blue', task_id=first.id, context_id=first.context_id))
        return {
            'taskId': first.id,
            'created': push_view(created),
            'first': result_view(first),
            'second': result_view(second),
        }

    async def scenario_parts(self) -> dict[str, Any]:
        extra = [
            Part(
                root=FilePart(
                    file=FileWithBytes(bytes=c.file_b64(), mime_type=c.FILE_MEDIA_TYPE, name=c.FILE_NAME)
                )
            ),
            Part(
                root=FilePart(file=FileWithUri(uri=c.FILE_URI, mime_type=c.URI_MEDIA_TYPE, name=c.URI_NAME))
            ),
            Part(root=DataPart(data=c.DATA_VALUE)),
        ]
        result = await self.send(self.user_message('parts', extra))
        return {
            'sent': [part_view(p) for p in extra],
            'expectedParts': c.expected_parts(),
            'expectedSummary': c.expected_summary(),
            'result': result_view(result),
        }

    async def scenario_push_config(self) -> dict[str, Any]:
        done = await self.send(self.user_message('echo push'))
        task_id = done.id
        client = self.client(streaming=False)
        created = await client.set_task_callback(
            TaskPushNotificationConfig(
                task_id=task_id,
                push_notification_config=PushNotificationConfig(
                    id=c.PUSH_CONFIG_ID, url=c.PUSH_URL, token=c.PUSH_TOKEN
                ),
            )
        )
        got = await client.get_task_callback(
            GetTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=c.PUSH_CONFIG_ID)
        )
        transport = self.transport()

        async def list_configs() -> list[TaskPushNotificationConfig]:
            request = ListTaskPushNotificationConfigRequest(
                id=str(uuid.uuid4()), params=ListTaskPushNotificationConfigParams(id=task_id)
            )
            data = await transport._send_request(request.model_dump(mode='json', exclude_none=True))  # noqa: SLF001
            return raise_if_error(ListTaskPushNotificationConfigResponse.model_validate(data))

        listed = await list_configs()
        delete = DeleteTaskPushNotificationConfigRequest(
            id=str(uuid.uuid4()),
            params=DeleteTaskPushNotificationConfigParams(
                id=task_id, push_notification_config_id=c.PUSH_CONFIG_ID
            ),
        )
        data = await transport._send_request(delete.model_dump(mode='json', exclude_none=True))  # noqa: SLF001
        # A 0.3 server answers a delete with `result: null`, which the SDK's own servers drop
        # from the JSON entirely; the SDK's response model then rejects its own server's answer,
        # so only an error member is checked here.
        if isinstance(data, dict) and 'error' in data:
            raise_if_error(DeleteTaskPushNotificationConfigResponse.model_validate(data))
        listed_after = await list_configs()
        return {
            'taskId': task_id,
            'created': push_view(created),
            'got': push_view(got),
            'listed': [push_view(x) for x in listed],
            'deleted': True,
            'listedAfterDelete': [push_view(x) for x in listed_after],
        }

    async def scenario_unknown_task(self) -> dict[str, Any]:
        try:
            task = await self.get(f'no-such-task-{uuid.uuid4()}')
        except Exception as exc:  # noqa: BLE001 - the error is the observation
            return {'error': to_error(exc)}
        return {'unexpected': task_view(task)}

    async def scenario_undeclared_media(self) -> dict[str, Any]:
        extra = [
            Part(
                root=FilePart(
                    file=FileWithBytes(
                        bytes='AAFvcGFxdWU=', mime_type=c.UNDECLARED_MEDIA_TYPE, name='x.bin'
                    )
                )
            )
        ]
        try:
            result = await self.send(self.user_message('echo undeclared', extra))
        except Exception as exc:  # noqa: BLE001 - the error is the observation
            return {'error': to_error(exc)}
        return {'unexpected': result_view(result)}

    async def scenario_extended_card(self) -> dict[str, Any]:
        card = await self.client(streaming=False).get_card()
        return {'card': card_view(card)}

    async def scenario_message(self) -> dict[str, Any]:
        return {'result': result_view(await self.send(self.user_message('message for you')))}


async def main_async(base: str, names: list[str], binding: str) -> dict[str, Any]:
    peer = Peer(base, binding)
    document: dict[str, Any] = {
        'client': '0.3',
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
        return document
    finally:
        await peer.http.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--base', required=True)
    parser.add_argument('--binding', choices=['jsonrpc', 'rest', 'grpc'], default='jsonrpc')
    parser.add_argument('scenarios', nargs='+')
    args = parser.parse_args()
    known = [n for n in c.SCENARIOS if n not in c.ONLY_V10]
    names = known if args.scenarios == ['all'] else args.scenarios
    unknown = [n for n in names if n not in known and n not in c.ON_REQUEST]
    if unknown:
        parser.error(f'unknown scenarios: {unknown}')
    c.emit(asyncio.run(main_async(args.base, names, args.binding)))


if __name__ == '__main__':
    main()

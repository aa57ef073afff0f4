"""A real A2A 1.0 agent built from a2a-sdk 1.x's own server classes.

A Starlette app holding the SDK's agent-card route and its JSON-RPC route
(`create_agent_card_routes`, `create_jsonrpc_routes` with `enable_v0_3_compat=False`, so this is
a pure 1.0 agent: 0.3 method names are unknown to it and every request must carry
`A2A-Version: 1.0`), a `DefaultRequestHandler` with an `InMemoryTaskStore` and an
`InMemoryPushNotificationConfigStore` and the SDK's own `BasePushNotificationSender`, and one `AgentExecutor` whose behaviour the user text
selects (see `behaviour.py`). The extended card is served through `GetExtendedAgentCard`.

The handler does not validate input modes (`validate_input_modes=False`): refusing an undeclared
media type is the bridge's job in the interop suite, and a lax agent proves the bridge did it.

With `--binding rest` the agent serves the SDK's HTTP+JSON routes (`create_rest_routes`) instead
of JSON-RPC, and its card offers only an `HTTP+JSON` interface: an agent the bridge must call
over REST.

Run: `python agent_v10.py --port N [--binding rest]` (N = 0 picks a free port). Prints one line
`READY <base url>` once the socket listens, then serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import uuid

import httpx
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette

import behaviour as b

# Whether the agent declares and sends push notifications (`--no-push` turns them off).
PUSH = True


def text_part(text: str) -> Part:
    return Part(text=text)


class InteropExecutor(AgentExecutor):
    """Runs the behaviour named by the first word of the user text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            return
        text = context.get_user_input()
        task = context.current_task

        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            await updater.add_artifact([text_part(f'answer: {text}')], name='answer')
            await updater.complete()
            return

        kind = b.behaviour_of(text)
        if kind == 'extensions':
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=str(uuid.uuid4()),
                context_id=context.context_id or '',
                parts=[text_part(f'extensions: {",".join(sorted(context.requested_extensions))}')],
            )
            await event_queue.enqueue_event(reply)
            return
        if kind == 'traceparent':
            state = context.call_context.state if context.call_context else {}
            seen = (state.get('headers') or {}).get('traceparent', 'none')
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=str(uuid.uuid4()),
                context_id=context.context_id or '',
                parts=[text_part(f'traceparent: {seen}')],
            )
            await event_queue.enqueue_event(reply)
            return
        if kind == 'message':
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=str(uuid.uuid4()),
                context_id=context.context_id or '',
                parts=[text_part(f'message: {text}')],
            )
            await event_queue.enqueue_event(reply)
            return

        task_id = context.task_id or ''
        context_id = context.context_id or ''
        if task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[message],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)

        def say(words: str) -> Message:
            return updater.new_agent_message([text_part(words)])

        if kind == 'stream':
            for i in range(b.STREAM_STEPS):
                await updater.update_status(TaskState.TASK_STATE_WORKING, message=say(f'step {i}'))
                await updater.add_artifact(
                    [text_part(f'chunk {i}')],
                    artifact_id='stream',
                    name='stream',
                    append=i > 0,
                    last_chunk=i == b.STREAM_STEPS - 1,
                )
                await asyncio.sleep(b.STREAM_SPACING)
            await updater.complete()
        elif kind == 'slow':
            await updater.start_work(message=say('slow started'))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + b.SLOW_LIMIT
            tick = 0
            while loop.time() < deadline:
                await asyncio.sleep(b.SLOW_TICK)
                await updater.update_status(TaskState.TASK_STATE_WORKING, message=say(f'tick {tick}'))
                tick += 1
            await updater.complete()
        elif kind == 'quiet':
            await updater.start_work(message=say('quiet started'))
            await asyncio.sleep(b.SLOW_LIMIT)
            await updater.complete()
        elif kind == 'ask':
            await updater.requires_input(message=say(b.QUESTION))
        elif kind == 'parts':
            received = [p for p in message.parts if p.WhichOneof('content') != 'text']
            summary = []
            for part in received:
                content = part.WhichOneof('content')
                if content == 'raw':
                    summary.append(b.bytes_summary(part.raw, part.media_type, part.filename))
                elif content == 'url':
                    summary.append(b.uri_summary(part.url, part.media_type, part.filename))
                elif content == 'data':
                    summary.append(b.data_summary(json_format.MessageToDict(part.data)))
            summary_value = json_format.ParseDict({'received': summary}, struct_pb2.Value())
            await updater.start_work()
            await updater.add_artifact(received, name='parts-echo')
            await updater.add_artifact([Part(data=summary_value)], name='parts-summary')
            await updater.complete()
        else:
            await updater.start_work(message=say(f'working on: {text}'))
            await asyncio.sleep(b.ECHO_PAUSE)
            await updater.add_artifact([text_part(f'echo: {text}')], name='echo')
            await updater.complete(message=say('done'))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or '', context.context_id or '')
        await updater.cancel()


def build_cards(base_url: str, binding: str = 'JSONRPC') -> tuple[AgentCard, AgentCard]:
    skill = AgentSkill(
        id=b.SKILL_ID,
        name='interop behaviours',
        description='echo, stream, slow, quiet, ask, parts, message',
        tags=['test'],
    )
    card = AgentCard(
        name=b.AGENT_NAME,
        description=b.AGENT_DESCRIPTION,
        version=b.AGENT_VERSION,
        supported_interfaces=[
            AgentInterface(url=base_url, protocol_binding=binding, protocol_version='1.0')
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=PUSH, extended_agent_card=True
        ),
        default_input_modes=list(b.INPUT_MODES),
        default_output_modes=list(b.OUTPUT_MODES),
        skills=[skill],
    )
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.skills.append(
        AgentSkill(
            id=b.EXTENDED_SKILL_ID,
            name='extended interop',
            description='only on the extended card',
            tags=['test', 'extended'],
        )
    )
    return card, extended


def request_handler(card: AgentCard, extended: AgentCard) -> DefaultRequestHandler:
    if not PUSH:
        # An agent without push: no config store, no sender.
        return DefaultRequestHandler(
            agent_executor=InteropExecutor(),
            task_store=InMemoryTaskStore(),
            agent_card=card,
            extended_agent_card=extended,
            validate_input_modes=False,
        )
    # The SDK's own push sender, on the config store the handler keeps configs in.
    push_configs = InMemoryPushNotificationConfigStore()
    push_sender = BasePushNotificationSender(httpx.AsyncClient(timeout=10.0), push_configs)
    return DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_configs,
        push_sender=push_sender,
        extended_agent_card=extended,
        validate_input_modes=False,
    )


async def serve(port: int, binding: str, max_age_ms: int = 0) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    base_url = f'http://127.0.0.1:{bound}/'
    rest = binding == 'rest'
    if binding == 'grpc':
        await serve_grpc(sock, base_url, max_age_ms)
        return
    card, extended = build_cards(base_url.rstrip('/') if rest else base_url, 'HTTP+JSON' if rest else 'JSONRPC')
    handler = request_handler(card, extended)
    served = (
        create_rest_routes(handler, enable_v0_3_compat=False)
        if rest
        else create_jsonrpc_routes(handler, rpc_url='/', enable_v0_3_compat=False)
    )
    routes = [*create_agent_card_routes(card), *served]
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    print(f'READY {base_url}', flush=True)
    await server.serve(sockets=[sock])


async def serve_grpc(sock: socket.socket, base_url: str, max_age_ms: int = 0) -> None:
    """The SDK's gRPC server (`GrpcHandler`) on a port of its own; the card, which offers only
    that gRPC interface (`host:port`), over HTTP on `sock`."""
    import grpc

    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    # With a maximum connection age, grpc-core ends each connection that old with a GOAWAY (as
    # grpc-go's `MaxConnectionAge` and meshes do), letting the calls it took finish.
    options = [('grpc.max_connection_age_ms', max_age_ms), ('grpc.max_connection_age_grace_ms', 10_000)]
    server = grpc.aio.server(options=options if max_age_ms else None)
    grpc_port = server.add_insecure_port('127.0.0.1:0')
    card, extended = build_cards(f'127.0.0.1:{grpc_port}', 'GRPC')
    handler = request_handler(card, extended)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(request_handler=handler), server)
    await server.start()
    app = Starlette(routes=list(create_agent_card_routes(card)))
    http = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    print(f'READY {base_url}', flush=True)
    await http.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--binding', choices=['jsonrpc', 'rest', 'grpc'], default='jsonrpc')
    parser.add_argument('--max-connection-age-ms', type=int, default=0, help='gRPC: end connections this old')
    parser.add_argument('--no-push', action='store_true', help='declare and keep no push notifications')
    args = parser.parse_args()
    global PUSH  # noqa: PLW0603 - one process, one agent: the flag is the agent's
    PUSH = not args.no_push
    try:
        asyncio.run(serve(args.port, args.binding, args.max_connection_age_ms))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == '__main__':
    main()

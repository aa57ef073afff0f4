"""A real A2A 0.3 agent built from a2a-sdk 0.3.x's own server classes.

`A2AStarletteApplication` + `DefaultRequestHandler` + `InMemoryTaskStore` +
`InMemoryPushNotificationConfigStore` with the SDK's own `BasePushNotificationSender`, and one `AgentExecutor` whose behaviour the user text
selects (see `behaviour.py`). Serves JSON-RPC at `/` and the card at
`/.well-known/agent-card.json`; the extended card is served through
`agent/getAuthenticatedExtendedCard`.

Run: `python agent_v03.py --port N` (N = 0 picks a free port). Prints one line
`READY <base url>` once the socket listens, then serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

import httpx
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Part,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
    TransportProtocol,
)
from a2a.utils import new_agent_text_message

import behaviour as b

# Whether the agent declares and sends push notifications (`--no-push` turns them off).
PUSH = True


def text_part(text: str) -> Part:
    return Part(root=TextPart(text=text))


class InteropExecutor(AgentExecutor):
    """Runs the behaviour named by the first word of the user text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            return
        text = context.get_user_input()
        task = context.current_task

        if task is not None and task.status.state == TaskState.input_required:
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            await updater.add_artifact([text_part(f'answer: {text}')], name='answer')
            await updater.complete()
            return

        kind = b.behaviour_of(text)
        if kind == 'extensions':
            requested = sorted(context.requested_extensions)
            for uri in requested:
                context.add_activated_extension(uri)
            await event_queue.enqueue_event(
                new_agent_text_message(f'extensions: {",".join(requested)}', context_id=context.context_id)
            )
            return
        if kind == 'message':
            await event_queue.enqueue_event(
                new_agent_text_message(f'message: {text}', context_id=context.context_id)
            )
            return
        if kind == 'traceparent':
            state = context.call_context.state if context.call_context else {}
            seen = (state.get('headers') or {}).get('traceparent', 'none')
            await event_queue.enqueue_event(
                new_agent_text_message(f'traceparent: {seen}', context_id=context.context_id)
            )
            return

        task_id = context.task_id or ''
        context_id = context.context_id or ''
        if task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.submitted),
                    history=[message],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)

        def say(words: str):
            return updater.new_agent_message([text_part(words)])

        if kind == 'stream':
            for i in range(b.STREAM_STEPS):
                await updater.update_status(TaskState.working, message=say(f'step {i}'))
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
                await updater.update_status(TaskState.working, message=say(f'tick {tick}'))
                tick += 1
            await updater.complete()
        elif kind == 'quiet':
            await updater.start_work(message=say('quiet started'))
            await asyncio.sleep(b.SLOW_LIMIT)
            await updater.complete()
        elif kind == 'ask':
            await updater.requires_input(message=say(b.QUESTION), final=True)
        elif kind == 'parts':
            received = [p for p in message.parts if not isinstance(p.root, TextPart)]
            summary = []
            for part in received:
                root = part.root
                if isinstance(root, FilePart) and isinstance(root.file, FileWithBytes):
                    summary.append(
                        b.bytes_summary(
                            b.b64decode(root.file.bytes), root.file.mime_type, root.file.name
                        )
                    )
                elif isinstance(root, FilePart) and isinstance(root.file, FileWithUri):
                    summary.append(
                        b.uri_summary(root.file.uri, root.file.mime_type, root.file.name)
                    )
                elif isinstance(root, DataPart):
                    summary.append(b.data_summary(root.data))
            await updater.start_work()
            await updater.add_artifact(received, name='parts-echo')
            await updater.add_artifact(
                [Part(root=DataPart(data={'received': summary}))], name='parts-summary'
            )
            await updater.complete()
        else:
            await updater.start_work(message=say(f'working on: {text}'))
            await asyncio.sleep(b.ECHO_PAUSE)
            await updater.add_artifact([text_part(f'echo: {text}')], name='echo')
            await updater.complete(message=say('done'))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or '', context.context_id or '')
        await updater.cancel()


def build_cards(base_url: str, transport: str = TransportProtocol.jsonrpc) -> tuple[AgentCard, AgentCard]:
    skill = AgentSkill(
        id=b.SKILL_ID,
        name='interop behaviours',
        description='echo, stream, slow, quiet, ask, parts, message',
        tags=['test'],
    )
    card = AgentCard(
        name=b.AGENT_NAME,
        description=b.AGENT_DESCRIPTION,
        url=base_url,
        version=b.AGENT_VERSION,
        protocol_version='0.3.0',
        preferred_transport=transport,
        capabilities=AgentCapabilities(streaming=True, push_notifications=PUSH),
        default_input_modes=list(b.INPUT_MODES),
        default_output_modes=list(b.OUTPUT_MODES),
        skills=[skill],
        supports_authenticated_extended_card=True,
    )
    extended = card.model_copy(
        update={
            'skills': [
                skill,
                AgentSkill(
                    id=b.EXTENDED_SKILL_ID,
                    name='extended interop',
                    description='only on the extended card',
                    tags=['test', 'extended'],
                ),
            ]
        }
    )
    return card, extended


def request_handler() -> DefaultRequestHandler:
    if not PUSH:
        # An agent without push, as many deployed 0.3 agents are: no config store, no sender.
        return DefaultRequestHandler(agent_executor=InteropExecutor(), task_store=InMemoryTaskStore())
    # The SDK's own push sender, on the config store the handler keeps configs in.
    push_configs = InMemoryPushNotificationConfigStore()
    push_sender = BasePushNotificationSender(httpx.AsyncClient(timeout=10.0), push_configs)
    return DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=push_configs,
        push_sender=push_sender,
    )


async def serve_grpc(sock: socket.socket, base_url: str, max_age_ms: int = 0) -> None:
    """The SDK's gRPC server (`GrpcHandler`) on a port of its own; the card, whose URL is that
    gRPC target (`host:port`, preferred transport GRPC), over HTTP on `sock`."""
    import grpc

    from a2a.grpc import a2a_pb2_grpc
    from a2a.server.request_handlers import GrpcHandler

    # With a maximum connection age, grpc-core ends each connection that old with a GOAWAY (as
    # grpc-go's `MaxConnectionAge` and meshes do), letting the calls it took finish.
    options = [('grpc.max_connection_age_ms', max_age_ms), ('grpc.max_connection_age_grace_ms', 10_000)]
    server = grpc.aio.server(options=options if max_age_ms else None)
    grpc_port = server.add_insecure_port('127.0.0.1:0')
    card, extended = build_cards(f'127.0.0.1:{grpc_port}', TransportProtocol.grpc)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, request_handler()), server)
    await server.start()
    # The card over HTTP (the SDK's app serves it at /.well-known/agent-card.json).
    app = A2AStarletteApplication(agent_card=card, http_handler=request_handler(), extended_agent_card=extended).build()
    http = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    print(f'READY {base_url}', flush=True)
    await http.serve(sockets=[sock])


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
    # a2a-sdk 0.3's REST client appends /v1/... to the card URL: the base without a slash.
    card, extended = build_cards(
        base_url.rstrip('/') if rest else base_url,
        TransportProtocol.http_json if rest else TransportProtocol.jsonrpc,
    )
    handler = request_handler()
    application = A2ARESTFastAPIApplication if rest else A2AStarletteApplication
    app = application(agent_card=card, http_handler=handler, extended_agent_card=extended).build()
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    print(f'READY {base_url}', flush=True)
    await server.serve(sockets=[sock])


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

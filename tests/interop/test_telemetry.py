"""Traces (`[telemetry]`): the bridge's spans, received by a real OTLP receiver the test runs
(the collector's protobuf schema, `opentelemetry-proto`, on a gRPC server and on an HTTP one),
for calls through the bridge to the a2a-sdk 0.3.26 agent.

Each call has a SERVER span named after the logical method (`SendMessage`), its parent the
caller's `traceparent` (an HTTP header, gRPC metadata), and a CLIENT span, its child, whose
context is the `traceparent` the agent receives (the agent's `traceparent` behaviour echoes
it). Each carries its own `a2a.protocol.version` and binding; a stream's events are events of
the SERVER span with the task state. A receiver that is down costs the calls nothing.
"""

from __future__ import annotations

import asyncio
import http.server
import os
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from callers import Channels, GrpcCaller
from conftest import free_port
from test_grpc_policy import Bridge

V10 = {'A2A-Version': '1.0'}
SERVER, CLIENT = 2, 3  # opentelemetry.proto.trace.v1.Span.SpanKind


class Receiver:
    """An OTLP trace receiver: every span exported to it, over gRPC or HTTP/protobuf."""

    def __init__(self, protocol: str) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

        self.spans: list[Any] = []
        self.metadata: list[dict[str, str]] = []
        self.lock = threading.Lock()
        receiver = self
        self.port = free_port()
        if protocol == 'grpc':
            class Service(trace_service_pb2_grpc.TraceServiceServicer):
                def Export(self, request, context):  # noqa: N802 - the generated name
                    with receiver.lock:
                        receiver.metadata.append(dict(context.invocation_metadata()))
                    receiver.take(request)
                    return trace_service_pb2.ExportTraceServiceResponse()

            self.server = grpc.server(futures.ThreadPoolExecutor(4))
            trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), self.server)
            self.server.add_insecure_port(f'127.0.0.1:{self.port}')
            self.server.start()
            self.stop = lambda: self.server.stop(0)
        else:
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_POST(self):  # noqa: N802 - the stdlib's name
                    body = self.rfile.read(int(self.headers.get('content-length', 0)))
                    receiver.paths.append(self.path)
                    receiver.take(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
                    data = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                    self.send_response(200)
                    self.send_header('Content-Type', 'application/x-protobuf')
                    self.send_header('Content-Length', str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

                def log_message(self, *args):
                    pass

            self.paths: list[str] = []
            self.http = http.server.ThreadingHTTPServer(('127.0.0.1', self.port), Handler)
            threading.Thread(target=self.http.serve_forever, daemon=True).start()
            self.stop = self.http.shutdown

    def take(self, request) -> None:
        with self.lock:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        self.spans.append((resource.resource, span))

    def of_trace(self, trace_id: str, count: int, timeout: float = 15.0) -> list[Any]:
        """The spans of `trace_id`, once at least `count` arrived."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                found = [s for _, s in self.spans if s.trace_id.hex() == trace_id]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.1)


def attributes(span) -> dict[str, Any]:
    out = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = value.string_value if value.HasField('string_value') else value.int_value
    return out


def traceparent() -> tuple[str, str, str]:
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, parent, f'00-{trace_id}-{parent}-01'


@pytest.fixture(scope='module')
def traced(agents, logs: Path) -> Iterator[tuple[Bridge, Receiver]]:
    receiver = Receiver('grpc')
    os.environ['OTEL_BSP_SCHEDULE_DELAY'] = '200'
    try:
        bridge = Bridge('traced', agents['0.3'], logs,
                        f'[telemetry]\nendpoint = "http://127.0.0.1:{receiver.port}"\nprotocol = "grpc"\n'
                        'service_name = "bridge-under-test"\nsample_ratio = 1.0\n'
                        'headers = { x-receiver-key = "k-1" }\n'
                        '[push]\nallow_networks = ["127.0.0.0/8"]\n')
    finally:
        del os.environ['OTEL_BSP_SCHEDULE_DELAY']
    yield bridge, receiver
    bridge.close()
    receiver.stop()


def pair(spans) -> tuple[Any, Any]:
    (server,) = [s for s in spans if s.kind == SERVER]
    (client,) = [s for s in spans if s.kind == CLIENT]
    return server, client


def test_a_json_rpc_call_has_a_server_span_under_the_callers_trace_and_a_client_span_the_agent_sees(traced):
    bridge, receiver = traced
    trace_id, parent, header = traceparent()
    answer = httpx.post(bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=15, json={
        'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
        'params': {'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'traceparent'}]}}})
    text = answer.json()['result']['message']['parts'][0]['text']
    server, client = pair(receiver.of_trace(trace_id, 2))
    assert server.name == 'SendMessage' and server.parent_span_id.hex() == parent, server
    assert client.name == 'SendMessage' and client.parent_span_id == server.span_id, client
    seen = attributes(server)
    assert seen['a2a.method.name'] == 'SendMessage' and seen['a2a.protocol.version'] == '1.0', seen
    assert seen['a2a_bridge.caller.binding'] == 'jsonrpc' and seen['a2a_bridge.direction'] == '1.0->0.3', seen
    assert 'a2a.message.id' in seen, seen
    toward = attributes(client)
    assert toward['a2a.protocol.version'] == '0.3' and toward['a2a_bridge.agent.binding'] == 'jsonrpc', toward
    # The agent received the CLIENT span's context, in the caller's trace.
    assert text == f'traceparent: 00-{trace_id}-{client.span_id.hex()}-01', text
    # No content: no attribute holds the message's text.
    assert not any('traceparent:' in str(v) for v in [*seen.values(), *toward.values()]), (seen, toward)
    resource = {kv.key: kv.value.string_value for _, s in receiver.spans if s.span_id == server.span_id
                for kv in _.attributes}
    assert resource.get('service.name') == 'bridge-under-test', resource


def test_each_export_is_a_grpc_call_with_the_configured_headers(traced):
    bridge, receiver = traced
    trace_id, _, header = traceparent()
    httpx.post(bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=15, json={
        'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
        'params': {'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'hi'}]}}})
    assert len(receiver.of_trace(trace_id, 2)) == 2
    with receiver.lock:
        metadata = list(receiver.metadata)
    assert metadata and all(m.get('x-receiver-key') == 'k-1' for m in metadata), metadata


def test_an_http_json_call_and_a_task_are_traced(traced):
    bridge, receiver = traced
    trace_id, parent, header = traceparent()
    answer = httpx.post(f'{bridge.peer.url}/message:send', headers={**V10, 'traceparent': header}, timeout=15,
                        json={'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask t'}]}})
    task = answer.json()['task']
    server, client = pair(receiver.of_trace(trace_id, 2))
    assert server.parent_span_id.hex() == parent, server
    seen = attributes(server)
    assert seen['a2a_bridge.caller.binding'] == 'http_json', seen
    assert seen['a2a.task.id'] == task['id'] and seen['gen_ai.conversation.id'] == task['contextId'], seen
    assert seen['a2a.task.state'] == 'TASK_STATE_INPUT_REQUIRED', seen
    assert attributes(client)['a2a.task.id'] == task['id'], attributes(client)


def test_a_grpc_call_takes_its_parent_from_metadata(traced):
    bridge, receiver = traced
    trace_id, parent, header = traceparent()

    async def body() -> None:
        channels = Channels()
        try:
            caller = GrpcCaller('1.0', channels.get(bridge.target))
            caller.metadata = (*caller.metadata, ('traceparent', header))
            await caller.send(f'ask {uuid.uuid4().hex}')
        finally:
            await channels.close()

    asyncio.run(body())
    server, _ = pair(receiver.of_trace(trace_id, 2))
    assert server.parent_span_id.hex() == parent, server
    assert attributes(server)['a2a_bridge.caller.binding'] == 'grpc', attributes(server)


def test_a_failed_call_names_its_error_type(traced):
    bridge, receiver = traced
    trace_id, _, header = traceparent()
    httpx.post(bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=15, json={
        'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'no-such-task'}})
    server, client = pair(receiver.of_trace(trace_id, 2))
    assert attributes(server)['error.type'] == 'TaskNotFoundError', attributes(server)
    assert attributes(client)['error.type'] == 'TaskNotFoundError', attributes(client)
    assert server.status.code == 2, server.status  # STATUS_CODE_ERROR


def test_stream_events_are_events_of_the_server_span_with_the_task_state(traced):
    bridge, receiver = traced
    trace_id, _, header = traceparent()
    with httpx.stream('POST', bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=30, json={
            'jsonrpc': '2.0', 'id': 1, 'method': 'SendStreamingMessage',
            'params': {'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'stream t'}]}}}) as response:
        for _ in response.iter_lines():
            pass
    server, client = pair(receiver.of_trace(trace_id, 2))
    assert server.name == 'SendStreamingMessage', server
    events = [e for e in server.events if e.name == 'a2a.stream.event']
    states = [attributes(e).get('a2a.task.state') for e in events]
    assert 'TASK_STATE_WORKING' in states and states[-1] == 'TASK_STATE_COMPLETED', states
    assert len(events) >= 5, states
    assert client.end_time_unix_nano >= client.start_time_unix_nano, client


def test_spans_go_over_http_protobuf_too(agents, logs):
    receiver = Receiver('http/protobuf')
    bridge = Bridge('traced-http', agents['0.3'], logs,
                    f'[telemetry]\nendpoint = "http://127.0.0.1:{receiver.port}"\nprotocol = "http/protobuf"\n')
    try:
        trace_id, _, header = traceparent()
        httpx.post(bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=15, json={
            'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}})
        spans = receiver.of_trace(trace_id, 2, timeout=20.0)
        assert {s.kind for s in spans} == {SERVER, CLIENT}, spans
        assert receiver.paths and all(p == '/v1/traces' for p in receiver.paths), receiver.paths
    finally:
        bridge.close()
        receiver.stop()


def test_a_receiver_that_is_down_costs_the_calls_nothing(agents, logs):
    bridge = Bridge('traced-nowhere', agents['0.3'], logs,
                    f'[telemetry]\nendpoint = "http://127.0.0.1:{free_port()}"\n')
    try:
        with httpx.Client(timeout=15) as http:
            started = time.monotonic()
            for _ in range(20):
                answer = http.post(bridge.peer.url, headers=V10, json={
                    'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}})
                assert answer.json()['error']['code'] == -32001, answer.text
            took = time.monotonic() - started
        assert took < 10.0, f'20 calls took {took:.1f}s with the receiver down'
    finally:
        bridge.close()


def test_what_a_translation_loses_is_an_event_of_the_span_by_kind(traced):
    bridge, receiver = traced
    trace_id, _, header = traceparent()
    # A text part's media type has no place in 0.3: dropped toward the 0.3 agent.
    httpx.post(bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=15, json={
        'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': {
            'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER',
            'parts': [{'text': 'ask losses', 'mediaType': 'text/plain'}]}}})
    server, _ = pair(receiver.of_trace(trace_id, 2))
    losses = [attributes(e) for e in server.events if e.name == 'a2a_bridge.loss']
    assert any(l['a2a_bridge.loss.kind'] == 'field_dropped' and l['a2a_bridge.direction'] == '1.0->0.3'
               for l in losses), losses
    assert all('ask losses' not in str(l) for l in losses), losses


def test_a_push_delivery_has_a_span_of_its_own_linked_to_the_call_that_registered_it(traced, webhook):
    bridge, receiver = traced
    PRODUCER = 4
    with httpx.Client(timeout=15) as http:
        sent = http.post(bridge.peer.url, headers=V10, json={'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
                         'params': {'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER',
                                                'parts': [{'text': 'ask push'}]}}}).json()['result']['task']
        trace_id, _, header = traceparent()
        path = f'/traced-{uuid.uuid4().hex[:6]}'
        created = http.post(bridge.peer.url, headers={**V10, 'traceparent': header}, json={
            'jsonrpc': '2.0', 'id': 2, 'method': 'CreateTaskPushNotificationConfig',
            'params': {'taskId': sent['id'], 'id': 'p', 'url': f'{webhook.url}{path}'}}).json()
        assert created['result']['url'] == f'{webhook.url}{path}', created
        http.post(bridge.peer.url, headers=V10, json={'jsonrpc': '2.0', 'id': 3, 'method': 'SendMessage', 'params': {
            'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'blue'}],
                        'taskId': sent['id'], 'contextId': sent['contextId']}}})
    hits = webhook.wait(path, lambda h: any('COMPLETED' in str(x.body) for x in h))
    (register,) = [s for s in receiver.of_trace(trace_id, 1) if s.kind == SERVER]
    delivered = {h.headers.get('traceparent', '').split('-')[1] for h in hits if h.headers.get('traceparent')}
    assert delivered, [h.headers for h in hits]
    deadline = time.monotonic() + 15
    while True:
        with receiver.lock:
            pushes = [s for _, s in receiver.spans if s.kind == PRODUCER and s.trace_id.hex() in delivered]
        if len(pushes) >= len(delivered) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert pushes, 'no delivery span arrived'
    for push in pushes:
        assert push.name == 'a2a_bridge.push', push
        assert push.trace_id.hex() != trace_id, 'a delivery is a trace of its own'
        (link,) = push.links
        assert link.trace_id.hex() == trace_id and link.span_id == register.span_id, link
        assert attributes(push)['a2a.task.id'] == sent['id'], attributes(push)


def test_a_reload_turns_tracing_on_without_a_restart(agents, logs, tmp_path):
    import signal

    from conftest import bridge_binary, spawn, stop

    receiver = Receiver('grpc')
    port, admin = free_port(), free_port()
    base = (f'listen = "127.0.0.1:{port}"\nadmin = "127.0.0.1:{admin}"\n'
            f'[upstream]\nurl = "{agents["0.3"].url.rstrip("/")}"\n[demo]\nenabled = false\n')
    config = tmp_path / 'reloaded.toml'
    config.write_text(base)
    process, _, _ = spawn('traced-reload', [str(bridge_binary()), '--config', str(config)], logs)
    url = f'http://127.0.0.1:{port}'
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f'http://127.0.0.1:{admin}/readyz', timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)

        def call() -> str:
            trace_id, _, header = traceparent()
            httpx.post(url, headers={**V10, 'traceparent': header}, timeout=15, json={
                'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}})
            return trace_id

        untraced = call()
        config.write_text(base + f'[telemetry]\nendpoint = "http://127.0.0.1:{receiver.port}"\n')
        process.send_signal(signal.SIGHUP)
        traced_id = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and traced_id is None:
            trace_id = call()
            if receiver.of_trace(trace_id, 1, timeout=7.0):
                traced_id = trace_id
        assert traced_id is not None, 'no span after the reload turned tracing on'
        assert not receiver.of_trace(untraced, 1, timeout=0.1), 'a span from before tracing was on'
    finally:
        stop(process)
        receiver.stop()


def test_the_standard_variables_alone_turn_tracing_on(agents, logs):
    receiver = Receiver('grpc')
    names = {'OTEL_EXPORTER_OTLP_ENDPOINT': f'http://127.0.0.1:{receiver.port}',
             'OTEL_SERVICE_NAME': 'bridge-from-env', 'OTEL_RESOURCE_ATTRIBUTES': 'deployment.environment=interop',
             'OTEL_TRACES_SAMPLER': 'always_on', 'OTEL_BSP_SCHEDULE_DELAY': '200'}
    os.environ.update(names)
    try:
        bridge = Bridge('traced-env', agents['0.3'], logs, '')
    finally:
        for name in names:
            del os.environ[name]
    try:
        trace_id, _, header = traceparent()
        httpx.post(bridge.peer.url, headers={**V10, 'traceparent': header}, timeout=15, json={
            'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}})
        assert len(receiver.of_trace(trace_id, 2)) == 2
        with receiver.lock:
            resource = next(r for r, s in receiver.spans if s.trace_id.hex() == trace_id)
        attrs = {kv.key: kv.value.string_value for kv in resource.attributes}
        assert attrs.get('service.name') == 'bridge-from-env', attrs
        assert attrs.get('deployment.environment') == 'interop', attrs
    finally:
        bridge.close()
        receiver.stop()

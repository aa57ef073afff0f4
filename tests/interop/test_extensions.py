"""Extension headers across every pairing of bindings and revisions: a caller names the
extensions it asks for in its revision's spelling (`X-A2A-Extensions` for 0.3, `A2A-Extensions`
for 1.0; over gRPC the metadata `x-a2a-extensions` or `a2a-extensions`), the real SDK agent behind
the bridge (JSON-RPC, HTTP+JSON or gRPC, of either revision) reads them in its own spelling, and
the extensions the agent activated (a2a-sdk 0.3.26 echoes them; a2a-sdk 1.3.0 echoes none) come
back to the caller in the caller's spelling.

The callers here are raw HTTP and the revisions' generated gRPC stubs, so that the header or
metadata name is exactly the one under test; the agents are the SDKs' own servers.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from test_grpc import grpc_target

REQUESTED = ['urn:a2a-bridge:test:one', 'urn:a2a-bridge:test:two']
AGENTS = ['0.3', '1.0', '0.3-rest', '1.0-rest', '0.3-grpc', '1.0-grpc']
ECHOING = {'0.3', '0.3-grpc'}
CALLERS = [(revision, binding) for revision in ('0.3', '1.0') for binding in ('jsonrpc', 'rest', 'grpc')]
NAME = {'0.3': 'x-a2a-extensions', '1.0': 'a2a-extensions'}
# The agents whose SDK echoes the extensions it activated: a2a-sdk 0.3.26's JSON-RPC app (a
# header) and its gRPC server (trailing metadata); not its HTTP+JSON app, nor a2a-sdk 1.3.0.


def uris(values: list[str]) -> list[str]:
    """The URIs a list of header values names (each value may hold several, comma-separated)."""
    return sorted({u.strip() for value in values for u in value.split(',') if u.strip()})


def over_http(base: str, revision: str, binding: str, text: str) -> tuple[str, httpx.Headers]:
    headers = {NAME[revision]: ', '.join(REQUESTED), 'Content-Type': 'application/json'}
    if revision == '1.0':
        headers['A2A-Version'] = '1.0'
    message_id = str(uuid.uuid4())
    if binding == 'jsonrpc':
        if revision == '1.0':
            message = {'messageId': message_id, 'role': 'ROLE_USER', 'parts': [{'text': text}]}
            body = {'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': message}}
        else:
            message = {'kind': 'message', 'messageId': message_id, 'role': 'user',
                       'parts': [{'kind': 'text', 'text': text}]}
            body = {'jsonrpc': '2.0', 'id': 1, 'method': 'message/send', 'params': {'message': message}}
        response = httpx.post(base, json=body, headers=headers, timeout=15)
        assert response.status_code == 200, response.text
        result = response.json()['result']
        parts = result['message']['parts'] if revision == '1.0' else result['parts']
    else:
        if revision == '1.0':
            path = '/message:send'
            message = {'messageId': message_id, 'role': 'ROLE_USER', 'parts': [{'text': text}]}
        else:
            path = '/v1/message:send'
            message = {'messageId': message_id, 'role': 'ROLE_USER', 'content': [{'text': text}]}
        response = httpx.post(base + path, json={'message': message}, headers=headers, timeout=15)
        assert response.status_code == 200, response.text
        result = response.json()['message']
        parts = result['parts'] if revision == '1.0' else result['content']
    return parts[0]['text'], response.headers


def over_grpc(target: str, revision: str, text: str) -> tuple[str, list[tuple[str, Any]]]:
    import grpc
    from a2a.compat.v0_3 import a2a_v0_3_pb2, a2a_v0_3_pb2_grpc
    from a2a.types import a2a_pb2, a2a_pb2_grpc

    metadata = [(NAME[revision], ', '.join(REQUESTED))]
    with grpc.insecure_channel(target) as channel:
        if revision == '1.0':
            request = a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
                message_id=str(uuid.uuid4()), role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=text)]))
            response, call = a2a_pb2_grpc.A2AServiceStub(channel).SendMessage.with_call(
                request, metadata=[*metadata, ('a2a-version', '1.0')], timeout=15)
            answer = response.message.parts[0].text
        else:
            request = a2a_v0_3_pb2.SendMessageRequest(request=a2a_v0_3_pb2.Message(
                message_id=str(uuid.uuid4()), role=a2a_v0_3_pb2.ROLE_USER,
                content=[a2a_v0_3_pb2.Part(text=text)]))
            response, call = a2a_v0_3_pb2_grpc.A2AServiceStub(channel).SendMessage.with_call(
                request, metadata=metadata, timeout=15)
            answer = response.msg.content[0].text
        return answer, [*call.initial_metadata(), *call.trailing_metadata()]


@pytest.mark.parametrize('agent', AGENTS, ids=lambda a: f'agent{a}')
@pytest.mark.parametrize(('revision', 'binding'), CALLERS, ids=lambda c: str(c))
def test_requested_extensions_reach_the_agent_and_activated_ones_come_back_in_the_callers_spelling(
        bridges, agent, revision, binding):
    bridge = bridges[agent]
    if binding == 'grpc':
        text, metadata = over_grpc(grpc_target(bridge), revision, 'extensions please')
        echoed = [value for key, value in metadata if key == NAME[revision]]
        other = [value for key, value in metadata if key in NAME.values() and key != NAME[revision]]
    else:
        text, headers = over_http(bridge.url, revision, binding, 'extensions please')
        echoed = headers.get_list(NAME[revision])
        other = [v for name in NAME.values() if name != NAME[revision] for v in headers.get_list(name)]
    # The agent read both URIs in its own revision's spelling.
    assert text == f'extensions: {",".join(REQUESTED)}', text
    if agent in ECHOING:
        # The agent activated them; they come back under the caller's name only.
        assert uris(echoed) == REQUESTED, (echoed, other)
    else:
        assert echoed == [], echoed
    assert other == [], other

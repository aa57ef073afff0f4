"""Raw HTTP against the bridge in front of the real SDK agents: how a request is checked, which
Content-Type is read, how a refused stream is framed, and which card a caller gets.

These are the places where a caller's SDK reads the bytes, not the meaning: the order of the
JSON-RPC checks decides the code a malformed request gets, a 0.3 SDK reads a streaming call's
error only from an event stream while a 1.0 SDK reads it from a JSON body, and a strict 1.0
reader rejects a card with one unknown member. Every answer is checked for its HTTP status,
content type, code and id.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import httpx
import pytest
from google.protobuf import json_format

from conftest import PYTHON, REVISIONS

TIMEOUT = 15.0
V1 = {'A2A-Version': '1.0'}
ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'


def post(base: str, body: str | bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    with httpx.Client(timeout=TIMEOUT) as http:
        return http.post(base, content=body, headers=headers or {})


def rpc_error(response: httpx.Response, code: int, id_: Any) -> dict[str, Any]:
    """A plain JSON-RPC error answer: HTTP 200, JSON, `code`, the id as given."""
    assert response.status_code == 200, response.text
    assert response.headers['content-type'].startswith('application/json'), response.headers
    body = response.json()
    assert body.get('jsonrpc') == '2.0', body
    assert 'id' in body and body['id'] == id_, f'id {body.get("id")!r}, expected {id_!r}: {body}'
    assert body.get('error', {}).get('code') == code, body
    assert 'result' not in body, body
    return body['error']


def sse_events(response: httpx.Response) -> list[dict[str, Any]]:
    events = []
    for block in response.text.split('\n\n'):
        data = [line.removeprefix('data:').strip() for line in block.splitlines() if line.startswith('data:')]
        if data:
            events.append(json.loads('\n'.join(data)))
    return events


def stream_refusal(response: httpx.Response, revision: str, code: int, id_: Any) -> dict[str, Any]:
    """A streaming call's refusal as the caller's SDK reads it: one SSE error event for 0.3, a
    plain JSON-RPC error body for 1.0."""
    if revision == '1.0':
        return rpc_error(response, code, id_)
    assert response.status_code == 200, response.text
    assert response.headers['content-type'].startswith('text/event-stream'), (
        f'a 0.3 caller reads a streaming error only from an event stream: {response.headers}\n{response.text}'
    )
    events = sse_events(response)
    assert len(events) == 1, events
    event = events[0]
    assert event.get('id') == id_, event
    assert event.get('error', {}).get('code') == code, event
    return event['error']


def user_message(revision: str, text: str, **extra: Any) -> dict[str, Any]:
    if revision == '1.0':
        return {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': text}], **extra}
    return {
        'kind': 'message',
        'messageId': str(uuid.uuid4()),
        'role': 'user',
        'parts': [{'kind': 'text', 'text': text}],
        **extra,
    }


def request(id_: Any, method: str, params: Any) -> str:
    return json.dumps({'jsonrpc': '2.0', 'id': id_, 'method': method, 'params': params})


# --- the order of the request checks -----------------------------------------------------------

ORDER_CASES = [
    # (what, body, code, id): each body is wrong in two ways; the code is that of the check the
    # SDK servers make first.
    ('not JSON', '{"jsonrpc": "2.0", "id": 1,', -32700, None),
    ('wrong jsonrpc and an unknown method', '{"jsonrpc":"1.0","id":2,"method":"tasks/nope"}', -32600, 2),
    ('a method that is not a string', '{"jsonrpc":"2.0","id":3,"method":7}', -32600, 3),
    ('an id that is an object', '{"jsonrpc":"2.0","id":{},"method":"tasks/get"}', -32600, None),
    ('an unknown method with params that are not an object', '{"jsonrpc":"2.0","id":4,"method":"tasks/nope","params":[1]}', -32601, 4),
    ('an unknown method without id', '{"jsonrpc":"2.0","method":"tasks/nope","params":{}}', -32601, None),
    ('params that are not an object, without id', '{"jsonrpc":"2.0","method":"tasks/get","params":[1]}', -32602, None),
    ('invalid params without id', '{"jsonrpc":"2.0","method":"tasks/get","params":{"id":5}}', -32602, None),
    ('invalid params with an id', '{"jsonrpc":"2.0","id":"p-6","method":"tasks/get","params":{"id":5}}', -32602, 'p-6'),
    ('a valid request without id', '{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"t-1"}}', -32600, None),
]


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
@pytest.mark.parametrize(('what', 'body', 'code', 'id_'), ORDER_CASES, ids=[c[0] for c in ORDER_CASES])
def test_requests_are_checked_in_the_order_the_sdk_servers_check_them(bridges, agent, what, body, code, id_):
    error = rpc_error(post(bridges[agent].url, body, {'Content-Type': 'application/json'}), code, id_)
    if what == 'a valid request without id':
        assert 'notification' in error['message'], error


def test_a_1_0_request_without_id_is_refused_in_1_0_after_its_params_were_read(bridges):
    body = '{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t-1"}}'
    error = rpc_error(post(bridges['1.0'].url, body, {'Content-Type': 'application/json', **V1}), -32600, None)
    reasons = [d.get('reason') for d in error.get('data') or [] if d.get('@type') == ERROR_INFO]
    assert reasons == ['INVALID_REQUEST'], error


# --- Content-Type ------------------------------------------------------------------------------


def send_echo(revision: str) -> str:
    method = 'SendMessage' if revision == '1.0' else 'message/send'
    return request('ct-1', method, {'message': user_message(revision, 'echo content type')})


def completed(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body['id'] == 'ct-1', body
    result = body.get('result') or {}
    state = (result.get('task') or result).get('status', {}).get('state')
    assert state in ('completed', 'TASK_STATE_COMPLETED'), body


ACCEPTED_TYPES = [
    None,
    'application/x-www-form-urlencoded',
    'application/json',
    'application/json; charset=utf-8',
    'application/a2a+json',
    'text/plain',
]


@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
@pytest.mark.parametrize('content_type', ACCEPTED_TYPES, ids=lambda t: t or 'none')
def test_a_json_body_is_read_whatever_its_content_type(bridges, caller, content_type):
    # The SDK servers read a JSON body whatever its type; `curl -d` sends a form type.
    headers = dict(V1) if caller == '1.0' else {}
    if content_type is not None:
        headers['Content-Type'] = content_type
    with httpx.Client(timeout=TIMEOUT) as http:
        built = http.build_request('POST', bridges['0.3'].url, content=send_echo(caller), headers=headers)
        if content_type is None:
            built.headers.pop('content-type', None)
        assert built.headers.get('content-type') == content_type
        completed(http.send(built))


@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_body_that_is_not_json_under_a_type_that_is_not_json_is_content_type_not_supported(bridges, caller):
    headers = {'Content-Type': 'text/plain', **(V1 if caller == '1.0' else {})}
    error = rpc_error(post(bridges['1.0'].url, 'hello, agent', headers), -32005, None)
    assert '"text/plain"' in error['message'], error
    assert 'application/json' in error['message'] and 'application/a2a+json' in error['message'], error
    reasons = [d.get('reason') for d in error.get('data') or [] if d.get('@type') == ERROR_INFO]
    if caller == '1.0':
        assert reasons == ['CONTENT_TYPE_NOT_SUPPORTED'], error
    else:
        assert not reasons, f'a 0.3 error carries no 1.0 ErrorInfo: {error}'


@pytest.mark.parametrize('content_type', [None, 'application/json', 'application/a2a+json; charset=utf-8'])
def test_a_body_that_is_not_json_under_a_json_type_or_none_is_a_parse_error(bridges, content_type):
    with httpx.Client(timeout=TIMEOUT) as http:
        built = http.build_request('POST', bridges['0.3'].url, content='hello, agent')
        if content_type is None:
            built.headers.pop('content-type', None)
        else:
            built.headers['content-type'] = content_type
        rpc_error(http.send(built), -32700, None)


# --- a refused stream, framed for the caller ---------------------------------------------------


def streaming(revision: str, id_: Any, params: dict[str, Any], subscribe: bool) -> str:
    names = {('1.0', True): 'SubscribeToTask', ('1.0', False): 'SendStreamingMessage',
             ('0.3', True): 'tasks/resubscribe', ('0.3', False): 'message/stream'}
    return request(id_, names[(revision, subscribe)], params)


def headers_for(revision: str) -> dict[str, str]:
    return {'Content-Type': 'application/json', **(V1 if revision == '1.0' else {})}


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_subscription_to_an_unknown_task_is_refused_in_the_callers_framing(bridges, caller, agent):
    body = streaming(caller, 'u-1', {'id': f'no-such-task-{uuid.uuid4()}'}, subscribe=True)
    stream_refusal(post(bridges[agent].url, body, headers_for(caller)), caller, -32001, 'u-1')


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_message_stream_to_an_unknown_task_is_refused_in_the_callers_framing(bridges, caller, agent):
    message = user_message(caller, 'echo', taskId=f'no-such-task-{uuid.uuid4()}')
    body = streaming(caller, 7, {'message': message}, subscribe=False)
    response = post(bridges[agent].url, body, headers_for(caller))
    # A 0.3 agent answers an unknown task with TaskNotFound; a 1.0 agent with TaskNotFound too.
    stream_refusal(response, caller, -32001, 7)


def start_quiet_task(http: httpx.Client, base: str) -> str:
    """Starts a task the agent then works on without a word (`quiet`); its id."""
    started = http.post(
        base,
        content=request('q', 'message/send', {'message': user_message('0.3', 'quiet job'),
                                              'configuration': {'blocking': False}}),
        headers=headers_for('0.3'),
    ).json()
    return started['result']['id']


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_subscription_to_a_quiet_task_gets_its_head_at_once_and_sees_the_cancel(bridges, caller, agent):
    """A task the agent works on without a word: the subscriber's head must not wait for the
    agent's next event (here 20 s away), so a client that waits for the head before it cancels
    the task sees the cancel through its subscription."""
    base = bridges[agent].url
    with httpx.Client(timeout=TIMEOUT) as http:
        task_id = start_quiet_task(http, base)
        body = streaming(caller, 'sub', {'id': task_id}, subscribe=True)
        with httpx.Client(timeout=httpx.Timeout(TIMEOUT, read=3.0)) as quick:
            with quick.stream('POST', base, content=body, headers=headers_for(caller)) as held:
                assert held.status_code == 200
                assert held.headers['content-type'].startswith('text/event-stream'), held.headers
                lines = held.iter_lines()
                first = next(lines)
                if caller == '1.0':
                    # A 1.0 subscription starts with the task.
                    event = json.loads(first.removeprefix('data:').strip())
                    assert event['id'] == 'sub', event
                    assert event['result']['task']['status']['state'] == 'TASK_STATE_WORKING', event
                elif agent == '1.0':
                    # A 1.0 agent's subscription starts with the task, passed on.
                    event = json.loads(first.removeprefix('data:').strip())
                    assert event['result']['kind'] == 'task', event
                else:
                    # A 0.3 agent says nothing: the head comes with a keep-alive comment.
                    assert first == ': keep-alive', first
                cancel = http.post(base, content=request('c', 'tasks/cancel', {'id': task_id}),
                                   headers=headers_for('0.3')).json()
                assert cancel['result']['status']['state'] == 'canceled', cancel
                rest = [json.loads(line.removeprefix('data:').strip()) for line in lines if line.startswith('data:')]
    states = [(e['result'].get('statusUpdate') or e['result']).get('status', {}).get('state') for e in rest]
    assert states and states[-1] in ('canceled', 'TASK_STATE_CANCELED'), rest


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_an_http_json_subscription_to_a_quiet_task_gets_its_head_at_once(bridges, caller, agent):
    """The same over HTTP+JSON: the subscriber's head and first line come at once."""
    base = bridges[agent].url
    with httpx.Client(timeout=TIMEOUT) as http:
        task_id = start_quiet_task(http, base)
        path = f'/tasks/{task_id}:subscribe' if caller == '1.0' else f'/v1/tasks/{task_id}:subscribe'
        try:
            with httpx.Client(timeout=httpx.Timeout(TIMEOUT, read=3.0)) as quick:
                with quick.stream('GET', base + path, headers=V1 if caller == '1.0' else {}) as held:
                    assert held.status_code == 200, held.read()
                    assert held.headers['content-type'].startswith('text/event-stream'), held.headers
                    first = next(held.iter_lines())
                    if caller == '0.3' and agent == '0.3':
                        assert first == ': keep-alive', first
                    else:
                        event = json.loads(first.removeprefix('data:').strip())
                        assert 'task' in event or event.get('kind') == 'task', event
        finally:
            http.post(base, content=request('c', 'tasks/cancel', {'id': task_id}), headers=headers_for('0.3'))


def undeclared(revision: str) -> dict[str, Any]:
    if revision == '1.0':
        return {'raw': 'aGk=', 'mediaType': 'application/x-undeclared'}
    return {'kind': 'file', 'file': {'bytes': 'aGk=', 'mimeType': 'application/x-undeclared'}}


@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_stream_the_card_check_refuses_is_refused_in_the_callers_framing(bridges, caller):
    message = user_message(caller, 'echo')
    message['parts'].append(undeclared(caller))
    body = streaming(caller, 'v-1', {'message': message}, subscribe=False)
    error = stream_refusal(post(bridges['0.3'].url, body, headers_for(caller)), caller, -32005, 'v-1')
    assert 'application/x-undeclared' in error['message'], error


@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_stream_with_invalid_params_is_refused_in_the_callers_framing(bridges, caller):
    body = streaming(caller, 'i-1', {'id': 5}, subscribe=True)
    stream_refusal(post(bridges['1.0'].url, body, headers_for(caller)), caller, -32602, 'i-1')


def test_a_stream_over_the_stream_limit_is_refused_in_the_callers_framing(agents, bridge_with, tmp_path):
    agent = agents['1.0']
    config = tmp_path / 'one-stream.toml'
    config.write_text(
        f'[upstream]\nurl = "{agent.url.rstrip("/")}"\n[limits]\nstreams = 1\n[demo]\nenabled = false\n'
    )
    bridge = bridge_with('1.0', '--config', str(config))
    hold = streaming('1.0', 'hold', {'message': user_message('1.0', 'slow job')}, subscribe=False)
    with httpx.Client(timeout=TIMEOUT) as http:
        with http.stream('POST', bridge.url, content=hold, headers=headers_for('1.0')) as held:
            assert held.headers['content-type'].startswith('text/event-stream')
            # Keep the line iterator: a dropped one closes the response, and the stream with it.
            lines = held.iter_lines()
            first = next(lines)
            task_id = json.loads(first.removeprefix('data:').strip())['result']['task']['id']
            for caller in REVISIONS:
                body = streaming(caller, f'limit-{caller}', {'message': user_message(caller, 'echo')}, subscribe=False)
                error = stream_refusal(
                    http.post(bridge.url, content=body, headers=headers_for(caller)), caller, -32603, f'limit-{caller}'
                )
                assert 'streams open' in error['message'], error
        cancel = request('c', 'CancelTask', {'id': task_id})
        http.post(bridge.url, content=cancel, headers=headers_for('1.0'))


# --- the card ----------------------------------------------------------------------------------


def card(base: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    with httpx.Client(timeout=TIMEOUT) as http:
        response = http.get(f'{base}/.well-known/agent-card.json', headers=headers or {})
    assert response.status_code == 200, response.text
    return response.json()


def strict_1_0(document: dict[str, Any]) -> None:
    """Parses a card with a2a-sdk 1.3.0's proto, rejecting unknown members."""
    from a2a.types import a2a_pb2

    json_format.ParseDict(document, a2a_pb2.AgentCard(), ignore_unknown_fields=False)


def model_0_3(document: dict[str, Any]) -> dict[str, Any]:
    """Validates a card with a2a-sdk 0.3.26's `AgentCard` model (in its own environment)."""
    script = (
        'import json, sys\n'
        'from a2a.types import AgentCard\n'
        'card = AgentCard.model_validate(json.load(sys.stdin))\n'
        'print(json.dumps({"url": card.url, "protocolVersion": card.protocol_version,'
        ' "transport": str(card.preferred_transport)}))\n'
    )
    done = subprocess.run(  # noqa: S603 - fixed argv
        [str(PYTHON['0.3']), '-c', script],
        input=json.dumps(document).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors='replace')[-2000:]
    return json.loads(done.stdout)


ZERO_THREE_MEMBERS = {'url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces'}


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
def test_the_card_a_1_0_caller_gets_passes_a_strict_proto_json_parse(bridges, agent):
    served = card(bridges[agent].url, V1)
    assert not ZERO_THREE_MEMBERS & set(served), served
    strict_1_0(served)


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
def test_card_view_1_0_serves_the_pure_1_0_card_to_callers_that_name_no_revision(bridge_with, agent):
    bridge = bridge_with(agent, '--card-view', '1.0')
    served = card(bridge.url)
    assert not ZERO_THREE_MEMBERS & set(served), served
    strict_1_0(served)
    interfaces = served['supportedInterfaces']
    assert interfaces[0]['protocolVersion'] == '1.0' and interfaces[0]['url'].startswith(bridge.url), served
    # A caller that names 0.3 still gets the 0.3 card.
    named = card(bridge.url, {'A2A-Version': '0.3'})
    assert named['protocolVersion'] == '0.3.0' and 'supportedInterfaces' not in named, named
    assert model_0_3(named)['url'].startswith(bridge.url)


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}')
def test_the_dual_card_is_read_by_the_0_3_model_and_is_not_a_strict_1_0_card(bridges, agent):
    served = card(bridges[agent].url)
    read = model_0_3(served)
    assert read['url'].startswith(bridges[agent].url), read
    assert read['protocolVersion'] == '0.3.0', read
    assert served['supportedInterfaces'][0]['protocolVersion'] == '1.0', served
    # Which is why `card.view = "1.0"` exists: a strict 1.0 reader rejects the 0.3 members.
    with pytest.raises(json_format.ParseError):
        strict_1_0(served)


def test_card_view_0_3_serves_the_pure_0_3_card_and_1_0_callers_still_get_theirs(bridge_with):
    bridge = bridge_with('1.0', '--card-view', '0.3')
    served = card(bridge.url)
    assert 'supportedInterfaces' not in served, served
    assert model_0_3(served)['protocolVersion'] == '0.3.0'
    strict_1_0(card(bridge.url, V1))

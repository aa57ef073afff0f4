"""The assertions, one function per scenario, shared by the bridge and the direct runs.

Each `check_<scenario>(obs, observed)` reads the neutral shapes the clients print (see
`clients/common.py`) and asserts what an A2A peer of the client's revision must see. Every
assertion message carries the observed JSON, so a failing run says what came back.
"""

from __future__ import annotations

import json
from typing import Any

AGENT_NAME = 'a2a-bridge interop agent'
INPUT_MODES = ['text/plain', 'application/json', 'image/png', 'application/octet-stream']
QUESTION = 'what is your favourite colour?'
STREAM_STEPS = 4
PUSH_CONFIG_ID = 'interop-push-1'
PUSH_URL = 'http://127.0.0.1:9/interop-webhook'
PUSH_TOKEN = 'interop-token'

V10_METHODS = {
    'SendMessage',
    'SendStreamingMessage',
    'GetTask',
    'ListTasks',
    'CancelTask',
    'SubscribeToTask',
    'CreateTaskPushNotificationConfig',
    'GetTaskPushNotificationConfig',
    'ListTaskPushNotificationConfigs',
    'DeleteTaskPushNotificationConfig',
    'GetExtendedAgentCard',
}
V03_METHODS = {
    'message/send',
    'message/stream',
    'tasks/get',
    'tasks/cancel',
    'tasks/resubscribe',
    'tasks/pushNotificationConfig/set',
    'tasks/pushNotificationConfig/get',
    'tasks/pushNotificationConfig/list',
    'tasks/pushNotificationConfig/delete',
    'agent/getAuthenticatedExtendedCard',
}
ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'
# The paths an A2A 1.0 HTTP+JSON client requests (below the interface URL).
REST_V10_PREFIXES = ('/message:send', '/message:stream', '/tasks', '/extendedAgentCard')
REST_V03_PREFIXES = ('/v1/message:send', '/v1/message:stream', '/v1/tasks/', '/v1/card')
# What a2a-sdk 0.3.26's REST client cannot do, so no 0.3 REST run asks it: it has no push-config
# list or delete, and it reads no error body (an error is only its HTTP status). Errors over 0.3
# REST are checked with raw HTTP in test_conformance.py.
NOT_OVER_0_3_REST = {'push_config', 'unknown_task', 'undeclared_media'}

# Scenarios whose pass depends on the bridge doing the work itself: the agents are deliberately
# lax here, so a direct run cannot pass them.
BRIDGE_ONLY = {'undeclared_media'}
# Scenarios an agent of one revision cannot pass on its own, with the bridge standing in for it:
# a2a-sdk 0.3 keeps no live queue for a task waiting for input, so it refuses a resubscription
# to it with TaskNotFound, and it closes a resubscription to a canceled task without the final
# status; the bridge follows the task, and reads the final status back.
BRIDGE_ONLY_FOR_AGENT = {'0.3': {'subscribe_input_required', 'resubscribe'}}


def show(value: Any, limit: int = 6000) -> str:
    """The observed JSON for an assertion message; a client traceback shrinks to its last lines."""
    if isinstance(value, dict) and 'traceback' in value:
        tail = str(value['traceback']).strip().splitlines()[-3:]
        value = {**value, 'traceback': tail}
    text = json.dumps(value, indent=1, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + '\n... (truncated)'


def origin(url: str) -> str:
    """`scheme://host:port` of a URL."""
    scheme, rest = url.split('://', 1)
    return f'{scheme}://{rest.split("/", 1)[0]}'


def task_of(obs, observed: dict[str, Any], key: str = 'result') -> dict[str, Any]:
    result = observed.get(key) or {}
    assert 'task' in result, f'{key} is not a task\n{show(observed)}'
    return result['task']


def texts(parts: list[dict[str, Any]]) -> list[str]:
    return [p['text'] for p in parts if 'text' in p]


def artifact_texts(task: dict[str, Any]) -> list[str]:
    return [t for a in task['artifacts'] for t in texts(a['parts'])]


def error_infos(obs, observed: dict[str, Any]) -> list[dict[str, Any]]:
    infos = []
    for raw in observed.get('rawErrors') or []:
        # JSON-RPC carries the ErrorInfo in `data`, HTTP+JSON's google.rpc.Status in `details`.
        data = raw.get('details') if obs.binding == 'rest' else raw.get('data')
        if isinstance(data, list):
            infos += [d for d in data if isinstance(d, dict) and d.get('@type') == ERROR_INFO]
    return infos


def no_error(observed: dict[str, Any]) -> None:
    assert 'error' not in observed, f'the scenario raised\n{show(observed)}'


# --- checks that hold in every scenario ----------------------------------------------------------


def check_wire(obs, name: str, observed: dict[str, Any]) -> None:
    """Every request went to the address the client was given, in the client's own revision."""
    for entry in observed.get('wire') or []:
        assert origin(entry['url']) == origin(obs.base), (
            f'the client left {obs.base} for {entry["url"]}: the card sent it around the bridge\n'
            f'{show(observed.get("wire"))}'
        )
        if name == 'version_unsupported':
            continue
        if obs.binding == 'grpc':
            # gRPC: the HTTP listener is asked for the card only; every call went over gRPC.
            assert entry['http'] == 'GET' and '/.well-known/' in entry['url'], (
                f'a gRPC client made an HTTP call\n{show(entry)}'
            )
            continue
        if obs.binding == 'rest':
            # HTTP+JSON: every request is a REST path of the client's revision (1.0 with the
            # version header, 0.3 under /v1/ without one), never a JSON-RPC body.
            if '/.well-known/' in entry['url']:
                continue
            path = '/' + entry['url'].split('://', 1)[1].split('/', 1)[-1].split('?', 1)[0]
            prefixes = REST_V10_PREFIXES if obs.client == '1.0' else REST_V03_PREFIXES
            assert any(path.startswith(p) for p in prefixes), (
                f'a {obs.client} REST client requested {entry["http"]} {path}\n{show(entry)}'
            )
            assert entry['rpc'] is None, f'a REST client sent a JSON-RPC body\n{show(entry)}'
            if obs.client == '1.0':
                assert entry['a2aVersion'] == '1.0', f'a 1.0 request lacked A2A-Version: 1.0\n{show(entry)}'
            continue
        if entry['http'] != 'POST':
            continue
        if obs.client == '1.0':
            assert entry['rpc'] in V10_METHODS, f'a 1.0 client sent {entry["rpc"]!r}\n{show(entry)}'
            assert entry['a2aVersion'] == '1.0', f'a 1.0 request lacked A2A-Version: 1.0\n{show(entry)}'
        else:
            assert entry['rpc'] in V03_METHODS, f'a 0.3 client sent {entry["rpc"]!r}\n{show(entry)}'


def check_protocol(obs) -> None:
    protocol = obs.document.get('protocol') or {}
    if obs.binding == 'grpc':
        # The pure 1.0 gRPC transport (never the SDK's 0.3 compat one), or a2a-sdk 0.3.26's.
        assert protocol.get('transport') == 'a2a.client.transports.grpc.GrpcTransport', show(protocol)
        assert protocol.get('binding') == 'GRPC', show(protocol)
        prefix = '1.' if obs.client == '1.0' else '0.3'
        assert str(protocol.get('advertisedVersion', '')).startswith(prefix), show(protocol)
        return
    if obs.binding == 'rest' and obs.client == '0.3':
        assert protocol.get('transport') == 'a2a.client.transports.rest.RestTransport', show(protocol)
        assert protocol.get('binding') == 'HTTP+JSON', show(protocol)
        return
    if obs.binding == 'rest':
        # The pure 1.0 REST transport, never the SDK's 0.3 compat REST transport.
        assert protocol.get('transport') == 'a2a.client.transports.rest.RestTransport', show(protocol)
        assert protocol.get('binding') == 'HTTP+JSON' and protocol.get('version') == '1.0', show(protocol)
        assert str(protocol.get('advertisedVersion', '')).startswith('1.'), show(protocol)
        return
    if obs.client == '1.0':
        # The pure 1.0 transport, never the SDK's built-in 0.3 fallback.
        assert protocol.get('transport') == 'a2a.client.transports.jsonrpc.JsonRpcTransport', show(protocol)
        assert protocol.get('version') == '1.0', show(protocol)
        assert str(protocol.get('advertisedVersion', '')).startswith('1.'), (
            f'the card offers no 1.0 JSON-RPC interface\n{show(obs.document.get("protocol"))}'
        )
    else:
        assert protocol.get('transport') == 'a2a.client.transports.jsonrpc.JsonRpcTransport', show(protocol)
        assert str(protocol.get('advertisedVersion', '')).startswith('0.3'), show(protocol)


# --- one check per scenario ----------------------------------------------------------------------


def check_card(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    check_protocol(obs)
    card = observed['card']
    assert card['name'] == AGENT_NAME, show(card)
    assert 'interop' in card['skills'], show(card)
    assert set(INPUT_MODES) <= set(card['defaultInputModes']), show(card)
    assert 'application/x-undeclared' not in card['defaultInputModes'], show(card)
    assert card['streaming'] is True, show(card)
    assert card['pushNotifications'] is True, show(card)
    assert card['extendedCard'] is True, show(card)
    jsonrpc = [i for i in card['interfaces'] if i['binding'] == 'JSONRPC']
    assert jsonrpc, f'no JSON-RPC interface\n{show(card)}'
    check_interfaces(obs, card)
    if obs.client == '1.0':
        assert any(i['protocolVersion'].startswith('1.') for i in jsonrpc), show(card)
    else:
        assert card['protocolVersion'].startswith('0.3'), show(card)


def check_send_blocking(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    task = task_of(obs, observed)
    assert task['id'], show(task)
    assert task['contextId'], show(task)
    assert task['state'] == 'completed', show(task)
    assert artifact_texts(task) == ['echo: echo hello interop'], show(task)
    assert task['statusText'] == 'done', show(task)
    user = [m for m in task['history'] if m['role'] == 'user']
    assert user and texts(user[0]['parts']) == ['echo hello interop'], show(task)


def check_send_nonblocking_get(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    sent = task_of(obs, observed, 'sent')
    assert sent['state'] in ('submitted', 'working'), (
        f'a non-blocking send waited for the task to finish\n{show(sent)}'
    )
    assert observed['polledStates'][-1] == 'completed', show(observed['polledStates'])
    final = observed['final']
    assert final['id'] == sent['id'], show(observed)
    assert artifact_texts(final) == ['echo: echo later'], show(final)

    full = observed['historyUnset']['history']
    assert len(full) >= 2, f'the echo task should hold the user and a status message\n{show(full)}'
    assert full[0]['role'] == 'user' and texts(full[0]['parts']) == ['echo later'], show(full)

    one = observed['history1']['history']
    assert len(one) == 1, f'historyLength 1 returned {len(one)} messages\n{show(one)}'
    assert one[0]['messageId'] == full[-1]['messageId'], (
        f'historyLength 1 must keep the most recent message\n{show(observed)}'
    )

    zero = observed['history0']['history']
    if obs.client == '1.0':
        # 1.0 (spec 3.2.4): historyLength 0 means no history at all.
        assert zero == [], f'historyLength 0 returned history to a 1.0 caller\n{show(zero)}'
    else:
        # 0.3 (SDK semantics; the 0.3 proto says "0 = unlimited"): 0 is no limit.
        assert len(zero) == len(full), (
            f'historyLength 0 must mean "no limit" to a 0.3 caller\n{show(observed)}'
        )
    assert observed['history0']['artifacts'] == final['artifacts'], show(observed['history0'])


def check_stream(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    events = observed['events']
    kinds = [e['kind'] for e in events]
    expected = ['task'] + ['status-update', 'artifact-update'] * STREAM_STEPS + ['status-update']
    assert kinds == expected, f'events arrived as {kinds}\n{show(events)}'
    task = events[0]['task']
    assert task['state'] in ('submitted', 'working'), show(events[0])
    updates = events[1:]
    assert all(e['taskId'] == task['id'] for e in updates), show(events)
    assert all(e['contextId'] == task['contextId'] for e in updates), show(events)

    statuses = [e for e in updates if e['kind'] == 'status-update']
    assert [e['text'] for e in statuses[:-1]] == [f'step {i}' for i in range(STREAM_STEPS)], show(statuses)
    assert all(e['state'] == 'working' for e in statuses[:-1]), show(statuses)
    assert statuses[-1]['state'] == 'completed', show(statuses[-1])

    chunks = [e for e in updates if e['kind'] == 'artifact-update']
    assert [texts(e['parts']) for e in chunks] == [[f'chunk {i}'] for i in range(STREAM_STEPS)], show(chunks)
    assert {e['artifactId'] for e in chunks} == {'stream'}, show(chunks)
    assert [e['append'] for e in chunks] == [False] + [True] * (STREAM_STEPS - 1), show(chunks)
    assert [e['lastChunk'] for e in chunks] == [False] * (STREAM_STEPS - 1) + [True], show(chunks)

    if obs.client == '0.3':
        # 0.3 marks the end of a stream with `final`, on the terminal status only.
        assert [e['final'] for e in statuses] == [False] * STREAM_STEPS + [True], show(statuses)

    # The agent spaces its rounds 100 ms apart: a proxy that buffers the stream collapses that.
    times = [e['t'] for e in events]
    assert times == sorted(times), show(times)
    spread = times[-1] - times[0]
    assert spread >= 0.2, f'all events arrived within {spread:.3f}s: the stream was buffered\n{show(times)}'
    assert times[0] <= observed['closedAt'] - 0.2, (
        f'the first event arrived only when the stream closed\n{show(times)}'
    )


def check_cancel(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    assert observed['sent']['state'] in ('submitted', 'working'), show(observed['sent'])
    assert observed['canceled']['id'] == observed['sent']['id'], show(observed)
    assert observed['canceled']['state'] == 'canceled', show(observed['canceled'])
    assert observed['after']['state'] == 'canceled', show(observed['after'])


def check_resubscribe(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    events = observed['events']
    task_id = observed['taskId']
    assert events, f'the subscription delivered nothing\n{show(observed)}'
    if obs.client == '1.0':
        # 1.0 (spec 3.1.6): the first event of SubscribeToTask is the Task itself.
        assert events[0]['kind'] == 'task', f'first event was {events[0]["kind"]}\n{show(events)}'
        assert events[0]['task']['id'] == task_id, show(events[0])
        assert events[0]['task']['state'] in ('submitted', 'working'), show(events[0])
    for event in events:
        got = event['task']['id'] if event['kind'] == 'task' else event.get('taskId')
        assert got == task_id, f'an event for another task\n{show(event)}'
    ticks = [e for e in events if e['kind'] == 'status-update' and (e.get('text') or '').startswith('tick')]
    assert ticks, f'no live status update arrived through the subscription\n{show(events)}'
    assert observed['streamError'] is None, show(observed)
    assert observed['ended'] is True, f'the subscription stayed open after the cancel\n{show(observed)}'
    assert observed['canceled']['state'] == 'canceled', show(observed['canceled'])
    assert observed['after']['state'] == 'canceled', show(observed['after'])
    terminal = [e for e in events if e['kind'] == 'status-update' and e['state'] != 'working']
    assert all(e['state'] == 'canceled' for e in terminal), show(events)
    # The subscription ends with the canceled status, the last event.
    last = events[-1]
    assert last['kind'] == 'status-update' and last['state'] == 'canceled', (
        f'the canceled status did not arrive last\n{show(events)}'
    )


def event_state(event: dict[str, Any]) -> str | None:
    if event['kind'] == 'task':
        return event['task']['state']
    if event['kind'] == 'status-update':
        return event['state']
    return None


def check_subscribe_input_required(obs, observed: dict[str, Any]) -> None:
    """`ask` -> subscribe -> follow-up: the subscriber sees the answer and the task finish."""
    no_error(observed)
    first = task_of(obs, observed, 'first')
    assert first['state'] == 'input-required', show(first)
    task_id = observed['taskId']
    events = observed['events']
    assert observed['streamError'] is None, f'the subscription failed\n{show(observed)}'
    assert events, f'the subscription delivered nothing\n{show(observed)}'
    if obs.client == '1.0':
        # 1.0 (spec 3.1.6): the first event of SubscribeToTask is the Task itself.
        assert events[0]['kind'] == 'task', show(events)
        assert events[0]['task']['state'] == 'input-required', show(events[0])
    for event in events:
        got = event['task']['id'] if event['kind'] == 'task' else event.get('taskId')
        assert got == task_id, f'an event for another task\n{show(event)}'
    assert observed['ended'] is True, f'the subscription stayed open after completion\n{show(observed)}'
    after = [e for e in events if e['t'] >= observed['followUpAt']]
    answers = [
        t
        for e in after
        for t in (
            texts(e['parts'])
            if e['kind'] == 'artifact-update'
            else [t for a in e['task']['artifacts'] for t in texts(a['parts'])]
            if e['kind'] == 'task'
            else []
        )
    ]
    assert 'answer: blue' in answers, f'the answer artifact did not reach the subscriber\n{show(events)}'
    assert event_state(events[-1]) == 'completed', (
        f'the stream did not end with the completed status\n{show(events)}'
    )
    states = [event_state(e) for e in events if event_state(e)]
    assert 'completed' not in states[:-1], f'events after the completed status\n{show(events)}'
    second = task_of(obs, observed, 'second')
    assert second['state'] == 'completed', show(second)


def check_input_required(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    first = task_of(obs, observed, 'first')
    assert first['state'] == 'input-required', show(first)
    assert first['statusText'] == QUESTION, show(first)
    second = task_of(obs, observed, 'second')
    assert second['id'] == first['id'], show(observed)
    assert second['contextId'] == first['contextId'], show(observed)
    assert second['state'] == 'completed', show(second)
    assert artifact_texts(second) == ['answer: blue'], show(second)


def check_parts(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    assert observed['sent'] == observed['expectedParts'], show(observed['sent'])
    task = task_of(obs, observed)
    assert task['state'] == 'completed', show(task)
    by_name = {a['name']: a for a in task['artifacts']}
    assert set(by_name) == {'parts-echo', 'parts-summary'}, show(task)
    # What the agent saw (agent-side hashes and fields): the client-to-agent direction.
    summary = by_name['parts-summary']['parts']
    assert summary == [{'data': {'received': observed['expectedSummary']}}], (
        f'the agent did not receive the parts intact\n{show(summary)}\nexpected\n'
        f'{show(observed["expectedSummary"])}'
    )
    # What came back: the agent-to-client direction.
    assert by_name['parts-echo']['parts'] == observed['expectedParts'], (
        f'the echoed parts did not come back intact\n{show(by_name["parts-echo"])}'
    )


def check_push_config(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    want = {'taskId': observed['taskId'], 'id': PUSH_CONFIG_ID, 'url': PUSH_URL, 'token': PUSH_TOKEN}
    assert observed['created'] == want, show(observed)
    assert observed['got'] == want, show(observed)
    assert observed['listed'] == [want], show(observed)
    assert observed['listedAfterDelete'] == [], show(observed)


def check_error(obs, observed: dict[str, Any], code: int, reason: str) -> None:
    assert 'unexpected' not in observed, f'expected error {code}, got a result\n{show(observed)}'
    error = observed.get('error')
    assert error, show(observed)
    assert error['code'] == code, f'expected {code} ({reason}), got\n{show(observed)}'
    assert error['message'], show(observed)
    if obs.binding == 'grpc' and obs.client == '1.0':
        # gRPC: a2a-sdk 1.3.0 names the error class only from the ErrorInfo of the status
        # details (`grpc-status-details-bin`); without one it raises a plain A2AClientError.
        expected = ''.join(w.capitalize() for w in reason.split('_')) + 'Error'
        assert error.get('type') == expected, f'expected {expected}\n{show(observed)}'
    elif obs.client == '1.0':
        # 1.0 (spec 9.5): an A2A error carries a google.rpc.ErrorInfo in `data`.
        reasons = [i.get('reason') for i in error_infos(obs, observed)]
        assert reason in reasons, f'no ErrorInfo with reason {reason}\n{show(observed)}'


def check_unknown_task(obs, observed: dict[str, Any]) -> None:
    check_error(obs, observed, -32001, 'TASK_NOT_FOUND')


def check_undeclared_media(obs, observed: dict[str, Any]) -> None:
    check_error(obs, observed, -32005, 'CONTENT_TYPE_NOT_SUPPORTED')


def check_extended_card(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    card = observed['card']
    assert card['name'] == AGENT_NAME, show(card)
    assert card['skills'] == ['interop', 'interop-extended'], show(card)
    check_interfaces(obs, card)


def check_interfaces(obs, card: dict[str, Any]) -> None:
    """Every interface is at the address the card was fetched from: its URL for JSON-RPC and
    HTTP+JSON, its host for gRPC (a `host:port` target)."""
    for interface in card['interfaces']:
        if interface['binding'] == 'GRPC':
            host = origin(obs.base).split('://', 1)[1].rsplit(':', 1)[0]
            assert '://' not in interface['url'] and interface['url'].rsplit(':', 1)[0] == host, show(card)
            continue
        assert origin(interface['url']) == origin(obs.base), (
            f'the card names {interface["url"]}, not the address it was fetched from\n{show(card)}'
        )


def check_list_tasks(obs, observed: dict[str, Any]) -> None:
    """ListTasks as A2A 1.0 §3.1.4 has it: a 1.0 agent answers it itself, and for a 0.3 agent the
    bridge answers from the tasks it saw pass."""
    no_error(observed)
    every = observed['all']
    names = [t['name'] for t in every['tasks']]
    assert names == ['two', 'one'], f'newest status first, one conversation\n{show(observed)}'
    assert [t['state'] for t in every['tasks']] == ['input-required', 'completed'], show(every)
    assert every['totalSize'] == 2 and every['nextPageToken'] == '', show(every)
    assert all(t['artifacts'] == 0 for t in every['tasks']), f'artifacts only when asked\n{show(every)}'
    assert [t['name'] for t in observed['byStatus']['tasks']] == ['two'], show(observed['byStatus'])
    pages = observed['pages']
    assert [[t['name'] for t in p['tasks']] for p in pages] == [['two'], ['one']], show(pages)
    assert pages[0]['nextPageToken'] and pages[-1]['nextPageToken'] == '', show(pages)
    assert all(p['pageSize'] == 1 and p['totalSize'] == 2 for p in pages), show(pages)
    shaped = observed['shaped']['tasks']
    assert [t['name'] for t in shaped] == ['three'], show(shaped)
    assert shaped[0]['history'] == 1 and shaped[0]['artifacts'] >= 1, show(shaped)
    assert observed['after']['tasks'] == [], show(observed['after'])


def check_message(obs, observed: dict[str, Any]) -> None:
    no_error(observed)
    result = observed.get('result') or {}
    assert 'message' in result, f'expected a direct Message\n{show(observed)}'
    message = result['message']
    assert message['role'] == 'agent', show(message)
    assert texts(message['parts']) == ['message: message for you'], show(message)
    assert message['taskId'] is None, show(message)


def check_version_unsupported(obs, observed: dict[str, Any]) -> None:
    error = observed.get('error')
    assert error and error['code'] == -32009, (
        f'A2A-Version 99.0 must be refused with -32009\n{show(observed)}'
    )
    data = (observed.get('body') or {}).get('error', {}).get('data')
    reasons = [d.get('reason') for d in data or [] if isinstance(d, dict) and d.get('@type') == ERROR_INFO]
    assert 'VERSION_NOT_SUPPORTED' in reasons, show(observed)


CHECKS = {
    'card': check_card,
    'send_blocking': check_send_blocking,
    'send_nonblocking_get': check_send_nonblocking_get,
    'stream': check_stream,
    'cancel': check_cancel,
    'resubscribe': check_resubscribe,
    'subscribe_input_required': check_subscribe_input_required,
    'input_required': check_input_required,
    'parts': check_parts,
    'push_config': check_push_config,
    'unknown_task': check_unknown_task,
    'undeclared_media': check_undeclared_media,
    'extended_card': check_extended_card,
    'list_tasks': check_list_tasks,
    'message': check_message,
    'version_unsupported': check_version_unsupported,
}
ONLY_V10_CLIENT = {'version_unsupported', 'list_tasks'}


def applies(scenario: str, client: str) -> bool:
    return scenario not in ONLY_V10_CLIENT or client == '1.0'


def check(obs, scenario: str) -> None:
    """Runs one scenario's assertions (and the wire checks) on an observation."""
    observed = obs.scenario(scenario)
    check_wire(obs, scenario, observed)
    CHECKS[scenario](obs, observed)


def check_through_bridge(obs, scenario: str) -> None:
    """`check`, with the tail of the bridge's output added to a failure."""
    try:
        check(obs, scenario)
    except AssertionError as failure:
        raise AssertionError(f'{failure}\n--- bridge output (tail) ---\n{obs.logs}') from None

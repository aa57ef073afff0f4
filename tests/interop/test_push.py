"""Push notifications through the bridge, with the SDKs' own push senders.

Both interop agents run their SDK's `BasePushNotificationSender`. A client of either revision
(`push_delivery` scenario) makes a task wait for input, registers a webhook on this suite's
receiver (`webhook.py`) with a token (and, in 1.0, Bearer credentials), then completes the task.
The agent delivers to the bridge's webhook; the bridge re-delivers to the receiver in the
subscriber's revision, with the subscriber's credentials in that revision's form:

- 0.3 subscriber: each body a whole Task (`kind: "task"`), `X-A2A-Notification-Token`;
- 1.0 subscriber: each body a `StreamResponse` (one of `task`, `statusUpdate`,
  `artifactUpdate`, `message`), `Authorization: Bearer …`, `X-A2A-Notification-Token`,
  `A2A-Version: 1.0`.

The same scenario run without the bridge (same revision) is the reference for what the agent
sends.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from conftest import bridge_binary, run_client, start_bridge, stop
from interop_checks import PUSH_CONFIG_ID, PUSH_TOKEN

PAIRS = [(client, agent) for client in ('0.3', '1.0') for agent in ('0.3', '1.0')]
CREDENTIALS = 'interop-credentials'
STREAM_MEMBERS = ('task', 'statusUpdate', 'artifactUpdate', 'message')


def push_run(
    client: str, base: str, webhook, path: str, logs, binding: str = 'jsonrpc'
) -> dict[str, Any]:
    """Runs `push_delivery` against `base` over `binding` with the webhook at `path`; its
    scenario document."""
    document = run_client(
        client,
        base,
        ['push_delivery'],
        logs,
        binding,
        env={'INTEROP_WEBHOOK': f'{webhook.url}{path}'},
    )
    scenario = document['scenarios']['push_delivery']
    assert 'error' not in scenario, json.dumps(scenario, indent=1)[:3000]
    return scenario


def task_of(body: Any, subscriber: str) -> str:
    """The task a delivery body is about."""
    if subscriber == '0.3':
        return body['id']
    (member,) = [m for m in STREAM_MEMBERS if m in body]
    inner = body[member]
    return inner.get('id') if member == 'task' else inner.get('taskId')


def state_of(body: Any, subscriber: str) -> str | None:
    """The task state a delivery shows, if it shows one."""
    if subscriber == '0.3':
        return body['status']['state']
    for member in ('task', 'statusUpdate'):
        if member in body:
            return body[member]['status']['state']
    return None


def completed(subscriber: str) -> str:
    return 'completed' if subscriber == '0.3' else 'TASK_STATE_COMPLETED'


def shape(body: Any, subscriber: str) -> tuple[str, str | None]:
    """What a delivery is, without ids and times: its kind and the state it shows."""
    kind = 'task' if subscriber == '0.3' else next(m for m in STREAM_MEMBERS if m in body)
    return kind, state_of(body, subscriber)


def until_completed(subscriber: str):
    def done(hits) -> bool:
        return any(h.status == 200 and state_of(h.body, subscriber) == completed(subscriber) for h in hits)

    return done


def check_deliveries(hits, subscriber: str, task_id: str, via_bridge: bool) -> None:
    """Every delivery accepted is in the subscriber's revision, about the task, with the
    subscriber's credentials; the last shows the task completed; none arrived twice."""
    accepted = [h for h in hits if h.status == 200]
    assert accepted, f'no delivery reached the webhook: {hits}'
    for hit in accepted:
        body, headers = hit.body, hit.headers
        assert isinstance(body, dict), body
        if subscriber == '0.3':
            assert body.get('kind') == 'task', body
        else:
            assert sum(m in body for m in STREAM_MEMBERS) == 1, body
            assert 'kind' not in json.dumps(body), body
            assert headers.get('authorization') == f'Bearer {CREDENTIALS}', headers
            if via_bridge:
                assert headers.get('a2a-version') == '1.0', headers
        assert task_of(body, subscriber) == task_id, body
        assert headers.get('x-a2a-notification-token') == PUSH_TOKEN, headers
    assert state_of(accepted[-1].body, subscriber) == completed(subscriber), [h.body for h in accepted]
    bodies = [json.dumps(h.body, sort_keys=True) for h in accepted]
    assert len(set(bodies)) == len(bodies), 'a delivery arrived twice'
    if via_bridge:
        # Each delivery names itself, once: the id a subscriber drops a delivery sent again by.
        ids = [h.headers.get('a2a-bridge-delivery-id') for h in accepted]
        assert all(ids) and len(set(ids)) == len(ids), ids


def check_created(scenario: dict[str, Any], client: str, path: str, webhook) -> None:
    """The create answer is the caller's own config, never the bridge's webhook."""
    created = scenario['created']
    assert created['url'] == f'{webhook.url}{path}', created
    assert created['token'] == PUSH_TOKEN and created['id'] == PUSH_CONFIG_ID, created
    if client == '1.0':
        assert created['authentication'] == ['Bearer', CREDENTIALS], created


@pytest.fixture(scope='module')
def direct_shapes(agents, webhook, logs) -> dict[str, list]:
    """What each agent's push sender delivers to a subscriber of its own revision, directly."""
    shapes = {}
    for revision in ('0.3', '1.0'):
        path = f'/direct-{revision}-{uuid.uuid4().hex[:6]}'
        scenario = push_run(revision, agents[revision].url, webhook, path, logs)
        hits = webhook.wait(path, until_completed(revision))
        check_deliveries(hits, revision, scenario['taskId'], via_bridge=False)
        shapes[revision] = [shape(h.body, revision) for h in hits]
    return shapes


@pytest.mark.parametrize(('client', 'agent'), PAIRS, ids=[f'{c}-client-{a}-agent' for c, a in PAIRS])
def test_each_subscriber_gets_every_delivery_in_its_own_revision_with_its_credentials(
    client, agent, bridges, webhook, logs, direct_shapes
):
    path = f'/bridged-{client}-{agent}-{uuid.uuid4().hex[:6]}'
    scenario = push_run(client, bridges[agent].url, webhook, path, logs)
    check_created(scenario, client, path, webhook)
    hits = webhook.wait(path, until_completed(client))
    check_deliveries(hits, client, scenario['taskId'], via_bridge=True)
    if client == agent:
        # Same revision on both sides: what arrives is what the agent would have sent directly.
        assert [shape(h.body, client) for h in hits] == direct_shapes[agent], [h.body for h in hits]


# Other bindings: the 1.0 client over HTTP+JSON (a2a-sdk 0.3.26's REST client has no push-config
# calls) and both clients over gRPC, and agents the bridge calls over HTTP+JSON or gRPC.
OTHER_BINDINGS = [
    ('1.0', 'rest', '0.3'),
    ('1.0', 'rest', '1.0'),
    ('0.3', 'jsonrpc', '0.3-rest'),
    ('1.0', 'jsonrpc', '0.3-rest'),
    ('0.3', 'jsonrpc', '1.0-rest'),
    ('1.0', 'jsonrpc', '1.0-rest'),
    ('1.0', 'grpc', '0.3'),
    ('1.0', 'grpc', '1.0'),
    ('0.3', 'grpc', '1.0'),
    ('0.3', 'jsonrpc', '1.0-grpc'),
    ('1.0', 'jsonrpc', '0.3-grpc'),
    ('1.0', 'grpc', '1.0-grpc'),
]


@pytest.mark.parametrize(
    ('client', 'binding', 'agent'),
    OTHER_BINDINGS,
    ids=[f'{c}-client-over-{b}-{a}-agent' for c, b, a in OTHER_BINDINGS],
)
def test_push_works_through_every_binding_the_bridge_serves_and_calls(
    client, binding, agent, bridges, webhook, logs
):
    path = f'/binding-{client}-{binding}-{agent}-{uuid.uuid4().hex[:6]}'
    scenario = push_run(client, bridges[agent].url, webhook, path, logs, binding)
    check_created(scenario, client, path, webhook)
    hits = webhook.wait(path, until_completed(client))
    check_deliveries(hits, client, scenario['taskId'], via_bridge=True)


@pytest.mark.parametrize(('client', 'agent'), [('1.0', '0.3'), ('0.3', '1.0')])
def test_a_subscriber_that_fails_twice_then_succeeds_gets_everything_once_in_order(
    client, agent, bridges, webhook, logs
):
    healthy = f'/healthy-{client}-{agent}-{uuid.uuid4().hex[:6]}'
    push_run(client, bridges[agent].url, webhook, healthy, logs)
    reference = [shape(h.body, client) for h in webhook.wait(healthy, until_completed(client))]

    flaky = f'/flaky-{client}-{agent}-{uuid.uuid4().hex[:6]}'
    webhook.fail[flaky] = 2
    scenario = push_run(client, bridges[agent].url, webhook, flaky, logs)
    hits = webhook.wait(flaky, until_completed(client))
    failed = [h for h in hits if h.status == 500]
    accepted = [h for h in hits if h.status == 200]
    assert len(failed) == 2, hits
    # The two failures were the first delivery, tried again: the same body three times.
    assert failed[0].body == failed[1].body == accepted[0].body, hits
    check_deliveries(hits, client, scenario['taskId'], via_bridge=True)
    assert [shape(h.body, client) for h in accepted] == reference, [h.body for h in accepted]


def test_a_redirecting_webhook_is_not_followed(bridges, webhook, logs):
    path = f'/redirect-{uuid.uuid4().hex[:6]}'
    target = f'/redirect-target-{uuid.uuid4().hex[:6]}'
    webhook.redirect[path] = f'{webhook.url}{target}'
    push_run('1.0', bridges['0.3'].url, webhook, path, logs)
    hits = webhook.wait(path, lambda hits: any(state_of(h.body, '1.0') == 'TASK_STATE_COMPLETED' for h in hits))
    assert hits and all(h.status == 302 for h in hits), hits
    assert webhook.at(target) == [], 'the bridge followed a redirect'
    bodies = [json.dumps(h.body, sort_keys=True) for h in hits]
    assert len(set(bodies)) == len(bodies), 'a redirect answer was retried'


def test_a_delivery_to_an_unknown_webhook_is_refused(bridges):
    for agent in ('0.3', '1.0'):
        url = f'{bridges[agent].url}/a2a-bridge/push/{"0" * 64}'
        response = httpx.post(url, json={'kind': 'task', 'id': 't'}, headers={'X-A2A-Notification-Token': 'x'})
        assert response.status_code == 404, response.text


def create_config(http: httpx.Client, bridge: str, task_id: str, url: str) -> dict:
    body = {'jsonrpc': '2.0', 'id': 'guard', 'method': 'CreateTaskPushNotificationConfig',
            'params': {'taskId': task_id, 'id': 'guarded', 'url': url, 'token': 't'}}
    response = http.post(bridge, json=body, headers={'A2A-Version': '1.0'})
    assert response.status_code == 200, response.text
    return response.json()


GUARDED = [
    ('http://127.0.0.1:9/hook', 'loopback'),
    ('http://[::1]:9/hook', 'loopback'),
    ('http://[::ffff:127.0.0.1]:9/hook', 'loopback'),
    ('http://localhost:9/hook', 'loopback'),
    ('http://10.1.2.3/hook', 'private'),
    ('http://192.168.0.1/hook', 'private'),
    ('http://169.254.169.254/latest/meta-data', 'cloud metadata'),
    ('http://[fe80::1]/hook', 'link-local'),
    ('http://[fd00::1]/hook', 'unique-local'),
    ('ftp://8.8.8.8/hook', 'http or https'),
]


def test_webhooks_in_guarded_ranges_are_refused_unless_allowed(agents, bridge_with, tmp_path):
    agent = agents['0.3']
    guarded = tmp_path / 'guarded.toml'
    guarded.write_text(f'[upstream]\nurl = "{agent.url.rstrip("/")}"\n[demo]\nenabled = false\n')
    allowed = tmp_path / 'allowed.toml'
    allowed.write_text(
        f'[upstream]\nurl = "{agent.url.rstrip("/")}"\n[demo]\nenabled = false\n'
        '[push]\nallow_networks = ["127.0.0.0/8", "::1/128"]\n'
    )
    strict = bridge_with('0.3', '--config', str(guarded))
    open_ = bridge_with('0.3', '--config', str(allowed))
    with httpx.Client(timeout=15.0) as http:
        message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask guard'}]}
        sent = http.post(strict.url, json={'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
                                           'params': {'message': message}}, headers={'A2A-Version': '1.0'})
        task_id = sent.json()['result']['task']['id']
        for url, why in GUARDED:
            answer = create_config(http, strict.url, task_id, url)
            error = answer.get('error') or {}
            assert error.get('code') == -32602, (url, answer)
            assert answer['id'] == 'guard' and why in error.get('message', ''), (url, answer)
        for url in ('http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook'):
            answer = create_config(http, open_.url, task_id, url)
            assert answer.get('result', {}).get('url') == url, (url, answer)


def test_two_instances_on_one_redis_deliver_each_others_registrations_and_survive_a_restart(
    agents, webhook, logs, redis_url
):
    """Instance one registers the webhook (its public URL is instance two's, as behind a load
    balancer); instance two, restarted before the task goes on, delivers from Redis."""
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    store = redis_url()
    agent = agents['0.3']
    two_port = free_port()
    two_url = f'http://127.0.0.1:{two_port}'
    shared = ('--store', store)
    one = start_bridge(binary, agent, logs, (*shared, '--public-url', two_url), '-redis-one')
    two = start_bridge(binary, agent, logs, shared, '-redis-two', port=two_port)
    try:
        path = f'/redis-{uuid.uuid4().hex[:6]}'
        hook = f'{webhook.url}{path}'
        with httpx.Client(timeout=15.0) as http:
            message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask redis'}]}
            sent = http.post(one.url, json={'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
                                            'params': {'message': message}}, headers={'A2A-Version': '1.0'})
            task = sent.json()['result']['task']
            created = create_config(http, one.url, task['id'], hook)
            assert created['result']['url'] == hook, created
            stop(two.process)
            two = start_bridge(binary, agent, logs, shared, '-redis-two-again', port=two_port)
            # Read back through the restarted instance: the caller's config, from Redis.
            got = http.post(two.url, headers={'A2A-Version': '1.0'}, json={
                'jsonrpc': '2.0', 'id': 2, 'method': 'GetTaskPushNotificationConfig',
                'params': {'taskId': task['id'], 'id': 'guarded'}}).json()
            assert got['result']['url'] == hook, got
            follow = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'blue'}],
                      'taskId': task['id'], 'contextId': task['contextId']}
            done = http.post(one.url, json={'jsonrpc': '2.0', 'id': 3, 'method': 'SendMessage',
                                            'params': {'message': follow}}, headers={'A2A-Version': '1.0'})
            assert done.json()['result']['task']['status']['state'] == 'TASK_STATE_COMPLETED', done.text
        hits = webhook.wait(path, until_completed('1.0'))
        assert hits, 'nothing was delivered through the second instance'
        assert all(task_of(h.body, '1.0') == task['id'] for h in hits), hits
        assert all(h.headers.get('a2a-version') == '1.0' for h in hits), hits
        assert state_of(hits[-1].body, '1.0') == 'TASK_STATE_COMPLETED', hits
    finally:
        stop(one.process)
        stop(two.process)


def test_deliveries_an_instance_held_when_it_was_killed_are_delivered_by_another(
    agents, webhook, logs, redis_url, tmp_path
):
    """Instance one takes the 1.0 agent's deliveries while the subscriber is down and is killed
    (SIGKILL) holding them; instance two, on the same Redis, takes them over once their lease
    runs out and delivers every one, in order."""
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    agent = agents['1.0']
    config = tmp_path / 'lease.toml'
    config.write_text(
        f'[upstream]\nurl = "{agent.url.rstrip("/")}"\n[demo]\nenabled = false\n'
        f'[store]\nurl = "{redis_url()}"\n'
        '[push]\nallow_networks = ["127.0.0.0/8"]\nattempts = 1000\nbackoff = "100ms"\nlease = "2s"\n'
    )
    path = f'/killed-{uuid.uuid4().hex[:6]}'
    webhook.fail[path] = 10**6
    one = start_bridge(binary, agent, logs, ('--config', str(config)), '-lease-one')
    try:
        scenario = push_run('0.3', one.url, webhook, path, logs)
        # The agent's three deliveries reached instance one, which is still retrying the first.
        webhook.wait(path, lambda hits: len(hits) >= 3, timeout=5.0)
        one.process.kill()
        one.process.wait()
    finally:
        stop(one.process)
    webhook.fail[path] = 0
    before = len(webhook.at(path))
    two = start_bridge(binary, agent, logs, ('--config', str(config)), '-lease-two')
    try:
        hits = webhook.wait(path, until_completed('0.3'), timeout=20.0)
    finally:
        stop(two.process)
    delivered = [h for h in hits[before:] if h.status == 200]
    assert [shape(h.body, '0.3') for h in delivered] == [
        ('task', 'working'),
        ('task', 'working'),
        ('task', 'completed'),
    ], [h.body for h in delivered]
    assert all(task_of(h.body, '0.3') == scenario['taskId'] for h in delivered), delivered


def free_port() -> int:
    from conftest import free_port as pick

    return pick()

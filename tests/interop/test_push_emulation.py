"""Push notifications for agents that have none (`[push] emulate = true`).

The agents here are the suite's SDK agents started with `--no-push`: their cards declare no push
notifications and their request handlers keep no push configs (a2a-sdk answers every push-config
call with PushNotificationNotSupported). Behind a bridge that emulates push, the card served
declares push, the SDK clients' push-config calls are answered by the bridge, and the bridge
follows the task itself — the agent's stream where it streams, else reading the task — and
delivers every change to each subscriber in the subscriber's revision.

What a subscriber receives is checked against the task the agent ends with: the task rebuilt
from the deliveries (a 1.0 subscriber's events applied in order, a 0.3 subscriber's last task)
has the agent's final state and artifacts, so nothing was lost on the way.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Peer, bridge_binary, start_bridge, stop
from test_push import (
    CREDENTIALS,
    check_created,
    check_deliveries,
    push_run,
    shape,
    state_of,
    task_of,
    until_completed,
)

PAIRS = [(client, agent) for client in ('0.3', '1.0') for agent in ('0.3', '1.0')]
V10 = {'A2A-Version': '1.0'}


def emulating_config(tmp_path: Path, agent: Peer, extra: str = '', name: str = 'emulate') -> Path:
    config = tmp_path / f'{name}-{uuid.uuid4().hex[:6]}.toml'
    config.write_text(
        f'[upstream]\nurl = "{agent.url.rstrip("/")}"\ntask_poll_interval = "100ms"\n'
        '[demo]\nenabled = false\n'
        f'{extra}'
        '[push]\nallow_networks = ["127.0.0.0/8"]\nemulate = true\nbackoff = "100ms"\n'
    )
    return config


@pytest.fixture(scope='module')
def emulating(agents, logs, tmp_path_factory):
    """A bridge emulating push in front of each agent without push, started on first use."""
    binary = bridge_binary()
    started: dict[str, Peer] = {}

    def get(revision: str) -> Peer:
        if revision not in started:
            if not binary.is_file():
                pytest.skip(f'bridge binary not built: {binary} does not exist')
            agent = agents[f'{revision}~nopush']
            config = emulating_config(tmp_path_factory.mktemp('emulate'), agent)
            started[revision] = start_bridge(binary, agent, logs, ('--config', str(config)), '-emulate')
        return started[revision]

    yield get
    for peer in started.values():
        stop(peer.process)


def rpc(http: httpx.Client, url: str, method: str, params: dict, version: str = '1.0') -> dict:
    headers = V10 if version == '1.0' else {}
    response = http.post(url, json={'jsonrpc': '2.0', 'id': method, 'method': method, 'params': params}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def final_task(http: httpx.Client, url: str, task_id: str) -> dict:
    """The task as the agent holds it, read through the bridge in 1.0 terms."""
    return rpc(http, url, 'GetTask', {'id': task_id})['result']


def rebuilt(hits, subscriber: str) -> dict:
    """The task a subscriber knows from its deliveries, in the subscriber's revision: a 0.3
    subscriber's last task; a 1.0 subscriber's events applied in order to the first task. The
    deliveries are left as they arrived (each is copied, never changed in place)."""
    bodies = [h.body for h in hits if h.status == 200]
    if subscriber == '0.3':
        return bodies[-1]
    task: dict[str, Any] = {}
    for body in bodies:
        if 'task' in body:
            task = copy.deepcopy(body['task'])
        elif 'statusUpdate' in body:
            task['status'] = body['statusUpdate']['status']
        elif 'artifactUpdate' in body:
            update = body['artifactUpdate']
            artifacts = task.setdefault('artifacts', [])
            known = next((a for a in artifacts if a['artifactId'] == update['artifact']['artifactId']), None)
            if known is not None and update.get('append'):
                known['parts'].extend(update['artifact']['parts'])
            elif known is not None:
                known.clear()
                known.update(copy.deepcopy(update['artifact']))
            else:
                artifacts.append(copy.deepcopy(update['artifact']))
    return task


def texts(task: dict) -> list[list[str]]:
    """Each artifact's text parts (the same in both revisions' JSON)."""
    return [[p.get('text') for p in a.get('parts', [])] for a in task.get('artifacts') or []]


def state_name(task: dict) -> str:
    state = task['status']['state']
    return state.removeprefix('TASK_STATE_').lower().replace('_', '-')


def test_the_served_card_declares_the_push_the_agent_lacks(agents, emulating):
    for revision in ('0.3', '1.0'):
        agent = agents[f'{revision}~nopush']
        direct = httpx.get(f'{agent.url.rstrip("/")}/.well-known/agent-card.json').json()
        assert not direct['capabilities'].get('pushNotifications'), direct['capabilities']
        bridge = emulating(revision)
        for headers in ({}, V10):
            card = httpx.get(f'{bridge.url}/.well-known/agent-card.json', headers=headers).json()
            assert card['capabilities']['pushNotifications'] is True, (revision, headers, card)


def test_without_emulation_push_configs_are_refused_as_the_agent_would(agents, bridge_with):
    bridge = bridge_with('0.3~nopush')
    card = httpx.get(f'{bridge.url}/.well-known/agent-card.json').json()
    assert not card['capabilities'].get('pushNotifications'), card['capabilities']
    with httpx.Client(timeout=15.0) as http:
        answer = rpc(http, bridge.url, 'CreateTaskPushNotificationConfig',
                     {'taskId': 'any', 'url': 'http://127.0.0.1:9/hook'})
    assert answer['error']['code'] == -32003, answer


@pytest.mark.parametrize(('client', 'agent'), PAIRS, ids=[f'{c}-client-{a}-agent' for c, a in PAIRS])
def test_each_subscriber_gets_every_change_of_a_task_from_an_agent_without_push(
    client, agent, emulating, webhook, logs
):
    """The SDK clients' own push scenario: a task waits for input, the client registers its
    webhook with credentials, reads the config back, and completes the task."""
    bridge = emulating(agent)
    path = f'/emulated-{client}-{agent}-{uuid.uuid4().hex[:6]}'
    scenario = push_run(client, bridge.url, webhook, path, logs)
    check_created(scenario, client, path, webhook)
    hits = webhook.wait(path, until_completed(client))
    check_deliveries(hits, client, scenario['taskId'], via_bridge=True)
    accepted = [h for h in hits if h.status == 200]
    # The first delivery is the task as it was when the config was made: waiting for input.
    assert shape(accepted[0].body, client) == (
        ('task', 'input-required') if client == '0.3' else ('task', 'TASK_STATE_INPUT_REQUIRED')
    ), accepted[0].body
    with httpx.Client(timeout=15.0) as http:
        agent_task = final_task(http, bridge.url, scenario['taskId'])
    known = rebuilt(hits, client)
    assert state_name(known) == 'completed', known
    assert texts(known) == texts(agent_task), (known, agent_task)


@pytest.mark.parametrize('agent', ['0.3', '1.0'])
def test_a_streaming_task_is_followed_step_by_step(agent, emulating, webhook):
    """A 1.0 caller's message with a push config and `returnImmediately`: the bridge keeps the
    config, follows the task as it runs (a 1.0 agent's stream of it; a 0.3 agent's task, read
    every poll interval, since its stream would not start with the task), and delivers each
    step as it happens, every appended chunk included."""
    bridge = emulating(agent)
    path = f'/streamed-{agent}-{uuid.uuid4().hex[:6]}'
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'stream along'}]}
    configuration = {
        'returnImmediately': True,
        'taskPushNotificationConfig': {
            'url': f'{webhook.url}{path}',
            'token': 'stream-token',
            'authentication': {'scheme': 'Bearer', 'credentials': CREDENTIALS},
        },
    }
    with httpx.Client(timeout=15.0) as http:
        sent = rpc(http, bridge.url, 'SendMessage', {'message': message, 'configuration': configuration})
        task_id = sent['result']['task']['id']
        hits = webhook.wait(path, until_completed('1.0'))
        agent_task = final_task(http, bridge.url, task_id)
    accepted = [h for h in hits if h.status == 200]
    assert all(task_of(h.body, '1.0') == task_id for h in accepted), accepted
    assert all(h.headers.get('authorization') == f'Bearer {CREDENTIALS}' for h in accepted), accepted
    assert all(h.headers.get('x-a2a-notification-token') == 'stream-token' for h in accepted), accepted
    # Followed as it ran, not read once at the end: several working steps arrived as events.
    steps = [h.body['statusUpdate']['status'] for h in accepted if 'statusUpdate' in h.body]
    working = [s for s in steps if s['state'] == 'TASK_STATE_WORKING']
    assert len(working) >= 2, [h.body for h in accepted]
    known = rebuilt(hits, '1.0')
    assert known['status']['state'] == 'TASK_STATE_COMPLETED', known
    assert agent_task['status']['state'] == 'TASK_STATE_COMPLETED', agent_task
    # Every chunk the agent streamed, once, in order, as the agent keeps them.
    assert texts(known) == [[f'chunk {i}' for i in range(4)]], known
    assert texts(known) == texts(agent_task), (known, agent_task)
    bodies = [json.dumps(h.body, sort_keys=True) for h in accepted]
    assert len(set(bodies)) == len(bodies), ('a delivery arrived twice', [b for b in bodies if bodies.count(b) > 1])


def test_configs_are_kept_read_listed_and_deleted_by_the_bridge(emulating, webhook):
    bridge = emulating('0.3')
    with httpx.Client(timeout=15.0) as http:
        message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask configs'}]}
        task_id = rpc(http, bridge.url, 'SendMessage', {'message': message})['result']['task']['id']
        for config_id in ('one', 'two'):
            created = rpc(http, bridge.url, 'CreateTaskPushNotificationConfig',
                          {'taskId': task_id, 'id': config_id, 'url': f'{webhook.url}/configs-{config_id}'})
            assert created['result']['id'] == config_id, created
        # Without an id, a config takes the task's (as a2a-sdk does).
        unnamed = rpc(http, bridge.url, 'CreateTaskPushNotificationConfig',
                      {'taskId': task_id, 'url': f'{webhook.url}/configs-unnamed'})
        assert unnamed['result']['id'] == task_id, unnamed
        listed = rpc(http, bridge.url, 'ListTaskPushNotificationConfigs', {'taskId': task_id})['result']
        assert sorted(c['id'] for c in listed['configs']) == sorted(['one', 'two', task_id]), listed
        got = rpc(http, bridge.url, 'GetTaskPushNotificationConfig', {'taskId': task_id, 'id': 'two'})
        assert got['result']['url'] == f'{webhook.url}/configs-two', got
        # 0.3 callers read the same configs in their own form.
        got03 = rpc(http, bridge.url, 'tasks/pushNotificationConfig/get',
                    {'id': task_id, 'pushNotificationConfigId': 'one'}, version='0.3')
        assert got03['result']['pushNotificationConfig']['url'] == f'{webhook.url}/configs-one', got03
        assert rpc(http, bridge.url, 'DeleteTaskPushNotificationConfig', {'taskId': task_id, 'id': 'two'}).get('result') is None
        listed = rpc(http, bridge.url, 'ListTaskPushNotificationConfigs', {'taskId': task_id})['result']
        assert sorted(c['id'] for c in listed['configs']) == sorted(['one', task_id]), listed
        missing = rpc(http, bridge.url, 'GetTaskPushNotificationConfig', {'taskId': task_id, 'id': 'two'})
        assert missing['error']['code'] == -32001, missing
        unknown = rpc(http, bridge.url, 'CreateTaskPushNotificationConfig',
                      {'taskId': 'no-such-task', 'url': f'{webhook.url}/configs-x'})
        assert unknown['error']['code'] == -32001, unknown
        guarded = rpc(http, bridge.url, 'CreateTaskPushNotificationConfig',
                      {'taskId': task_id, 'url': 'http://169.254.169.254/latest/meta-data'})
        assert guarded['error']['code'] == -32602, guarded
        # The deleted config gets nothing; the others get the task to its end.
        follow = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'green'}],
                  'taskId': task_id}
        rpc(http, bridge.url, 'SendMessage', {'message': follow})
    for kept in ('one', 'unnamed'):
        hits = webhook.wait(f'/configs-{kept}', until_completed('1.0'))
        assert state_of(hits[-1].body, '1.0') == 'TASK_STATE_COMPLETED', hits
    time.sleep(0.5)
    # What the task became after the delete never reached the deleted config.
    late = [h.body for h in webhook.at('/configs-two') if state_of(h.body, '1.0') != 'TASK_STATE_INPUT_REQUIRED']
    assert late == [], 'a deleted config was delivered to'


def test_another_instance_takes_a_followed_task_over_and_nothing_is_lost(agents, webhook, logs, redis_url, tmp_path):
    """Two instances on one Redis. Instance one keeps the configs of a 1.0 and a 0.3 subscriber
    on a running task and follows it; it is killed (SIGKILL) mid-task. Instance two takes the
    task over once the lease runs out, delivers what changed meanwhile, and the task's end —
    a cancel through instance two — reaches both subscribers."""
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    # An agent of its own: after this test's killed follower and cancel, a2a-sdk 0.3.26's agent
    # has been seen to stop answering, which must not reach the other tests.
    agent = agents['0.3-jsonrpc~nopush']
    store = f'[store]\nurl = "{redis_url()}"\n'
    config = emulating_config(tmp_path, agent, store, 'fleet')
    config.write_text(config.read_text() + 'lease = "1s"\n')
    one = start_bridge(binary, agent, logs, ('--config', str(config)), '-emulate-one')
    two = start_bridge(binary, agent, logs, ('--config', str(config)), '-emulate-two')
    paths = {rev: f'/takeover-{rev}-{uuid.uuid4().hex[:6]}' for rev in ('0.3', '1.0')}
    try:
        with httpx.Client(timeout=15.0) as http:
            message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'slow please'}]}
            sent = rpc(http, one.url, 'SendMessage', {'message': message, 'configuration': {'returnImmediately': True}})
            task_id = sent['result']['task']['id']
            rpc(http, one.url, 'CreateTaskPushNotificationConfig',
                {'taskId': task_id, 'id': 'v10', 'url': f'{webhook.url}{paths["1.0"]}'})
            rpc(http, one.url, 'tasks/pushNotificationConfig/set', {
                'taskId': task_id,
                'pushNotificationConfig': {'id': 'v03', 'url': f'{webhook.url}{paths["0.3"]}'},
            }, version='0.3')
            # Instance one follows: the slow task's ticks arrive.
            webhook.wait(paths['1.0'], lambda hits: len(hits) >= 3, timeout=10.0)
            one.process.kill()
            one.process.wait()
            killed_at = {rev: len(webhook.at(path)) for rev, path in paths.items()}
            # Instance two takes over once the lease ran out: deliveries resume.
            webhook.wait(paths['1.0'], lambda hits: len(hits) > killed_at['1.0'], timeout=10.0)
            canceled = rpc(http, two.url, 'CancelTask', {'id': task_id})
            assert canceled['result']['status']['state'] == 'TASK_STATE_CANCELED', canceled
            agent_task = final_task(http, two.url, task_id)
        ended = {
            '1.0': webhook.wait(paths['1.0'], lambda h: any(state_of(x.body, '1.0') == 'TASK_STATE_CANCELED' for x in h)),
            '0.3': webhook.wait(paths['0.3'], lambda h: any(state_of(x.body, '0.3') == 'canceled' for x in h)),
        }
    finally:
        stop(one.process)
        stop(two.process)
    for rev, hits in ended.items():
        accepted = [h for h in hits if h.status == 200]
        assert all(task_of(h.body, rev) == task_id for h in accepted), accepted
        assert len(accepted) > killed_at[rev], (rev, killed_at, accepted)
        known = rebuilt(hits, rev)
        assert state_name(known) == 'canceled', known
        assert texts(known) == texts(agent_task), (known, agent_task)
        bodies = [json.dumps(h.body, sort_keys=True) for h in accepted]
        assert len(set(bodies)) == len(bodies), f'a delivery to the {rev} subscriber arrived twice'


# The push-config calls over the other bindings the bridge serves, to agents it calls over
# HTTP+JSON and gRPC (a2a-sdk 0.3.26's REST client has no push-config calls).
OTHER_BINDINGS = [
    ('1.0', 'rest', '0.3'),
    ('1.0', 'grpc', '0.3'),
    ('0.3', 'grpc', '1.0'),
    ('1.0', 'jsonrpc', '0.3-rest'),
    ('0.3', 'jsonrpc', '1.0-grpc'),
]


@pytest.mark.parametrize(
    ('client', 'binding', 'agent'),
    OTHER_BINDINGS,
    ids=[f'{c}-client-over-{b}-{a}-agent' for c, b, a in OTHER_BINDINGS],
)
def test_emulated_push_works_through_every_binding(client, binding, agent, emulating, webhook, logs):
    bridge = emulating(agent)
    path = f'/emulated-{client}-{binding}-{agent}-{uuid.uuid4().hex[:6]}'
    scenario = push_run(client, bridge.url, webhook, path, logs, binding)
    check_created(scenario, client, path, webhook)
    hits = webhook.wait(path, until_completed(client))
    check_deliveries(hits, client, scenario['taskId'], via_bridge=True)


@pytest.mark.parametrize('agent', ['0.3', '1.0'])
def test_the_js_sdk_clients_push_configs_are_kept_and_delivered(emulating, webhook, agent):
    """The JavaScript SDK clients of both revisions, over JSON-RPC and HTTP+JSON: their push
    config is kept by the bridge and the task reaches their webhook to its end."""
    from jscallers import JsRunners, node

    if node() is None:
        pytest.skip('node is not installed')
    bridge = emulating(agent)
    forms = [(revision, binding) for revision in ('0.3', '1.0') for binding in ('jsonrpc', 'rest')]

    async def body() -> list[tuple[str, str]]:
        runners = JsRunners()
        paths = []
        try:
            for revision, binding in forms:
                who = runners.caller(revision, binding, bridge.url, '')
                path = f'/js-{revision}-{binding}-{agent}-{uuid.uuid4().hex[:6]}'
                task = await who.send('ask js push')
                created = await who.create_push(task.id, f'{webhook.url}{path}', 'tok-js', 'cfg-js')
                assert created['url'] == f'{webhook.url}{path}', (revision, binding, created)
                await who.send('blue', task_id=task.id, context_id=task.context_id)
                paths.append((revision, path))
        finally:
            await runners.close()
        return paths

    for revision, path in asyncio.run(body()):
        hits = webhook.wait(path, until_completed(revision))
        done = 'completed' if revision == '0.3' else 'TASK_STATE_COMPLETED'
        assert state_of(hits[-1].body, revision) == done, hits

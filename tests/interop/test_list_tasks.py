"""ListTasks toward the a2a-sdk 0.3.26 agent, which has no task listing: the bridge answers from
the tasks it saw pass, each caller seeing only the tasks made with its own credential.

The filters, ordering, pagination, `historyLength` and `includeArtifacts` run with the a2a-sdk
1.3.0 client in every interop pairing (the `list_tasks` scenario, `interop_checks.py`); this file
holds what needs a bridge configured with credentials.
"""

from __future__ import annotations

import json
import uuid

import httpx

TIMEOUT = 15.0


def rpc(http: httpx.Client, url: str, token: str, method: str, params: dict) -> dict:
    body = json.dumps({'jsonrpc': '2.0', 'id': method, 'method': method, 'params': params})
    headers = {'Content-Type': 'application/json', 'A2A-Version': '1.0', 'Authorization': f'Bearer {token}'}
    response = http.post(url, content=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_each_credential_lists_only_the_tasks_it_made(agents, bridge_with, tmp_path):
    agent = agents['0.3']
    config = tmp_path / 'two-callers.toml'
    config.write_text(
        f'[upstream]\nurl = "{agent.url.rstrip("/")}"\n'
        '[auth]\nbearer_tokens = ["caller-one", "caller-two"]\n[demo]\nenabled = false\n'
    )
    bridge = bridge_with('0.3', '--config', str(config))
    context = f'scope-{uuid.uuid4().hex[:8]}'
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'contextId': context,
               'parts': [{'text': 'echo scoped'}]}
    with httpx.Client(timeout=TIMEOUT) as http:
        sent = rpc(http, bridge.url, 'caller-one', 'SendMessage', {'message': message})
        task_id = sent['result']['task']['id']
        mine = rpc(http, bridge.url, 'caller-one', 'ListTasks', {'contextId': context})
        assert [t['id'] for t in mine['result']['tasks']] == [task_id], mine
        assert mine['result']['tasks'][0]['status']['state'] == 'TASK_STATE_COMPLETED', mine
        theirs = rpc(http, bridge.url, 'caller-two', 'ListTasks', {'contextId': context})
        assert theirs['result'].get('tasks', []) == [], theirs
        everything = rpc(http, bridge.url, 'caller-two', 'ListTasks', {})
        assert task_id not in [t['id'] for t in everything['result'].get('tasks', [])], everything
        # A bad page token is the caller's error, named.
        bad = rpc(http, bridge.url, 'caller-one', 'ListTasks', {'pageToken': 'not-ours'})
        assert bad['error']['code'] == -32602 and 'pageToken' in bad['error']['message'], bad


def test_two_bridge_instances_on_one_redis_list_each_others_tasks(bridge_with, redis_url):
    store = redis_url()
    one = bridge_with('0.3', '--store', store, '--public-url', 'http://one.example')
    two = bridge_with('0.3', '--store', store, '--public-url', 'http://two.example')
    context = f'shared-{uuid.uuid4().hex[:8]}'
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'contextId': context,
               'parts': [{'text': 'echo shared'}]}
    headers = {'Content-Type': 'application/json', 'A2A-Version': '1.0'}
    with httpx.Client(timeout=TIMEOUT) as http:
        body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': message}})
        task_id = http.post(one.url, content=body, headers=headers).json()['result']['task']['id']
        body = json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'ListTasks', 'params': {'contextId': context}})
        listed = http.post(two.url, content=body, headers=headers).json()
    assert [t['id'] for t in listed['result']['tasks']] == [task_id], listed

"""Method-aware authorization (`[authorization]`), in front of the a2a-sdk 0.3.26 agent, for
JWT callers (tokens minted by PyJWT) of both revisions on every binding.

The table: push configs only for tokens with `role = admin`; no sends or streams for the
identity `reader`; no `CancelTask` from 0.3 gRPC callers; no `ListTasks` toward a 0.3 agent.
A denied call is `InvalidRequest` naming the rule: a JSON-RPC error (HTTP 200, the id echoed),
HTTP+JSON 403 `PERMISSION_DENIED`, gRPC `PERMISSION_DENIED`; an allowed one is answered. A bad
rule is refused when the configuration is read.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from callers import Channels, GrpcCaller, Refused
from conftest import bridge_binary
from test_grpc_policy import Bridge
from test_jwt import AUDIENCE, ISSUER, Keys, mint

V10 = {'A2A-Version': '1.0'}
RULES = """
[[authorization.rules]]
effect = "allow"
methods = ["push_config"]
claims = { role = "admin" }
[[authorization.rules]]
effect = "deny"
methods = ["push_config"]
[[authorization.rules]]
effect = "deny"
methods = ["send", "stream"]
identities = ["reader"]
[[authorization.rules]]
effect = "deny"
methods = ["cancel_task"]
bindings = ["grpc"]
revisions = ["0.3"]
[[authorization.rules]]
effect = "deny"
methods = ["list_tasks"]
agent_revisions = ["0.3"]
"""


@pytest.fixture(scope='module')
def keys() -> Iterator[Keys]:
    keys = Keys()
    keys.published = [Keys.make('ES256', 'authz-1')]
    yield keys
    keys.close()


@pytest.fixture(scope='module')
def ruled(agents, logs: Path, keys: Keys) -> Iterator[Bridge]:
    config = (f'[auth]\n[[auth.jwt]]\nissuer = "{ISSUER}"\naudiences = ["{AUDIENCE}"]\njwks_url = "{keys.url}"\n'
              '[push]\nallow_networks = ["127.0.0.0/8"]\n'
              f'[authorization]\ndefault = "allow"\n{RULES}')
    bridge = Bridge('authz', agents['0.3'], logs, config)
    yield bridge
    bridge.close()


def token(keys: Keys, sub: str, **claims) -> str:
    return mint(keys.published[0], sub=sub, **claims)


def rpc(bridge: Bridge, bearer: str, method: str, params: dict, version: str = '1.0') -> httpx.Response:
    headers = {'Authorization': f'Bearer {bearer}', **(V10 if version == '1.0' else {})}
    return httpx.post(bridge.peer.url, headers=headers, timeout=15,
                      json={'jsonrpc': '2.0', 'id': f'{method}-id', 'method': method, 'params': params})


def message(version: str, text: str) -> dict:
    if version == '1.0':
        return {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': text}]}
    return {'kind': 'message', 'messageId': str(uuid.uuid4()), 'role': 'user', 'parts': [{'kind': 'text', 'text': text}]}


def assert_forbidden_jsonrpc(answer: httpx.Response, method: str) -> None:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body['id'] == f'{method}-id', body
    assert body['error']['code'] == -32600 and 'forbidden' in body['error']['message'], body
    assert 'authorization.rules[' in body['error']['message'], body


def test_a_reader_may_read_but_not_send_over_json_rpc_of_both_revisions(ruled, keys):
    reader, writer = token(keys, 'reader'), token(keys, 'writer')
    assert_forbidden_jsonrpc(rpc(ruled, reader, 'SendMessage', {'message': message('1.0', 'ask a')}), 'SendMessage')
    assert_forbidden_jsonrpc(rpc(ruled, reader, 'message/send', {'message': message('0.3', 'ask a')}, '0.3'),
                             'message/send')
    sent = rpc(ruled, writer, 'SendMessage', {'message': message('1.0', 'ask b')}).json()
    task_id = sent['result']['task']['id']
    read = rpc(ruled, reader, 'GetTask', {'id': task_id}).json()
    assert read['result']['id'] == task_id, read


def test_a_denied_http_json_call_is_403_permission_denied(ruled, keys):
    headers = {'Authorization': f'Bearer {token(keys, "reader")}', **V10}
    answer = httpx.post(f'{ruled.peer.url}/message:send', headers=headers, timeout=15,
                        json={'message': message('1.0', 'ask c')})
    assert answer.status_code == 403, answer.text
    assert answer.json()['error']['status'] == 'PERMISSION_DENIED', answer.text
    old = httpx.post(f'{ruled.peer.url}/v1/message:send', headers={'Authorization': headers['Authorization']},
                     timeout=15, json={'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER',
                                                   'content': [{'text': 'ask d'}]}})
    assert old.status_code == 403, old.text


def test_push_configs_need_the_admin_claim(ruled, keys):
    writer, admin = token(keys, 'writer'), token(keys, 'boss', role='admin')
    task_id = rpc(ruled, writer, 'SendMessage', {'message': message('1.0', 'ask e')}).json()['result']['task']['id']
    config = {'taskId': task_id, 'id': 'c1', 'url': 'http://127.0.0.1:9/a2a-hook'}
    assert_forbidden_jsonrpc(rpc(ruled, writer, 'CreateTaskPushNotificationConfig', config),
                             'CreateTaskPushNotificationConfig')
    allowed = rpc(ruled, admin, 'CreateTaskPushNotificationConfig', config).json()
    assert allowed.get('result', {}).get('url') == config['url'], allowed


def test_a_rule_on_the_agents_revision_denies_list_tasks_toward_the_0_3_agent(ruled, keys):
    assert_forbidden_jsonrpc(rpc(ruled, token(keys, 'writer'), 'ListTasks', {}), 'ListTasks')


def test_grpc_callers_are_denied_and_allowed_by_binding_revision_and_identity(ruled, keys):
    async def body() -> None:
        channels = Channels()
        try:
            for revision in ('0.3', '1.0'):
                reader = GrpcCaller(revision, channels.get(ruled.target))
                reader.metadata = (*reader.metadata, ('authorization', f'Bearer {token(keys, "reader")}'))
                with pytest.raises(Refused) as refused:
                    await reader.send(f'ask {uuid.uuid4().hex}')
                assert refused.value.code.startswith('grpc PERMISSION_DENIED'), refused.value
                writer = GrpcCaller(revision, channels.get(ruled.target))
                writer.metadata = (*writer.metadata, ('authorization', f'Bearer {token(keys, "writer")}'))
                task = await writer.send(f'ask {uuid.uuid4().hex}')
                assert task.state == 'input-required', task
                if revision == '0.3':
                    with pytest.raises(Refused) as refused:
                        await writer.cancel(task.id)
                    assert refused.value.code.startswith('grpc PERMISSION_DENIED'), refused.value
                else:
                    canceled = await writer.cancel(task.id)
                    assert canceled.state == 'canceled', canceled
        finally:
            await channels.close()

    asyncio.run(body())


RULE = '[[authorization.rules]]\n'
JWT = '[auth]\n[[auth.jwt]]\nissuer = "https://idp"\n'


@pytest.mark.parametrize(('policy', 'named'), [
    (RULE + 'effect = "perhaps"', 'neither allow nor deny'),
    (RULE + 'effect = "deny"\nmethods = ["SendMessage"]', 'no method label'),
    (RULE + 'effect = "deny"\nbindings = ["soap"]', 'no binding'),
    (RULE + 'effect = "deny"\nrevisions = ["2.0"]', 'no revision'),
    (RULE + 'effect = "deny"\nroutes = ["nowhere"]', 'no route is named'),
    (JWT + 'jwks_url = "https://idp/jwks"\nalgorithms = ["HS256"]', 'not supported'),
    (JWT + 'jwks_file = "/nonexistent/jwks.json"', 'jwks_file'),
    (JWT, 'give jwks_url or jwks_file'),
    ('[[rate_limits.rules]]\nrate = 0', 'positive'),
    ('[[rate_limits.rules]]\nrate = 1\nper = "everyone"', 'per = "everyone"'),
    ('[telemetry]\nprotocol = "carrier-pigeon"', 'neither grpc nor http/protobuf'),
])
def test_a_bad_policy_is_refused_when_the_configuration_is_read(tmp_path, policy, named):
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    config = tmp_path / 'bad.toml'
    config.write_text(f'[upstream]\nurl = "http://127.0.0.1:9"\n{policy}\n')
    done = subprocess.run([str(binary), 'validate-config', str(config)],  # noqa: S603 - fixed argv
                          capture_output=True, timeout=30, check=False)
    assert done.returncode != 0, done
    assert named in (done.stdout + done.stderr).decode(), done

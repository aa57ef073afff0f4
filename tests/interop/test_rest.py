"""The official a2a-sdk 1.3.0 client forced onto HTTP+JSON (its pure 1.0 `RestTransport`),
through the bridge, to the JSON-RPC agents of both revisions and to the 1.0 REST agent: a REST
client reaches a 0.3 JSON-RPC agent, a 1.0 JSON-RPC agent and a 1.0 REST agent, every scenario
of the JSON-RPC suite.

The client proves which transport it used (`check_protocol`) and every request it made is a 1.0
REST path with `A2A-Version: 1.0` (`check_wire`). Without the bridge the REST client finds no
HTTP+JSON interface on either agent's card, shown by the last test.
"""

from __future__ import annotations

import uuid

import pytest

import interop_checks as checks
from conftest import REVISIONS

SCENARIOS = [s for s in checks.CHECKS if checks.applies(s, '1.0')]


AGENTS = {
    '0.3': 'agent0.3-jsonrpc',
    '1.0': 'agent1.0-jsonrpc',
    '0.3-rest': 'agent0.3-rest',
    '1.0-rest': 'agent1.0-rest',
}
# What a2a-sdk 0.3.26's REST server does not serve (see test_rest_agent.py).
NOT_AT_0_3_REST = {'push_config', 'extended_card'}


def pairs(scenarios: list[str]):
    for agent, label in AGENTS.items():
        for scenario in scenarios:
            if agent == '0.3-rest' and scenario in NOT_AT_0_3_REST:
                continue
            yield pytest.param(agent, scenario, id=f'{scenario}-{label}')


@pytest.mark.parametrize(('agent', 'scenario'), list(pairs(SCENARIOS)))
def test_a_1_0_rest_client_reaches_every_agent_through_the_bridge(observe, agent, scenario):
    obs = observe('1.0', agent, 'bridge', 'rest')
    checks.check_through_bridge(obs, scenario)


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}-jsonrpc')
def test_without_the_bridge_a_rest_client_finds_no_rest_interface_on_a_json_rpc_agent(observe, agent):
    obs = observe('1.0', agent, 'direct', 'rest')
    # The agents' cards list JSON-RPC only: the SDK's client factory finds no transport to use.
    error = obs.document.get('discoveryError') or {}
    assert 'no compatible transports' in str(error.get('message')), checks.show(obs.document)


V03_SCENARIOS = [
    s for s in checks.CHECKS if checks.applies(s, '0.3') and s not in checks.NOT_OVER_0_3_REST
]


@pytest.mark.parametrize(('agent', 'scenario'), list(pairs(V03_SCENARIOS)))
def test_a_0_3_rest_client_reaches_every_agent_through_the_bridge(observe, agent, scenario):
    obs = observe('0.3', agent, 'bridge', 'rest')
    checks.check_through_bridge(obs, scenario)


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}-jsonrpc')
def test_without_the_bridge_a_0_3_rest_client_cannot_use_a_json_rpc_agent(observe, agent):
    obs = observe('0.3', agent, 'direct', 'rest')
    if 'discoveryError' in obs.document:
        return
    passed = []
    for scenario in ('send_blocking', 'stream', 'cancel', 'message'):
        try:
            checks.check(obs, scenario)
        except AssertionError:
            continue
        passed.append(scenario)
    assert not passed, f'a 0.3 REST client used a JSON-RPC agent without the bridge in {passed}'


def test_0_3_rest_errors_are_a_message_under_the_status_a2a_sdk_0_3_gives_them(bridges):
    import httpx

    base = bridges['1.0'].url
    with httpx.Client(timeout=15.0) as http:
        missing = http.get(f'{base}/v1/tasks/no-such-task')
        assert missing.status_code == 404, missing.text
        assert set(missing.json()) == {'message'}, missing.text
        wrong_verb = http.delete(f'{base}/v1/tasks/t-1:subscribe')
        assert wrong_verb.status_code == 405 and wrong_verb.headers['allow'] == 'GET, POST', wrong_verb.text
        # `:subscribe` is taken over POST too, as the JavaScript SDK 0.3 sends it.
        posted = http.post(f'{base}/v1/tasks/no-such-task:subscribe')
        assert posted.status_code == 404 and set(posted.json()) == {'message'}, posted.text
        garbage = http.post(f'{base}/v1/message:send', content='hi', headers={'content-type': 'text/plain'})
        assert garbage.status_code == 415 and 'text/plain' in garbage.json()['message'], garbage.text
        versioned = http.get(f'{base}/v1/tasks/t-1', headers={'A2A-Version': '1.0'})
        assert versioned.status_code == 400 and 'A2A 0.3 path' in versioned.json()['message'], versioned.text


@pytest.mark.parametrize('agent', ['0.3', '1.0'])
def test_a_0_3_rest_body_in_proto_names_reaches_the_agent_as_a2a_sdk_0_3_reads_it(bridges, agent):
    """A `ProtoJSON` reader takes a field under its proto name as under its JSON name (a2a-sdk
    0.3.26's REST server reads `message_id`): so does the bridge's 0.3 HTTP+JSON reader, in a
    body and in the query, while metadata keeps its own member names."""
    import httpx

    base = bridges[agent].url
    body = {
        'message': {
            'message_id': f'm-{uuid.uuid4().hex[:8]}',
            'role': 'ROLE_USER',
            'content': [{'text': 'echo proto names'}],
            'metadata': {'keep_me': 'as is'},
        },
        'configuration': {'accepted_output_modes': ['text/plain'], 'blocking': True},
    }
    with httpx.Client(timeout=15.0) as http:
        sent = http.post(f'{base}/v1/message:send', json=body)
        assert sent.status_code == 200, sent.text
        task = sent.json()['task']
        assert task['status']['state'] == 'TASK_STATE_COMPLETED', task
        texts = [part.get('text') for artifact in task.get('artifacts', []) for part in artifact['parts']]
        assert 'echo: echo proto names' in texts, task
        got = http.get(f'{base}/v1/tasks/{task["id"]}', params={'history_length': '1'})
        assert got.status_code == 200 and got.json()['id'] == task['id'], got.text

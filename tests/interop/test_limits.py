"""Rate limits and the cap on calls in flight (`[rate_limits]`, `[limits] max_in_flight`), in
front of the a2a-sdk agents, for callers of both revisions on every binding.

- A burst past a bucket is refused with HTTP 429 and `Retry-After`, the error in the caller's
  revision and binding (the JSON-RPC id echoed), `RESOURCE_EXHAUSTED` over gRPC; other callers,
  and classes the rule does not name, go on.
- Two instances on one real Redis draw on one budget.
- A slow agent is held at its cap: calls beyond it wait, then are refused with 503.
- A store that does not answer lets calls through (`fail_open`) or refuses them, and is counted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from callers import Channels, GrpcCaller, Refused
from test_grpc_policy import Bridge

V10 = {'A2A-Version': '1.0'}
READS = '[[rate_limits.rules]]\nclasses = ["read"]\nper = "caller"\nrate = 0.01\nburst = 2\n'


@pytest.fixture(scope='module')
def limited(agents, logs: Path) -> Iterator[Bridge]:
    """Two reads per caller (named by `x-caller`), refilled once every 100 s."""
    bridge = Bridge('limited', agents['0.3'], logs, f'[store]\nscope_header = "x-caller"\n{READS}')
    yield bridge
    bridge.close()


def get_task(http: httpx.Client, bridge: Bridge, form: str, caller: str) -> httpx.Response:
    """A read of a task the agent does not know, in `form`."""
    headers = {'x-caller': caller}
    base = bridge.peer.url
    if form == 'jsonrpc-1.0':
        return http.post(base, headers={**headers, **V10},
                         json={'jsonrpc': '2.0', 'id': 'read-1', 'method': 'GetTask', 'params': {'id': 'nope'}})
    if form == 'jsonrpc-0.3':
        return http.post(base, headers=headers,
                         json={'jsonrpc': '2.0', 'id': 41, 'method': 'tasks/get', 'params': {'id': 'nope'}})
    if form == 'rest-1.0':
        return http.get(f'{base}/tasks/nope', headers={**headers, **V10})
    return http.get(f'{base}/v1/tasks/nope', headers=headers)


@pytest.mark.parametrize('form', ['jsonrpc-1.0', 'jsonrpc-0.3', 'rest-1.0', 'rest-0.3'])
def test_a_burst_past_the_bucket_is_refused_with_429_in_the_callers_form(limited, form):
    caller = f'{form}-{uuid.uuid4().hex[:6]}'
    with httpx.Client(timeout=15) as http:
        answered = [get_task(http, limited, form, caller) for _ in range(2)]
        refused = get_task(http, limited, form, caller)
        other = get_task(http, limited, form, f'other-{caller}')
        send = http.post(limited.peer.url, headers={'x-caller': caller, **V10}, json={
            'jsonrpc': '2.0', 'id': 's', 'method': 'SendMessage',
            'params': {'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask x'}]}}})
    for response in answered:
        # The agent answered (it does not know the task): the limiter let the call through.
        assert response.status_code in (200, 404), response.text
        assert 'rate limit' not in response.text, response.text
    assert refused.status_code == 429, refused.text
    assert int(refused.headers['retry-after']) >= 1, refused.headers
    assert 'rate limit exceeded' in refused.text, refused.text
    body = refused.json()
    if form.startswith('jsonrpc'):
        assert body['id'] == ('read-1' if form == 'jsonrpc-1.0' else 41), body
        assert body['error']['code'] == -32603, body
    elif form == 'rest-1.0':
        assert body['error']['status'] == 'RESOURCE_EXHAUSTED', body
    # Another caller has a bucket of its own; sends are not in the rule's class.
    assert other.status_code != 429, other.text
    assert send.status_code == 200 and 'result' in send.json(), send.text


@pytest.mark.parametrize('revision', ['0.3', '1.0'])
def test_a_grpc_burst_past_the_bucket_is_resource_exhausted(limited, revision):
    async def body() -> None:
        channels = Channels()
        try:
            who = GrpcCaller(revision, channels.get(limited.target))
            who.metadata = (*who.metadata, ('x-caller', f'grpc-{revision}-{uuid.uuid4().hex[:6]}'))
            for _ in range(2):
                with pytest.raises(Refused) as unknown:
                    await who.get('nope')
                assert 'NOT_FOUND' in unknown.value.code, unknown.value
            with pytest.raises(Refused) as refused:
                await who.get('nope')
            assert refused.value.code.startswith('grpc RESOURCE_EXHAUSTED'), refused.value
            assert 'rate limit exceeded' in refused.value.message, refused.value
        finally:
            await channels.close()

    asyncio.run(body())


def test_two_instances_on_one_redis_enforce_one_budget(agents, logs, redis_url):
    shared = f'[store]\nurl = "{redis_url()}"\n[[rate_limits.rules]]\nclasses = ["read"]\nper = "route"\nrate = 0.01\nburst = 4\n'
    one = Bridge('limited-one', agents['0.3'], logs, shared)
    two = Bridge('limited-two', agents['0.3'], logs, shared)
    try:
        with httpx.Client(timeout=15) as http:
            statuses = [get_task(http, bridge, 'jsonrpc-1.0', 'anyone').status_code
                        for bridge in (one, two, one, two, one, two, one, two)]
        assert statuses.count(429) == 4, statuses
        assert statuses[:4] == [200] * 4, statuses
        metrics = httpx.get(f'http://127.0.0.1:{two.admin}/metrics', timeout=5).text
        assert 'a2a_bridge_policy_total{route="agent",class="read",reason="rate"}' in metrics, metrics[-3000:]
    finally:
        one.close()
        two.close()


def send_echo(url: str, marker: str) -> httpx.Response:
    with httpx.Client(timeout=30) as http:
        return http.post(url, headers=V10, json={
            'jsonrpc': '2.0', 'id': marker, 'method': 'SendMessage',
            'params': {'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': f'echo {marker}'}]}}})


def test_a_slow_agent_is_held_at_its_cap(agents, logs):
    """The echo behaviour takes a few hundred milliseconds: with one call in flight at most,
    three at once are served one after the other, or refused once they waited too long."""
    patient = Bridge('cap-patient', agents['0.3'], logs, '[limits]\nmax_in_flight = 1\nin_flight_wait = "10s"\n')
    impatient = Bridge('cap-impatient', agents['0.3'], logs, '[limits]\nmax_in_flight = 1\nin_flight_wait = "50ms"\n')
    try:
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            started = time.monotonic()
            served = list(pool.map(lambda i: send_echo(patient.peer.url, f'p{i}'), range(3)))
            took = time.monotonic() - started
        assert all(r.status_code == 200 and 'result' in r.json() for r in served), [r.text for r in served]
        assert took >= 3 * 0.3, f'three calls held to one at a time took {took:.2f}s'
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(lambda i: send_echo(impatient.peer.url, f'i{i}'), range(3)))
        statuses = sorted(r.status_code for r in answers)
        assert statuses == [200, 503, 503], [r.text for r in answers]
        refused = next(r for r in answers if r.status_code == 503)
        assert refused.headers['retry-after'] == '1', refused.headers
        assert refused.json()['id'].startswith('i') and 'calls in flight' in refused.text, refused.text
        metrics = httpx.get(f'http://127.0.0.1:{impatient.admin}/metrics', timeout=5).text
        assert 'reason="in_flight"} 2' in metrics, metrics[-3000:]
    finally:
        patient.close()
        impatient.close()


@pytest.mark.parametrize('fail_open', [True, False])
def test_a_store_that_does_not_answer_fails_open_or_closed_as_configured(agents, logs, fail_open):
    from conftest import free_port

    away = f'redis://127.0.0.1:{free_port()}/0'
    config = f'[store]\nurl = "{away}"\n[rate_limits]\nfail_open = {str(fail_open).lower()}\n{READS}'
    bridge = Bridge(f'limits-away-{fail_open}', agents['0.3'], logs, config, ready=False)
    try:
        with httpx.Client(timeout=15) as http:
            answer = get_task(http, bridge, 'jsonrpc-1.0', 'anyone')
        if fail_open:
            assert answer.status_code == 200 and answer.json()['error']['code'] == -32001, answer.text
        else:
            assert answer.status_code == 503, answer.text
            assert 'could not be checked' in answer.text, answer.text
        metrics = httpx.get(f'http://127.0.0.1:{bridge.admin}/metrics', timeout=5).text
        assert 'reason="store_unavailable"} 1' in metrics, metrics[-3000:]
    finally:
        bridge.close()

"""Tenants routed: two agents (a2a-sdk 1.3.0's and a2a-sdk 0.3.26's) behind two tenants of one
door of the bridge, reached by a2a-sdk 1.3.0's own client built from each tenant's card (the SDK
copies the card interface's `tenant` into every call, 1.0 §8.3.2) over JSON-RPC, HTTP+JSON and
gRPC (one listener, the door's, serving both tenants); `ListTasks` scoped by tenant; an unknown
tenant refused in the caller's binding.
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from conftest import free_port

TENANTS = {'acme': '1.0', 'globex': '0.3'}


@pytest.fixture(scope='module')
def door(agents, bridge_with, tmp_path_factory) -> str:
    config = tmp_path_factory.mktemp('tenants') / 'tenants.toml'
    # The first tenant's gRPC listener is the door's: it serves every tenant of the door.
    grpc = f'grpc_listen = "127.0.0.1:{free_port()}"\n'
    routes = ''.join(
        f'[[routes]]\nname = "{tenant}"\nprefix = "/agents"\ntenant = "{tenant}"\n'
        f'{grpc if n == 0 else ""}'
        f'[routes.upstream]\nurl = "{agents[revision].url.rstrip("/")}"\n'
        for n, (tenant, revision) in enumerate(TENANTS.items())
    )
    config.write_text(
        f'[upstream]\nurl = "{agents["1.0"].url.rstrip("/")}"\n[demo]\nenabled = false\n'
        f'[push]\nallow_networks = ["127.0.0.0/8"]\n{routes}'
    )
    bridge = bridge_with('1.0', '--config', str(config))
    return f'{bridge.url}/agents'


@pytest.mark.parametrize('binding', ['JSONRPC', 'HTTP+JSON', 'GRPC'])
def test_the_1_0_sdk_client_reaches_each_tenants_agent_and_lists_only_its_tasks(door, binding):
    import grpc

    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import GetTaskRequest, ListTasksRequest, Message, Part, Role, SendMessageRequest

    async def run() -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            made: dict[str, str] = {}
            clients = {}
            for tenant in TENANTS:
                card = await A2ACardResolver(http, f'{door}/{tenant}').get_agent_card()
                chosen = [i for i in card.supported_interfaces
                          if i.protocol_binding == binding and i.protocol_version == '1.0']
                assert chosen and chosen[0].tenant == tenant, card
                if binding != 'GRPC':
                    assert chosen[0].url == door, card
                config = ClientConfig(httpx_client=http, streaming=False,
                                      supported_protocol_bindings=[binding],
                                      grpc_channel_factory=grpc.aio.insecure_channel)
                client = ClientFactory(config).create(card)
                clients[tenant] = client
                message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()),
                                  parts=[Part(text=f'echo for {tenant}')])
                [result] = [event async for event in client.send_message(SendMessageRequest(message=message))]
                task = result.task
                assert task.id, result
                made[tenant] = task.id
                got = await client.get_task(GetTaskRequest(id=task.id))
                assert got.id == task.id
                artifacts = [part.text for artifact in got.artifacts for part in artifact.parts]
                assert f'echo: echo for {tenant}' in artifacts, got
            for tenant, client in clients.items():
                listed = {task.id for task in (await client.list_tasks(ListTasksRequest(page_size=100))).tasks}
                assert made[tenant] in listed, (tenant, made, listed)
                others = {made[other] for other in TENANTS if other != tenant}
                assert not listed & others, (tenant, made, listed)

    asyncio.run(run())


def test_an_unknown_tenant_is_refused_in_the_callers_binding(door):
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'echo'}]}
    with httpx.Client(timeout=15) as http:
        answer = http.post(door, headers={'A2A-Version': '1.0'}, json={
            'jsonrpc': '2.0', 'id': 'u-1', 'method': 'SendMessage',
            'params': {'message': message, 'tenant': 'initech'}})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body['id'] == 'u-1' and body['error']['code'] == -32602, body
        assert 'initech' in body['error']['message'], body
        answer = http.post(f'{door}/initech/message:send', headers={'A2A-Version': '1.0'},
                           json={'message': message})
        assert answer.status_code == 400, answer.text
        assert answer.json()['error']['status'] == 'INVALID_ARGUMENT', answer.text


@pytest.mark.parametrize('binding', ['jsonrpc', 'rest', 'grpc'])
def test_the_js_1_x_client_reaches_each_tenants_agent_and_lists_only_its_tasks(door, binding):
    """The JavaScript SDK 1.x client, given a card whose interface names the tenant, sends it in
    every call (its `ClientFactory` wraps the transport to do so), over each binding."""
    from jscallers import JsRunner, JsSdkCaller, node

    if node() is None:
        pytest.skip('node is not installed')
    card = httpx.get(f'{door}/acme/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}).json()
    grpc_target = next(i['url'] for i in card['supportedInterfaces'] if i['protocolBinding'] == 'GRPC')
    url = grpc_target if binding == 'grpc' else door

    async def run() -> None:
        runner = JsRunner('1.0', binding, url)
        try:
            made = {}
            callers = {}
            for tenant in TENANTS:
                who = JsSdkCaller('1.0', binding, runner, f'{url}#tenant={tenant}')
                callers[tenant] = who
                task = await who.send(f'echo for {tenant}')
                assert f'echo: echo for {tenant}' in task.artifacts.values(), task
                made[tenant] = task.id
            for tenant, who in callers.items():
                listed = {task.id for task in await who.list_tasks(page_size=100)}
                assert made[tenant] in listed, (tenant, made, listed)
                assert not listed & {made[o] for o in TENANTS if o != tenant}, (tenant, made, listed)
        finally:
            await runner.close()

    asyncio.run(run())


@pytest.mark.parametrize('tenant', list(TENANTS))
def test_push_through_a_tenant_reaches_its_subscriber_and_is_scoped_to_that_tenant(door, tenant, webhook, logs):
    """a2a-sdk 1.3.0's client registers a webhook through the tenant (its client copies the
    tenant from the card) and gets every update of the task; the other tenant's route knows
    neither the task nor its registration."""
    from test_push import check_created, check_deliveries, push_run, until_completed

    path = f'/tenant-{tenant}-{uuid.uuid4().hex[:6]}'
    scenario = push_run('1.0', f'{door}/{tenant}', webhook, path, logs)
    check_created(scenario, '1.0', path, webhook)
    hits = webhook.wait(path, until_completed('1.0'))
    check_deliveries(hits, '1.0', scenario['taskId'], via_bridge=True)
    other = next(t for t in TENANTS if t != tenant)
    with httpx.Client(timeout=15) as http:
        answer = http.post(door, headers={'A2A-Version': '1.0'}, json={
            'jsonrpc': '2.0', 'id': 'p-1', 'method': 'ListTaskPushNotificationConfigs',
            'params': {'taskId': scenario['taskId'], 'tenant': other}}).json()
    configs = (answer.get('result') or {}).get('configs', [])
    assert answer.get('error', {}).get('code') == -32001 or configs == [], answer

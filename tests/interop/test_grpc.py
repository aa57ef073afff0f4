"""The official SDK clients forced onto gRPC, through the bridge's gRPC listener, to agents of
every revision and binding: a 1.0 gRPC client (a2a-sdk 1.3.0's pure 1.0 `GrpcTransport`) reaches
the 0.3 and 1.0 JSON-RPC agents and the HTTP+JSON agents, every scenario of the JSON-RPC suite.

The client proves which transport it used (`check_protocol`), and its only HTTP requests are for
the card (`check_wire`): every call went over gRPC. Without the bridge the agents' cards offer
no gRPC interface, and the client cannot start.
"""

from __future__ import annotations

import pytest

import interop_checks as checks
from conftest import REVISIONS
from test_rest import pairs

# `pairs`: the same agents as the REST suite, less what the 0.3 REST agent does not serve.
SCENARIOS = [s for s in checks.CHECKS if checks.applies(s, '1.0')]


@pytest.mark.parametrize(('agent', 'scenario'), list(pairs(SCENARIOS)))
def test_a_1_0_grpc_client_reaches_every_agent_through_the_bridge(observe, agent, scenario):
    obs = observe('1.0', agent, 'bridge', 'grpc')
    checks.check_through_bridge(obs, scenario)


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}-jsonrpc')
def test_without_the_bridge_a_grpc_client_finds_no_grpc_interface(observe, agent):
    obs = observe('1.0', agent, 'direct', 'grpc')
    error = obs.document.get('discoveryError') or {}
    assert 'no compatible transports' in str(error.get('message')), checks.show(obs.document)


# What a2a-sdk 0.3.26's gRPC client cannot do: it has no push-config list or delete call, and it
# raises the bare gRPC error (no A2A error type) for every failure.
NOT_OVER_0_3_GRPC = {'push_config', 'unknown_task', 'undeclared_media'}
V03_SCENARIOS = [s for s in checks.CHECKS if checks.applies(s, '0.3') and s not in NOT_OVER_0_3_GRPC]


@pytest.mark.parametrize(('agent', 'scenario'), list(pairs(V03_SCENARIOS)))
def test_a_0_3_grpc_client_reaches_every_agent_through_the_bridge(observe, agent, scenario):
    obs = observe('0.3', agent, 'bridge', 'grpc')
    checks.check_through_bridge(obs, scenario)


def grpc_target(bridge) -> str:
    """The gRPC target the bridge's card names."""
    import httpx

    card = httpx.get(f'{bridge.url}/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}).json()
    (target,) = [i['url'] for i in card['supportedInterfaces'] if i['protocolBinding'] == 'GRPC' and i['protocolVersion'] == '1.0']
    return target


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}-jsonrpc')
def test_grpc_errors_are_statuses_in_each_revisions_form(bridges, agent):
    """Raw gRPC, with the stubs generated from each revision's proto: 1.0 errors carry an
    ErrorInfo in `grpc-status-details-bin` with the same code and message; 0.3 errors a message
    prefixed with the error's class, as a2a-sdk 0.3.26 writes it; a version the bridge does not
    speak is refused."""
    import asyncio

    import grpc
    from a2a.compat.v0_3 import a2a_v0_3_pb2, a2a_v0_3_pb2_grpc
    from a2a.types import a2a_pb2, a2a_pb2_grpc
    from google.rpc import error_details_pb2, status_pb2

    target = grpc_target(bridges[agent])

    def details(failure) -> tuple[status_pb2.Status, list[str]]:
        for key, value in failure.trailing_metadata() or []:
            if key == 'grpc-status-details-bin':
                status = status_pb2.Status.FromString(value)
                reasons = []
                for packed in status.details:
                    info = error_details_pb2.ErrorInfo()
                    if packed.Unpack(info):
                        assert info.domain == 'a2a-protocol.org', info
                        reasons.append(info.reason)
                return status, reasons
        raise AssertionError(f'no grpc-status-details-bin: {failure}')

    async def run() -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            v10 = a2a_pb2_grpc.A2AServiceStub(channel)
            try:
                await v10.GetTask(a2a_pb2.GetTaskRequest(id='no-such-task'))
                raise AssertionError('an unknown task was found')
            except grpc.aio.AioRpcError as failure:
                assert failure.code() == grpc.StatusCode.NOT_FOUND, failure
                status, reasons = details(failure)
                assert status.code == grpc.StatusCode.NOT_FOUND.value[0] and status.message == failure.details(), status
                assert reasons == ['TASK_NOT_FOUND'], reasons
            for version in ('99.0', '1.1'):
                try:
                    await v10.GetTask(a2a_pb2.GetTaskRequest(id='x'), metadata=[('a2a-version', version)])
                    raise AssertionError(f'version {version} was accepted')
                except grpc.aio.AioRpcError as failure:
                    assert failure.code() == grpc.StatusCode.FAILED_PRECONDITION, failure
                    assert details(failure)[1] == ['VERSION_NOT_SUPPORTED'], failure
                    assert version in failure.details() and '0.3 and 1.0' in failure.details(), failure
            v03 = a2a_v0_3_pb2_grpc.A2AServiceStub(channel)
            try:
                await v03.GetTask(a2a_v0_3_pb2.GetTaskRequest(name='tasks/no-such-task'))
                raise AssertionError('an unknown task was found')
            except grpc.aio.AioRpcError as failure:
                assert failure.code() == grpc.StatusCode.NOT_FOUND, failure
                assert failure.details().startswith('TaskNotFoundError: '), failure.details()

    asyncio.run(run())


@pytest.mark.parametrize('agent', REVISIONS, ids=lambda r: f'agent{r}-jsonrpc')
@pytest.mark.parametrize('caller', REVISIONS, ids=lambda r: f'caller{r}')
def test_a_grpc_subscription_to_a_quiet_task_gets_its_head_at_once_and_sees_the_cancel(bridges, caller, agent):
    """A task the agent works on without a word: the gRPC subscriber's response headers must not
    wait for the agent's next event, so a client that waits for them before it cancels the task
    sees the cancel end its subscription."""
    import asyncio

    import grpc
    import httpx
    from a2a.compat.v0_3 import a2a_v0_3_pb2, a2a_v0_3_pb2_grpc
    from a2a.types import a2a_pb2, a2a_pb2_grpc

    bridge = bridges[agent]
    target = grpc_target(bridge)

    def rpc(method: str, params: dict) -> dict:
        body = {'jsonrpc': '2.0', 'id': 1, 'method': method, 'params': params}
        return httpx.post(bridge.url, json=body, timeout=15).json()

    message = {'kind': 'message', 'messageId': f'quiet-{caller}-{agent}', 'role': 'user',
               'parts': [{'kind': 'text', 'text': 'quiet job'}]}
    task_id = rpc('message/send', {'message': message, 'configuration': {'blocking': False}})['result']['id']

    async def run() -> list[str]:
        async with grpc.aio.insecure_channel(target) as channel:
            if caller == '1.0':
                call = a2a_pb2_grpc.A2AServiceStub(channel).SubscribeToTask(
                    a2a_pb2.SubscribeToTaskRequest(id=task_id), metadata=[('a2a-version', '1.0')])
            else:
                call = a2a_v0_3_pb2_grpc.A2AServiceStub(channel).TaskSubscription(
                    a2a_v0_3_pb2.TaskSubscriptionRequest(name=f'tasks/{task_id}'))
            await asyncio.wait_for(call.initial_metadata(), 3.0)
            canceled = await asyncio.to_thread(rpc, 'tasks/cancel', {'id': task_id})
            assert canceled['result']['status']['state'] == 'canceled', canceled
            states = []
            async for response in call:
                kind = response.WhichOneof('payload')
                if kind in ('task', 'status_update'):
                    states.append(a2a_pb2.TaskState.Name(getattr(response, kind).status.state)
                                  if caller == '1.0'
                                  else a2a_v0_3_pb2.TaskState.Name(getattr(response, kind).status.state))
            return states

    states = asyncio.run(asyncio.wait_for(run(), 15.0))
    canceled = 'TASK_STATE_CANCELED' if caller == '1.0' else 'TASK_STATE_CANCELLED'
    assert states and states[-1] == canceled, states

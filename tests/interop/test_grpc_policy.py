"""What the bridge checks before a call reaches the agent, for gRPC callers of both revisions
(the SDKs' generated stubs, `callers.GrpcCaller`), in front of the 0.3 SDK agent: the rows the
JSON-RPC suites prove, over gRPC.

- Credentials (`[auth]`): a call without the bearer token is `UNAUTHENTICATED` in the caller's
  revision's error form; with it, answered.
- Scope (`[store] scope_header`): two callers naming different scopes in gRPC metadata list only
  their own tasks (`ListTasks` toward the 0.3 agent, answered from the bridge's task index).
- The webhook guard: a push config naming the cloud metadata address is `INVALID_ARGUMENT`
  naming the range, whichever revision asks.
- Limits (`[limits] json_depth`): a message nested past the limit is `INVALID_ARGUMENT` naming
  it, and never reaches the agent.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from callers import Channels, GrpcCaller, Refused
from conftest import START_TIMEOUT, Peer, bridge_binary, free_port, spawn, stop
from fleet import wait_until

METADATA_HOOK = 'http://169.254.169.254/latest/meta-data'
DEPTH = 8


class Bridge:
    """One bridge from a generated file, with a gRPC listener for its one route."""

    def __init__(self, name: str, agent: Peer, logs: Path, extra: str, ready: bool = True) -> None:
        binary = bridge_binary()
        if not binary.is_file():
            pytest.skip(f'bridge binary not built: {binary} does not exist')
        # A port drawn free can be taken by another process before the bridge binds it: then the
        # bridge exits saying so, and it starts again on newly drawn ports.
        for _ in range(3):
            self.listen, self.admin, self.grpc = free_port(), free_port(), free_port()
            config = logs / f'{name}.toml'
            config.write_text(
                f'listen = "127.0.0.1:{self.listen}"\nadmin = "127.0.0.1:{self.admin}"\n{extra}\n'
                f'[[routes]]\nname = "agent"\nprefix = "/"\ngrpc_listen = "127.0.0.1:{self.grpc}"\n'
                f'[routes.upstream]\nurl = "{agent.url.rstrip("/")}"\n'
            )
            self.process, stdout, stderr = spawn(name, [str(binary), '--config', str(config)], logs)
            self.peer = Peer(name, self.process, f'http://127.0.0.1:{self.listen}', stdout, stderr)
            if not self._wait_up('readyz' if ready else 'healthz', name):
                break
        else:
            pytest.fail(f'{name} found no free ports in three tries')

    def _wait_up(self, probe: str, name: str) -> bool:
        """Waits until the bridge answers `probe` (a bridge whose store is away never reports
        ready: then it is up once it is healthy); true when it exited because a port was taken."""
        taken = False

        def up() -> bool:
            nonlocal taken
            if self.process.poll() is not None:
                taken = 'Address already in use' in self.peer.log_tail()
                assert taken, self.peer.log_tail()
                return True
            try:
                return httpx.get(f'http://127.0.0.1:{self.admin}/{probe}', timeout=2.0).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, START_TIMEOUT, f'{name} {probe}')
        return taken

    @property
    def target(self) -> str:
        return f'127.0.0.1:{self.grpc}'

    def close(self) -> None:
        stop(self.process)


@pytest.fixture(scope='module')
def guarded(agents, logs: Path) -> Iterator[Bridge]:
    """Credentials required."""
    bridge = Bridge('grpc-auth', agents['0.3'], logs, '[auth]\nbearer_tokens = ["s3cret"]\n')
    yield bridge
    bridge.close()


@pytest.fixture(scope='module')
def scoped(agents, logs: Path) -> Iterator[Bridge]:
    """Scopes named by a header, the webhook guard at its defaults, a shallow depth limit."""
    bridge = Bridge('grpc-scoped', agents['0.3'], logs,
                    f'[store]\nscope_header = "x-tenant"\n[limits]\njson_depth = {DEPTH}\n')
    yield bridge
    bridge.close()


def run(body) -> Any:
    async def main() -> Any:
        channels = Channels()
        try:
            return await body(channels)
        finally:
            await channels.close()

    return asyncio.run(main())


def grpc_caller(revision: str, channels: Channels, bridge: Bridge, *metadata: tuple[str, str]) -> GrpcCaller:
    who = GrpcCaller(revision, channels.get(bridge.target))
    who.metadata = (*who.metadata, *metadata)
    return who


@pytest.mark.parametrize('revision', ['0.3', '1.0'])
def test_a_grpc_caller_without_credentials_is_unauthenticated_and_with_them_answered(guarded, revision):
    async def body(channels: Channels) -> None:
        anonymous = grpc_caller(revision, channels, guarded)
        with pytest.raises(Refused) as refused:
            await anonymous.send(f'ask {uuid.uuid4().hex}')
        assert refused.value.code.startswith('grpc UNAUTHENTICATED'), refused.value
        assert 'unauthorized' in refused.value.message, refused.value
        wrong = grpc_caller(revision, channels, guarded, ('authorization', 'Bearer guess'))
        with pytest.raises(Refused) as refused:
            await wrong.send(f'ask {uuid.uuid4().hex}')
        assert refused.value.code.startswith('grpc UNAUTHENTICATED'), refused.value
        known = grpc_caller(revision, channels, guarded, ('authorization', 'Bearer s3cret'))
        task = await known.send(f'ask {uuid.uuid4().hex}')
        assert task.state == 'input-required', task

    run(body)


def test_grpc_callers_of_two_scopes_list_only_their_own_tasks(scoped):
    async def body(channels: Channels) -> None:
        first = grpc_caller('1.0', channels, scoped, ('x-tenant', f'a-{uuid.uuid4().hex[:6]}'))
        second = grpc_caller('1.0', channels, scoped, ('x-tenant', f'b-{uuid.uuid4().hex[:6]}'))
        mine = await first.send(f'ask {uuid.uuid4().hex}')
        theirs = await second.send(f'ask {uuid.uuid4().hex}')
        # The 0.3 caller's task lands in its own scope too, beside the 1.0 caller's.
        old = grpc_caller('0.3', channels, scoped, first.metadata[-1])
        also_mine = await old.send(f'ask {uuid.uuid4().hex}')
        listed_first = {t.id for t in await first.list_tasks(page_size=50)}
        listed_second = {t.id for t in await second.list_tasks(page_size=50)}
        assert {mine.id, also_mine.id} <= listed_first and theirs.id not in listed_first, listed_first
        assert theirs.id in listed_second and not {mine.id, also_mine.id} & listed_second, listed_second

    run(body)


@pytest.mark.parametrize('revision', ['0.3', '1.0'])
def test_a_grpc_push_config_naming_the_metadata_address_is_refused(scoped, revision):
    async def body(channels: Channels) -> None:
        who = grpc_caller(revision, channels, scoped)
        task = await who.send(f'ask {uuid.uuid4().hex}')
        with pytest.raises(Refused) as refused:
            await who.create_push(task.id, METADATA_HOOK, 'token', 'guarded')
        assert refused.value.code.startswith('grpc INVALID_ARGUMENT'), refused.value
        assert 'cloud metadata' in refused.value.message, refused.value

    run(body)


@pytest.mark.parametrize('revision', ['0.3', '1.0'])
def test_a_grpc_message_nested_past_the_depth_limit_is_refused_naming_it(scoped, revision):
    async def body(channels: Channels) -> None:
        who = grpc_caller(revision, channels, scoped)
        marker = uuid.uuid4().hex
        request = who.send_request(f'deep {marker}', True, None, None)
        nested: dict[str, Any] = {'leaf': marker}
        for _ in range(2 * DEPTH):
            nested = {'inner': nested}
        request.metadata.update({'deep': nested})
        with pytest.raises(Refused) as refused:
            await who.unary('SendMessage', request, 30.0)
        assert refused.value.code.startswith('grpc INVALID_ARGUMENT'), refused.value
        assert f'{DEPTH}-level limit' in refused.value.message, refused.value
        # A shallow one goes through.
        task = await who.send(f'ask {uuid.uuid4().hex}')
        assert task.state == 'input-required', task

    run(body)

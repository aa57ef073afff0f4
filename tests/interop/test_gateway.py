"""One a2a-bridge serving two agents under two path prefixes: a 0.3 SDK agent and a 1.0 SDK
agent behind one listener, each reached by 0.3 and 1.0 SDK clients.

The bridge runs as the real binary with a generated `bridge.toml` (`[[routes]]` plus the admin
listener); the test waits on `/readyz`, which turns 200 only once both agents' cards were read.
Each client discovers its agent at `<listener>/<prefix>` and must be kept under that prefix by the
card the bridge serves there. Each route also has a gRPC listener of its own (gRPC method paths
name no route), which that route's card names: the SDKs' gRPC clients, discovering the agent at
the route's prefix, reach that route's agent over it. The admin listener's `/metrics` must then
count the traffic per route, caller revision and binding.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import interop_checks as checks
from conftest import REVISIONS, START_TIMEOUT, Observation, Peer, bridge_binary, free_port, run_client, spawn, stop

PREFIX = {'0.3': '/agents/v03', '1.0': '/agents/v10'}
SCENARIOS = ['card', 'send_blocking', 'send_nonblocking_get', 'stream', 'cancel']


def config_text(listen: int, admin: int, agents: dict[str, Peer]) -> str:
    routes = []
    for revision in REVISIONS:
        routes.append(
            '[[routes]]\n'
            f'name = "agent-{revision}"\n'
            f'prefix = "{PREFIX[revision]}"\n'
            f'grpc_listen = "127.0.0.1:{free_port()}"\n'
            '[routes.upstream]\n'
            f'url = "{agents[revision].url.rstrip("/")}"\n'
        )
    return f'listen = "127.0.0.1:{listen}"\nadmin = "127.0.0.1:{admin}"\n\n' + '\n'.join(routes)


@pytest.fixture(scope='module')
def gateway(agents: dict[str, Peer], logs: Path) -> Iterator[tuple[Peer, str]]:
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    listen, admin = free_port(), free_port()
    config = logs / 'gateway.toml'
    config.write_text(config_text(listen, admin, agents))
    process, stdout, stderr = spawn('gateway', [str(binary), '--config', str(config)], logs)
    peer = Peer('gateway', process, f'http://127.0.0.1:{listen}', stdout, stderr)
    admin_url = f'http://127.0.0.1:{admin}'
    deadline = time.monotonic() + START_TIMEOUT
    last = 'no answer'
    with httpx.Client(timeout=2.0) as http:
        while True:
            if process.poll() is not None:
                pytest.fail(f'the gateway exited with {process.returncode}\n{peer.log_tail()}')
            try:
                response = http.get(f'{admin_url}/readyz')
                last = f'HTTP {response.status_code}: {response.text.strip()}'
                if response.status_code == 200:
                    break
            except httpx.HTTPError as exc:
                last = repr(exc)
            if time.monotonic() > deadline:
                stop(process)
                pytest.fail(f'the gateway was not ready within {START_TIMEOUT}s ({last})\n{peer.log_tail()}')
            time.sleep(0.1)
    yield peer, admin_url
    stop(process)


@pytest.fixture(scope='module')
def gateway_runs(gateway: tuple[Peer, str], logs: Path) -> dict[tuple[str, str], Observation]:
    peer, _ = gateway
    runs = {}
    for client in REVISIONS:
        for agent in REVISIONS:
            base = peer.url + PREFIX[agent]
            document = run_client(client, base, SCENARIOS, logs)
            runs[(client, agent)] = Observation(client, agent, 'gateway', base, document, peer.log_tail(1500))
    return runs


PAIRS = [(client, agent) for client in REVISIONS for agent in REVISIONS]


@pytest.fixture(scope='module')
def gateway_grpc_runs(gateway: tuple[Peer, str], logs: Path) -> dict[tuple[str, str], Observation]:
    peer, _ = gateway
    runs = {}
    for client in REVISIONS:
        for agent in REVISIONS:
            base = peer.url + PREFIX[agent]
            document = run_client(client, base, SCENARIOS, logs, 'grpc')
            runs[(client, agent)] = Observation(
                client, agent, 'gateway', base, document, peer.log_tail(1500), 'grpc'
            )
    return runs


@pytest.mark.parametrize('pair', PAIRS, ids=lambda p: f'client{p[0]}-agent{p[1]}')
@pytest.mark.parametrize('scenario', SCENARIOS)
def test_grpc_clients_reach_each_routes_agent_through_that_routes_grpc_listener(gateway_grpc_runs, pair, scenario):
    obs = gateway_grpc_runs[pair]
    try:
        checks.check(obs, scenario)
    except AssertionError as failure:
        raise AssertionError(f'{failure}\n--- gateway output (tail) ---\n{obs.logs}') from None


def test_each_routes_card_names_its_own_grpc_listener(gateway):
    peer, _ = gateway
    targets = {}
    for agent in REVISIONS:
        card = httpx.get(
            f'{peer.url}{PREFIX[agent]}/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}, timeout=5.0
        ).json()
        grpc = {i['url'] for i in card['supportedInterfaces'] if i['protocolBinding'] == 'GRPC'}
        assert len(grpc) == 1, card
        targets[agent] = grpc.pop()
    assert targets['0.3'] != targets['1.0'], targets


@pytest.mark.parametrize('pair', PAIRS, ids=lambda p: f'client{p[0]}-agent{p[1]}')
@pytest.mark.parametrize('scenario', SCENARIOS)
def test_both_kinds_of_client_reach_both_agents_through_one_gateway_listener(gateway_runs, pair, scenario):
    obs = gateway_runs[pair]
    try:
        checks.check(obs, scenario)
    except AssertionError as failure:
        raise AssertionError(f'{failure}\n--- gateway output (tail) ---\n{obs.logs}') from None
    # Every call stayed under the route's prefix: the served card names the prefixed URL.
    for entry in obs.scenario(scenario).get('wire') or []:
        assert entry['url'].startswith(obs.base), f'{entry["url"]} is outside {obs.base}'


def test_the_admin_listener_counts_the_traffic_by_route_and_caller_revision(gateway, gateway_runs, gateway_grpc_runs):
    _, admin_url = gateway
    text = httpx.get(f'{admin_url}/metrics', timeout=5.0).text
    for agent in REVISIONS:
        for client in REVISIONS:
            for binding in ('jsonrpc', 'grpc'):
                pattern = (
                    rf'^a2a_bridge_requests_total\{{route="agent-{re.escape(agent)}",'
                    rf'caller="{re.escape(client)}",binding="{binding}",method="send_message",code="ok"\}} (\d+)'
                )
                match = re.search(pattern, text, re.MULTILINE)
                assert match and int(match.group(1)) >= 1, f'no {binding} send_message from {client} to {agent}\n{text[:4000]}'
        assert re.search(
            rf'^a2a_bridge_route_ready\{{route="agent-{re.escape(agent)}"\}} 1$', text, re.MULTILINE
        ), text[:4000]
    assert httpx.get(f'{admin_url}/healthz', timeout=5.0).status_code == 200


def test_ready_means_every_listener_takes_connections(agents, logs):
    """`/readyz` polled without pause from the process's start: the first 200 it gives must find
    the HTTP listener and every route's gRPC listener taking connections, so a load balancer that
    trusts it never sends a caller to a port nobody listens on yet."""
    binary = bridge_binary()
    for attempt in range(3):
        listen, admin = free_port(), free_port()
        config = logs / f'ready-{attempt}.toml'
        text = config_text(listen, admin, agents)
        config.write_text(text)
        ports = [listen] + [int(p) for p in re.findall(r'grpc_listen = "127\.0\.0\.1:(\d+)"', text)]
        assert len(ports) == 1 + len(REVISIONS), text
        process, stdout, stderr = spawn(f'ready-{attempt}', [str(binary), '--config', str(config)], logs)
        peer = Peer(f'ready-{attempt}', process, f'http://127.0.0.1:{listen}', stdout, stderr)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            with httpx.Client(timeout=2.0) as http:
                while True:
                    assert process.poll() is None, peer.log_tail()
                    assert time.monotonic() < deadline, f'not ready within {START_TIMEOUT}s\n{peer.log_tail()}'
                    try:
                        if http.get(f'http://127.0.0.1:{admin}/readyz').status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
            refused = []
            for port in ports:
                try:
                    socket.create_connection(('127.0.0.1', port), timeout=2.0).close()
                except OSError as error:
                    refused.append(f'{port}: {error}')
            assert not refused, f'ready, yet {refused}\n{peer.log_tail()}'
        finally:
            stop(process)

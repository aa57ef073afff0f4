"""Fixtures for the interop suite: real SDK agents, the bridge, and real SDK clients.

Every peer is a subprocess on loopback, started once per session and killed at teardown:

- one agent per revision (`agents/agent_v03.py` in `.venv/a2a-0.3`, `agents/agent_v10.py` in
  `.venv/a2a-1.0`), each binding `127.0.0.1:0` itself and printing `READY <url>`;
- one bridge per agent (`$A2A_BRIDGE_BIN`, default `target/debug/a2a-bridge`), started as
  `a2a-bridge --listen 127.0.0.1:PORT --upstream http://127.0.0.1:AGENTPORT` and ready once
  `GET /.well-known/agent-card.json` answers 200, webhooks on loopback allowed;
- one client run per (client revision, agent revision, route): the client performs every
  scenario in one process and prints one JSON document, which the tests then read scenario by
  scenario (`observe`).

Push tests add a webhook receiver (`webhook.py`) and, for shared state, a real `redis-server`
(`redis_url`).

Bridge tests are skipped only when the bridge binary file does not exist; a binary that exists
but does not start is an error. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from webhook import Webhook

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

PYTHON = {
    '0.3': Path(os.environ.get('A2A_PY03', ROOT / '.venv' / 'a2a-0.3' / 'bin' / 'python')),
    '1.0': Path(os.environ.get('A2A_PY10', ROOT / '.venv' / 'a2a-1.0' / 'bin' / 'python')),
}
AGENT_SCRIPT = {'0.3': HERE / 'agents' / 'agent_v03.py', '1.0': HERE / 'agents' / 'agent_v10.py'}
JS_AGENT_SCRIPT = HERE / 'js' / 'agent.mjs'
CLIENT_SCRIPT = {'0.3': HERE / 'clients' / 'client_v03.py', '1.0': HERE / 'clients' / 'client_v10.py'}
REVISIONS = ('0.3', '1.0')


def bridge_binary() -> Path:
    configured = os.environ.get('A2A_BRIDGE_BIN')
    path = Path(configured) if configured else ROOT / 'target' / 'debug' / 'a2a-bridge'
    return path if path.is_absolute() else ROOT / path


START_TIMEOUT = 30.0
CLIENT_TIMEOUT = 120.0
STOP_TIMEOUT = 5.0


@dataclass
class Peer:
    """A started subprocess, its base URL and where its output goes."""

    name: str
    process: subprocess.Popen[bytes]
    url: str
    stdout: Path
    stderr: Path

    def log_tail(self, limit: int = 4000) -> str:
        parts = []
        for path in (self.stdout, self.stderr):
            try:
                text = path.read_text(errors='replace')
            except OSError:
                text = ''
            parts.append(f'--- {path.name} ---\n{text[-limit:]}')
        return '\n'.join(parts)


def spawn(name: str, argv: list[str], logs: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    stdout = logs / f'{name}.out'
    stderr = logs / f'{name}.err'
    process = subprocess.Popen(  # noqa: S603 - fixed argv built by this file
        argv,
        stdin=subprocess.DEVNULL,
        stdout=stdout.open('wb'),
        stderr=stderr.open('wb'),
        cwd=ROOT,
    )
    return process, stdout, stderr


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def agent_argv(key: str) -> list[str]:
    """How the agent `key` names is started: a revision (`0.3`, `1.0`: the Python SDK's JSON-RPC
    agents), or a revision and a binding (`1.0-rest`: serving HTTP+JSON only); `js` before the
    revision (`js0.3-grpc`) names the JS SDK's agent of that revision (`js/agent.mjs`);
    `~nopush` after it (`0.3~nopush`) an agent that declares and keeps no push notifications."""
    key, _, flag = key.partition('~')
    revision, _, binding = key.partition('-')
    if revision.startswith('js'):
        argv = ['node', str(JS_AGENT_SCRIPT), '--sdk', revision.removeprefix('js'), '--port', '0']
    else:
        argv = [str(PYTHON[revision]), str(AGENT_SCRIPT[revision]), '--port', '0']
    if binding:
        argv += ['--binding', binding]
    if flag == 'nopush':
        argv.append('--no-push')
    return argv


def start_agent(key: str, logs: Path) -> Peer:
    """The agent `key` names (`agent_argv`), once it printed `READY <url>`."""
    name = f'agent-{key}'
    argv = agent_argv(key)
    process, stdout, stderr = spawn(name, argv, logs)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for line in stdout.read_text(errors='replace').splitlines():
            if line.startswith('READY '):
                return Peer(name, process, line.removeprefix('READY ').strip(), stdout, stderr)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    peer = Peer(name, process, '', stdout, stderr)
    stop(process)
    pytest.fail(f'{name} did not become ready within {START_TIMEOUT}s\n{peer.log_tail()}')


def start_bridge(
    binary: Path,
    upstream: Peer,
    logs: Path,
    extra: tuple[str, ...] = (),
    label: str = '',
    port: int | None = None,
) -> Peer:
    """A bridge in front of `upstream` on `port` (a free one by default); `extra` are further
    command-line arguments. A `--config FILE` among them replaces `--upstream` (the file then
    names the agent) and the loopback allowance below (the file says what push may reach).

    Every webhook in this suite listens on loopback, which the bridge's webhook guard refuses
    unless allowed: the bridges here allow 127.0.0.0/8. Every bridge also serves gRPC on a free
    port of its own (its card names it)."""
    port = port or free_port()
    agent_port = upstream.url.rstrip('/').rsplit(':', 1)[1]
    name = f'bridge-to-{upstream.name}{label}'
    target = (
        []
        if '--config' in extra
        else ['--upstream', f'http://127.0.0.1:{agent_port}', '--push-allow-network', '127.0.0.0/8']
    )
    grpc = ['--grpc-listen', f'127.0.0.1:{free_port()}']
    argv = [str(binary), '--listen', f'127.0.0.1:{port}', *target, *grpc, *extra]
    process, stdout, stderr = spawn(name, argv, logs)
    peer = Peer(name, process, f'http://127.0.0.1:{port}', stdout, stderr)
    deadline = time.monotonic() + START_TIMEOUT
    last = 'no answer'
    with httpx.Client(timeout=2.0) as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f'{name} exited with {process.returncode}\n{peer.log_tail()}')
            try:
                response = http.get(f'{peer.url}/.well-known/agent-card.json')
                if response.status_code == 200:
                    return peer
                last = f'HTTP {response.status_code}: {response.text[:300]}'
            except httpx.HTTPError as exc:
                last = repr(exc)
            time.sleep(0.1)
    stop(process)
    pytest.fail(f'{name} did not serve its card within {START_TIMEOUT}s ({last})\n{peer.log_tail()}')


@pytest.fixture(scope='session')
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp('interop-logs')


@pytest.fixture(scope='session')
def agents(logs: Path) -> Iterator[dict[str, Peer]]:
    """The agents, one per revision, started on first use."""
    started: dict[str, Peer] = {}

    class Lazy(dict):
        def __missing__(self, revision: str) -> Peer:
            started[revision] = start_agent(revision, logs)
            self[revision] = started[revision]
            return started[revision]

    yield Lazy()
    for peer in started.values():
        stop(peer.process)


@pytest.fixture(scope='session')
def bridges(agents: dict[str, Peer], logs: Path) -> Iterator[dict[str, Peer]]:
    """One bridge in front of each agent, started on first use; skips if the binary is absent."""
    binary = bridge_binary()
    started: dict[str, Peer] = {}

    class Lazy(dict):
        def __missing__(self, revision: str) -> Peer:
            if not binary.is_file():
                pytest.skip(f'bridge binary not built: {binary} does not exist')
            started[revision] = start_bridge(binary, agents[revision], logs)
            self[revision] = started[revision]
            return started[revision]

    yield Lazy()
    for peer in started.values():
        stop(peer.process)


def run_client(
    revision: str,
    base: str,
    scenarios: list[str],
    logs: Path,
    binding: str = 'jsonrpc',
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runs the `revision` client's `scenarios` against `base`, with `env` added to its
    environment, and returns the document it prints."""
    argv = [str(PYTHON[revision]), str(CLIENT_SCRIPT[revision]), '--base', base, *scenarios]
    if binding != 'jsonrpc':
        argv[2:2] = ['--binding', binding]
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv built by this file
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={**os.environ, **(env or {})},
            timeout=CLIENT_TIMEOUT,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f'client {revision} against {base} ran over {CLIENT_TIMEOUT}s: {exc.stderr!r}')
    stderr = done.stderr.decode(errors='replace')
    where = base.rsplit(':', 1)[-1].strip('/').replace('/', '_')
    (logs / f'client-{revision}-{binding}-{where}.err').write_text(stderr)
    if done.returncode != 0:
        pytest.fail(f'client {revision} against {base} exited {done.returncode}\n{stderr[-4000:]}')
    try:
        return json.loads(done.stdout)
    except ValueError:
        pytest.fail(f'client {revision} printed no JSON document\n{done.stdout[-2000:]!r}\n{stderr[-2000:]}')


@dataclass
class Observation:
    """One client run: the whole document plus where it ran."""

    client: str
    agent: str
    via: str
    base: str
    document: dict[str, Any]
    logs: str
    binding: str = 'jsonrpc'

    def scenario(self, name: str) -> dict[str, Any]:
        if 'discoveryError' in self.document:
            pytest.fail(
                f'client {self.client} could not discover the agent at {self.base}: '
                f'{json.dumps(self.document["discoveryError"])}\n{self.logs}'
            )
        return self.document['scenarios'][name]


@pytest.fixture(scope='session')
def bridge_with(agents: dict[str, Peer], logs: Path) -> Iterator[Callable[..., Peer]]:
    """`bridge_with(agent, *args)` starts (once per argument list) a bridge in front of the
    agent of that revision with further command-line arguments."""
    binary = bridge_binary()
    started: dict[tuple[str, ...], Peer] = {}

    def get(agent: str, *extra: str) -> Peer:
        key = (agent, *extra)
        if key not in started:
            if not binary.is_file():
                pytest.skip(f'bridge binary not built: {binary} does not exist')
            started[key] = start_bridge(binary, agents[agent], logs, extra, f'-{len(started)}')
        return started[key]

    yield get
    for peer in started.values():
        stop(peer.process)


@pytest.fixture(scope='session')
def observe(
    agents: dict[str, Peer], bridges: dict[str, Peer], logs: Path
) -> Callable[[str, str, str], Observation]:
    """`observe(client, agent, via, binding)` runs (once) every scenario for that pairing, the
    client forced onto `binding` (`jsonrpc` or `rest`)."""
    cache: dict[tuple[str, str, str, str], Observation] = {}

    def get(client: str, agent: str, via: str, binding: str = 'jsonrpc') -> Observation:
        key = (client, agent, via, binding)
        if key not in cache:
            target = bridges[agent] if via == 'bridge' else agents[agent]
            base = target.url
            document = run_client(client, base, ['all'], logs, binding)
            peer_logs = target.log_tail(1500) if via == 'bridge' else ''
            cache[key] = Observation(client, agent, via, base, document, peer_logs, binding)
        return cache[key]

    return get


@pytest.fixture(scope='session')
def webhook() -> Iterator[Webhook]:
    """One webhook receiver for the session; each test uses paths of its own."""
    hook = Webhook()
    yield hook
    hook.close()


@pytest.fixture(scope='session')
def redis_url(logs: Path) -> Iterator[Callable[[], str]]:
    """`redis_url()` starts (once) a real `redis-server` on loopback, without persistence, and
    returns its URL. `scripts/test` installs redis-server when it is missing."""
    server = shutil.which('redis-server')
    started: list[subprocess.Popen[bytes]] = []
    url: list[str] = []

    def get() -> str:
        if url:
            return url[0]
        assert server, 'redis-server must be installed (scripts/test installs it)'
        port = free_port()
        process, _, _ = spawn(
            'redis',
            [server, '--port', str(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
            logs,
        )
        started.append(process)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, 'redis-server did not start'
                time.sleep(0.05)
        url.append(f'redis://127.0.0.1:{port}/')
        return url[0]

    yield get
    for process in started:
        stop(process)


def pytest_report_header(config: pytest.Config) -> list[str]:
    binary = bridge_binary()
    state = 'present' if binary.is_file() else 'MISSING (bridge tests skip)'
    return [f'a2a-bridge binary: {binary} ({state})', f'python: {sys.executable}']

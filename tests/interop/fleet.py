"""Several a2a-bridge instances on one real `redis-server`, with the interop agents behind them:
what the fleet fault tests (`test_fleet_faults.py`) and the mixed soak (`scripts/soak`) start,
disturb and measure.

- `RedisServer`: a `redis-server` on a free loopback port with its own data directory, with or
  without persistence (`appendonly`), `DEBUG` allowed from loopback (`DEBUG SLEEP` stalls it),
  stopped with SIGTERM (a graceful shutdown, which writes the append-only file out) and started
  again on the same port and directory; `command` speaks RESP over a socket, so nothing beyond
  the server is needed.
- `Instance`: one bridge process from a generated `bridge.toml`: one `[[routes]]` entry per
  agent (prefix `/<route>`, a gRPC listener of its own, idle agent connections let go before
  the agents close them), the admin listener, the shared `[store]`, and `[push]` allowing
  loopback webhooks. `reload` rewrites the file with one harmless change and sends SIGHUP;
  `scrape` reads `/metrics`; `rss_kib` and `open_fds` read `/proc/<pid>`.
- `SlowWebhook`: the suite's webhook receiver (`webhook.py`), taking `pause` seconds over every
  request, recording when each arrived and when each was answered.

Every wait is bounded; a failure raises `FleetError` with the process's log tail, so the soak
(which runs outside pytest) and the tests report it the same way.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from conftest import Peer, agent_argv, free_port, spawn, stop

# Every port this process has handed out: a port found free and released can be found free again
# at once, and two listeners of one instance (or a Redis restarted on its own port) must not meet.
_HANDED_OUT: set[int] = set()


def fresh_port() -> int:
    """A free loopback port this process has not handed out before."""
    while True:
        port = free_port()
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
from webhook import Webhook

START_TIMEOUT = 30.0


class FleetError(RuntimeError):
    """A peer of the fleet did not start, stop or answer as it must."""


def wait_until(done: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    """Polls `done` until it returns a true value (returned) or `timeout` passes (`FleetError`)."""
    deadline = time.monotonic() + timeout
    while True:
        value = done()
        if value:
            return value
        if time.monotonic() > deadline:
            raise FleetError(f'{what}: not within {timeout}s')
        time.sleep(every)


# --- agents --------------------------------------------------------------------------------------


def start_agents(keys: Iterable[str], logs: Path, extra: Iterable[str] = ()) -> dict[str, Peer]:
    """The interop agents `keys` name (`conftest.agent_argv`: `0.3`, `1.0-grpc`, `js1.0-rest`),
    started together; each is ready once it printed
    `READY <url>`; `extra` are further arguments for each."""
    spawned = {}
    for key in keys:
        argv = agent_argv(key) + list(extra)
        process, stdout, stderr = spawn(f'agent-{key}', argv, logs)
        spawned[key] = Peer(f'agent-{key}', process, '', stdout, stderr)

    def ready(peer: Peer) -> str | None:
        if peer.process.poll() is not None:
            raise FleetError(f'{peer.name} exited with {peer.process.returncode}\n{peer.log_tail()}')
        for line in peer.stdout.read_text(errors='replace').splitlines():
            if line.startswith('READY '):
                return line.removeprefix('READY ').strip()
        return None

    try:
        for peer in spawned.values():
            peer.url = wait_until(lambda peer=peer: ready(peer), START_TIMEOUT, f'{peer.name} printing READY')
    except FleetError:
        for peer in spawned.values():
            stop(peer.process)
        raise
    return spawned


# --- Redis ---------------------------------------------------------------------------------------


class RedisServer:
    """A `redis-server` on loopback with a data directory of its own."""

    def __init__(self, directory: Path, logs: Path, persistent: bool, port: int | None = None) -> None:
        self.directory = directory
        self.logs = logs
        self.persistent = persistent
        self.port = port or fresh_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f'redis://127.0.0.1:{self.port}/'

    def start(self) -> None:
        """Starts the server (again: on the same port and directory) and waits for it to answer
        `PING` with `PONG`, which it does only once the data set is loaded."""
        self.starts += 1
        argv = [
            'redis-server',
            '--port', str(self.port),
            '--bind', '127.0.0.1',
            '--dir', str(self.directory),
            '--save', '',
            '--appendonly', 'yes' if self.persistent else 'no',
            # `DEBUG SLEEP` stalls the server: the fault tests' slow Redis.
            '--enable-debug-command', 'local',
        ]
        self.process, _, stderr = spawn(f'redis-{self.port}-{self.starts}', argv, self.logs)

        def pong() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise FleetError(f'redis-server exited with {self.process.returncode}: {stderr.read_text()[-2000:]}')
            try:
                return self.command('PING', timeout=0.5) == 'PONG'
            except (OSError, FleetError):
                return False

        wait_until(pong, START_TIMEOUT, f'redis-server on {self.port} answering PING')

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stops the server with `sig` (SIGTERM: a graceful shutdown that writes the append-only
        file out) and waits until it has exited and its port is free."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=15.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5.0)
            raise FleetError(f'redis-server on {self.port} did not stop on signal {sig}') from None

    def restart(self) -> None:
        self.stop()
        self.start()

    def command(self, *args: str | bytes | int, timeout: float = 5.0) -> Any:
        """One command over RESP; its reply (`str`, `int`, `None` or a list)."""
        parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        request = b'*%d\r\n' % len(parts) + b''.join(b'$%d\r\n%s\r\n' % (len(p), p) for p in parts)
        with socket.create_connection(('127.0.0.1', self.port), timeout=timeout) as sock:
            sock.sendall(request)
            reader = sock.makefile('rb')
            return read_reply(reader)

    def close(self) -> None:
        if self.process is not None:
            stop(self.process)


def read_reply(reader) -> Any:
    line = reader.readline()
    if not line:
        raise FleetError('redis closed the connection without a reply')
    kind, rest = line[:1], line[1:].rstrip(b'\r\n')
    if kind == b'+':
        return rest.decode()
    if kind == b'-':
        raise FleetError(f'redis error: {rest.decode()}')
    if kind == b':':
        return int(rest)
    if kind == b'$':
        size = int(rest)
        if size < 0:
            return None
        data = reader.read(size + 2)
        return data[:-2].decode(errors='replace')
    if kind == b'*':
        count = int(rest)
        return None if count < 0 else [read_reply(reader) for _ in range(count)]
    raise FleetError(f'unexpected reply from redis: {line!r}')


# --- bridge instances ----------------------------------------------------------------------------


@dataclass
class Instance:
    """One bridge process; `routes` maps each route's name to its agent's URL; `push` and
    `store_settings` are further keys of `[push]` and `[store]` (TOML values)."""

    name: str
    binary: Path
    logs: Path
    routes: dict[str, str]
    store: str
    push: dict[str, str] = field(default_factory=dict)
    store_settings: dict[str, str] = field(default_factory=dict)
    listen: int = field(default_factory=fresh_port)
    admin: int = field(default_factory=fresh_port)
    grpc: dict[str, int] = field(default_factory=dict)
    generation: int = 0
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def __post_init__(self) -> None:
        self.grpc = {route: fresh_port() for route in self.routes}
        self.config = self.logs / f'{self.name}.toml'

    @property
    def url(self) -> str:
        return f'http://127.0.0.1:{self.listen}'

    @property
    def admin_url(self) -> str:
        return f'http://127.0.0.1:{self.admin}'

    def route_url(self, route: str) -> str:
        return f'{self.url}/{route}'

    def grpc_target(self, route: str) -> str:
        return f'127.0.0.1:{self.grpc[route]}'

    def config_text(self) -> str:
        """The instance's `bridge.toml`. `generation` is written into a header the bridge sends
        each agent (`x-fleet-generation`): a reload that changes it changes nothing a caller
        sees, yet rebuilds every route's upstream client. The SDK agents are uvicorn servers,
        which close a connection idle for 5 s: as docs/configuration.md asks, the bridge lets
        go of an idle connection before that (`pool_idle_timeout`), else a call sent on a
        connection the agent is closing fails (`upstream connection failed: … connection closed
        before message completed`; twice in 100,000 calls of a soak with the 50 s default)."""
        push = {'allow_networks': '["127.0.0.0/8"]', **self.push}
        lines = [
            f'listen = "127.0.0.1:{self.listen}"',
            f'admin = "127.0.0.1:{self.admin}"',
            '',
            '[store]',
            f'url = "{self.store}"',
            *(f'{key} = {value}' for key, value in self.store_settings.items()),
            '',
            '[push]',
            *(f'{key} = {value}' for key, value in push.items()),
        ]
        for route, agent in self.routes.items():
            lines += [
                '',
                '[[routes]]',
                f'name = "{route}"',
                f'prefix = "/{route}"',
                f'grpc_listen = "127.0.0.1:{self.grpc[route]}"',
                '[routes.upstream]',
                f'url = "{agent.rstrip("/")}"',
                'pool_idle_timeout = "3s"',
                '[routes.headers]',
                f'x-fleet-generation = "{self.generation}"',
            ]
        return '\n'.join(lines) + '\n'

    def start(self) -> None:
        """Starts the process from a freshly written file and waits until `/readyz` answers 200
        (every route's card read, every route's store answering)."""
        self.config.write_text(self.config_text())
        self.starts += 1
        self.process, stdout, stderr = spawn(
            f'{self.name}-{self.starts}', [str(self.binary), '--config', str(self.config)], self.logs
        )
        self.peer = Peer(self.name, self.process, self.url, stdout, stderr)
        self.wait_ready()

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        last = ['no answer']

        def ready() -> bool:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise FleetError(f'{self.name} exited with {code}\n{self.peer.log_tail()}')
            try:
                response = httpx.get(f'{self.admin_url}/readyz', timeout=2.0)
            except httpx.HTTPError as exc:
                last[0] = repr(exc)
                return False
            last[0] = f'HTTP {response.status_code}: {response.text.strip()[:300]}'
            return response.status_code == 200

        try:
            wait_until(ready, timeout, f'{self.name} ready', every=0.1)
        except FleetError as failure:
            raise FleetError(f'{failure} ({last[0]})\n{self.peer.log_tail()}') from None

    def reload(self, timeout: float = 15.0) -> None:
        """Rewrites the file with the next `generation` and sends SIGHUP; returns once the
        bridge counted one more successful reload."""
        before = self.counter('a2a_bridge_config_reloads_total', result='ok')
        self.generation += 1
        self.config.write_text(self.config_text())
        assert self.process is not None
        self.process.send_signal(signal.SIGHUP)
        wait_until(
            lambda: self.counter('a2a_bridge_config_reloads_total', result='ok') > before,
            timeout,
            f'{self.name} counting a successful reload',
            every=0.1,
        )

    def kill(self) -> None:
        """SIGKILL: the process ends at once, holding whatever it held."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10.0)

    def close(self) -> None:
        if self.process is not None:
            stop(self.process)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def rss_kib(self) -> int:
        """The resident set (`VmRSS`), in KiB."""
        for line in Path(f'/proc/{self.pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        raise FleetError(f'{self.name}: no VmRSS in /proc/{self.pid}/status')

    def open_fds(self) -> int:
        return len(os.listdir(f'/proc/{self.pid}/fd'))

    def scrape(self) -> Metrics:
        response = httpx.get(f'{self.admin_url}/metrics', timeout=10.0)
        response.raise_for_status()
        return Metrics.parse(response.text)

    def counter(self, name: str, **labels: str) -> float:
        """The sum of the samples of `name` with `labels` (0 when there are none yet)."""
        return self.scrape().total(name, **labels)


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass
class Metrics:
    """One scrape of `/metrics`: every sample, by name and label set."""

    samples: list[tuple[str, dict[str, str], float]]

    @classmethod
    def parse(cls, text: str) -> Metrics:
        samples = []
        for line in text.splitlines():
            if not line or line.startswith('#'):
                continue
            match = SAMPLE.match(line)
            if match:
                name, labels, value = match.groups()
                samples.append((name, dict(LABEL.findall(labels or '')), float(value)))
        return cls(samples)

    def total(self, name: str, **labels: str) -> float:
        """The sum of every sample of `name` whose labels include `labels`."""
        return sum(
            value
            for sample, have, value in self.samples
            if sample == name and all(have.get(k) == v for k, v in labels.items())
        )

    def value(self, name: str, **labels: str) -> float:
        """The one sample of `name` with `labels`; `FleetError` when there is not exactly one."""
        found = [
            value
            for sample, have, value in self.samples
            if sample == name and all(have.get(k) == v for k, v in labels.items())
        ]
        if len(found) != 1:
            raise FleetError(f'{len(found)} samples of {name} {labels}')
        return found[0]

    def series(self, name: str) -> list[tuple[dict[str, str], float]]:
        return [(labels, value) for sample, labels, value in self.samples if sample == name]


def summed(scrapes: Iterable[Metrics], name: str, keys: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    """`name` summed over `scrapes` (one per instance), by the values of the labels `keys`."""
    out: dict[tuple[str, ...], float] = {}
    for scrape in scrapes:
        for labels, value in scrape.series(name):
            key = tuple(labels.get(k, '') for k in keys)
            out[key] = out.get(key, 0.0) + value
    return out


# --- webhook -------------------------------------------------------------------------------------


class TimedHits(list):
    """The webhook's record of requests, each stamped (`at`) when it was answered."""

    def append(self, hit: Any) -> None:
        hit.at = time.monotonic()
        super().append(hit)


class SlowWebhook(Webhook):
    """`webhook.Webhook`, taking `pause` seconds over each request before it answers (a slow
    subscriber), recording when each request arrived (`arrivals`, by path) and when each was
    answered (`Hit.at`)."""

    def __init__(self, pause: float = 0.0) -> None:
        self.pause = pause
        self.arrivals: dict[str, list[float]] = {}
        self._times = threading.Lock()
        super().__init__()
        self.hits = TimedHits()

    def _answer(self, path: str) -> tuple[int, str | None]:
        with self._times:
            self.arrivals.setdefault(path, []).append(time.monotonic())
        if self.pause:
            time.sleep(self.pause)
        return super()._answer(path)

    def paths(self, prefix: str = '') -> dict[str, list]:
        """Every request whose path starts with `prefix`, by path."""
        with self._lock:
            out: dict[str, list] = {}
            for hit in self.hits:
                if hit.path.startswith(prefix):
                    out.setdefault(hit.path, []).append(hit)
            return out


# Re-exported for the users of this module.
__all__ = [
    'FleetError',
    'Instance',
    'Metrics',
    'RedisServer',
    'SlowWebhook',
    'start_agents',
    'stop',
    'summed',
    'wait_until',
]

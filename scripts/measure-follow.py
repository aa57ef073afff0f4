"""Measures what following a subscription costs: how late a change reaches the subscriber, and how
many task reads the bridge makes, for each `task_poll_interval`.

Runs the interop suite's a2a-sdk 0.3 agent (which refuses a resubscription to a task waiting for
input, so the bridge follows it) and, per interval, one a2a-bridge in front of it. Each round:
`ask` (the task waits for input), `SubscribeToTask` (1.0), wait `HOLD` seconds, then the follow-up
message; the delay is from sending the follow-up to the completed status at the subscriber, shown
beside the follow-up's own round trip (when the agent has completed the task). Task reads come from the bridge's
`a2a_bridge_upstream_duration_seconds_count{method="get_task"}`.

Usage: .venv/a2a-1.0/bin/python scripts/measure-follow.py [BRIDGE_BIN] (ROUNDS, HOLD, INTERVALS
in the environment). Prints a Markdown table.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BRIDGE = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / 'target' / 'release' / 'a2a-bridge'
ROUNDS = int(os.environ.get('ROUNDS', '10'))
HOLD = float(os.environ.get('HOLD', '2'))
INTERVALS = os.environ.get('INTERVALS', '100ms 500ms 1s').split()
V1 = {'A2A-Version': '1.0', 'Content-Type': 'application/json'}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def wait_for(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f'{url} did not answer')


def rpc(base: str, method: str, params: dict) -> dict:
    body = {'jsonrpc': '2.0', 'id': str(uuid.uuid4()), 'method': method, 'params': params}
    return httpx.post(base, json=body, headers=V1, timeout=30).json()


def message(text: str, **ids: str) -> dict:
    return {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': text}], **ids}


def task_reads(admin: str) -> float:
    for line in httpx.get(f'{admin}/metrics', timeout=5).text.splitlines():
        if line.startswith('a2a_bridge_upstream_duration_seconds_count{') and 'method="get_task"' in line:
            return float(line.rsplit(' ', 1)[1])
    return 0.0


def round_trip(base: str) -> float:
    task = rpc(base, 'SendMessage', {'message': message('ask me something')})['result']['task']
    completed_at: list[float] = []

    def subscribe() -> None:
        body = {'jsonrpc': '2.0', 'id': 'sub', 'method': 'SubscribeToTask', 'params': {'id': task['id']}}
        with httpx.stream('POST', base, json=body, headers=V1, timeout=60) as stream:
            for line in stream.iter_lines():
                if 'TASK_STATE_COMPLETED' in line:
                    completed_at.append(time.monotonic())
                    return

    reader = threading.Thread(target=subscribe)
    reader.start()
    time.sleep(HOLD)
    sent = time.monotonic()
    rpc(base, 'SendMessage', {'message': message('blue', taskId=task['id'], contextId=task['contextId'])})
    answered = time.monotonic()
    reader.join(60)
    if not completed_at:
        raise SystemExit('the subscriber never saw the task complete')
    return completed_at[0] - sent, answered - sent


def main() -> None:
    agent_port = free_port()
    agent = subprocess.Popen(  # noqa: S603
        [str(ROOT / '.venv' / 'a2a-0.3' / 'bin' / 'python'), str(ROOT / 'tests/interop/agents/agent_v03.py'),
         '--port', str(agent_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    rows = []
    try:
        wait_for(f'http://127.0.0.1:{agent_port}/.well-known/agent-card.json')
        for interval in INTERVALS:
            port, admin_port = free_port(), free_port()
            with tempfile.NamedTemporaryFile('w', suffix='.toml', delete=False) as config:
                config.write(
                    f'listen = "127.0.0.1:{port}"\nadmin = "127.0.0.1:{admin_port}"\n'
                    f'[upstream]\nurl = "http://127.0.0.1:{agent_port}"\ntask_poll_interval = "{interval}"\n'
                    '[demo]\nenabled = false\n'
                )
            bridge = subprocess.Popen(  # noqa: S603
                [str(BRIDGE), '--config', config.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                base, admin = f'http://127.0.0.1:{port}', f'http://127.0.0.1:{admin_port}'
                wait_for(f'{base}/.well-known/agent-card.json')
                delays, reads_before, started = [], task_reads(admin), time.monotonic()
                for _ in range(ROUNDS):
                    delays.append(round_trip(base))
                elapsed = time.monotonic() - started
                reads = task_reads(admin) - reads_before
                rows.append((interval, delays, reads, elapsed))
            finally:
                bridge.terminate()
                bridge.wait(5)
                os.unlink(config.name)
    finally:
        agent.terminate()
        agent.wait(5)
    print(f'{ROUNDS} rounds per interval, each following the task for about {HOLD:g} s before the follow-up.\n')
    print(
        '| task_poll_interval | follow-up sent to completed at the subscriber, median / max '
        '| the follow-up\'s own round trip, median | task reads per followed second |'
    )
    print('| --- | --- | --- | --- |')
    for interval, delays, reads, elapsed in rows:
        seen = [d for d, _ in delays]
        own = [o for _, o in delays]
        # Each round reads the task once for the snapshot and once on entering the follow.
        per_second = (reads - 2 * ROUNDS) / elapsed
        print(
            f'| {interval} | {statistics.median(seen) * 1000:.0f} / {max(seen) * 1000:.0f} ms '
            f'| {statistics.median(own) * 1000:.0f} ms | {per_second:.1f} |'
        )
    json.dump({'rows': [(i, d, r, e) for i, d, r, e in rows]}, sys.stderr)


if __name__ == '__main__':
    main()

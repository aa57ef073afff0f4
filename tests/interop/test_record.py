"""The exchange recorder (`--record DIR`, `[record]`), in front of the a2a-sdk 0.3.26 agent.

The a2a-sdk 1.3.0 client runs its scenarios through a recording bridge: every exchange is a
line of the documented schema with both hops (the caller's request and answer or stream, the
request the agent received and what it sent back), the losses the translation reported are on
the call that had them, and no credential is written. A burst of calls with a one-place queue
either writes or counts every exchange; a record directory that vanishes, or cannot be written,
costs the calls nothing and is logged and counted."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from conftest import free_port, run_client, spawn, stop
from test_grpc_policy import Bridge

V10 = {'A2A-Version': '1.0'}
SECRET = 'record-me-not'


def lines(directory: Path) -> list[dict]:
    """The records written so far: a line is whole once its newline is, and the writer may be
    halfway through the last one while it is read."""
    return [json.loads(line) for path in sorted(directory.glob('exchanges-*.jsonl'))
            for line in path.read_text().split('\n')[:-1] if line]


def wait_for(check, what: str, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def metric(bridge: Bridge, outcome: str) -> float:
    text = httpx.get(f'http://127.0.0.1:{bridge.admin}/metrics', timeout=5).text
    total = 0.0
    for line in text.splitlines():
        if line.startswith('a2a_bridge_records_total{') and f'outcome="{outcome}"' in line:
            total += float(line.rsplit(' ', 1)[1])
    return total


def send(url: str, text: str, headers: dict | None = None, **part) -> dict:
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': text, **part}]}
    return httpx.post(url, headers={**V10, **(headers or {})}, timeout=15, json={
        'jsonrpc': '2.0', 'id': str(uuid.uuid4()), 'method': 'SendMessage', 'params': {'message': message}}).json()


@pytest.fixture
def recording(agents, logs, tmp_path):
    def start(extra: str = '', name: str = 'record') -> tuple[Bridge, Path]:
        directory = tmp_path / f'records-{uuid.uuid4().hex[:6]}'
        bridge = Bridge(f'{name}-{uuid.uuid4().hex[:6]}', agents['0.3'], logs,
                        f'[record]\ndir = "{directory}"\n{extra}')
        started.append(bridge)
        return bridge, directory

    started: list[Bridge] = []
    yield start
    for bridge in started:
        bridge.close()


def test_an_sdk_pair_through_a_recording_bridge_leaves_both_hops_of_every_exchange(recording, logs):
    bridge, directory = recording(f'[auth]\nbearer_tokens = ["{SECRET}"]\n')
    url = bridge.peer.url
    run_client('1.0', url, ['send_blocking', 'stream', 'push_config'], logs,
               env={'INTEROP_BEARER_TOKEN': SECRET})
    # A part's media type has no place in 0.3: a loss on that call.
    lossy = send(url, 'ask losses', {'Authorization': f'Bearer {SECRET}'}, mediaType='text/plain')
    assert 'result' in lossy, lossy
    records = wait_for(lambda: [r for r in lines(directory) if r['caller'].get('method') == 'send_message'
                                and 'ask losses' in json.dumps(r['caller']['request'])], 'the lossy call')
    assert records[0]['losses'] and all(l['direction'] == '1.0->0.3' for l in records[0]['losses'])
    assert any(l['kind'] == 'field_dropped' and 'mediaType' in l['at'] for l in records[0]['losses'])

    written = lines(directory)
    assert all(r['schema'] == 'a2a-bridge.exchange/1' for r in written)
    methods = {r['caller'].get('method') for r in written}
    assert {'send_message', 'send_streaming_message', 'create_push_config'} <= methods, methods
    for record in written:
        caller = record['caller']
        if caller.get('method') in (None, 'agent_card') or caller.get('error_code') is not None:
            continue  # the card, and calls the bridge answered itself
        assert caller['revision'] == '1.0' and caller['binding'] == 'jsonrpc', caller
        assert record['agent'], record
        hop = record['agent'][0]
        assert hop['revision'] == '0.3' and hop['binding'] == 'jsonrpc', hop
        assert hop['request']['body']['json']['jsonrpc'] == '2.0', hop
        assert '/' not in hop['request']['body']['json']['method'] or hop['request']['body']['json']['method'] in (
            'message/send', 'message/stream', 'tasks/get', 'tasks/pushNotificationConfig/set',
            'tasks/pushNotificationConfig/get', 'tasks/pushNotificationConfig/list'), hop
    stream = next(r for r in written if r['caller'].get('method') == 'send_streaming_message')
    assert len(stream['caller']['events']) >= 1 and stream['agent'][0]['events'], stream
    caller_text = json.dumps(stream['caller']['events'])
    agent_text = ''.join(e['body']['text'] for e in stream['agent'][0]['events'])
    assert 'TASK_STATE_COMPLETED' in caller_text and '"state":"completed"' in agent_text.replace(' ', '')
    # A gRPC caller's call is recorded too, its messages as base64.
    import asyncio

    import grpc
    from callers import GrpcCaller

    async def over_grpc() -> None:
        async with grpc.aio.insecure_channel(bridge.target) as channel:
            caller = GrpcCaller('1.0', channel)
            caller.metadata = (*caller.metadata, ('authorization', f'Bearer {SECRET}'))
            task = await caller.send(f'ask {uuid.uuid4().hex}')
            assert task.state == 'input-required', task

    asyncio.run(over_grpc())
    grpc_record = wait_for(lambda: next((r for r in lines(directory) if r['caller'].get('binding') == 'grpc'), None),
                           'the gRPC call recorded')
    assert grpc_record['caller']['request']['body']['base64'], grpc_record['caller']
    assert grpc_record['agent'] and grpc_record['agent'][0]['revision'] == '0.3', grpc_record
    written = lines(directory)
    # Credentials are nowhere: the caller's bearer token, the push config's token.
    everything = '\n'.join(p.read_text() for p in directory.glob('exchanges-*.jsonl'))
    assert SECRET not in everything
    assert 'interop-token' not in everything
    assert '[redacted]' in everything
    assert metric(bridge, 'written') == len(written)


def test_calls_to_a_grpc_agent_are_recorded_with_its_messages(agents, logs, tmp_path):
    """The a2a-sdk 1.3.0 agent served over gRPC only: the agent's hop of a unary call and of a
    stream is its rpc, the messages it was sent and sent back, as base64."""
    directory = tmp_path / 'records-grpc'
    bridge = Bridge(f'record-grpc-{uuid.uuid4().hex[:6]}', agents['1.0-grpc'], logs,
                    f'[record]\ndir = "{directory}"\n')
    try:
        url = bridge.peer.url
        answered = send(url, f'hello {uuid.uuid4().hex}')
        assert 'result' in answered, answered
        message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'stream please'}]}
        with httpx.stream('POST', url, headers={**V10, 'Accept': 'text/event-stream'}, timeout=15, json={
                'jsonrpc': '2.0', 'id': 's', 'method': 'SendStreamingMessage',
                'params': {'message': message}}) as response:
            events = [line for line in response.iter_lines() if line.startswith('data:')]
        assert events, 'the stream carried events'

        def recorded(method: str):
            return next((r for r in lines(directory) if r['caller'].get('method') == method), None)

        unary = wait_for(lambda: recorded('send_message'), 'the unary call recorded')
        stream = wait_for(lambda: recorded('send_streaming_message'), 'the stream recorded')
        for record, rpc in ((unary, 'SendMessage'), (stream, 'SendStreamingMessage')):
            assert record['caller']['binding'] == 'jsonrpc', record['caller']
            hop = record['agent'][0]
            assert hop['binding'] == 'grpc' and hop['revision'] == '1.0', hop
            assert hop['request']['target'].endswith(f'/{rpc}'), hop['request']
            assert hop['request']['body']['base64'], hop['request']
            assert hop['status'] == 200, hop
        assert unary['agent'][0]['answer'] and unary['agent'][0]['answer'][0]['body']['base64'], unary
        agent_events = stream['agent'][0]['events']
        assert agent_events and all(e['body']['base64'] for e in agent_events), stream['agent'][0]
        # A frame the caller was sent may join several events: every one of them is recorded.
        written = sum(e['body']['text'].count('data:') for e in stream['caller']['events'])
        assert written == len(events), stream['caller']
    finally:
        bridge.close()


def test_a_burst_with_a_small_queue_writes_or_counts_every_exchange(recording):
    bridge, directory = recording('queue = 1\n')
    calls = 120

    def timed(i: int) -> tuple[dict, float]:
        started = time.monotonic()
        answer = send(bridge.peer.url, f'burst {i}')
        return answer, time.monotonic() - started

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(timed, range(calls)))
    answers = [a for a, _ in results]
    assert all('result' in a for a in answers), [a for a in answers if 'result' not in a][:2]
    # A full queue drops the record, never holds the call: no call waited on the writer.
    assert max(t for _, t in results) < 2.0, sorted(t for _, t in results)[-5:]
    with httpx.Client(timeout=15) as http:
        for _ in range(5):
            with http.stream('POST', bridge.peer.url, headers=V10, json={
                    'jsonrpc': '2.0', 'id': 's', 'method': 'SendStreamingMessage', 'params': {'message': {
                        'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'stream'}]}}}) as r:
                assert r.status_code == 200
                r.read()
    total = calls + 5
    wait_for(lambda: metric(bridge, 'written') + metric(bridge, 'dropped_queue') >= total, 'every exchange counted')
    written, dropped = metric(bridge, 'written'), metric(bridge, 'dropped_queue')
    sent = [r for r in lines(directory) if r['caller'].get('method') in ('send_message', 'send_streaming_message')]
    assert written + dropped == total and len(sent) == written, (written, dropped, len(sent))


def test_a_record_directory_that_goes_away_costs_the_calls_nothing(recording):
    bridge, directory = recording()
    assert 'result' in send(bridge.peer.url, 'before')
    wait_for(lambda: lines(directory), 'the first exchange')
    shutil.rmtree(directory)
    directory.write_text('a file where the directory was')  # it cannot come back
    for i in range(5):
        assert 'result' in send(bridge.peer.url, f'while broken {i}')
    wait_for(lambda: metric(bridge, 'dropped_write') >= 5, 'the failures counted')
    assert 'could not be recorded' in bridge.peer.stderr.read_text(errors='replace')
    directory.unlink()
    assert 'result' in send(bridge.peer.url, 'after')
    wait_for(lambda: any('after' in json.dumps(r['caller']['request']) for r in lines(directory)),
             'recording resumed')


def test_the_report_counts_a_recorded_run_and_fails_on_what_is_forbidden(recording):
    import subprocess

    from conftest import bridge_binary

    bridge, directory = recording()
    url = bridge.peer.url
    assert 'result' in send(url, 'plain one')
    assert 'result' in send(url, 'lossy one', mediaType='text/plain')
    # The agent's refusal (an unknown task) and the caller's mistake (no task id).
    unknown = httpx.post(url, headers=V10, timeout=15, json={
        'jsonrpc': '2.0', 'id': 'g', 'method': 'GetTask', 'params': {'id': 'no-such-task'}}).json()
    assert unknown['error']['code'] == -32001, unknown
    invalid = httpx.post(url, headers=V10, timeout=15, json={
        'jsonrpc': '2.0', 'id': 'i', 'method': 'GetTask', 'params': {}}).json()
    assert invalid['error']['code'] == -32602, invalid
    wait_for(lambda: len([r for r in lines(directory) if r['caller'].get('method') in ('send_message', 'get_task')]) == 4,
             'four calls recorded')

    def report(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(bridge_binary()), 'report', str(directory), *args],
                              capture_output=True, text=True, timeout=30)

    done = report('--format', 'json')
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    calls = {(c['method'], c['revisions'], c['bindings']): c['count'] for c in summary['calls']}
    assert calls[('send_message', '1.0 -> 0.3', 'jsonrpc -> jsonrpc')] == 2, calls
    errors = {(e['code'], e['origin']): e['count'] for e in summary['errors']}
    assert errors == {(-32001, 'agent'): 1, (-32602, 'caller'): 1}, errors
    losses = {l['kind']: l for l in summary['losses']}
    assert losses['field_dropped']['count'] >= 1 and 'mediaType' in losses['field_dropped']['at'], losses
    assert summary['added_ms']['calls'] >= 2 and summary['added_ms']['p50'] >= 0, summary['added_ms']

    text = report()
    assert text.returncode == 0 and 'field_dropped' in text.stdout and '-32001' in text.stdout, text.stdout
    forbidden = report('--fail-on', 'loss=field_dropped')
    assert forbidden.returncode == 1 and 'forbidden by --fail-on' in forbidden.stdout, forbidden.stdout
    assert report('--fail-on', 'error=-32001').returncode == 1
    assert report('--fail-on', 'loss=enum_mapped', '--fail-on', 'error=-32603').returncode == 0
    assert report('--fail-on', 'latency=1').returncode == 2
    missing = subprocess.run([str(bridge_binary()), 'report', str(directory / 'missing')],
                             capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and 'cannot read' in missing.stderr, missing.stderr


def test_a_replay_finds_nothing_new_then_the_difference_planted_in_the_record(recording):
    import subprocess

    from conftest import bridge_binary

    bridge, directory = recording()
    url = bridge.peer.url
    assert 'result' in send(url, 'replay me')
    with httpx.Client(timeout=15) as http:
        with http.stream('POST', url, headers=V10, json={
                'jsonrpc': '2.0', 'id': 's', 'method': 'SendStreamingMessage', 'params': {'message': {
                    'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'stream along'}]}}}) as r:
            r.read()
    wait_for(lambda: len([r for r in lines(directory)
                          if r['caller'].get('method') in ('send_message', 'send_streaming_message')]) == 2,
             'both calls recorded')

    def replay() -> subprocess.CompletedProcess:
        return subprocess.run([str(bridge_binary()), 'replay', str(directory), '--to', url],
                              capture_output=True, text=True, timeout=60)

    same = replay()
    assert same.returncode == 0, same.stdout + same.stderr
    assert '0 different' in same.stdout and 'replayed 2:' in same.stdout, same.stdout

    # Plant a difference: the recorded answer of the plain send now says something else.
    (path,) = directory.glob('exchanges-*.jsonl')
    records = [json.loads(line) for line in path.read_text().splitlines()]
    send_record = next(r for r in records if r['caller'].get('method') == 'send_message')
    answer = send_record['caller']['answer'][0]['body']['json']
    answer['result']['task']['status']['state'] = 'TASK_STATE_FAILED'
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))
    found = replay()
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"call {send_record['id']} (send_message): $.result.task.status.state" in found.stdout, found.stdout
    assert '1 different' in found.stdout, found.stdout


def test_the_report_page_loads_in_a_browser_shows_the_calls_and_opens_one(recording, tmp_path):
    """The page `report --html` writes, in headless Chromium driven by Selenium: it loads, its
    tables show the calls, and clicking a call opens its two hops side by side."""
    import subprocess

    from conftest import bridge_binary
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    # scripts/test installs both from Debian.
    assert shutil.which('chromium') and shutil.which('chromedriver'), 'chromium and chromedriver are needed'
    bridge, directory = recording()
    assert 'result' in send(bridge.peer.url, 'page one', mediaType='text/plain')
    refused = httpx.post(bridge.peer.url, headers=V10, timeout=15, json={
        'jsonrpc': '2.0', 'id': 'i', 'method': 'GetTask', 'params': {}}).json()
    assert refused['error']['code'] == -32602
    wait_for(lambda: len(lines(directory)) >= 2, 'both calls recorded')
    page = tmp_path / 'report.html'
    done = subprocess.run([str(bridge_binary()), 'report', str(directory), '--html', str(page)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and page.is_file(), done.stderr

    options = webdriver.ChromeOptions()
    for argument in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'):
        options.add_argument(argument)
    options.binary_location = shutil.which('chromium')
    browser = webdriver.Chrome(service=Service(shutil.which('chromedriver')), options=options)
    try:
        browser.get(page.as_uri())
        assert browser.title == 'a2a-bridge report'
        assert browser.find_element(By.ID, 'count').text.startswith(f'{len(lines(directory))} exchanges')
        rows = browser.find_elements(By.CSS_SELECTOR, '#every-call tbody tr')
        assert len(rows) == len(lines(directory))
        assert 'field_dropped' in browser.find_element(By.ID, 'losses').text
        assert not browser.find_element(By.ID, 'detail').is_displayed()
        sent = next(r for r in rows if 'send_message' in r.text)
        sent.click()
        assert browser.find_element(By.ID, 'detail').is_displayed()
        caller = browser.find_element(By.ID, 'caller-hop').text
        agent = browser.find_element(By.ID, 'agent-hop').text
        assert 'SendMessage' in caller and 'page one' in caller, caller[:300]
        assert 'message/send' in agent and 'page one' in agent, agent[:300]
        refused_row = next(r for r in rows if 'error -32602' in r.text)
        refused_row.click()
        assert 'answered by the bridge' in browser.find_element(By.ID, 'agent-hop').text
    finally:
        browser.quit()


def test_files_rotate_by_size_bodies_are_cut_and_configured_headers_redacted(recording):
    bridge, directory = recording('max_file_size = "4KiB"\nmax_body = "64"\nredact_headers = ["X-Tenant-Secret"]\n')
    for i in range(12):
        assert 'result' in send(bridge.peer.url, f'rotate {i} ' + 'x' * 100, {'X-Tenant-Secret': 'hush-hush'})
    records = wait_for(lambda: (r := [x for x in lines(directory) if x['caller'].get('method') == 'send_message'])
                       and len(r) == 12 and r, 'every call recorded')
    files = sorted(directory.glob('exchanges-*.jsonl'))
    assert len(files) > 1, files
    assert all(p.stat().st_size <= 4096 or len(p.read_text().splitlines()) == 1 for p in files)
    body = records[0]['caller']['request']['body']
    assert body['truncated'] is True and body['length'] > 64 and len(body['text'].encode()) <= 64, body
    text = ''.join(p.read_text() for p in files)
    assert 'hush-hush' not in text and '"x-tenant-secret":"[redacted]"' in text.replace(' ', '')


def test_a_record_file_that_cannot_grow_costs_the_calls_nothing(agents, logs, tmp_path):
    """A full disk, as a file-size limit on the bridge (with the signal it would raise ignored,
    as a full disk raises none): writes fail, the failures are logged and counted, calls go on."""
    import resource
    import signal
    import subprocess

    from conftest import bridge_binary

    directory = tmp_path / 'records'
    listen, admin = free_port(), free_port()
    config = tmp_path / 'full.toml'
    config.write_text(f'listen = "127.0.0.1:{listen}"\nadmin = "127.0.0.1:{admin}"\n'
                      f'[upstream]\nurl = "{agents["0.3"].url.rstrip("/")}"\n[demo]\nenabled = false\n'
                      f'[record]\ndir = "{directory}"\n')

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 * 1024, 48 * 1024))

    err = tmp_path / 'full.err'
    with err.open('wb') as stderr:
        process = subprocess.Popen([str(bridge_binary()), '--config', str(config)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=limited)  # noqa: PLW1509
    try:
        url = f'http://127.0.0.1:{listen}'
        wait_for(lambda: process.poll() is None and _ready(admin), 'the bridge ready')
        for i in range(60):
            assert 'result' in send(url, f'filling {i} ' + 'y' * 400), i
        bridge = type('B', (), {'admin': admin})
        wait_for(lambda: metric(bridge, 'dropped_write') >= 1, 'a failed write counted')
        assert metric(bridge, 'written') >= 1
        assert 'could not be recorded' in err.read_text(errors='replace')
        assert process.poll() is None
    finally:
        stop(process)


def _ready(admin: int) -> bool:
    try:
        return httpx.get(f'http://127.0.0.1:{admin}/readyz', timeout=1).status_code == 200
    except httpx.HTTPError:
        return False

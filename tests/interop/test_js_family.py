"""The suite's second SDK family: the official A2A JS SDK (`@a2a-js/sdk` 0.3.14 and 1.3.0) as
agents behind the bridge and as callers in front of it, on every binding, through a bridge on a
real `redis-server` (`fleet.py`). Its parsers and servers have quirks of their own (0.3's SSE
reader keeps only an event's last `data:` line; 0.3's HTTP+JSON push body is the config alone,
where a2a-sdk 0.3.26 sends the whole request; 1.0's gRPC stubs need every field filled), so
what passes the Python SDK is proved again here.

- Every caller form (the raw callers of both revisions over JSON-RPC, HTTP+JSON and gRPC, and
  the JS SDK's clients of both revisions over each binding) reaches every JS agent (0.3 and 1.0,
  each binding): blocking sends, reads, streams read to their end, streams left after their
  first events, cancellations, push configs.
- The JS SDK's clients reach the Python SDK's agents, 1.0 `ListTasks` toward a 0.3 agent
  included, and read the bridge's refusals as their own errors.
- Hostile rows with a JS agent behind: task ids with dot segments, slashes and odd bytes reach
  the JS HTTP+JSON agents as exactly one path segment, as the caller named them.
- Faults: a JS agent killed in the middle of streams of every caller form ends each of them in
  the caller's form, with nothing left open; gRPC JS agents ending their connections every
  250 ms (grpc-js `grpc.max_connection_age_ms`) cost no call (`test_fleet_faults.py`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from callers import BINDINGS, REVISIONS, Caller, Channels, Refused, WrongAnswer, caller
from conftest import bridge_binary, stop
from fleet import Instance, RedisServer, start_agents, wait_until
from jscallers import JsRunners, node

if node() is None:
    pytest.skip('the JS SDKs are not installed (scripts/setup-node.sh)', allow_module_level=True)

FORMS = [(revision, binding) for revision in REVISIONS for binding in BINDINGS]
JS_AGENTS = [f'js{revision}-{binding}' for revision in REVISIONS for binding in BINDINGS]
PY_AGENTS = ['0.3', '1.0']


def route_of(key: str) -> str:
    return 'agent-' + key.replace('.', '')


class Family:
    """One bridge instance with a route per agent, and callers of every form toward it."""

    def __init__(self, instance: Instance, agents: dict[str, Any]) -> None:
        self.instance = instance
        self.agents = agents

    def run(self, body: Callable[[Callable[[str, str, str, bool], Caller]], Any]) -> Any:
        """Runs `body(make)` where `make(route, revision, binding, js)` gives a caller."""

        async def main() -> Any:
            channels = Channels()
            runners = JsRunners()
            async with httpx.AsyncClient(timeout=30.0) as http:

                def make(route: str, revision: str, binding: str, js: bool) -> Caller:
                    url, target = self.instance.route_url(route), self.instance.grpc_target(route)
                    if js:
                        return runners.caller(revision, binding, url, target)
                    return caller(revision, binding, http, channels, url, target)

                try:
                    return await body(make)
                finally:
                    await runners.close()
                    await channels.close()

        return asyncio.run(main())


@pytest.fixture(scope='module')
def family(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Family]:
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    keys = JS_AGENTS + PY_AGENTS
    peers = start_agents(keys, logs, [])
    redis = RedisServer(tmp_path_factory.mktemp('redis-js'), logs, False)
    instance = Instance('js-family', binary, logs, {route_of(k): peers[k].url for k in keys}, redis.url)
    try:
        redis.start()
        instance.start()
        yield Family(instance, peers)
    finally:
        instance.close()
        redis.close()
        for peer in peers.values():
            stop(peer.process)


def callers_of_every_form(make, route: str) -> list[Caller]:
    return [make(route, revision, binding, js) for js in (False, True) for revision, binding in FORMS]


async def conversation(who: Caller) -> list[str]:
    """The calls every caller makes of an agent; what went wrong, as lines."""
    wrong = []

    def check(what: str, ok: bool, got: Any) -> None:
        if not ok:
            wrong.append(f'{who.label}: {what}: {got}')

    text = f'echo {uuid.uuid4().hex[:8]}'
    task = await who.send(text)
    check('echo completed', task.state == 'completed' and task.artifacts.get('echo') == f'echo: {text}', task)
    again = await who.get(task.id)
    check('read back', again.id == task.id and again.state == 'completed', again)
    events = await who.stream('stream it')
    chunks = ''.join(e.text for e in events if e.kind == 'artifact')
    check('stream chunks', chunks == 'chunk 0chunk 1chunk 2chunk 3', events)
    check('stream ends completed', bool(events) and events[-1].state == 'completed', events[-1:])
    slow = await who.send('slow', blocking=False)
    check('slow running', slow.state in ('submitted', 'working'), slow)
    canceled = await who.cancel(slow.id)
    check('canceled', canceled.state == 'canceled', canceled)
    left = await who.stream('slow', stop=lambda seen: len(seen) >= 2)
    check('stream left after two events', len(left) >= 2, left)
    if left:
        gone = await who.cancel(left[0].task_id)
        check('left stream canceled', gone.state == 'canceled', gone)
    asking = await who.send('ask me')
    check('ask', asking.state == 'input-required', asking)
    hook = f'http://127.0.0.1:9/hook/{uuid.uuid4().hex[:8]}'
    config = await who.create_push(asking.id, hook, 'tok-js', 'cfg-js')
    check('push config', config['url'] == hook and config['token'] == 'tok-js', config)
    return wrong


@pytest.mark.parametrize('agent', JS_AGENTS)
def test_every_caller_form_reaches_every_js_agent(family: Family, agent: str) -> None:
    route = route_of(agent)

    async def body(make) -> list[str]:
        results = await asyncio.gather(*(conversation(who) for who in callers_of_every_form(make, route)),
                                       return_exceptions=True)
        return [repr(r) if isinstance(r, BaseException) else line for r in results
                for line in ([r] if isinstance(r, BaseException) else r)]

    wrong = family.run(body)
    assert not wrong, '\n'.join(map(str, wrong))


@pytest.mark.parametrize('agent', PY_AGENTS)
def test_js_callers_reach_the_python_agents_and_list_their_tasks(family: Family, agent: str) -> None:
    route = route_of(agent)

    async def body(make) -> list[str]:
        js = [make(route, revision, binding, True) for revision, binding in FORMS]
        results = await asyncio.gather(*(conversation(who) for who in js), return_exceptions=True)
        wrong = [repr(r) if isinstance(r, BaseException) else line for r in results
                 for line in ([r] if isinstance(r, BaseException) else r)]
        for who in js:
            if who.revision != '1.0':
                continue
            page = await who.list_tasks(page_size=50)
            if not page or any(not t.id for t in page):
                wrong.append(f'{who.label}: ListTasks: {page}')
        return wrong

    wrong = family.run(body)
    assert not wrong, '\n'.join(map(str, wrong))


@pytest.mark.parametrize('agent', PY_AGENTS)
def test_js_callers_resubscribe_to_a_running_task_as_their_sdk_sends_it(family: Family, agent: str) -> None:
    """Every JS caller form resubscribes with its SDK's own request (the 0.3 HTTP+JSON client
    POSTs `/v1/tasks/{id}:subscribe`, where the 0.3 proto's HTTP rule and a2a-sdk 0.3 use GET)
    to a task the agent is still working on, and reads that task's live events through the
    bridge until it leaves; the task is then canceled."""
    route = route_of(agent)

    async def body(make) -> list[str]:
        wrong = []
        for revision, binding in FORMS:
            who = make(route, revision, binding, True)
            slow = await who.send('slow', blocking=False)
            try:
                events = await who.resubscribe(slow.id, stop=lambda seen: len(seen) >= 2)
                if len(events) < 2 or any(e.task_id != slow.id for e in events):
                    wrong.append(f'{who.label}: resubscribe to {slow.id}: {events}')
                if revision == '1.0' and events and events[0].kind != 'task':
                    wrong.append(f'{who.label}: the subscription did not begin with the task: {events}')
            except (Refused, WrongAnswer) as failure:
                wrong.append(f'{who.label}: resubscribe: {failure}')
            finally:
                canceled = await who.cancel(slow.id)
                if canceled.state != 'canceled':
                    wrong.append(f'{who.label}: cancel after resubscribing: {canceled}')
        return wrong

    wrong = family.run(body)
    assert not wrong, '\n'.join(wrong)


def test_a_js_0_3_grpc_agents_refusal_to_cancel_reaches_json_rpc_callers_as_task_not_cancelable(
        family: Family) -> None:
    """The JavaScript SDK 0.3's gRPC server refuses to cancel a finished task with
    `FAILED_PRECONDITION` and `Task not cancelable: <id>` (no class prefix, unlike a2a-sdk 0.3):
    the bridge reads it as TaskNotCancelable, and JSON-RPC callers of both revisions and both
    SDK families get -32002."""
    route = route_of('js0.3-grpc')

    async def body(make) -> list[str]:
        wrong = []
        for js in (False, True):
            for revision in REVISIONS:
                who = make(route, revision, 'jsonrpc', js)
                done = await who.send(f'echo {uuid.uuid4().hex[:8]}')
                try:
                    got = await who.cancel(done.id)
                    wrong.append(f'{who.label}: a finished task was canceled: {got}')
                except Refused as refusal:
                    if '-32002' not in refusal.code.split():
                        wrong.append(f'{who.label}: {refusal.code} {refusal.message}')
        return wrong

    wrong = family.run(body)
    assert not wrong, '\n'.join(wrong)


@pytest.mark.parametrize('agent', PY_AGENTS + ['js0.3-grpc'])
def test_the_js_0_3_grpc_client_types_the_bridges_refusals(family: Family, agent: str) -> None:
    """The JavaScript SDK 0.3's gRPC client types an error by its status and call alone
    (`FAILED_PRECONDITION` on a cancel is TaskNotCancelable, `NOT_FOUND` TaskNotFound), not by
    its message: the bridge writes the status it keys on, whatever form the agent answered in
    (a2a-sdk 0.3.26's `UNIMPLEMENTED` with a class prefix, a2a-sdk 1.3.0's reason, the
    JavaScript SDK 0.3's own)."""
    route = route_of(agent)

    async def body(make) -> list[str]:
        wrong = []
        who = make(route, '0.3', 'grpc', True)
        done = await who.send(f'echo {uuid.uuid4().hex[:8]}')
        try:
            got = await who.cancel(done.id)
            wrong.append(f'{who.label}: a finished task was canceled: {got}')
        except Refused as refusal:
            if 'TaskNotCancelableError' not in refusal.code.split():
                wrong.append(f'{who.label} cancel: {refusal.code} {refusal.message}')
        try:
            got = await who.get(f'no-such-task-{uuid.uuid4().hex[:8]}')
            wrong.append(f'{who.label}: an unknown task was found: {got}')
        except Refused as refusal:
            if 'TaskNotFoundError' not in refusal.code.split():
                wrong.append(f'{who.label} get: {refusal.code} {refusal.message}')
        return wrong

    wrong = family.run(body)
    assert not wrong, '\n'.join(wrong)


# How each JS client exposes TaskNotFound answered by the bridge in its form: the JSON-RPC code,
# the HTTP status, the gRPC status code.
NOT_FOUND = {'jsonrpc': -32001, 'rest': 404, 'grpc': 5}


@pytest.mark.parametrize('agent', PY_AGENTS + ['js1.0-rest', 'js0.3-rest'])
def test_js_callers_read_the_bridges_refusals_as_their_own_errors(family: Family, agent: str) -> None:
    """A task no agent has, named plainly and by a dot segment, a slash or odd bytes: every JS
    client gets TaskNotFound as its SDK reads it, never another resource's answer."""
    route = route_of(agent)
    ids = ['no-such-task', '..', '.', 'a/b', '%2F', 'x y?#']

    async def body(make) -> list[str]:
        wrong = []
        for revision, binding in FORMS:
            who = make(route, revision, binding, True)
            for task_id in ids:
                try:
                    got = await who.get(task_id)
                except Refused as refusal:
                    allowed = {NOT_FOUND[binding]}
                    if binding == 'grpc' and '/' in task_id:
                        allowed.add(3)  # INVALID_ARGUMENT: not a name of the form tasks/*
                    if binding == 'rest' and task_id in ('.', '..'):
                        # The JS clients put the id into the URL unencoded and fetch resolves
                        # the dot segment first: another path leaves the client (for `..` the
                        # route's JSON-RPC endpoint, 405), and is refused as what it is.
                        allowed |= {404, 405}
                    if not any(f' {code}' in refusal.code for code in allowed):
                        wrong.append(f'{who.label} {task_id!r}: {refusal.code} {refusal.message}')
                    continue
                except WrongAnswer as failure:
                    wrong.append(f'{who.label} {task_id!r}: {failure}')
                    continue
                wrong.append(f'{who.label} {task_id!r}: answered {got}')
        return wrong

    wrong = family.run(body)
    assert not wrong, '\n'.join(wrong)
    if agent.startswith('js'):
        # What the JS HTTP+JSON agent received: each id as exactly one segment, nothing else.
        prefix = '/v1/tasks/' if agent.startswith('js0.3') else '/tasks/'
        segments = set()
        for line in family.agents[agent].stdout.read_text().splitlines():
            method, _, target = line.removeprefix('REQUEST ').partition(' ')
            if not line.startswith('REQUEST ') or method != 'GET' or not target.startswith(prefix):
                continue
            raw = target.removeprefix(prefix).split('?', 1)[0]
            assert raw not in ('.', '..') and '/' not in raw and ':' not in raw, line
            segments.add(unquote(raw))
        assert set(ids) <= segments, (sorted(segments), ids)


def test_a_js_agent_killed_mid_stream_ends_every_callers_stream_in_its_form(
        logs: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Streams of a slow task from every caller form, toward the JS agents of both revisions
    (JSON-RPC and gRPC); the agents are killed (SIGKILL) while every stream is open: each stream
    ends, as an error or an end in the caller's form, within seconds; none hangs, and the bridge
    holds no stream open afterwards."""
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    keys = ['js0.3-jsonrpc', 'js1.0-grpc']
    peers = start_agents(keys, logs, [])
    redis = RedisServer(tmp_path_factory.mktemp('redis-js-kill'), logs, False)
    instance = Instance('js-kill', binary, logs, {route_of(k): peers[k].url for k in keys}, redis.url)
    try:
        redis.start()
        instance.start()
        family = Family(instance, peers)

        async def body(make) -> list[str]:
            streams = []
            for key in keys:
                for who in callers_of_every_form(make, route_of(key)):
                    streams.append((who, asyncio.create_task(who.stream('slow', timeout=60.0))))
            await asyncio.sleep(1.5)
            for peer in peers.values():
                peer.process.send_signal(signal.SIGKILL)
            started = time.monotonic()
            wrong = []
            for who, stream in streams:
                try:
                    events = await asyncio.wait_for(stream, 20.0)
                except (Refused, WrongAnswer):
                    continue
                except TimeoutError:
                    wrong.append(f'{who.label}: the stream did not end within 20 s of the kill')
                    continue
                if events and events[-1].state in ('completed', 'canceled'):
                    wrong.append(f'{who.label}: the stream ended as if the task had: {events[-1]}')
            if time.monotonic() - started > 20.0:
                wrong.append('the streams took over 20 s to end')
            return wrong

        wrong = family.run(body)
        assert not wrong, '\n'.join(wrong)
        wait_until(lambda: instance.scrape().total('a2a_bridge_open_streams') == 0, 10.0, 'no stream open')
        assert instance.scrape().total('a2a_bridge_requests_in_flight') == 0
    finally:
        instance.close()
        redis.close()
        for peer in peers.values():
            stop(peer.process)


def test_json_bodies_of_js_agents_pass_unchanged(family: Family) -> None:
    """The card each JS agent serves is read by the bridge and offered to callers of both
    revisions: the dual card names the agent's skills, whichever family and binding it is."""
    for key in JS_AGENTS:
        url = family.instance.route_url(route_of(key)) + '/.well-known/agent-card.json'
        card = httpx.get(url, timeout=10.0).json()
        assert card.get('name'), (key, card)
        assert json.dumps(card).count('interop') >= 1, (key, card)

"""Faults of a fleet: two a2a-bridge processes on one real `redis-server`, in front of the
interop suite's 0.3 and 1.0 SDK agents, while callers of both revisions over JSON-RPC,
HTTP+JSON and gRPC keep calling (`fleet.py` starts the fleet, `callers.py` makes the calls).

What is proved elsewhere is not repeated here: the Redis store's own reconnect after a restart
(`bridge-store-redis` `two_instances_on_one_redis_list_each_others_tasks_and_survive_redis_going_away`,
in process with a scripted agent), `/readyz` and `a2a_bridge_store_up` following Redis
(`a2a-bridge` `gateway::readyz_and_a_metric_say_when_the_redis_store_is_down_and_recover_with_it`),
a registration surviving a restarted bridge and a killed instance's deliveries sent by another
started after it (`test_push.py`). Here, with the real processes under load:

- Redis stopped: every call that needs no state goes on; creating a push config and
  `ListTasks` toward a 0.3 agent are refused with InternalError in each caller's own form, and
  an agent's delivery is answered 503; once Redis is back, everything works again, push included.
- Redis stalled (`DEBUG SLEEP`): every call is answered; calls toward the 1.0 agent do not wait
  for Redis at all, calls toward the 0.3 agent (whose task index is written on each answer) are
  delayed, by no more than the stall and the store's deadlines (the store holds its connection
  lock only to read and keep the connection, never across a connect).
- Redis restarted quickly: the first store operation of each route on each instance succeeds
  (a kept connection found dead is replaced and the operation run once more).
- Redis restarted with and without persistence (`appendonly`): with it, the task index behind
  `ListTasks` toward a 0.3 agent, the push registrations and the deliveries pending in Redis
  survive; without it, all three are lost.
- An instance killed (SIGKILL) while it delivers to a slow webhook: the other instance, running
  all along, takes every pending delivery over once its lease ran out; none is lost, each path's
  notifications arrive in order, and the only duplicate is the one in flight at the kill.
- gRPC agents that end every connection after 250 ms (grpc-core's maximum connection age: a
  GOAWAY, the calls taken finished, the connection closed): no call is lost, since a call the
  agent never took is sent again on a fresh connection.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from callers import BINDINGS, REVISIONS, Caller, Channels, Refused, WrongAnswer, caller
from conftest import bridge_binary, stop
from fleet import Instance, RedisServer, SlowWebhook, start_agents, wait_until
from jscallers import node

ROUTES = {'agent-03': '0.3', 'agent-10': '1.0'}
FORMS = [(revision, binding) for revision in REVISIONS for binding in BINDINGS]
STORE_DOWN = "the bridge's store is unavailable"
# How each form writes the InternalError of a store that does not answer (`callers.Refused.code`).
INTERNAL = {
    ('0.3', 'jsonrpc'): '-32603',
    ('1.0', 'jsonrpc'): '-32603',
    ('0.3', 'rest'): 'http_500',
    ('1.0', 'rest'): 'http_500 INTERNAL',
    ('0.3', 'grpc'): 'grpc INTERNAL',
    ('1.0', 'grpc'): 'grpc INTERNAL INTERNAL_ERROR',
}
# The Redis adapter's deadline for connecting and for each operation (`OPERATION_TIMEOUT`).
STORE_DEADLINE = 2.0


@dataclass
class Fleet:
    redis: RedisServer
    instances: list[Instance]

    def close(self) -> None:
        for instance in self.instances:
            instance.close()
        self.redis.close()


@pytest.fixture(scope='module')
def fleets(agents, logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Fleet]]:
    """`fleets(persistent=…, push={…})` starts a `redis-server` (with `appendonly` when
    persistent) and two bridges on it, each routing `/agent-03` to the 0.3 agent and
    `/agent-10` to the 1.0 agent, from its own generated `bridge.toml`; `Fleet.close` stops
    them, and whatever is still running when the module ends is stopped then."""
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    made: list[Fleet] = []

    def make(persistent: bool = False, push: dict[str, str] | None = None) -> Fleet:
        n = len(made)
        redis = RedisServer(tmp_path_factory.mktemp(f'redis-{n}'), logs, persistent)
        routes = {route: agents[revision].url for route, revision in ROUTES.items()}
        fleet = Fleet(redis, [
            Instance(f'fleet-{n}-{i}', binary, logs, routes, redis.url, push=dict(push or {})) for i in (1, 2)
        ])
        made.append(fleet)
        redis.start()
        for instance in fleet.instances:
            instance.start()
        return fleet

    yield make
    for fleet in made:
        fleet.close()


@pytest.fixture
def fleet(fleets: Callable[..., Fleet]) -> Iterator[Callable[..., Fleet]]:
    """`fleets`, each fleet stopped when the test ends."""
    made: list[Fleet] = []

    def make(*args: Any, **kwargs: Any) -> Fleet:
        made.append(fleets(*args, **kwargs))
        return made[-1]

    yield make
    for one in made:
        one.close()


@pytest.fixture
def hook() -> Iterator[SlowWebhook]:
    receiver = SlowWebhook()
    yield receiver
    receiver.close()


def run(coroutine_factory: Callable[[httpx.AsyncClient, Channels], Any]) -> Any:
    """Runs one coroutine with an HTTP client and gRPC channels of its own."""

    async def main() -> Any:
        channels = Channels()
        async with httpx.AsyncClient() as http:
            try:
                return await coroutine_factory(http, channels)
            finally:
                await channels.close()

    return asyncio.run(main())


def make_caller(form: tuple[str, str], instance: Instance, route: str, http, channels) -> Caller:
    revision, binding = form
    return caller(revision, binding, http, channels, instance.route_url(route), instance.grpc_target(route))


@dataclass
class Outcome:
    """One call of the background load."""

    label: str
    route: str
    start: float
    end: float
    error: str = ''

    @property
    def took(self) -> float:
        return self.end - self.start


@dataclass
class Load:
    """Calls made without pause from a thread of their own while the test disturbs the fleet:
    `plan` names, for each route and instance, how many callers call it; each caller is one
    form (the forms taken in turn per route), and each of its calls a `GetTask` of a task it
    created first (toward a 0.3 agent, every answer writes the task index)."""

    plan: list[tuple[str, Instance, int]]
    outcomes: list[Outcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.done = threading.Event()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self) -> Load:
        self.thread.start()
        wait_until(lambda: len(self.outcomes) >= 4 * self.callers or self.failure, 30.0, 'the load starting')
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=60.0)
        assert not self.thread.is_alive(), 'the load did not stop'

    def run(self) -> None:
        try:
            asyncio.run(self.main())
        except BaseException as failure:  # noqa: BLE001 - reported by the test
            self.failure = failure

    @property
    def callers(self) -> int:
        return sum(count for _, _, count in self.plan)

    async def main(self) -> None:
        channels = Channels()
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=100)) as http:
            workers = []
            turn: dict[str, int] = {}
            for route, instance, count in self.plan:
                for _ in range(count):
                    n = turn[route] = turn.get(route, -1) + 1
                    who = make_caller(FORMS[n % len(FORMS)], instance, route, http, channels)
                    workers.append(self.worker(who, route))
            await asyncio.gather(*workers)
        await channels.close()

    async def worker(self, who: Caller, route: str) -> None:
        task = await who.send(f'ask {uuid.uuid4().hex}')
        while not self.done.is_set():
            start = time.monotonic()
            error = ''
            try:
                got = await who.get(task.id, timeout=60.0)
                if got.id != task.id or got.state != 'input-required':
                    error = f'wrong task: {got}'
            except (Refused, WrongAnswer) as exc:
                error = str(exc)
            self.outcomes.append(Outcome(who.label, route, start, time.monotonic(), error))

    def between(self, start: float, end: float, route: str | None = None) -> list[Outcome]:
        return [o for o in list(self.outcomes) if start <= o.start < end and (route is None or o.route == route)]


def readyz(instance: Instance) -> int:
    return httpx.get(f'{instance.admin_url}/readyz', timeout=5.0).status_code


def complete_push_flow(who: Caller, follow: Caller, url: str) -> Callable[..., Any]:
    """The push flow as one coroutine: an `ask` task, a push config on `url`, the follow-up."""

    async def flow() -> str:
        task = await who.send(f'ask {uuid.uuid4().hex}')
        token = uuid.uuid4().hex
        shown = await who.create_push(task.id, url, token, 'fleet')
        assert shown == {'url': url, 'token': token, 'id': 'fleet'}, shown
        done = await follow.send('blue', task_id=task.id, context_id=task.context_id)
        assert done.state == 'completed', done
        return task.id

    return flow


def states(hits, subscriber: str) -> list[str | None]:
    """What each delivery shows: the task state, or `artifact` for a 1.0 artifact update."""
    out = []
    for hit in hits:
        body = hit.body
        if subscriber == '0.3':
            out.append(body['status']['state'])
        elif 'artifactUpdate' in body:
            out.append('artifact')
        else:
            out.append((body.get('task') or body.get('statusUpdate'))['status']['state'])
    return out


def distinct(hits) -> list:
    """The requests with a body not seen before on the same path, in arrival order."""
    seen: set[str] = set()
    out = []
    for hit in hits:
        key = json.dumps(hit.body, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(hit)
    return out


# What each agent delivers for a push flow, in each subscriber's revision.
DELIVERIES = {
    ('1.0', '0.3'): ['working', 'working', 'completed'],
    ('1.0', '1.0'): ['TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED'],
    ('0.3', '0.3'): ['completed'],
    ('0.3', '1.0'): ['TASK_STATE_COMPLETED'],
}


def test_with_redis_stopped_stateless_calls_go_on_the_rest_are_refused_in_each_form_until_it_returns(fleet, hook):
    """Twelve callers (each form toward each agent, through both instances) read tasks without
    pause while Redis is stopped (SIGTERM) and started again, empty, on the same port."""
    fleet_ = fleet()
    one, two = fleet_.instances
    plan = [(route, instance, 3) for route in ROUTES for instance in (one, two)]
    with Load(plan) as load:
        time.sleep(1.0)
        stopped = time.monotonic()
        fleet_.redis.stop()
        wait_until(lambda: readyz(one) == 503 and readyz(two) == 503, 15.0, '/readyz saying the store is down')
        for instance in (one, two):
            for route in ROUTES:
                assert instance.scrape().value('a2a_bridge_store_up', route=route) == 0, (instance.name, route)

        async def refusals(http, channels) -> list[str]:
            wrong = []
            for n, form in enumerate(FORMS):
                instance = fleet_.instances[n % 2]
                targets = [('create_push', 'agent-10'), ('create_push', 'agent-03')]
                if form[0] == '1.0':
                    targets.append(('list_tasks', 'agent-03'))
                for what, route in targets:
                    who = make_caller(form, instance, route, http, channels)
                    try:
                        if what == 'create_push':
                            await who.create_push(str(uuid.uuid4()), f'{hook.url}/never', 't', 'c')
                        else:
                            await who.list_tasks()
                        wrong.append(f'{who.label} {what} {route}: answered while redis is down')
                    except Refused as refusal:
                        if refusal.code != INTERNAL[form] or STORE_DOWN not in refusal.message:
                            wrong.append(f'{who.label} {what} {route}: {refusal}')
            return wrong

        assert run(refusals) == []
        # An agent's delivery cannot be checked against its registration: 503, so its sender knows.
        answer = httpx.post(f'{one.route_url("agent-10")}/a2a-bridge/push/{"0" * 64}',
                            json={'task': {'id': 't'}}, headers={'X-A2A-Notification-Token': 'x'}, timeout=10.0)
        assert answer.status_code == 503, answer.text
        time.sleep(1.0)
        fleet_.redis.start()
        restarted = time.monotonic()
        wait_until(lambda: readyz(one) == 200 and readyz(two) == 200, 15.0, '/readyz once redis is back')
        time.sleep(1.0)
        after = time.monotonic()
    assert load.failure is None, load.failure
    during = load.between(stopped, restarted)
    failed = [o for o in load.outcomes if o.error]
    assert not failed, failed[:5]
    answered = {(o.label, o.route) for o in during}
    assert len(answered) == 12, f'not every caller was answered while redis was away: {sorted(answered)}'
    assert load.between(restarted, after), 'no call after redis came back'

    # Everything that needs the store works again, on both instances, without a restart.
    async def recovered(http, channels) -> None:
        for n, form in enumerate(FORMS):
            for route in ROUTES:
                who = make_caller(form, fleet_.instances[n % 2], route, http, channels)
                task = await who.send(f'ask {uuid.uuid4().hex}')
                url = f'{hook.url}/registered-again'
                assert (await who.create_push(task.id, url, 't', 'c'))['url'] == url, who.label
                if form[0] == '1.0' and route == 'agent-03':
                    assert task.id in {t.id for t in await who.list_tasks(page_size=50)}, who.label
        who = make_caller(('0.3', 'jsonrpc'), one, 'agent-10', http, channels)
        follow = make_caller(('0.3', 'grpc'), two, 'agent-10', http, channels)
        await complete_push_flow(who, follow, f'{hook.url}/after-redis')()

    run(recovered)
    hits = hook.wait('/after-redis', lambda hits: len(distinct(hits)) >= 3, timeout=15.0)
    assert states(distinct(hits), '0.3') == DELIVERIES[('1.0', '0.3')], [h.body for h in hits]


@dataclass
class Stall:
    """A load measured across one Redis stall."""

    load: Load
    start: float
    end: float


STALL_SECONDS = 14
# What a loaded two-core machine may add to a call besides the waits the bounds name.
SLACK = 2.0


@pytest.fixture(scope='module')
def stall(fleets: Callable[..., Fleet]) -> Stall:
    """Callers through both instances across `DEBUG SLEEP 14` (Redis takes connections but
    answers nothing for fourteen seconds): sixteen toward the 0.3 agent through instance one, four
    through instance two, and one toward the 1.0 agent through each. Measured once for the tests
    that read it."""
    fleet = fleets()
    one, two = fleet.instances
    plan = [('agent-03', one, 16), ('agent-03', two, 4), ('agent-10', one, 1), ('agent-10', two, 1)]
    try:
        with Load(plan) as load:
            time.sleep(1.0)
            start = time.monotonic()
            fleet.redis.command('DEBUG', 'SLEEP', STALL_SECONDS, timeout=STALL_SECONDS + 10)
            end = time.monotonic()
            time.sleep(2 * STORE_DEADLINE + SLACK)
    finally:
        fleet.close()
    assert end - start >= STALL_SECONDS - 0.1, 'redis did not stall'
    assert load.failure is None, load.failure
    for route in ROUTES:
        took = sorted(o.took for o in load.between(start - 0.5, end, route))
        # Shown with a failure's captured output.
        print(f'{route} during the stall: {len(took)} calls, slowest {[round(t, 2) for t in took[-5:]]}')
    return Stall(load, start, end)


def test_with_redis_stalled_every_call_is_answered_and_only_calls_that_write_the_index_wait(stall):
    load = stall.load
    failed = [o for o in load.outcomes if o.error]
    assert not failed, failed[:5]
    during = load.between(stall.start - 0.5, stall.end)
    v10 = [o for o in during if o.route == 'agent-10']
    v03 = [o for o in during if o.route == 'agent-03']
    assert v10 and v03, 'no calls during the stall'
    # Nothing toward the 1.0 agent touches the store: none waited for Redis.
    slowest = max(o.took for o in v10)
    assert slowest < STORE_DEADLINE, f'a call to the 1.0 agent took {slowest:.2f}s during the stall'
    # Toward the 0.3 agent the index write waits; the stall was felt, and no call outlived it by
    # more than the store's deadlines (connecting, then the operation).
    slowest = max(o.took for o in v03)
    assert slowest >= STORE_DEADLINE - 0.5, f'no call to the 0.3 agent waited for redis ({slowest:.2f}s)'
    bound = STALL_SECONDS + 2 * STORE_DEADLINE + SLACK
    assert slowest <= bound, f'a call to the 0.3 agent took {slowest:.2f}s (bound {bound}s)'
    # After the stall every call is quick again.
    later = load.between(stall.end + 2 * STORE_DEADLINE, float('inf'))
    assert later and max(o.took for o in later) < STORE_DEADLINE, sorted(o.took for o in later)[-5:]


def test_with_redis_stalled_no_call_waits_longer_than_the_stores_deadlines(stall):
    v03 = [o for o in stall.load.between(stall.start - 0.5, stall.end) if o.route == 'agent-03']
    slowest = max(o.took for o in v03)
    bound = 2 * STORE_DEADLINE + 1.5
    assert slowest <= bound, f'a call to the 0.3 agent took {slowest:.2f}s while redis was stalled (bound {bound}s)'


@pytest.mark.parametrize('persistent', [True, False], ids=['appendonly', 'no-persistence'])
def test_a_redis_restart_keeps_the_index_registrations_and_pending_deliveries_only_with_persistence(
    fleet, hook, persistent
):
    """Before the restart: three tasks recorded in the index (sent to the 0.3 agent through
    instance one); a registration whose task is not finished yet (made through instance two);
    and three deliveries pending in Redis only: instance one accepted them from the 1.0 agent
    while the subscriber failed every attempt, then was killed. Redis is stopped (SIGTERM) and
    started again on the same port and directory."""
    fleet_ = fleet(persistent, push={'attempts': '1000', 'backoff': '"100ms"', 'lease': '"2s"'})
    one, two = fleet_.instances
    held = f'/held-{uuid.uuid4().hex[:6]}'
    later = f'/later-{uuid.uuid4().hex[:6]}'
    hook.fail[held] = 10**6

    async def before(http, channels) -> tuple[list[str], Any, Any]:
        sender = make_caller(('1.0', 'jsonrpc'), one, 'agent-03', http, channels)
        indexed = [(await sender.send(f'echo {n}')).id for n in range(3)]
        lister = make_caller(('1.0', 'rest'), two, 'agent-03', http, channels)
        listed = {t.id for t in await lister.list_tasks(page_size=50)}
        assert set(indexed) <= listed, (indexed, listed)
        subscriber = make_caller(('0.3', 'jsonrpc'), one, 'agent-10', http, channels)
        await complete_push_flow(subscriber, subscriber, f'{hook.url}{held}')()
        waiting_caller = make_caller(('1.0', 'grpc'), two, 'agent-10', http, channels)
        waiting = await waiting_caller.send('ask later')
        await waiting_caller.create_push(waiting.id, f'{hook.url}{later}', 'tok', 'later')
        return indexed, waiting, waiting_caller

    indexed, waiting, _ = run(before)
    # Instance one holds the three deliveries (retrying the first); it goes away holding them.
    wait_until(lambda: one.counter('a2a_bridge_push_received_total', outcome='queued') == 3, 10.0, 'three queued')
    hook.wait(held, lambda hits: len(hits) >= 2, timeout=10.0)
    one.kill()
    assert fleet_.redis.command('HLEN', 'a2a-bridge:agent-10:pending') == 3
    fleet_.redis.restart()
    # /readyz probes every route's store; the first operation on a connection Redis closed
    # fails (pinned below by `test_the_first_store_operation_after_a_quick_redis_restart_succeeds`).
    two.wait_ready()
    hook.fail[held] = 0
    arrived = len(hook.at(held))

    async def after(http, channels) -> tuple[set[str], str]:
        lister = make_caller(('1.0', 'jsonrpc'), two, 'agent-03', http, channels)
        listed = {t.id for t in await lister.list_tasks(page_size=50)}
        follow = make_caller(('1.0', 'jsonrpc'), two, 'agent-10', http, channels)
        done = await follow.send('blue', task_id=waiting.id, context_id=waiting.context_id)
        return listed, done.state

    listed, state = run(after)
    assert state == 'completed'
    # Instance two claims what instance one held once its lease ran out (2 s).
    if persistent:
        hits = hook.wait(held, lambda hits: len(hits) >= arrived + 3, timeout=15.0)[arrived:]
        assert states(hits, '0.3') == DELIVERIES[('1.0', '0.3')], [h.body for h in hits]
        assert all(h.status == 200 for h in hits), hits
        assert set(indexed) <= listed, (indexed, listed)
        got = hook.wait(later, lambda hits: len(hits) >= 3, timeout=10.0)
        assert states(got, '1.0') == DELIVERIES[('1.0', '1.0')], [h.body for h in got]
        assert two.counter('a2a_bridge_push_received_total', outcome='unknown_secret') == 0
    else:
        time.sleep(2.0 + 2.0 + 1.0)
        assert hook.at(held)[arrived:] == [], 'a delivery pending before the restart was delivered'
        assert listed.isdisjoint(indexed), (indexed, listed)
        assert hook.at(later) == [], 'a registration made before the restart was delivered to'
        # The agent's deliveries for the forgotten registration find no secret: 404 to its sender.
        assert two.counter('a2a_bridge_push_received_total', outcome='unknown_secret') >= 1
    assert fleet_.redis.command('HLEN', 'a2a-bridge:agent-10:pending') == 0


def test_the_first_store_operation_after_a_quick_redis_restart_succeeds(fleet):
    """Redis restarted between two calls, with nothing in between touching the store (the lease
    is an hour, so no sweep runs): each first operation must find Redis, which is back."""
    fleet_ = fleet(push={'lease': '"1h"'})
    one = fleet_.instances[0]
    unknown = f'{one.route_url("agent-10")}/a2a-bridge/push/{"0" * 64}'

    def deliver() -> int:
        return httpx.post(unknown, json={'task': {'id': 't'}}, headers={'X-A2A-Notification-Token': 'x'},
                          timeout=10.0).status_code

    async def listing(http, channels) -> list:
        return await make_caller(('1.0', 'jsonrpc'), one, 'agent-03', http, channels).list_tasks()

    assert deliver() == 404
    run(listing)
    fleet_.redis.restart()
    assert deliver() == 404, 'an agent\'s delivery right after the restart was answered 503'
    run(listing)


def test_a_killed_instances_pending_deliveries_to_a_slow_webhook_are_all_taken_over_by_the_other(fleet):
    """Six push flows through instance one (subscribers of both revisions, agents of both
    revisions): fourteen deliveries to one webhook that takes 0.4 s over each, so they wait in
    their route's queue for that target. Instance one is killed (SIGKILL) after the third has
    arrived; instance two, up all along, claims the rest once their lease (3 s) ran out."""
    lease = 3.0
    fleet_ = fleet(False, push={'lease': f'"{lease:.0f}s"', 'backoff': '"100ms"'})
    one, two = fleet_.instances
    hook = SlowWebhook(pause=0.4)
    try:
        flows = [('1.0', '0.3'), ('1.0', '1.0'), ('1.0', '0.3'), ('1.0', '1.0'), ('0.3', '0.3'), ('0.3', '1.0')]
        paths = {f'/kill-{n}-{uuid.uuid4().hex[:6]}': flow for n, flow in enumerate(flows)}

        async def register(http, channels) -> None:
            runs = []
            for n, (path, (agent, subscriber)) in enumerate(paths.items()):
                route = 'agent-10' if agent == '1.0' else 'agent-03'
                who = make_caller((subscriber, BINDINGS[n % 3]), one, route, http, channels)
                runs.append(complete_push_flow(who, who, f'{hook.url}{path}')())
            await asyncio.gather(*runs)

        run(register)
        expected = sum(len(DELIVERIES[flow]) for flow in flows)
        wait_until(lambda: one.counter('a2a_bridge_push_received_total', outcome='queued') == expected,
                   15.0, f'instance one accepting all {expected} deliveries')
        wait_until(lambda: sum(len(h) for h in hook.paths('/kill-').values()) >= 3, 15.0, 'three deliveries')
        one.kill()
        killed = time.monotonic()
        before = {path: len(hook.at(path)) for path in paths}

        def complete(_=None) -> bool:
            return all(len(distinct(hook.at(path))) == len(DELIVERIES[flow]) for path, flow in paths.items())

        wait_until(complete, lease + expected * 0.4 + 15.0, 'every delivery arriving')
        time.sleep(1.0)
        for path, (agent, subscriber) in paths.items():
            hits = hook.at(path)
            assert all(h.status == 200 for h in hits), hits
            assert states(distinct(hits), subscriber) == DELIVERIES[(agent, subscriber)], [h.body for h in hits]
        # Sent twice may only be what was in flight when instance one died: requested before the
        # kill and answered after it (or just before it, before it was forgotten), so instance
        # one never forgot it. Each route has its own queue per target, so up to one per route.
        timeline = sorted(
            (round(h.at - killed, 2), path[:12], states([h], paths[path][1])[0], h.status)
            for path in paths for h in hook.at(path)
        )
        twice = []
        for path in paths:
            firsts: dict[str, Any] = {}
            for hit in hook.at(path):
                key = json.dumps(hit.body, sort_keys=True)
                if key in firsts:
                    twice.append((path, firsts[key]))
                    # The delivery sent again by instance two names itself as instance one did.
                    again, first_id = hit.headers.get('a2a-bridge-delivery-id'), firsts[key].headers.get(
                        'a2a-bridge-delivery-id')
                    assert again and again == first_id, (first_id, again)
                else:
                    firsts[key] = hit
        seen = (f'sent twice: {[(p, round(h.at - killed, 2)) for p, h in twice]}; '
                f'answered (s after the kill, path, state, status): {timeline}')
        assert len(twice) <= len(ROUTES), seen
        assert all(first.at - hook.pause < killed < first.at + 0.2 for _, first in twice), seen
        # Instance two took them over only once their lease ran out: instance one renewed it
        # every third of the lease, so its last renewal left at least two thirds of it.
        later = sorted(t for path in paths for t in hook.arrivals.get(path, []) if t > killed)
        assert later, 'nothing arrived after the kill'
        taken_over = later[0] - killed
        assert lease / 3 <= taken_over <= lease + lease / 3 + 5.0, f'first delivery {taken_over:.2f}s after the kill'
        assert sum(before.values()) < expected, 'everything arrived before the kill'
        assert two.counter('a2a_bridge_push_deliveries_total', outcome='delivered') >= expected - sum(before.values())
        assert fleet_.redis.command('HLEN', 'a2a-bridge:agent-10:pending') == 0
        assert fleet_.redis.command('HLEN', 'a2a-bridge:agent-03:pending') == 0
    finally:
        hook.close()


@pytest.mark.parametrize('family', ['', 'js'])
def test_grpc_agents_ending_their_connections_every_250_ms_cost_no_call(family: str, logs: Path, tmp_path_factory):
    """The gRPC agents of both revisions with a maximum connection age of 250 ms, of both SDK
    families (the Python SDK's on grpcio, `grpc.max_connection_age_ms`; the JS SDK's on grpc-js,
    the same option): each connection the bridge opens to them is ended by a GOAWAY a quarter
    of a second later, some thirty times during the load, while twelve callers (every form,
    toward both agents) read tasks without pause. Calls that meet a GOAWAY on their way (above
    the last stream it names, or sent on a connection already closing) were never taken and are
    sent again: none fails."""
    binary = bridge_binary()
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary} does not exist')
    if family == 'js' and node() is None:
        pytest.skip('the JS SDKs are not installed (scripts/setup-node.sh)')
    keys = [f'{family}0.3-grpc', f'{family}1.0-grpc']
    peers = start_agents(keys, logs, ['--max-connection-age-ms', '250'])
    redis = RedisServer(tmp_path_factory.mktemp('redis-aged'), logs, False)
    routes = {'agent-03': peers[keys[0]].url, 'agent-10': peers[keys[1]].url}
    instance = Instance('aged', binary, logs, routes, redis.url)
    try:
        redis.start()
        instance.start()
        with Load([(route, instance, len(FORMS)) for route in ROUTES]) as load:
            time.sleep(8.0)
        assert load.failure is None, load.failure
        failed = [o for o in load.outcomes if o.error]
        assert not failed, f'{len(failed)} of {len(load.outcomes)} failed: {failed[:5]}'
        assert len(load.outcomes) > 300, len(load.outcomes)
        answered = {(o.label, o.route) for o in load.outcomes}
        assert len(answered) == 2 * len(FORMS), sorted(answered)
    finally:
        instance.close()
        redis.close()
        for peer in peers.values():
            stop(peer.process)

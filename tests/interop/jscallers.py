"""Callers built on the official A2A JS SDK (`@a2a-js/sdk` 0.3.14 and 1.3.0, the suite's second
SDK family), for the fleet fault tests and the mixed soak: each is one long-lived Node.js process
(`js/caller.mjs`) holding one SDK client of one revision forced onto one binding, driven over
its stdin and stdout with one JSON object per line.

Unlike the raw callers of `callers.py`, these see each answer as the SDK reads it: what they
prove is that the bridge's answers, events and errors pass a second family's parsers (its JSON-RPC
transport, its HTTP+JSON transport, its generated gRPC stubs), whose quirks differ from the
Python SDK's. They present the same interface (`callers.Caller`), so a test or the soak picks
either kind alike; an SDK error becomes `Refused` (its code and message as the SDK exposes them),
a dead or silent process `WrongAnswer`.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from callers import Caller, Event, Refused, StopWhen, TaskView, WrongAnswer, expect

HERE = Path(__file__).resolve().parent
JS_DIR = HERE / 'js'
CALLER_SCRIPT = JS_DIR / 'caller.mjs'
AGENT_SCRIPT = JS_DIR / 'agent.mjs'
STATES = {
    'submitted', 'working', 'input-required', 'auth-required', 'completed', 'canceled',
    'failed', 'rejected', 'unknown',
}


def node() -> str | None:
    """The Node.js binary, when it and the installed SDKs are there (`scripts/setup-node.sh`)."""
    binary = shutil.which('node')
    if binary is None or not (JS_DIR / 'node_modules' / 'a2a-js-10').is_dir():
        return None
    return binary


def task_view(result: Any) -> TaskView:
    expect(isinstance(result, dict) and result.get('type') == 'task', 'not a task', result)
    expect(result.get('state') in STATES, 'a task in no known state', result)
    return TaskView(result['id'], result.get('contextId') or '', result['state'], dict(result.get('artifacts') or {}))


class JsRunner:
    """One `caller.mjs` process and the calls in flight on it."""

    def __init__(self, sdk: str, binding: str, url: str) -> None:
        self.argv = [node() or 'node', str(CALLER_SCRIPT), '--sdk', sdk, '--binding', binding, '--url', url]
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[int, asyncio.Queue[dict[str, Any]]] = {}
        self.next_id = 0
        self.reader: asyncio.Task[None] | None = None
        self.started = asyncio.Lock()
        self.stderr: list[str] = []

    async def start(self) -> None:
        async with self.started:
            if self.process is not None:
                return
            self.process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, limit=1 << 24)
            assert self.process.stdout is not None
            line = await asyncio.wait_for(self.process.stdout.readline(), 30.0)
            if line.strip() != b'READY':
                raise WrongAnswer(f'{self.argv} did not start: {line!r} {await self.process.stderr.read()!r}')
            self.reader = asyncio.create_task(self.read())
            asyncio.create_task(self.drain_stderr())

    async def drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        async for line in self.process.stderr:
            self.stderr = [*self.stderr[-40:], line.decode(errors='replace')]

    async def read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            queue = self.pending.get(answer.get('id'))
            if queue is not None:
                queue.put_nowait(answer)
        for queue in self.pending.values():
            queue.put_nowait({'ok': False, 'dead': True})

    async def send(self, request: dict[str, Any]) -> tuple[int, asyncio.Queue[dict[str, Any]]]:
        await self.start()
        assert self.process is not None and self.process.stdin is not None
        self.next_id += 1
        rid = self.next_id
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.pending[rid] = queue
        self.process.stdin.write(json.dumps({**request, 'id': rid}).encode() + b'\n')
        await self.process.stdin.drain()
        return rid, queue

    async def abort(self, rid: int) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps({'op': 'abort', 'id': rid}).encode() + b'\n')
        await self.process.stdin.drain()

    async def close(self) -> None:
        if self.process is None:
            return
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5.0)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self.process = None


class JsSdkCaller(Caller):
    """A caller of `revision` over `binding` made of the JS SDK's client (`runner`), toward
    `target` (a route's URL; gRPC: its `host:port`)."""

    def __init__(self, revision: str, binding: str, runner: JsRunner, target: str) -> None:
        super().__init__(revision, binding)
        self.runner = runner
        self.target = target

    @property
    def label(self) -> str:
        return f'js{self.revision}/{self.binding}'

    def refused(self, answer: dict[str, Any]) -> Exception:
        if answer.get('dead'):
            return WrongAnswer(f'{self.label}: the SDK process ended: {"".join(self.runner.stderr[-5:])}')
        error = answer.get('error') or {}
        code, message = error.get('code'), str(error.get('message', ''))
        internal = code in (-32603, 13, 500, 'INTERNAL') or 'store is unavailable' in message
        return Refused(f'js {error.get("name")} {code}', message, internal)

    async def one(self, request: dict[str, Any], timeout: float) -> Any:
        rid, queue = await self.runner.send({**request, 'target': self.target})
        try:
            answer = await asyncio.wait_for(queue.get(), timeout)
        except TimeoutError:
            raise WrongAnswer(f'{self.label} {request["op"]}: no answer within {timeout}s') from None
        finally:
            self.runner.pending.pop(rid, None)
        if not answer.get('ok'):
            raise self.refused(answer)
        return answer.get('result')

    async def send(self, text: str, *, blocking: bool = True, task_id: str | None = None,
                   context_id: str | None = None, timeout: float = 30.0) -> TaskView:
        result = await self.one({'op': 'send', 'text': text, 'blocking': blocking, 'taskId': task_id,
                                 'contextId': context_id}, timeout)
        return task_view(result)

    async def get(self, task_id: str, timeout: float = 30.0) -> TaskView:
        return task_view(await self.one({'op': 'get', 'taskId': task_id}, timeout))

    async def cancel(self, task_id: str, timeout: float = 30.0) -> TaskView:
        return task_view(await self.one({'op': 'cancel', 'taskId': task_id}, timeout))

    async def create_push(self, task_id: str, url: str, token: str, config_id: str,
                          timeout: float = 30.0) -> dict[str, str]:
        result = await self.one({'op': 'push', 'taskId': task_id, 'url': url, 'token': token,
                                 'configId': config_id}, timeout)
        expect(isinstance(result, dict) and 'url' in result, 'not a push config', result)
        return {'url': result.get('url', ''), 'token': result.get('token', ''), 'id': result.get('id', '')}

    async def list_tasks(self, page_size: int = 5, timeout: float = 30.0) -> list[TaskView]:
        result = await self.one({'op': 'list', 'pageSize': page_size}, timeout)
        expect(isinstance(result, dict) and isinstance(result.get('tasks'), list), 'not a task page', result)
        return [task_view(task) for task in result['tasks']]

    async def stream(self, text: str, *, stop: StopWhen | None = None, timeout: float = 30.0) -> list[Event]:
        return await self.events({'op': 'stream', 'text': text, 'target': self.target}, stop, timeout)

    async def resubscribe(self, task_id: str, *, stop: StopWhen | None = None,
                          timeout: float = 30.0) -> list[Event]:
        """The SDK's own resubscription to `task_id` (0.3 `tasks/resubscribe`, 1.0
        `SubscribeToTask`), over the caller's binding as the SDK sends it."""
        return await self.events({'op': 'resubscribe', 'taskId': task_id, 'target': self.target}, stop, timeout)

    async def events(self, request: dict[str, Any], stop: StopWhen | None, timeout: float) -> list[Event]:
        rid, queue = await self.runner.send(request)
        events: list[Event] = []
        aborted, read = False, 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while True:
                try:
                    answer = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    raise WrongAnswer(f'{self.label} {request["op"]}: not ended within {timeout}s '
                                      f'({len(events)} events)') from None
                if 'event' in answer:
                    raw = answer['event']
                    expect(isinstance(raw, dict) and raw.get('kind') in ('task', 'status', 'artifact', 'message'),
                           'an event of no kind', raw)
                    events.append(Event(raw['kind'], raw.get('taskId') or '', raw.get('state'),
                                        bool(raw.get('final')), raw.get('text') or ''))
                    if stop is not None and not aborted and stop(events):
                        # The caller leaves here: what arrives before the SDK has let go is not
                        # what it read.
                        aborted, read = True, len(events)
                        await self.runner.abort(rid)
                    continue
                if aborted and (answer.get('done') or not answer.get('dead')):
                    return events[:read]
                if answer.get('done'):
                    return events
                refusal = self.refused(answer)
                if isinstance(refusal, Refused) and not events:
                    raise refusal
                raise WrongAnswer(f'{self.label} stream after {len(events)} events: {refusal}')
        finally:
            self.runner.pending.pop(rid, None)


class JsRunners:
    """One runner per revision and binding (its clients one per target), kept for the life of
    the caller pool."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str], JsRunner] = {}

    def caller(self, revision: str, binding: str, url: str, grpc_target: str) -> JsSdkCaller:
        target = grpc_target if binding == 'grpc' else url
        key = (revision, binding)
        if key not in self.open:
            self.open[key] = JsRunner(revision, binding, target)
        return JsSdkCaller(revision, binding, self.open[key], target)

    async def close(self) -> None:
        await asyncio.gather(*(runner.close() for runner in self.open.values()))
        self.open.clear()

"""What the interop clients send and how they report, shared by the 0.3 and the 1.0 client.

This module imports no A2A SDK (the two SDKs live in separate virtual environments). Each client
maps its SDK's objects onto the revision-neutral shapes below, so one set of assertions in the
test suite reads both:

- task: `{id, contextId, state, statusText, artifacts, history}`; `state` in 0.3 spelling
  (`completed`, `input-required`, `canceled`, ...), `history` a list (absent = empty)
- message: `{role, messageId, taskId, contextId, parts}`; `role` is `user` or `agent`
- artifact: `{artifactId, name, parts}`
- part: `{text}` | `{bytes, mediaType, name}` | `{uri, mediaType, name}` | `{data}`; `bytes` is
  standard padded base64
- event: `{t, kind, ...}`; `t` is seconds since the request started, `kind` is one of
  `task`, `message`, `status-update`, `artifact-update`
- error: `{type, code, message}`; `code` is the JSON-RPC code when the SDK exposes one

Every scenario is bounded by `SCENARIO_TIMEOUT`; a scenario that raises records the error and the
client goes on with the next one, so the document always comes out.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

SCENARIO_TIMEOUT = 25.0
HTTP_TIMEOUT = 20.0
POLL_LIMIT = 10.0

# Every scenario both clients know; `version_unsupported` is a raw 1.0 check (the 0.3 client has
# no version header to get wrong) and only the 1.0 client runs it.
SCENARIOS = [
    'card',
    'send_blocking',
    'send_nonblocking_get',
    'stream',
    'cancel',
    'resubscribe',
    'subscribe_input_required',
    'input_required',
    'parts',
    'push_config',
    'unknown_task',
    'undeclared_media',
    'extended_card',
    'message',
    'version_unsupported',
    'list_tasks',
]
ONLY_V10 = {'version_unsupported', 'list_tasks'}
# Scenarios run only when named: `push_delivery` needs a webhook (`INTEROP_WEBHOOK`, the URL a
# test's receiver listens on) and leaves checking what arrived there to the test.
ON_REQUEST = ['push_delivery']

# The inline file: every byte value, so a lossy or base64url re-encoding cannot go unnoticed.
FILE_BYTES = bytes(range(256)) * 4
FILE_MEDIA_TYPE = 'image/png'
FILE_NAME = 'pixels.png'
FILE_URI = 'https://files.example.com/reports/q3.bin?sig=a%2Fb&x=1'
URI_MEDIA_TYPE = 'application/octet-stream'
URI_NAME = 'q3.bin'
DATA_VALUE = {
    'answer': 42,
    'ratio': 0.25,
    'nested': {'list': [1, 'two', None, True], 'empty': {}},
    'unicode': 'grüße, 日本',
}
UNDECLARED_MEDIA_TYPE = 'application/x-undeclared'

PUSH_CONFIG_ID = 'interop-push-1'
PUSH_URL = 'http://127.0.0.1:9/interop-webhook'
PUSH_CREDENTIALS = 'interop-credentials'
ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo'
PUSH_TOKEN = 'interop-token'


def file_b64() -> str:
    return base64.b64encode(FILE_BYTES).decode('ascii')


def expected_parts() -> list[dict[str, Any]]:
    """The non-text parts the `parts` scenario sends, in the neutral shape."""
    return [
        {'bytes': file_b64(), 'mediaType': FILE_MEDIA_TYPE, 'name': FILE_NAME},
        {'uri': FILE_URI, 'mediaType': URI_MEDIA_TYPE, 'name': URI_NAME},
        {'data': DATA_VALUE},
    ]


def expected_summary() -> list[dict[str, Any]]:
    """What the agent must report having received in the `parts` scenario."""
    return [
        {
            'kind': 'bytes',
            'sha256': hashlib.sha256(FILE_BYTES).hexdigest(),
            'size': len(FILE_BYTES),
            'mediaType': FILE_MEDIA_TYPE,
            'name': FILE_NAME,
        },
        {'kind': 'uri', 'uri': FILE_URI, 'mediaType': URI_MEDIA_TYPE, 'name': URI_NAME},
        {'kind': 'data', 'data': DATA_VALUE},
    ]


def normalize_b64(text: str) -> str:
    """Re-encodes base64 text in the standard padded alphabet (what the suite compares)."""
    text = text.strip()
    padded = text + '=' * (-len(text) % 4)
    raw = (
        base64.urlsafe_b64decode(padded)
        if ('-' in text or '_' in text)
        else base64.b64decode(padded)
    )
    return base64.b64encode(raw).decode('ascii')


class Clock:
    """Arrival times relative to one start, in seconds."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def now(self) -> float:
        return round(time.monotonic() - self.start, 4)


class WireLog:
    """Every HTTP request the SDK made: JSON-RPC method and `A2A-Version` header."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    async def on_request(self, request: Any) -> None:
        method = None
        if request.method == 'POST':
            try:
                body = json.loads(request.content or b'null')
                if isinstance(body, dict):
                    method = body.get('method')
            except (ValueError, UnicodeDecodeError):
                method = None
        self.entries.append(
            {
                'http': request.method,
                'url': str(request.url),
                'rpc': method,
                'a2aVersion': request.headers.get('a2a-version'),
            }
        )

    def take(self) -> list[dict[str, Any]]:
        out, self.entries = self.entries, []
        return out


def error_record(exc: BaseException, code: int | None, message: str | None = None) -> dict[str, Any]:
    return {'type': type(exc).__name__, 'code': code, 'message': message or str(exc)}


async def poll_until(
    fetch: Callable[[], Awaitable[dict[str, Any]]], done: Callable[[dict[str, Any]], bool]
) -> tuple[dict[str, Any], list[str]]:
    """Calls `fetch` until `done` holds (bounded by `POLL_LIMIT`); returns the last and the states."""
    states: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POLL_LIMIT
    while True:
        task = await fetch()
        states.append(task.get('state'))
        if done(task) or loop.time() > deadline:
            return task, states
        await asyncio.sleep(0.1)


TERMINAL = {'completed', 'canceled', 'failed', 'rejected'}


async def run_scenarios(
    names: list[str],
    runner: Callable[[str], Awaitable[dict[str, Any]]],
    wire: WireLog,
    to_error: Callable[[BaseException], dict[str, Any]],
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in names:
        wire.take()
        try:
            observed = await asyncio.wait_for(runner(name), SCENARIO_TIMEOUT)
        except TimeoutError as exc:
            observed = {'error': error_record(exc, None, f'scenario timed out after {SCENARIO_TIMEOUT}s')}
        except Exception as exc:  # noqa: BLE001 - the document records whatever went wrong
            observed = {'error': to_error(exc), 'traceback': traceback.format_exc(limit=8)}
        observed['wire'] = wire.take()
        results[name] = observed
    return results


def emit(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, indent=1, sort_keys=True, default=str))
    sys.stdout.write('\n')
    sys.stdout.flush()

"""What the interop agents do, shared by the 0.3 and the 1.0 agent.

This module imports no A2A SDK: each agent runs in its own virtual environment (both SDKs are
the Python package `a2a`, so they cannot share one), and only plain data and helpers live here.

The first word of the user's text picks the behaviour:

| word      | what the agent does                                                                    |
|-----------|----------------------------------------------------------------------------------------|
| `echo`    | task: working (with a status message), a short pause, an artifact `echo: <text>`,      |
|           | completed (with a status message), so the history holds several messages               |
| `stream`  | task: `STREAM_STEPS` rounds of a working status `step i` and an artifact chunk         |
|           | `chunk i` (one artifact, appended), `STREAM_SPACING` seconds apart, then completed      |
| `slow`    | task: working, then a working status `tick i` every `SLOW_TICK` seconds until canceled  |
|           | (bounded: completes after `SLOW_LIMIT` seconds if nobody cancels it)                    |
| `quiet`   | task: working, then nothing until canceled (bounded: completes after `SLOW_LIMIT`      |
|           | seconds), so a subscription to it has no event to send                                  |
| `ask`     | task: input-required with a question; a follow-up message in the same task completes   |
|           | it with an artifact `answer: <follow-up text>`                                          |
| `parts`   | task: an artifact `parts-echo` holding every non-text part it received, unchanged, and  |
|           | an artifact `parts-summary` with one data part describing what arrived                  |
| `message` | a direct Message `message: <text>`, no task                                             |
| `extensions` | a direct Message `extensions: <the requested extension URIs, sorted, comma-joined>`;  |
|           | the 0.3 agent also activates each (its SDK echoes them in its answer's headers)         |
| `traceparent` | a direct Message `traceparent: <the request's traceparent header, or none>`        |

Anything else is treated as `echo`.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

AGENT_NAME = 'a2a-bridge interop agent'
AGENT_DESCRIPTION = 'A test agent for the a2a-bridge interop suite.'
AGENT_VERSION = '1.0.0'

# Media types the card declares. `application/x-undeclared` is deliberately absent: a part with
# that type must be refused (ContentTypeNotSupported) before it reaches the agent.
INPUT_MODES = ['text/plain', 'application/json', 'image/png', 'application/octet-stream']
OUTPUT_MODES = ['text/plain', 'application/json', 'image/png', 'application/octet-stream']

SKILL_ID = 'interop'
EXTENDED_SKILL_ID = 'interop-extended'

ECHO_PAUSE = 0.3
STREAM_STEPS = 4
STREAM_SPACING = 0.1
SLOW_TICK = 0.2
SLOW_LIMIT = 20.0

QUESTION = 'what is your favourite colour?'


def behaviour_of(text: str) -> str:
    """The behaviour selected by the user text (its first word)."""
    word = text.strip().split(' ', 1)[0].lower() if text.strip() else ''
    if word in ('echo', 'stream', 'slow', 'quiet', 'ask', 'parts', 'message', 'extensions', 'traceparent'):
        return word
    return 'echo'


def bytes_summary(raw: bytes, media_type: str | None, name: str | None) -> dict[str, Any]:
    """How the agent describes an inline file part it received."""
    return {
        'kind': 'bytes',
        'sha256': hashlib.sha256(raw).hexdigest(),
        'size': len(raw),
        'mediaType': media_type or None,
        'name': name or None,
    }


def uri_summary(uri: str, media_type: str | None, name: str | None) -> dict[str, Any]:
    """How the agent describes a file-by-reference part it received."""
    return {'kind': 'uri', 'uri': uri, 'mediaType': media_type or None, 'name': name or None}


def data_summary(data: Any) -> dict[str, Any]:
    """How the agent describes a data part it received."""
    return {'kind': 'data', 'data': data}


def b64decode(text: str) -> bytes:
    """Decodes standard or URL-safe base64, with or without padding."""
    text = text.strip()
    padded = text + '=' * (-len(text) % 4)
    if '-' in text or '_' in text:
        return base64.urlsafe_b64decode(padded)
    return base64.b64decode(padded)

#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the golden fixtures in tests/fixtures, bridge.toml and the
# configuration examples in docs/.
#
#   decode_v03    every *.0.3.json document, compacted, plus the 0.3 fragments (params,
#                 result, error) on their own
#   decode_v10    the same for *.1.0.json
#   envelope      every fixture document of both revisions, compacted
#   sse_splitter  every response and event document framed as an SSE event, behind a prefix
#                 byte that makes the target cut it into chunks of 1..7 bytes, plus one
#                 stream of several events with CRLF line ends and comments
#   decode_rest_v03 every tests/fixtures/rest/*.0.3.json document as the target reads it: a
#                   request as `VERB path[?query]`, a line end and the body; an answer or an
#                   error as its HTTP status, a line end and the body; an event as its data
#   decode_rest_v10 the same for *.1.0.json
#   config          bridge.toml, and every ```toml example of docs/*.md
#
# The gRPC targets take protobuf and start from what their runs kept in fuzz/corpus.
#
# Idempotent: files are named by content hash, and existing corpus entries are kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python3 - "$here/../tests/fixtures" "$here/corpus" "$here/.." <<'PY'
import hashlib
import json
import pathlib
import sys

fixtures, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
root = pathlib.Path(sys.argv[3])


def put(target, data):
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


stream = b""
for path in sorted(fixtures.glob("*/*.json")):
    if path.name == "manifest.json":
        continue
    document = json.loads(path.read_text())
    revision = "decode_v03" if path.name.endswith(".0.3.json") else "decode_v10"
    whole = compact(document)
    put(revision, whole)
    put("envelope", whole)
    if isinstance(document, dict):
        for member in ("params", "result", "error"):
            if member in document:
                put(revision, compact(document[member]))
        if "result" in document or "error" in document:
            event = b"data: " + whole + b"\n\n"
            # Prefix byte 7: seven chunk lengths follow (1..7), then the body.
            put("sse_splitter", bytes([7, 1, 2, 3, 4, 5, 6, 7]) + event)
            stream += b": keep-alive\r\nevent: message\r\ndata: " + whole + b"\r\n\r\n"
put("sse_splitter", bytes([3, 5, 13, 64]) + stream)

for path in sorted((fixtures / "rest").glob("*/*.json")):
    if path.name == "manifest.json":
        continue
    document = json.loads(path.read_text())
    target = "decode_rest_v03" if path.name.endswith(".0.3.json") else "decode_rest_v10"
    if "method" in document:
        body = document.get("body")
        head = document["method"] + " " + document["path"]
        if document.get("query"):
            head += "?" + document["query"]
        put(target, head.encode() + b"\n" + (b"" if body is None else compact(body)))
    elif "data" in document:
        put(target, compact(document["data"]))
    else:
        body = document.get("body")
        text = b"" if body is None else compact(body)
        put(target, str(document["status"]).encode() + b"\n" + text)

put("config", (root / "bridge.toml").read_bytes())
for doc in sorted((root / "docs").glob("*.md")):
    text = doc.read_text()
    for block in text.split("```toml\n")[1:]:
        put("config", block.split("```", 1)[0].encode())
print(f"seeded {corpus}")
PY

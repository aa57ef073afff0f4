"""Cards the bridge re-signs (`card.signatures = "resign"`): the 1.0 card it serves carries one
JWS of the bridge's key over the card as served, which the SDKs' own verifiers accept (a2a-sdk 1.3.0's `create_signature_verifier`, the JavaScript SDK 1.x's
`verifyAgentCardSignature`) with the key the bridge publishes at the signature's `jku`; a card
changed after signing is refused by both. The 0.3 and the dual view carry one JWS over their 0.3
members, which a2a-sdk 0.3.26's `create_signature_verifier` accepts (the only 0.3 verifier an SDK
ships; a 1.x reader names its revision and gets the 1.0 view). Keys are made in the test by
`cryptography` (ES256 and RS256), the bridge reads them from PEM files.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from conftest import PYTHON
from jscallers import JS_DIR, node

JS_VERIFY = """
import { verifyAgentCardSignature } from 'a2a-js-10';
import { importJWK } from 'jose';
const input = JSON.parse(await new Promise((resolve) => {
  let text = ''; process.stdin.on('data', (c) => { text += c; }); process.stdin.on('end', () => resolve(text));
}));
const verify = verifyAgentCardSignature(async (kid) => {
  const jwk = input.jwks.keys.find((k) => k.kid === kid);
  return importJWK(jwk, jwk.alg);
});
const results = [];
for (const card of input.cards) {
  try { await verify(card); results.push(true); } catch (e) { results.push(String(e.message ?? e)); }
}
console.log(JSON.stringify(results));
"""


# Run by a2a-sdk 0.3.26 (its environment): each card verified by its own verifier.
PY03_VERIFY = """
import json, sys
from jwt import PyJWKSet
from a2a.types import AgentCard
from a2a.utils.signing import create_signature_verifier
data = json.load(sys.stdin)
keys = PyJWKSet.from_dict(data['jwks'])
seen = []
def key_provider(kid, jku):
    seen.append([kid, jku])
    return next(k for k in keys.keys if k.key_id == kid)
verify = create_signature_verifier(key_provider, algorithms=['ES256', 'RS256'])
results = []
for card in data['cards']:
    try:
        verify(AgentCard.model_validate(card))
        results.append(True)
    except Exception as exc:  # noqa: BLE001 - the refusal is the result
        results.append(repr(exc))
print(json.dumps({'results': results, 'seen': seen}))
"""


def verified_by_sdk_0_3(jwks: dict, cards: list[dict]) -> dict:
    done = subprocess.run(  # noqa: S603 - fixed argv
        [str(PYTHON['0.3']), '-c', PY03_VERIFY], input=json.dumps({'jwks': jwks, 'cards': cards}).encode(),
        capture_output=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors='replace')[-2000:]
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def pem_key(kind: str) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    key = ec.generate_private_key(ec.SECP256R1()) if kind == 'ES256' else rsa.generate_private_key(65537, 2048)
    form = serialization.PrivateFormat.TraditionalOpenSSL if kind == 'ES256' else serialization.PrivateFormat.PKCS8
    return key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption())


@pytest.fixture(scope='module', params=['ES256', 'RS256'])
def signing_bridge(request, agents, bridge_with, tmp_path_factory):
    where = tmp_path_factory.mktemp(f'signing-{request.param}')
    key = where / 'key.pem'
    key.write_bytes(pem_key(request.param))
    # A key of before a rotation: published, never signing.
    retired = where / 'retired.pem'
    retired.write_bytes(pem_key('ES256'))
    config = where / 'bridge.toml'
    config.write_text(
        f'[upstream]\nurl = "{agents["1.0"].url.rstrip("/")}"\n[demo]\nenabled = false\n'
        f'[card]\nsignatures = "resign"\nsigning_key = "{key}"\nsigning_kid = "bridge-{request.param}"\n'
        f'[[card.retired_keys]]\nkey = "{retired}"\nkid = "bridge-retired"\n'
    )
    return request.param, bridge_with('1.0', '--config', str(config))


def served(bridge) -> tuple[dict, list[dict]]:
    with httpx.Client(timeout=15) as http:
        jwks = http.get(f'{bridge.url}/.well-known/jwks.json')
        assert jwks.status_code == 200 and 'jwk-set+json' in jwks.headers['content-type'], jwks.text
        cards = [http.get(f'{bridge.url}/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}).json(),
                 http.get(f'{bridge.url}/.well-known/agent-card.json?A2A-Version=1.0').json()]
    return jwks.json(), cards


def served_0_3(bridge) -> list[dict]:
    """The dual view (no version named) and the 0.3 view."""
    with httpx.Client(timeout=15) as http:
        return [http.get(f'{bridge.url}/.well-known/agent-card.json').json(),
                http.get(f'{bridge.url}/.well-known/agent-card.json', headers={'A2A-Version': '0.3'}).json()]


def test_the_0_3_and_dual_views_carry_a_signature_a2a_sdk_0_3_verifies(signing_bridge):
    alg, bridge = signing_bridge
    jwks, _ = served(bridge)
    dual, v03 = served_0_3(bridge)
    assert 'supportedInterfaces' in dual and 'supportedInterfaces' not in v03, (dual, v03)
    for card in (dual, v03):
        assert len(card['signatures']) == 1, card
    forged = {**v03, 'description': 'changed after signing'}
    # A dual card's 1.0 members are not what a 0.3 reader sees, nor what its signature covers;
    # a 0.3 member moved is.
    moved = {**dual, 'url': 'http://elsewhere.example/'}
    verdict = verified_by_sdk_0_3(jwks, [dual, v03, forged, moved])
    assert verdict['results'][:2] == [True, True], verdict
    assert verdict['results'][2] is not True and verdict['results'][3] is not True, verdict
    assert {kid for kid, _ in verdict['seen']} == {f'bridge-{alg}'}, verdict
    assert all(jku == f'{bridge.url}/.well-known/jwks.json' for _, jku in verdict['seen']), verdict


def test_served_cards_carry_the_bridges_signature_which_the_python_sdk_verifies(signing_bridge):
    from jwt import PyJWKSet

    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier

    alg, bridge = signing_bridge
    jwks, cards = served(bridge)
    key, old = jwks['keys']
    assert key['kid'] == f'bridge-{alg}' and key['alg'] == alg, jwks
    assert old['kid'] == 'bridge-retired', jwks
    keys = PyJWKSet.from_dict(jwks)
    seen = []

    def key_provider(kid, jku):
        seen.append((kid, jku))
        return next(k for k in keys.keys if k.key_id == kid)

    verify = create_signature_verifier(key_provider, algorithms=['ES256', 'RS256'])
    for card in cards:
        assert len(card['signatures']) == 1, card
        verify(parse_agent_card(card))
    assert seen and all(jku == f'{bridge.url}/.well-known/jwks.json' for _, jku in seen), seen
    assert {kid for kid, _ in seen} == {f'bridge-{alg}'}, seen
    forged = {**cards[0], 'name': 'someone else'}
    with pytest.raises(InvalidSignaturesError):
        verify(parse_agent_card(forged))


def test_served_cards_carry_the_bridges_signature_which_the_js_sdk_verifies(signing_bridge):
    if node() is None:
        pytest.skip('node is not installed')
    _, bridge = signing_bridge
    jwks, cards = served(bridge)
    forged = {**cards[0], 'description': 'changed after signing'}
    script = Path(JS_DIR) / '.verify-card.mjs'
    script.write_text(JS_VERIFY)
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv
            [node(), str(script)], input=json.dumps({'jwks': jwks, 'cards': [*cards, forged]}).encode(),
            capture_output=True, timeout=60, check=False, cwd=JS_DIR,
        )
    finally:
        script.unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr.decode(errors='replace')[-2000:]
    # The SDK logs each failed verification to stdout; the results are the last line.
    results = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert results[:-1] == [True] * len(cards), results
    assert results[-1] is not True, results


def test_without_resign_the_card_carries_no_signature_and_no_key_is_published(bridges):
    with httpx.Client(timeout=15) as http:
        card = http.get(f'{bridges["1.0"].url}/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}).json()
        assert 'signatures' not in card, card
        assert http.get(f'{bridges["1.0"].url}/.well-known/jwks.json').status_code == 404


def test_the_extended_card_is_signed_in_the_callers_revision_too(signing_bridge):
    from jwt import PyJWKSet

    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import create_signature_verifier

    _, bridge = signing_bridge
    jwks, _ = served(bridge)
    keys = PyJWKSet.from_dict(jwks)
    verify = create_signature_verifier(lambda kid, jku: next(k for k in keys.keys if k.key_id == kid),
                                       algorithms=['ES256', 'RS256'])
    with httpx.Client(timeout=15) as http:
        answer = http.post(bridge.url, headers={'A2A-Version': '1.0'}, json={
            'jsonrpc': '2.0', 'id': 'x', 'method': 'GetExtendedAgentCard', 'params': {}}).json()
        card = answer['result']
        assert len(card['signatures']) == 1, answer
        verify(parse_agent_card(card))
        # A 0.3 caller's extended card is signed in the 0.3 form.
        old = http.post(bridge.url, json={
            'jsonrpc': '2.0', 'id': 'y', 'method': 'agent/getAuthenticatedExtendedCard'}).json()
        assert len(old['result']['signatures']) == 1, old
        verdict = verified_by_sdk_0_3(jwks, [old['result'], {**old['result'], 'name': 'forged'}])
        assert verdict['results'][0] is True and verdict['results'][1] is not True, verdict


# --- verify: the agent's card is used only when a signature of it verifies ----------------------


class CardHost:
    """Serves an agent's card signed in the test (by a2a-sdk 1.3.0's own signer) and the JWK
    Set its `jku` names, both replaceable while it runs."""

    def __init__(self) -> None:
        import http.server
        import threading

        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the stdlib's name
                body = {'/card.json': host.card, '/jwks.json': host.jwks}.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'
        self.card: dict = {}
        self.jwks: dict = {}
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def publish(self, card: dict, kind: str, kid: str) -> dict:
        """Signs `card` with a new key of `kind` named `kid` (its `jku` this host's JWK Set),
        serves it, and publishes the key; the JWK Set document."""
        from a2a.client.card_resolver import parse_agent_card
        from a2a.utils.signing import create_agent_card_signer
        from cryptography.hazmat.primitives import serialization
        from google.protobuf.json_format import MessageToDict
        from jwt.algorithms import get_default_algorithms

        pem = pem_key(kind)
        sign = create_agent_card_signer(
            signing_key=pem, protected_header={'alg': kind, 'kid': kid, 'typ': 'JOSE', 'jku': f'{self.url}/jwks.json'})
        self.card = MessageToDict(sign(parse_agent_card(json.loads(json.dumps(card)))))
        public = serialization.load_pem_private_key(pem, None).public_key()
        jwk = json.loads(get_default_algorithms()[kind].to_jwk(public))
        jwk.update({'kid': kid, 'alg': kind, 'use': 'sig'})
        self.jwks = {'keys': [jwk]}
        return self.jwks

    def close(self) -> None:
        self.server.shutdown()


def start_verifying_bridge(agent, host: CardHost, logs, name: str, card: str) -> tuple:
    """A bridge in front of `agent` reading its card from `host`, with `card` as its `[card]`
    table; its process, its URL and its admin URL, once the admin listener answers."""
    import time

    from conftest import bridge_binary, free_port, spawn

    port, admin = free_port(), free_port()
    config = logs / f'{name}.toml'
    config.write_text(
        f'listen = "127.0.0.1:{port}"\nadmin = "127.0.0.1:{admin}"\n'
        f'[upstream]\nurl = "{agent.url.rstrip("/")}"\ncard_url = "{host.url}/card.json"\ncard_refresh = "1s"\n'
        f'[demo]\nenabled = false\n[card]\nsignatures = "verify"\n{card}'
    )
    process, _, _ = spawn(name, [str(bridge_binary()), '--config', str(config)], logs)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f'http://127.0.0.1:{admin}/healthz', timeout=1)
            return process, f'http://127.0.0.1:{port}', f'http://127.0.0.1:{admin}'
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f'{name} did not start')


def ready(admin: str, expect: bool, timeout: float = 15.0) -> str:
    """Waits until `/readyz` says ready (or not, per `expect`); its last body."""
    import time

    deadline = time.monotonic() + timeout
    body = ''
    while time.monotonic() < deadline:
        answer = httpx.get(f'{admin}/readyz', timeout=2)
        body = answer.text
        if (answer.status_code == 200) == expect:
            return body
        time.sleep(0.2)
    raise AssertionError(f'readyz never {"ready" if expect else "unready"}: {body}')


@pytest.fixture(scope='module')
def agent_card(agents) -> dict:
    return httpx.get(f'{agents["1.0"].url.rstrip("/")}/.well-known/agent-card.json', timeout=15).json()


@pytest.mark.parametrize('kind', ['ES256', 'RS256'])
def test_an_agent_card_signed_with_a_trusted_key_is_used_and_a_tampered_one_is_not(
        agents, agent_card, logs, tmp_path, kind):
    from conftest import stop

    host = CardHost()
    jwks = host.publish(agent_card, kind, 'agent-key-1')
    trusted = tmp_path / 'trusted.json'
    trusted.write_text(json.dumps(jwks))
    process, url, admin = start_verifying_bridge(
        agents['1.0'], host, logs, f'verify-trusted-{kind}', f'trusted_keys = "{trusted}"\n')
    try:
        ready(admin, True)
        answer = httpx.post(url, headers={'A2A-Version': '1.0'}, timeout=15, json={
            'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'no-such-task'}}).json()
        assert answer['error']['code'] == -32001, answer  # the agent answered: the card was used
        # The agent's card changes after it was signed: the bridge stops trusting it, and says why.
        host.card = {**host.card, 'description': 'changed after signing'}
        process.kill()
        process.wait()
        process, url, admin = start_verifying_bridge(
            agents['1.0'], host, logs, f'verify-tampered-{kind}', f'trusted_keys = "{trusted}"\n')
        why = ready(admin, False)
        assert 'does not match the card' in why, why
        metrics = httpx.get(f'{admin}/metrics', timeout=5).text
        assert 'outcome="unverified"' in metrics, metrics[-2000:]
        card = httpx.get(f'{url}/.well-known/agent-card.json', timeout=5)
        assert card.status_code == 503, card.text
    finally:
        stop(process)
        host.close()


def test_a_jku_key_is_followed_through_rotation_and_a_jku_outside_the_allowed_prefixes_is_refused(
        agents, agent_card, logs):
    from conftest import stop

    host = CardHost()
    host.publish(agent_card, 'ES256', 'agent-key-1')
    process, url, admin = start_verifying_bridge(
        agents['1.0'], host, logs, 'verify-jku', f'jku_allow = ["{host.url}/"]\n')
    outside = None
    try:
        ready(admin, True)
        # The agent rotates its key: a new one signs the card, the JWK Set at jku holds it.
        host.publish({**agent_card, 'description': 'signed with the rotated key'}, 'RS256', 'agent-key-2')
        import time

        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            served = httpx.get(f'{url}/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}, timeout=5).json()
            if served.get('description') == 'signed with the rotated key':
                break
            time.sleep(0.3)
        assert served.get('description') == 'signed with the rotated key', served
        ready(admin, True)
        outside, _, outside_admin = start_verifying_bridge(
            agents['1.0'], host, logs, 'verify-jku-outside', 'jku_allow = ["https://keys.example/"]\n')
        why = ready(outside_admin, False)
        assert 'not under an allowed prefix' in why, why
    finally:
        stop(process)
        if outside is not None:
            stop(outside)
        host.close()


# Run by a2a-sdk 0.3.26: the card signed by its own signer.
PY03_SIGN = """
import json, sys
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer
data = json.load(sys.stdin)
sign = create_agent_card_signer(signing_key=data['pem'].encode(), protected_header=data['header'])
card = sign(AgentCard.model_validate(data['card']))
print(json.dumps(card.model_dump(mode='json', by_alias=True, exclude_none=True)))
"""


@pytest.mark.parametrize('kind', ['ES256', 'RS256'])
def test_a_0_3_agent_card_signed_by_a2a_sdk_0_3_is_used_and_a_tampered_one_is_not(agents, logs, tmp_path, kind):
    from conftest import stop
    from cryptography.hazmat.primitives import serialization
    from jwt.algorithms import get_default_algorithms

    host = CardHost()
    pem = pem_key(kind)
    original = httpx.get(f'{agents["0.3"].url.rstrip("/")}/.well-known/agent-card.json', timeout=15).json()
    header = {'alg': kind, 'kid': 'agent-03', 'typ': 'JOSE'}
    done = subprocess.run(  # noqa: S603 - fixed argv
        [str(PYTHON['0.3']), '-c', PY03_SIGN],
        input=json.dumps({'pem': pem.decode(), 'header': header, 'card': original}).encode(),
        capture_output=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors='replace')[-2000:]
    host.card = json.loads(done.stdout)
    assert len(host.card['signatures']) == 1, host.card
    public = serialization.load_pem_private_key(pem, None).public_key()
    jwk = json.loads(get_default_algorithms()[kind].to_jwk(public))
    jwk.update({'kid': 'agent-03', 'alg': kind})
    trusted = tmp_path / 'trusted.json'
    trusted.write_text(json.dumps({'keys': [jwk]}))
    process, url, admin = start_verifying_bridge(
        agents['0.3'], host, logs, f'verify-03-{kind}', f'trusted_keys = "{trusted}"\n')
    try:
        ready(admin, True)
        answer = httpx.post(url, headers={'A2A-Version': '1.0'}, timeout=15, json={
            'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'no-such-task'}}).json()
        assert answer['error']['code'] == -32001, answer  # the 0.3 agent answered: the card was used
        host.card = {**host.card, 'name': 'changed after signing'}
        process.kill()
        process.wait()
        process, url, admin = start_verifying_bridge(
            agents['0.3'], host, logs, f'verify-03-tampered-{kind}', f'trusted_keys = "{trusted}"\n')
        why = ready(admin, False)
        assert 'does not match the card' in why, why
    finally:
        stop(process)
        host.close()

"""Cards the bridge re-signs (`card.signatures = "resign"`): the 1.0 card it serves carries one
JWS of the bridge's key over the card as served, which the SDKs' own verifiers accept (a2a-sdk 1.3.0's `create_signature_verifier`, the JavaScript SDK 1.x's
`verifyAgentCardSignature`) with the key the bridge publishes at the signature's `jku`; a card
changed after signing is refused by both. Keys are made in the test by `cryptography` (ES256 and
RS256), the bridge reads them from PEM files. The dual view goes unsigned: the two SDK families
canonicalise its 0.3 members differently, so no one signature satisfies both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

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
    config = where / 'bridge.toml'
    config.write_text(
        f'[upstream]\nurl = "{agents["1.0"].url.rstrip("/")}"\n[demo]\nenabled = false\n'
        f'[card]\nsignatures = "resign"\nsigning_key = "{key}"\nsigning_kid = "bridge-{request.param}"\n'
    )
    return request.param, bridge_with('1.0', '--config', str(config))


def served(bridge) -> tuple[dict, list[dict]]:
    with httpx.Client(timeout=15) as http:
        jwks = http.get(f'{bridge.url}/.well-known/jwks.json')
        assert jwks.status_code == 200 and 'jwk-set+json' in jwks.headers['content-type'], jwks.text
        cards = [http.get(f'{bridge.url}/.well-known/agent-card.json', headers={'A2A-Version': '1.0'}).json(),
                 http.get(f'{bridge.url}/.well-known/agent-card.json?A2A-Version=1.0').json()]
        dual = http.get(f'{bridge.url}/.well-known/agent-card.json').json()
        assert 'signatures' not in dual, dual
    return jwks.json(), cards


def test_served_cards_carry_the_bridges_signature_which_the_python_sdk_verifies(signing_bridge):
    from jwt import PyJWKSet

    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier

    alg, bridge = signing_bridge
    jwks, cards = served(bridge)
    [key] = jwks['keys']
    assert key['kid'] == f'bridge-{alg}' and key['alg'] == alg, jwks
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


def test_the_extended_card_a_1_0_caller_gets_is_signed_too(signing_bridge):
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
        # A 0.3 caller's extended card carries no signature: 0.3 defines no scheme for it.
        old = http.post(bridge.url, json={
            'jsonrpc': '2.0', 'id': 'y', 'method': 'agent/getAuthenticatedExtendedCard'}).json()
        assert 'signatures' not in old['result'], old

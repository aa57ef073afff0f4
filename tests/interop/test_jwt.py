"""JWT callers (`[[auth.jwt]]`), in front of the a2a-sdk 0.3.26 agent.

Keys are made in the test by `cryptography` (RS256, ES256, EdDSA), tokens minted by PyJWT, and
the issuer's JWK Set served on loopback by the test, replaceable while it runs. A valid token is
let in on every binding; each failure (expired, another audience, an unknown key, a bad
signature, `alg: none`, an untrusted issuer) is refused with 401 and a `Bearer` challenge
naming the error (gRPC `UNAUTHENTICATED`); a rotated key is followed; the keys fetched stay in
use while the issuer is down; the token's subject is the caller's scope; the served card
declares the scheme; static bearer tokens keep working.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from callers import Channels, GrpcCaller, Refused
from test_grpc_policy import Bridge

ISSUER = 'https://idp.interop.test'
AUDIENCE = 'a2a-bridge'
V10 = {'A2A-Version': '1.0'}


class Keys:
    """An issuer's signing keys and its JWK Set, served on loopback."""

    def __init__(self) -> None:
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the stdlib's name
                host.fetches += 1
                if host.down or self.path != '/jwks.json':
                    self.send_response(503 if host.down else 404)
                    self.end_headers()
                    return
                data = json.dumps({'keys': [k['public'] for k in host.published]}).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/jwk-set+json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}/jwks.json'
        self.published: list[dict] = []
        self.fetches = 0
        self.down = False
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def make(alg: str, kid: str) -> dict:
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
        from jwt.algorithms import get_default_algorithms

        if alg == 'RS256':
            private = rsa.generate_private_key(65537, 2048)
        elif alg == 'ES256':
            private = ec.generate_private_key(ec.SECP256R1())
        else:
            private = ed25519.Ed25519PrivateKey.generate()
        public = json.loads(get_default_algorithms()[alg].to_jwk(private.public_key()))
        public.update({'kid': kid, 'alg': alg, 'use': 'sig'})
        return {'alg': alg, 'kid': kid, 'private': private, 'public': public}

    def close(self) -> None:
        self.server.shutdown()


def mint(key: dict, **claims: Any) -> str:
    import jwt

    now = int(time.time())
    body = {'iss': ISSUER, 'aud': AUDIENCE, 'sub': 'alice', 'iat': now, 'exp': now + 300, **claims}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key['private'], algorithm=key['alg'], headers={'kid': key['kid']})


@pytest.fixture(scope='module')
def issuer() -> Iterator[Keys]:
    keys = Keys()
    keys.published = [Keys.make(alg, f'k-{alg}') for alg in ('RS256', 'ES256', 'EdDSA')]
    yield keys
    keys.close()


@pytest.fixture(scope='module')
def guarded(agents, logs: Path, issuer: Keys) -> Iterator[Bridge]:
    config = (
        '[auth]\nbearer_tokens = ["static-token"]\n'
        f'[[auth.jwt]]\nissuer = "{ISSUER}"\naudiences = ["{AUDIENCE}"]\njwks_url = "{issuer.url}"\nleeway = "5s"\n'
    )
    bridge = Bridge('jwt', agents['0.3'], logs, config)
    yield bridge
    bridge.close()


def send(bridge: Bridge, token: str | None, form: str = 'jsonrpc') -> httpx.Response:
    headers = dict(V10)
    if token is not None:
        headers['Authorization'] = f'Bearer {token}'
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask jwt'}]}
    if form == 'rest':
        return httpx.post(f'{bridge.peer.url}/message:send', headers=headers, json={'message': message}, timeout=15)
    return httpx.post(bridge.peer.url, headers=headers, timeout=15, json={
        'jsonrpc': '2.0', 'id': 'jwt-1', 'method': 'SendMessage', 'params': {'message': message}})


@pytest.mark.parametrize('alg', ['RS256', 'ES256', 'EdDSA'])
def test_a_valid_token_is_let_in_over_json_rpc_and_http_json(guarded, issuer, alg):
    key = next(k for k in issuer.published if k['alg'] == alg)
    token = mint(key)
    for form in ('jsonrpc', 'rest'):
        answer = send(guarded, token, form)
        assert answer.status_code == 200, answer.text
        task = answer.json()['result']['task'] if form == 'jsonrpc' else answer.json()['task']
        assert task['status']['state'] == 'TASK_STATE_INPUT_REQUIRED', answer.text


def test_a_valid_token_is_let_in_over_grpc_and_a_bad_one_is_unauthenticated(guarded, issuer):
    async def body() -> None:
        channels = Channels()
        try:
            for revision in ('0.3', '1.0'):
                good = GrpcCaller(revision, channels.get(guarded.target))
                good.metadata = (*good.metadata, ('authorization', f'Bearer {mint(issuer.published[0])}'))
                task = await good.send(f'ask {uuid.uuid4().hex}')
                assert task.state == 'input-required', task
                bad = GrpcCaller(revision, channels.get(guarded.target))
                expired = mint(issuer.published[0], exp=int(time.time()) - 600)
                bad.metadata = (*bad.metadata, ('authorization', f'Bearer {expired}'))
                with pytest.raises(Refused) as refused:
                    await bad.send(f'ask {uuid.uuid4().hex}')
                assert refused.value.code.startswith('grpc UNAUTHENTICATED'), refused.value
                assert 'expired' in refused.value.message, refused.value
        finally:
            await channels.close()

    asyncio.run(body())


def forged_tokens(issuer: Keys) -> dict[str, str]:
    import jwt

    key = issuer.published[0]
    good = mint(key)
    header, payload, signature = good.split('.')
    other = Keys.make('RS256', key['kid'])  # same kid, another key: the signature cannot match
    unsigned = jwt.encode({'iss': ISSUER, 'aud': AUDIENCE, 'sub': 'mallory', 'exp': int(time.time()) + 300},
                          None, algorithm='none')
    return {
        'expired': mint(key, exp=int(time.time()) - 600, iat=int(time.time()) - 900),
        'audience': mint(key, aud='someone-else'),
        'issuer': mint(key, iss='https://elsewhere.test'),
        'unknown key': mint(Keys.make('ES256', 'k-unknown')),
        'bad signature': mint(other),
        'tampered': f'{header}.{payload[:-4]}AAAA.{signature}',
        'alg none': unsigned,
        'not yet valid': mint(key, nbf=int(time.time()) + 600),
        'no subject': mint(key, sub=None),
    }


EXPECTED = {
    'expired': 'expired',
    'audience': 'audience',
    'issuer': 'not trusted',
    'unknown key': 'k-unknown',
    'bad signature': 'does not verify',
    'tampered': '',
    'alg none': 'not accepted',
    'not yet valid': 'not valid before',
    'no subject': '`sub`',
}


def test_every_bad_token_is_refused_with_401_and_a_challenge_naming_the_error(guarded, issuer):
    for what, token in forged_tokens(issuer).items():
        for form in ('jsonrpc', 'rest'):
            answer = send(guarded, token, form)
            assert answer.status_code == 401, (what, form, answer.text)
            challenge = answer.headers.get('www-authenticate', '')
            assert challenge.startswith('Bearer') and 'invalid_token' in challenge, (what, challenge)
            assert EXPECTED[what] in answer.text, (what, answer.text)
            if form == 'jsonrpc':
                assert answer.json()['id'] == 'jwt-1', answer.text
    # Without any credential: refused before the call is read.
    assert send(guarded, None).status_code == 401


def test_static_bearer_tokens_keep_working_beside_jwts(guarded):
    answer = send(guarded, 'static-token')
    assert answer.status_code == 200 and 'result' in answer.json(), answer.text


def test_a_rotated_key_is_followed_and_known_keys_stay_in_use_while_the_issuer_is_down(agents, logs):
    keys = Keys()
    first = Keys.make('ES256', 'rot-1')
    keys.published = [first]
    config = f'[auth]\n[[auth.jwt]]\nissuer = "{ISSUER}"\naudiences = ["{AUDIENCE}"]\njwks_url = "{keys.url}"\n'
    bridge = Bridge('jwt-rotation', agents['0.3'], logs, config)
    try:
        assert send(bridge, mint(first)).status_code == 200
        second = Keys.make('RS256', 'rot-2')
        keys.published = [second]
        # The new kid is unknown: the set is fetched again (at most every 10 s) and the key found.
        deadline = time.monotonic() + 20
        while True:
            answer = send(bridge, mint(second))
            if answer.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert answer.status_code == 200, answer.text
        # The issuer goes down: the keys fetched stay in use.
        keys.down = True
        assert send(bridge, mint(second)).status_code == 200
    finally:
        bridge.close()
        keys.close()


def test_the_tokens_subject_is_the_callers_scope(guarded, issuer):
    key = issuer.published[1]
    alice, bob = mint(key, sub=f'alice-{uuid.uuid4().hex[:6]}'), mint(key, sub=f'bob-{uuid.uuid4().hex[:6]}')
    made = {}
    for who, token in (('alice', alice), ('bob', bob)):
        made[who] = send(guarded, token).json()['result']['task']['id']

    def listed(token: str) -> set[str]:
        answer = httpx.post(guarded.peer.url, headers={**V10, 'Authorization': f'Bearer {token}'}, timeout=15,
                            json={'jsonrpc': '2.0', 'id': 'l', 'method': 'ListTasks', 'params': {'pageSize': 100}})
        return {t['id'] for t in answer.json()['result']['tasks']}

    assert made['alice'] in listed(alice) and made['bob'] not in listed(alice)
    assert made['bob'] in listed(bob) and made['alice'] not in listed(bob)


def test_the_served_card_declares_the_bearer_jwt_scheme(guarded):
    v10 = httpx.get(f'{guarded.peer.url}/.well-known/agent-card.json', headers=V10, timeout=5).json()
    scheme = v10['securitySchemes']['a2a-bridge-jwt']['httpAuthSecurityScheme']
    assert scheme['scheme'] == 'Bearer' and scheme['bearerFormat'] == 'JWT', v10
    assert all('a2a-bridge-jwt' in r['schemes'] for r in v10['securityRequirements']), v10
    v03 = httpx.get(f'{guarded.peer.url}/.well-known/agent-card.json', headers={'A2A-Version': '0.3'}, timeout=5).json()
    assert v03['securitySchemes']['a2a-bridge-jwt']['type'] == 'http', v03
    assert all('a2a-bridge-jwt' in r for r in v03['security']), v03

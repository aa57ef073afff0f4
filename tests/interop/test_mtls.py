"""mTLS callers (`[tls] client_ca`), in front of the a2a-sdk 0.3.26 agent.

Certificates are made in the test by `cryptography`: an authority, the bridge's server
certificate, callers `alice`, `bob` and `carol` it signed, and `mallory` signed by another
authority. A caller must present a certificate the authority signed, on the HTTP and the gRPC
listener alike; its common name is its identity: the scope it lists tasks in, and what an
authorization rule names (here: `bob` may not send). A caller cannot name itself with the
internal identity header.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from callers import GrpcCaller, Refused
from test_grpc_policy import Bridge

V10 = {'A2A-Version': '1.0'}


class Authority:
    """A certificate authority made for the test, and the certificates it signs."""

    def __init__(self, name: str) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject).public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    def issue(self, directory: Path, name: str, server: bool = False) -> tuple[Path, Path]:
        """A certificate for `name` (a client's, or the server's for 127.0.0.1) and its key."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address('127.0.0.1'))]), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        cert_path, key_path = directory / f'{name}.pem', directory / f'{name}.key'
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return cert_path, key_path

    def write(self, path: Path) -> Path:
        from cryptography.hazmat.primitives import serialization

        path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        return path


class Setup:
    def __init__(self, directory: Path) -> None:
        self.ca = Authority('interop CA')
        self.other = Authority('another CA')
        self.ca_file = self.ca.write(directory / 'ca.pem')
        self.server = self.ca.issue(directory, 'bridge', server=True)
        self.clients = {name: self.ca.issue(directory, name) for name in ('alice', 'bob', 'carol')}
        self.clients['mallory'] = self.other.issue(directory, 'mallory')


@pytest.fixture(scope='module')
def certs(tmp_path_factory) -> Setup:
    return Setup(tmp_path_factory.mktemp('mtls'))


@pytest.fixture(scope='module')
def mutual(agents, logs: Path, certs: Setup) -> Iterator[Bridge]:
    cert, key = certs.server
    config = (f'[tls]\ncert_chain = "{cert}"\nprivate_key = "{key}"\nclient_ca = "{certs.ca_file}"\n'
              '[authorization]\n[[authorization.rules]]\neffect = "deny"\nmethods = ["send"]\nidentities = ["bob"]\n')
    bridge = Bridge('mtls', agents['0.3'], logs, config)
    yield bridge
    bridge.close()


def client(certs: Setup, who: str | None) -> httpx.Client:
    context = ssl.create_default_context(cafile=str(certs.ca_file))
    if who is not None:
        cert, key = certs.clients[who]
        context.load_cert_chain(str(cert), str(key))
    return httpx.Client(verify=context, timeout=15)


def url(bridge: Bridge) -> str:
    return f'https://127.0.0.1:{bridge.listen}'


def send(http: httpx.Client, bridge: Bridge, extra: dict | None = None) -> httpx.Response:
    message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask mtls'}]}
    return http.post(url(bridge), headers={**V10, **(extra or {})}, json={
        'jsonrpc': '2.0', 'id': 'm', 'method': 'SendMessage', 'params': {'message': message}})


def test_a_caller_with_a_certificate_of_the_authority_is_served(mutual, certs):
    with client(certs, 'alice') as http:
        answer = send(http, mutual)
        assert answer.status_code == 200 and 'result' in answer.json(), answer.text
        rest = http.post(f'{url(mutual)}/message:send', headers=V10, json={
            'message': {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'ask rest'}]}})
        assert rest.status_code == 200, rest.text


@pytest.mark.parametrize('who', [None, 'mallory'])
def test_a_caller_without_a_certificate_of_the_authority_is_not_served(mutual, certs, who):
    with client(certs, who) as http, pytest.raises(httpx.HTTPError):
        send(http, mutual)


def test_the_certificates_name_is_the_identity_rules_and_scopes_see(mutual, certs):
    with client(certs, 'bob') as http:
        denied = send(http, mutual).json()
        assert denied['error']['code'] == -32600 and 'forbidden' in denied['error']['message'], denied
    with client(certs, 'alice') as alice, client(certs, 'carol') as carol:
        # Naming another identity in the internal header changes nothing: the handshake names.
        made = send(alice, mutual, {'a2a-bridge-client-identity': 'bob'}).json()['result']['task']['id']

        def listed(http: httpx.Client) -> set[str]:
            answer = http.post(url(mutual), headers=V10, json={
                'jsonrpc': '2.0', 'id': 'l', 'method': 'ListTasks', 'params': {'pageSize': 100}})
            return {t['id'] for t in answer.json()['result']['tasks']}

        assert made in listed(alice)
        assert made not in listed(carol)


def test_the_identity_header_from_a_caller_is_not_believed_without_tls(agents, logs):
    bridge = Bridge('mtls-plain', agents['0.3'], logs, '[auth]\nbearer_tokens = ["t"]\n')
    try:
        answer = httpx.post(bridge.peer.url, headers={**V10, 'a2a-bridge-client-identity': 'alice'}, timeout=15,
                            json={'jsonrpc': '2.0', 'id': 1, 'method': 'GetTask', 'params': {'id': 'x'}})
        assert answer.status_code == 401, answer.text
    finally:
        bridge.close()


def test_grpc_callers_present_their_certificate_too(mutual, certs):
    async def body() -> None:
        root = certs.ca_file.read_bytes()
        for who, allowed in (('alice', True), ('bob', False)):
            cert, key = certs.clients[who]
            credentials = grpc.ssl_channel_credentials(root, key.read_bytes(), cert.read_bytes())
            async with grpc.aio.secure_channel(mutual.target, credentials) as channel:
                caller = GrpcCaller('1.0', channel)
                if allowed:
                    task = await caller.send(f'ask {uuid.uuid4().hex}')
                    assert task.state == 'input-required', task
                else:
                    with pytest.raises(Refused) as refused:
                        await caller.send(f'ask {uuid.uuid4().hex}')
                    assert refused.value.code.startswith('grpc PERMISSION_DENIED'), refused.value
        # No certificate: the handshake fails, no call is served.
        async with grpc.aio.secure_channel(mutual.target, grpc.ssl_channel_credentials(root)) as channel:
            with pytest.raises(Exception):  # noqa: B017, PT011 - any failure: nothing answers
                await GrpcCaller('1.0', channel).send('ask nobody', timeout=5.0)

    asyncio.run(body())


def test_a_reload_reads_the_certificate_and_the_client_authorities_again(agents, logs, certs, tmp_path):
    """Rotation without a restart: a SIGHUP reads `[tls]`'s files again. Callers of the new
    authority are served and those of the old one refused, on HTTP and gRPC alike, and the new
    server certificate is the one presented; a file that no longer reads keeps what runs."""
    import shutil
    import signal
    import socket
    import time

    from cryptography import x509

    served_ca = tmp_path / 'clients-ca.pem'
    shutil.copy(certs.ca_file, served_ca)
    cert, key = tmp_path / 'server.pem', tmp_path / 'server.key'
    first_cert, first_key = certs.server
    shutil.copy(first_cert, cert)
    shutil.copy(first_key, key)
    bridge = Bridge('mtls-reload', agents['0.3'], logs,
                    f'[tls]\ncert_chain = "{cert}"\nprivate_key = "{key}"\nclient_ca = "{served_ca}"\n')

    def http_served(who: str) -> bool:
        try:
            with client(certs, who) as http:
                return 'result' in send(http, bridge).json()
        except httpx.HTTPError:
            return False

    def grpc_served(who: str) -> bool:
        async def body() -> bool:
            own_cert, own_key = certs.clients[who]
            credentials = grpc.ssl_channel_credentials(
                certs.ca_file.read_bytes(), own_key.read_bytes(), own_cert.read_bytes())
            async with grpc.aio.secure_channel(bridge.target, credentials) as channel:
                try:
                    await GrpcCaller('1.0', channel).send(f'ask {uuid.uuid4().hex}', timeout=5.0)
                    return True
                except Exception:  # noqa: BLE001 - any failure: not served
                    return False

        return asyncio.run(body())

    def presented() -> bytes:
        context = ssl.create_default_context(cafile=str(certs.ca_file))
        own_cert, own_key = certs.clients['alice'] if http_served('alice') else certs.clients['mallory']
        context.load_cert_chain(str(own_cert), str(own_key))
        with socket.create_connection(('127.0.0.1', bridge.listen), timeout=5) as raw, \
                context.wrap_socket(raw, server_hostname='127.0.0.1') as tls:
            return tls.getpeercert(binary_form=True)

    def reload_until(check) -> None:
        bridge.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 15
        while not check():
            assert time.monotonic() < deadline, bridge.peer.log_tail()
            time.sleep(0.2)

    try:
        assert http_served('alice') and grpc_served('alice')
        assert not http_served('mallory') and not grpc_served('mallory')
        before = presented()

        # The other authority's certificate as the client CA; a new server certificate.
        certs.other.write(served_ca)
        rotated_cert, rotated_key = certs.ca.issue(tmp_path, 'bridge-rotated', server=True)
        shutil.copy(rotated_cert, cert)
        shutil.copy(rotated_key, key)
        reload_until(lambda: http_served('mallory'))
        assert grpc_served('mallory')
        assert not http_served('alice') and not grpc_served('alice')
        after = presented()
        assert after != before
        assert x509.load_der_x509_certificate(after).subject.rfc4514_string() == 'CN=bridge-rotated'

        # A client CA that no longer reads: the reload fails and the running setup stays.
        served_ca.write_text('not a certificate')
        bridge.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 15
        while 'reload failed' not in bridge.peer.stderr.read_text(errors='replace'):
            assert time.monotonic() < deadline, bridge.peer.log_tail()
            time.sleep(0.2)
        assert http_served('mallory') and grpc_served('mallory')
        assert not http_served('alice')
    finally:
        bridge.close()

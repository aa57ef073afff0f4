"""The image (deploy/Dockerfile), its runtime stage built and started here.

No container registry is reachable from these machines and no container runtime can set up
cgroups, so the full Dockerfile (the Rust build stage on the official image) is not run here.
What is: Debian's buildah builds the Dockerfile's own runtime stage, `FROM scratch`, from the
locally built binary and the file system `deploy/image/rootfs.sh` assembles, and runs it with
`--isolation chroot`. The image then serves (the embedded demo agent of the configuration at
/etc/a2a-bridge/bridge.toml answers a SendMessage), runs as the non-root user its config names,
and stops cleanly on the image's STOPSIGNAL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / 'deploy'

pytestmark = pytest.mark.skipif(shutil.which('buildah') is None, reason='buildah is not installed')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def runtime_stage(dockerfile: str) -> str:
    """The Dockerfile's runtime stage, copying the assembled file system from the context."""
    lines = dockerfile.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('FROM scratch AS runtime'))
    stage = ['FROM scratch']
    for line in lines[start + 1:]:
        if line.startswith('FROM '):
            break
        stage.append('COPY rootfs/ /' if line.startswith('COPY --from=rootfs') else line)
    assert any(line.startswith('STOPSIGNAL') for line in stage), stage
    return '\n'.join(stage) + '\n'


@pytest.fixture(scope='module')
def image(tmp_path_factory) -> str:
    binary = Path(os.environ.get('A2A_BRIDGE_BIN', ROOT / 'target/debug/a2a-bridge'))
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary}')
    context = tmp_path_factory.mktemp('image')
    subprocess.run([str(DEPLOY / 'image/rootfs.sh'), str(binary), str(context / 'rootfs'), str(DEPLOY / 'image')],
                   check=True)
    (context / 'Containerfile').write_text(runtime_stage((DEPLOY / 'Dockerfile').read_text()))
    name = f'localhost/a2a-bridge-test:{uuid.uuid4().hex[:8]}'
    subprocess.run(['buildah', 'build', '--isolation', 'chroot', '--quiet', '-t', name,
                    '-f', str(context / 'Containerfile'), str(context)], check=True, stdout=subprocess.DEVNULL)
    yield name
    subprocess.run(['buildah', 'rmi', '-f', name], check=False, capture_output=True)


def test_the_runtime_stage_declares_what_the_docs_say(image):
    config = json.loads(subprocess.run(['buildah', 'inspect', '--type', 'image', image],
                                       check=True, capture_output=True, text=True).stdout)['OCIv1']['config']
    assert config['User'] == '65532:65532'
    assert config['Entrypoint'] == ['/usr/local/bin/a2a-bridge']
    assert config['Cmd'] == ['--config', '/etc/a2a-bridge/bridge.toml']
    assert set(config['ExposedPorts']) == {'8080/tcp', '9090/tcp', '50051/tcp'}
    assert set(config['Volumes']) == {'/var/lib/a2a-bridge'}
    assert config['StopSignal'] == 'SIGTERM'


def test_the_image_serves_as_its_user_from_its_config_and_stops_on_its_signal(image, tmp_path):
    inspected = json.loads(subprocess.run(['buildah', 'inspect', '--type', 'image', image],
                                          check=True, capture_output=True, text=True).stdout)
    config = inspected['OCIv1']['config']
    container = subprocess.run(['buildah', 'from', image], check=True, capture_output=True, text=True).stdout.strip()
    listen, admin = free_port(), free_port()
    # The image's own entrypoint and command; the ports are moved off 8080 and 9090 so that the
    # test needs no free well-known port on the host (chroot isolation shares its network).
    argv = [*config['Entrypoint'], *config['Cmd'], '--listen', f'127.0.0.1:{listen}', '--admin', f'127.0.0.1:{admin}']
    log = tmp_path / 'image.log'
    with log.open('wb') as out:
        process = subprocess.Popen(['buildah', 'run', '--isolation', 'chroot', container, '--', *argv],
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text(errors='replace')
            try:
                if httpx.get(f'http://127.0.0.1:{admin}/readyz', timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors='replace')
            time.sleep(0.2)

        # It serves the demo agent its configuration file names.
        card = httpx.get(f'http://127.0.0.1:{listen}/.well-known/agent-card.json', timeout=5).json()
        assert card['name'], card
        message = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': 'hello image'}]}
        answer = httpx.post(f'http://127.0.0.1:{listen}/', headers={'A2A-Version': '1.0'}, timeout=5, json={
            'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {'message': message}}).json()
        assert 'result' in answer, answer

        # As the image's user, not root.
        (pid,) = [p for p in os.listdir('/proc') if p.isdigit() and f'127.0.0.1:{listen}' in
                  Path(f'/proc/{p}/cmdline').read_bytes().decode(errors='replace').replace('\0', ' ')
                  and Path(f'/proc/{p}/cmdline').read_bytes().startswith(b'/usr/local/bin/a2a-bridge')]
        status = Path(f'/proc/{pid}/status').read_text()
        uid = next(line.split()[1:] for line in status.splitlines() if line.startswith('Uid:'))
        assert uid[0] == '65532' and uid[1] == '65532', status

        # The image's stop signal drains it and it exits cleanly.
        os.kill(int(pid), getattr(signal, config['StopSignal']))
        assert process.wait(timeout=45) == 0, log.read_text(errors='replace')
        assert 'a2a-bridge stopped' in log.read_text(errors='replace')
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        subprocess.run(['buildah', 'rm', container], check=False, capture_output=True)

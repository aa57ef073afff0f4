"""The Kubernetes manifests of deploy/: every overlay renders with `kubectl kustomize`, every
object validates against the Kubernetes schemas (kubernetes-validate, strict: no unknown
fields), and the manifests agree with the bridge configuration they mount — ports, probe paths,
the grace period against `shutdown_grace`, the Redis URL against the Redis Service, the
credentials variable against its Secret — which the bridge binary itself accepts
(`a2a-bridge validate-config`)."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path
from urllib.parse import urlparse

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / 'deploy'
KUBERNETES = '1.31'
OVERLAYS = ['base', 'overlays/sidecar', 'overlays/gateway']


def render(directory: Path, *flags: str) -> list[dict]:
    out = subprocess.run(['kubectl', 'kustomize', *flags, str(directory)], check=True, capture_output=True, text=True)
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def one(objects: list[dict], kind: str, name: str | None = None) -> dict:
    found = [o for o in objects if o['kind'] == kind and (name is None or o['metadata']['name'] == name)]
    assert len(found) == 1, (kind, name, [o['metadata']['name'] for o in objects if o['kind'] == kind])
    return found[0]


def seconds(text: str) -> float:
    units = {'ms': 0.001, 's': 1, 'm': 60, 'h': 3600}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].replace('.', '', 1).isdigit():
            return float(text[: -len(unit)]) * units[unit]
    raise ValueError(text)


def bridge_container(objects: list[dict]) -> tuple[dict, dict]:
    deployment = one(objects, 'Deployment', 'a2a-bridge')
    (container,) = [c for c in deployment['spec']['template']['spec']['containers'] if c['name'] == 'a2a-bridge']
    return deployment, container


def mounted_config(objects: list[dict], deployment: dict) -> dict:
    (volume,) = [v for v in deployment['spec']['template']['spec']['volumes'] if v['name'] == 'config']
    config_map = one(objects, 'ConfigMap', volume['configMap']['name'])
    return tomllib.loads(config_map['data']['bridge.toml'])


@pytest.fixture(scope='module', params=OVERLAYS)
def rendered(request) -> tuple[str, list[dict]]:
    return request.param, render(DEPLOY / request.param)


def test_every_object_validates_against_the_kubernetes_schemas(rendered):
    _, objects = rendered
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)


def test_a_schema_violation_is_caught():
    """The validator is not a formality: a misspelt field fails."""
    broken = render(DEPLOY / 'base')
    deployment, container = bridge_container(broken)
    container['readinessProbe']['httpGet']['paht'] = '/readyz'
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES, strict=True)


def test_ports_probes_and_grace_agree_with_the_mounted_configuration(rendered):
    _, objects = rendered
    deployment, container = bridge_container(objects)
    config = mounted_config(objects, deployment)
    ports = {p['name']: p['containerPort'] for p in container['ports']}
    assert urlparse(f"//{config['listen']}").port == ports['http']
    assert urlparse(f"//{config['admin']}").port == ports['admin']
    assert container['readinessProbe']['httpGet'] == {'path': '/readyz', 'port': 'admin'}
    assert container['livenessProbe']['httpGet'] == {'path': '/healthz', 'port': 'admin'}
    (mount,) = [m for m in container['volumeMounts'] if m['name'] == 'config']
    assert container['args'] == ['--config', f"{mount['mountPath']}/bridge.toml"]
    grace = deployment['spec']['template']['spec']['terminationGracePeriodSeconds']
    pause = container['lifecycle']['preStop']['sleep']['seconds']
    assert grace > seconds(config['server']['shutdown_grace']) + pause
    service = one(objects, 'Service', 'a2a-bridge')
    assert {p['name']: p['targetPort'] for p in service['spec']['ports']} == {'http': 'http', 'admin': 'admin'}
    pod_labels = deployment['spec']['template']['metadata']['labels']
    assert service['spec']['selector'].items() <= pod_labels.items()
    assert pod_labels.items() >= deployment['spec']['selector']['matchLabels'].items()


def test_the_sidecar_fronts_the_agent_on_the_pods_loopback():
    objects = render(DEPLOY / 'overlays/sidecar')
    deployment, _ = bridge_container(objects)
    config = mounted_config(objects, deployment)
    (agent,) = [c for c in deployment['spec']['template']['spec']['containers'] if c['name'] == 'agent']
    upstream = urlparse(config['upstream']['url'])
    assert upstream.hostname == '127.0.0.1'
    assert upstream.port in {p['containerPort'] for p in agent['ports']}
    assert 'store' not in config and deployment['spec']['replicas'] == 1


def test_the_gateway_shares_redis_and_survives_disruptions():
    objects = render(DEPLOY / 'overlays/gateway')
    deployment, container = bridge_container(objects)
    config = mounted_config(objects, deployment)
    assert deployment['spec']['replicas'] > 1
    store = urlparse(config['store']['url'])
    redis_service = one(objects, 'Service', store.hostname)
    assert store.port in {p['port'] for p in redis_service['spec']['ports']}
    redis = one(objects, 'Deployment', 'a2a-bridge-redis')
    assert redis_service['spec']['selector'].items() <= redis['spec']['template']['metadata']['labels'].items()
    pdb = one(objects, 'PodDisruptionBudget')
    pod_labels = deployment['spec']['template']['metadata']['labels']
    assert pdb['spec']['selector']['matchLabels'].items() <= pod_labels.items()
    hpa = one(objects, 'HorizontalPodAutoscaler')
    assert hpa['spec']['scaleTargetRef']['name'] == deployment['metadata']['name']
    assert hpa['spec']['minReplicas'] >= 2
    # Key files come from a Secret, mounted apart from the configuration (not inside it).
    (keys,) = [v for v in deployment['spec']['template']['spec']['volumes'] if v['name'] == 'keys']
    assert keys['secret']['secretName'] == 'a2a-bridge-keys' and keys['secret']['optional'] is True
    mounts = {m['name']: m['mountPath'] for m in container['volumeMounts']}
    assert not mounts['keys'].startswith(mounts['config'] + '/'), mounts
    # The credentials variable the file names comes from a Secret of the render.
    variable = config['auth']['bearer_tokens_env']
    (env,) = [e for e in container['env'] if e['name'] == variable]
    reference = env['valueFrom']['secretKeyRef']
    secret = one(objects, 'Secret', reference['name'])
    assert reference['key'] in secret['data']


def test_the_service_monitor_overlay_scrapes_the_metrics_port():
    objects = render(DEPLOY / 'overlays/gateway-servicemonitor')
    monitor = one(objects, 'ServiceMonitor')
    service = one(objects, 'Service', 'a2a-bridge')
    assert monitor['spec']['selector']['matchLabels'].items() <= service['metadata']['labels'].items()
    (endpoint,) = monitor['spec']['endpoints']
    assert endpoint['port'] in {p['name'] for p in service['spec']['ports']} and endpoint['path'] == '/metrics'
    # Everything else is the gateway's, and validates as it does.
    for obj in objects:
        if obj['kind'] != 'ServiceMonitor':
            kubernetes_validate.validate(obj, KUBERNETES, strict=True)


def test_the_bridge_accepts_every_mounted_configuration(rendered, tmp_path):
    name, objects = rendered
    binary = Path(os.environ.get('A2A_BRIDGE_BIN', ROOT / 'target/debug/a2a-bridge'))
    if not binary.is_file():
        pytest.skip(f'bridge binary not built: {binary}')
    deployment, container = bridge_container(objects)
    (volume,) = [v for v in deployment['spec']['template']['spec']['volumes'] if v['name'] == 'config']
    text = one(objects, 'ConfigMap', volume['configMap']['name'])['data']['bridge.toml']
    path = tmp_path / 'bridge.toml'
    path.write_text(text)
    env = {**os.environ, **{e['name']: 'token-from-secret' for e in container.get('env', []) if 'valueFrom' in e}}
    checked = subprocess.run([str(binary), 'validate-config', str(path)], capture_output=True, text=True, env=env)
    assert checked.returncode == 0, (name, checked.stdout, checked.stderr)

"""The same clients and agents without the bridge: the control group of the interop suite.

Same-revision pairs talk directly and must pass every scenario the agent itself is responsible
for, which shows the clients, the agents and the checks are sound. Cross-revision pairs talk
directly and must fail, which shows that a passing bridge run is the bridge's doing. None of
these tests needs the bridge binary.
"""

from __future__ import annotations

import pytest

import interop_checks as checks
from conftest import REVISIONS

SAME = [(r, r) for r in REVISIONS]
CROSS = [('0.3', '1.0'), ('1.0', '0.3')]

# What a cross-revision pair must not be able to do on its own.
CORE = ['send_blocking', 'send_nonblocking_get', 'stream', 'cancel', 'input_required', 'parts', 'message']


def pair_id(pair: tuple[str, str]) -> str:
    return f'client{pair[0]}-agent{pair[1]}'


def direct_cases():
    for pair in SAME:
        for scenario in checks.CHECKS:
            if scenario in checks.BRIDGE_ONLY or not checks.applies(scenario, pair[0]):
                continue
            if scenario in checks.BRIDGE_ONLY_FOR_AGENT.get(pair[1], set()):
                continue
            yield pytest.param(pair, scenario, id=f'{pair_id(pair)}-{scenario}')


@pytest.mark.parametrize(('pair', 'scenario'), list(direct_cases()))
def test_a_same_revision_pair_passes_without_the_bridge(observe, pair, scenario):
    checks.check(observe(pair[0], pair[1], 'direct'), scenario)


@pytest.mark.parametrize('pair', SAME, ids=pair_id)
def test_the_agents_themselves_accept_an_undeclared_media_type(observe, pair):
    # The refusal asserted through the bridge must be the bridge's own: the agents let it pass.
    observed = observe(pair[0], pair[1], 'direct').scenario('undeclared_media')
    assert 'unexpected' in observed, checks.show(observed)


@pytest.mark.parametrize('pair', CROSS, ids=pair_id)
def test_a_cross_revision_pair_fails_without_the_bridge(observe, pair):
    obs = observe(pair[0], pair[1], 'direct')
    if 'discoveryError' in obs.document:
        return
    passed = []
    for scenario in CORE:
        try:
            checks.check(obs, scenario)
        except AssertionError:
            continue
        passed.append(scenario)
    assert not passed, (
        f'client {pair[0]} talked to agent {pair[1]} without the bridge in: {passed}\n'
        f'{checks.show(obs.document)}'
    )


@pytest.mark.parametrize(
    ('agent', 'scenario'),
    [(agent, scenario) for agent, names in checks.BRIDGE_ONLY_FOR_AGENT.items() for scenario in sorted(names)],
)
def test_an_agent_alone_fails_what_the_bridge_does_for_it(observe, agent, scenario):
    # What the bridge adds for an agent of this revision must be missing without it: a2a-sdk
    # 0.3 refuses a resubscription to a task waiting for input.
    with pytest.raises(AssertionError):
        checks.check(observe(agent, agent, 'direct'), scenario)

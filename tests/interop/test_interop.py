"""Every pair of real SDK peers, {0.3 client, 1.0 client} x {0.3 agent, 1.0 agent}, through the
bridge.

Each test reads one scenario of one client run (see `conftest.observe`) and applies that
scenario's assertions from `interop_checks`. The tests skip only when the bridge binary does not
exist.
"""

from __future__ import annotations

import pytest

import interop_checks as checks
from conftest import REVISIONS

PAIRS = [(client, agent) for client in REVISIONS for agent in REVISIONS]


def pair_id(pair: tuple[str, str]) -> str:
    return f'client{pair[0]}-agent{pair[1]}'


@pytest.fixture(params=PAIRS, ids=pair_id)
def pair(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param


def through_bridge(observe, pair: tuple[str, str], scenario: str) -> None:
    client, agent = pair
    obs = observe(client, agent, 'bridge')
    checks.check_through_bridge(obs, scenario)


def test_the_agent_card_is_discovered_through_the_bridge_in_the_clients_revision(observe, pair):
    through_bridge(observe, pair, 'card')


def test_a_blocking_send_returns_a_completed_task_with_its_artifact(observe, pair):
    through_bridge(observe, pair, 'send_blocking')


def test_a_non_blocking_send_returns_early_and_get_task_honours_history_length(observe, pair):
    through_bridge(observe, pair, 'send_nonblocking_get')


def test_every_streamed_event_arrives_in_order_and_as_it_happens(observe, pair):
    through_bridge(observe, pair, 'stream')


def test_a_running_task_can_be_canceled(observe, pair):
    through_bridge(observe, pair, 'cancel')


def test_resubscribing_to_a_running_task_delivers_its_live_updates_and_ends_canceled(observe, pair):
    through_bridge(observe, pair, 'resubscribe')


def test_a_subscription_to_an_input_required_task_stays_open_until_the_task_completes(observe, pair):
    through_bridge(observe, pair, 'subscribe_input_required')


def test_an_input_required_task_completes_after_a_follow_up_in_the_same_task(observe, pair):
    through_bridge(observe, pair, 'input_required')


def test_file_and_data_parts_arrive_intact_in_both_directions(observe, pair):
    through_bridge(observe, pair, 'parts')


def test_push_notification_configs_can_be_created_read_listed_and_deleted(observe, pair):
    through_bridge(observe, pair, 'push_config')


def test_an_unknown_task_is_reported_as_task_not_found(observe, pair):
    through_bridge(observe, pair, 'unknown_task')


def test_a_media_type_the_card_does_not_declare_is_refused(observe, pair):
    through_bridge(observe, pair, 'undeclared_media')


def test_the_extended_card_is_served_in_the_clients_revision(observe, pair):
    through_bridge(observe, pair, 'extended_card')


def test_an_agent_that_answers_with_a_message_reaches_the_client_as_a_message(observe, pair):
    through_bridge(observe, pair, 'message')


@pytest.mark.parametrize('pair', [p for p in PAIRS if p[0] == '1.0'], ids=pair_id)
def test_an_unsupported_a2a_version_header_is_refused_with_version_not_supported(observe, pair):
    through_bridge(observe, pair, 'version_unsupported')

"""An operator's wrong ``upgrade.from`` (the ``misconfigured-upgrade-from`` story, kafka only): the one story in
which a 2.1+ leader meets a pre-2.0 and a future subscription at once, answers every member with an error
assignment, and the members shut down. Before it no config reached the members' ErrorShutdown step, so a bug
there was seen by no checker."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import reference_impl.streams_probing.system as streams_system
from reference_impl.streams_probing.api import MemberOutcome, MemberUpdate
from reference_impl.streams_probing.config import StreamsProbingConfig
from reference_impl.streams_probing.releases import PROFILES
from reference_impl.streams_probing.system import StreamsProbingSystem
from rollcheck.core.registry import get_protocol
from rollcheck.explore.explorer import ExploreOptions, explore

ENTRY = get_protocol("streams_probing")
STORY = ENTRY.configs["misconfigured-upgrade-from"]


def test_the_story_is_a_kafka_story_the_gate_and_the_campaign_run_under_kafka_alone() -> None:
    assert "misconfigured-upgrade-from" in ENTRY.story_configs
    assert ENTRY.config_profiles(STORY) == ("kafka",)  # release 3.9 exists in the kafka profile only
    assert ENTRY.config_profiles(ENTRY.configs["small"]) == PROFILES


@pytest.mark.parametrize(("changes", "message"), [
    ({"procedure": "auto"}, "needs procedure 'operator'"),
    ({"misconfigured_upgrade_from": "9.9"}, "cannot be started with upgrade.from=9.9"),
    ({"misconfigured_upgrade_from": "2.0"}, "is no mistake in an upgrade from post-2.0"),
])
def test_a_misconfiguration_that_is_none_is_refused_in_one_line(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as exc:
        replace(STORY, **changes).validate()
    assert "\n" not in str(exc.value)


def test_the_group_stops_on_the_leaders_error_assignment_and_nothing_else_breaks() -> None:
    """STR-06 (nobody fails) is not claimed for a misconfigured upgrade; every other property holds, the
    members' ErrorShutdown is taken and every instance ends shut down (STR-W6)."""
    r = explore(ENTRY.build(STORY), ExploreOptions(stop_at_first=False))
    assert r.violations == []
    statuses = {p.id: p.status for p in r.properties}
    assert "STR-06" not in statuses and statuses["STR-09"] == "holds"
    assert statuses["STR-W6"].startswith("reached")


class _StillRunning(StreamsProbingSystem):
    """The bug a mutation of the ErrorShutdown branch plants: the member marks its failure but keeps running."""

    def _on_assignment(self, s: Any, i: int) -> Any:
        action, t = super()._on_assignment(s, i)
        if action.name == "ErrorShutdown":
            x = t.instances[i]
            t = replace(t, instances=(*t.instances[:i], replace(x, running=True), *t.instances[i + 1:]))
        return action, t


def test_a_member_that_keeps_running_after_its_shutdown_breaks_str09() -> None:
    r = explore(_StillRunning(STORY), ExploreOptions(stop_at_first=False))
    assert {v.property_id for v in r.violations} == {"STR-09"}


def test_a_member_that_ignores_the_error_code_leaves_the_story_unreached(monkeypatch: pytest.MonkeyPatch) -> None:
    real = streams_system.on_assignment

    def ignoring(*args: Any, **kwargs: Any) -> MemberUpdate:
        upd = real(*args, **kwargs)
        if upd.outcome is MemberOutcome.ERROR_SHUTDOWN:
            return MemberUpdate(upd.used_version, False, MemberOutcome.NONE, upd.error)
        return upd

    monkeypatch.setattr(streams_system, "on_assignment", ignoring)
    r = explore(ENTRY.build(STORY), ExploreOptions(stop_at_first=False))
    statuses = {p.id: p.status for p in r.properties}
    assert not statuses["STR-W6"].startswith("reached"), statuses


def test_under_the_kip_rules_the_same_mistake_fails_the_leader() -> None:
    """The KIP's assignor has no error assignment: a 2.0 leader meeting the misconfigured member and a future
    one fails (its release cannot even probe both); STR-W6 does not apply there."""
    cfg = StreamsProbingConfig(from_release="2.0", to_release="post-2.0", procedure="operator",
                               misconfigured_upgrade_from="1.1")
    ts = ENTRY.build(cfg)
    assert "STR-W6" not in {p.id for p in ts.properties()} and "STR-06" not in {p.id for p in ts.properties()}
    r = explore(ts, ExploreOptions(stop_at_first=False))
    assert r.violations == []


def test_operator_from_0101_is_where_the_new_release_refuses_the_old_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """1.1 lists only "0.10.0" for upgrade.from, so an operator upgrading a 0.10.1 group has nothing to set. The
    conformance config is the one operator upgrade with that refusal: a reference that set the old release's name
    anyway (the campaign's config.py:123) differs there from the spec's own reading, which conform compares."""
    import reference_impl.streams_probing.config as streams_config
    from reference_impl.streams_probing.releases import ConfigException, configured_metadata_version
    from specs.streams_probing import first_upgrade_from

    cfg = ENTRY.configs["operator-from-0.10.1"]
    assert "operator-from-0.10.1" in ENTRY.conform_configs
    with pytest.raises(ConfigException, match=r"String must be one of: null, 0\.10\.0$"):
        configured_metadata_version(cfg.new, cfg.old.name, cfg.profile)
    assert cfg.upgrade_from is None and first_upgrade_from(cfg) is None
    monkeypatch.setattr(streams_config, "configured_metadata_version", lambda *a: 2)
    assert cfg.upgrade_from == "0.10.1" != first_upgrade_from(cfg)

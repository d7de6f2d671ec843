"""The state of the ``streams_probing`` reference (reference_impl/streams_probing/system.py): the group's instances
and its rebalances.

Its own module, so that the properties and the Z3 model read the state without importing the rules
(the layering test, tests/test_layers.py)."""

from __future__ import annotations

from dataclasses import dataclass

REBALANCE_CAP = 3  # rebalances since the last join are counted up to this (the properties look at <= 2)


@dataclass(frozen=True)
class Delivered:
    """An assignment a member received and has not processed yet (the fields version probing reads)."""

    version: int
    supported: int
    error: int  # an AssignorError code
    probing_reply: bool  # the empty assignment a kip leader sends to a future member


@dataclass(frozen=True)
class StreamsInstance:
    release: str
    upgrade_from: str | None
    used_version: int  # usedSubscriptionMetadataVersion (in memory: a restart resets it)
    running: bool
    bounces: int  # rolling bounces done on this instance
    inbox: Delivered | None
    last_version: int  # version of the last assignment it processed (0: none yet)
    failure: str  # "" or what killed it (an exception message or the error code)


@dataclass(frozen=True)
class StreamsGroupState:
    instances: tuple[StreamsInstance, ...]
    rebalance_pending: bool
    follow_up: int  # the leader (index) that still has to trigger its follow-up rebalance, or -1
    rebalances: int  # completed rebalances since the last member joined or left (capped)
    leader: int  # the leader of the last rebalance, or -1
    crashes: int

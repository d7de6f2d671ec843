"""The state of the ``metadata_version`` reference (reference_impl/metadata_version/system.py): voters, brokers and
the metadata log.

Its own module, so that the properties and the Z3 model read the state without importing the rules
(the layering test, tests/test_layers.py)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class NodeStatus(enum.Enum):
    RUNNING = 0
    DOWN = 1  # crashed; recovers on the same software
    TERMINATED = 2  # stopped itself on a metadata.version its binary cannot read


@dataclass(frozen=True)
class Voter:
    software: str
    status: NodeStatus
    offset: int  # index in ``log`` of the last entry it has read


@dataclass(frozen=True)
class Broker:
    software: str
    status: NodeStatus
    offset: int
    registration: str  # the software whose ranges the controller holds for it ("" = not registered)
    fenced: bool
    rpc_level: int  # the metadata.version whose RPCs and records it uses (0 when not running)


@dataclass(frozen=True)
class MetadataVersionState:
    voters: tuple[Voter, ...]
    brokers: tuple[Broker, ...]
    leader: int  # index of the active controller among the voters, -1 when none
    log: tuple[int, ...]  # metadata.version levels not yet read by every node; log[-1] is committed
    records: frozenset[int]  # record features in the committed image, by the level that introduced them

    @property
    def level(self) -> int:
        return self.log[-1]

    def broker_level(self, i: int) -> int:
        return self.log[self.brokers[i].offset]

    def voter_level(self, i: int) -> int:
        return self.log[self.voters[i].offset]

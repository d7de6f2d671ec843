"""KIP-584 feature versions (ZooKeeper era) as a Z3 transition relation.

An independent restatement of ``reference_impl/features/system.py``: the ``/features`` node (absent,
DISABLED or ENABLED, its epoch and finalized ranges), the controller, each broker (release, status, cached
epoch and features, registered, notified), the registration queue (slots ``q0..q{n-1}``, -1 when empty),
the client, and the restart / IBP bounds. An UpdateFeatures request is decided by
:func:`model.decisions.features.features_update_rule`, the formula the differential check compares with the
reference's ``FeatureController`` over its whole bounded domain.

Encoded: every action (ElectController, StartBroker, ProcessBrokerRegistration, UpdateFeatures,
DeliverFeaturesNotification, ReadApiVersions, RestartBroker, DeprecateMinLevel, SetIbp), requests of one update or
of two (``multi_update``: each update validated against the node before the request; under the revision's
``atomic`` semantics none is applied unless every one succeeds), and every mutation. Invariants: FEAT-01, FEAT-02,
FEAT-08, FEAT-09, FEAT-11. Step properties: FEAT-03 ... FEAT-07, FEAT-12, FEAT-14, FEAT-15 and FEAT-16, all of them
(FEAT-14 and FEAT-16 over the step's change, as the spec states them: the reference reads the step's label).
UpdateFeatures is split into one relation per operator request (``update_reqs``, ``parameter_relations``: the
action's ``updates`` and ``dry_run``); its ``result`` is the decision of
:func:`model.decisions.features.features_update_rule` on the state before (``_outcome``). A step property fails on
a step when some request that makes the step breaks it, as on the explorer's labelled edges.
Strengthening for k-induction: ``caches-behind-node`` (no cached epoch above the node's), which makes FEAT-04
1-inductive, and ``queue-needs-controller`` (no registration queued without a controller), which makes FEAT-14
so. Not encoded: the graph property FEAT-10 (liveness: the explorers only);
FEAT-13 (/features' bytes are Kafka's FeatureZNode JSON: the schema version, the keys and the JSON types exist
only in the bytes, and the fields here are the node they decode to; what it says of the decoded node is FEAT-02,
FEAT-09 and the brokers' caches, whose epochs ``caches-behind-node`` bounds).

The reference's state holds ``/features`` as bytes and a version (``reference_impl.features.system.ZNode``):
``values`` reads the bytes' JSON keys, ``from_values`` writes the node with the reference's encoder
(``FeatureZNode.encode`` under the config's profile), so a state round-trips exactly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import z3

from model.decisions.features import features_update_rule
from reference_impl.features.api import FeatureZNode, FeatureZNodeStatus, FinalizedVersionRange
from reference_impl.features.state import Broker, BrokerStatus, Client, FeaturesState, ZNode
from rollcheck.core.transition import TransitionSystem
from rollcheck.smt.core import Relation, SymbolicSystem, V, Value, frame

STOPPED, RUNNING, EXITED = 0, 1, 2
STATUS = {BrokerStatus.STOPPED: STOPPED, BrokerStatus.RUNNING: RUNNING, BrokerStatus.EXITED: EXITED}


class FeaturesZ3(SymbolicSystem):
    name = "features"

    def __init__(self, ts: TransitionSystem[Any]) -> None:
        super().__init__(ts)
        c = self.config
        self.n: int = c.brokers
        self.feats: tuple[str, ...] = c.feature_names
        self.rels = [r.name for r in c.releases]
        self.table = [{f: (lo, hi) for f, lo, hi in r.features} for r in c.releases]
        self.muts = frozenset(c.mutations)
        self.kip = c.profile == "kip"
        self.actions = {
            "ElectController": self._elect, "StartBroker": self._start,
            "ProcessBrokerRegistration": self._process, "UpdateFeatures": self._update,
            "DeliverFeaturesNotification": self._deliver, "ReadApiVersions": self._read,
            "RestartBroker": self._restart, "DeprecateMinLevel": self._deprecate, "SetIbp": self._set_ibp,
        }
        self.update_reqs = [(req, self._update_req(req)) for req in self.ts.requests]
        self.invariants = {"FEAT-01": self.feat01, "FEAT-02": self.feat02, "FEAT-08": self.feat08,
                           "FEAT-09": self.feat09, "FEAT-11": self.feat11}
        self.step_properties = {"FEAT-03": self.feat03, "FEAT-04": self.feat04, "FEAT-05": self.feat05,
                                "FEAT-06": self.feat06, "FEAT-07": self.feat07, "FEAT-12": self.feat12,
                                "FEAT-14": self.feat14, "FEAT-15": self.feat15, "FEAT-16": self.feat16}
        # FEAT-04 is not 1-inductive alone (a cached epoch could be above the node's); with this it is.
        # FEAT-14 is not 1-inductive alone (a state without a controller but with a queue would keep it on a
        # step that empties no queue); with FEAT-11's "no controller, no queue" it is.
        self.strengthening = {"caches-behind-node": self.caches_behind_node,
                              "queue-needs-controller": self.queue_needs_controller}
        self._json: dict[bytes, tuple[bool, tuple[tuple[str, FinalizedVersionRange], ...]]] = {}  # values' memo

    # ---- layout
    def _ranges(self, prefix: str) -> list[tuple[str, str]]:
        return [(f"{prefix}.{f}.{k}", s) for f in self.feats for k, s in (("has", "bool"), ("min", "int"),
                                                                          ("max", "int"))]

    def fields(self) -> list[tuple[str, str]]:
        out = [("node", "bool"), ("enabled", "bool"), ("epoch", "int"), *self._ranges("n"), ("ibp", "bool"),
               ("controller", "int"), ("qlen", "int"), *((f"q{k}", "int") for k in range(self.n)),
               ("cepoch", "int"), *self._ranges("c"), ("restarts", "int"), ("ibp_changes", "int")]
        for i in range(self.n):
            out += [(f"b{i}.rel", "int"), (f"b{i}.status", "int"), (f"b{i}.epoch", "int"), *self._ranges(f"b{i}"),
                    (f"b{i}.registered", "bool"), (f"b{i}.notified", "bool")]
        return out

    def wellformed(self, v: V) -> z3.BoolRef:
        c = self.config
        # max_epoch stops the update and deprecation writes only: a controller's election still enables or
        # disables versioning (Kafka's onControllerFailover), once per IBP value at most past the bound. A
        # bound of max_epoch here left those states out: the successor differential on every reachable state
        # of features:default found the reference electing a controller that Z3 could not.
        top = c.max_epoch + c.max_ibp_changes + 1
        out: list[Any] = [v["epoch"] >= 0, v["epoch"] <= top, v["controller"] >= -1, v["controller"] < self.n,
                          v["qlen"] >= 0, v["qlen"] <= self.n, v["cepoch"] >= -1, v["cepoch"] <= top,
                          v["restarts"] >= 0, v["restarts"] <= c.max_restarts, v["ibp_changes"] >= 0,
                          v["ibp_changes"] <= c.max_ibp_changes,
                          z3.Implies(z3.Not(v["node"]), z3.And(z3.Not(v["enabled"]), v["epoch"] == 0))]
        prefixes = ["n", "c", *(f"b{i}" for i in range(self.n))]
        for p in prefixes:
            for f in self.feats:
                h, lo, hi = v[f"{p}.{f}.has"], v[f"{p}.{f}.min"], v[f"{p}.{f}.max"]
                out.append(z3.If(h, z3.And(lo >= -8, hi <= 8), z3.And(lo == 0, hi == 0)))
        out += [z3.Implies(z3.Not(v["node"]), z3.Not(v[f"n.{f}.has"])) for f in self.feats]
        for k in range(self.n):
            out.append(z3.If(k < v["qlen"], z3.And(v[f"q{k}"] >= 0, v[f"q{k}"] < self.n), v[f"q{k}"] == -1))
        for i in range(self.n):
            out += [v[f"b{i}.rel"] >= 0, v[f"b{i}.rel"] < len(self.rels), v[f"b{i}.status"] >= 0,
                    v[f"b{i}.status"] <= 2, v[f"b{i}.epoch"] >= -1, v[f"b{i}.epoch"] <= top]
        return z3.And(out)

    # ---- reference <-> values
    def _put_ranges(self, out: dict[str, Value], prefix: str, feats: Any) -> None:
        have = {n: r for n, r in feats}
        for f in self.feats:
            r = have.get(f)
            out[f"{prefix}.{f}.has"] = r is not None
            out[f"{prefix}.{f}.min"] = r.min_version_level if r else 0
            out[f"{prefix}.{f}.max"] = r.max_version_level if r else 0
        unknown = set(have) - set(self.feats)
        if unknown:
            raise ValueError(f"features not in the config: {sorted(unknown)}")

    def _get_ranges(self, vals: Mapping[str, Value], prefix: str) -> tuple[tuple[str, FinalizedVersionRange], ...]:
        # Unchecked: an induction counterexample may hold a range the constructor would refuse.
        return tuple((f, FinalizedVersionRange.unchecked(int(vals[f"{prefix}.{f}.min"]),
                                                         int(vals[f"{prefix}.{f}.max"])))
                     for f in self.feats if vals[f"{prefix}.{f}.has"])

    def _node_json(self, data: bytes) -> tuple[bool, tuple[tuple[str, FinalizedVersionRange], ...]]:
        """(enabled, finalized ranges) of /features' bytes, by their JSON keys ("status", "features",
        "min_version_level", "max_version_level"), once per distinct bytes."""
        hit = self._json.get(data)
        if hit is None:
            doc = json.loads(data)
            ranges = tuple((f, FinalizedVersionRange.unchecked(int(r["min_version_level"]),
                                                               int(r["max_version_level"])))
                           for f, r in sorted(doc["features"].items()))
            hit = self._json[data] = (doc["status"] == FeatureZNodeStatus.ENABLED.value, ranges)
        return hit

    def values(self, s: FeaturesState) -> dict[str, Value]:
        z = s.znode
        enabled, ranges = self._node_json(z.data) if z is not None else (False, ())
        out: dict[str, Value] = {"node": z is not None, "enabled": enabled,
                                 "epoch": z.version if z is not None else 0, "ibp": s.ibp_enabled,
                                 "controller": s.controller, "qlen": len(s.registration_queue),
                                 "cepoch": s.client.epoch, "restarts": s.restarts, "ibp_changes": s.ibp_changes}
        self._put_ranges(out, "n", ranges)
        self._put_ranges(out, "c", s.client.features)
        for k in range(self.n):
            out[f"q{k}"] = s.registration_queue[k] if k < len(s.registration_queue) else -1
        for i, b in enumerate(s.brokers):
            out.update({f"b{i}.rel": self.rels.index(b.release), f"b{i}.status": STATUS[b.status],
                        f"b{i}.epoch": b.cache_epoch, f"b{i}.registered": b.registered,
                        f"b{i}.notified": b.notified})
            self._put_ranges(out, f"b{i}", b.cache)
        return out

    def from_values(self, vals: Mapping[str, Value]) -> FeaturesState:
        znode = None
        if vals["node"]:
            status = FeatureZNodeStatus.ENABLED if vals["enabled"] else FeatureZNodeStatus.DISABLED
            node = FeatureZNode(status, self._get_ranges(vals, "n"), int(vals["epoch"]))
            # What the controller's write leaves in ZooKeeper: the reference's encoder, the epoch as version.
            znode = ZNode(node.encode(self.config.profile), node.epoch)
        status_of = {v: k for k, v in STATUS.items()}
        brokers = tuple(Broker(self.rels[int(vals[f"b{i}.rel"])], status_of[int(vals[f"b{i}.status"])],
                               int(vals[f"b{i}.epoch"]), self._get_ranges(vals, f"b{i}"),
                               bool(vals[f"b{i}.registered"]), bool(vals[f"b{i}.notified"])) for i in range(self.n))
        queue = tuple(int(vals[f"q{k}"]) for k in range(int(vals["qlen"])))
        return FeaturesState(znode, bool(vals["ibp"]), int(vals["controller"]), brokers, queue,
                             Client(int(vals["cepoch"]), self._get_ranges(vals, "c")), int(vals["restarts"]),
                             int(vals["ibp_changes"]))

    # ---- supported ranges of a (symbolic) release
    def sup(self, rel: Any, f: str) -> tuple[Any, Any, Any]:
        """(supports, min_version, max_version) of feature ``f`` for release index ``rel``."""
        has: Any = z3.BoolVal(False)
        lo: Any = z3.IntVal(0)
        hi: Any = z3.IntVal(0)
        for k, t in enumerate(self.table):
            if f in t:
                has, lo, hi = (z3.If(rel == k, True, has), z3.If(rel == k, t[f][0], lo), z3.If(rel == k, t[f][1], hi))
            else:
                has = z3.If(rel == k, False, has)
        return has, lo, hi

    def fits(self, rel: Any, f: str, fmin: Any, fmax: Any) -> Any:
        has, lo, hi = self.sup(rel, f)
        if self.kip:  # KIP Validations: the max level in the supported range
            return z3.And(has, lo <= fmax, fmax <= hi)
        return z3.And(has, lo <= fmin, fmax <= hi)  # Kafka: the whole range inside

    def node_ok_for(self, v: V, rel: Any, node: dict[str, Any]) -> Any:
        """is_compatible (without the IBP guard): an absent or disabled node constrains nothing."""
        return z3.Or(z3.Not(node["node"]), z3.Not(node["enabled"]),
                     *[z3.And(*(z3.Implies(node[f"n.{f}.has"], self.fits(rel, f, node[f"n.{f}.min"],
                                                                         node[f"n.{f}.max"])) for f in self.feats))])

    def compatible(self, v: V, i: int, node: dict[str, Any]) -> Any:
        return z3.Or(z3.Not(v["ibp"]), self.node_ok_for(v, v[f"b{i}.rel"], node))

    def admits(self, v: V, i: int, node: dict[str, Any]) -> Any:
        return z3.BoolVal(True) if "register_incompatible" in self.muts else self.compatible(v, i, node)

    def node_of(self, v: V) -> dict[str, Any]:
        return {k: v[k] for k in ("node", "enabled", "epoch", *(f"n.{f}.{x}" for f in self.feats
                                                                for x in ("has", "min", "max")))}

    def cached(self, v: V, node: dict[str, Any], prefix: str) -> dict[str, Any]:
        """_cached: nothing while the node is absent; no features while disabled or under the old IBP, and then
        (kafka) no epoch either: Kafka 2.8's FinalizedFeatureCache is empty, ApiVersions serves -1."""
        show = z3.And(node["node"], node["enabled"], v["ibp"])
        out: dict[str, Any] = {f"{prefix}.epoch" if prefix != "c" else "cepoch": self.served_epoch(node, show)}
        for f in self.feats:
            h = z3.And(show, node[f"n.{f}.has"])
            out[f"{prefix}.{f}.has"] = h
            out[f"{prefix}.{f}.min"] = z3.If(h, node[f"n.{f}.min"], 0)
            out[f"{prefix}.{f}.max"] = z3.If(h, node[f"n.{f}.max"], 0)
        return out

    def served_epoch(self, node: dict[str, Any], show: Any) -> Any:
        """The epoch a broker serves after reading ``node``; ``show``: it caches the node's features."""
        if self.kip:
            return z3.If(node["node"], node["epoch"], -1)
        return z3.If(show, node["epoch"], -1)

    def written(self, v: V, changed: Any) -> dict[str, Any]:
        """After a write every running broker has a watch notification pending."""
        return {f"b{i}.notified": z3.If(z3.And(changed, v[f"b{i}.status"] == RUNNING), False, v[f"b{i}.notified"])
                for i in range(self.n)}

    def queue_without(self, v: V, i: Any) -> dict[str, Any]:
        """Remove broker ``i`` from the queue (ids in it are distinct)."""
        q = [v[f"q{k}"] for k in range(self.n)] + [z3.IntVal(-1)]
        present = z3.Or([z3.And(k < v["qlen"], q[k] == i) for k in range(self.n)])
        out: dict[str, Any] = {"qlen": z3.If(present, v["qlen"] - 1, v["qlen"])}
        for k in range(self.n):
            passed = z3.Or([z3.And(j < v["qlen"], q[j] == i) for j in range(k + 1)])
            out[f"q{k}"] = z3.If(passed, q[k + 1], q[k])
        return out

    def empty_queue(self) -> dict[str, Any]:
        return {"qlen": 0, **{f"q{k}": -1 for k in range(self.n)}}

    # ---- actions
    def init(self, v: V) -> z3.BoolRef:
        c = self.config
        r0 = self.rels.index(c.initial_release)
        out: list[Any] = [z3.Not(v["node"]), z3.Or([v["ibp"] == ibp for ibp in c.initial_ibp]), v["controller"] == -1,
                          v["qlen"] == 0, v["cepoch"] == -1, v["restarts"] == 0, v["ibp_changes"] == 0]
        out += [z3.Not(v[f"c.{f}.has"]) for f in self.feats]
        for i in range(self.n):
            out += [v[f"b{i}.rel"] == r0, v[f"b{i}.status"] == RUNNING, v[f"b{i}.epoch"] == -1,
                    z3.Not(v[f"b{i}.registered"]), v[f"b{i}.notified"],
                    *(z3.Not(v[f"b{i}.{f}.has"]) for f in self.feats)]
        return z3.And(out)

    def _elect(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        has, en, ep, ibp = v["node"], v["enabled"], v["epoch"], v["ibp"]
        any_feature = z3.Or([v[f"n.{f}.has"] for f in self.feats] or [z3.BoolVal(False)])
        for i in range(self.n):
            rel = v[f"b{i}.rel"]
            # setup_feature_versioning (KIP "Feature ZK node status")
            bootstrap = z3.And(ibp, z3.Not(has))  # new cluster: ENABLED with the controller's supported ranges
            enable = z3.And(ibp, has, z3.Not(en))  # IBP raised over a disabled node: ENABLED and empty
            create_disabled = z3.And(z3.Not(ibp), z3.Not(has))
            disable = z3.And(z3.Not(ibp), has, z3.Or(en, any_feature))
            changed = z3.Or(bootstrap, enable, create_disabled, disable)
            node: dict[str, Any] = {"node": True, "enabled": z3.If(changed, ibp, en),
                                    "epoch": z3.If(z3.Or(bootstrap, create_disabled), 0, z3.If(changed, ep + 1, ep))}
            for f in self.feats:
                s_has, s_lo, s_hi = self.sup(rel, f)
                keep = z3.Not(changed)
                node[f"n.{f}.has"] = z3.Or(z3.And(bootstrap, s_has), z3.And(keep, v[f"n.{f}.has"]))
                node[f"n.{f}.min"] = z3.If(z3.And(bootstrap, s_has), s_lo, z3.If(keep, v[f"n.{f}.min"], 0))
                node[f"n.{f}.max"] = z3.If(z3.And(bootstrap, s_has), s_hi, z3.If(keep, v[f"n.{f}.max"], 0))
            ch = {**node, **self.written(v, changed), "controller": i, **self.empty_queue()}
            for j in range(self.n):
                ch[f"b{j}.registered"] = z3.And(v[f"b{j}.status"] == RUNNING, self.admits(v, j, node))
            opts.append(z3.And(v[f"b{i}.status"] == RUNNING, frame(v, v2, ch)))
        return z3.And(v["controller"] < 0, z3.Or(opts))

    def started(self, v: V, i: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        """Broker ``i``'s startup read of /features in state ``v`` (``_started``): whether it runs, and its fields
        when it exits (its cache kept) or runs (what it read); unregistered either way."""
        node = self.node_of(v)
        # skip_startup_validation (FEAT-M8): the broker runs whatever /features says
        ok = z3.BoolVal(True) if "skip_startup_validation" in self.muts else self.compatible(v, i, node)
        exited = {f"b{i}.status": EXITED, f"b{i}.registered": False, f"b{i}.notified": True}
        running = {f"b{i}.status": RUNNING, **self.cached(v, node, f"b{i}"), f"b{i}.registered": False,
                   f"b{i}.notified": True}
        return ok, exited, running

    def _start(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.n):
            ok, exited, running = self.started(v, i)
            q = {"qlen": z3.If(v["controller"] >= 0, v["qlen"] + 1, v["qlen"]),
                 **{f"q{k}": z3.If(z3.And(v["controller"] >= 0, v["qlen"] == k), i, v[f"q{k}"]) for k in range(self.n)}}
            opts.append(z3.And(v[f"b{i}.status"] == STOPPED,
                               z3.If(ok, frame(v, v2, {**running, **q}), frame(v, v2, exited))))
        return z3.Or(opts)

    def _process(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        node = self.node_of(v)
        rest = {"qlen": v["qlen"] - 1, **{f"q{k}": (v[f"q{k + 1}"] if k + 1 < self.n else -1) for k in range(self.n)}}
        for j in range(self.n):
            admit = z3.And(v[f"b{j}.status"] == RUNNING, self.admits(v, j, node))
            opts.append(z3.And(v["q0"] == j, frame(v, v2, {f"b{j}.registered": admit, **rest})))
        return z3.And(v["qlen"] > 0, v["controller"] >= 0, z3.Or(opts))

    def _outcome(self, v: V, u: Any) -> tuple[Any, Any]:
        """(versioning enabled, the outcome of update ``u``) against state ``v``: without versioning the response
        has a top-level INVALID_REQUEST and nothing is written. Each update of a request is validated against
        the node as it was before the request (KafkaController.processFeatureUpdates)."""
        f = u.feature
        has_o: Any = z3.BoolVal(False)
        olo: Any = z3.IntVal(0)
        for i in range(self.n):
            h, lo, _hi = self.sup(v[f"b{i}.rel"], f)
            has_o, olo = z3.If(v["controller"] == i, h, has_o), z3.If(v["controller"] == i, lo, olo)
        live = [(v[f"b{i}.registered"], *self.sup(v[f"b{i}.rel"], f)) for i in range(self.n)]
        r = features_update_rule(self.config.profile, v[f"n.{f}.has"], v[f"n.{f}.min"], v[f"n.{f}.max"],
                                 z3.IntVal(u.max_version_level), z3.BoolVal(u.allow_downgrade), has_o, olo, live,
                                 self.muts)
        return z3.And(v["ibp"], v["node"], v["enabled"]), r

    def _applied(self, v: V, req: Any) -> tuple[Any, list[tuple[Any, Any, Any]]]:
        """(versioning enabled, per update of ``req``: the update, its outcome, whether it is applied). Under the
        revision's ``atomic`` semantics an update is applied only if every update of its request succeeds
        (``apply_partially_when_atomic``: each on its own, as under ``partial``); a dry run applies none."""
        outcomes = [(u, *self._outcome(v, u)) for u in req.feature_updates]
        versioning = outcomes[0][1]  # the same for every update: the state's, not the update's
        every = z3.And([r.error == 0 for _u, _ver, r in outcomes])
        atomic = self.config.semantics == "atomic" and "apply_partially_when_atomic" not in self.muts
        return versioning, [(u, r, z3.And(versioning, every if atomic else r.error == 0, not req.dry_run))
                            for u, _ver, r in outcomes]

    def _update_req(self, req: Any) -> Relation:
        """UpdateFeatures for one request of the operator (``ts.requests``): the action's parameters."""

        def rel(v: V, v2: V) -> z3.BoolRef:
            versioning, updates = self._applied(v, req)
            # A successful update always changes its feature (the same level, or deleting an absent feature,
            # fails), so the node is written iff some update is applied.
            applied = z3.Or([a for _u, _r, a in updates])
            bump = z3.And(versioning, z3.Not(applied), "bump_epoch_on_noop" in self.muts, not req.dry_run)
            changed = z3.Or(applied, bump)
            ch: dict[str, Any] = {"epoch": z3.If(changed, v["epoch"] + 1, v["epoch"]), **self.written(v, changed)}
            for u, r, a in updates:  # requests name each feature once (FeaturesConfig.operator_requests)
                f = u.feature
                ch.update({f"n.{f}.has": z3.If(a, r.present, v[f"n.{f}.has"]),
                           f"n.{f}.min": z3.If(a, r.min, v[f"n.{f}.min"]),
                           f"n.{f}.max": z3.If(a, r.max, v[f"n.{f}.max"])})
            return z3.And(v["controller"] >= 0, v["node"], v["epoch"] < self.config.max_epoch, frame(v, v2, ch))

        return rel

    def _update(self, v: V, v2: V) -> z3.BoolRef:
        return z3.Or([rel(v, v2) for _req, rel in self.update_reqs])

    def parameter_relations(self) -> list[tuple[str, dict[str, Any], Relation]]:
        return [("UpdateFeatures", {"updates": tuple((u.feature, u.max_version_level, u.allow_downgrade)
                                                     for u in req.feature_updates), "dry_run": req.dry_run}, rel)
                for req, rel in self.update_reqs]

    def _deliver(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        node = self.node_of(v)
        for i in range(self.n):
            ok = self.compatible(v, i, node)
            if "ignore_incompatible_notification" in self.muts:
                ok = z3.BoolVal(True)
            # An exiting controller gives up the controllership, as on a restart.
            ctl = z3.If(v["controller"] == i, -1, v["controller"])
            removed = self.queue_without(v, i)
            q = {k: z3.If(ctl < 0, val, removed[k]) for k, val in self.empty_queue().items()}
            exited = frame(v, v2, {f"b{i}.status": EXITED, f"b{i}.registered": False, f"b{i}.notified": True,
                                   "controller": ctl, **q})
            cache = frame(v, v2, {**self.cached(v, node, f"b{i}"), f"b{i}.notified": True})
            opts.append(z3.And(v[f"b{i}.status"] == RUNNING, z3.Not(v[f"b{i}.notified"]), z3.If(ok, cache, exited)))
        return z3.Or(opts)

    def _read(self, v: V, v2: V) -> z3.BoolRef:
        if not self.config.client:
            return z3.BoolVal(False)
        opts = []
        for i in range(self.n):
            adopt = v[f"b{i}.epoch"] > v["cepoch"]
            if "client_adopts_stale" in self.muts:
                adopt = z3.BoolVal(True)
            ch: dict[str, Any] = {"cepoch": z3.If(adopt, v[f"b{i}.epoch"], v["cepoch"])}
            for f in self.feats:
                for x in ("has", "min", "max"):
                    ch[f"c.{f}.{x}"] = z3.If(adopt, v[f"b{i}.{f}.{x}"], v[f"c.{f}.{x}"])
            opts.append(z3.And(v[f"b{i}.status"] == RUNNING, v[f"b{i}.epoch"] >= 0, frame(v, v2, ch)))
        return z3.Or(opts)

    def _restart(self, v: V, v2: V) -> z3.BoolRef:
        opts = []
        for i in range(self.n):
            ctl = z3.If(v["controller"] == i, -1, v["controller"])
            removed = self.queue_without(v, i)
            q = {k: z3.If(ctl < 0, val, removed[k]) for k, val in self.empty_queue().items()}
            for r in range(len(self.rels)):
                ch = {f"b{i}.rel": r, f"b{i}.status": STOPPED, f"b{i}.epoch": -1, f"b{i}.registered": False,
                      f"b{i}.notified": True, **{f"b{i}.{f}.{x}": (False if x == "has" else 0) for f in self.feats
                                                 for x in ("has", "min", "max")},
                      "controller": ctl, **q, "restarts": v["restarts"] + 1}
                opts.append(z3.And(v[f"b{i}.status"] != STOPPED, frame(v, v2, ch)))
        return z3.And(v["restarts"] < self.config.max_restarts, z3.Or(opts))

    def _deprecate(self, v: V, v2: V) -> z3.BoolRef:
        c = self.config
        if not (c.deprecation and self.kip):
            return z3.BoolVal(False)
        ch: dict[str, Any] = {}
        changes = []
        for f in self.feats:
            fmin, fmax = v[f"n.{f}.min"], v[f"n.{f}.max"]
            highest: Any = fmin  # the highest supported minimum over live brokers (default: the finalized one)
            seen: Any = z3.BoolVal(False)
            for i in range(self.n):
                h, lo, _hi = self.sup(v[f"b{i}.rel"], f)
                take = z3.And(v[f"b{i}.registered"], h)
                highest = z3.If(take, z3.If(seen, z3.If(lo > highest, lo, highest), lo), highest)
                seen = z3.Or(seen, take)
            raised = z3.If(highest > fmin, highest, fmin)
            new_min = z3.If(raised < fmax, raised, fmax)
            changes.append(z3.And(v[f"n.{f}.has"], new_min != fmin))
            ch[f"n.{f}.min"] = z3.If(v[f"n.{f}.has"], new_min, fmin)
        changed = z3.Or(changes)
        ch.update({"epoch": v["epoch"] + 1, **self.written(v, True)})
        return z3.And(v["controller"] >= 0, v["ibp"], v["node"], v["epoch"] < c.max_epoch, v["enabled"], changed,
                      frame(v, v2, ch))

    def _set_ibp(self, v: V, v2: V) -> z3.BoolRef:
        """The roll restarts every running broker under the new IBP (``set_ibp``); the others stay down."""
        rolled = {**v, "ibp": z3.Not(v["ibp"])}
        ch: dict[str, Any] = {"ibp": rolled["ibp"], "controller": -1, **self.empty_queue(),
                              "ibp_changes": v["ibp_changes"] + 1}
        for i in range(self.n):
            ok, exited, running = self.started(rolled, i)
            up = v[f"b{i}.status"] == RUNNING
            for k, val in running.items():  # an exiting broker keeps its cache (exited names no cache field)
                ch[k] = z3.If(up, z3.If(ok, val, exited.get(k, v[k])), v[k])
        return z3.And(v["ibp_changes"] < self.config.max_ibp_changes, frame(v, v2, ch))

    # ---- invariants (properties/features.py)
    def _enabled(self, v: V) -> Any:
        return z3.And(v["ibp"], v["node"], v["enabled"])

    def _all_fit(self, v: V, i: int) -> Any:
        return z3.And([z3.Implies(v[f"n.{f}.has"], self.fits(v[f"b{i}.rel"], f, v[f"n.{f}.min"], v[f"n.{f}.max"]))
                       for f in self.feats])

    def feat01(self, v: V) -> z3.BoolRef:
        return z3.Implies(self._enabled(v), z3.And([z3.Implies(z3.And(v[f"b{i}.registered"],
                                                                      v[f"b{i}.status"] == RUNNING),
                                                               self._all_fit(v, i)) for i in range(self.n)]))

    def feat02(self, v: V) -> z3.BoolRef:
        return z3.And([z3.Implies(v[f"n.{f}.has"], z3.And(1 <= v[f"n.{f}.min"], v[f"n.{f}.min"] <= v[f"n.{f}.max"]))
                       for f in self.feats])

    def feat08(self, v: V) -> z3.BoolRef:
        return z3.Implies(self._enabled(v), z3.And([z3.Implies(z3.And(v[f"b{i}.notified"],
                                                                      v[f"b{i}.status"] == RUNNING),
                                                               self._all_fit(v, i)) for i in range(self.n)]))

    def feat09(self, v: V) -> z3.BoolRef:
        return z3.Or(z3.Not(v["node"]), v["enabled"], *(z3.Not(z3.Or([v[f"n.{f}.has"] for f in self.feats]
                                                                      or [z3.BoolVal(False)])),))

    def feat11(self, v: V) -> z3.BoolRef:
        ctl = v["controller"]
        live_ctl = z3.Or(ctl < 0, *(z3.And(ctl == i, v[f"b{i}.status"] == RUNNING) for i in range(self.n)))
        entries = []
        for k in range(self.n):
            q = v[f"q{k}"]
            waiting = z3.Or([z3.And(q == i, v[f"b{i}.status"] == RUNNING, z3.Not(v[f"b{i}.registered"]))
                             for i in range(self.n)])
            distinct = [q != v[f"q{j}"] for j in range(k)]
            entries.append(z3.Implies(k < v["qlen"], z3.And(waiting, *distinct)))
        return z3.And(live_ctl, z3.Implies(ctl < 0, v["qlen"] == 0), *entries)

    # ---- step properties (properties/features.py): the request (the action's parameters) is recovered by
    # one sub-relation of UpdateFeatures per request; a property fails on a step if some request that
    # makes the step breaks it (as the explorer checks every labelled edge).
    def _node_fields(self) -> list[str]:
        return ["node", "enabled", "epoch", *(f"n.{f}.{x}" for f in self.feats for x in ("has", "min", "max"))]

    def _node_same(self, v: V, v2: V) -> z3.BoolRef:
        return z3.And([v2[k] == v[k] for k in self._node_fields()])

    def caches_behind_node(self, v: V) -> z3.BoolRef:
        """No cached epoch (client, brokers) is above the node's; -1 while there is no node."""
        caches = [v["cepoch"], *(v[f"b{i}.epoch"] for i in range(self.n))]
        return z3.And([z3.If(v["node"], e <= v["epoch"], e == -1) for e in caches])

    def queue_needs_controller(self, v: V) -> z3.BoolRef:
        """No registration is queued without an active controller (FEAT-11's second conjunct)."""
        return z3.Implies(v["controller"] < 0, v["qlen"] == 0)

    def feat03(self, v: V, v2: V) -> z3.BoolRef:
        """/features is never deleted; created at epoch 0; every other change bumps its epoch by one."""
        return z3.Or(self._node_same(v, v2),
                     z3.And(v2["node"], z3.If(v["node"], v2["epoch"] == v["epoch"] + 1, v2["epoch"] == 0)))

    def feat04(self, v: V, v2: V) -> z3.BoolRef:
        """The client's epoch and a broker's cached epoch (running before and after) never go down; a broker's
        cleared cache serves none (-1), which is no epoch; at the same epoch the client keeps what it knows."""
        same = z3.And([v2[f"c.{f}.{x}"] == v[f"c.{f}.{x}"] for f in self.feats for x in ("has", "min", "max")])
        return z3.And(v2["cepoch"] >= v["cepoch"], z3.Implies(v2["cepoch"] == v["cepoch"], same),
                      *(z3.Implies(z3.And(v[f"b{i}.status"] == RUNNING, v2[f"b{i}.status"] == RUNNING),
                                   z3.Or(v2[f"b{i}.epoch"] >= v[f"b{i}.epoch"], v2[f"b{i}.epoch"] == -1))
                        for i in range(self.n)))

    def feat05(self, v: V, v2: V) -> z3.BoolRef:
        """An UpdateFeatures lowers (or deletes) a finalized max level only of its own feature, with the flag."""
        out = []
        for req, rel in self.update_reqs:
            flagged = {u.feature for u in req.feature_updates if u.allow_downgrade}
            kept = [z3.Not(z3.And(v[f"n.{f}.has"], z3.Or(z3.Not(v2[f"n.{f}.has"]), v2[f"n.{f}.max"] < v[f"n.{f}.max"])))
                    for f in self.feats if f not in flagged]
            out.append(z3.Implies(rel(v, v2), z3.And(kept)))
        return z3.And(out)

    def feat06(self, v: V, v2: V) -> z3.BoolRef:
        """A failed update (top-level error, or its own failure; under ``atomic`` any update of its request
        failed) leaves its feature as it was, and a request that applies nothing leaves the node as it was
        (epoch included); a successful non-dry update is applied: the level set, or the feature deleted
        (level < 1)."""
        out = []
        atomic = self.config.semantics == "atomic"
        for req, rel in self.update_reqs:
            versioning, outcomes = self._applied(v, req)
            every = z3.And([r.error == 0 for _u, r, _a in outcomes])
            ok, succeeded = [], []
            for u, r, _a in outcomes:
                f, lvl = u.feature, u.max_version_level
                success = z3.And(versioning, every if atomic else r.error == 0)
                if req.dry_run:
                    applied: Any = z3.BoolVal(True)
                elif lvl < 1:
                    applied = z3.Not(v2[f"n.{f}.has"])
                else:
                    applied = z3.And(v2[f"n.{f}.has"], v2[f"n.{f}.max"] == lvl)
                same = z3.And([v2[f"n.{f}.{x}"] == v[f"n.{f}.{x}"] for x in ("has", "min", "max")])
                ok.append(z3.If(success, applied, same))
                succeeded.append(success)
            # The revision: one failure and nothing is applied; and a request that applies nothing leaves the
            # node untouched, its epoch included.
            ok.append(z3.Implies(z3.Not(z3.Or(succeeded)), self._node_same(v, v2)))
            out.append(z3.Implies(rel(v, v2), z3.And(ok)))
        return z3.And(out)

    def feat12(self, v: V, v2: V) -> z3.BoolRef:
        """A broker started (STOPPED -> RUNNING: only StartBroker does it) under an active controller is
        appended to the registration queue, the entries before it kept."""
        out = []
        for i in range(self.n):
            started = z3.And(v[f"b{i}.status"] == STOPPED, v2[f"b{i}.status"] == RUNNING, v["controller"] >= 0)
            kept = [z3.Implies(k < v["qlen"], v2[f"q{k}"] == v[f"q{k}"]) for k in range(self.n)]
            slot = z3.Or([z3.And(v["qlen"] == k, v2[f"q{k}"] == i) for k in range(self.n)])
            out.append(z3.Implies(started, z3.And(v2["qlen"] == v["qlen"] + 1, slot, *kept)))
        return z3.And(out)

    def feat14(self, v: V, v2: V) -> z3.BoolRef:
        """The registration queue changes only as the controller's event queue can: a controller change (or
        none) empties it, a started broker (STOPPED -> RUNNING) is appended, a broker that stops running or
        restarts leaves it, any other step leaves it or takes its head (no broker but the head changed)."""
        n = self.n

        def queue_is(q: Mapping[str, Any]) -> Any:
            return z3.And(v2["qlen"] == q["qlen"], *(v2[f"q{k}"] == q[f"q{k}"] for k in range(n)))

        same = queue_is({"qlen": v["qlen"], **{f"q{k}": v[f"q{k}"] for k in range(n)}})
        fields = ("rel", "status", "epoch", "registered", "notified",
                  *(f"{f}.{x}" for f in self.feats for x in ("has", "min", "max")))
        tail = {"qlen": v["qlen"] - 1, **{f"q{k}": (v[f"q{k + 1}"] if k + 1 < n else z3.IntVal(-1)) for k in range(n)}}
        popped = z3.And(v["qlen"] > 0, queue_is(tail),
                        *(z3.Or(v["q0"] == j, z3.And([v2[f"b{j}.{x}"] == v[f"b{j}.{x}"] for x in fields]))
                          for j in range(n)))
        started = [z3.And(v[f"b{i}.status"] == STOPPED, v2[f"b{i}.status"] == RUNNING) for i in range(n)]
        # Stopped running (a restart, an exit on a notification) or restarted (EXITED -> STOPPED).
        left = [z3.Or(z3.And(v[f"b{i}.status"] == RUNNING, v2[f"b{i}.status"] != RUNNING),
                      z3.And(v[f"b{i}.status"] == EXITED, v2[f"b{i}.status"] == STOPPED)) for i in range(n)]
        appended = [queue_is({"qlen": v["qlen"] + 1, **{f"q{k}": z3.If(v["qlen"] == k, i, v[f"q{k}"])
                                                         for k in range(n)}}) for i in range(n)]
        cases = [*(z3.Implies(started[i], appended[i]) for i in range(n)),
                 *(z3.Implies(left[i], queue_is(self.queue_without(v, i))) for i in range(n)),
                 z3.Implies(z3.Not(z3.Or(*started, *left)), z3.Or(same, popped))]
        kept = z3.And(v2["controller"] >= 0, v2["controller"] == v["controller"])
        return z3.If(kept, z3.And(cases), v2["qlen"] == 0)

    def feat16(self, v: V, v2: V) -> z3.BoolRef:
        """Below the migration IBP a broker's read of /features (a start: STOPPED -> not STOPPED; a notification:
        a running broker's pending watch fired, it not stopped; the IBP roll down: every running broker restarts)
        leaves it running with no features, serving no epoch under kafka, the node's version under kip (-1 without
        a node). Stated over the step's change, as FEAT-14 is; "below" is the IBP after the step."""
        out = []
        for i in range(self.n):
            b = f"b{i}"
            started = z3.And(v[f"{b}.status"] == STOPPED, v2[f"{b}.status"] != STOPPED)
            notified = z3.And(v[f"{b}.status"] == RUNNING, z3.Not(v[f"{b}.notified"]), v2[f"{b}.notified"],
                              v2[f"{b}.status"] != STOPPED)
            runs_unvalidated = z3.And(v2[f"{b}.status"] == RUNNING,
                                      v2[f"{b}.epoch"] == (z3.If(v["node"], v["epoch"], -1) if self.kip else -1),
                                      *(z3.Not(v2[f"{b}.{f}.has"]) for f in self.feats))
            rolled = z3.And(v["ibp"] != v2["ibp"], v[f"{b}.status"] == RUNNING)
            out.append(z3.Implies(z3.And(z3.Not(v2["ibp"]), z3.Or(started, notified, rolled)), runs_unvalidated))
        return z3.And(out)

    def feat15(self, v: V, v2: V) -> z3.BoolRef:
        """A DeprecateMinLevel step (kip only) keeps every finalized feature and its max level and sets its min
        to the highest supported minimum among the live (registered) brokers that support it, never lowered,
        never above the max; and it changes some min."""
        out = []
        for f in self.feats:
            lo, hi = v[f"n.{f}.min"], v[f"n.{f}.max"]
            want: Any = lo
            for i in range(self.n):
                has, slo, _shi = self.sup(v[f"b{i}.rel"], f)
                want = z3.If(z3.And(v[f"b{i}.registered"], has, slo > want), slo, want)
            want = z3.If(want > hi, hi, want)
            out.append(z3.And(v2[f"n.{f}.has"] == v[f"n.{f}.has"], v2[f"n.{f}.max"] == hi,
                              z3.Implies(v[f"n.{f}.has"], v2[f"n.{f}.min"] == want)))
        changed = z3.Or([z3.And(v[f"n.{f}.has"], v2[f"n.{f}.min"] != v[f"n.{f}.min"]) for f in self.feats]
                        or [z3.BoolVal(False)])
        return z3.Implies(self._deprecate(v, v2), z3.And(self.kip, changed, *out))

    def feat07(self, v: V, v2: V) -> z3.BoolRef:
        """A dry run changes nothing at all."""
        same = z3.And([v2[k] == v[k] for k in v])
        return z3.And([z3.Implies(rel(v, v2), same) for req, rel in self.update_reqs if req.dry_run] or
                      [z3.BoolVal(True)])

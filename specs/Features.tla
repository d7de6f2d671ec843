------------------------------------ MODULE Features ------------------------------------
(***************************************************************************)
(* KIP-584: versioning scheme for features (ZooKeeper era).               *)
(*                                                                         *)
(* A cluster of N brokers, the ZooKeeper node /features, the controller    *)
(* and one client.  The controller writes /features when it is elected     *)
(* ("Feature ZK node status"), the operator sends UpdateFeatures requests  *)
(* ("Validations", "Guarantees"), brokers validate /features at startup    *)
(* and on every watch notification ("Broker protections"), registrations   *)
(* and updates share the controller's event queue ("Incompatible broker    *)
(* lifetime race condition"), a client keeps the highest epoch it saw      *)
(* ("Client discovery"), brokers are bounced onto any release, the         *)
(* controller may deprecate minimum levels ("Feature version deprecation") *)
(* and the operator may roll the IBP ("Deployment", phase 1).              *)
(*                                                                         *)
(* The same variables as FeaturesSystem.view, the same action names as     *)
(* reference_impl/features/system.py and the same property ids as          *)
(* properties/features.py (FEAT-01 is FEAT_01 here).  Profile "kip" is the *)
(* KIP as written; "kafka" is Apache Kafka 2.7-3.x in ZooKeeper mode       *)
(* (KafkaController.validateFeatureUpdate).  Semantics "partial" is the    *)
(* KIP as first written ("The API is not transactional"), "atomic" its     *)
(* revision ("if a single [update] can not be done, none ... are done").   *)
(*                                                                         *)
(* Broker ids are 0 .. N-1 as in Kafka; broker id i is brokers[i + 1].     *)
(* A finalized or supported range is <<min, max>>.                         *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Str;
    Profile,            \* "kip" or "kafka"
    \* @type: Str;
    Semantics,          \* "partial" or "atomic"
    \* @type: Int;
    N,                  \* brokers
    \* @type: Str -> (Str -> <<Int, Int>>);
    Supported,          \* release -> feature -> <<min_version, max_version>> its binary supports
    \* @type: Str;
    InitialRelease,
    \* @type: Set(Bool);
    InitialIbp,         \* TRUE: a new cluster (IBP >= migration_ibp_version); FALSE: an upgraded old one
    \* @type: Int;
    MaxEpoch,           \* no UpdateFeatures / deprecation write once /features reaches this epoch
    \* @type: Int;
    MaxRestarts,
    \* @type: Int;
    MaxIbpChanges,
    \* @type: Set(Int);
    Levels,             \* max version levels the operator asks for (< 1 asks for a deletion)
    \* @type: Bool;
    MultiUpdate,        \* the operator also sends requests with two updates (same allowDowngrade flag)
    \* @type: Bool;
    WithDryRun,         \* the operator also sends dry runs (kafka-features --dry-run)
    \* @type: Bool;
    WithDeprecation,    \* the controller's min-level deprecation (kip profile only)
    \* @type: Bool;
    WithClient,         \* a client reads ApiVersions
    \* @type: Set(Str);
    Mutations           \* broken variants (config.MUTATIONS); {} for the reference

VARIABLES
    \* @type: {status: Str, epoch: Int, features: Str -> <<Int, Int>>};
    node,               \* /features: status "ABSENT" (no node, epoch -1), "DISABLED" or "ENABLED"
    \* @type: Bool;
    ibp_enabled,        \* inter.broker.protocol.version >= migration_ibp_version
    \* @type: Int;
    controller,         \* broker id of the active controller, -1 when none
    \* @type: Seq({release: Str, status: Str, cache_epoch: Int, cache: Str -> <<Int, Int>>, registered: Bool, notified: Bool});
    brokers,            \* status "STOPPED", "RUNNING" or "EXITED" (shut down on an incompatibility)
    \* @type: Seq(Int);
    registration_queue, \* broker registrations waiting on the controller's event queue
    \* @type: {epoch: Int, features: Str -> <<Int, Int>>};
    client,             \* the highest FinalizedFeaturesEpoch (and its features) the client has seen
    \* @type: Int;
    restarts,
    \* @type: Int;
    ibp_changes

vars == <<node, ibp_enabled, controller, brokers, registration_queue, client, restarts, ibp_changes>>

Releases == DOMAIN Supported
Features == UNION {DOMAIN Supported[r] : r \in Releases}
BrokerIds == 0 .. N - 1
B(i) == brokers[i + 1]
Running(i) == B(i).status = "RUNNING"
Registered == {i \in BrokerIds : B(i).registered}

Max(S) == CHOOSE x \in S : \A y \in S : y <= x
Min2(a, b) == IF a <= b THEN a ELSE b
Max2(a, b) == IF a >= b THEN a ELSE b
Remove(q, i) == SelectSeq(q, LAMBDA x : x # i)

NoFeatures == [f \in {} |-> <<0, 0>>]
Absent == [status |-> "ABSENT", epoch |-> -1, features |-> NoFeatures]

(* A write to /features: ZooKeeper raises the node's version (the FinalizedFeaturesEpoch) by one. *)
Write(n, status, fs) == [status |-> status, epoch |-> n.epoch + 1, features |-> fs]

(* ------------------------------------------------------------------------------------------------ *)
(* Compatibility of a broker binary with a finalized feature (Validations; Broker protections: "the   *)
(* logic for the validations will be exactly the same").  kip: the finalized max level lies in the    *)
(* broker's supported range.  kafka: the whole finalized range lies inside it                         *)
(* (FinalizedVersionRange.isIncompatibleWith).  A feature the binary does not know is incompatible.   *)
Incompatible(rel, f, fin) ==
    IF f \notin DOMAIN Supported[rel] THEN TRUE
    ELSE LET sup == Supported[rel][f] IN
         IF Profile = "kafka" THEN sup[1] > fin[1] \/ sup[2] < fin[2]
         ELSE ~(sup[1] <= fin[2] /\ fin[2] <= sup[2])

(* A disabled or absent node constrains nothing; below migration_ibp_version a broker applies no     *)
(* validation at all ("each broker will validate that its IBP ... before applying validations").     *)
CompatibleAt(ibp, rel, n) ==
    \/ ~ibp
    \/ n.status # "ENABLED"
    \/ \A f \in DOMAIN n.features : ~Incompatible(rel, f, n.features[f])
Compatible(rel, n) == CompatibleAt(ibp_enabled, rel, n)

(* The controller keeps a broker in its live set only when it is compatible. *)
Admits(rel, n) == "register_incompatible" \in Mutations \/ Compatible(rel, n)

(* The epoch a broker with no features cached serves for a node of epoch e: kafka, none (-1: Kafka 2.8's  *)
(* listener clears its FinalizedFeatureCache on a disabled node and runs not at all below KAFKA_2_7_IV0, *)
(* and ApiVersions then carries UNKNOWN_FINALIZED_FEATURES_EPOCH); kip, the node's epoch (KIP silent).   *)
UncachedEpoch(e) == IF Profile = "kafka" THEN -1 ELSE e

(* What a broker caches from /features (and serves in ApiVersions): nothing while the node is absent, *)
(* no features while it is disabled or the IBP is old.                                               *)
CachedAt(ibp, n) ==
    IF n.status = "ABSENT" THEN [cache |-> NoFeatures, epoch |-> -1]
    ELSE IF n.status = "DISABLED" \/ ~ibp THEN [cache |-> NoFeatures, epoch |-> UncachedEpoch(n.epoch)]
    ELSE [cache |-> n.features, epoch |-> n.epoch]
Cached(n) == CachedAt(ibp_enabled, n)

(* Broker b after its startup read of /features under IBP ibp (Broker protections, point 1): it exits *)
(* when incompatible (its cache kept), else runs with what it read; unregistered either way (mutation:  *)
(* the startup validation is skipped).                                                                  *)
StartedAt(ibp, b) ==
    IF ~CompatibleAt(ibp, b.release, node) /\ "skip_startup_validation" \notin Mutations
    THEN [b EXCEPT !.status = "EXITED", !.registered = FALSE, !.notified = TRUE]
    ELSE LET c == CachedAt(ibp, node) IN
         [release |-> b.release, status |-> "RUNNING", cache_epoch |-> c.epoch, cache |-> c.cache,
          registered |-> FALSE, notified |-> TRUE]

(* After a write to /features every running broker has a watch notification pending. *)
Written(n) ==
    IF n = node THEN brokers
    ELSE [k \in 1 .. N |-> IF brokers[k].status = "RUNNING" THEN [brokers[k] EXCEPT !.notified = FALSE]
                           ELSE brokers[k]]

(* The configs this spec is written for (conform (d) compares it with the configs the reference accepts: *)
(* FeaturesConfig.validate): a known profile and semantics, 1 to 6 brokers, an initial release among the *)
(* releases, every supported range with 1 <= min <= max (SupportedVersionRange), at least one initial  *)
(* IBP, no negative bound, and only the broken variants this spec implements.  Release names and        *)
(* feature names are distinct by construction (Supported is a function): the binding refuses a config   *)
(* that names one twice.                                                                                *)
SpecMutations == {"skip_range_check", "allow_downgrade_unchecked", "apply_partially_when_atomic",
                  "bump_epoch_on_noop", "register_incompatible", "client_adopts_stale",
                  "ignore_incompatible_notification", "skip_min_level_check", "skip_startup_validation"}
ConfigOk(c) ==
    /\ c.Profile \in {"kip", "kafka"}
    /\ c.Semantics \in {"partial", "atomic"}
    /\ c.N \in 1..6
    /\ c.InitialRelease \in DOMAIN c.Supported
    /\ \A r \in DOMAIN c.Supported : \A f \in DOMAIN c.Supported[r] :
           1 <= c.Supported[r][f][1] /\ c.Supported[r][f][1] <= c.Supported[r][f][2]
    /\ c.InitialIbp # {}
    /\ c.MaxEpoch >= 0 /\ c.MaxRestarts >= 0 /\ c.MaxIbpChanges >= 0
    /\ c.Mutations \subseteq SpecMutations
ASSUME ConfigOk([Profile |-> Profile, Semantics |-> Semantics, N |-> N, Supported |-> Supported,
                 InitialRelease |-> InitialRelease, InitialIbp |-> InitialIbp, MaxEpoch |-> MaxEpoch,
                 MaxRestarts |-> MaxRestarts, MaxIbpChanges |-> MaxIbpChanges, Levels |-> Levels,
                 MultiUpdate |-> MultiUpdate, WithDryRun |-> WithDryRun, WithDeprecation |-> WithDeprecation,
                 WithClient |-> WithClient, Mutations |-> Mutations])

Init ==
    /\ node = Absent
    /\ ibp_enabled \in InitialIbp
    /\ controller = -1
    /\ brokers = [k \in 1 .. N |-> [release |-> InitialRelease, status |-> "RUNNING", cache_epoch |-> -1,
                                    cache |-> NoFeatures, registered |-> FALSE, notified |-> TRUE]]
    /\ registration_queue = <<>>
    /\ client = [epoch |-> -1, features |-> NoFeatures]
    /\ restarts = 0
    /\ ibp_changes = 0

(* ------------------------------------------------------------------------------------------------ *)
(* "Feature ZK node status": what a newly elected controller (running release rel) does to /features. *)
(* New cluster (IBP new, no node): ENABLED with every feature of its binary finalized at its supported *)
(* range.  IBP raised over a DISABLED node: ENABLED and empty (the operator finalizes later).  Old     *)
(* IBP: DISABLED and empty.  Otherwise the node is left alone.                                        *)
SetupFeatureVersioning(rel) ==
    IF ibp_enabled
    THEN IF node.status = "ABSENT" THEN [status |-> "ENABLED", epoch |-> 0, features |-> Supported[rel]]
         ELSE IF node.status = "DISABLED" THEN Write(node, "ENABLED", NoFeatures)
         ELSE node
    ELSE IF node.status = "ABSENT" THEN [status |-> "DISABLED", epoch |-> 0, features |-> NoFeatures]
         ELSE IF node.status = "ENABLED" \/ DOMAIN node.features # {} THEN Write(node, "DISABLED", NoFeatures)
         ELSE node

(* A running broker becomes controller; it reads every BrokerIdZnode and keeps the compatible running *)
(* brokers as live; registrations queued on the previous controller are gone.                        *)
ElectController(i) ==
    /\ controller < 0
    /\ Running(i)
    /\ LET n == SetupFeatureVersioning(B(i).release)
           w == Written(n)
       IN /\ node' = n
          /\ brokers' = [k \in 1 .. N |-> [w[k] EXCEPT !.registered =
                                               w[k].status = "RUNNING" /\ Admits(w[k].release, n)]]
    /\ controller' = i
    /\ registration_queue' = <<>>
    /\ UNCHANGED <<ibp_enabled, client, restarts, ibp_changes>>

(* Broker protections, point 1: a starting broker validates /features and exits when incompatible;    *)
(* otherwise it caches the node, registers, and its registration waits on the controller's queue     *)
(* (mutation: the startup validation is skipped).                                                     *)
StartBroker(i) ==
    /\ B(i).status = "STOPPED"
    /\ LET b == StartedAt(ibp_enabled, B(i)) IN
       /\ brokers' = [brokers EXCEPT ![i + 1] = b]
       /\ registration_queue' = IF controller >= 0 /\ b.status = "RUNNING" THEN Append(registration_queue, i)
                                ELSE registration_queue
    /\ UNCHANGED <<node, ibp_enabled, controller, client, restarts, ibp_changes>>

(* The controller takes the registration at the head of its queue: an incompatible broker is skipped, *)
(* never added to the live set, so never sent metadata.                                               *)
ProcessBrokerRegistration ==
    /\ registration_queue # <<>>
    /\ controller >= 0
    /\ LET i == Head(registration_queue) IN
       brokers' = [brokers EXCEPT ![i + 1].registered = Running(i) /\ Admits(B(i).release, node)]
    /\ registration_queue' = Tail(registration_queue)
    /\ UNCHANGED <<node, ibp_enabled, controller, client, restarts, ibp_changes>>

(* ------------------------------------------------------------------------------------------------ *)
(* UpdateFeatures.  The operator's requests: one FeatureUpdateKey (feature, maxVersionLevel,          *)
(* allowDowngrade) per feature, level and flag, as a dry run too; with MultiUpdate also two updates   *)
(* of two features with the same flag.                                                                *)
Updates == [feature : Features, level : Levels, allow : BOOLEAN]
Requests ==
    {[updates |-> <<u>>, dry_run |-> FALSE] : u \in Updates}
    \cup {[updates |-> <<u>>, dry_run |-> TRUE] : u \in IF WithDryRun THEN Updates ELSE {}}
    \cup {[updates |-> <<p[1], p[2]>>, dry_run |-> FALSE] :
            p \in IF MultiUpdate THEN {q \in Updates \X Updates : q[1].feature # q[2].feature
                                                              /\ q[1].allow = q[2].allow}
                  ELSE {}}

Existing == node.features
LiveReleases == {B(i).release : i \in Registered}    \* the live brokers the range check looks at
Own == Supported[B(controller).release]               \* the controller broker's binary (kafka only)

(* Top-level errors: the principal always has ALTER on CLUSTER and the controller is active; a       *)
(* request to a cluster whose versioning is disabled (old IBP, DISABLED node) fails as a whole.       *)
(* (Duplicate features cannot occur: the operator never sends them.)                                  *)
TopLevelError == IF ~ibp_enabled \/ node.status # "ENABLED" THEN "INVALID_REQUEST" ELSE "NONE"

Fail(err) == [error |-> err, delete |-> FALSE, range |-> <<0, 0>>]
Deletion == [error |-> "NONE", delete |-> TRUE, range |-> <<0, 0>>]
SetTo(r) == [error |-> "NONE", delete |-> FALSE, range |-> r]

(* Point 2 of Validations: a downgrade or deletion needs allowDowngrade (mutation: not checked). *)
DowngradeAllowed(u) == u.allow \/ "allow_downgrade_unchecked" \in Mutations

(* KIP: an update that "can not be applied" fails with FEATURE_UPDATE_FAILED; Kafka 2.8 reports every *)
(* validation failure as INVALID_REQUEST.                                                             *)
CannotApply == IF Profile = "kafka" THEN "INVALID_REQUEST" ELSE "FEATURE_UPDATE_FAILED"

(* The new finalized range of an upgrade, or its failure.  kip: the minimum never changes through     *)
(* this API, a new feature starts at minimum 1.  kafka: the minimum is rewritten as the controller    *)
(* binary's supported minimum, and the controller must support the feature at that level.  Then the   *)
(* range check: the new range must be compatible with every live broker (mutation: skipped).         *)
NewRange(u) ==
    LET f == u.feature
        y == u.level
        new == IF Profile = "kafka" THEN <<Own[f][1], y>>
               ELSE <<IF f \in DOMAIN Existing THEN Existing[f][1] ELSE 1, y>>
    IN IF Profile = "kafka" /\ f \notin DOMAIN Own THEN Fail("INVALID_REQUEST")
       ELSE IF Profile = "kafka" /\ y < Own[f][1] THEN Fail("INVALID_REQUEST")
       ELSE IF "skip_range_check" \notin Mutations /\ \E rel \in LiveReleases : Incompatible(rel, f, new)
            THEN Fail(CannotApply)
       ELSE SetTo(new)

(* One update, validated against /features as it was before the request (Validations). *)
Validate(u) ==
    LET f == u.feature
        y == u.level
        finalized == f \in DOMAIN Existing
        x == IF finalized THEN Existing[f][2] ELSE 0     \* existing maxVersionLevel
        xmin == IF finalized THEN Existing[f][1] ELSE 0  \* existing minVersionLevel
    IN IF y < 1
       THEN \* a deletion: allowDowngrade, an existing feature, and "without any guarding checks"
            IF ~DowngradeAllowed(u) THEN Fail("INVALID_REQUEST")
            ELSE IF ~finalized THEN Fail("INVALID_REQUEST")
            ELSE Deletion
       ELSE IF finalized /\ y = x THEN Fail("INVALID_REQUEST")                          \* no change asked
       ELSE IF finalized /\ y < x /\ ~DowngradeAllowed(u) THEN Fail("INVALID_REQUEST")  \* a downgrade
       ELSE IF finalized /\ y > x /\ u.allow /\ Profile = "kafka" THEN Fail("INVALID_REQUEST")
       ELSE IF finalized /\ y < xmin THEN Fail(CannotApply)  \* below the minimum: min <= max would break
       ELSE NewRange(u)

Outcomes(req) == [k \in DOMAIN req.updates |-> Validate(req.updates[k])]

(* The revision: if one update fails, none is applied (mutation: the valid ones are applied anyway). *)
AllOrNothing(req) ==
    /\ Semantics = "atomic"
    /\ "apply_partially_when_atomic" \notin Mutations
    /\ \E k \in DOMAIN req.updates : Outcomes(req)[k].error # "NONE"

(* Per-update results of the response: under the revision, valid updates of a failed request are     *)
(* reported as not applied.                                                                           *)
Results(req) ==
    [k \in DOMAIN req.updates |->
        IF AllOrNothing(req) /\ Outcomes(req)[k].error = "NONE" THEN "FEATURE_UPDATE_FAILED"
        ELSE Outcomes(req)[k].error]

(* The finalized features after the request's successful updates. *)
Target(req) ==
    LET o == Outcomes(req)
        ok == {k \in DOMAIN o : o[k].error = "NONE"}
        deleted == {req.updates[k].feature : k \in {j \in ok : o[j].delete}}
        set == {j \in ok : ~o[j].delete}
        setF == {req.updates[k].feature : k \in set}
    IN IF AllOrNothing(req) THEN Existing
       ELSE [f \in (DOMAIN Existing \ deleted) \cup setF |->
                IF f \in setF THEN o[CHOOSE k \in set : req.updates[k].feature = f].range ELSE Existing[f]]

(* Guarantees: /features is written (its epoch rises) exactly when something changes; a dry run or a  *)
(* request that changes nothing leaves it alone (mutation: a no-op still rewrites the node).          *)
NodeAfter(req) ==
    IF TopLevelError # "NONE" THEN node
    ELSE IF req.dry_run \/ Target(req) = Existing
         THEN IF "bump_epoch_on_noop" \in Mutations /\ ~req.dry_run THEN Write(node, node.status, node.features)
              ELSE node
    ELSE Write(node, "ENABLED", Target(req))

(* The operator's request, on the controller's event queue (so never concurrent with a registration). *)
UpdateFeatures(req) ==
    /\ controller >= 0
    /\ node.status # "ABSENT"
    /\ node.epoch < MaxEpoch
    /\ LET n == NodeAfter(req) IN node' = n /\ brokers' = Written(n)
    /\ UNCHANGED <<ibp_enabled, controller, registration_queue, client, restarts, ibp_changes>>

(* ------------------------------------------------------------------------------------------------ *)
(* Broker protections, point 2: a watch on /features fires on a running broker, which reads the      *)
(* latest node and caches it, or shuts down when it is incompatible with it.                         *)
DeliverFeaturesNotification(i) ==
    /\ Running(i)
    /\ ~B(i).notified
    /\ IF ~Compatible(B(i).release, node) /\ "ignore_incompatible_notification" \notin Mutations
       THEN /\ brokers' = [brokers EXCEPT ![i + 1] =
                               [@ EXCEPT !.status = "EXITED", !.registered = FALSE, !.notified = TRUE]]
            \* An exiting controller gives up the controllership (its ZooKeeper session ends).
            /\ controller' = IF controller = i THEN -1 ELSE controller
            /\ registration_queue' = IF controller' < 0 THEN <<>> ELSE Remove(registration_queue, i)
       ELSE LET c == Cached(node) IN
            /\ brokers' = [brokers EXCEPT ![i + 1] =
                               [@ EXCEPT !.cache = c.cache, !.cache_epoch = c.epoch, !.notified = TRUE]]
            /\ UNCHANGED <<registration_queue, controller>>
    /\ UNCHANGED <<node, ibp_enabled, client, restarts, ibp_changes>>

(* Client discovery: a client reads ApiVersions from a broker and keeps the highest epoch ("the epoch  *)
(* can be used to ignore older features metadata"; mutation: it adopts whatever it is served).       *)
ReadApiVersions(i) ==
    /\ WithClient
    /\ Running(i)
    /\ B(i).cache_epoch >= 0
    /\ client' = IF B(i).cache_epoch > client.epoch \/ "client_adopts_stale" \in Mutations
                 THEN [epoch |-> B(i).cache_epoch, features |-> B(i).cache]
                 ELSE client
    /\ UNCHANGED <<node, ibp_enabled, controller, brokers, registration_queue, restarts, ibp_changes>>

(* A bounce onto release r (upgrade, downgrade or the same binary).  When the controller goes, its    *)
(* queue goes with it: the next controller rebuilds its live set from ZooKeeper.                      *)
RestartBroker(i, r) ==
    /\ restarts < MaxRestarts
    /\ B(i).status # "STOPPED"
    /\ brokers' = [brokers EXCEPT ![i + 1] = [release |-> r, status |-> "STOPPED", cache_epoch |-> -1,
                                             cache |-> NoFeatures, registered |-> FALSE, notified |-> TRUE]]
    /\ controller' = IF controller = i THEN -1 ELSE controller
    /\ registration_queue' = IF controller' < 0 THEN <<>> ELSE Remove(registration_queue, i)
    /\ restarts' = restarts + 1
    /\ UNCHANGED <<node, ibp_enabled, client, ibp_changes>>

(* Feature version deprecation (kip only; Kafka never shipped it): the controller raises each         *)
(* finalized minimum to the highest supported minimum among the live brokers, never above the max.   *)
DeprecatedMin(f) ==
    LET r == node.features[f]
        mins == {Supported[rel][f][1] : rel \in {rel \in LiveReleases : f \in DOMAIN Supported[rel]}}
        highest == IF mins = {} THEN r[1] ELSE Max(mins)
    IN Min2(Max2(highest, r[1]), r[2])

DeprecateMinLevel ==
    /\ WithDeprecation
    /\ Profile = "kip"
    /\ controller >= 0
    /\ ibp_enabled
    /\ node.status = "ENABLED"
    /\ node.epoch < MaxEpoch
    /\ LET fs == [f \in DOMAIN node.features |-> <<DeprecatedMin(f), node.features[f][2]>>]
           n == Write(node, node.status, fs)
       IN /\ fs # node.features
          /\ node' = n
          /\ brokers' = Written(n)
    /\ UNCHANGED <<ibp_enabled, controller, registration_queue, client, restarts, ibp_changes>>

(* Deployment, phase 1: the operator rolls the IBP across migration_ibp_version.  The IBP is a static  *)
(* broker config, so the roll restarts every running broker, which makes its startup read under the new *)
(* IBP (Kafka 2.8 validates /features at startup only at IBP >= KAFKA_2_7_IV0); a stopped or exited     *)
(* broker stays down.  The roll ends with a controller election under the new IBP (where the node       *)
(* status rules run).                                                                                  *)
SetIbp ==
    /\ ibp_changes < MaxIbpChanges
    /\ ibp_enabled' = ~ibp_enabled
    /\ controller' = -1
    /\ registration_queue' = <<>>
    /\ brokers' = [k \in 1 .. N |-> IF brokers[k].status = "RUNNING" THEN StartedAt(~ibp_enabled, brokers[k])
                                    ELSE brokers[k]]
    /\ ibp_changes' = ibp_changes + 1
    /\ UNCHANGED <<node, client, restarts>>

Next ==
    \/ \E i \in BrokerIds :
          \/ ElectController(i) \/ StartBroker(i) \/ DeliverFeaturesNotification(i) \/ ReadApiVersions(i)
          \/ \E r \in Releases : RestartBroker(i, r)
    \/ ProcessBrokerRegistration
    \/ \E req \in Requests : UpdateFeatures(req)
    \/ DeprecateMinLevel
    \/ SetIbp

Spec == Init /\ [][Next]_vars

(* ------------------------------------------------------------------------------------------------ *)
(* Properties: the ids of properties/features.py.  FEAT_01, 02, 08, 09, 11, 13 are state invariants; FEAT_03 *)
(* .. FEAT_07, FEAT_12, FEAT_14, FEAT_15 and FEAT_16 action properties ([][A]_vars).  The reference's step properties FEAT-05 .. 07 read the  *)
(* UpdateFeatures step's label (its updates, dry-run flag, results): here they hold for every request  *)
(* req whose UpdateFeatures(req) step goes from this state to the next.                               *)

Versioned == ibp_enabled /\ node.status = "ENABLED"

(* A finalized range fits a release's supported range (kip: its max level; kafka: the whole range). *)
Fits(rel, f, fin) ==
    /\ f \in DOMAIN Supported[rel]
    /\ IF Profile = "kafka" THEN Supported[rel][f][1] <= fin[1] /\ fin[2] <= Supported[rel][f][2]
       ELSE Supported[rel][f][1] <= fin[2] /\ fin[2] <= Supported[rel][f][2]

FitsAll(i) == \A f \in DOMAIN node.features : Fits(B(i).release, f, node.features[f])

(* FEAT-01: finalized levels lie in the supported range of every live (registered) broker. *)
FEAT_01 == Versioned => \A i \in BrokerIds : (B(i).registered /\ Running(i)) => FitsAll(i)

(* FEAT-02: every finalized feature has 1 <= min_version_level <= max_version_level. *)
FEAT_02 == \A f \in DOMAIN node.features : 1 <= node.features[f][1] /\ node.features[f][1] <= node.features[f][2]

(* FEAT-03: the /features epoch never decreases and rises by exactly one on every change. *)
FEAT_03_Step ==
    \/ node' = node
    \/ /\ node'.status # "ABSENT"
       /\ node'.epoch = IF node.status = "ABSENT" THEN 0 ELSE node.epoch + 1
FEAT_03 == [][FEAT_03_Step]_vars

(* FEAT-04: neither a running broker's cache nor the client goes back to an older epoch (a cleared      *)
(* cache serves none, -1, which is no epoch), and the client changes what it knows only for a higher   *)
(* epoch (a same epoch trumps nothing).                                                                 *)
FEAT_04_Step ==
    /\ client'.epoch >= client.epoch
    /\ client'.epoch = client.epoch => client' = client
    /\ \A k \in 1 .. N : (brokers[k].status = "RUNNING" /\ brokers'[k].status = "RUNNING")
                             => \/ brokers'[k].cache_epoch >= brokers[k].cache_epoch
                                \/ brokers'[k].cache_epoch = -1
FEAT_04 == [][FEAT_04_Step]_vars

SameEntry(a, b, f) == (f \in DOMAIN a) = (f \in DOMAIN b) /\ (f \in DOMAIN a => a[f] = b[f])

(* A first filter, so that TLC evaluates the requests only on steps that may be UpdateFeatures steps   *)
(* (the properties are the same): a stuttering step satisfies [A]_vars anyway, and every               *)
(* UpdateFeatures(req) step, whatever req, is a non-stuttering step of this frame.                    *)
UpdateFeaturesFrame ==
    /\ vars' # vars
    /\ controller >= 0
    /\ node.status # "ABSENT"
    /\ node.epoch < MaxEpoch
    /\ UNCHANGED <<ibp_enabled, controller, registration_queue, client, restarts, ibp_changes>>
    /\ brokers' = Written(node')

(* FEAT-05: no downgrade or deletion of a finalized feature without allowDowngrade. *)
NoDowngradeWithoutFlag(req) ==
    LET before == node.features
        after == node'.features
        allowed == {req.updates[k].feature : k \in {j \in DOMAIN req.updates : req.updates[j].allow}}
    IN \A f \in DOMAIN before : (f \notin DOMAIN after \/ after[f][2] < before[f][2]) => f \in allowed
(* Cheaper to check, the same property: a step that lowers no finalized feature satisfies it whatever  *)
(* the request, and the cheap per-request condition is evaluated before the UpdateFeatures action      *)
(* (TLC evaluates \/ and /\ left to right and stops early).                                          *)
Lowered == {f \in DOMAIN node.features : f \notin DOMAIN node'.features \/ node'.features[f][2] < node.features[f][2]}
FEAT_05_Step == UpdateFeaturesFrame =>
                    \/ Lowered = {}
                    \/ \A req \in Requests : NoDowngradeWithoutFlag(req) \/ ~UpdateFeatures(req)
FEAT_05 == [][FEAT_05_Step]_vars

(* FEAT-06: a failed update (per update; per request under atomic) changes nothing, and a successful *)
(* one is applied; whenever nothing is applied the node (its epoch included) is untouched.           *)
FailedChangesNothing(req) ==
    LET before == node.features
        after == node'.features
        ups == req.updates
        res == Results(req)
    IN IF TopLevelError # "NONE" THEN node' = node
       ELSE /\ \A k \in DOMAIN ups :
                  IF res[k] # "NONE" THEN SameEntry(before, after, ups[k].feature)
                  ELSE ~req.dry_run =>
                         IF ups[k].level < 1 THEN ups[k].feature \notin DOMAIN after
                         ELSE ups[k].feature \in DOMAIN after /\ after[ups[k].feature][2] = ups[k].level
            /\ ((\E k \in DOMAIN ups : res[k] # "NONE")
                /\ (Semantics = "atomic" \/ \A k \in DOMAIN ups : SameEntry(before, after, ups[k].feature)))
               => node' = node
FEAT_06_Step == UpdateFeaturesFrame => \A req \in Requests : UpdateFeatures(req) => FailedChangesNothing(req)
FEAT_06 == [][FEAT_06_Step]_vars

(* FEAT-07: a dry run changes nothing. *)
FEAT_07_Step == UpdateFeaturesFrame => \A req \in Requests : (req.dry_run /\ UpdateFeatures(req)) => UNCHANGED vars
FEAT_07 == [][FEAT_07_Step]_vars

(* FEAT-08: a running broker that has read the latest /features is compatible with it. *)
FEAT_08 == Versioned => \A i \in BrokerIds : (Running(i) /\ B(i).notified) => FitsAll(i)

(* FEAT-09: a disabled /features node holds no finalized features. *)
FEAT_09 == node.status # "DISABLED" \/ DOMAIN node.features = {}

(* FEAT-11: the active controller is a running broker; its queue holds registrations of running      *)
(* brokers not yet live, each once, and is empty without a controller.                               *)
FEAT_11 == /\ controller >= 0 => Running(controller)
           /\ controller < 0 => registration_queue = <<>>
           /\ \A k \in 1..Len(registration_queue) :
                 /\ Running(registration_queue[k]) /\ ~B(registration_queue[k]).registered
                 /\ \A j \in 1..Len(registration_queue) : j # k => registration_queue[j] # registration_queue[k]

(* FEAT-12: a broker that starts while a controller is active has its registration queued on the      *)
(* controller's event queue, behind those already there.                                              *)
FEAT_12_Step == \A i \in BrokerIds : (StartBroker(i) /\ controller >= 0 /\ brokers'[i + 1].status = "RUNNING")
                                     => registration_queue' = Append(registration_queue, i)
FEAT_12 == [][FEAT_12_Step]_vars

(* FEAT-14: across one step the registration queue changes only as the controller's event queue can       *)
(* (Kafka 2.8 KafkaController: onBrokerStartup enqueues, the ControllerEventThread takes the head, a dead   *)
(* broker's registration goes, a new controller starts from an empty queue).  The reference reads the      *)
(* step's label; here the step's change says which case it is: a controller change (or none) empties the   *)
(* queue, a started broker is appended (FEAT-12), a broker that stops running or restarts leaves it, and   *)
(* any other step leaves it or takes its head, changing no other broker than the head.                     *)
FEAT_14_Step ==
    LET started == {i \in BrokerIds : B(i).status = "STOPPED" /\ brokers'[i + 1].status = "RUNNING"}
        left == {i \in BrokerIds : \/ Running(i) /\ brokers'[i + 1].status # "RUNNING"
                                   \/ B(i).status = "EXITED" /\ brokers'[i + 1].status = "STOPPED"}
    IN IF controller' < 0 \/ controller' # controller THEN registration_queue' = <<>>
       ELSE IF started # {} THEN \E i \in started : registration_queue' = Append(registration_queue, i)
       ELSE IF left # {} THEN registration_queue' = SelectSeq(registration_queue, LAMBDA x : x \notin left)
       ELSE \/ registration_queue' = registration_queue
            \/ /\ registration_queue # <<>>
               /\ registration_queue' = Tail(registration_queue)
               /\ \A i \in BrokerIds : i # Head(registration_queue) => brokers'[i + 1] = B(i)
FEAT_14 == [][FEAT_14_Step]_vars

(* FEAT-15: a min-level deprecation (kip only) rewrites only finalized minimum levels: every finalized    *)
(* feature keeps its max level, and its min becomes the highest supported minimum among the live brokers  *)
(* that support it, never lowered, never above the max (KIP-584 "Feature version deprecation").          *)
LiveMins(f) == {Supported[B(i).release][f][1] :
                   i \in {j \in BrokerIds : B(j).registered /\ Running(j) /\ f \in DOMAIN Supported[B(j).release]}}
FEAT_15_Step ==
    DeprecateMinLevel =>
        /\ Profile = "kip"
        /\ DOMAIN node'.features = DOMAIN node.features
        /\ node'.features # node.features
        /\ \A f \in DOMAIN node.features :
              LET lo == node.features[f][1]
                  hi == node.features[f][2]
                  highest == IF LiveMins(f) = {} THEN lo ELSE Max(LiveMins(f))
              IN node'.features[f] = <<Min2(Max2(highest, lo), hi), hi>>
FEAT_15 == [][FEAT_15_Step]_vars

(* FEAT-16: below migration_ibp_version (after the step) a broker's read of /features (a start, a running *)
(* broker's pending watch firing, or the restart of the IBP roll down) applies no validation and decodes nothing: the broker runs on, caches no        *)
(* features and serves no epoch under kafka, the node's under kip (-1 without a node).  KIP-584 "Broker protections" (each broker *)
(* validates its IBP before applying validations); Kafka 2.8 starts no FinalizedFeatureChangeListener    *)
(* below KAFKA_2_7_IV0.  The reference reads the step's label; here the step's change says it is a read.  *)
ReadsFeatures(i) ==
    /\ brokers'[i + 1].status # "STOPPED"
    /\ \/ B(i).status = "STOPPED"
       \/ Running(i) /\ ~B(i).notified /\ brokers'[i + 1].notified
       \/ Running(i) /\ ibp_enabled' # ibp_enabled
FEAT_16_Step ==
    ~ibp_enabled' => \A i \in BrokerIds :
        ReadsFeatures(i) => /\ brokers'[i + 1].status = "RUNNING"
                            /\ brokers'[i + 1].cache = NoFeatures
                            /\ brokers'[i + 1].cache_epoch = IF node.status = "ABSENT" THEN -1
                                                             ELSE UncachedEpoch(node.epoch)
FEAT_16 == [][FEAT_16_Step]_vars

(* FEAT-13: /features as ZooKeeper holds it is Kafka's FeatureZNode JSON, and it is what the cluster acts on  *)
(* (KIP-584 "Persistence of finalized feature version levels", "Feature ZK node status"; Kafka 2.8 ZkData     *)
(* FeatureZNode).  The reference holds the node's bytes and checks the JSON itself: the schema version (1,    *)
(* the KIP's 0 under kip), exactly the keys version, status, features and min_version_level,                  *)
(* max_version_level, integer values, status codes 1 / 0.  Only those bytes can show a field written at the   *)
(* wrong version or a status code swapped; here node is the view the reference decodes them to, so this says  *)
(* what the bytes must decode to: one of the two statuses, well-formed ranges, a disabled node empty, the     *)
(* status an active controller's IBP asks for, and a running broker that has read the latest write serves its *)
(* epoch and caches exactly its levels (none when disabled or below the IBP).                                   *)
FEAT_13 ==
    /\ node.status \in {"ABSENT", "DISABLED", "ENABLED"}
    /\ \A f \in DOMAIN node.features : 1 <= node.features[f][1] /\ node.features[f][1] <= node.features[f][2]
    /\ node.status = "DISABLED" => DOMAIN node.features = {}
    /\ controller >= 0 => node.status = IF ibp_enabled THEN "ENABLED" ELSE "DISABLED"
    /\ \A i \in BrokerIds :
          (Running(i) /\ B(i).notified) =>
              \* The IBP roll restarts every running broker: what one serves it read under its current IBP.
              /\ B(i).cache_epoch = IF node.status = "DISABLED" \/ ~ibp_enabled THEN UncachedEpoch(node.epoch)
                                   ELSE node.epoch
              /\ (node.status = "DISABLED" \/ ~ibp_enabled) => DOMAIN B(i).cache = {}
              /\ Versioned => B(i).cache = node.features

(* FEAT-10 is a graph property (AG EF): from every reachable state a state where every running broker *)
(* has caught up with /features is reachable.  TLC checks LTL only, so this is the target predicate;   *)
(* rollcheck's explorer checks it.                                                                    *)
FEAT_10 == \A i \in BrokerIds : Running(i) => B(i).notified

(* Witnesses ("sometimes": a state the config must reach, else the run is vacuous). TLC checks each as  *)
(* the negated invariant ~FEAT_Wn: a "violation" is the witness reached, with its trace.              *)
(* FEAT-W1: a feature is finalized above version level 1 (an upgrade, or a new cluster's bootstrap). *)
FEAT_W1 == Versioned /\ \E f \in DOMAIN node.features : node.features[f][2] >= 2

(* FEAT-W2: a client learned the finalized features from a broker's ApiVersions. *)
FEAT_W2 == client.epoch >= 0

(* FEAT-W3: a cluster that started below migration_ibp_version finalizes features after the IBP roll. *)
FEAT_W3 == ibp_changes >= 1 /\ Versioned /\ DOMAIN node.features # {}

(* FEAT-W4: a broker shut down on a feature incompatibility (at startup or on a watch notification). *)
FEAT_W4 == \E i \in BrokerIds : B(i).status = "EXITED"

(* FEAT-W5: every finalized feature was deleted (an enabled /features node left empty after a write). *)
FEAT_W5 == Versioned /\ node.epoch >= 1 /\ DOMAIN node.features = {}

(* FEAT-W6: the controller deprecated a finalized version level: a finalized minimum lies above the supported *)
(* minimum of a live broker (one that still supports the older level).  Kip only (WithDeprecation).          *)
FEAT_W6 == Versioned /\ \E i \in BrokerIds, f \in DOMAIN node.features :
                          /\ B(i).registered /\ Running(i)
                          /\ f \in DOMAIN Supported[B(i).release]
                          /\ Supported[B(i).release][f][1] < node.features[f][1]

=============================================================================================

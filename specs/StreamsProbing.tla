-------------------------------- MODULE StreamsProbing --------------------------------
(***************************************************************************)
(* KIP-268: Kafka Streams rebalance metadata upgrade ("version probing").  *)
(*                                                                         *)
(* A group of Streams instances goes through a rolling upgrade from        *)
(* OldRelease to NewRelease: one or two rolling bounces (upgrade.from set, *)
(* then removed) or, with Operator, the bounces an operator chooses (any   *)
(* instance, upgrade.from set or removed, up to MaxBounces each);          *)
(* rebalances with any member elected leader, each member processing its   *)
(* assignment (probe down, adopt the supported version, fail), crashes and *)
(* restarts.  The same actions, variables and property ids as              *)
(* reference_impl/streams_probing and properties/streams_probing.py        *)
(* (STR-01 is STR_01 here).  Profile "kip" is the KIP as written; "kafka"  *)
(* is Apache Kafka's StreamsPartitionAssignor today, for every release;    *)
(* "kafka-2.0" runs each release's own branch: Kafka 2.0's assignor for    *)
(* 2.0, the 2.1 branch's (KAFKA-8649 fixed) for post-2.0.                  *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Str;
    Profile,            \* "kip", "kafka" or "kafka-2.0"
    \* @type: Int;
    N,                  \* instances in the group
    \* @type: Str;
    OldRelease,
    \* @type: Str;
    NewRelease,
    \* @type: Str -> Int;
    Latest,             \* LATEST_SUPPORTED_VERSION of each release (CURRENT_VERSION before 2.0)
    \* @type: Int;
    Rounds,             \* rolling bounces: 2 when upgrade.from is set first, else 1 (unused with Operator)
    \* @type: Bool;
    Operator,           \* procedure "operator": the operator chooses every bounce (no rounds)
    \* @type: Int;
    MaxBounces,         \* bounces per instance: Rounds, or the operator's cap
    \* @type: Str;
    FirstUpgradeFrom,   \* the upgrade.from value of the first of two bounces, or the one an operator
                        \* may set ("" for none)
    \* @type: Int;
    FirstUsedVersion,   \* the subscription version NewRelease starts with under FirstUpgradeFrom
    \* @type: Int;
    MaxCrashes,
    \* @type: Set(Str);
    Mutations,          \* broken variants (api.MUTATIONS); {} for the reference
    \* @type: Str -> Int;
    Age,                \* each release's place by age (0.10.0 first): an upgrade goes to a younger one
    \* @type: Str;
    Procedure,          \* "auto", "single-bounce", "two-bounces" or "operator" (ConfigOk only: Rounds and
                        \* Operator say what it means)
    \* @type: Bool;
    Misconfigured       \* FirstUpgradeFrom is an operator's mistake (ConfigOk only)

VARIABLES
    \* @type: Seq({release: Str, upgrade_from: Str, used_version: Int, running: Bool, bounces: Int, inbox: Set({version: Int, supported: Int, error: Int, probing_reply: Bool}), last_version: Int, failure: Str});
    instances,
    \* @type: Bool;
    rebalance_pending,
    \* @type: Int;
    follow_up,          \* the leader (0-based) that still has to trigger its follow-up rebalance, or -1
    \* @type: Int;
    rebalances,         \* completed rebalances since the last join or leave, capped
    \* @type: Int;
    leader,             \* the leader (0-based) of the last rebalance, or -1
    \* @type: Int;
    crashes

vars == <<instances, rebalance_pending, follow_up, rebalances, leader, crashes>>

EARLIEST_PROBEABLE_VERSION == 3
UNKNOWN == -1
ASSIGNMENT_ERROR == 3
REBALANCE_CAP == 3
Idx == 1..N

SetMin(S) == CHOOSE x \in S : \A y \in S : x <= y
SetMax(S) == CHOOSE x \in S : \A y \in S : x >= y
Min2(a, b) == IF a <= b THEN a ELSE b
Probing(rel) == Latest[rel] >= EARLIEST_PROBEABLE_VERSION
CanDecode(rel, v) == 1 <= v /\ v <= Latest[rel]
Configured(rel, uf) == IF uf = "" THEN Latest[rel] ELSE FirstUsedVersion

Members == {i \in Idx : instances[i].running /\ instances[i].failure = ""}
InboxesEmpty == \A i \in Idx : instances[i].inbox = {}
Stable == ~rebalance_pending /\ follow_up < 0
          /\ \A i \in Idx : instances[i].running /\ instances[i].inbox = {} /\ instances[i].failure = ""
Target == SetMin({Latest[instances[i].release] : i \in Idx})
(* With Operator: the operator's intent is complete, every instance on NewRelease, upgrade.from removed. *)
BouncesDone == IF Operator
               THEN \A i \in Idx : instances[i].release = NewRelease /\ instances[i].upgrade_from = ""
               ELSE \A i \in Idx : instances[i].bounces >= Rounds
Converged == \A i \in Idx : instances[i].used_version = Target /\ instances[i].last_version = Target

(* The configs this spec is written for (conform (d) compares it with the configs the reference accepts: *)
(* StreamsProbingConfig.validate): a known profile, 1 to 4 instances, an upgrade to a release no older   *)
(* than the group's (3.9 under kafka only), a known procedure, no negative crash budget, an operator's  *)
(* mistaken upgrade.from only where an operator bounces and only when the version it makes NewRelease   *)
(* send is below OldRelease's (else every old instance reads it: no mistake), and only the broken       *)
(* variants this spec implements.  Which release names and upgrade.from values exist is the binding's   *)
(* to say (it cannot name FirstUsedVersion otherwise).                                                  *)
SpecMutations == {"leader_fails_on_future", "assign_at_leader_version", "member_never_upgrades",
                  "uncapped_adopt", "no_leader_follow_up", "no_kafka_6054_backport", "leader_supported_is_used",
                  "restart_ignores_upgrade_from", "commonly_supported_is_max"}
ConfigOk(c) ==
    /\ c.Profile \in {"kip", "kafka", "kafka-2.0"}
    /\ c.N \in 1..4
    /\ {c.OldRelease, c.NewRelease} \subseteq DOMAIN c.Latest
    /\ c.Age[c.OldRelease] <= c.Age[c.NewRelease]
    /\ c.NewRelease = "3.9" => c.Profile = "kafka"
    /\ c.Procedure \in {"auto", "single-bounce", "two-bounces", "operator"}
    /\ c.MaxCrashes >= 0
    /\ c.Misconfigured => c.Procedure = "operator" /\ c.FirstUsedVersion < c.Latest[c.OldRelease]
    /\ c.Mutations \subseteq SpecMutations
ASSUME ConfigOk([Profile |-> Profile, N |-> N, OldRelease |-> OldRelease, NewRelease |-> NewRelease,
                 Latest |-> Latest, Rounds |-> Rounds, Operator |-> Operator, MaxBounces |-> MaxBounces,
                 FirstUpgradeFrom |-> FirstUpgradeFrom, FirstUsedVersion |-> FirstUsedVersion,
                 MaxCrashes |-> MaxCrashes, Mutations |-> Mutations, Age |-> Age, Procedure |-> Procedure,
                 Misconfigured |-> Misconfigured])

Init ==
    /\ instances = [i \in Idx |-> [release |-> OldRelease, upgrade_from |-> "",
                                   used_version |-> Latest[OldRelease], running |-> TRUE, bounces |-> 0,
                                   inbox |-> {}, last_version |-> 0, failure |-> ""]]
    /\ rebalance_pending = TRUE
    /\ follow_up = -1
    /\ rebalances = 0
    /\ leader = -1
    /\ crashes = 0

(* The operator bounces one instance at a time, only when the group is stable; round r+1 starts once   *)
(* every instance finished round r.  With Operator: any instance below MaxBounces, in any order, with   *)
(* upgrade.from removed or (FirstUpgradeFrom # "") set, as the operator chooses.                        *)
UpgradeFroms(x) == IF Operator THEN {""} \cup (IF FirstUpgradeFrom = "" THEN {} ELSE {FirstUpgradeFrom})
                   ELSE {IF x.bounces + 1 = Rounds THEN "" ELSE FirstUpgradeFrom}
RollingBounce(i) ==
    LET x == instances[i]
    IN /\ Stable
       /\ x.bounces < MaxBounces
       /\ Operator \/ \A j \in Idx : instances[j].bounces >= x.bounces
       /\ \E uf \in UpgradeFroms(x) :
             instances' = [instances EXCEPT ![i] =
                [release |-> NewRelease, upgrade_from |-> uf, used_version |-> Configured(NewRelease, uf),
                 running |-> TRUE, bounces |-> x.bounces + 1, inbox |-> {}, last_version |-> x.last_version,
                 failure |-> ""]]
       /\ rebalance_pending' = TRUE
       /\ rebalances' = 0
       /\ UNCHANGED <<follow_up, leader, crashes>>

Fail(x, kind) == [x EXCEPT !.running = FALSE, !.inbox = {}, !.failure = kind]

(* The subscription each member sends: its used version, and from version 3 on its supported one. *)
Sent(i) == instances[i].used_version
Supp(i) == IF Sent(i) >= EARLIEST_PROBEABLE_VERSION THEN Latest[instances[i].release] ELSE UNKNOWN

(* One rebalance (JoinGroup and SyncGroup as a barrier) with member l elected leader: the leader's     *)
(* assign() over every member's subscription, an assignment in each member's inbox.                    *)
Rebalance(l) ==
    LET M == Members
        bad == {i \in M : Sent(i) > Latest[instances[i].release]}
        lrel == instances[l].release
        latest == Latest[lrel]
        future == {m \in M : Sent(m) > latest}
        minReceived == SetMin({latest} \cup {Sent(m) : m \in M})
        \* KAFKA-8649's fix: the minimum over every subscription (the broken variant takes the maximum)
        \* (a 2.0 leader, latest = 3, has no commonly supported version to get wrong: it sends its latest)
        minSupported == IF "commonly_supported_is_max" \in Mutations /\ latest >= 4
                        THEN SetMax({latest} \cup {Supp(m) : m \in M})
                        ELSE SetMin({latest} \cup {Supp(m) : m \in M})
        leaderFails == \/ (future # {} /\ ~Probing(lrel))
                       \/ (future # {} /\ "leader_fails_on_future" \in Mutations)
                       \/ (future # {} /\ minReceived < EARLIEST_PROBEABLE_VERSION
                           /\ ~(Profile = "kafka" /\ latest >= 4))
        errorAssignment == future # {} /\ minReceived < EARLIEST_PROBEABLE_VERSION
                           /\ Profile = "kafka" /\ latest >= 4
        used == IF "assign_at_leader_version" \in Mutations THEN latest ELSE minReceived
        kipRules == Profile = "kip" \/ ~Probing(lrel)
        \* kafka-2.0: a probing leader runs its own branch's assign(), without a follow-up rebalance
        ownBranch == Profile = "kafka-2.0" /\ Probing(lrel)
        \* the 2.1 branch encodes minSupportedMetadataVersion over the members it understands; Kafka 2.0, and
        \* 2.1.0 / 2.1.1 (the uncapped_adopt variant, KAFKA-8649), encode their latest
        branch21 == ownBranch /\ latest >= 4 /\ "uncapped_adopt" \notin Mutations
        current == M \ future
        minSupp21 == IF "commonly_supported_is_max" \in Mutations
                     THEN SetMax({latest} \cup {Supp(m) : m \in current})
                     ELSE SetMin({latest} \cup {Supp(m) : m \in current})
        suppOwn == IF used < EARLIEST_PROBEABLE_VERSION THEN UNKNOWN
                   ELSE IF "leader_supported_is_used" \in Mutations THEN used
                   ELSE IF branch21 THEN minSupp21 ELSE latest
        known == {Supp(m) : m \in M}
        canGoHigher == Probing(lrel) /\ UNKNOWN \notin known /\ future = {}
                       /\ Min2(SetMin(known), latest) > used
        \* an error assignment schedules nothing (Kafka's errorAssignment sets no next rebalance time)
        followUp == IF ownBranch \/ errorAssignment THEN FALSE
                    ELSE IF kipRules THEN canGoHigher /\ "no_leader_follow_up" \notin Mutations ELSE future # {}
        Delivered(m) ==
            IF errorAssignment THEN [version |-> latest, supported |-> latest, error |-> ASSIGNMENT_ERROR,
                                     probing_reply |-> FALSE]
            ELSE IF ownBranch /\ m \in future
                 THEN [version |-> IF branch21 THEN used ELSE latest, supported |-> IF branch21 THEN suppOwn ELSE latest,
                       error |-> 0, probing_reply |-> TRUE]
            ELSE IF ownBranch
                 THEN [version |-> used, supported |-> suppOwn, error |-> 0, probing_reply |-> FALSE]
            ELSE IF kipRules /\ m \in future
                 THEN [version |-> latest, supported |-> latest, error |-> 0, probing_reply |-> Profile # "kafka"]
            ELSE IF kipRules
                 THEN [version |-> used,
                       supported |-> IF used < EARLIEST_PROBEABLE_VERSION THEN UNKNOWN
                                     ELSE IF "leader_supported_is_used" \in Mutations THEN used ELSE latest,
                       error |-> 0, probing_reply |-> FALSE]
            ELSE [version |-> used,
                  supported |-> IF used >= EARLIEST_PROBEABLE_VERSION THEN minSupported ELSE UNKNOWN,
                  error |-> 0, probing_reply |-> FALSE]
    IN /\ rebalance_pending /\ InboxesEmpty /\ follow_up < 0
       /\ l \in M
       /\ IF bad # {}
          THEN \* a member cannot even build its subscription (a version above what it speaks)
               LET f == SetMin(bad) IN
               /\ instances' = [instances EXCEPT ![f] = [@ EXCEPT !.running = FALSE, !.failure = "subscription"]]
               /\ rebalances' = 0
               /\ UNCHANGED <<rebalance_pending, follow_up, leader, crashes>>
          ELSE IF leaderFails
          THEN \* the leader's StreamThread dies; the others rejoin without it
               /\ instances' = [instances EXCEPT ![l] = [@ EXCEPT !.running = FALSE, !.failure = "leader"]]
               /\ rebalance_pending' = TRUE
               /\ rebalances' = 0
               /\ leader' = l - 1
               /\ UNCHANGED <<follow_up, crashes>>
          ELSE /\ instances' = [i \in Idx |-> IF i \in M THEN [instances[i] EXCEPT !.inbox = {Delivered(i)}]
                                               ELSE instances[i]]
               /\ rebalance_pending' = FALSE
               /\ follow_up' = IF followUp THEN l - 1 ELSE -1
               /\ rebalances' = Min2(rebalances + 1, REBALANCE_CAP)
               /\ leader' = l - 1
               /\ UNCHANGED crashes

(* kafka-2.0: a probing member's own branch.  The 2.1 branch (KAFKA-8649 fixed): an error code first,    *)
(* then validateMetadataVersions and maybeUpdateSubscriptionVersion.  Kafka 2.0, and 2.1.0 / 2.1.1 under  *)
(* the uncapped_adopt variant: a probe takes the received version if it is the leader's supported one,    *)
(* else the supported one, and rejoins; at the version sent it adopts the supported version, uncapped.    *)
OwnBranchOutcome(rel, received, supported, err, used) ==
    LET never == "member_never_upgrades" \in Mutations
        fixed == Latest[rel] >= 4 /\ "uncapped_adopt" \notin Mutations
        none == [kind |-> "none", used |-> used, rebalance |-> FALSE]
    IN IF Latest[rel] >= 4 /\ received >= 4 /\ err # 0
       THEN IF err = 1 THEN [kind |-> "shutdown", used |-> used, rebalance |-> FALSE]
            ELSE [kind |-> "none", used |-> used, rebalance |-> err = 2]
       ELSE IF received > used THEN [kind |-> "member", used |-> used, rebalance |-> FALSE]
       ELSE IF fixed
            THEN IF supported > Latest[rel] THEN [kind |-> "member", used |-> used, rebalance |-> FALSE]
                 ELSE IF received < EARLIEST_PROBEABLE_VERSION THEN none
                 ELSE IF supported > used /\ ~never THEN [kind |-> "adopt", used |-> supported, rebalance |-> TRUE]
                 ELSE IF received < used THEN [kind |-> "probe", used |-> supported, rebalance |-> TRUE]
                 ELSE none
       ELSE IF received >= EARLIEST_PROBEABLE_VERSION /\ received < used
            THEN [kind |-> "probe", used |-> IF received = supported THEN received ELSE supported, rebalance |-> TRUE]
       ELSE IF received >= EARLIEST_PROBEABLE_VERSION /\ supported > used /\ ~never
            THEN [kind |-> "adopt", used |-> supported, rebalance |-> FALSE]
       ELSE none

(* The member's onAssignment: "kind" of the outcome and the used version after it. *)
MemberOutcome(i) ==
    LET x == instances[i]
        d == CHOOSE e \in x.inbox : TRUE
        rel == x.release
        received == d.version
        supported == d.supported
        used == x.used_version
        never == "member_never_upgrades" \in Mutations
        target == IF "uncapped_adopt" \in Mutations THEN supported ELSE Min2(supported, Latest[rel])
    IN IF ~CanDecode(rel, received) THEN [kind |-> "member", used |-> used, rebalance |-> FALSE]
       ELSE IF Profile = "kafka-2.0" /\ Probing(rel) THEN OwnBranchOutcome(rel, received, supported, d.error, used)
       ELSE IF Profile = "kafka" /\ Probing(rel) /\ received >= 4 /\ d.error # 0
            THEN [kind |-> "shutdown", used |-> used, rebalance |-> FALSE]
       ELSE IF received > used THEN [kind |-> "member", used |-> used, rebalance |-> FALSE]
       ELSE IF ~Probing(rel) \/ received < EARLIEST_PROBEABLE_VERSION
            THEN [kind |-> "none", used |-> used, rebalance |-> FALSE]
       ELSE IF Profile = "kafka"
            THEN IF supported > Latest[rel] THEN [kind |-> "member", used |-> used, rebalance |-> FALSE]
                 ELSE IF supported > used /\ ~never THEN [kind |-> "adopt", used |-> supported, rebalance |-> TRUE]
                 ELSE IF received < used THEN [kind |-> "probe", used |-> supported, rebalance |-> TRUE]
                 ELSE [kind |-> "none", used |-> used, rebalance |-> FALSE]
       ELSE IF received < used /\ received = supported
            THEN [kind |-> "probe", used |-> received, rebalance |-> TRUE]
       ELSE IF supported > used /\ ~never /\ target > used
            THEN [kind |-> "adopt", used |-> target, rebalance |-> FALSE]
       ELSE [kind |-> "none", used |-> used, rebalance |-> FALSE]

(* Processing one delivered assignment.  The four reference actions OnAssignment, ProbeDowngrade,     *)
(* AdoptSupportedVersion and LeaderFollowUpRebalance are the successful outcomes; AssignmentFailure and *)
(* ErrorShutdown the failed ones.                                                                       *)
Process(i, kinds, leaderTrigger) ==
    LET x == instances[i]
        d == CHOOSE e \in x.inbox : TRUE
        o == MemberOutcome(i)
        trigger == follow_up = i - 1
    IN /\ x.inbox # {}
       /\ o.kind \in kinds
       /\ trigger = leaderTrigger \/ o.kind # "none"
       /\ follow_up' = IF trigger THEN -1 ELSE follow_up
       /\ IF o.kind \in {"member", "shutdown"}
          THEN /\ instances' = [instances EXCEPT ![i] = Fail(x, o.kind)]
               /\ rebalances' = 0
               /\ rebalance_pending' = TRUE
          ELSE /\ instances' = [instances EXCEPT ![i] = [x EXCEPT !.used_version = o.used, !.inbox = {},
                                                                  !.last_version = d.version]]
               /\ rebalance_pending' = (rebalance_pending \/ o.rebalance \/ trigger)
               /\ UNCHANGED rebalances
       /\ UNCHANGED <<leader, crashes>>

\* Each is a conjunction of its own so that TLC names the step after it in traces.
OnAssignment(i) == instances[i].inbox # {} /\ Process(i, {"none"}, FALSE)
ProbeDowngrade(i) == instances[i].inbox # {} /\ Process(i, {"probe"}, FALSE)
AdoptSupportedVersion(i) == instances[i].inbox # {} /\ Process(i, {"adopt"}, FALSE)
LeaderFollowUpRebalance(i) == instances[i].inbox # {} /\ Process(i, {"none"}, TRUE)
AssignmentFailure(i) == instances[i].inbox # {} /\ Process(i, {"member"}, FALSE)
ErrorShutdown(i) == instances[i].inbox # {} /\ Process(i, {"shutdown"}, FALSE)

Crash(i) ==
    /\ crashes < MaxCrashes
    /\ i \in Members
    /\ instances' = [instances EXCEPT ![i] = [@ EXCEPT !.running = FALSE, !.inbox = {}]]
    /\ rebalance_pending' = ((\E j \in Members : j # i) \/ rebalance_pending)
    /\ follow_up' = IF follow_up = i - 1 THEN -1 ELSE follow_up
    /\ rebalances' = 0
    /\ crashes' = crashes + 1
    /\ UNCHANGED leader

Restart(i) ==
    LET x == instances[i] IN
    /\ ~x.running /\ x.failure = ""
    /\ instances' = [instances EXCEPT ![i] = [x EXCEPT !.running = TRUE,
                                                     !.used_version =
                                                        IF "restart_ignores_upgrade_from" \in Mutations
                                                        THEN Latest[x.release]
                                                        ELSE Configured(x.release, x.upgrade_from),
                                                     !.inbox = {}]]
    /\ rebalance_pending' = TRUE
    /\ rebalances' = 0
    /\ UNCHANGED <<follow_up, leader, crashes>>

Next ==
    \E i \in Idx :
        \/ RollingBounce(i) \/ Rebalance(i)
        \/ OnAssignment(i) \/ ProbeDowngrade(i) \/ AdoptSupportedVersion(i) \/ LeaderFollowUpRebalance(i)
        \/ AssignmentFailure(i) \/ ErrorShutdown(i)
        \/ Crash(i) \/ Restart(i)

Spec == Init /\ [][Next]_vars

(* ------------------------------------------------------------------------------------------------ *)
(* Properties: the ids of properties/streams_probing.py.  STR_01 .. STR_04 are action properties     *)
(* (checked as [][A]_vars), STR_05 .. STR_10 state invariants.                                        *)

LeaderFailedAt(l) == instances[l].failure = "" /\ instances'[l].failure = "leader"

(* STR-01: a 2.0+ leader never fails on a subscription newer than it understands (others 3+). *)
STR_01_Step ==
    \A l \in Idx :
        LeaderFailedAt(l) =>
            LET lrel == instances[l].release
                sent == {Sent(m) : m \in Members}
            IN ~(Probing(lrel) /\ \E v \in sent : v > Latest[lrel])
               \/ \E v \in sent : v <= Latest[lrel] /\ v < EARLIEST_PROBEABLE_VERSION
STR_01 == [][STR_01_Step]_vars

(* STR-02: every member can decode every assignment it receives. *)
STR_02_Step == \A i \in Idx : (instances[i].inbox = {} /\ instances'[i].inbox # {}) =>
                   \A d \in instances'[i].inbox : CanDecode(instances'[i].release, d.version)
STR_02 == [][STR_02_Step]_vars

(* STR-03: while any member sends version X, the leader assigns at version X. *)
STR_03_Step ==
    (rebalance_pending /\ ~rebalance_pending' /\ leader' >= 0) =>
        LET lrel == instances[leader' + 1].release
            understood == {Sent(m) : m \in {k \in Members : Sent(k) <= Latest[lrel]}}
        IN understood = {} \/
           \A i \in Idx : \A d \in instances'[i].inbox :
               (d.error = 0 /\ ~d.probing_reply) => d.version = SetMin(understood)
STR_03 == [][STR_03_Step]_vars

(* STR-04: a member never uses a version above the leader's supported one after a probe. *)
STR_04_Step ==
    \A i \in Idx :
        (instances[i].inbox # {} /\ instances'[i].inbox = {} /\ instances'[i].running
         /\ instances'[i].failure = "") =>
            \A d \in instances[i].inbox :
                (d.supported = UNKNOWN \/ d.version >= instances[i].used_version)
                \/ instances'[i].used_version <= d.supported
STR_04 == [][STR_04_Step]_vars

(* STR-05: no member uses a subscription version above its own latest supported version. *)
STR_05 == \A i \in Idx : instances[i].used_version <= Latest[instances[i].release]

(* STR-06: no instance fails during the upgrade procedure. *)
STR_06 == \A i \in Idx : instances[i].failure = ""

(* STR-09: an instance that failed has stopped for good: it does not run and holds no assignment. *)
STR_09 == \A i \in Idx : instances[i].failure # "" => (~instances[i].running /\ instances[i].inbox = {})

(* STR-10: the rolling bounces follow the upgrade procedure: no instance goes through more bounces than it *)
(* prescribes (MaxBounces), and a second rolling bounce starts only once the first has reached every      *)
(* instance (without Operator, bounce counts differ by at most one).                                      *)
STR_10 == /\ \A i \in Idx : instances[i].bounces <= MaxBounces
          /\ Operator \/ \A i, j \in Idx : instances[i].bounces - instances[j].bounces <= 1

(* STR-07: once every bounce is done and the group is stable, every member uses the highest version    *)
(* all members support.                                                                                 *)
STR_07 == (BouncesDone /\ Stable) => Converged

(* STR-08: after the last bounce the group converges within at most one extra rebalance. *)
STR_08 == \/ ~BouncesDone \/ rebalances < 2
          \/ \E i \in Idx : instances[i].failure # "" \/ ~instances[i].running
          \/ \E i \in Idx : instances[i].inbox # {}
          \/ follow_up >= 0
          \/ Converged

(* STR-L1 is a graph property (AG EF settled): from every reachable state a stable (or failed) state   *)
(* is reachable.  TLC checks LTL only, so this is the target predicate; rollcheck's explorer checks it. *)
STR_L1 == Stable \/ \E i \in Idx : instances[i].failure # ""

(* ------------------------------------------------------------------------------------------------ *)
(* Witnesses (STR-W1 ..): "sometimes" properties, the stories the configs exist for.  Each is a state  *)
(* predicate that some reachable state must satisfy (EF at the start); the Python side's when= says on  *)
(* which configs it applies (W1 .. W3: the old release probes and the new one speaks a higher version;  *)
(* W4: a bounce may set upgrade.from; W5: the new release speaks a higher version; W6: an operator's    *)
(* wrong upgrade.from meets a 2.1+ leader under kafka).                                                  *)

(* STR-W1: a leader answered a member whose subscription is newer than it understands with an         *)
(* assignment (version probing) instead of failing.                                                     *)
STR_W1 == /\ leader >= 0
          /\ \E i \in Idx : /\ instances[i].used_version > Latest[instances[leader + 1].release]
                            /\ \E d \in instances[i].inbox : d.error = 0

(* STR-W2: a member probed down: without upgrade.from, it subscribes below its own latest version. *)
STR_W2 == \E i \in Idx : instances[i].upgrade_from = "" /\ instances[i].used_version < Latest[instances[i].release]

(* STR-W3: the leader of a rebalance has a follow-up rebalance to trigger. *)
STR_W3 == follow_up >= 0

(* STR-W4: an old-release leader assigned to a new-release member subscribing with upgrade.from. *)
STR_W4 == /\ leader >= 0
          /\ instances[leader + 1].release = OldRelease
          /\ \E i \in Idx : instances[i].upgrade_from # "" /\ \E d \in instances[i].inbox : d.error = 0

(* STR-W5: every bounce is done, the group is stable and every member uses the new release's version. *)
STR_W5 == BouncesDone /\ Stable /\ Converged

(* STR-W6: an operator's wrong upgrade.from stopped the group: the leader met a pre-2.0 and a future    *)
(* subscription at once and every instance shut down on its error assignment.                          *)
STR_W6 == \A i \in Idx : instances[i].failure = "shutdown"
=============================================================================================

-------------------------------- MODULE ZkMigration --------------------------------
(***************************************************************************)
(* KIP-866: the migration of a ZooKeeper-mode Kafka cluster to KRaft.      *)
(*                                                                         *)
(* A ZooKeeper ensemble (/controller, /controller_epoch and its znode      *)
(* version, /migration and its version, the metadata as a sequence of      *)
(* record ids), ZK brokers and a new KRaft quorum that bootstrapped its    *)
(* empty log into PRE_MIGRATION.  Each voter runs its own                  *)
(* KRaftMigrationDriver; the active one waits for the quorum and the       *)
(* brokers, takes over /controller and /controller_epoch, copies           *)
(* ZooKeeper's metadata in one transaction, syncs KRaft to ZooKeeper,      *)
(* sends UpdateMetadata / LeaderAndIsr to the ZK brokers and then writes   *)
(* every committed record to ZooKeeper with multi-ops conditional on the   *)
(* /controller_epoch version its claim got and the /migration version     *)
(* ("dual writes").  Brokers restart as KRaft brokers;                     *)
(* finalization turns migration off on the quorum; rollback brings the     *)
(* brokers back to ZooKeeper mode, shuts the quorum down and deletes the   *)
(* controller znodes.  Faults: voter crash and recovery, leadership moving *)
(* away from a still running leader, ZooKeeper outages, a misconfigured    *)
(* voter, an incompatible broker, an unclean quorum shutdown.              *)
(*                                                                         *)
(* The same variables (the reference's view), actions and property ids as  *)
(* reference_impl/zk_migration and properties/zk_migration.py (MIG-01 is   *)
(* MIG_01 here).  Profile "kip" is the KIP as written; "kafka" is Apache   *)
(* Kafka 3.9.  Brokers and voters are 1-based indices here; the ids they   *)
(* carry in the state (/controller, leader) are 0-based as in the          *)
(* reference (broker b is id b - 1, voter v is id v - 1, KRaftId + v - 1   *)
(* in /controller).                                                        *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Str;
    Profile,                    \* "kip" or "kafka"
    \* @type: Str;
    KafkaRelease,               \* "3.9": the spec models Kafka 3.9's rules (the reference also has "3.5")
    \* @type: Int;
    NBrokers,                   \* ZK brokers
    \* @type: Int;
    NVoters,                    \* KRaft controllers (voters)
    \* @type: Int;
    QuorumLevel,                \* the quorum's metadata.version (feature level)
    \* @type: Int;
    BrokerIbp,                  \* the ZK brokers' inter.broker.protocol.version (feature level)
    \* @type: Int;
    KipMinimumLevel,            \* 3.4-IV0: the KIP's bridge release
    \* @type: Int;
    KafkaEmptyLogMinimumLevel,  \* 3.6-IV1: Kafka 3.9 bootstraps an empty log in migration mode from here
    \* @type: Int;
    ControllerRegistrationLevel, \* 3.7-IV0: Kafka 3.9's controllers register (ControllerRegistrationRecord)
    \* @type: Int;
    ZkEpoch,                    \* /controller_epoch before the migration
    \* @type: Int;
    MaxUpdates,                 \* metadata changes (ZK mode or KRaft): record ids 1..MaxUpdates
    \* @type: Int;
    LagLimit,                   \* kip: records KRaft may commit ahead of ZooKeeper during dual write
    \* @type: Int;
    MaxEpoch,                   \* faults (crashes, failovers, misconfigured restarts) stop at this Raft epoch
    \* @type: Bool;
    Failover,                   \* voter crash and recovery, leadership moving away
    \* @type: Int;
    MaxVotersDown,              \* voters that may be down at once (2 of 3: the majority is lost)
    \* @type: Bool;
    ZkOutage,                   \* ZooKeeper unavailable and back
    \* @type: Bool;
    IncompatibleBroker,         \* a broker restarted with an IBP below the quorum's
    \* @type: Bool;
    MisconfiguredController,    \* a voter restarted without (or again with) the migration config
    \* @type: Bool;
    MisconfiguredBeforeMigration, \* ... and without it before the copy (PRE_MIGRATION)
    \* @type: Bool;
    Rollback,                   \* brokers back to ZK mode, quorum shutdown, controller znodes deleted
    \* @type: Bool;
    UncleanShutdown,            \* the quorum shut down while ZooKeeper lags
    \* @type: Bool;
    Finalize,                   \* migration turned off on the quorum once every broker runs KRaft
    \* @type: Int;
    KRaftId,                    \* /controller names KRaft voter id i as KRaftId + i
    \* @type: Set(Str);
    Mutations,                  \* broken variants (config.MUTATIONS); {} for the reference
    \* @type: Set(Int);
    Levels                      \* the metadata.version feature levels Kafka defines (3.0-IV1 = 1 ...)

VARIABLES
    \* @type: {available: Bool, controller: Int, kraft_epoch: Int, controller_epoch: Int, epoch_version: Int, migration_version: Int, migrated: Bool, data: Seq(Int), epoch_high: Int};
    zk,                   \* ZooKeeper: the znodes, the metadata it holds, the highest epoch ever written
    \* @type: Seq({mode: Str, migration: Bool, ibp: Int, registered: Bool, kraft_rpcs: Bool, ibp_fault: Bool});
    brokers,              \* the ZK brokers ("ZK" or "KRAFT" mode)
    \* @type: Seq({running: Bool, migration: Bool, driver: Str, zk_version: Int, zk_epoch: Int, epoch_version: Int, synced: Int});
    voters,               \* the KRaft controllers, each with its KRaftMigrationDriver state
    \* @type: Int;
    leader,               \* the active controller (0-based id), -1 when none
    \* @type: Int;
    raft_epoch,
    \* @type: Str;
    migration,            \* ZkMigrationState persisted in the metadata log
    \* @type: Seq(Int);
    log,                  \* committed KRaft metadata records
    \* @type: Bool;
    txn,                  \* the migration transaction is open (copy begun, not committed)
    \* @type: Int;
    zk_controller_epoch,  \* the epoch the ZK-mode controller was elected with, -1 when none
    \* @type: Int;
    next_id,              \* the id of the next metadata change
    \* @type: Str;
    shutdown              \* rollback: "NONE", "CLEAN" or "UNCLEAN" shutdown of the quorum

vars == <<zk, brokers, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

BrokerIdx == 1..NBrokers
VoterIdx == 1..NVoters

Max(a, b) == IF a >= b THEN a ELSE b
Min(a, b) == IF a <= b THEN a ELSE b
Take(s, n) == SubSeq(s, 1, Min(n, Len(s)))      \* Python's s[:n]

(* ------------------------------------------------------------------------------------------------ *)
(* ZkMigrationState (persisted) and MigrationDriverState (each driver, in memory), as in Kafka 3.9.   *)
ZkMigrationStates == {"NONE", "MIGRATION", "PRE_MIGRATION", "POST_MIGRATION"}
DriverStates == {"UNINITIALIZED", "INACTIVE", "WAIT_FOR_CONTROLLER_QUORUM", "WAIT_FOR_BROKERS",
                 "BECOME_CONTROLLER", "ZK_MIGRATION", "SYNC_KRAFT_TO_ZK", "KRAFT_CONTROLLER_TO_BROKER_COMM",
                 "DUAL_WRITE"}

(* KRaftMigrationDriver.isValidStateChange: staying put is always valid, UNINITIALIZED never a target. *)
ValidDriverTransitions ==
    [d \in DriverStates |->
        CASE d = "UNINITIALIZED" -> {"INACTIVE"}
          [] d = "DUAL_WRITE" -> {"INACTIVE"}
          [] d = "INACTIVE" -> {"WAIT_FOR_CONTROLLER_QUORUM"}
          [] d = "WAIT_FOR_CONTROLLER_QUORUM" -> {"INACTIVE", "BECOME_CONTROLLER", "WAIT_FOR_BROKERS"}
          [] d = "WAIT_FOR_BROKERS" -> {"INACTIVE", "BECOME_CONTROLLER"}
          [] d = "BECOME_CONTROLLER" -> {"INACTIVE", "ZK_MIGRATION", "SYNC_KRAFT_TO_ZK"}
          [] d = "ZK_MIGRATION" -> {"INACTIVE", "SYNC_KRAFT_TO_ZK"}
          [] d = "SYNC_KRAFT_TO_ZK" -> {"INACTIVE", "KRAFT_CONTROLLER_TO_BROKER_COMM"}
          [] d = "KRAFT_CONTROLLER_TO_BROKER_COMM" -> {"INACTIVE", "DUAL_WRITE"}]
IsValidStateChange(cur, new) == cur = new \/ (new # "UNINITIALIZED" /\ new \in ValidDriverTransitions[cur])

(* ActivationRecordsGenerator.recordsForEmptyLog: the quorum's first leader bootstraps the empty log   *)
(* into PRE_MIGRATION only from this metadata.version on (else it cannot activate at all).             *)
BootstrapMinimumLevel == IF Profile = "kafka" THEN KafkaEmptyLogMinimumLevel ELSE KipMinimumLevel

(* The constants this spec is written for, as a predicate of a record of them (so that rollcheck conform *)
(* can ask it of many configs in one TLC run and compare with the configs the reference accepts).      *)
(* At most 3 brokers and 1 or 3 voters (Raft majorities of 1 and 2), both IBPs Kafka's levels, a quorum *)
(* that can bootstrap into PRE_MIGRATION, epochs and bounds that leave a first step, and only the       *)
(* broken variants this spec implements.                                                                *)
SpecMutations == {"unconditional_zk_writes", "kraft_epoch_not_above_zk", "non_transactional_copy",
                  "finalize_without_every_voter", "dual_write_ignores_zk_failure", "serve_before_copy",
                  "rpcs_to_incompatible_broker", "start_without_all_brokers", "no_sync_after_failover",
                  "stale_migration_version", "no_controller_quorum_check",
                  "registration_without_zk_migration_ready"}
ConfigOk(c) ==
    /\ c.Profile \in {"kip", "kafka"}
    /\ c.KafkaRelease = "3.9"
    /\ c.NBrokers \in 1..3
    /\ c.NVoters \in {1, 3}
    /\ c.QuorumLevel \in c.Levels /\ c.BrokerIbp \in c.Levels
    /\ c.QuorumLevel >= IF c.Profile = "kafka" THEN c.KafkaEmptyLogMinimumLevel ELSE c.KipMinimumLevel
    /\ c.ZkEpoch >= 1 /\ c.MaxUpdates >= 0 /\ c.LagLimit >= 1 /\ c.MaxEpoch >= 1
    /\ c.MaxVotersDown \in 0..c.NVoters
    /\ c.Mutations \subseteq SpecMutations
ASSUME ConfigOk([Profile |-> Profile, KafkaRelease |-> KafkaRelease, NBrokers |-> NBrokers, NVoters |-> NVoters,
                 QuorumLevel |-> QuorumLevel, BrokerIbp |-> BrokerIbp, KipMinimumLevel |-> KipMinimumLevel,
                 KafkaEmptyLogMinimumLevel |-> KafkaEmptyLogMinimumLevel, ZkEpoch |-> ZkEpoch,
                 MaxUpdates |-> MaxUpdates, LagLimit |-> LagLimit, MaxEpoch |-> MaxEpoch, Mutations |-> Mutations,
                 MaxVotersDown |-> MaxVotersDown, Levels |-> Levels])

(* ------------------------------------------------------------------------------------------------ *)
QuorumUp == shutdown = "NONE"
InProgress == migration \in {"PRE_MIGRATION", "MIGRATION"}
Running == {v \in VoterIdx : voters[v].running}
FaultsLeft == raft_epoch < MaxEpoch
IsLeader(v) == leader = v - 1
LeaderOk == QuorumUp /\ leader >= 0 /\ voters[leader + 1].running
AllBrokersKRaft == \A b \in BrokerIdx : brokers[b].mode = "KRAFT"
AllBrokersZk == \A b \in BrokerIdx : brokers[b].mode = "ZK"

Init ==
    /\ zk = [available |-> TRUE, controller |-> 0, kraft_epoch |-> -1, controller_epoch |-> ZkEpoch,
             epoch_version |-> 0, migration_version |-> -1, migrated |-> FALSE, data |-> <<0>>,
             epoch_high |-> ZkEpoch]
    /\ brokers = [b \in BrokerIdx |-> [mode |-> "ZK", migration |-> FALSE, ibp |-> BrokerIbp,
                                       registered |-> FALSE, kraft_rpcs |-> FALSE, ibp_fault |-> FALSE]]
    /\ voters = [v \in VoterIdx |-> [running |-> TRUE, migration |-> TRUE, driver |-> "INACTIVE",
                                     zk_version |-> -1, zk_epoch |-> -1, epoch_version |-> -1, synced |-> 0]]
    /\ leader = 0
    /\ raft_epoch = 1
    /\ migration = "PRE_MIGRATION"
    /\ log = <<>>
    /\ txn = FALSE
    /\ zk_controller_epoch = ZkEpoch
    /\ next_id = 1
    /\ shutdown = "NONE"

(* ================================================================================================ *)
(* ZooKeeper mode.                                                                                   *)

(* KafkaController election: a missing /controller_epoch is created at 0 and then incremented. *)
ElectZkController(b) ==
    LET epoch == Max(zk.controller_epoch, 0) + 1 IN
    /\ zk.available /\ zk.controller = -1
    /\ brokers[b].mode = "ZK"
    /\ zk' = [zk EXCEPT !.controller = b - 1, !.kraft_epoch = -1, !.controller_epoch = epoch,
                        !.epoch_version = @ + 1, !.epoch_high = Max(@, epoch)]
    /\ zk_controller_epoch' = epoch
    /\ UNCHANGED <<brokers, voters, leader, raft_epoch, migration, log, txn, next_id, shutdown>>

(* A ZK controller's writes are multi-ops conditional on /controller_epoch's version: once KRaft (or a   *)
(* newer ZK controller) rewrote it they fail, i.e. its epoch must still be the current one.           *)
ZkMetadataChange ==
    /\ zk.available /\ 0 <= zk.controller /\ zk.controller < KRaftId
    /\ next_id <= MaxUpdates
    /\ zk_controller_epoch = zk.controller_epoch
    /\ brokers[zk.controller + 1].mode = "ZK"
    /\ zk' = [zk EXCEPT !.data = Append(@, next_id)]
    /\ next_id' = next_id + 1
    /\ UNCHANGED <<brokers, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, shutdown>>

(* ================================================================================================ *)
(* The ZK brokers.                                                                                   *)

(* A rolling restart of a ZK broker with new configs: it registers with the quorum again, and if it was *)
(* the ZK controller its ephemeral /controller goes away.  kip: the restarted broker is unregistered    *)
(* until it registers with its new configs.  kafka: its RegisterBrokerRecord stays in the image (fenced) *)
(* until a new registration replaces it; one at another IBP is refused, so the old record stays.       *)
RestartZkBroker(b, mig, ibp) ==
    /\ zk' = IF zk.controller = b - 1 THEN [zk EXCEPT !.controller = -1] ELSE zk
    /\ brokers' = [brokers EXCEPT ![b] = [@ EXCEPT !.migration = mig, !.ibp = ibp,
                                                   !.registered = (Profile = "kafka" /\ brokers[b].registered),
                                                   !.kraft_rpcs = FALSE,
                                                   !.ibp_fault = (@ \/ ibp # BrokerIbp)]]
    /\ UNCHANGED <<voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* Also how the operator puts right a broker restarted at a wrong IBP (IncompatibleBrokerJoins).       *)
EnableMigrationOnBroker(b) ==
    /\ brokers[b].mode = "ZK" /\ (~brokers[b].migration \/ brokers[b].ibp # BrokerIbp)
    /\ InProgress /\ QuorumUp
    /\ RestartZkBroker(b, TRUE, BrokerIbp)

IncompatibleBrokerJoins(b) ==
    /\ IncompatibleBroker
    /\ brokers[b].mode = "ZK" /\ ~brokers[b].ibp_fault
    /\ InProgress /\ QuorumUp
    /\ RestartZkBroker(b, TRUE, BrokerIbp - 1)

(* KIP-866 "Broker registration": accepted when the active controller runs with the migration config,  *)
(* ZkMigrationReady is set and the broker's IBP is the quorum's metadata.version.                      *)
RegisterZkBroker(b) ==
    /\ brokers[b].mode = "ZK" /\ brokers[b].migration /\ ~brokers[b].registered
    /\ LeaderOk
    /\ voters[leader + 1].migration
    /\ brokers[b].ibp = QuorumLevel
    /\ brokers' = [brokers EXCEPT ![b].registered = TRUE]
    /\ UNCHANGED <<zk, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

RestartBrokerAsKRaft(b) ==
    /\ migration = "MIGRATION" /\ QuorumUp
    /\ brokers[b].mode = "ZK" /\ brokers[b].registered
    /\ brokers' = [brokers EXCEPT ![b] = [@ EXCEPT !.mode = "KRAFT", !.kraft_rpcs = FALSE]]
    /\ UNCHANGED <<zk, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

RollbackBrokerToZk(b) ==
    /\ Rollback
    /\ brokers[b].mode = "KRAFT" /\ migration = "MIGRATION"
    /\ brokers' = [brokers EXCEPT ![b].mode = "ZK"]
    /\ UNCHANGED <<zk, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* ================================================================================================ *)
(* The KRaft quorum: elections, activation, crashes and restarts.                                    *)

(* ActivationRecordsGenerator.recordsForNonEmptyLog (kafka) and KIP-866 "wrong settings" (kip): what a  *)
(* newly elected controller writes ("" for nothing) and whether it resigns.                            *)
AllVotersOff == (\A x \in VoterIdx : ~voters[x].migration) \/ "finalize_without_every_voter" \in Mutations
Activation(v) ==
    LET enabled == voters[v].migration IN
    IF migration = "NONE" /\ enabled
    THEN [write |-> "", resign |-> TRUE]      \* "created in KRaft mode"
    ELSE IF migration = "MIGRATION" /\ ~enabled
    THEN IF Profile = "kafka" \/ AllVotersOff
         THEN [write |-> "POST_MIGRATION", resign |-> FALSE]   \* "Completing the ZK migration"
         ELSE [write |-> "", resign |-> TRUE]
    ELSE IF migration = "PRE_MIGRATION" /\ ~enabled /\ Profile = "kip"
    THEN [write |-> "", resign |-> TRUE]
    ELSE [write |-> "", resign |-> FALSE]

(* Raft elects v; it replays the log and activates: an open migration transaction is aborted, or a     *)
(* misconfigured controller resigns, writing nothing (the transaction stays open for the next leader). *)
(* v's Raft client left its old state first, which fires KRaftLeaderEvent(not leader) before           *)
(* KRaftLeaderEvent(leader): its driver is INACTIVE, holding nothing of ZooKeeper, before it acts as    *)
(* the new leader.                                                                                     *)
BecomeLeader(v) ==
    LET act == Activation(v) IN
    /\ leader' = IF act.resign THEN -1 ELSE v - 1
    /\ raft_epoch' = raft_epoch + 1
    /\ txn' = (act.resign /\ txn)
    /\ migration' = IF act.write = "" THEN migration ELSE act.write
    /\ voters' = [voters EXCEPT ![v].driver = "INACTIVE", ![v].zk_version = -1, ![v].zk_epoch = -1,
                                 ![v].epoch_version = -1, ![v].synced = 0]
    /\ UNCHANGED <<zk, brokers, log, zk_controller_epoch, next_id, shutdown>>

(* Electing a voter that will resign (misconfigured) is a fault: bounded by the epoch. *)
ElectLeader(v) ==
    /\ QuorumUp
    /\ leader < 0
    /\ 2 * Cardinality(Running) > NVoters
    /\ voters[v].running
    /\ (~Activation(v).resign \/ FaultsLeft)
    /\ BecomeLeader(v)

(* Raft moves leadership while the old leader keeps running (a partition, a slow fetch): its driver     *)
(* learns of it only later, the window in which a stale controller may write.                          *)
LeaderFailover(v) ==
    /\ QuorumUp /\ Failover /\ FaultsLeft
    /\ leader >= 0
    /\ voters[v].running /\ ~IsLeader(v)
    /\ BecomeLeader(v)

CrashVoter(v) ==
    /\ QuorumUp /\ Failover /\ FaultsLeft
    /\ voters[v].running /\ NVoters - Cardinality(Running) < MaxVotersDown
    /\ voters' = [voters EXCEPT ![v].running = FALSE]
    /\ leader' = IF IsLeader(v) THEN -1 ELSE leader
    /\ UNCHANGED <<zk, brokers, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* The driver starts UNINITIALIZED and reads /migration before it goes INACTIVE; nothing it learns there *)
(* is used before it claims leadership again, so it starts INACTIVE here (as in the reference).          *)
Restarted(v, mig) ==
    /\ voters' = [voters EXCEPT ![v] = [running |-> TRUE, migration |-> mig, driver |-> "INACTIVE",
                                        zk_version |-> -1, zk_epoch |-> -1, epoch_version |-> -1, synced |-> 0]]
    /\ leader' = IF IsLeader(v) THEN -1 ELSE leader
    /\ UNCHANGED <<zk, brokers, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

RecoverVoter(v) ==
    /\ QuorumUp
    /\ ~voters[v].running
    /\ Restarted(v, voters[v].migration)

(* Restarts that change the migration config: finalization (every broker already in KRaft mode) or a   *)
(* misconfigured voter mid-migration or before the copy (mig = FALSE), migration turned back on after  *)
(* it finished (TRUE).                                                                                *)
RestartVoter(v, mig) ==
    /\ QuorumUp
    /\ voters[v].running
    /\ IF mig
       THEN ~voters[v].migration /\ migration = "POST_MIGRATION" /\ MisconfiguredController /\ FaultsLeft
       ELSE /\ voters[v].migration
            /\ \/ /\ migration = "MIGRATION"
                  /\ ((Finalize /\ AllBrokersKRaft) \/ (MisconfiguredController /\ FaultsLeft))
               \/ (migration = "PRE_MIGRATION" /\ MisconfiguredBeforeMigration /\ FaultsLeft)
               \/ (migration = "POST_MIGRATION" /\ Finalize)   \* the rest of the finalizing roll
    /\ Restarted(v, mig)

(* ================================================================================================ *)
(* KRaftMigrationDriver: the steps of voter v's driver (it runs with the migration config).           *)

DriverUp(v) == QuorumUp /\ voters[v].running /\ voters[v].migration

(* The driver's state changes to new, with the voter's other fields set as in r (Kafka throws          *)
(* IllegalStateException on an invalid change; the reference asserts it, here it is a guard).          *)
SetVoter(v, r) ==
    /\ voters' = [voters EXCEPT ![v] = r]
    /\ IsValidStateChange(voters[v].driver, r.driver)

(* Triggers 1-4.  kip: every ZK broker at the migration version, configured, registered, online.       *)
(* kafka (areZkBrokersReadyForMigration): every ZK broker has a registration in the image, fenced or   *)
(* not; its IBP and config were checked when it registered.                                             *)
BrokersReady ==
    LET zkBrokers == {b \in BrokerIdx : brokers[b].mode = "ZK"} IN
    IF "start_without_all_brokers" \in Mutations
    THEN \E b \in zkBrokers : brokers[b].registered
    ELSE /\ zkBrokers # {}
         /\ \A b \in zkBrokers : IF Profile = "kafka"
                                 THEN brokers[b].registered
                                 ELSE brokers[b].migration /\ brokers[b].registered /\ brokers[b].ibp = QuorumLevel

(* KIP-866 "Incompatible broker": it is isolated, no UpdateMetadata or LeaderAndIsr is sent to it.     *)
(* kafka (MigrationPropagator): sent to every ZK broker's registration, fenced or not.                  *)
GetsRpcs(b) ==
    IF "rpcs_to_incompatible_broker" \in Mutations
    THEN brokers[b].mode = "ZK"
    ELSE IF Profile = "kafka"
         THEN brokers[b].mode = "ZK" /\ brokers[b].registered
         ELSE brokers[b].mode = "ZK" /\ brokers[b].registered /\ brokers[b].ibp = QuorumLevel

(* A KRaft controller's metadata writes to ZooKeeper (the dual writes, the full sync) are multi-ops that *)
(* check /controller_epoch's version against the one its claim got and /migration's against the one it *)
(* holds (BADVERSION otherwise): Kafka 3.9's KafkaZkClient.retryMigrationRequestsUntilConnected, branch *)
(* 3.9 at c821449fb7c1e2c0f398eeb5cfc4a8abc210c0a4.  "unconditional_zk_writes" drops both checks.       *)
ZkWriteOk(v) ==
    \/ "unconditional_zk_writes" \in Mutations
    \/ voters[v].epoch_version = zk.epoch_version /\ voters[v].zk_version = zk.migration_version

(* KRaftLeaderEvent: another voter leads.  What the driver held of ZooKeeper is stale from now on; it  *)
(* claims afresh when it leads again.  Until this step it still acts as before.                       *)
DriverDeactivate(v) ==
    /\ DriverUp(v) /\ ~IsLeader(v)
    /\ voters[v].driver # "INACTIVE"
    /\ SetVoter(v, [voters[v] EXCEPT !.driver = "INACTIVE", !.zk_version = -1, !.zk_epoch = -1,
                                     !.epoch_version = -1, !.synced = 0])
    /\ UNCHANGED <<zk, brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* KRaftLeaderEvent (active).  Kafka reads /migration here (getOrCreateMigrationRecoveryState, waiting *)
(* for ZooKeeper: no step while it is away); only before KAFKA-16171 / KAFKA-16667                    *)
(* ("stale_migration_version") is that version kept past the claim, so only then is it recorded.      *)
DriverActivate(v) ==
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "INACTIVE"
    /\ zk.available
    /\ IF "stale_migration_version" \in Mutations
       THEN SetVoter(v, [voters[v] EXCEPT !.driver = "WAIT_FOR_CONTROLLER_QUORUM",
                                          !.zk_version = zk.migration_version])
       ELSE SetVoter(v, [voters[v] EXCEPT !.driver = "WAIT_FOR_CONTROLLER_QUORUM"])
    /\ UNCHANGED <<zk, brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* Trigger 5, checked before a migration starts.  kip: the whole quorum ready, every voter running     *)
(* with ZkMigrationReady.  kafka (QuorumFeatures.reasonAllControllersZkMigrationNotReady): nothing is  *)
(* checked below 3.7-IV0; from 3.7-IV0 every voter's controller registration has zkMigrationReady: the *)
(* migration config it last started with, which stays while it is down (every voter started, so each   *)
(* has a registration).                                                                                *)
(* KAFKA-14909 (no_controller_quorum_check): before 3.5 nothing was asked of the quorum.  KAFKA-15704   *)
(* (registration_without_zk_migration_ready): 3.7's registrations never carried ZkMigrationReady.       *)
QuorumReady ==
    CASE "no_controller_quorum_check" \in Mutations -> TRUE
      [] Profile = "kip" -> \A x \in VoterIdx : voters[x].running /\ voters[x].migration
      [] OTHER -> \/ QuorumLevel < ControllerRegistrationLevel
                  \/ /\ "registration_without_zk_migration_ready" \notin Mutations
                     /\ \A x \in VoterIdx : voters[x].migration

(* Trigger 5 before a migration starts; a migration already copied goes on with the take-over, one not *)
(* yet copied waits again.                                                                             *)
DriverWaitForQuorum(v) ==
    LET new == CASE migration \in {"NONE", "POST_MIGRATION"} -> "INACTIVE"
                 [] migration = "PRE_MIGRATION" -> "WAIT_FOR_BROKERS"
                 [] migration = "MIGRATION" -> IF zk.migrated THEN "BECOME_CONTROLLER" ELSE "INACTIVE"
    IN
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "WAIT_FOR_CONTROLLER_QUORUM"
    /\ (migration = "PRE_MIGRATION" => QuorumReady)
    /\ SetVoter(v, [voters[v] EXCEPT !.driver = new])
    /\ UNCHANGED <<zk, brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* WaitForZkBrokersEvent reads /brokers (readBrokerIds, waiting for ZooKeeper).                       *)
DriverWaitForBrokers(v) ==
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "WAIT_FOR_BROKERS"
    /\ zk.available
    /\ BrokersReady
    /\ SetVoter(v, [voters[v] EXCEPT !.driver = "BECOME_CONTROLLER"])
    /\ UNCHANGED <<zk, brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* KafkaZkClient.tryRegisterKRaftControllerAsActiveController: /controller names this voter with its   *)
(* Raft epoch and /controller_epoch becomes ZooKeeper's epoch + 1 (refused when /controller already    *)
(* names a KRaft controller with the same or a newer Raft epoch, or when /controller_epoch is absent); *)
(* the driver keeps the znode version its SetData on /controller_epoch got (zkControllerEpochZkVersion) *)
(* and then writes /migration unconditionally to learn its latest version (KAFKA-16171 / KAFKA-16667). *)
(* Before those fixes ("stale_migration_version") /migration was not written and the driver kept the   *)
(* version it read when it became active, which the previous controller may have moved since.         *)
BecomeZkController(v) ==
    LET epoch == IF "kraft_epoch_not_above_zk" \in Mutations THEN raft_epoch
                 ELSE zk.controller_epoch + 1
        stale == "stale_migration_version" \in Mutations
        znode == IF stale THEN zk.migration_version ELSE zk.migration_version + 1
        held == IF stale THEN voters[v].zk_version ELSE znode
    IN
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "BECOME_CONTROLLER"
    /\ zk.available
    /\ zk.kraft_epoch < raft_epoch
    /\ zk.controller_epoch >= 0
    /\ zk' = [zk EXCEPT !.controller = KRaftId + v - 1, !.kraft_epoch = raft_epoch, !.controller_epoch = epoch,
                        !.epoch_version = @ + 1, !.migration_version = znode, !.epoch_high = Max(@, epoch)]
    /\ SetVoter(v, [voters[v] EXCEPT !.driver = IF zk.migrated THEN "SYNC_KRAFT_TO_ZK" ELSE "ZK_MIGRATION",
                                     !.zk_version = held, !.zk_epoch = epoch,
                                     !.epoch_version = zk.epoch_version + 1])
    /\ UNCHANGED <<brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* The initial copy: ZooKeeper's metadata read inside one metadata transaction. *)
BeginMigration(v) ==
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "ZK_MIGRATION"
    /\ ~txn
    /\ txn' = TRUE
    /\ log' = IF "non_transactional_copy" \in Mutations
              THEN Take(zk.data, 1)     \* records committed as they are read
              ELSE log
    /\ UNCHANGED <<zk, brokers, voters, leader, raft_epoch, migration, zk_controller_epoch, next_id, shutdown>>

(* Commit the transaction with ZkMigrationRecord(MIGRATION), then record on /migration that the copy     *)
(* finished: KafkaZkClient.updateMigrationState, a SetData conditional on /migration's version alone.    *)
CompleteMigration(v) ==
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "ZK_MIGRATION"
    /\ txn
    /\ zk.available /\ voters[v].zk_version = zk.migration_version
    /\ zk' = [zk EXCEPT !.migrated = TRUE, !.migration_version = @ + 1]
    /\ log' = zk.data
    /\ txn' = FALSE
    /\ migration' = "MIGRATION"
    /\ SetVoter(v, [voters[v] EXCEPT !.driver = "SYNC_KRAFT_TO_ZK", !.zk_version = zk.migration_version + 1,
                                     !.synced = Len(zk.data)])
    /\ UNCHANGED <<brokers, leader, raft_epoch, zk_controller_epoch, next_id, shutdown>>

(* KAFKA-15010: a full KRaft -> ZooKeeper sync after every take-over.  Before it ("no_sync_after_failover") *)
(* there was no reconciliation: the new controller resumed dual writes after the log's end, as if         *)
(* ZooKeeper held every record the previous controller committed.                                         *)
SyncKRaftToZk(v) ==
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "SYNC_KRAFT_TO_ZK"
    /\ zk.available /\ ZkWriteOk(v)
    /\ IF "no_sync_after_failover" \in Mutations
       THEN /\ SetVoter(v, [voters[v] EXCEPT !.driver = "KRAFT_CONTROLLER_TO_BROKER_COMM", !.synced = Len(log)])
            /\ UNCHANGED zk
       ELSE /\ zk' = [zk EXCEPT !.data = log, !.migration_version = @ + 1]
            /\ SetVoter(v, [voters[v] EXCEPT !.driver = "KRAFT_CONTROLLER_TO_BROKER_COMM",
                                             !.zk_version = zk.migration_version + 1, !.synced = Len(log)])
    /\ UNCHANGED <<brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* UpdateMetadata and LeaderAndIsr from the KRaft controller to the ZK brokers that may get them. *)
SendRpcsToBrokers(v) ==
    /\ DriverUp(v) /\ IsLeader(v)
    /\ voters[v].driver = "KRAFT_CONTROLLER_TO_BROKER_COMM"
    /\ brokers' = [b \in BrokerIdx |-> IF GetsRpcs(b) THEN [brokers[b] EXCEPT !.kraft_rpcs = TRUE]
                                      ELSE brokers[b]]
    /\ SetVoter(v, [voters[v] EXCEPT !.driver = "DUAL_WRITE"])
    /\ UNCHANGED <<zk, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* The next committed record written to ZooKeeper in a multi-op conditional on ZkWriteOk's versions.    *)
(* A driver whose state allows dual writes (KRAFT_CONTROLLER_TO_BROKER_COMM, DUAL_WRITE:                *)
(* MigrationDriverState.allowDualWrite) tries it whether or not it still leads (a stale driver has not *)
(* yet noticed).                                                                                       *)
AllowDualWrite(d) == d \in {"KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE"}
DualWrite(v) ==
    LET x == voters[v] IN
    /\ DriverUp(v)
    /\ AllowDualWrite(x.driver)
    /\ x.synced < Len(log)
    /\ IF ~zk.available
       THEN \* the write fails; only the broken variant counts it as written
            /\ "dual_write_ignores_zk_failure" \in Mutations
            /\ voters' = [voters EXCEPT ![v].synced = x.synced + 1]
            /\ UNCHANGED zk
       ELSE /\ ZkWriteOk(v)
            /\ zk' = [zk EXCEPT !.data = Append(@, log[x.synced + 1]), !.migration_version = @ + 1]
            /\ voters' = [voters EXCEPT ![v] = [x EXCEPT !.synced = x.synced + 1,
                                                         !.zk_version = zk.migration_version + 1]]
    /\ UNCHANGED <<brokers, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* KIP-866 "KRaft controller soft start": before the copy only Raft, BrokerRegistration and            *)
(* BrokerHeartbeat are served (Kafka: RUNS_IN_PREMIGRATION).  The KIP's "ZooKeeper unavailable" and     *)
(* write-behind limit: metadata updates stop while ZooKeeper is down or lags by LagLimit records, as    *)
(* the controller knows it through its driver (ZooKeeperWriteBehindLag).  Kafka 3.9 has neither.       *)
ServesMetadata ==
    IF migration = "PRE_MIGRATION"
    THEN "serve_before_copy" \in Mutations
    ELSE IF migration = "MIGRATION" /\ Profile = "kip"
    THEN LET d == voters[leader + 1]
             synced == IF AllowDualWrite(d.driver) THEN d.synced ELSE 0
         IN zk.available /\ Len(log) - synced < LagLimit
    ELSE TRUE

KRaftMetadataChange ==
    /\ LeaderOk
    /\ next_id <= MaxUpdates
    /\ ServesMetadata
    /\ log' = Append(log, next_id)
    /\ next_id' = next_id + 1
    /\ UNCHANGED <<zk, brokers, voters, leader, raft_epoch, migration, txn, zk_controller_epoch, shutdown>>

(* ================================================================================================ *)
(* ZooKeeper outages.                                                                                *)
ZkUnavailable ==
    /\ ZkOutage /\ zk.available
    /\ zk' = [zk EXCEPT !.available = FALSE]
    /\ UNCHANGED <<brokers, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

ZkAvailable ==
    /\ ZkOutage /\ ~zk.available
    /\ zk' = [zk EXCEPT !.available = TRUE]
    /\ UNCHANGED <<brokers, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* ================================================================================================ *)
(* Rollback to ZooKeeper (KIP-866 "Rollback to ZK"; Kafka 3.9 docs "Reverting to ZooKeeper mode").    *)

(* The operator sees only ZooKeeperWriteBehindLag, which the active driver reports. *)
Drained == \/ log = <<>>
           \/ LeaderOk /\ AllowDualWrite(voters[leader + 1].driver) /\ voters[leader + 1].synced = Len(log)

(* With every broker back in ZK mode the quorum is shut down: cleanly once ZooKeeperWriteBehindLag = 0, *)
(* or uncleanly before (which may lose committed metadata).                                              *)
ShutdownQuorum(clean) ==
    /\ Rollback
    /\ QuorumUp /\ InProgress /\ AllBrokersZk
    /\ IF clean THEN Drained ELSE ~Drained /\ UncleanShutdown
    /\ voters' = [v \in VoterIdx |-> [voters[v] EXCEPT !.running = FALSE]]
    /\ leader' = -1
    /\ shutdown' = IF clean THEN "CLEAN" ELSE "UNCLEAN"
    /\ UNCHANGED <<zk, brokers, raft_epoch, migration, log, txn, zk_controller_epoch, next_id>>

(* kip: remove /controller and /controller_epoch.  kafka: remove /controller and /migration; the epoch   *)
(* node stays, so the next ZK controller's epoch continues from it.                                     *)
DeleteControllerZNodes ==
    /\ Rollback
    /\ ~QuorumUp
    /\ zk.available /\ zk.controller >= KRaftId
    /\ zk' = IF Profile = "kip"
             THEN [zk EXCEPT !.controller = -1, !.kraft_epoch = -1, !.controller_epoch = -1, !.epoch_version = -1]
             ELSE [zk EXCEPT !.controller = -1, !.kraft_epoch = -1, !.migration_version = -1, !.migrated = FALSE]
    /\ UNCHANGED <<brokers, voters, leader, raft_epoch, migration, log, txn, zk_controller_epoch, next_id, shutdown>>

(* ================================================================================================ *)
Next ==
    \/ \E b \in BrokerIdx :
          \/ ElectZkController(b)
          \/ EnableMigrationOnBroker(b) \/ IncompatibleBrokerJoins(b) \/ RegisterZkBroker(b)
          \/ RestartBrokerAsKRaft(b) \/ RollbackBrokerToZk(b)
    \/ ZkMetadataChange
    \/ \E v \in VoterIdx :
          \/ ElectLeader(v) \/ CrashVoter(v) \/ LeaderFailover(v) \/ RecoverVoter(v)
          \/ \E mig \in BOOLEAN : RestartVoter(v, mig)
          \/ DriverDeactivate(v) \/ DriverActivate(v) \/ DriverWaitForQuorum(v) \/ DriverWaitForBrokers(v)
          \/ BecomeZkController(v) \/ BeginMigration(v) \/ CompleteMigration(v) \/ SyncKRaftToZk(v)
          \/ SendRpcsToBrokers(v) \/ DualWrite(v)
    \/ KRaftMetadataChange
    \/ ZkUnavailable \/ ZkAvailable
    \/ \E clean \in BOOLEAN : ShutdownQuorum(clean)
    \/ DeleteControllerZNodes

Spec == Init /\ [][Next]_vars

(* ------------------------------------------------------------------------------------------------ *)
(* Properties: the ids of properties/zk_migration.py.  The step properties (MIG-01, 02, 05, 07, 08,    *)
(* 09, 12 and the KIP claim MIG-01R) are checked as [][A]_vars; where the reference's property names   *)
(* the step's action, A names the same action of this spec (a step satisfies the action formula        *)
(* exactly when the reference has that action between the two states).  MIG-03, 04, 06, 10, 11, 15 are *)
(* state invariants.  MIG-04 is checked under the kip profile only (Kafka has no write-behind limit);  *)
(* MIG-12 under kip; MIG-01R only as a KIP claim: the binding's model lists what the reference checks.  *)

Migrating == migration = "MIGRATION" /\ shutdown = "NONE"

(* MIG-01: a KRaft controller takes over /controller_epoch with an epoch above every ZooKeeper epoch. *)
MIG_01_Step == \A v \in VoterIdx : BecomeZkController(v) => zk'.controller_epoch > zk.epoch_high
MIG_01 == [][MIG_01_Step]_vars

(* MIG-02: ZooKeeper accepts metadata writes only from the controller that holds /controller_epoch. *)
MIG_02_Step ==
    zk'.data # zk.data =>
        /\ ZkMetadataChange => zk_controller_epoch = zk.controller_epoch
        /\ \A v \in VoterIdx : (SyncKRaftToZk(v) \/ DualWrite(v)) => voters[v].zk_epoch = zk.controller_epoch
MIG_02 == [][MIG_02_Step]_vars

(* MIG-03: during the migration ZooKeeper's metadata is a prefix of the committed KRaft log. *)
MIG_03 == Migrating => Len(zk.data) <= Len(log) /\ zk.data = SubSeq(log, 1, Len(zk.data))

(* MIG-04: during dual write ZooKeeper never lags the KRaft log by more than the limit. *)
MIG_04 == Migrating => Len(log) - Len(zk.data) <= LagLimit

(* MIG-05: the initial copy commits all of ZooKeeper's metadata at once. *)
MIG_05_Step == \A v \in VoterIdx : CompleteMigration(v) => log' = zk.data
MIG_05 == [][MIG_05_Step]_vars

(* MIG-06: nothing is committed to the KRaft log before the copy. *)
MIG_06 == migration # "PRE_MIGRATION" \/ log = <<>>

(* MIG-07: the migration starts only when every trigger holds: trigger 5 when the driver checks the    *)
(* quorum (kip: the whole quorum running and ready; kafka: from 3.7-IV0 every voter's registration     *)
(* ready, a down voter's included), triggers 1-4 (the brokers) when it stops waiting for them (kip:    *)
(* each broker as it runs; kafka: each broker's registration, a restarted broker's old one included).  *)
MIG_07_Step ==
    \A v \in VoterIdx :
        /\ (DriverWaitForQuorum(v) /\ voters'[v].driver = "WAIT_FOR_BROKERS")
              => IF Profile = "kip"
                 THEN \A x \in VoterIdx : voters[x].running /\ voters[x].migration
                 ELSE QuorumLevel < ControllerRegistrationLevel \/ \A x \in VoterIdx : voters[x].migration
        /\ (DriverWaitForBrokers(v) /\ migration = "PRE_MIGRATION")
              => \A b \in BrokerIdx : IF Profile = "kip"
                                      THEN /\ brokers[b].mode = "ZK" /\ brokers[b].migration
                                           /\ brokers[b].registered /\ brokers[b].ibp = QuorumLevel
                                      ELSE brokers[b].mode = "ZK" /\ brokers[b].registered
MIG_07 == [][MIG_07_Step]_vars

(* MIG-08: a finished migration never restarts: no new take-over of ZooKeeper, no new copy (a driver   *)
(* that has not noticed the finalization may still flush a committed record: harmless).                *)
MIG_08_Step ==
    migration = "POST_MIGRATION" =>
        /\ migration' = "POST_MIGRATION"
        /\ ~\E v \in VoterIdx : BecomeZkController(v) \/ BeginMigration(v) \/ CompleteMigration(v)
MIG_08 == [][MIG_08_Step]_vars

(* MIG-09: no metadata change is served before the copy completes. *)
MIG_09_Step == ~(KRaftMetadataChange /\ migration = "PRE_MIGRATION")
MIG_09 == [][MIG_09_Step]_vars

(* MIG-10: no UpdateMetadata or LeaderAndIsr reaches a broker that did not register with the quorum's  *)
(* metadata.version (kafka: judged by its registration, which a restart at another IBP leaves).         *)
MIG_10 == \A b \in BrokerIdx : ~brokers[b].kraft_rpcs \/
              (brokers[b].registered /\ (Profile = "kafka" \/ brokers[b].ibp = QuorumLevel))

(* MIG-11: after a clean rollback ZooKeeper holds every committed record. *)
MIG_11 == shutdown = "CLEAN" => Len(log) <= Len(zk.data) /\ SubSeq(zk.data, 1, Len(log)) = log

(* MIG-12: the migration is finalized only once every voter turned it off. *)
MIG_12_Step == (migration # "POST_MIGRATION" /\ migration' = "POST_MIGRATION") =>
                   \A x \in VoterIdx : ~voters'[x].migration
MIG_12 == [][MIG_12_Step]_vars

(* MIG-13: a dual write sends ZooKeeper exactly the next committed record it lacks.                     *)
MIG_13_Step == \A v \in VoterIdx : DualWrite(v) => /\ Len(zk.data) < Len(log)
                                                  /\ zk'.data = Append(zk.data, log[Len(zk.data) + 1])
MIG_13 == [][MIG_13_Step]_vars

(* MIG-15: every metadata change is a new record: the log and ZooKeeper hold records in the order they   *)
(* were made, each once, and no more changes were made than MaxUpdates.                                 *)
Increasing(seq) == /\ \A i \in 1..(Len(seq) - 1) : seq[i] < seq[i + 1]
                   /\ \A i \in 1..Len(seq) : seq[i] < next_id
MIG_15 == /\ next_id <= MaxUpdates + 1
          /\ Increasing(log)
          /\ Increasing(zk.data)

(* MIG-16: ZooKeeper's metadata is copied once: a copy starts only while no copy has finished (the log   *)
(* still in PRE_MIGRATION, /migration not marked migrated).                                             *)
MIG_16_Step == \A v \in VoterIdx : BeginMigration(v) => migration = "PRE_MIGRATION" /\ ~zk.migrated
MIG_16 == [][MIG_16_Step]_vars

(* MIG-17: the KRaft quorum elects a leader (a new Raft epoch) only while a majority of its voters runs. *)
MIG_17_Step == raft_epoch' # raft_epoch => 2 * Cardinality(Running) > NVoters
MIG_17 == [][MIG_17_Step]_vars

(* MIG-14 (kip, and the KIP's claims under kafka): during the migration no metadata change is committed  *)
(* while ZooKeeper is unavailable.                                                                      *)
MIG_14_Step == (KRaftMetadataChange /\ Migrating) => zk.available
MIG_14 == [][MIG_14_Step]_vars

(* MIG-01R (a KIP claim Kafka does not make): every new /controller_epoch, including after a rollback,  *)
(* is above every earlier one.                                                                         *)
MIG_01R_Step == zk'.controller_epoch = zk.controller_epoch \/ zk'.controller_epoch < 0
                \/ zk'.controller_epoch > zk.epoch_high
MIG_01R == [][MIG_01R_Step]_vars

(* MIG-L1, MIG-L2 and MIG-L3 are graph properties (AG EF target): TLC checks LTL only, so these are the *)
(* target predicates; rollcheck's explorer checks that the target stays reachable.                     *)
(* MIG-L1: while the quorum runs (shutdown = "NONE"), the migration can always still finish. *)
MIG_L1 == migration = "POST_MIGRATION"
(* MIG-L2: after the quorum is shut down for a rollback, a working ZooKeeper cluster is always reachable. *)
MIG_L2 == 0 <= zk.controller /\ zk.controller < KRaftId /\ AllBrokersZk /\ zk.available
(* MIG-L3: while the quorum runs mid-migration (Migrating), the KRaft controller can always bring       *)
(* ZooKeeper up to date with the KRaft log and dual-write again (or the migration finishes), through    *)
(* steps other than RestartVoter (a controller restarted with another config).                          *)
MIG_L3 == \/ migration = "POST_MIGRATION"
          \/ /\ Migrating /\ leader >= 0
             /\ voters[leader + 1].running /\ voters[leader + 1].driver = "DUAL_WRITE"
             /\ zk.data = log

(* Witnesses ("sometimes": a state the config must reach, else the run is vacuous).  TLC checks each as *)
(* the negated invariant ~MIG_Wn: a "violation" is the witness reached, with its trace.  Each applies   *)
(* only on the configs its when= in properties/zk_migration.py accepts.                                *)
(* MIG-W1: the migration reached dual-write mode: the copy is committed and the active KRaft            *)
(* controller's driver writes every committed record to ZooKeeper (DUAL_WRITE).                         *)
MIG_W1 == Migrating /\ leader >= 0 /\ voters[leader + 1].running /\ voters[leader + 1].driver = "DUAL_WRITE"

(* MIG-W2: the migration was finalized: POST_MIGRATION with every broker running in KRaft mode. *)
MIG_W2 == migration = "POST_MIGRATION" /\ AllBrokersKRaft

(* MIG-W3: a deposed KRaft controller's dual write is fenced: after a failover mid-migration it still   *)
(* has a committed record to write, but a newer controller holds a higher /controller_epoch and has     *)
(* moved /migration's version, so ZooKeeper refuses the write.                                          *)
MIG_W3 == /\ Migrating /\ leader >= 0
          /\ zk.available /\ zk.controller = KRaftId + leader
          /\ \E v \in VoterIdx :
                /\ v # leader + 1 /\ voters[v].running /\ voters[v].migration
                /\ AllowDualWrite(voters[v].driver) /\ voters[v].synced < Len(log)
                /\ 0 <= voters[v].zk_epoch /\ voters[v].zk_epoch < zk.controller_epoch
                /\ voters[v].zk_version # zk.migration_version

(* MIG-W4: the cluster rolled back from dual-write mode to ZooKeeper: after the copy the quorum was     *)
(* shut down cleanly (its driver dual-writing, ZooKeeper caught up), the controller znodes were         *)
(* deleted, and a ZK broker controls again with every broker in ZK mode.                                *)
MIG_W4 == /\ shutdown = "CLEAN" /\ migration = "MIGRATION"
          /\ 0 <= zk.controller /\ zk.controller < KRaftId /\ zk_controller_epoch = zk.controller_epoch
          /\ AllBrokersZk

(* MIG-W5: a KRaft controller that held ZooKeeper crashed mid-migration and, while it is down, a newly  *)
(* elected controller took over ZooKeeper (a higher /controller_epoch, its Raft epoch in /controller)    *)
(* and resumed dual writes.  A crash keeps the voter's driver as it was: a down voter that still holds a *)
(* claimed epoch was in charge of ZooKeeper when it crashed.                                            *)
MIG_W5 == /\ Migrating /\ leader >= 0
          /\ zk.controller = KRaftId + leader /\ zk.kraft_epoch = raft_epoch
          /\ voters[leader + 1].driver = "DUAL_WRITE"
          /\ \E v \in VoterIdx : ~voters[v].running /\ 0 <= voters[v].zk_epoch
                                 /\ voters[v].zk_epoch < zk.controller_epoch

(* MIG-W6: an unclean rollback lost metadata: the quorum was shut down while ZooKeeper lagged, and      *)
(* ZooKeeper lacks a record the KRaft log had committed.                                                *)
MIG_W6 == shutdown = "UNCLEAN" /\ Take(zk.data, Len(log)) # log

(* MIG-W7: the KRaft quorum lost its majority: more than half of its voters are down at once.           *)
MIG_W7 == 2 * Cardinality(Running) <= NVoters

(* MIG-W8: a misconfigured KRaft controller finalized a migration the operator never finalized:         *)
(* POST_MIGRATION while a running voter keeps the migration config (Kafka: ActivationRecordsGenerator). *)
MIG_W8 == migration = "POST_MIGRATION" /\ \E v \in Running : voters[v].migration
=============================================================================================

-------------------------------- MODULE MetadataVersion --------------------------------
(***************************************************************************)
(* KIP-778: metadata.version in KRaft.                                     *)
(*                                                                         *)
(* A KRaft controller quorum and its brokers change software (rolling      *)
(* restarts) and metadata.version (UpdateFeatures: upgrades, SAFE and      *)
(* UNSAFE downgrades, dry runs), register brokers, replicate the metadata  *)
(* log, write records of the feature levels in use, elect and fail over    *)
(* the active controller, crash and recover.  The same variables as the    *)
(* view of reference_impl/metadata_version/system.py, the same actions,    *)
(* and the property ids of properties/metadata_version.py (MV-01 is MV_01  *)
(* here).  Profile "kip" is the KIP as written (on top of KIP-584);        *)
(* "kafka" is Apache Kafka's FeatureControlManager (3.9 / 4.0).            *)
(*                                                                         *)
(* Indices: voters and brokers are sequences (1-based); "leader" and each  *)
(* node's "offset" (into "log") are 0-based as in the reference, so the    *)
(* active controller is voters[leader + 1] and a node has read             *)
(* log[offset + 1].                                                        *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    \* @type: Str;
    Profile,                      \* "kip" or "kafka"
    \* @type: Str;
    KafkaRelease,                 \* "3.9" or "4.0" (kafka profile; see the note at KafkaAccepts)
    \* @type: Set(Int);
    CatalogLevels,                \* the feature levels of the catalog (consecutive)
    \* @type: Set(Int);
    FormatChanges,                \* the levels that changed the metadata format (didMetadataChange)
    \* @type: Int;
    BootstrapFloor,               \* Kafka's MINIMUM_BOOTSTRAP_VERSION in this catalog (kafka profile floor)
    \* @type: Int;
    ControllerRegistrationLevel,  \* the first level with controller registrations (3.7-IV0, KIP-919)
    \* @type: Str -> {min: Int, max: Int};
    Softwares,                    \* each binary's supported range of metadata.version levels
    \* @type: Str;
    OldSoftware,                  \* the software the cluster is formatted on
    \* @type: Str;
    NewSoftware,                  \* the newest software (target of the single rolling restart, MV-L1)
    \* @type: Int;
    StartLevel,                   \* the level of the bootstrap FeatureLevelRecord
    \* @type: Int;
    NVoters,
    \* @type: Int;
    NBrokers,
    \* @type: Set(Int);
    RequestedLevels,              \* the levels the operator asks for (0 = delete metadata.version)
    \* @type: Set(Str);
    DowngradeTypes,               \* subset of {"NONE", "SAFE", "UNSAFE"}
    \* @type: Bool;
    DryRun,                       \* whether the operator also sends dry runs
    \* @type: Bool;
    Crashes,                      \* CrashNode / RecoverNode actions
    \* @type: Bool;
    Failover,                     \* the LeaderFailover action
    \* @type: Int;
    MaxDown,                      \* at most this many nodes crashed or terminated for a crash to happen
    \* @type: Int;
    MaxLog,                       \* log entries not yet read by every node (an update waits for room)
    \* @type: Set(Int);
    RecordLevels,                 \* record features the controller writes, by the level introducing them
    \* @type: Bool;
    DowngradeFromAny,             \* MV-L2 from every settled new-software cluster (the KIP's claim)
    \* @type: Set(Str);
    Mutations                     \* broken variants (config.MUTATIONS); {} for the reference

VARIABLES
    \* @type: Seq({software: Str, status: Str, offset: Int});
    voters,
    \* @type: Seq({software: Str, status: Str, offset: Int, registration: Str, fenced: Bool, rpc_level: Int});
    brokers,    \* registration: the software whose range the controller holds ("" = not registered)
    \* @type: Int;
    leader,     \* the active controller (0-based), -1 when none
    \* @type: Seq(Int);
    log,        \* metadata.version levels some node has not read yet; the last one is committed
    \* @type: Set(Int);
    records     \* record features in the committed image, by the level that introduced them

vars == <<voters, brokers, leader, log, records>>

VIdx == 1..NVoters
BIdx == 1..NBrokers
SoftwareNames == DOMAIN Softwares
DryRunChoices == IF DryRun THEN BOOLEAN ELSE {FALSE}
Roles == {"voter", "broker"}

Min(a, b) == IF a <= b THEN a ELSE b
Max(a, b) == IF a >= b THEN a ELSE b
SetMin(S) == CHOOSE x \in S : \A y \in S : x <= y

CatalogMin == SetMin(CatalogLevels)
Level == log[Len(log)]                       \* the committed (finalized) metadata.version
End == Len(log) - 1                          \* the offset of the committed entry
Supports(sw, lvl) == Softwares[sw].min <= lvl /\ lvl <= Softwares[sw].max
Running(n) == n.status = "RUNNING"
RunningVoters == {v \in VIdx : Running(voters[v])}
HasQuorum == leader >= 0 /\ Cardinality(RunningVoters) * 2 > NVoters
\* voters and brokers have different record types: a node is read field by field
NodeSoftware(role, i) == IF role = "voter" THEN voters[i].software ELSE brokers[i].software
NodeStatus(role, i) == IF role = "voter" THEN voters[i].status ELSE brokers[i].status
NodeStatusAfter(role, i) == IF role = "voter" THEN voters'[i].status ELSE brokers'[i].status
NodesIdx(role) == IF role = "voter" THEN VIdx ELSE BIdx

(* The lowest metadata.version an update may set: the catalog's first version under the KIP (KRaft       *)
(* requires a metadata.version), Kafka's MINIMUM_BOOTSTRAP_VERSION (3.3-IV0) under the kafka profile.     *)
Floor == IF Profile = "kafka" THEN BootstrapFloor ELSE CatalogMin

(* KIP-778 "Downgrades": a change is lossless iff no version in (low, high] changed the metadata format.  *)
(* A level outside the catalog (a deleted metadata.version) has no lossless path to anything.            *)
Lossless(source, target) ==
    /\ source \in CatalogLevels /\ target \in CatalogLevels
    /\ \A l \in (Min(source, target) + 1)..Max(source, target) : l \notin FormatChanges

(* The version whose RPCs a broker uses: the one it has read (KIP-778 ApiVersions); the mutant uses its  *)
(* binary's highest, as the static inter.broker.protocol.version did.                                    *)
RpcLevel(sw, lvl) == IF "rpc_from_binary" \in Mutations THEN Softwares[sw].max ELSE lvl

(* The configs this spec is written for (conform (d) compares it with the configs the reference accepts: *)
(* MetadataVersionConfig.validate): a known profile and Kafka release, 1 to 5 voters and 0 to 4 brokers, *)
(* every software's range within the catalog, a start level the initial software supports, requested     *)
(* levels within 0 .. the latest (0 asks for a deletion), a non-empty set of known downgrade types,       *)
(* record levels of the catalog, the bounds, and only the broken variants this spec implements.         *)
(* Software names are distinct by construction (Softwares is a function): the binding refuses a config   *)
(* that names one twice; an initial software not among them is refused here.                            *)
SpecMutations == {"skip_quorum_check", "skip_broker_check", "allow_lossy_safe_downgrade", "register_incompatible",
                  "broker_ignores_unsupported", "lossless_drops_records", "dry_run_writes", "rpc_from_binary",
                  "skip_floor_check", "restart_skips_version_check", "allow_downgrade_unchecked",
                  "write_record_above_version", "peers_advertise_no_features", "restart_keeps_session"}
ConfigOk(c) ==
    LET latest == CHOOSE l \in c.CatalogLevels : \A k \in c.CatalogLevels : k <= l
    IN /\ c.Profile \in {"kip", "kafka"}
       /\ c.KafkaRelease \in {"3.9", "4.0"}
       /\ c.NVoters \in 1..5 /\ c.NBrokers \in 0..4
       /\ \A sw \in DOMAIN c.Softwares : /\ c.Softwares[sw].min \in c.CatalogLevels
                                        /\ c.Softwares[sw].max \in c.CatalogLevels
                                        /\ c.Softwares[sw].min <= c.Softwares[sw].max
       /\ c.OldSoftware \in DOMAIN c.Softwares  \* before it is applied: TLC evaluates /\ in order
       /\ c.Softwares[c.OldSoftware].min <= c.StartLevel /\ c.StartLevel <= c.Softwares[c.OldSoftware].max
       /\ \A l \in c.RequestedLevels : 0 <= l /\ l <= latest
       /\ c.DowngradeTypes # {} /\ c.DowngradeTypes \subseteq {"NONE", "SAFE", "UNSAFE"}
       /\ c.RecordLevels \subseteq c.CatalogLevels
       /\ c.MaxDown >= 0 /\ c.MaxLog >= 1
       /\ c.Mutations \subseteq SpecMutations
ASSUME ConfigOk([Profile |-> Profile, KafkaRelease |-> KafkaRelease, CatalogLevels |-> CatalogLevels,
                 FormatChanges |-> FormatChanges, BootstrapFloor |-> BootstrapFloor,
                 ControllerRegistrationLevel |-> ControllerRegistrationLevel, Softwares |-> Softwares,
                 OldSoftware |-> OldSoftware, NewSoftware |-> NewSoftware, StartLevel |-> StartLevel,
                 NVoters |-> NVoters, NBrokers |-> NBrokers, RequestedLevels |-> RequestedLevels,
                 DowngradeTypes |-> DowngradeTypes, DryRun |-> DryRun, Crashes |-> Crashes, Failover |-> Failover,
                 MaxDown |-> MaxDown, MaxLog |-> MaxLog, RecordLevels |-> RecordLevels,
                 DowngradeFromAny |-> DowngradeFromAny, Mutations |-> Mutations])

Init ==
    /\ voters = [v \in VIdx |-> [software |-> OldSoftware, status |-> "RUNNING", offset |-> 0]]
    /\ brokers = [b \in BIdx |-> [software |-> OldSoftware, status |-> "RUNNING", offset |-> 0,
                                  registration |-> OldSoftware, fenced |-> FALSE, rpc_level |-> StartLevel]]
    /\ leader = 0
    /\ log = <<StartLevel>>
    /\ records = {}

(* The next state from new voters, brokers, leader and log: the entries every node has read are dropped *)
(* (the reference's _normalize), so that equal situations are equal states.                              *)
Settle(vs, bs, ld, lg) ==
    LET low == SetMin({vs[v].offset : v \in VIdx} \cup {bs[b].offset : b \in BIdx}) IN
    /\ voters' = [v \in VIdx |-> [vs[v] EXCEPT !.offset = @ - low]]
    /\ brokers' = [b \in BIdx |-> [bs[b] EXCEPT !.offset = @ - low]]
    /\ leader' = ld
    /\ log' = SubSeq(lg, low + 1, Len(lg))

(* ------------------------------------------------------------------------------------------------ *)
(* The active QuorumController's decision on UpdateFeatures(metadata.version = y, DowngradeType dt)   *)
(* while x is finalized (reference_impl/metadata_version/api.py).  It knows its own binary, every     *)
(* voter's binary (Kafka: controller registrations) and every registered broker's range, fenced or    *)
(* not.                                                                                                *)

LeaderSoftware == voters[leader + 1].software
RegisteredBrokers == {b \in BIdx : brokers[b].registration # ""}
Mutated(m) == m \in Mutations

LocalControllerSupports(y) == Supports(LeaderSoftware, y)
EveryRegisteredBrokerSupports(y) ==
    Mutated("skip_broker_check") \/ \A b \in RegisteredBrokers : Supports(brokers[b].registration, y)
(* KAFKA-13990 (peers_advertise_no_features): Kafka 3.3's controllers answered ApiVersions with no       *)
(* feature, so the active controller saw every other voter as supporting nothing.                      *)
PeerSupports(v, y) ==
    /\ Supports(voters[v].software, y)
    /\ v = leader + 1 \/ ~Mutated("peers_advertise_no_features")
MajorityOfQuorumSupports(y) ==
    Cardinality({v \in VIdx : PeerSupports(v, y)}) * 2 > NVoters
IsUpgrade(y, x) == y > x
IsDowngrade(y, x) == y < x

(* KIP-778 as written, on KIP-584 (with its all-or-nothing revision).                                  *)
KipAccepts(y, x, dt) ==
    /\ y >= Floor \/ Mutated("skip_floor_check")      \* KRaft requires a metadata.version
    /\ y \in CatalogLevels \/ y < 1                    \* a known version (or a deletion)
    /\ y # x                                           \* no update to the same value
    /\ IsDowngrade(y, x) /\ dt = "NONE" => Mutated("allow_downgrade_unchecked")  \* SAFE or UNSAFE needed
    /\ ~(IsUpgrade(y, x) /\ dt # "NONE")               \* a downgrade must lower the level
    /\ y >= 1 =>                                       \* KIP-584: a deletion has no range checks
        /\ EveryRegisteredBrokerSupports(y)            \* KIP-584 Validations
        /\ LocalControllerSupports(y)                  \* the active controller reads what it commits
        /\ Mutated("skip_quorum_check") \/ MajorityOfQuorumSupports(y)  \* "at least a majority of the quorum"
        /\ IsDowngrade(y, x) /\ ~Lossless(x, y) =>     \* a lossy downgrade needs UNSAFE
               dt = "UNSAFE" \/ Mutated("allow_lossy_safe_downgrade")

(* Apache Kafka's FeatureControlManager.updateFeature / updateMetadataVersion and                      *)
(* QuorumFeatures.reasonNotSupported.  Every other voter must support y (not a majority), but only     *)
(* once controller registration exists (x >= 3.7-IV0); lossy downgrades are refused even when UNSAFE;  *)
(* an update to the current level is accepted (and writes nothing new).  With one feature per         *)
(* request, 3.9 (per-feature results) and 4.0 (one top-level error) decide and write the same.         *)
KafkaAccepts(y, x, dt) ==
    /\ LocalControllerSupports(y)
    /\ EveryRegisteredBrokerSupports(y)
    /\ x >= ControllerRegistrationLevel /\ ~Mutated("skip_quorum_check") =>
           \A v \in VIdx : v # leader + 1 => PeerSupports(v, y)
    /\ IsDowngrade(y, x) /\ dt = "NONE" => Mutated("allow_downgrade_unchecked")
    /\ ~(IsUpgrade(y, x) /\ dt # "NONE")               \* "Can't downgrade to a newer version."
    /\ y \in CatalogLevels                             \* 3.9 "Unknown metadata.version.", 4.0 "Valid versions are from"
    /\ y >= Floor \/ Mutated("skip_floor_check")
    /\ IsDowngrade(y, x) /\ ~Lossless(x, y) => Mutated("allow_lossy_safe_downgrade")

Accepts(y, x, dt) == IF Profile = "kafka" THEN KafkaAccepts(y, x, dt) ELSE KipAccepts(y, x, dt)

(* Does the request write a FeatureLevelRecord that changes the level?  A dry run writes nothing. *)
Writes(y, dt, dry) ==
    /\ y # Level
    /\ ~dry \/ Mutated("dry_run_writes")
    /\ Accepts(y, Level, dt)

(* ------------------------------------------------------------------------------------------------ *)
(* Actions.  Each is a conjunction of its own so that TLC names the step after it in traces.  Enabling *)
(* conditions are written without top-level disjunctions, which TLC would explore as separate branches *)
(* (generating one successor twice).                                                                   *)

(* The operator's UpdateFeatures request.  A refused request, a dry run, or a record restating the     *)
(* current level leaves the state unchanged (a step of its own in the reference).  A committed change *)
(* waits for room in the log; its snapshot at the new version drops what the target cannot represent  *)
(* on a lossy downgrade; every running voter reads it at once, and one whose binary cannot read it    *)
(* terminates (the active one resigns first) -- KIP-778 Compatibility.                                 *)
UpdateFeatures(y, dt, dry) ==
    /\ HasQuorum
    /\ IF ~Writes(y, dt, dry)
       THEN UNCHANGED vars
       ELSE LET lg == Append(log, y)
                Reads(v) == Running(voters[v]) /\ Supports(voters[v].software, y)
                Stops(v) == Running(voters[v]) /\ ~Supports(voters[v].software, y)
                vs == [v \in VIdx |-> IF Reads(v) THEN [voters[v] EXCEPT !.offset = Len(lg) - 1]
                                      ELSE IF Stops(v) THEN [voters[v] EXCEPT !.status = "TERMINATED"]
                                      ELSE voters[v]]
                lossy == IsDowngrade(y, Level) /\ (~Lossless(Level, y) \/ Mutated("lossless_drops_records"))
            IN /\ Len(log) < MaxLog
               /\ records' = IF lossy THEN {t \in records : t <= y} ELSE records
               /\ Settle(vs, brokers, IF Stops(leader + 1) THEN -1 ELSE leader, lg)

(* The controller writes a record of a feature introduced at level t, once the version enables it. *)
WriteRecord(t) ==
    /\ HasQuorum
    /\ t \notin records
    /\ t > Level => Mutated("write_record_above_version")
    /\ records' = records \cup {t}
    /\ UNCHANGED <<voters, brokers, leader, log>>

(* A running broker reads the next log entry.  One it cannot read makes it unregister and terminate;  *)
(* one that catches up while registered with its own binary is unfenced.                              *)
ReplicateMetadata(b) ==
    /\ Running(brokers[b])
    /\ brokers[b].offset < End
    /\ LET x == brokers[b]
           lvl == log[x.offset + 2]
           nb == IF ~Supports(x.software, lvl) /\ ~Mutated("broker_ignores_unsupported")
                 THEN [x EXCEPT !.status = "TERMINATED", !.registration = "", !.fenced = TRUE, !.rpc_level = 0]
                 ELSE [x EXCEPT !.offset = x.offset + 1, !.rpc_level = RpcLevel(x.software, lvl),
                                !.fenced = x.fenced /\ ~(x.offset + 1 = End /\ x.registration = x.software)]
       IN Settle(voters, [brokers EXCEPT ![b] = nb], leader, log)
    /\ UNCHANGED records

(* BrokerRegistration (ClusterControlManager.processRegistrationFeature, both profiles): refused, and  *)
(* the broker stays fenced and retries, when its binary cannot read the finalized version.             *)
RegisterBroker(b) ==
    /\ HasQuorum
    /\ Running(brokers[b])
    /\ brokers[b].fenced  \* a restart fences, so one registered for another binary is fenced too (MV_16)
    /\ IF Supports(brokers[b].software, Level) \/ Mutated("register_incompatible")
       THEN /\ brokers' = [brokers EXCEPT ![b].registration = brokers[b].software,
                                           ![b].fenced = brokers[b].offset # End]
            /\ UNCHANGED <<voters, leader, log, records>>
       ELSE UNCHANGED vars

ElectLeader(v) ==
    /\ leader < 0
    /\ Cardinality(RunningVoters) * 2 > NVoters
    /\ Running(voters[v])
    /\ leader' = v - 1
    /\ UNCHANGED <<voters, brokers, log, records>>

LeaderFailover(v) ==
    /\ Failover
    /\ leader >= 0
    /\ v - 1 # leader
    /\ Running(voters[v])
    /\ leader' = v - 1
    /\ UNCHANGED <<voters, brokers, log, records>>

(* Can a node on binary sw read what it has on disk?  A voter fetches the log from its offset on; a    *)
(* broker starts from the metadata it has read.                                                        *)
VoterCanRead(i, sw) == \A k \in (voters[i].offset + 1)..Len(log) : Supports(sw, log[k])
BrokerCanRead(i, sw) == Supports(sw, log[brokers[i].offset + 1])
CanRead(role, i, sw) == IF role = "voter" THEN VoterCanRead(i, sw) ELSE BrokerCanRead(i, sw)
CheckOnStart == ~Mutated("restart_skips_version_check")

(* Stop node i and start it on binary sw.  A node that cannot read its metadata.version terminates     *)
(* instead of running (KIP-778 Compatibility).                                                          *)
Start(role, i, sw) ==
    IF role = "voter"
    THEN LET nv == IF VoterCanRead(i, sw) \/ ~CheckOnStart
                   THEN [software |-> sw, status |-> "RUNNING", offset |-> End]
                   ELSE [software |-> sw, status |-> "TERMINATED", offset |-> voters[i].offset]
         IN /\ Settle([voters EXCEPT ![i] = nv], brokers, IF leader = i - 1 THEN -1 ELSE leader, log)
            /\ UNCHANGED records
    ELSE LET x == brokers[i]
             nb == IF BrokerCanRead(i, sw) \/ ~CheckOnStart
                   THEN [x EXCEPT !.software = sw, !.status = "RUNNING",
                                  !.fenced = x.fenced \/ ~Mutated("restart_keeps_session"),
                                  !.rpc_level = RpcLevel(sw, log[x.offset + 1])]
                   ELSE [x EXCEPT !.software = sw, !.status = "TERMINATED", !.fenced = TRUE, !.rpc_level = 0]
         IN /\ brokers' = [brokers EXCEPT ![i] = nb]
            /\ UNCHANGED <<voters, leader, log, records>>

(* A rolling restart step: any node (whatever its status) onto another binary. *)
RestartNode(role, i, sw) ==
    /\ sw # NodeSoftware(role, i)
    /\ Start(role, i, sw)

Down == Cardinality({v \in VIdx : ~Running(voters[v])}) + Cardinality({b \in BIdx : ~Running(brokers[b])})

CrashNode(role, i) ==
    /\ Crashes
    /\ NodeStatus(role, i) = "RUNNING"
    /\ Down < MaxDown
    /\ IF role = "voter"
       THEN /\ voters' = [voters EXCEPT ![i].status = "DOWN"]
            /\ leader' = IF leader = i - 1 THEN -1 ELSE leader
            /\ UNCHANGED brokers
       ELSE \* the registration survives; the broker is fenced when its session times out
            /\ brokers' = [brokers EXCEPT ![i] = [@ EXCEPT !.status = "DOWN", !.fenced = TRUE, !.rpc_level = 0]]
            /\ UNCHANGED <<voters, leader>>
    /\ UNCHANGED <<log, records>>

RecoverNode(role, i) ==
    /\ Crashes
    /\ NodeStatus(role, i) = "DOWN"
    /\ Start(role, i, NodeSoftware(role, i))

Next ==
    \/ \E y \in RequestedLevels, dt \in DowngradeTypes, dry \in DryRunChoices : UpdateFeatures(y, dt, dry)
    \/ \E t \in RecordLevels : WriteRecord(t)
    \/ \E b \in BIdx : ReplicateMetadata(b) \/ RegisterBroker(b)
    \/ \E v \in VIdx : ElectLeader(v) \/ LeaderFailover(v)
    \/ \E role \in Roles, sw \in SoftwareNames : \E i \in NodesIdx(role) : RestartNode(role, i, sw)
    \/ \E role \in Roles : \E i \in NodesIdx(role) : CrashNode(role, i) \/ RecoverNode(role, i)

Spec == Init /\ [][Next]_vars

(* ------------------------------------------------------------------------------------------------ *)
(* Properties: the ids of properties/metadata_version.py.  MV_01, MV_05, MV_11 are state invariants;  *)
(* MV_02 .. MV_10 step properties checked as [][A]_vars, each stated for every action instance that   *)
(* takes the step (the reference checks every labelled edge); MV_L1, MV_L2 graph properties.          *)

UpdateStep == \E y \in RequestedLevels, dt \in DowngradeTypes, dry \in DryRunChoices : UpdateFeatures(y, dt, dry)
Changes == Level' # Level                    \* the step changes the committed metadata.version
Breaking == {l \in FormatChanges : l > CatalogMin}

(* MV-01: no running node holds a finalized metadata.version outside its binary's supported range. *)
MV_01 == /\ \A v \in VIdx : Running(voters[v]) => Supports(voters[v].software, log[voters[v].offset + 1])
         /\ \A b \in BIdx : Running(brokers[b]) => Supports(brokers[b].software, log[brokers[b].offset + 1])

(* MV-02: a metadata.version change is committed only when a majority of the voters and every         *)
(* registered broker support it.                                                                       *)
MV_02_Step == (Changes /\ UpdateStep) =>
                  /\ Cardinality({v \in VIdx : Supports(voters[v].software, Level')}) * 2 > NVoters
                  /\ \A b \in RegisteredBrokers : Supports(brokers[b].registration, Level')
MV_02 == [][MV_02_Step]_vars

(* MV-11: every registered broker's binary supports the committed metadata.version. *)
MV_11 == \A b \in RegisteredBrokers : Supports(brokers[b].registration, Level)

(* MV-16: an unfenced broker is running and registered for the binary it runs (a restart fences it until *)
(* it registers again).                                                                                 *)
MV_16 == \A b \in BIdx : ~brokers[b].fenced => Running(brokers[b]) /\ brokers[b].registration = brokers[b].software

(* MV-05: no record type newer than the finalized version is in the image, and no running broker uses *)
(* an RPC above the version it has read.                                                               *)
MV_05 == /\ \A t \in records : ~(t \in Breaking /\ t > Level)
         /\ \A b \in BIdx : Running(brokers[b]) => brokers[b].rpc_level <= log[brokers[b].offset + 1]

(* MV-03: a lossless downgrade loses no record. *)
MV_03_Step == (Level' < Level /\ Lossless(Level, Level') /\ UpdateStep) => records' = records
MV_03 == [][MV_03_Step]_vars

(* MV-04: metadata is lost only by an UNSAFE downgrade: no other action instance takes a step that    *)
(* drops records.                                                                                       *)
NotAnUnsafeDowngrade ==
    \/ \E y \in RequestedLevels, dt \in DowngradeTypes \ {"UNSAFE"}, dry \in DryRunChoices : UpdateFeatures(y, dt, dry)
    \/ \E t \in RecordLevels : WriteRecord(t)
    \/ \E b \in BIdx : ReplicateMetadata(b) \/ RegisterBroker(b)
    \/ \E v \in VIdx : ElectLeader(v) \/ LeaderFailover(v)
    \/ \E role \in Roles, sw \in SoftwareNames : \E i \in NodesIdx(role) : RestartNode(role, i, sw)
    \/ \E role \in Roles : \E i \in NodesIdx(role) : CrashNode(role, i) \/ RecoverNode(role, i)
MV_04_Step == ~(records \subseteq records') => ~NotAnUnsafeDowngrade
MV_04 == [][MV_04_Step]_vars

(* MV-14: a lossy downgrade's snapshot keeps exactly what the target version can represent: every record *)
(* introduced at or below it stays, every one above it goes.                                            *)
MV_14_Step == (UpdateStep /\ Level' < Level /\ ~Lossless(Level, Level')) => records' = {t \in records : t <= Level'}
MV_14 == [][MV_14_Step]_vars

(* MV-15: the metadata log takes a new entry (a metadata.version change, a record, a broker            *)
(* registration) and a leader is elected only while a strict majority of the voters runs.              *)
MV_15_Step == (/\ vars' # vars
               /\ \/ UpdateStep
                  \/ \E t \in RecordLevels : WriteRecord(t)
                  \/ \E b \in BIdx : RegisterBroker(b)
                  \/ \E v \in VIdx : ElectLeader(v))
              => Cardinality(RunningVoters) * 2 > NVoters
MV_15 == [][MV_15_Step]_vars

(* MV-17: a broker is unfenced only once it has caught up with the metadata log: the step that unfences *)
(* it leaves it at the log's end.                                                                       *)
MV_17_Step == \A b \in BIdx : (brokers[b].fenced /\ ~brokers'[b].fenced) => brokers'[b].offset = Len(log') - 1
MV_17 == [][MV_17_Step]_vars

(* MV-12 (kafka profile): a metadata.version update never drops metadata; every downgrade it commits is   *)
(* lossless, UNSAFE included (Kafka refuses a lossy one).                                              *)
(* MV-13: the active controller is a running voter. *)
MV_13 == leader >= 0 => Running(voters[leader + 1])

MV_12_Step == (Profile = "kafka" /\ UpdateStep) =>
                  /\ records \subseteq records'
                  /\ (Level' >= Level \/ Lossless(Level, Level'))
MV_12 == [][MV_12_Step]_vars

(* MV-06: a dry run changes nothing. *)
MV_06_Step == \/ UNCHANGED vars
              \/ \A y \in RequestedLevels, dt \in DowngradeTypes, dry \in DryRunChoices :
                     ~(dry /\ UpdateFeatures(y, dt, dry))
MV_06 == [][MV_06_Step]_vars

(* MV-07: a node started on a binary that cannot read its metadata.version terminates. *)
StartChecked(role, i) ==
    /\ \A sw \in SoftwareNames :
           (~CanRead(role, i, sw) /\ RestartNode(role, i, sw)) => NodeStatusAfter(role, i) = "TERMINATED"
    /\ (~CanRead(role, i, NodeSoftware(role, i)) /\ RecoverNode(role, i)) => NodeStatusAfter(role, i) = "TERMINATED"
MV_07_Step == /\ \A i \in VIdx : voters'[i] # voters[i] => StartChecked("voter", i)
              /\ \A i \in BIdx : brokers'[i] # brokers[i] => StartChecked("broker", i)
MV_07 == [][MV_07_Step]_vars

(* MV-08: metadata.version is never deleted or set below the minimum. *)
MV_08_Step == Level' >= Floor \/ ~(Changes /\ UpdateStep)   \* the cheap comparison first
MV_08 == [][MV_08_Step]_vars

(* MV-09: an increase is an upgrade and a decrease is a SAFE or UNSAFE downgrade. *)
(* The cheap comparison first: UpdateFeatures is evaluated only for the requests it would contradict. *)
MV_09_Step == Changes => \A y \in RequestedLevels, dt \in DowngradeTypes, dry \in DryRunChoices :
                              ((dt = "NONE") = (Level' > Level)) \/ ~UpdateFeatures(y, dt, dry)
MV_09 == [][MV_09_Step]_vars

(* MV-10: the controller writes a record type only once the finalized version enables it. *)
MV_10_Step == records' # records => \A t \in RecordLevels : WriteRecord(t) => t <= Level
MV_10 == [][MV_10_Step]_vars

(* MV-L1 and MV-L2 are graph properties, AG (start => E[allowed U goal]): from every start state the  *)
(* goal is reachable through allowed actions only.  TLC checks LTL only, so these are the start and     *)
(* goal predicates; rollcheck's explorer checks the property (properties/metadata_version.py).          *)
ClusterOn(sw) == /\ \A v \in VIdx : voters[v].software = sw /\ Running(voters[v])
                 /\ \A b \in BIdx : brokers[b].software = sw /\ Running(brokers[b])
Settled == leader >= 0 /\ \A b \in BIdx : ~brokers[b].fenced /\ brokers[b].offset = End

(* MV-L1: from a settled cluster on the old software, one rolling restart onto the new software        *)
(* (RestartNode onto it, upgrades without dry run, elections, replication, registration, records)      *)
(* reaches the new software's highest version.                                                          *)
MV_L1_Start == ClusterOn(OldSoftware) /\ Settled
MV_L1 == ClusterOn(NewSoftware) /\ Settled /\ Level = Softwares[NewSoftware].max

(* MV-L2: from a settled cluster on the new software (under kafka: one whose version can go back to one *)
(* the old software reads without loss), downgrades without dry run and one rolling restart onto the    *)
(* old software bring the whole cluster back to it.                                                     *)
MV_L2_Start == /\ ClusterOn(NewSoftware) /\ Settled
               /\ \/ DowngradeFromAny
                  \/ Level <= Softwares[OldSoftware].max
                  \/ Lossless(Level, Softwares[OldSoftware].max)
MV_L2 == ClusterOn(OldSoftware) /\ Settled /\ Level <= Softwares[OldSoftware].max

(* ------------------------------------------------------------------------------------------------ *)
(* Witnesses ("sometimes": a state the config must reach, else the run is vacuous), the MV-W ids of *)
(* properties/metadata_version.py, each for the configs its "when" accepts.  TLC checks each as the *)
(* negated invariant ~MV_Wn: a "violation" is the witness reached, with its trace.                  *)

(* MV-W1: the whole cluster runs the new software at its highest metadata.version (one rolling      *)
(* restart, then online metadata.version upgrades).                                                 *)
MV_W1 == Level = Softwares[NewSoftware].max /\ ClusterOn(NewSoftware)

(* MV-W2: a lossless downgrade kept a record the finalized version does not use (a tagged           *)
(* field above the finalized metadata.version stays in the image).                                  *)
MV_W2 == \E t \in records : t > Level

(* MV-W3: an UNSAFE lossy downgrade took metadata.version from a level only the new software        *)
(* reads back to one the old software reads (the log holds it while some node has not read it yet). *)
MV_W3 == \E k \in 1..(Len(log) - 1) :
             /\ log[k] > Softwares[OldSoftware].max /\ log[k + 1] <= Softwares[OldSoftware].max
             /\ ~Lossless(log[k], log[k + 1])

(* MV-W4: a node terminated on a metadata.version its binary cannot read (restarted onto an older   *)
(* binary, or reading the FeatureLevelRecord).                                                      *)
MV_W4 == \/ \E v \in VIdx : voters[v].status = "TERMINATED"
         \/ \E b \in BIdx : brokers[b].status = "TERMINATED"

(* MV-W5: a running broker whose binary cannot support the finalized metadata.version stays         *)
(* fenced (the controller rejects its registration).                                                *)
MV_W5 == \E b \in BIdx : brokers[b].fenced /\ Running(brokers[b]) /\ ~Supports(brokers[b].software, Level)

(* MV-W6: a running broker registered for its binary is still fenced two log entries behind the end *)
(* (it registered while lagging, and catches up before it is unfenced).                             *)
MV_W6 == \E b \in BIdx : /\ brokers[b].fenced /\ Running(brokers[b])
                        /\ brokers[b].registration = brokers[b].software
                        /\ brokers[b].offset <= Len(log) - 3
=============================================================================================

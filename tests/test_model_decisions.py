"""Decision rules: the Z3 formulas of model/decisions.py agree with the reference on the whole bounded domain."""

from __future__ import annotations

from model.decisions import (
    differential,
    features_update_cases,
    features_update_formula,
    features_update_reference,
    streams_assign_cases,
    streams_assign_formula,
    streams_assign_reference,
)
from reference_impl.streams_probing.releases import release


def test_streams_assign_formula_agrees_with_reference() -> None:
    res = differential("streams_assign", streams_assign_cases(max_members=2, mutations=("",)))
    assert res.ok, str(res.disagreement)
    # 8 leader releases x 2 profiles + 3.9 (kafka only), members over 21 (version, latest) pairs
    assert res.cases == 17 * 2 and res.inputs == 17 * (21 + 21 * 21)


def test_streams_assign_formula_agrees_under_every_assignor_mutation() -> None:
    res = differential("streams_assign", streams_assign_cases(max_members=1))
    assert res.ok, str(res.disagreement)
    assert res.cases == 17 * 6


def test_features_update_formula_agrees_with_reference() -> None:
    res = differential("features_update", features_update_cases(brokers=1))
    assert res.ok, str(res.disagreement)
    assert res.inputs == 2 * 7 * 5 * 2 * 7 * 7


def test_differential_reports_a_concrete_disagreement() -> None:
    """A formula for another rule than the reference's (the max, not the min, of the supported versions;
    the other profile) must be caught with a concrete input."""
    leader = release("post-2.0")
    member = [{"v0": v0, "lat0": l0, "v1": v1, "lat1": l1} for l0 in (3, 4, 11) for v0 in range(1, l0 + 1)
              for l1 in (3, 4, 11) for v1 in range(1, l1 + 1)]
    res = differential("streams_assign", [("wrong", streams_assign_formula(4, "kafka", "commonly_supported_is_max", 2),
                                           member, streams_assign_reference(leader, "kafka", "", 2))])
    assert res.disagreement is not None
    d = res.disagreement
    assert d.reference != d.formula and set(d.inputs) == {"v0", "lat0", "v1", "lat1"}
    res = differential("features_update", [("wrong", features_update_formula("kip", 1),
                                            features_update_cases(brokers=1).__next__()[2],
                                            features_update_reference("kafka", 1))])
    assert res.disagreement is not None


def test_mv_lossless_rule_agrees_on_every_catalog_pair() -> None:
    from model.decisions import mv_lossless_cases

    res = differential("mv_lossless", mv_lossless_cases())
    assert res.ok, str(res.disagreement)
    assert res.cases == 2 and res.inputs > 25


def test_mv_update_decision_agrees_with_reference() -> None:
    from model.decisions import mv_update_cases

    # Two voters (the controller and one that may be unregistered), no brokers; ranges that start at the
    # lowest level or end at the highest (the full domain runs in benchmarks/prove.py).
    res = differential("mv_update", mv_update_cases("example", voters=2, brokers=0, dry_runs=(False,),
                                                    edge_ranges=True))
    assert res.ok, str(res.disagreement)
    assert res.cases == 3 and res.inputs == 3 * 5 * 7 * 3 * 9 * 10


def test_mv_update_decision_agrees_on_kafkas_catalog() -> None:
    """Kafka's own catalog, where 3.9's floor (3.3-IV0) and 4.0's minimum version (3.3-IV3) differ."""
    from model.decisions import mv_update_cases

    res = differential("mv_update", mv_update_cases("kafka", voters=1, brokers=0, dry_runs=(False,)))
    assert res.ok, str(res.disagreement)
    assert res.cases == 3 and res.inputs == 3 * 10 * 12 * 3 * 12


def test_mv_update_decision_disagreement_is_found() -> None:
    """The kip formula against Kafka 3.9's controller: they differ (a lossy UNSAFE downgrade, for one)."""
    from model.decisions import mv_update_cases, mv_update_formula
    from reference_impl.metadata_version.catalog import CATALOGS

    case = next(c for c in mv_update_cases("example", voters=1, brokers=0, dry_runs=(False,)) if "kafka 3.9" in c[0])
    wrong = mv_update_formula(CATALOGS["example"], "kip", "3.9", False, 1, 0)
    res = differential("mv_update", [("kip formula vs kafka 3.9", wrong, case[2], case[3])])
    assert res.disagreement is not None and res.disagreement.reference != res.disagreement.formula


def test_zk_migration_triggers_agree_with_reference() -> None:
    from model.decisions import zk_trigger_cases

    res = differential("zk_triggers", zk_trigger_cases())
    assert res.ok, str(res.disagreement)
    # activate, bootstrap and registration per profile, epoch claim, driver changes
    assert res.cases == 8


def test_zk_activation_profiles_differ_concretely() -> None:
    """The kip activation formula against Kafka's: a MIGRATION log met by a controller with migration off
    (and not every voter off) resigns in the KIP and finalizes in Kafka."""
    from model.decisions import zk_trigger_cases

    cases = {c[0]: c for c in zk_trigger_cases()}
    kip, kafka = cases["activate, kip"], cases["activate, kafka"]
    res = differential("zk_triggers", [("kip formula vs kafka", kip[1], kafka[2], kafka[3])])
    assert res.disagreement is not None
    assert res.disagreement.inputs["state"] == 1 and res.disagreement.inputs["enabled"] == 0

"""Kafka's ``FinalizedFeatureCacheTest``, transcribed as facts against ``reference_impl/features/api.py``.

Read first-hand: ``core/src/test/scala/unit/kafka/server/FinalizedFeatureCacheTest.scala`` at Apache Kafka tag
``2.8.2`` (commit 3146c6ff4a24cc24d6039037e99edc8930d1958a); the file is the same blob
(d0f4c0ab05f64ad4ba59cf790775a96028cb636a) at tag ``2.8.0`` (commit ebb1d6e21cc9213071ee1c6a15ec3411fc215b81).
The class under test, ``core/src/main/scala/kafka/server/FinalizedFeatureCache.scala`` (same tag), was
missing from our API: :class:`FinalizedFeatureCache` was added to reference_impl/features/api.py for it.

Each case is one Kafka test method (its id): the broker's supported features (``BrokerFeatures.createDefault()``
then ``setSupportedFeatures``; none for ``createDefault()`` alone), then a script of steps, each with what
the cache holds afterwards (``None``: empty). A step is ``("update", finalized features, epoch, raises)`` or
``("clear",)``. ``raises`` is Kafka's ``FeatureCacheUpdateException`` and, as Kafka checks, a refused update
leaves the cache as it was. Our cache is immutable (the update returns the next cache), so "did not make any
mutations" is checked on what the script keeps, the cache before the refused call. The exception messages
matched on top are ``FinalizedFeatureCache.updateOrThrow``'s, which Kafka's test does not check.

Not expressible yet: none.
"""

from __future__ import annotations

import re

import pytest

from reference_impl.features.api import (
    FeatureCacheUpdateException,
    FinalizedFeatureCache,
    finalized_features,
    supported_features,
)

Range = tuple[int, int]
Expected = tuple[dict[str, Range], int] | None  # (features, epoch) held afterwards, None when empty
Step = tuple[object, ...]

_INVALID_EPOCH = ("FinalizedFeatureCache update failed due to invalid epoch in new FinalizedFeaturesAndEpoch("
                  "features=Features{(feature_1 -> FinalizedVersionRange[min_version_level:1, max_version_level:4])}, "
                  "epoch=9). The existing cache contents are FinalizedFeaturesAndEpoch(features=Features{(feature_1 -> "
                  "FinalizedVersionRange[min_version_level:1, max_version_level:4])}, epoch=10).")
_INCOMPATIBLE = ("FinalizedFeatureCache update failed since feature compatibility checks failed! Supported "
                 "Features{(feature_1 -> SupportedVersionRange[min_version:1, max_version:1])} has incompatibilities "
                 "with the latest FinalizedFeaturesAndEpoch(features=Features{(feature_1 -> FinalizedVersionRange["
                 "min_version_level:1, max_version_level:2])}, epoch=12).")


@pytest.mark.parametrize(("supported", "steps"), [
    pytest.param({}, [], id="testEmpty"),
    pytest.param({"feature_1": (1, 4)}, [
        (("update", {"feature_1": (1, 4)}, 10, None), ({"feature_1": (1, 4)}, 10)),
        (("update", {"feature_1": (1, 4)}, 9, _INVALID_EPOCH), ({"feature_1": (1, 4)}, 10)),
    ], id="testUpdateOrThrowFailedDueToInvalidEpoch"),
    pytest.param({"feature_1": (1, 1)}, [
        (("update", {"feature_1": (1, 2)}, 12, _INCOMPATIBLE), None),
    ], id="testUpdateOrThrowFailedDueToInvalidFeatures"),
    pytest.param({"feature_1": (1, 4)}, [
        (("update", {"feature_1": (2, 3)}, 12, None), ({"feature_1": (2, 3)}, 12)),
    ], id="testUpdateOrThrowSuccess"),
    pytest.param({"feature_1": (1, 4)}, [
        (("update", {"feature_1": (2, 3)}, 12, None), ({"feature_1": (2, 3)}, 12)),
        (("clear",), None),
    ], id="testClear"),
])
def test_cache_script(supported: dict[str, Range], steps: list[tuple[Step, Expected]]) -> None:
    cache = FinalizedFeatureCache(supported_features(supported))
    assert cache.is_empty() and cache.get() is None  # every cache starts empty
    for step, expected in steps:
        if step[0] == "clear":
            cache = cache.clear()
        else:
            _, features, epoch, raises = step
            assert isinstance(features, dict) and isinstance(epoch, int)
            if raises is None:
                cache = cache.update_or_throw(finalized_features(features), epoch)
            else:
                assert isinstance(raises, str)
                with pytest.raises(FeatureCacheUpdateException, match=f"^{re.escape(raises)}$"):
                    cache.update_or_throw(finalized_features(features), epoch)
        if expected is None:
            assert cache.is_empty() and cache.get() is None, step
        else:
            got = cache.get()
            assert got is not None and not cache.is_empty(), step
            assert (got.features, got.epoch) == (finalized_features(expected[0]), expected[1]), step

import pytest

from cachebox import CAPACITY, EXPIRED, Cache, CacheStats, ManualClock


def make(maxsize=3, ttl=None, **kwargs):
    clock = ManualClock(1000.0)
    return Cache(maxsize, ttl, clock=clock, **kwargs), clock


def test_set_and_get():
    cache, _ = make()
    cache.set("a", 1)
    cache["b"] = [2]
    assert cache.get("a") == 1
    assert cache["b"] == [2]
    assert cache.get("zzz") is None
    assert cache.get("zzz", "dflt") == "dflt"


def test_getitem_of_missing_key_raises_key_error():
    cache, _ = make()
    with pytest.raises(KeyError):
        cache["nope"]


def test_least_recently_used_is_evicted():
    cache, _ = make(maxsize=3)
    for key in "abcd":
        cache[key] = key.upper()
    assert cache.keys() == ["b", "c", "d"]
    assert "a" not in cache


def test_get_refreshes_recency():
    cache, _ = make(maxsize=3)
    for key in "abc":
        cache[key] = 0
    cache.get("a")
    cache["d"] = 0
    assert cache.keys() == ["c", "a", "d"]


def test_overwriting_refreshes_without_evicting():
    cache, _ = make(maxsize=2)
    cache["a"] = 1
    cache["b"] = 2
    cache["a"] = 10
    assert cache.keys() == ["b", "a"]
    assert cache.stats().evictions == 0
    cache["c"] = 3
    assert cache.keys() == ["a", "c"]


def test_peek_neither_counts_nor_refreshes():
    cache, _ = make(maxsize=2)
    cache["a"] = 1
    cache["b"] = 2
    assert cache.peek("a") == 1
    assert cache.peek("zzz", "dflt") == "dflt"
    cache["c"] = 3
    assert "a" not in cache
    assert cache.stats().lookups == 0


def test_membership_and_iteration_do_not_count():
    cache, _ = make()
    cache["a"] = 1
    assert "a" in cache and "b" not in cache
    assert list(cache) == ["a"]
    assert cache.items() == [("a", 1)]
    assert cache.stats() == CacheStats()


def test_entry_lives_until_its_ttl():
    cache, clock = make(ttl=10)
    cache["a"] = 1
    clock.advance(9.5)
    assert cache.get("a") == 1
    clock.advance(0.5)
    assert cache.get("a") is None


def test_entry_is_gone_exactly_at_its_ttl():
    cache, clock = make(ttl=60)
    cache["token"] = "abc"
    clock.advance(60)
    assert "token" not in cache
    assert cache.peek("token") is None


def test_per_entry_ttl_overrides_default():
    cache, clock = make(ttl=10)
    cache.set("short", 1, ttl=1)
    cache.set("forever", 2, ttl=None)
    cache.set("default", 3)
    clock.advance(5)
    assert cache.keys() == ["forever", "default"]
    clock.advance(1000)
    assert cache.keys() == ["forever"]


def test_ttl_remaining():
    cache, clock = make(ttl=30)
    cache["a"] = 1
    cache.set("b", 2, ttl=None)
    clock.advance(12)
    assert cache.ttl_remaining("a") == pytest.approx(18)
    assert cache.ttl_remaining("b") is None
    clock.advance(19)
    with pytest.raises(KeyError):
        cache.ttl_remaining("a")


def test_len_counts_live_entries_only():
    cache, clock = make(maxsize=10, ttl=5)
    cache["a"] = 1
    clock.advance(3)
    cache["b"] = 2
    assert len(cache) == 2
    clock.advance(2.5)
    assert len(cache) == 1


def test_expire_reports_and_notifies():
    seen = []
    cache, clock = make(maxsize=10, ttl=5, on_evict=lambda k, v, why: seen.append((k, v, why)))
    cache["a"] = 1
    cache["b"] = 2
    cache.set("c", 3, ttl=None)
    clock.advance(6)
    assert cache.expire() == 2
    assert seen == [("a", 1, EXPIRED), ("b", 2, EXPIRED)]
    assert cache.stats().expirations == 2
    assert cache.expire() == 0


def test_capacity_eviction_notifies():
    seen = []
    cache, _ = make(maxsize=1, on_evict=lambda k, v, why: seen.append((k, v, why)))
    cache["a"] = 1
    cache["b"] = 2
    assert seen == [("a", 1, CAPACITY)]
    assert cache.stats().evictions == 1


def test_expired_entries_make_room_before_live_ones():
    seen = []
    cache, clock = make(maxsize=2, on_evict=lambda k, v, why: seen.append((k, why)))
    cache["old"] = 1
    cache.set("session", 2, ttl=5)
    clock.advance(6)
    cache["new"] = 3
    assert cache.keys() == ["old", "new"]
    assert seen == [("session", EXPIRED)]
    assert cache.stats().evictions == 0


def test_pop_and_delete():
    cache, _ = make()
    cache["a"] = 1
    cache["b"] = 2
    assert cache.pop("a") == 1
    assert cache.pop("a", None) is None
    del cache["b"]
    assert len(cache) == 0
    with pytest.raises(KeyError):
        cache.pop("a")
    with pytest.raises(KeyError):
        del cache["b"]


def test_pop_of_expired_entry_uses_default():
    cache, clock = make(ttl=1)
    cache["a"] = 1
    clock.advance(2)
    assert cache.pop("a", "gone") == "gone"


def test_clear_keeps_statistics():
    cache, _ = make()
    cache["a"] = 1
    cache.get("a")
    cache.clear()
    assert len(cache) == 0
    assert cache.stats().hits == 1


def test_resize_evicts_least_recently_used():
    cache, _ = make(maxsize=4)
    for key in "abcd":
        cache[key] = 0
    cache.get("a")
    cache.resize(2)
    assert cache.keys() == ["d", "a"]
    assert cache.stats().evictions == 2
    with pytest.raises(ValueError):
        cache.resize(0)


@pytest.mark.parametrize(
    ("maxsize", "ttl"),
    [pytest.param(0, None, id="zero-size"), pytest.param(1, 0, id="zero-ttl"), pytest.param(1, -5, id="negative-ttl")],
)
def test_bad_settings(maxsize, ttl):
    with pytest.raises(ValueError):
        Cache(maxsize, ttl)


def test_get_or_set_calls_factory_once():
    cache, _ = make()
    calls = []

    def factory():
        calls.append(1)
        return "built"

    assert cache.get_or_set("k", factory) == "built"
    assert cache.get_or_set("k", factory) == "built"
    assert len(calls) == 1


def test_statistics_count_hits_and_misses():
    cache, _ = make()
    cache["a"] = 1
    cache.get("a")
    cache.get("a")
    cache.get("b")
    with pytest.raises(KeyError):
        cache["c"]
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.lookups) == (2, 2, 4)
    assert stats.hit_rate == 0.5


def test_expired_read_is_a_miss():
    cache, clock = make(ttl=1)
    cache["a"] = 1
    clock.advance(1.5)
    cache.get("a")
    assert cache.stats() == CacheStats(hits=0, misses=1, evictions=0, expirations=1)


def test_hit_rate_before_any_lookup():
    cache, _ = make()
    assert cache.stats().hit_rate == 0.0


def test_stats_are_snapshots():
    cache, _ = make()
    cache["a"] = 1
    before = cache.stats()
    cache.get("a")
    cache.get("b")
    assert (before.hits, before.misses) == (0, 0)
    assert (cache.stats().hits, cache.stats().misses) == (1, 1)


def test_reset_stats():
    cache, _ = make()
    cache.get("a")
    cache.reset_stats()
    assert cache.stats() == CacheStats()


def test_stats_add_up():
    total = CacheStats(1, 2, 3, 4) + CacheStats(10, 20, 30, 40)
    assert total == CacheStats(11, 22, 33, 44)


def test_manual_clock():
    clock = ManualClock(5)
    clock.advance(2.5)
    assert clock() == 7.5
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_unhashable_key():
    cache, _ = make()
    with pytest.raises(TypeError):
        cache[["list"]] = 1


def test_repr():
    cache, _ = make(maxsize=5, ttl=2.0)
    cache["a"] = 1
    assert repr(cache) == "Cache(maxsize=5, ttl=2.0, entries=1)"

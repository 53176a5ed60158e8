"""cachebox: an in-memory LRU cache with per-entry expiry, statistics and a memoizer.

    >>> from cachebox import Cache, ManualClock
    >>> clock = ManualClock()
    >>> cache = Cache(maxsize=2, ttl=30, clock=clock)
    >>> cache["a"] = 1
    >>> cache.get("a"), cache.get("b")
    (1, None)
    >>> clock.advance(30)
    >>> "a" in cache
    False
    >>> cache.stats().hit_rate
    0.5
"""

from .cache import CAPACITY, EXPIRED, Cache, CacheStats, ManualClock
from .memo import make_key, memoize

__version__ = "2.1.0"

__all__ = ["CAPACITY", "EXPIRED", "Cache", "CacheStats", "ManualClock", "make_key", "memoize"]

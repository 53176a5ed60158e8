import pytest

from cachebox import Cache, ManualClock, make_key, memoize


class Counter:
    """Records each call of the function it wraps."""

    def __init__(self, func):
        self.func = func
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.func(*args, **kwargs)


def test_results_are_cached():
    spy = Counter(lambda x, y=1: x * y)
    square = memoize(maxsize=8)(spy)
    assert square(3, 3) == 9
    assert square(3, 3) == 9
    assert square(4, 3) == 12
    assert len(spy.calls) == 2


def test_bare_decorator():
    @memoize
    def double(x):
        return 2 * x

    assert double(21) == 42
    assert double.cache_stats().misses == 1
    assert double(21) == 42
    assert double.cache_stats().hits == 1


def test_keyword_order_does_not_matter():
    spy = Counter(lambda a, b: a - b)
    sub = memoize()(spy)
    assert sub(a=5, b=3) == 2
    assert sub(b=3, a=5) == 2
    assert len(spy.calls) == 1


def test_positional_and_keyword_calls_are_distinct():
    spy = Counter(lambda a, b=0: a + b)
    add = memoize()(spy)
    add(1, b=2)
    add(1, 2)
    assert len(spy.calls) == 2


def test_typed_keeps_int_and_float_apart():
    spy = Counter(lambda x: type(x).__name__)
    name = memoize(typed=True)(spy)
    assert name(1) == "int"
    assert name(1.0) == "float"
    assert len(spy.calls) == 2


def test_untyped_shares_equal_arguments():
    spy = Counter(lambda x: type(x).__name__)
    name = memoize()(spy)
    assert name(1) == "int"
    assert name(1.0) == "int"
    assert len(spy.calls) == 1


def test_none_results_are_cached():
    spy = Counter(lambda user: None)
    lookup = memoize()(spy)
    assert lookup("ghost") is None
    assert lookup("ghost") is None
    assert len(spy.calls) == 1
    assert lookup.cache_stats().hits == 1


def test_falsy_results_are_cached():
    spy = Counter(lambda n: n * 0)
    zero = memoize()(spy)
    assert [zero(7), zero(7), zero(7)] == [0, 0, 0]
    assert len(spy.calls) == 1


def test_exceptions_are_not_cached():
    attempts = []

    @memoize
    def flaky(x):
        attempts.append(x)
        if len(attempts) == 1:
            raise ConnectionError("try again")
        return x

    with pytest.raises(ConnectionError):
        flaky(1)
    assert flaky(1) == 1
    assert flaky(1) == 1
    assert len(attempts) == 2


def test_memoized_results_expire():
    clock = ManualClock()
    spy = Counter(lambda: "fresh")
    fetch = memoize(Cache(4, ttl=10, clock=clock))(spy)
    fetch()
    clock.advance(9)
    fetch()
    clock.advance(2)
    fetch()
    assert len(spy.calls) == 2


def test_cache_clear():
    spy = Counter(lambda x: x)
    ident = memoize()(spy)
    ident(1)
    ident.cache_clear()
    ident(1)
    assert len(spy.calls) == 2


def test_shared_cache_keeps_functions_apart():
    shared = Cache(16)

    @memoize(shared)
    def inc(x):
        return x + 1

    @memoize(shared)
    def dec(x):
        return x - 1

    assert (inc(10), dec(10)) == (11, 9)
    assert len(shared) == 2
    assert inc.cache is dec.cache is shared


def test_custom_key_function():
    spy = Counter(lambda path, verbose=False: path.upper())
    load = memoize(key=lambda path, verbose=False: path.lower())(spy)
    assert load("A.txt") == "A.TXT"
    assert load("a.TXT", verbose=True) == "A.TXT"
    assert len(spy.calls) == 1


def test_wrapper_keeps_metadata():
    @memoize(maxsize=2)
    def documented(x):
        """Adds nothing."""
        return x

    assert documented.__name__ == "documented"
    assert documented.__doc__ == "Adds nothing."
    assert documented.cache.maxsize == 2


def test_lru_bound_applies_to_memoized_calls():
    spy = Counter(lambda x: x)
    ident = memoize(maxsize=2)(spy)
    for x in [1, 2, 3, 1]:
        ident(x)
    assert len(spy.calls) == 4
    assert ident.cache_stats().evictions == 2


@pytest.mark.parametrize(
    ("left", "right", "typed", "same"),
    [
        pytest.param(((1, 2), {}), ((1, 2), {}), False, True, id="same-positional"),
        pytest.param(((), {"a": 1, "b": 2}), ((), {"b": 2, "a": 1}), False, True, id="keyword-order"),
        pytest.param(((1,), {}), ((1.0,), {}), False, True, id="equal-untyped"),
        pytest.param(((1,), {}), ((1.0,), {}), True, False, id="equal-typed"),
        pytest.param(((), {"x": 1}), ((), {"x": 1.0}), True, False, id="keyword-typed"),
        pytest.param(((1,), {"b": 2}), ((1, 2), {}), False, False, id="keyword-vs-positional"),
    ],
)
def test_make_key(left, right, typed, same):
    left_key = make_key(*left, typed=typed)
    right_key = make_key(*right, typed=typed)
    assert (left_key == right_key) is same
    assert hash(left_key) is not None

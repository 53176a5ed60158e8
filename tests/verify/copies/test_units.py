"""What the writers share once a file is read: number literals compared as the language holds them,
and twins of a literal whose type its context gives kept within that type."""

import random

from factory.verify.frameworks.copies.units import differs, number_twins


def test_a_number_changed_only_in_digits_the_type_drops_does_not_differ():
    assert not differs("1e300", repr(1e300 + 5))  # one double
    assert not differs("16777216f", "16777217f")  # one float
    assert not differs("017", "019")  # not read: never called different
    assert differs("0x1F", "0x21") and differs("10n", "12n") and differs("9007199254740993L", "9007199254740995L")
    assert differs("2.5f", "4.5f") and differs("1_000", "1_002") and differs("0.25", "2.25")
    assert differs("18446744073709551615u64", "18446744073709551613u64")  # a suffixed Rust integer: exact


def test_an_untyped_literal_may_be_a_float32():
    assert not differs("16777216", "16777217", untyped=True)  # `got != 16777217` holds for a float32 16777216
    assert differs("16777216", "16777217")  # a Java int, a JavaScript number
    assert differs("16777216", "16777218", untyped=True) and differs("250", "252", untyped=True)
    assert not differs("0.1", repr(0.1 + 1e-9), untyped=True) and differs("0.1", repr(0.1 + 1e-9))


def test_twins_of_an_untyped_integer_stay_in_the_integer_types_it_is_in():
    for seed in range(20):
        assert all(int(t) < 256 for t in number_twins("250", 3, random.Random(seed), untyped=True))
        assert all(int(t) < 128 for t in number_twins("127", 3, random.Random(seed), untyped=True))
        assert all(int(t.removesuffix("u8")) <= 255 for t in number_twins("253u8", 3, random.Random(seed)))
        assert len(number_twins("250", 3, random.Random(seed), untyped=True)) == 3
    assert any(int(t) > 255 for seed in range(20) for t in number_twins("250", 3, random.Random(seed)))  # a JS number

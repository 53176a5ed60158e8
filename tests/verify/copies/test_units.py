"""What the writers share once a file is read: number literals compared as the language holds them."""

from factory.verify.frameworks.copies.unitsplan import differs


def test_a_number_changed_only_in_digits_the_type_drops_does_not_differ():
    assert not differs("1e300", repr(1e300 + 5))  # one double
    assert not differs("16777216f", "16777217f")  # one float
    assert not differs("017", "019")  # not read: never called different
    assert differs("0x1F", "0x21") and differs("10n", "12n") and differs("9007199254740993L", "9007199254740995L")
    assert differs("2.5f", "4.5f") and differs("1_000", "1_002") and differs("0.25", "2.25")

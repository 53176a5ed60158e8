def add(a, b):
    return a + b


def clamp(x, lo, hi):
    """Limit x to the closed interval [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def parse_pair(text):
    """'key=value' -> ('key', 'value'), whitespace stripped."""
    key, _, value = text.partition("=")
    return key.strip(), value.strip()

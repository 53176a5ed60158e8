"""iniconf: INI-style configuration files with typed values and ``${...}`` references.

    >>> import iniconf
    >>> config = iniconf.loads('''
    ... [server]
    ... host = example.org
    ... port = 8080        # inline comments need a blank before them
    ... url = http://${host}:${port}/
    ... ''')
    >>> config.get_int("server", "port")
    8080
    >>> config["server"]["url"]
    'http://example.org:8080/'
"""

from .config import Config, Section
from .errors import ConfigError, ConversionError, InterpolationError, MissingError, ParseError
from .parser import load, loads
from .values import format_value, parse_duration, parse_value


def dumps(config: Config) -> str:
    """The text of ``config``; :func:`loads` reads it back to an equal configuration."""
    return config.dumps()


__version__ = "0.4.0"

__all__ = [
    "Config",
    "ConfigError",
    "ConversionError",
    "InterpolationError",
    "MissingError",
    "ParseError",
    "Section",
    "dumps",
    "format_value",
    "load",
    "loads",
    "parse_duration",
    "parse_value",
]

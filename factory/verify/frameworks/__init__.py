"""Test frameworks by kind (`Task.tests.framework`): the verification core looks a task's up here.

    pytest   controls, blind checks and a reporting plugin (frameworks/pytest.py)
    command  any runner whose report a result reader reads (frameworks/command.py)

A new framework is its module, a class with `readback` and `run` (`base.TestFramework`), and
one `FRAMEWORKS.add` below.
"""

from __future__ import annotations

from factory.registry import Registry
from factory.verify.frameworks.base import PRIVATE, TEST_UID, TRUSTED, TestFramework, Trial
from factory.verify.frameworks.command import CommandFramework
from factory.verify.frameworks.pytest import PytestFramework

FRAMEWORKS: Registry[type[TestFramework]] = Registry("test framework")
FRAMEWORKS.add("pytest", PytestFramework)
FRAMEWORKS.add("command", CommandFramework)

__all__ = ["FRAMEWORKS", "PRIVATE", "TEST_UID", "TRUSTED", "TestFramework", "Trial"]

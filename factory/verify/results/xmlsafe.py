"""XML written by the code under test, parsed without trusting it.

A JUnit report is written inside the test process, so the patch can write it. Expat is driven
directly: any DOCTYPE (and so any entity, internal or external) is refused before it is
expanded, which closes billion-laughs and external-entity reads without defusedxml. The tree
is built with ElementTree's `TreeBuilder`, so readers use the stdlib's element API.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.parsers import expat


class HostileXml(Exception):
    """The document declares a DTD or an entity."""


class MalformedXml(Exception):
    """Not well-formed: truncated, invalid, or empty."""


def _refuse(*_: object) -> None:
    raise HostileXml("DOCTYPE or entity declaration")


def parse(text: str) -> ET.Element:
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate(encoding="utf-8")  # the text is already decoded
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = lambda tag: builder.end(tag)
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise MalformedXml(str(exc)) from None
    try:
        return builder.close()
    except AssertionError:  # TreeBuilder with no root: an empty document
        raise MalformedXml("no root element") from None


def documents(text: str) -> list[str]:
    """Several reports concatenated (`find -name 'TEST-*.xml' -exec cat {} +`, as SWE-smith's
    Gradle profile reads them), split at each XML declaration."""
    parts = text.split("<?xml")
    head, rest = parts[0], ["<?xml" + p for p in parts[1:]]
    return [head, *rest] if head.strip() else rest

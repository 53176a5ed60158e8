"""Java (and Kotlin on the JVM): test sources, the JUnit platform's configuration and service
registrations, Maven's and Gradle's test configuration, and classes that shadow the test framework.

Refused: a `META-INF/services/org.junit.*` (or TestNG's, Surefire's) registration anywhere, which
loads the agent's extensions and listeners into the runner; and a class in a test framework's
package (`org/junit/...`, `org/opentest4j/...`, `org/assertj/...`), which the build's class path
puts ahead of the framework's own jar. Left out, the rest of the patch was written around them.
Dropped and flagged: test sources (`src/test/**`, `src/it/**`, `src/integrationTest/**`, ...),
`junit-platform.properties`, TestNG suites, Maven's `.mvn/` and wrapper, and every Gradle build
script (`*.gradle`, `*.gradle.kts`, `gradle.properties`, `buildSrc/`): a Gradle script is a
program, and no parser here reads its test task apart from the rest, so its change is left out
whole. Judged after the apply: a pom.xml whose build (Surefire, Failsafe, any plugin a test
phase runs), profiles, parent, test-scoped or system dependencies, or test properties
(`argLine`, `skipTests`, `surefire.*`, ...) change is put back whole at its start state (etree
does not write a file back as it read it, so the agent's other changes there go too, flagged);
a pom.xml that changes only other dependencies or metadata is kept.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from fnmatch import fnmatchcase

from factory.records import FlagKind
from factory.verify.facts import RepoFacts, name_of
from factory.verify.languages.base import Judgement, PutBack, Rules, under

RUNNER_SERVICES = ("org.junit.", "org.testng.", "org.apache.maven.surefire.", "org.opentest4j.")
FRAMEWORK_PACKAGES = ("org/junit", "org/opentest4j", "org/apiguardian", "org/hamcrest", "org/assertj",
                      "org/mockito", "org/testng", "junit/framework", "org/apache/maven/surefire")
TEST_SOURCE_SETS = ("test", "test*", "it", "*Test", "*test", "*Tests")
CONFIG_NAMES = ("junit-platform.properties", "testng*.xml", "*.gradle", "*.gradle.kts", "gradle.properties",
                "gradlew", "gradlew.bat", "mvnw", "mvnw.cmd")
CONFIG_FOLDERS = frozenset({".mvn", "buildSrc"})
JUDGED_ELEMENTS = ("build", "profiles", "reporting", "parent")
TEST_PROPERTIES = ("argLine", "skipTests", "skipITs", "maven.test.*", "surefire.*", "failsafe.*", "junit.*",
                   "jacoco.*", "test")
TEST_SCOPES = ("test", "system")


class JavaRules(Rules):
    language = "java"

    def refusal(self, path: str, facts: RepoFacts) -> str | None:
        parts = path.split("/")
        if len(parts) >= 3 and parts[-3:-1] == ["META-INF", "services"] and parts[-1].startswith(RUNNER_SERVICES):
            return f"registers a service into the test runner: {path}"
        folder = f"/{'/'.join(parts[:-1])}/"
        if any(f"/{package}/" in folder for package in FRAMEWORK_PACKAGES):
            return f"a class in the test framework's package shadows it: {path}"
        return None

    def dropped(self, path: str, facts: RepoFacts) -> FlagKind | None:
        parts = path.split("/")
        if any(fnmatchcase(parts[-1], p) for p in CONFIG_NAMES) or under(path, CONFIG_FOLDERS) or "gradle/wrapper/" in path:
            return FlagKind.dropped_test_configuration
        source_sets = [b for a, b in zip(parts[:-2], parts[1:-1], strict=True) if a == "src"]
        if parts[0] in ("test", "tests") and len(parts) > 1 or any(fnmatchcase(s, p) for s in source_sets for p in TEST_SOURCE_SETS):
            return FlagKind.dropped_test_change
        return None

    def read_after(self, path: str) -> bool:
        return name_of(path) == "pom.xml"

    def judge(self, path: str, before: bytes | None, after: bytes | None, facts: RepoFacts) -> Judgement:
        try:
            old, new = (_judged(b) for b in (before, after))
        except ET.ParseError:
            return PutBack(before, f"{path}: does not parse as XML (the whole file put back)")
        changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        return PutBack(before, f"{path}: {', '.join(changed)} (the whole file put back)") if changed else None


def _judged(data: bytes | None) -> dict[str, object]:
    """The parts of a pom the tests run by, each in a form that compares as data."""
    if data is None:
        return {}
    root = ET.fromstring(data)
    _strip_namespaces(root)
    parts: dict[str, object] = {tag: _canonical(root.find(tag)) for tag in JUDGED_ELEMENTS if root.find(tag) is not None}
    for prop in root.findall("properties/*"):
        if any(fnmatchcase(prop.tag, p) for p in TEST_PROPERTIES):
            parts[f"properties.{prop.tag}"] = (prop.text or "").strip()
    for where in ("dependencies", "dependencyManagement/dependencies"):
        for dep in root.findall(f"{where}/dependency"):
            if (dep.findtext("scope") or "").strip() in TEST_SCOPES or dep.find("systemPath") is not None:
                parts[f"{where}.{dep.findtext('groupId')}:{dep.findtext('artifactId')}"] = _canonical(dep)
    return parts


def _strip_namespaces(root: ET.Element) -> None:
    for element in root.iter():
        if isinstance(element.tag, str):
            element.tag = element.tag.rpartition("}")[2]


def _canonical(element: ET.Element) -> tuple:
    return (element.tag, sorted(element.attrib.items()), (element.text or "").strip(),
            [_canonical(child) for child in element if isinstance(child.tag, str)])

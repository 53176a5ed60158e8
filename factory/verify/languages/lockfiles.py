"""Lockfiles that point a dependency somewhere else than its registry.

A lockfile is data at verification (nothing installs: there is no network), but a task whose
command installs (`npm ci && npm test`) would take a dependency from a path of the repo or a URL
the agent chose, in place of the one the tests were written against. So a lockfile whose patch
adds an entry that resolves off the registry (a path, `file:`, `link:`, a git or plain-http URL,
another host) is put back whole at its start state; a version bump on the registry is kept.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from urllib.parse import urlsplit

import yaml

REGISTRY_HOSTS = frozenset({"registry.npmjs.org", "registry.yarnpkg.com", "index.crates.io", "github.com"})
"""Hosts a registry entry names; a lockfile's own other hosts at the start state count too
(a company mirror). github.com: crates.io's index (`registry+https://github.com/rust-lang/crates.io-index`)."""
SOURCE_KEYS = frozenset({"resolved", "resolution", "tarball", "directory", "repo", "version", "source", "path"})
NPM_LOCKS = frozenset({"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"})
LOCAL = ("file:", "link:", "portal:", "workspace:", "patch:", "exec:", "git", "github:", "gitlab:", "bitbucket:", "http:")
VERSION = re.compile(r"[\d^~<>=*v]")
YARN_V1_RESOLVED = re.compile(r'^\s+resolved\s+"?([^"\s]+)"?\s*$')


def off_registry(name: str, before: bytes | None, after: bytes | None) -> list[str]:
    """Where the entries the patch adds to lockfile `name` resolve, for those off the registry."""
    old, new = _sources(name, before), _sources(name, after)
    hosts = REGISTRY_HOSTS | {urlsplit(_url(v)).hostname or "" for v in old}
    return sorted({v for v in new - old if _off(v, hosts)})


def _sources(name: str, data: bytes | None) -> set[str]:
    if data is None:
        return set()
    text = data.decode(errors="replace")
    try:
        if name.endswith(".json"):
            return set(_walk(json.loads(text)))
        if name == "Cargo.lock":
            return {p.get("source", f"path:{p.get('name')}") for p in tomllib.loads(text).get("package", [])}
        if name == "pnpm-lock.yaml" or text.lstrip().startswith("__metadata"):  # yarn 2+ is YAML too
            return set(_walk(yaml.safe_load(text)))
    except (ValueError, yaml.YAMLError, AttributeError):
        return {f"unreadable:{name}"}
    # yarn 1: not YAML, no parser on PyPI; an entry's source is its `resolved "url"` line
    return {m[1] for line in text.split("\n") if (m := YARN_V1_RESOLVED.match(line))}


def _walk(value: object, key: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        if value.get("link") is True and isinstance(value.get("resolved"), str):
            yield f"link:{value['resolved']}"
        for k, v in value.items():
            yield from _walk(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key)
    elif isinstance(value, str) and key in SOURCE_KEYS:
        yield value


def _url(value: str) -> str:
    return value.split("+", 1)[1] if value.startswith(("registry+", "sparse+")) else value


def _off(value: str, hosts: frozenset[str] | set[str]) -> bool:
    if value.startswith("unreadable:"):
        return True
    if "@" in value and not value.startswith(("http", "git", "registry+", "sparse+")):
        value = value.rpartition("@")[2]  # yarn 2's `name@npm:1.0.0`, `@scope/name@file:../x`
    if value.startswith("npm:"):
        return False
    url = _url(value)
    if url.startswith("https://"):
        return (urlsplit(url).hostname or "") not in hosts
    if value.startswith(LOCAL) or value.startswith("path:"):
        return True
    return not VERSION.match(value) or "/" in value

"""How the factory runs git in a sandbox: on a git dir of its own, with a configuration of its own.

The agent owns everything in its container, the repo's `.git` included (config, attributes,
hooks, index, alternates), so the factory's git never reads it. The start-state commit lives
in `GIT_DIR`, outside the work tree, in a folder only root may enter; the agent gets a copy
as its own `.git` (for its `git status` and `git diff`), and what it does to that copy changes
nothing for the factory. Every factory git call:

- runs with `env -i`: no `GIT_*` variable of anyone's, no system or global config file
  (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`, `HOME=/nonexistent`, no
  `XDG_CONFIG_HOME`), no system attributes (`GIT_ATTR_NOSYSTEM`);
- names its git dir (and work tree): nothing is discovered, no `.git` file is followed;
- sets on its command line every setting that names a program (hooks, fsmonitor, external
  diff, pager, gpg) or a file to read (attributes, excludes): `CONFIG`;
- reads `ATTRIBUTES` before any other attributes: filters and diff drivers (which go by any
  name, so no command-line setting could switch them all off) and line-ending, `ident` and
  encoding conversions that an in-tree `.gitattributes` names do not apply. Files are
  committed and diffed as the bytes in the work tree.

The diff goes through a scratch git dir made for it (`diff_script`): its HEAD and attributes
are written in the same command, it has no config file, and it borrows only objects and the
stat cache of the index from `GIT_DIR`; so even a `GIT_DIR` that a root agent rewrote runs
nothing.

Nested repositories (a folder with its own `.git` dir or file, committed or not) are staged
as plain folders: their files enter the diff like any other, never as a submodule entry
that would carry none of them (`stage`).
"""

from __future__ import annotations

import re
import shlex

FACTORY_DIR = "/var/lib/factory"  # mode 700, root's: neither the agent nor the code under test may enter
GIT_DIR = f"{FACTORY_DIR}/git"
SCRATCH = f"{FACTORY_DIR}/diff"
# Files that running code leaves behind: never the agent's work, never part of a diff or a
# start state (SWE-smith images write bytecode and have no .gitignore for it).
BUILD_ARTIFACTS = ("**/__pycache__/**", "**/*.py[cod]", "**/*.egg-info/**", "**/.pytest_cache/**",
                   "**/.mypy_cache/**", "**/.ruff_cache/**", "**/.hypothesis/**")
SOURCES = " ".join(["."] + [shlex.quote(f":(exclude,glob){p}") for p in BUILD_ARTIFACTS])
# standard folders first: a folder of the image's PATH that someone could write comes last
ENV = ("env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH HOME=/nonexistent "
       "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_ATTR_NOSYSTEM=1")
CONFIG = (
    "user.name=factory", "user.email=factory@localhost", "commit.gpgSign=false",
    "core.hooksPath=/dev/null", "core.fsmonitor=", "core.attributesFile=/dev/null", "core.excludesFile=/dev/null",
    "diff.external=",  # fails closed: a call without --no-ext-diff errors instead of running one
    "core.pager=cat", "core.autocrlf=false", "core.untrackedCache=false", "core.splitIndex=false",
    "gc.auto=0", "maintenance.auto=false",
)
ATTRIBUTES = "* !text !eol !crlf !filter !diff !merge !ident !working-tree-encoding\n"
DIFF = "diff --cached --binary --no-color --no-ext-diff --no-textconv --no-renames --src-prefix=a/ --dst-prefix=b/"
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
PLACEHOLDER = ".factory-nested"
BRANCH = "master"
INIT_CONFIG = "[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n\\tbare = false\\n"
"""printf's format for the config `git init` writes (made without a work tree it would be bare;
the agent's copy is not)."""
COMMIT = re.compile(r"[0-9a-f]{40}")


def git(git_dir: str = GIT_DIR, work_tree: str | None = None) -> str:
    """Shell prefix of one factory git call; without `work_tree`, the current folder is the work tree."""
    flags = [f"--git-dir={shlex.quote(git_dir)}"]
    if work_tree:
        flags.append(f"--work-tree={shlex.quote(work_tree)}")
    return " ".join([ENV, "git", *flags, *(f"-c {c}" for c in CONFIG)])


GIT = git()  # the factory's git dir, in the work tree (the verifier's `git apply`)


def stage(g: str, nested: str) -> str:
    """Shell (run in the work tree) that stages it all into `g`'s index, build artifacts left out.

    A folder holding a `.git` (dir, file or link) would be added as a submodule, or make `git
    add` fail when it has no commit; an index entry inside it makes git walk it as a plain
    folder instead, so a placeholder goes in first and is dropped again after (`nested` lists them).
    """
    # a repo seldom holds a nested one: with none listed, the placeholders' five processes are not run
    return (
        f"find . -path ./.git -prune -o -name .git -prune -printf '%P\\0' "
        f"| sed -z 's|\\.git$|{PLACEHOLDER}|' > {nested} && "
        f"{{ [ ! -s {nested} ] || sed -z 's|^|100644 {EMPTY_BLOB}\\t|' {nested} | {g} update-index -z --index-info; }} && "
        f"{g} add -A -- {SOURCES} && {{ [ ! -s {nested} ] || {g} update-index -z --remove --stdin < {nested}; }} && rm -f {nested}"
    )


def init_git_dir(git_dir: str = GIT_DIR) -> list[str]:
    """Steps (as root) that make a new, empty git dir, in a folder only root may enter.

    The git dir is written as `git init --template=` and `git config core.bare false` would
    write it (gitrepository-layout: HEAD, config, objects/, refs/), in one process, not four:
    a start state is made in every container, and its cost there is mostly processes."""
    q = shlex.quote(git_dir)
    return [
        f"install -d -o root -g root -m 700 {FACTORY_DIR}",
        f"{{ [ ! -e {q} ] || rm -rf {q}; }}",
        f"mkdir -p {q}/objects/info {q}/objects/pack {q}/refs/heads {q}/refs/tags {q}/info",
        f"printf 'ref: refs/heads/{BRANCH}\\n' > {q}/HEAD",
        f"printf '{INIT_CONFIG}' > {q}/config",
        f"printf %s {shlex.quote(ATTRIBUTES)} > {q}/info/attributes",
    ]


def borrow(image_git: str) -> list[str]:
    """Steps that start the new `GIT_DIR` from a start image's git dir: its objects through
    alternates, a copy of its index (whose stat cache spares git re-reading unchanged files)."""
    return [f"echo {image_git}/objects > {GIT_DIR}/objects/info/alternates", f"cp {image_git}/index {GIT_DIR}/index"]


def commit_start_state(workdir: str, owner: str | None, borrowed_from: str | None = None) -> list[str]:
    """Steps (as root, in the work tree) that commit it as the only commit of `GIT_DIR` and give
    the agent a copy as its `.git` (owned by `owner`, "uid:gid"; None for root); the last prints the commit.

    The copy's objects are hard links, not copies (a large repo has many): they stay root's and
    read-only, so the agent reads them but cannot change the factory's; the objects it writes
    itself are new files in folders it owns. A `GIT_DIR` that borrowed objects (`borrow`) gets
    its own pack of exactly those the start commit reaches, and the git dir it borrowed from is
    removed: the clean sources it holds (the fix) never reach the agent.
    """
    g = git(GIT_DIR, workdir)
    dot_git = f"{shlex.quote(workdir)}/.git"
    objects = f"{dot_git}/objects"
    # one `rm` of what goes: the alternates and the git dir borrowed from (its loose copies of
    # packed objects are left: the same objects), and whatever `.git` the work tree still has
    own = [] if borrowed_from is None else [
        f"echo HEAD | {g} pack-objects --revs -q --window=0 {GIT_DIR}/objects/pack/pack >/dev/null",
    ]
    gone = [dot_git] + ([] if borrowed_from is None else [f"{GIT_DIR}/objects/info/alternates", borrowed_from])
    steps = [
        stage(g, f"{FACTORY_DIR}/nested"),
        f"{g} commit -q --no-verify --allow-empty -m 'start state'",
        *own,
        f"rm -rf {' '.join(gone)} && mkdir {dot_git}",
        f"cp -a {GIT_DIR}/HEAD {GIT_DIR}/config {GIT_DIR}/index {GIT_DIR}/info {GIT_DIR}/refs {dot_git}/",
        f"{{ cp -al {GIT_DIR}/objects {objects} 2>/dev/null || {{ rm -rf {objects} && cp -a {GIT_DIR}/objects {objects}; }}; }}",
    ]
    if owner:  # everything but the linked object files
        steps.append(f"find {dot_git} -path {shlex.quote(f'{objects}/??/*')} -prune -o -exec chown {owner} {{}} +")
    # the commit, read by the shell from the branch `init_git_dir` named (no process for it)
    return [*steps, f"read -r start < {GIT_DIR}/refs/heads/{BRANCH} && echo \"$start\""]


def diff_script(workdir: str, start: str | None, err: str) -> str:
    """One shell command (as root): the work tree against commit `start`, as a git diff on stdout.

    It stages into a scratch git dir written here and now, which borrows `GIT_DIR`'s objects
    (alternates) and the stat cache of its index (so unchanged files are not read again: a
    changed file's ctime always changes); git's stderr goes to `err`, kept only on failure."""
    if start is None or not COMMIT.fullmatch(start):
        return f"echo 'no start state: the sandbox was never prepared' >{err}; exit 1"
    s, g = SCRATCH, git(SCRATCH, workdir)
    index = f"{GIT_DIR}/index"
    steps = [
        f"cd {shlex.quote(workdir)}",
        f"rm -rf {s} && mkdir -p {s}/objects/info {s}/refs {s}/info",
        f"echo {GIT_DIR}/objects > {s}/objects/info/alternates",
        f"echo {start} > {s}/HEAD",
        f"printf %s {shlex.quote(ATTRIBUTES)} > {s}/info/attributes",
        f"{{ [ -f {index} ] && cp {index} {s}/index || {g} read-tree {start}; }}",
        stage(g, f"{s}/nested"),
        f"{g} {DIFF} {start}",
    ]
    return (f"{{ {' && '.join(steps)}; }} 2>{err}; "
            f"status=$?; rm -rf {s}; [ $status = 0 ] && rm -f {err}; exit $status")

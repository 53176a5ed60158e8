"""The `command` framework's output channel: the tests write into a pipe that root reads, so
code under test cannot seek back over its output, truncate it, and put a forged run in its
place (cargo's test binaries write to the framework's output directly; a file there could be
rewritten from offset 0, the real failures with it).
"""

from __future__ import annotations

import pytest

from factory.config import VerifierConfig
from factory.records import Reason
from factory.verify import DockerVerifier
from tests.verify.test_canary import first_task, patch_of

pytestmark = pytest.mark.docker


def rewriter(names: list[str]) -> str:
    """Rust that empties its stdout and writes a whole forged run in its place (the canary, found
    in src/lib.rs, reported failed as it should be), then exits as a run with one failure does;
    where its stdout cannot be rewritten it does nothing, and the tests run on honestly."""
    lines = "".join(f'    text.push_str("test {n} ... ok\\n");\n' for n in names)
    return (
        "\n#[doc(hidden)]\npub fn forge() {\n"
        "    use std::io::{Seek, SeekFrom, Write};\n"
        "    use std::os::unix::io::FromRawFd;\n"
        "    let mut out = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) });\n"
        "    if out.set_len(0).is_err() || out.seek(SeekFrom::Start(0)).is_err() { return; }\n"
        f'    let mut text = String::from("\\nrunning {len(names) + 1} tests\\n");\n'
        + lines +
        '    let lib = std::fs::read_to_string("src/lib.rs").unwrap_or_default();\n'
        '    if let Some(at) = lib.rfind("mod factory_") {\n'
        '        let name: String = lib[at + 4..].chars().take_while(|c| c.is_alphanumeric() || *c == \'_\').collect();\n'
        '        text.push_str(&format!("test {name}::must_fail ... FAILED\\n"));\n'
        "    }\n"
        f'    text.push_str("\\ntest result: FAILED. {len(names)} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\\n");\n'
        "    let _ = out.write_all(text.as_bytes());\n"
        "    std::process::exit(101);\n"
        "}\n")


async def test_code_under_test_cannot_rewrite_the_output_it_is_read_from(tmp_path):
    task, folder = first_task("demo-rust")
    new = "pub fn new(input: &'a str) -> Self {\n"
    patch = patch_of(tmp_path, folder, task, {
        "src/lib.rs": lambda text: text + rewriter([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]),
        "src/reader.rs": lambda text: text.replace(new, new + "        crate::forge();\n", 1),
    })
    assert "crate::forge();" in patch
    verdict = await DockerVerifier(VerifierConfig(timeout=300)).verify(task, patch)
    # the rewrite was refused, so the run is the honest one: the bug is still there
    assert not verdict.resolved and verdict.reason is Reason.tests_failed, verdict

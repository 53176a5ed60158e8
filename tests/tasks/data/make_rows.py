"""Writes the sample rows of tests/tasks/data/*.jsonl (README.md says where each field comes from).

Run from the repository root: python tests/tasks/data/make_rows.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent


def diff(path: str, old: str, new: str, line: int = 10, context: str = "") -> str:
    """A one-hunk git diff replacing line `old` with `new` in `path`."""
    ctx = f" {context}\n" if context else ""
    n = 2 if context else 1
    return (f"diff --git a/{path} b/{path}\nindex 3f1c2a9..8e4b7d0 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -{line},{n} +{line},{n} @@\n{ctx}-{old}\n+{new}\n")


def new_file(path: str, body: list[str]) -> str:
    lines = "".join(f"+{b}\n" for b in body)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..5d2f8a1\n--- /dev/null\n"
            f"+++ b/{path}\n@@ -0,0 +1,{len(body)} @@\n{lines}")


def eval_script(base: str, workdir: str, test_files: list[str], test_patch: str, commands: list[str],
                environment: tuple[str, ...] = (), setup: tuple[str, ...] = ()) -> str:
    """The shape of SWE-bench's eval.sh (harness: make_eval_script_list; markers from constants)."""
    files = " ".join(test_files)
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail", *environment, f"cd {workdir}",
        f"git config --global --add safe.directory {workdir}", f"cd {workdir}", "git status", "git show",
        f"git -c core.fileMode=false diff {base}", *environment, *setup,
        f"git checkout {base} {files}", "git apply -v - <<'EOF_114329324912'", test_patch.rstrip("\n"),
        "EOF_114329324912", ": '>>>>> Start Test Output'", *commands, ": '>>>>> End Test Output'",
        f"git checkout {base} {files}", "",
    ])


SWESMITH = [
    {   # Go: gin, as SWE-smith's GoProfile Gin3c12d2a8
        "instance_id": "gin-gonic__gin.3c12d2a8.func_pm_op_change__q0v3n1ke",
        "repo": "swesmith/gin-gonic__gin.3c12d2a8",
        "patch": diff("context.go", "\tif c.index < int8(len(c.handlers)) {", "\tif c.index <= int8(len(c.handlers)) {",
                      line=185, context="func (c *Context) Next() {"),
        "FAIL_TO_PASS": ["TestContextNext", "TestMiddlewareGeneralCase"],
        "PASS_TO_PASS": ["TestContextReset", "TestRouteStaticNoListing/with_prefix"],
        "image_name": "swebench/swesmith.x86_64.gin-gonic_1776_gin.3c12d2a8",
        "problem_statement": "Calling c.Next() from the last handler panics with index out of range.",
        "created_at": "2025-07-02T11:05:44",
    },
    {   # Rust: anyhow (default cargo test --verbose), with an old-style image name
        "instance_id": "dtolnay__anyhow.1d7ef1db.func_pm_bool_negate__2g1t8c3x",
        "repo": "swesmith/dtolnay__anyhow.1d7ef1db",
        "patch": diff("src/error.rs", "        if self.inner.is_empty() {", "        if !self.inner.is_empty() {", line=412),
        "FAIL_TO_PASS": ["test_downcast_ref", "tests::test_context"],
        "PASS_TO_PASS": ["src/lib.rs - (line 29)", "test_display"],
        "image_name": "swesmith.x86_64.dtolnay__anyhow.1d7ef1db",
        "problem_statement": "downcast_ref returns None for an error built with anyhow!().",
    },
    {   # Rust: tokio overrides the command (RustProfile Tokioab3ff69c)
        "instance_id": "tokio-rs__tokio.ab3ff69c.func_pm_remove_cond__7a1b2c3d",
        "repo": "swesmith/tokio-rs__tokio.ab3ff69c",
        "patch": diff("tokio/src/sync/mpsc/chan.rs", "        if self.semaphore.is_closed() {", "        {", line=233),
        "FAIL_TO_PASS": ["send_recv_with_buffer"],
        "PASS_TO_PASS": [],
        "image_name": "swebench/swesmith.x86_64.tokio-rs_1776_tokio.ab3ff69c",
        "problem_statement": "Sending on a closed bounded channel succeeds instead of returning SendError.",
    },
    {   # Java: gson (a Maven profile)
        "instance_id": "google__gson.dd2fe59c.func_pm_ctrl_invert_if__m3k9x0qa",
        "repo": "swesmith/google__gson.dd2fe59c",
        "patch": diff("gson/src/main/java/com/google/gson/JsonArray.java",
                      "    return elements.isEmpty();", "    return !elements.isEmpty();", line=201),
        "FAIL_TO_PASS": ["com.google.gson.JsonArrayTest.testIsEmpty", "com.google.gson.JsonArrayTest#testRemove"],
        "PASS_TO_PASS": ["com.google.gson.JsonArrayTest.testEqualsOnEmptyArray"],
        "image_name": "swebench/swesmith.x86_64.google_1776_gson.dd2fe59c",
        "problem_statement": "JsonArray.isEmpty() returns true for a non-empty array.",
    },
    {   # JavaScript: mongoose (mocha, its own profile)
        "instance_id": "Automattic__mongoose.5f57a5bb.func_pm_op_swap__c1d2e3f4",
        "repo": "swesmith/Automattic__mongoose.5f57a5bb",
        "patch": diff("lib/helpers/isBsonType.js", "  return obj != null && obj._bsontype === typename;",
                      "  return obj != null && typename === obj._bsontype.toLowerCase();", line=11),
        "FAIL_TO_PASS": ["isBsonType returns true for a Decimal128"],
        "PASS_TO_PASS": ["isBsonType returns false for null"],
        "image_name": "swebench/swesmith.x86_64.automattic_1776_mongoose.5f57a5bb",
        "problem_statement": "isBsonType(new Decimal128('1'), 'Decimal128') returns false.",
    },
    {   # TypeScript: a repo whose profile factory does not know: skipped, unsupported
        "instance_id": "trpc__trpc.2f40ba93.func_pm_arg_swap__0a9b8c7d",
        "repo": "swesmith/trpc__trpc.2f40ba93",
        "patch": diff("packages/server/src/core/router.ts", "  return mergeRouters(a, b);", "  return mergeRouters(b, a);", line=88),
        "FAIL_TO_PASS": ["mergeRouters > keeps the first router's procedures"],
        "PASS_TO_PASS": [],
        "image_name": "swebench/swesmith.x86_64.trpc_1776_trpc.2f40ba93",
        "problem_statement": "Merging routers lets the second router override the first.",
    },
    {   # C++: no reader for ctest/gtest output yet: skipped, unsupported
        "instance_id": "fmtlib__fmt.8303d140.func_pm_op_change__5e6f7a8b",
        "repo": "swesmith/fmtlib__fmt.8303d140",
        "patch": diff("include/fmt/format.h", "  if (value < 10) return 1;", "  if (value <= 10) return 1;", line=1102)
                 + diff("src/format.cc", "  return count_digits(n);", "  return count_digits(n) + 0;", line=40),
        "FAIL_TO_PASS": ["format-test.count_digits"],
        "PASS_TO_PASS": [],
        "image_name": "swebench/swesmith.x86_64.fmtlib_1776_fmt.8303d140",
        "problem_statement": "fmt::format(\"{}\", 10) prints one digit.",
    },
]

GIN_TEST_PATCH = diff("context_test.go", "func TestContextGetUint16(t *testing.T) {}",
                      "func TestContextGetUint16(t *testing.T) { assert.Equal(t, uint16(1), getUint16()) }", line=410)
TOKIO_TEST_PATCH = new_file("tokio/tests/io_read_buf.rs", ["#[tokio::test]", "async fn read_buf_fills() {}"])
AXIOS_TEST_PATCH = diff("test/unit/helpers/combineURLs.js", "  it('should combine URLs', () => {});",
                        "  it('should not double the slash', () => {});", line=4)
FLASK_TEST_PATCH = diff("tests/test_basic.py", "def test_url_for():", "def test_url_for_with_anchor():", line=1200)
GSON_TEST_PATCH = diff("gson/src/test/java/com/google/gson/JsonParserTest.java", "  public void testParse() {}",
                       "  public void testParseUnquoted() {}", line=60)
PHP_TEST_PATCH = diff("tests/Unit/StrTest.php", "    public function testSlug() {}", "    public function testSlugDash() {}", line=30)

SWEBENCH_V5 = [
    {
        "repo": "gin-gonic/gin", "instance_id": "gin-gonic__gin-4003",
        "base_commit": "674522db91d637d179c16c372d87756ea26fa089",
        "patch": diff("context.go", "\treturn 0", "\treturn uint16(v)", line=330),
        "test_patch": GIN_TEST_PATCH,
        "problem_statement": "Context.GetUint16 ignores the stored value.",
        "hints_text": "", "created_at": "2024-06-22T10:12:01Z", "version": "1.10",
        "FAIL_TO_PASS": json.dumps(["TestContextGetUint16"]),
        "PASS_TO_PASS": json.dumps(["TestContextGetUint32", "TestContextGetInt8"]),
        "environment_setup_commit": "", "split": "test",
        "image": "swebench/sweb.eval.x86_64.gin-gonic_1776_gin-4003:latest",
        "log_parser": "parse_log_gotest", "eval_type": "pass_and_fail",
        "eval_script": eval_script("674522db91d637d179c16c372d87756ea26fa089", "/testbed", ["context_test.go"],
                                   GIN_TEST_PATCH, ["go test -v -run '^TestContextGetUint16$' ."]),
    },
    {
        "repo": "tokio-rs/tokio", "instance_id": "tokio-rs__tokio-6551",
        "base_commit": "0a85a9662d30139c779ea49a59be30db0f292b5d",
        "patch": diff("tokio/src/io/util/read_buf.rs", "        Poll::Ready(Ok(0))", "        Poll::Ready(Ok(n))", line=52),
        "test_patch": TOKIO_TEST_PATCH,
        "problem_statement": "read_buf reports 0 bytes read after filling the buffer.",
        "version": "1.37", "FAIL_TO_PASS": ["read_buf_fills"], "PASS_TO_PASS": [],
        "image": "swebench/sweb.eval.x86_64.tokio-rs_1776_tokio-6551:latest",
        "log_parser": "parse_log_cargo", "eval_type": "pass_and_fail",
        "eval_script": eval_script("0a85a9662d30139c779ea49a59be30db0f292b5d", "/testbed", ["tokio/tests/io_read_buf.rs"],
                                   TOKIO_TEST_PATCH, ["cargo test --test io_read_buf -- --nocapture"],
                                   environment=("export RUST_BACKTRACE=1",)),
    },
    {
        "repo": "axios/axios", "instance_id": "axios__axios-5085",
        "base_commit": "85740c3e7a1fa48346dfcbd4497f463ccb1c1b05",
        "patch": diff("lib/helpers/combineURLs.js", "    ? baseURL + '/' + relativeURL",
                      "    ? baseURL.replace(/\\/?\\/$/, '') + '/' + relativeURL.replace(/^\\/+/, '')", line=13),
        "test_patch": AXIOS_TEST_PATCH,
        "problem_statement": "combineURLs doubles the slash when the base URL ends with one.",
        "version": "1.1", "FAIL_TO_PASS": ["should not double the slash"], "PASS_TO_PASS": ["should combine URLs"],
        "image": "swebench/sweb.eval.x86_64.axios_1776_axios-5085:latest",
        "log_parser": "parse_log_jest", "eval_type": "pass_and_fail",
        "eval_script": eval_script("85740c3e7a1fa48346dfcbd4497f463ccb1c1b05", "/testbed", ["test/unit/helpers/combineURLs.js"],
                                   AXIOS_TEST_PATCH, ["npx jest --verbose test/unit/helpers/combineURLs.js"],
                                   setup=("npm run build",)),
    },
    {
        "repo": "chartjs/Chart.js", "instance_id": "chartjs__Chart.js-11116",
        "base_commit": "3fc33e4eff63a6a5b1da1ae3fe9e0bc6e6a3c0b9",
        "patch": diff("src/core/core.scale.js", "    return this.min;", "    return this._userMin ?? this.min;", line=520),
        "test_patch": diff("test/specs/core.scale.tests.js", "  it('min', () => {});", "  it('min honours the user', () => {});", line=8),
        "problem_statement": "A scale ignores the user's min.",
        "version": "4.2", "FAIL_TO_PASS": ["Core.scale min honours the user"], "PASS_TO_PASS": ["Core.scale max"],
        "image": "swebench/sweb.eval.x86_64.chartjs_1776_chart.js-11116:latest",
        "log_parser": "parse_log_jest", "eval_type": "fail_only",
        "eval_script": eval_script("3fc33e4eff63a6a5b1da1ae3fe9e0bc6e6a3c0b9", "/testbed", ["test/specs/core.scale.tests.js"],
                                   "diff --git a/x b/x\n", ["npx jest --verbose test/specs/core.scale.tests.js"]),
    },
    {
        "repo": "pallets/flask", "instance_id": "pallets__flask-5063",
        "base_commit": "182ce3dd15dfa3537391c3efaf9c3ff407d134d4",
        "patch": diff("src/flask/helpers.py", "    return url", "    return url + anchor", line=250),
        "test_patch": FLASK_TEST_PATCH,
        "problem_statement": "url_for drops _anchor.",
        "version": "2.3", "FAIL_TO_PASS": '["tests/test_basic.py::test_url_for_with_anchor"]',
        "PASS_TO_PASS": '["tests/test_basic.py::test_url_for"]',
        "image": "swebench/sweb.eval.x86_64.pallets_1776_flask-5063:latest",
        "log_parser": "parse_log_pytest", "eval_type": "pass_and_fail",
        "eval_script": eval_script("182ce3dd15dfa3537391c3efaf9c3ff407d134d4", "/testbed", ["tests/test_basic.py"],
                                   FLASK_TEST_PATCH, ["pytest -rA tests/test_basic.py"],
                                   environment=("source /opt/miniconda3/bin/activate", "conda activate testbed"),
                                   setup=("python -m pip install -e .",)),
    },
    {   # Maven: parse_log_maven pairs `-Dtest=` runs with BUILD SUCCESS; no reader names tests so
        "repo": "google/gson", "instance_id": "google__gson-2479",
        "base_commit": "4dfae77af3d543bea2782f85a154cc070290f086",
        "patch": diff("gson/src/main/java/com/google/gson/JsonParser.java", "    return null;", "    return parse(reader);", line=80),
        "test_patch": GSON_TEST_PATCH,
        "problem_statement": "JsonParser rejects unquoted names in lenient mode.",
        "version": "2.10", "FAIL_TO_PASS": ["com.google.gson.JsonParserTest#testParseUnquoted"], "PASS_TO_PASS": [],
        "image": "swebench/sweb.eval.x86_64.google_1776_gson-2479:latest",
        "log_parser": "parse_log_maven", "eval_type": "pass_and_fail",
        "eval_script": eval_script("4dfae77af3d543bea2782f85a154cc070290f086", "/testbed",
                                   ["gson/src/test/java/com/google/gson/JsonParserTest.java"], GSON_TEST_PATCH,
                                   ["mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.JsonParserTest#testParseUnquoted"]),
    },
    {   # PHP: no reader for PHPUnit output yet
        "repo": "laravel/framework", "instance_id": "laravel__framework-48573",
        "base_commit": "a6dd5cd54f1f5d4e5c6b1e3c2a7f0b8c9d1e2f3a",
        "patch": diff("src/Illuminate/Support/Str.php", "        return $title;", "        return trim($title, '-');", line=900),
        "test_patch": PHP_TEST_PATCH,
        "problem_statement": "Str::slug keeps leading dashes.",
        "version": "10.x", "FAIL_TO_PASS": ["Tests\\Unit\\StrTest::testSlugDash"], "PASS_TO_PASS": [],
        "image": "swebench/sweb.eval.x86_64.laravel_1776_framework-48573:latest",
        "log_parser": "parse_log_phpunit", "eval_type": "pass_and_fail",
        "eval_script": eval_script("a6dd5cd54f1f5d4e5c6b1e3c2a7f0b8c9d1e2f3a", "/testbed", ["tests/Unit/StrTest.php"],
                                   PHP_TEST_PATCH, ["vendor/bin/phpunit --testdox tests/Unit/StrTest.php"]),
    },
]

REBENCH = [
    {
        "instance_id": "spf13__cobra-2120", "repo": "spf13/cobra",
        "base_commit": "4b2ba1d3cd6edfd9d4eb54c35d3d2b3f6f1c2a5e",
        "patch": diff("command.go", "\treturn nil", "\treturn c.validateRequiredFlags()", line=1010),
        "test_patch": diff("command_test.go", "func TestRequiredFlags(t *testing.T) {}",
                           "func TestRequiredFlagsInGroup(t *testing.T) {}", line=2300),
        "problem_statement": "Required flags inside a flag group are not enforced.",
        "FAIL_TO_PASS": ["TestRequiredFlagsInGroup"], "PASS_TO_PASS": ["TestRequiredFlags", "TestFlagGroups/required"],
        "image_name": "swerebench/sweb.eval.x86_64.spf13_1776_cobra-2120",
        "language": "go", "created_at": "2024-04-01T09:00:00",
        "install_config": {"install": ["go mod download"], "test_cmd": "go test -v ./...", "log_parser": "parse_log_gotest"},
        "meta": {"llm_score": {"difficulty_score": 1}},
    },
    {
        "instance_id": "colinhacks__zod-3211", "repo": "colinhacks/zod",
        "base_commit": "9d3a0e6f5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e",
        "patch": diff("src/types.ts", "    return INVALID;", "    return OK(input.data);", line=1500),
        "test_patch": diff("src/__tests__/string.test.ts", "test(\"email\", () => {});", "test(\"email with plus\", () => {});", line=40),
        "problem_statement": "z.string().email() rejects addresses with a plus sign.",
        "FAIL_TO_PASS": ["email with plus"], "PASS_TO_PASS": ["email"],
        "image_name": "swerebench/sweb.eval.x86_64.colinhacks_1776_zod-3211",
        "language": "ts",
        # the dataset stores install_config as JSON text where Arrow cannot type it
        "install_config": json.dumps({"install": ["yarn install"], "test_cmd": ["yarn build", "yarn jest --verbose src/__tests__/string.test.ts"],
                                      "log_parser": "parse_log_jest"}),
    },
    {
        "instance_id": "BurntSushi__ripgrep-2610", "repo": "BurntSushi/ripgrep",
        "base_commit": "e0a8567d0ab5e1d56e4b7c4c77da0df2a1ff3a59",
        "patch": diff("crates/globset/src/glob.rs", "            Token::Any => {}", "            Token::Any => re.push_str(\"[^/]\"),", line=700),
        "test_patch": diff("crates/globset/src/glob.rs", "    fn any() {}", "    fn any_not_slash() {}", line=1300),
        "problem_statement": "`?` in a glob matches a path separator.",
        "FAIL_TO_PASS": ["glob::tests::any_not_slash"], "PASS_TO_PASS": ["glob::tests::any"],
        "image_name": "swerebench/sweb.eval.x86_64.burntsushi_1776_ripgrep-2610",
        "language": "rust",
        "install_config": {"test_cmd": "cargo test -p globset", "log_parser": "parse_log_cargo"},
    },
    {
        "instance_id": "encode__httpx-3109", "repo": "encode/httpx",
        "base_commit": "4b85e6c3891c1d0e6a2d7a5f6e0c9b8a7d6c5b4a",
        "patch": diff("httpx/_urls.py", "        return self._uri_reference.host", "        return self._uri_reference.host.lower()", line=170),
        "test_patch": diff("tests/models/test_url.py", "def test_url_host():", "def test_url_host_lowercase():", line=20),
        "problem_statement": "URL.host keeps upper case letters.",
        "FAIL_TO_PASS": ["tests/models/test_url.py::test_url_host_lowercase"], "PASS_TO_PASS": [],
        "image_name": "swerebench/sweb.eval.x86_64.encode_1776_httpx-3109",
        "language": "python",
        "install_config": {"test_cmd": "pytest -rA tests/models/test_url.py", "log_parser": "parse_log_pytest"},
    },
    {   # Kotlin: no reader for its JUnit console parser yet
        "instance_id": "Kotlin__kotlinx.coroutines-4012", "repo": "Kotlin/kotlinx.coroutines",
        "base_commit": "1f2e3d4c5b6a79880716253443526170a9b8c7d6",
        "patch": diff("kotlinx-coroutines-core/common/src/Delay.kt", "    if (timeMillis <= 0) return", "    if (timeMillis < 0) return", line=120),
        "test_patch": diff("kotlinx-coroutines-core/common/test/DelayTest.kt", "    fun testDelay() {}", "    fun testDelayZero() {}", line=15),
        "problem_statement": "delay(0) does not yield.",
        "FAIL_TO_PASS": ["kotlinx.coroutines.DelayTest.testDelayZero"], "PASS_TO_PASS": [],
        "image_name": "swerebench/sweb.eval.x86_64.kotlin_1776_kotlinx.coroutines-4012",
        "language": "kotlin",
        "install_config": {"test_cmd": "./gradlew :kotlinx-coroutines-core:jvmTest", "log_parser": "parse_log_kotlin_junit"},
    },
]


def msb(org: str, repo: str, number: int, lang: str, fix: str, test: str, f2p: dict, p2p: dict,
        s2p: dict | None = None, n2p: dict | None = None, **extra) -> dict:
    """A row as Multi-SWE-bench's Dataset serialises (dataset.py, pull_request.py, test_result.py)."""
    run = {"passed_count": 0, "failed_count": 0, "skipped_count": 0,
           "passed_tests": [], "failed_tests": [], "skipped_tests": []}
    return {
        "org": org, "repo": repo, "number": number, "state": "closed",
        "title": extra.pop("title", "Fix"), "body": extra.pop("body", ""),
        "base": {"label": f"{org}:main", "ref": "main", "sha": extra.pop("sha")},
        "resolved_issues": extra.pop("issues"),
        "fix_patch": fix, "test_patch": test,
        "fixed_tests": {**f2p, **(s2p or {}), **(n2p or {})},
        "p2p_tests": p2p, "f2p_tests": f2p, "s2p_tests": s2p or {}, "n2p_tests": n2p or {},
        "run_result": run, "test_patch_result": run, "fix_patch_result": run,
        "instance_id": f"{org}__{repo}-{number}", "lang": lang, **extra,
    }


def status(run: str, test: str, fix: str) -> dict:
    return {"run": run, "test": test, "fix": fix}


MULTI_SWE_BENCH = [
    msb("beego", "beego", 5725, "go",
        diff("server/web/router.go", "\treturn false", "\treturn strings.HasPrefix(p, prefix)", line=300),
        diff("server/web/router_test.go", "func TestRouter(t *testing.T) {}", "func TestRouterPrefix(t *testing.T) {}", line=90),
        f2p={"TestRouterPrefix": status("NONE", "FAIL", "PASS")},
        p2p={"TestRouter": status("PASS", "PASS", "PASS")},
        n2p={"TestRouterPrefix/nested": status("NONE", "NONE", "PASS")},
        sha="9d0b8b9c5e2f4b1a3c6d8e0f2a4b6c8d0e2f4a6b",
        issues=[{"number": 5724, "title": "Prefix routes never match",
                 "body": "A router registered with a prefix never matches nested paths."}]),
    msb("clap-rs", "clap", 5520, "rust",
        diff("clap_builder/src/parser/parser.rs", "            return Ok(());", "            return self.check_required();", line=420),
        diff("tests/builder/require.rs", "fn required() {}", "fn required_after_subcommand() {}", line=60),
        f2p={"builder::require::required_after_subcommand": status("NONE", "FAIL", "PASS")},
        p2p={"builder::require::required": status("PASS", "PASS", "PASS")},
        s2p={"builder::require::ignored_until_fixed": status("SKIP", "SKIP", "PASS")},
        sha="2a5b7c9d1e3f5a7b9c1d3e5f7a9b1c3d5e7f9a1b",
        issues=[]),
    msb("alibaba", "fastjson2", 2285, "java",
        diff("core/src/main/java/com/alibaba/fastjson2/JSONReader.java", "        return null;", "        return readString();", line=800),
        diff("core/src/test/java/com/alibaba/fastjson2/issues_2200/Issue2285.java", "    public void test() {}", "    public void test1() {}", line=10),
        f2p={"com.alibaba.fastjson2.issues_2200.Issue2285": status("NONE", "FAIL", "PASS")},
        p2p={}, sha="7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d",
        issues=[{"number": 2284, "title": "readString returns null", "body": None}]),
    msb("vuejs", "core", 11589, "ts",
        diff("packages/runtime-core/src/apiWatch.ts", "    return", "    return cleanup()", line=200),
        diff("packages/runtime-core/__tests__/apiWatch.spec.ts", "  it('watch', () => {})", "  it('watch cleanup', () => {})", line=30),
        f2p={"packages/runtime-core/__tests__/apiWatch.spec.ts": status("FAIL", "FAIL", "PASS")},
        p2p={}, sha="3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f",
        issues=[{"number": 11588, "title": "watch cleanup not called", "body": "onCleanup is never called."}]),
]


def write(name: str, rows: list[dict]) -> None:
    (HERE / name).write_text("".join(json.dumps(row) + "\n" for row in rows))


if __name__ == "__main__":
    write("swesmith_languages.jsonl", SWESMITH)
    write("swebench_v5.jsonl", SWEBENCH_V5)
    write("swe_rebench_v2.jsonl", REBENCH)
    write("multi_swe_bench.jsonl", MULTI_SWE_BENCH)

import json

import pytest

from factory.filters import DropReason, FlagCode, SecretScanner, SecretsConfig, SecretsFilter
from factory.records import ToolCall
from tests.filters.attempt_builder import attempt, bash, submit

# Built from pieces so that no scanner mistakes this file for a leak.
HF = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ" + "01234567"
ANTHROPIC = "sk-ant-" + "api03-" + "abcdEFGH1234ijklMNOP5678-qrstUVWX_yz90"
OPENAI = "sk-" + "proj-" + "abcDEF123ghiJKL456mnoPQR789stuVWX"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GOOGLE = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
GITHUB = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
PRIVATE_KEY = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc==\n-----END RSA " + "PRIVATE KEY-----"


def redact(text):
    return SecretScanner.from_config().redact(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"export HF_TOKEN={HF}", "hf_token"),
        (f"ANTHROPIC_API_KEY={ANTHROPIC}", "anthropic_api_key"),
        (f"OPENAI_API_KEY='{OPENAI}'", "openai_api_key"),
        (f"aws_access_key_id = {AWS_ID}", "aws_access_key_id"),
        (f"key={GOOGLE}&q=1", "google_api_key"),
        (f"token: {GITHUB}", "github_token"),
        (f"id_rsa:\n{PRIVATE_KEY}\nafter", "private_key"),
    ],
)
def test_each_kind_of_credential_is_found_and_replaced(text, kind):
    redacted, found = redact(text)
    assert found == {kind: 1}
    assert f"[REDACTED:{kind}]" in redacted
    for secret in (HF, ANTHROPIC, OPENAI, AWS_ID, GOOGLE, GITHUB, "MIIEowIBAAKCAQEA7"):
        assert secret not in redacted


def test_a_labelled_aws_secret_keeps_its_label():
    redacted, found = redact(f"aws_secret_access_key = {AWS_SECRET}\nregion = us-east-1")
    assert redacted == "aws_secret_access_key = [REDACTED:aws_secret_access_key]\nregion = us-east-1"
    assert found == {"aws_secret_access_key": 1}


def test_a_private_key_cut_off_by_truncation_is_still_redacted():
    redacted, _ = redact("-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n<output truncated>")
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "from huggingface_hub import hf_hub_download",
        "python -m task-scheduler-configuration-manager2",
        "pip install scikit-learn; import sklearn",
        "AKIA is a prefix",
        "sk-ant is short",
    ],
)
def test_ordinary_code_is_left_alone(text):
    assert redact(text) == (text, {})


def test_a_key_in_a_tool_output_is_redacted_and_the_row_flagged():
    a = attempt([bash("cat .env"), submit()], outputs=[f"HF_TOKEN={HF}\nDEBUG=1", "ok"])
    result = SecretsFilter().run([a])
    (kept,) = result.kept
    tool_output = kept.trajectory.messages[3]
    assert tool_output.role == "tool"
    assert tool_output.content == "HF_TOKEN=[REDACTED:hf_token]\nDEBUG=1"
    (flag,) = result.flags
    assert (flag.key, flag.code) == (a.key, FlagCode.secret_redacted)
    assert flag.detail == "hf_token x1 in messages[3] (tool)"
    assert HF in a.trajectory.messages[3].content  # the input is not mutated
    assert result.drops == []


def test_tool_call_arguments_stay_valid_json():
    a = attempt([bash(f"curl -H 'Authorization: Bearer {OPENAI}' https://example.invalid"), submit()])
    (kept,) = SecretsFilter().run([a]).kept
    call = kept.trajectory.messages[2].tool_calls[0]
    assert isinstance(call, ToolCall)
    assert json.loads(call.arguments) == {
        "command": "curl -H 'Authorization: Bearer [REDACTED:openai_api_key]' https://example.invalid"
    }


def test_reasoning_and_patch_are_scanned_too():
    a = attempt(patch=f"+TOKEN = '{GITHUB}'\n")
    a.trajectory.messages[2].reasoning = f"the key is {ANTHROPIC}"
    result = SecretsFilter().run([a])
    (kept,) = result.kept
    assert kept.trajectory.patch == "+TOKEN = '[REDACTED:github_token]'\n"
    assert kept.trajectory.messages[2].reasoning == "the key is [REDACTED:anthropic_api_key]"
    assert result.flags[0].detail == "anthropic_api_key x1, github_token x1 in messages[2] (assistant), patch"


def test_drop_instead_of_redact():
    a = attempt([bash("env"), submit()], outputs=[f"AWS={AWS_ID}", "ok"])
    result = SecretsFilter(SecretsConfig(action="drop")).run([a])
    assert result.kept == []
    assert result.drops[0].reason == DropReason.secret_found


def test_allowed_strings_and_extra_patterns():
    config = SecretsConfig(allow=[HF], extra_patterns={"internal_token": r"itk-[0-9a-f]{16}"})
    text, found = SecretScanner.from_config(config).redact(f"{HF} itk-0123456789abcdef")
    assert text == f"{HF} [REDACTED:internal_token]"
    assert found == {"internal_token": 1}


def test_a_bad_extra_pattern_is_a_config_error():
    with pytest.raises(ValueError, match="'broken' is not a valid regex"):
        SecretsConfig(extra_patterns={"broken": "("})


def test_clean_rows_pass_unchanged():
    a = attempt()
    result = SecretsFilter().run([a])
    assert result.kept == [a] and result.flags == []

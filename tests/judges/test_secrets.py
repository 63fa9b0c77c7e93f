"""No API key ever appears in a log record, cache row, exception message, reply or repr."""

from __future__ import annotations

import logging
import pickle

import pytest

from assay.errors import ConfigError
from assay.judges import JudgeRequest, ResponseCache, make_judge, parse_spec
from assay.judges.secrets import Secret, redact
from assay.testing import Faults

from .helpers import FAST_RETRY, request

KEY = "sk-test-SUPERSECRET-0123456789abcdef"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


async def test_no_secret_leaks_anywhere_during_a_troubled_run(serve, key, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    server = await serve(require_key=key, faults=Faults(
        script=["rate_limit", "server_error", "malformed", "malformed", "refusal", "timeout", None],
        retry_after=0.001, hang_s=2))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    texts: list[str] = []
    async with make_judge(f"openai:gpt-4.1-mini@{server.base_url}", cache=cache,
                          retry=FAST_RETRY, timeout_s=0.2) as judge:
        for i in range(6):
            reply = await judge.ask(request(f"c{i}"))
            texts += [repr(reply), str(reply.failure), reply.raw]
        texts += [repr(judge), repr(judge.config), repr(judge._transport), str(judge.config),
                  judge.config.model_dump_json(), repr(judge.config.model_dump())]
    wrong = make_judge(f"openai:gpt-4.1-mini@{server.base_url}", api_key=KEY + "-wrong",
                       retry={"max_retries": 0})
    async with wrong:
        rejected = await wrong.ask(request())
    texts += [str(rejected.failure), rejected.raw]
    cache.close()
    texts += [record.getMessage() for record in caplog.records]
    texts += [str(entry) for entry in server.requests]
    for suffix in ("", "-wal", "-shm"):
        path = tmp_path / f"cache.sqlite{suffix}"
        if path.exists():
            texts.append(path.read_bytes().decode("latin-1"))

    assert rejected.failure.status == 401 and "Incorrect API key provided" in rejected.failure.message
    assert len(server.requests) > 5
    leaks = [t for t in texts if KEY in t]
    assert leaks == []


async def test_a_config_error_does_not_show_the_key(key):
    judge = make_judge("openai:gpt-4.1-mini@http://127.0.0.1:9/v1")
    async with judge:
        with pytest.raises(ConfigError) as info:
            await judge.check(timeout_s=1)
    assert KEY not in str(info.value) and KEY not in repr(info.value)


def test_a_key_from_a_config_file_is_masked_in_the_config():
    cfg = parse_spec("openai:gpt-4.1", api_key="sk-from-file-9876543210")
    assert "sk-from-file" not in repr(cfg) and "sk-from-file" not in cfg.model_dump_json()


def test_a_secret_cannot_be_pickled():
    with pytest.raises(TypeError):
        pickle.dumps(Secret("abcdefgh"))


def test_redaction_catches_unregistered_bearer_tokens():
    assert redact("Authorization: Bearer zyxwvutsrqpo9876") == "Authorization: Bearer [REDACTED]"


@pytest.mark.parametrize("text", [
    "Authorization: BEARER zyxwvutsrqpo9876", "basic dXNlcjpwYXNzd29yZA==", "key SK-ABCDEFGH1234",
    "sk-ant-abcdefgh12345678", "see https://me:hunter22@example.com/v1", "ſk-abcdefgh12345678",
    "\u212aey bearer abcdefgh1234", "plain reply, nothing to scrub", '{"criteria_met": true}',
    "a bearer of news", "Basic\tQWxhZGRpbjpvcGVu", "ftp://user:pw@host"])
def test_the_quick_check_before_the_generic_pattern_never_skips_a_match(text):
    from assay.judges import secrets

    if secrets._GENERIC.search(text):
        assert secrets._may_hold_generic(text)
    registered = secrets._PATTERN  # other tests may have registered secrets: applied first
    full = registered.sub("[REDACTED]", text) if registered is not None else text
    full = secrets._GENERIC.sub(secrets.scrub_generic, full)
    assert redact(text) == full  # the pattern as it always ran


@pytest.mark.parametrize("text", ["2.Basic diagnostic Tests: Utilize any basic tests available.",
                                  "Start with basic information about the medication."])
def test_basic_and_an_ordinary_word_in_a_reply_is_not_a_credential(text):
    """Issue 43: "Basic diagnostic" in a model's near-miss edit became "Basic [REDACTED]", so
    the edit no longer matched the reference and was rejected."""
    assert redact(text) == text


def test_log_records_with_arguments_are_redacted(key, caplog):
    from assay.logs import get_logger

    Secret(key)
    caplog.set_level(logging.DEBUG)
    get_logger("assay.judges").warning("the key was %s", key)
    assert KEY not in caplog.records[-1].getMessage()


def test_the_logging_module_imports_first_without_a_cycle():
    import subprocess
    import sys

    for first in ("assay.logs", "assay.runs.engine", "assay.distributed.pool"):
        done = subprocess.run([sys.executable, "-c", f"import {first}"], capture_output=True,
                              text=True, check=False)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("written", ["plainly", "with JSON escapes"])
async def test_a_key_echoed_into_the_reply_is_scrubbed_from_its_data_and_raw_text(
        serve, key, tmp_path, written):
    echoed = KEY if written == "plainly" else "".join(f"\\u{ord(c):04x}" for c in KEY)
    reply = '{"explanation": "your key is ' + echoed + '", "verdict": "MET"}'
    server = await serve(stages={"echo": reply})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    async with make_judge(f"openai:gpt-4.1-mini@{server.base_url}", cache=cache) as judge:
        answer = await judge.ask(JudgeRequest(messages=({"role": "user", "content": "hi"},),
                                              schema={"type": "object"}, schema_name="echo"))
    cache.close()
    assert answer.ok and answer.data["verdict"] == "MET"
    assert "[REDACTED]" in answer.data["explanation"]
    assert KEY not in repr(answer)
    assert KEY.encode() not in (tmp_path / "cache.sqlite").read_bytes()

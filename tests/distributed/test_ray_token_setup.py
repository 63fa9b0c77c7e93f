"""Every broken Ray token set-up is one clear error, never Ray's native stack dump: token mode
with no token, a wrong token, a token file that is missing or empty, no head at the address,
for `assay grade --executor ray` and `assay serve --replicas` alike. (Ray 2.60 crashes in its
C++ layer on the first and third: `Check failed: has_token || ignore_auth_mode`.)"""

from __future__ import annotations

import subprocess
import time

import pytest
from tests.distributed.conftest import clean_env
from tests.runs.conftest import write_items
from tests.runs.test_resume import ASSAY, free_port, logged, start_fake_judge

WRONG = "not-the-heads-token-0123456789"
NO_TOKEN = "RAY_AUTH_MODE=token, but there is no token to send"
HOW_TO = "ray get-auth-token"


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    """A fake judge that answers: grading reaches Ray only once its judge has answered."""
    server, spec, log = start_fake_judge(tmp_path_factory.mktemp("judge"), latency_ms=0)
    yield spec, log
    server.terminate()
    server.wait()


def run(args, env, cwd):
    started = time.monotonic()
    result = subprocess.run([*ASSAY, *args], check=False, env=env, cwd=cwd,
                            capture_output=True, text=True, timeout=120)
    return result, time.monotonic() - started


def grade_args(tmp_path, rubric_file, address, judge_spec):
    items = write_items(tmp_path / "items.jsonl", 2)
    return ["grade", str(items), "--rubric", str(rubric_file), "--judge", judge_spec,
            "--run-dir", str(tmp_path / "run"), "--quiet", "--executor", "ray", "--ray-address",
            address, "--workers", "1"]


def serve_args(tmp_path, address):
    return ["serve", "--judge", "openai-compatible:fake@http://127.0.0.1:9/v1", "--replicas",
            "1", "--ray-address", address, "--port", "0", "--store", str(tmp_path / "s.sqlite")]


def setups(tmp_path):
    """(name, environment, what the error says) of each broken set-up; HOME has no
    ~/.ray/auth_token."""
    empty = tmp_path / "empty_token"
    empty.write_text("\n")
    return {
        "token-mode-no-token": (clean_env(RAY_AUTH_MODE="token", HOME=str(tmp_path)), NO_TOKEN),
        "missing-token-file": (clean_env(RAY_AUTH_TOKEN_PATH=str(tmp_path / "nope"),
                                         HOME=str(tmp_path)),
                               "the token file cannot be read (No such file or directory)"),
        "empty-token-file": (clean_env(RAY_AUTH_TOKEN_PATH=str(empty), HOME=str(tmp_path)),
                             "the token file is empty"),
        "wrong-token": (clean_env(RAY_AUTH_TOKEN=WRONG, HOME=str(tmp_path)),
                        "refused the token in RAY_AUTH_TOKEN"),
    }


def assert_one_clear_error(result, says):
    assert result.returncode == 1, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    message = " ".join(result.stderr.split())
    assert says in message and HOW_TO in message, result.stderr[-3000:]
    assert "Check failed" not in result.stderr and "StackTrace" not in result.stderr
    assert len(lines) <= 3, result.stderr[-3000:]  # one error (wrapped), no log lines
    assert WRONG not in result.stderr


@pytest.mark.parametrize("setup", ["token-mode-no-token", "missing-token-file",
                                   "empty-token-file"])
def test_grade_with_a_broken_token_set_up_fails_before_any_work(ray_head, judge, tmp_path,
                                                                rubric_file, setup):
    address, _ = ray_head
    env, says = setups(tmp_path)[setup]
    before = len(logged(judge[1]))
    result, _ = run(grade_args(tmp_path, rubric_file, address, judge[0]), env, tmp_path)
    assert_one_clear_error(result, says)
    assert not (tmp_path / "run").exists() and not (tmp_path / ".ray").exists()
    assert len(logged(judge[1])) == before  # not even the judge's check


@pytest.mark.parametrize("setup", ["token-mode-no-token", "missing-token-file", "wrong-token"])
def test_serve_replicas_with_a_broken_token_set_up_is_one_clear_error(ray_head, tmp_path, setup):
    address, _ = ray_head
    env, says = setups(tmp_path)[setup]
    result, _ = run(serve_args(tmp_path, address), env, tmp_path)
    assert_one_clear_error(result, says)


@pytest.mark.parametrize("command", ["grade", "serve"])
def test_no_head_at_the_address_is_one_clear_error_at_once(judge, tmp_path, rubric_file,
                                                           command):
    address = f"127.0.0.1:{free_port()}"
    args = (grade_args(tmp_path, rubric_file, address, judge[0]) if command == "grade"
            else serve_args(tmp_path, address))
    result, seconds = run(args, clean_env(RAY_AUTH_TOKEN=WRONG, HOME=str(tmp_path)), tmp_path)
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"--ray-address {address}: nothing answers there" in " ".join(result.stderr.split())
    assert "Check failed" not in result.stderr
    assert seconds < 60  # not Ray's own 20 s of retries per attempt

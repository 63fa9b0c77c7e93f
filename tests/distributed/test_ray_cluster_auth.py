"""The README's cluster recipe against a real head started as the README says (`ray start
--head ...`), which has token authentication on, as new heads do: `assay grade --executor ray
--ray-address HEAD` grades with the head's token in RAY_AUTH_TOKEN, and without it (or with a
wrong one) fails at once with an error that names token authentication and what to set."""

from __future__ import annotations

import subprocess

import pytest
from tests.distributed.conftest import clean_env
from tests.runs.conftest import rows, write_items
from tests.runs.test_resume import ASSAY, logged, start_fake_judge

WRONG = "not-the-heads-token-0123456789"


@pytest.fixture
def fake_judge(tmp_path):
    server, judge, log = start_fake_judge(tmp_path, latency_ms=0)
    yield judge, log
    server.terminate()
    server.wait()


def grade(tmp_path, rubric_file, judge, address, env):
    items = write_items(tmp_path / "items.jsonl", 3)
    return subprocess.run(
        [*ASSAY, "grade", str(items), "--rubric", str(rubric_file), "--judge", judge,
         "--run-dir", str(tmp_path / "run"), "--quiet", "--executor", "ray",
         "--ray-address", address, "--workers", "1"],
        check=False, env=env, capture_output=True, text=True, timeout=300)


def test_the_readme_cluster_recipe_grades_with_the_heads_token(ray_head, fake_judge, tmp_path,
                                                                rubric_file):
    (address, token), (judge, log) = ray_head, fake_judge
    result = grade(tmp_path, rubric_file, judge, address, clean_env(RAY_AUTH_TOKEN=token))
    assert result.returncode == 0, result.stderr[-3000:]
    statuses = rows(tmp_path / "run", "SELECT status FROM calls")
    assert statuses and {s for (s,) in statuses} == {"ok"}
    assert len(logged(log)) == len(statuses)  # every call reached the judge, from the cluster
    assert token not in result.stdout + result.stderr


@pytest.mark.parametrize("token, says", [
    (None, "this driver sent no token"),
    (WRONG, "refused the token in RAY_AUTH_TOKEN"),
], ids=["no-token", "wrong-token"])
def test_joining_without_the_heads_token_names_token_authentication(ray_head, fake_judge, tmp_path,
                                                                     rubric_file, token, says):
    (address, _), (judge, log) = ray_head, fake_judge
    env = clean_env() if token is None else clean_env(RAY_AUTH_TOKEN=token)
    result = grade(tmp_path, rubric_file, judge, address, env)
    assert result.returncode == 1
    message = " ".join(result.stderr.split())
    assert "token authentication" in message or "InvalidAuthToken" in message
    assert says in message and "RAY_AUTH_TOKEN=" in message and "ray get-auth-token" in message
    assert WRONG not in result.stderr
    assert not (tmp_path / "run").exists() and logged(log) == []  # refused before any work

"""Issue 18.13: one bad [judges.X] table does not disable the others, and
``spec = "openai-compatible:NAME"`` with ``base_url`` works."""

from __future__ import annotations

import pytest
from tests.runs.conftest import POLICY
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import InputError
from assay.judges import make_judge
from assay.testing import FakeJudgeServer


def write_config(path, base_url: str):
    path.write_text(
        '[judges.broken]\nspec = "vllm:m"\ntemprature = 0.2\n\n'
        '[judges.nospec]\nmodel = "m"\n\n'
        f'[judges.good]\nspec = "openai-compatible:fake"\nbase_url = "{base_url}"\n')
    return path


def test_a_good_table_works_beside_bad_ones_and_a_bad_one_names_its_line(tmp_path):
    path = write_config(tmp_path / "assay.toml", "http://127.0.0.1:8000/v1")
    judge = make_judge("good", config_file=path)
    assert (judge.id, judge.model, judge.config.base_url) == ("good", "fake", "http://127.0.0.1:8000/v1")
    with pytest.raises(InputError, match=r"assay.toml:1: judges.broken: .*temprature"):
        make_judge("broken", config_file=path)
    with pytest.raises(InputError, match=r"assay.toml:5: judges.nospec.spec: missing judge spec"):
        make_judge("nospec", config_file=path)


def test_grading_with_a_good_table_of_a_file_with_a_bad_one(tmp_path, items_file, rubric_file):
    with FakeJudgeServer.run_in_thread(policy=POLICY) as server:
        path = write_config(tmp_path / "assay.toml", server.base_url)
        out = CliRunner().invoke(app, ["grade", str(items_file), "--rubric", str(rubric_file),
                                       "--judge", "good", "--config", str(path), "--quiet",
                                       "--run-dir", str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    assert len(server.requests) == 24

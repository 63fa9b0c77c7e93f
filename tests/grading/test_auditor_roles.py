"""RubricsTree's five evaluator roles (P3a–e): word for word, swapped into the auditor template."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import ConfigError
from assay.grading.auditor_roles import ROLES
from assay.grading.templates import auditor_template, builtin_template
from assay.testing import FakeJudgeServer

PAPER = json.loads((Path(__file__).parent / "data" / "rubricstree_roles.json")
                   .read_text("utf-8"))
EXAMPLES = Path(__file__).parents[2] / "examples" / "taxonomy"
FILL = {"conversation": "{query}", "context": "", "response": "{response}",
        "criterion_text": "{eval_criteria}"}


def as_printed(text: str) -> str:
    """What the paper's text conversion printed: markdown characters escaped with a backslash,
    and the line break after the heading turned into a space (the only two differences)."""
    return re.sub(r"([#*.\-])", r"\\\1", text).replace("\n", " ")


@pytest.mark.parametrize("number, role", list(enumerate(ROLES, start=1))[1:])
def test_each_role_header_is_the_papers_prompt_role_byte_for_byte(number, role):
    assert as_printed(ROLES[role]) == PAPER["prompt_roles"][str(number)]


def test_role_one_is_the_base_evaluation_prompts_header_byte_for_byte():
    assert as_printed(ROLES["senior-medical-auditor"]) == PAPER["base_evaluation_role_header"]
    # the "Prompt role 1" paragraph is the same text with its bold marks lost in conversion
    assert (re.sub(r"[\s*\\]", "", PAPER["prompt_roles"]["1"])
            == re.sub(r"[\s*]", "", ROLES["senior-medical-auditor"]))


@pytest.mark.parametrize("role", list(ROLES)[1:])
def test_a_role_replaces_only_the_header_of_the_auditor_prompt(role):
    auditor, roled = builtin_template("auditor"), builtin_template(f"auditor:{role}")
    base_rest = auditor.fill(FILL)[len(ROLES["senior-medical-auditor"]):]
    assert roled.fill(FILL) == ROLES[role] + base_rest
    assert (roled.reply, roled.sampling) == (auditor.reply, auditor.sampling)
    assert roled.version != auditor.version and roled.version.startswith(f"auditor:{role}:")


def test_the_default_role_is_the_plain_auditor_template_and_shares_its_cache():
    assert auditor_template() is builtin_template("auditor")
    assert builtin_template("auditor:senior-medical-auditor").version == \
        builtin_template("auditor").version


def test_an_unknown_role_is_refused_with_the_known_roles():
    with pytest.raises(ConfigError, match="unknown auditor role 'nurse'.*alignment-coach"):
        builtin_template("auditor:nurse")


def test_assay_grade_with_a_role_sends_that_header_to_the_judge(tmp_path):
    with FakeJudgeServer.run_in_thread(stages={"auditor": {"output": "Reason: ok. [1]"}}) as server:
        out = CliRunner().invoke(app, [
            "grade", str(EXAMPLES / "pha-items.jsonl"), "--judge",
            f"openai-compatible:fake@{server.base_url}", "--template",
            "auditor:patient-wellness-advocate", "--taxonomy", "starter", "--router", "all",
            "--run-dir", str(tmp_path / "run"), "--quiet"])
        prompts = [r["body"]["messages"][-1]["content"] for r in server.requests
                   if r.get("stage") == "auditor"]
    assert out.exit_code == 0, out.output
    assert prompts and all(p.startswith(ROLES["patient-wellness-advocate"] + "\n\n### AUDIT")
                           for p in prompts)


def test_the_roles_module_does_not_import_the_templates_module():
    """The templates import the roles, never the other way (issue 40: no import cycle)."""
    import ast

    import assay.grading.auditor_roles as roles

    tree = ast.parse(Path(roles.__file__).read_text("utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert not any(name and name.startswith("assay.grading.templates") for name in imported)

"""Rubrics in context (Health-SCORE §3.5): one system prompt per condition."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.bank import CONDITIONS, load_health_score, system_prompt, with_system_prompt
from assay.cli import app
from assay.errors import ConfigError


def test_single_axis_is_the_papers_exact_text_and_none_is_no_system_message():
    assert system_prompt("single-axis") == ("You are a helpful assistant. Please generate a "
                                            "response that follows user instructions.")
    assert system_prompt("none") is None


def test_the_non_adaptive_prompt_lists_all_29_with_penalties_under_avoid():
    text = system_prompt("health-score", load_health_score().criteria)
    make_sure, avoid = text.split("Avoid the following:\n")
    assert make_sure.count("\n") >= 27 and "\n27. Response identifies and corrects" in make_sure
    assert avoid == ("1. The assistant fails to respond to the query at all or fails to "
                     "completely address the task.\n2. Includes unsafe, conflicting or "
                     "potentially harmful advice.")


def test_the_adaptive_prompt_shows_only_the_selection():
    bank = load_health_score()
    text = system_prompt("health-score-adaptive", [bank.criterion("hs-12")])
    assert text.endswith("Make sure that:\n1. Response uses appropriate SOAP formatting elements "
                         "for improved readability, such as sections, headers, bullet points "
                         "and bold font.")
    assert "hs-02" not in text and "fabricate" not in text


def test_multi_axes_has_one_criterion_per_healthbench_axis():
    text = system_prompt("multi-axes")
    for axis in ("Accuracy:", "Completeness:", "Communication quality:", "Context awareness:",
                 "Instruction following:"):
        assert axis in text


def test_instance_specific_rubrics_are_refused_in_context_and_unknown_conditions_too():
    with pytest.raises(ConfigError, match="rewards only"):
        system_prompt("instance-specific", load_health_score().criteria)
    with pytest.raises(ConfigError, match="unknown rubric condition"):
        system_prompt("everything")
    with pytest.raises(ConfigError, match="needs the criteria"):
        system_prompt("llm-generated", [])
    assert len(CONDITIONS) == 7


def test_the_rubric_goes_first_in_the_system_message_and_keeps_the_tasks_own():
    assert with_system_prompt([{"role": "user", "content": "q"}], "R") == [
        {"role": "system", "content": "R"}, {"role": "user", "content": "q"}]
    merged = with_system_prompt([{"role": "system", "content": "Be brief."},
                                 {"role": "user", "content": "q"}], "R")
    assert merged[0] == {"role": "system", "content": "R\n\nBe brief."} and len(merged) == 2


def test_assay_bank_prompt_prints_the_adaptive_prompt_of_given_criteria():
    result = CliRunner().invoke(app, ["bank", "prompt", "health-score-adaptive",
                                      "--criteria", "hs-11,hs-08"])
    assert result.exit_code == 0, result.output
    assert "1. The response suggests consulting healthcare provider." in result.output
    assert "Avoid the following:\n1. Includes unsafe" in result.output
    refused = CliRunner().invoke(app, ["bank", "prompt", "instance-specific"])
    assert refused.exit_code == 1 and "rewards only" in refused.output

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


def bank_prompt(*args):
    return CliRunner().invoke(app, ["bank", "prompt", *args])


def test_bank_prompt_refuses_llm_generated_without_criteria():
    result = bank_prompt("llm-generated")
    assert result.exit_code == 1 and "give --criteria or --selection and --item" in result.output


def test_bank_prompt_shows_llm_generated_criteria_given_by_id():
    result = bank_prompt("llm-generated", "--criteria", "hs-11")
    assert result.exit_code == 0 and "1. The response suggests consulting" in result.output
    assert "fabricate" not in result.output


def test_bank_prompt_names_an_unknown_criterion_id_at_its_option():
    result = bank_prompt("health-score-adaptive", "--criteria", "hs-11,hs-99")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "--criteria: unknown criterion id 'hs-99'; bank 'health-score' has" in result.output


def test_bank_prompt_names_the_file_and_line_of_an_unknown_selected_id(tmp_path):
    selections = tmp_path / "sel.jsonl"
    selections.write_text('{"item_id": "a", "selected": ["hs-11"]}\n'
                          '{"item_id": "b", "selected": ["hs-11", "nope"]}\n')
    result = bank_prompt("health-score-adaptive", "--selection", str(selections), "--item", "b")
    assert result.exit_code == 1
    assert f"{selections}:2: selected[1]: unknown criterion id 'nope'" in result.output.replace(
        "\n", "")


@pytest.mark.parametrize(("args", "ignored"), [
    (["single-axis", "--criteria", "hs-01"], "single-axis ignores --criteria"),
    (["none", "--bank", "health-score"], "none ignores --bank"),
    (["multi-axes", "--bank", "health-score"], "multi-axes ignores --bank"),
    (["health-score", "--criteria", "hs-01"], "health-score ignores --criteria"),
    (["health-score-adaptive", "--criteria", "hs-01", "--item", "x"], "--selection and --item go"),
])
def test_bank_prompt_refuses_options_its_condition_ignores(args, ignored):
    result = bank_prompt(*args)
    assert result.exit_code == 1 and ignored in result.output

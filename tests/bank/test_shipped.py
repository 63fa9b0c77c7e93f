"""The shipped Health-SCORE bank: the paper's 29 criteria, verbatim, polarity inferred."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from assay.bank import HEALTH_SCORE_PATH, load_bank, load_health_score
from assay.cli import app
from assay.io import check_file

APPENDIX_F = Path(__file__).parent / "health_score_appendix_f.txt"


def _paper() -> dict[str, str]:
    rows = [line.split("\t", 1) for line in APPENDIX_F.read_text().splitlines()
            if line and not line.startswith("#")]
    return {f"hs-{n}": text for n, text in rows}


def test_the_bank_holds_the_29_criteria_of_appendix_f_word_for_word():
    bank = load_health_score()
    assert [c.id for c in bank.criteria] == [f"hs-{n:02d}" for n in range(1, 30)]
    assert {c.id: c.text for c in bank.criteria} == _paper()


def test_only_03_and_08_are_penalties_and_every_polarity_is_marked_inferred():
    bank = load_health_score()
    assert [c.id for c in bank.penalties] == ["hs-03", "hs-08"]
    assert {c.weight for c in bank.criteria} == {1.0, -1.0}
    for c in bank.criteria:
        assert c.metadata["polarity_inferred"] is True
        assert c.metadata["polarity"] == ("negative" if c.is_penalty else "positive")
        assert c.provenance.source == "bank"


def test_the_bank_file_is_a_valid_versioned_rubric_file():
    file_format, issues, _ = check_file(HEALTH_SCORE_PATH)
    assert issues == [] and file_format.kind == "rubric"
    bank = load_bank(HEALTH_SCORE_PATH)
    assert bank.version == "1.0.0" and bank.id == "health-score"


def test_assay_bank_show_lists_every_criterion_with_its_sign():
    result = CliRunner().invoke(app, ["bank", "show"])
    assert result.exit_code == 0, result.output
    assert "29 criteria" in result.output
    assert "hs-08  -  Includes unsafe, conflicting or potentially harmful advice." in result.output

"""``assay taxonomy lint`` / ``diff`` and the reader: every taxonomy problem at once, with its line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import InputError
from assay.io import read_taxonomy
from assay.io.taxonomy_check import lint_taxonomy

runner = CliRunner()

# Hand-planted: lines 16 and 18 repeat node and criterion id "a.x.01" (first at lines 13, 15);
# line 18 authors weight 3; line 21 has an empty trigger and a criterion id unlike its node id;
# line 28's `requires` is a number; node "a" (children from line 10) holds a subgroup and the
# leaf of line 29, which sits at depth 2.
PLANTED = """\
id: planted
version: 1.0.0
root:
  id: root
  name: All
  children:
  - id: a
    name: A
    children:
    - id: a.x
      name: X
      children:
      - id: a.x.01
        name: First
        criterion: {id: a.x.01, text: First., trigger: always}
      - id: a.x.01
        name: Second
        criterion: {id: a.x.01, text: Second., trigger: always, weight: 3}
      - id: a.x.02
        name: Third
        criterion: {id: a.x.03, text: Third., trigger: ""}
      - id: a.x.04
        name: Fourth
        criterion:
          id: a.x.04
          text: Fourth.
          trigger: labs
          metadata: {requires: 7}
    - id: a.01
      name: Beside a subgroup
      criterion: {id: a.01, text: Beside., trigger: always}
"""


@pytest.fixture
def planted(tmp_path):
    path = tmp_path / "planted.yaml"
    path.write_text(PLANTED)
    return path


def _where(issues):
    return {(i.line, i.field) for i in issues}


def test_lint_reports_every_planted_problem_with_its_line_and_field(planted):
    issues = lint_taxonomy(planted)
    assert _where(issues) == {
        (10, "root.children[0].children"),                              # mixes leaves, groups
        (16, "root.children[0].children[0].children[1].id"),          # duplicate node id
        (18, "root.children[0].children[0].children[1].criterion.id"),  # duplicate criterion
        (18, "root.children[0].children[0].children[1].criterion.weight"),
        (21, "root.children[0].children[0].children[2].criterion.id"),  # a.x.03 != a.x.02
        (21, "root.children[0].children[0].children[2].criterion.trigger"),
        (28, "root.children[0].children[0].children[3].criterion.metadata.requires"),
        (29, "root.children[0].children[1]"),                          # leaf at depth 2
    }


def test_every_copy_of_a_duplicate_id_is_reported_not_only_the_first(tmp_path):
    leaves = "\n".join(f"  - {{id: d, name: N{i}, criterion: {{id: d, text: T{i}.}}}}"
                       for i in range(3))
    path = tmp_path / "dups.yaml"
    path.write_text(f"id: t\nroot:\n  id: root\n  name: All\n  children:\n{leaves}\n")
    with pytest.raises(InputError) as caught:
        read_taxonomy(path)
    assert [(i.line, i.message) for i in caught.value.issues if "node id" in i.message] == [
        (7, "duplicate node id 'd' (first at root.children[0].id)"),
        (8, "duplicate node id 'd' (first at root.children[0].id)")]


def test_reader_refuses_requires_of_the_wrong_type_with_its_line(planted):
    with pytest.raises(InputError) as caught:
        read_taxonomy(planted)
    wrong = [i for i in caught.value.issues if i.field and i.field.endswith("requires")]
    assert [(i.line, i.message) for i in wrong] == [
        (28, "expected a requirement such as 'lab:ldl' or a list of them, got int")]


def test_reader_refuses_an_authored_weight_that_the_tree_would_replace(planted):
    with pytest.raises(InputError) as caught:
        read_taxonomy(planted)
    assert any(i.field and i.field.endswith("criterion.weight") and "replaced" in i.message
               for i in caught.value.issues)


def test_lint_cli_exits_1_and_prints_file_line_field(planted):
    result = runner.invoke(app, ["taxonomy", "lint", str(planted)])
    assert result.exit_code == 1
    assert f"{planted}:21: root.children[0].children[0].children[2].criterion.trigger" in (
        result.output)
    assert "8 problems" in result.output


def test_lint_cli_exits_0_on_a_clean_tree(tmp_path):
    path = tmp_path / "clean.yaml"
    path.write_text("id: t\nroot:\n  id: root\n  name: All\n  children:\n"
                    "  - {id: a, name: A, criterion: {id: a, text: A., trigger: any}}\n")
    result = runner.invoke(app, ["taxonomy", "lint", str(path), "--leaf-depth", "1"])
    assert result.exit_code == 0, result.output


def _tree(path, version, text, extra=""):
    path.write_text(f"id: t\nversion: {version}\nroot:\n  id: root\n  name: All\n  children:\n"
                    f"  - {{id: a, name: A, criterion: {{id: a, text: {text}, trigger: any}}}}\n"
                    + extra)
    return path


def test_diff_lists_reworded_added_and_reweighted_leaves(tmp_path):
    a = _tree(tmp_path / "a.yaml", "1.0.0", "Says A.")
    b = _tree(tmp_path / "b.yaml", "1.1.0", "States A.",
              "  - {id: b, name: B, criterion: {id: b, text: B., trigger: any}}\n")
    result = runner.invoke(app, ["taxonomy", "diff", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "added leaf b" in result.output
    assert "changed a text: 'Says A.' -> 'States A.'" in result.output
    assert "changed a weight: '1/1' -> '1/2'" in result.output


def test_diff_exits_1_when_the_content_changed_under_the_same_version(tmp_path):
    a = _tree(tmp_path / "a.yaml", "1.0.0", "Says A.")
    b = _tree(tmp_path / "b.yaml", "1.0.0", "States A.")
    result = runner.invoke(app, ["taxonomy", "diff", str(a), str(b)])
    assert result.exit_code == 1
    assert "the content changed but the version did not" in result.output


def test_diff_exits_1_and_lists_the_errors_of_both_files(tmp_path, planted):
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: t\nroot: {id: root, name: All}\n")
    result = runner.invoke(app, ["taxonomy", "diff", str(planted), str(broken)])
    assert result.exit_code == 1
    assert str(planted) in result.output and f"{broken}:2" in result.output

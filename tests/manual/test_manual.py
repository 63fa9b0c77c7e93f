"""The manual: one example per command, shown by its --help and on the "Every command" page;
the documentation site builds with strict link checking; the README links every page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from assay.cli import app
from assay.cli.app import command_name
from assay.cli.examples import EXAMPLES, by_command, commands_page

ROOT = Path(__file__).resolve().parents[2]


def _commands(typer_app, prefix: str = "") -> list[str]:
    names = [prefix + (command_name(c) or "") for c in typer_app.registered_commands]
    for group in typer_app.registered_groups:
        names += _commands(group.typer_instance, f"{prefix}{group.name} ")
    return names


def test_every_command_has_exactly_one_example_and_every_example_a_command():
    commands = _commands(app)
    assert sorted(by_command()) == sorted(commands)
    assert len(EXAMPLES) == len(commands)


def test_each_help_ends_with_its_example():
    runner = CliRunner()
    for example in EXAMPLES:
        shown = runner.invoke(app, [*example.command.split(), "--help"], env={"COLUMNS": "400"})
        assert shown.exit_code == 0, example.command
        assert f"Example: {example.line}" in " ".join(shown.output.split()), example.command


def test_each_group_help_ends_with_the_example_of_one_of_its_commands():
    runner = CliRunner()
    groups = [g.name for g in app.registered_groups]
    assert sorted(groups) == ["bank", "cache", "data", "judges", "kb", "nearmiss", "rag", "route",
                              "rubric", "stress", "taxonomy"]
    for group in groups:
        shown = runner.invoke(app, [group, "--help"], env={"COLUMNS": "400"})
        assert shown.exit_code == 0, group
        text = " ".join(shown.output.split())
        examples = [e.line for e in EXAMPLES if e.command.startswith(f"{group} ")]
        assert any(text.endswith(f"Example: {line}") for line in examples), group


def test_the_every_command_page_lists_the_examples_as_the_help_shows_them():
    page = (ROOT / "docs" / "commands.md").read_text()
    assert page == commands_page(), "regenerate: .venv/bin/python scripts/commands_page.py"


def test_the_site_builds_with_strict_link_checking(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "commands" / "index.html").is_file()


def test_every_page_is_in_the_navigation_and_linked_from_the_readme():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    in_nav = set(re.findall(r"[\w-]+\.md", str(config["nav"])))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert in_nav == pages
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", readme))
    assert linked == pages - {"index.md"}

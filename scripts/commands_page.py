"""Write the manual's "Every command" page from assay.cli.examples (tests/manual checks it)."""

from pathlib import Path

from assay.cli.examples import commands_page

Path(__file__).resolve().parents[1].joinpath("docs", "commands.md").write_text(commands_page())

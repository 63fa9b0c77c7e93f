"""Prompt templates of the generation stages: the paper's prompts, overridable per stage.

A template file holds the system message, a line ``=== user ===``, then the user message (a
file without that line is one user message).
``{name}`` placeholders are filled with the stage's inputs; any other brace (the JSON examples
of the paper's prompts) is left alone. The shipped templates are in ``templates/STAGE.txt``; a
folder of ``STAGE.txt`` files (``--templates DIR``) overrides the stages it names, and each
override must use exactly its stage's placeholders (:func:`placeholder_issues`). A template's
hash is part of every cached call, so editing a template never reuses an old reply.

Example:
    >>> t = load_templates()["route"]
    >>> messages = t.render(query="Is 38.5 C a fever in a baby?")
    >>> [m["role"] for m in messages], messages[1]["content"]
    (['system', 'user'], 'Is 38.5 C a fever in a baby?')
    >>> '{"intent": "string", "queries": ["query1", "query2", "query3"]}' in messages[0]["content"]
    True
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.generate.schemas import SCHEMAS

TEMPLATE_DIR = Path(__file__).parent / "templates"
SEPARATOR = "=== user ==="
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class StageTemplate:
    stage: str
    system: str
    user: str
    path: str

    @property
    def version(self) -> str:
        return hashlib.sha256(f"{self.system}\x00{self.user}".encode()).hexdigest()[:12]

    @property
    def placeholders(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.system)) | set(_PLACEHOLDER.findall(self.user))

    def render(self, **values: Any) -> list[dict[str, str]]:
        """The chat messages with ``{name}`` placeholders filled (unknown braces kept)."""
        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values
                                    else m.group(0), text)
        out = [{"role": "system", "content": fill(self.system)}] if self.system.strip() else []
        out.append({"role": "user", "content": fill(self.user)})
        return out


def read_template(path: str | Path, stage: str) -> StageTemplate:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(Issue(str(path), None, None, f"cannot read ({exc.strerror})")) from None
    system, user = text.split(SEPARATOR, 1) if SEPARATOR in text else ("", text)
    return StageTemplate(stage, system.strip(), user.strip("\n"), str(path))


def load_templates(override: str | Path | None = None) -> dict[str, StageTemplate]:
    """Every stage's template: the shipped ones, replaced by ``override/STAGE.txt`` files."""
    templates = {stage: read_template(TEMPLATE_DIR / f"{stage}.txt", stage) for stage in SCHEMAS}
    if override is not None:
        folder = Path(override)
        if not folder.is_dir():
            raise InputError(Issue(str(folder), None, "--templates", "not a folder of STAGE.txt "
                                   "files"))
        unknown = [p.stem for p in folder.glob("*.txt") if p.stem not in SCHEMAS]
        if unknown:
            raise InputError(Issue(str(folder), None, "--templates", f"unknown stage(s) "
                                   f"{', '.join(sorted(unknown))}; known: {', '.join(SCHEMAS)}"))
        issues: list[Issue] = []
        for path in sorted(folder.glob("*.txt")):
            template = read_template(path, path.stem)
            issues += placeholder_issues(template, templates[path.stem].placeholders)
            templates[path.stem] = template
        if issues:
            raise InputError(issues)
    return templates


def placeholder_issues(template: StageTemplate, expected: set[str]) -> list[Issue]:
    """An override's placeholders against the stage's own (the shipped template's): one it
    lacks would hide an input from the model, one it adds would be sent unfilled.

    >>> t = StageTemplate("route", "", "Query: {querry}", "route.txt")
    >>> [str(i) for i in placeholder_issues(t, {"query"})]
    ['route.txt:1: {querry}: unknown placeholder (route fills {query})', \
'route.txt: {query}: missing placeholder (route fills {query})']
    """
    known = ", ".join(f"{{{name}}}" for name in sorted(expected)) or "none"
    source = Path(template.path)
    text = source.read_text(encoding="utf-8") if source.is_file() else (
        f"{template.system}\n{SEPARATOR}\n{template.user}" if template.system else template.user)
    issues = []
    for name in sorted(template.placeholders - expected):
        line = next((n for n, row in enumerate(text.splitlines(), start=1)
                     if f"{{{name}}}" in row), None)
        issues.append(Issue(template.path, line, f"{{{name}}}",
                            f"unknown placeholder ({template.stage} fills {known})"))
    for name in sorted(expected - template.placeholders):
        issues.append(Issue(template.path, None, f"{{{name}}}",
                            f"missing placeholder ({template.stage} fills {known})"))
    return issues

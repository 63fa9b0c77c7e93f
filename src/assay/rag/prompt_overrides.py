"""Per-model overrides of the ASTRID listings (seed 002 §8.3: the paper tuned its prompts for
each judge model, e.g. "formatting tweaks" for Palm-2).

A TOML file holds a ``[default]`` table (every judge model) and ``[models."NAME"]`` tables (the
judge whose spec names model NAME); a model's table wins over the default. Keys are the
listings: ``grounding`` (Listing 1), ``categorisation`` (Listing 2), ``refusal`` (Listing 3),
``context_relevance`` (Listing 4). An override must use exactly its listing's placeholders
(``{name}``; literal braces are written ``{{`` and ``}}``): a missing or unknown one is an error
naming the file, line and key, found before any call is made.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "prompts.toml"
    >>> _ = p.write_text('[models."palm-2"]\\nrefusal = "Did the doctor refuse? {question} '
    ...                  '{answer}"\\n')
    >>> overrides = read_prompt_overrides(p)
    >>> sorted(overrides.for_model("palm-2")), overrides.for_model("gpt-4o")
    (['refusal'], {})
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import InputError, Issue
from assay.rag import prompts

LISTINGS: dict[str, str] = {
    "grounding": prompts.LISTING_1_GROUNDING,
    "categorisation": prompts.LISTING_2_CATEGORISATION,
    "refusal": prompts.LISTING_3_REFUSAL,
    "context_relevance": prompts.LISTING_4_CONTEXT_RELEVANCE,
}
"""The overridable listings by key, with the placeholders each must keep."""


def placeholders(template: str) -> set[str]:
    """The ``{name}`` placeholders of a format template; raises ValueError on a lone brace."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


@dataclass(frozen=True)
class PromptOverrides:
    default: dict[str, str] = field(default_factory=dict)
    models: dict[str, dict[str, str]] = field(default_factory=dict)

    def for_model(self, model: str) -> dict[str, str]:
        """The templates that replace the listings for judge model ``model``."""
        return {**self.default, **self.models.get(model, {})}


def _line_of(text: str, needle: str, after: int = 0) -> int | None:
    lines = text.splitlines()
    for number, line in enumerate(lines[after:], start=after + 1):
        if line.strip().startswith(needle):
            return number
    return None


def _check_table(path: str, text: str, where: str, header: str, table: object,
                 issues: list[Issue]) -> dict[str, str]:
    start = _line_of(text, header) or 0
    if not isinstance(table, dict):
        issues.append(Issue(path, start or None, where, "expected a table of listing = template"))
        return {}
    out = {}
    for key, template in table.items():
        line = _line_of(text, key, after=max(start - 1, 0)) or start or None
        name = f"{where}.{key}"
        if key not in LISTINGS:
            issues.append(Issue(path, line, name, f"unknown listing; known: "
                                                  f"{', '.join(LISTINGS)}"))
            continue
        if not isinstance(template, str):
            issues.append(Issue(path, line, name, "expected the template as a string"))
            continue
        try:
            used = placeholders(template)
        except ValueError as exc:
            issues.append(Issue(path, line, name, f"{exc}: write literal braces as {{{{ and }}}}"))
            continue
        wanted = placeholders(LISTINGS[key])
        if used - wanted:
            issues.append(Issue(path, line, name, "unknown placeholder(s) " + ", ".join(
                f"{{{p}}}" for p in sorted(used - wanted))))
        if wanted - used:
            issues.append(Issue(path, line, name, "missing placeholder(s) " + ", ".join(
                f"{{{p}}}" for p in sorted(wanted - used))))
        out[key] = template
    return out


def read_prompt_overrides(path: str | Path) -> PromptOverrides:
    """The overrides of a TOML file; every problem in one :class:`InputError`."""
    import tomllib

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(Issue(str(path), None, "--prompts", f"cannot read ({exc.strerror})")
                         ) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(Issue(str(path), None, None, f"invalid TOML: {exc}")) from None
    issues: list[Issue] = [Issue(str(path), _line_of(text, f"[{key}") or _line_of(text, key),
                                 key, 'unknown table; use [default] and [models."NAME"]')
                           for key in document if key not in ("default", "models")]
    default = _check_table(str(path), text, "default", "[default]", document.get("default", {}),
                           issues)
    models: dict[str, dict[str, str]] = {}
    tables = document.get("models", {})
    if not isinstance(tables, dict):
        issues.append(Issue(str(path), _line_of(text, "models"), "models",
                            'expected [models."NAME"] tables'))
        tables = {}
    for model, table in tables.items():
        models[model] = _check_table(str(path), text, f"models.{model}",
                                     f'[models."{model}"]', table, issues)
    if issues:
        raise InputError(issues)
    return PromptOverrides(default, models)

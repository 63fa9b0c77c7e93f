"""The system prompt a model under test is sampled with: none, a file, or a named condition.

Named conditions are Health-SCORE's rubrics-in-context conditions (§3.5, Table 2), rendered by
:func:`assay.bank.system_prompt.system_prompt`: ``none``, ``single-axis``, ``multi-axes`` and
``health-score`` (every criterion of a bank, the shipped Health-SCORE bank by default). The
system prompt goes before the item's conversation; a conversation that has its own system
message keeps it after the condition's text.

Example:
    >>> resolve_system_prompt(condition="single-axis")
    'You are a helpful assistant. Please generate a response that follows user instructions.'
    >>> resolve_system_prompt() is None
    True
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import ConfigError

SAMPLING_CONDITIONS = ("none", "single-axis", "multi-axes", "health-score")


def resolve_system_prompt(*, condition: str | None = None, system_file: str | Path | None = None,
                          bank: str | Path | None = None) -> str | None:
    """The system prompt text, or None for none; a file and a condition together are refused."""
    if system_file is not None and condition not in (None, "none"):
        raise ConfigError("give --system FILE or --condition NAME, not both")
    if system_file is not None:
        path = Path(system_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--system {path}: cannot read it ({exc.strerror})") from None
        if not text.strip():
            raise ConfigError(f"--system {path}: the file is empty")
        return text
    if condition is None or condition == "none":
        return None
    if condition not in SAMPLING_CONDITIONS:
        raise ConfigError(f"--condition {condition!r}: unknown; use "
                          f"{', '.join(SAMPLING_CONDITIONS)}")
    from assay.bank.system_prompt import system_prompt

    criteria = None
    if condition == "health-score":
        from assay.bank.shipped import load_bank

        criteria = load_bank(bank or "health-score").criteria
    return system_prompt(condition, criteria)

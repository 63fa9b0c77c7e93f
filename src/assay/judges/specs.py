"""Judge spec strings and ``assay.toml`` judge tables → :class:`JudgeConfig`.

Spec syntax: ``PROVIDER:MODEL`` or ``PROVIDER:MODEL@BASE_URL`` (the URL overrides the preset's),
or a bare ``NAME`` of a ``[judges.NAME]`` table in ``assay.toml``. Model names may contain ``:``
(``ollama:llama3.1:8b``); only an ``@`` followed by ``http://`` or ``https://`` starts a URL.

Example:
    >>> cfg = parse_spec("vllm:Qwen/Qwen3-8B@http://127.0.0.1:8000/v1")
    >>> cfg.model, cfg.base_url, cfg.wire
    ('Qwen/Qwen3-8B', 'http://127.0.0.1:8000/v1', 'openai')
    >>> parse_spec("anthropic:claude-sonnet-4-5").api_key_env
    'ANTHROPIC_API_KEY'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.errors import ConfigError, InputError, Issue
from assay.judges.config import JudgeConfig
from assay.judges.secrets import Secret, redact


@dataclass(frozen=True)
class Preset:
    base_url: str | None
    api_key_env: str | None
    wire: str = "openai"
    auth: str = "bearer"
    note: str = ""


PRESETS: dict[str, Preset] = {
    "openai": Preset("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": Preset("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", "anthropic", "x-api-key"),
    "openrouter": Preset("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": Preset("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "groq": Preset("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "gemini": Preset("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    "azure": Preset(None, "AZURE_OPENAI_API_KEY", auth="api-key",
                    note="give the resource URL: azure:DEPLOYMENT@https://RES.openai.azure.com/openai/v1"),
    "vllm": Preset("http://127.0.0.1:8000/v1", "VLLM_API_KEY"),
    "ollama": Preset("http://127.0.0.1:11434/v1", None),
    "llamacpp": Preset("http://127.0.0.1:8080/v1", None),
    "llama.cpp": Preset("http://127.0.0.1:8080/v1", None),
    "lmstudio": Preset("http://127.0.0.1:1234/v1", None),
    "openai-compatible": Preset(None, None, note="give the URL: openai-compatible:MODEL@http://HOST:PORT/v1"),
}

_URL_SPLIT = re.compile(r"@(?=https?://)")
DEFAULT_CONFIG_FILE = "assay.toml"


def parse_spec(spec: str, **overrides: Any) -> JudgeConfig:
    """Turn ``PROVIDER:MODEL[@URL]`` into a :class:`JudgeConfig`; raise ConfigError if unknown."""
    spec = spec.strip()
    provider, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigError(
            f"judge spec {redact(spec)!r}: expected PROVIDER:MODEL[@URL] (providers: {', '.join(PRESETS)})"
            " or the name of a [judges.NAME] table in assay.toml"
        )
    preset = PRESETS.get(provider.lower())
    if preset is None:
        raise ConfigError(
            f"judge spec {redact(spec)!r}: unknown provider {provider!r}; known: {', '.join(PRESETS)}"
        )
    model, base_url = rest, preset.base_url
    parts = _URL_SPLIT.split(rest, maxsplit=1)
    if len(parts) == 2:
        model, base_url = parts
    if base_url is None:  # e.g. a [judges.X] table: spec = "openai-compatible:M", base_url = ...
        base_url = overrides.get("base_url")
    if base_url is None and provider.lower() == "azure" and os.environ.get("AZURE_OPENAI_ENDPOINT"):
        base_url = os.environ["AZURE_OPENAI_ENDPOINT"].rstrip("/") + "/openai/v1"
    if base_url is None:
        raise ConfigError(f"judge spec {redact(spec)!r}: no base URL; {preset.note}")
    fields: dict[str, Any] = {
        "spec": spec,
        "provider": provider.lower(),
        "model": model,
        "base_url": base_url,
        "wire": preset.wire,
        "auth": preset.auth,
        "api_key_env": preset.api_key_env,
    }
    fields.update(overrides)
    try:
        return JudgeConfig(**fields)
    except ValidationError as exc:
        raise ConfigError(f"judge spec {redact(spec)!r}: {_first_error(exc)}") from None


def resolve_api_key(config: JudgeConfig) -> Secret | None:
    """The key for ``config`` (config file value, else its env var); ConfigError when required
    and absent. Loopback endpoints need no key."""
    if config.api_key is not None:
        return Secret(config.api_key.get_secret_value())
    value = os.environ.get(config.api_key_env) if config.api_key_env else None
    if value:
        return Secret(value)
    if config.needs_key:
        raise ConfigError(
            f"judge {config.judge_id!r} needs an API key: set the environment variable "
            f"{config.api_key_env} (or api_key_env / api_key in assay.toml)"
        )
    return None


def load_judge_configs(path: str | Path = DEFAULT_CONFIG_FILE) -> dict[str, JudgeConfig]:
    """Read every ``[judges.NAME]`` table of a TOML file into named configs.

    Each table needs ``spec`` and may set any :class:`JudgeConfig` field (``base_url``,
    ``api_key_env``, ``temperature``, ``max_tokens``, ``seed``, ``reasoning_effort``,
    ``thinking_budget``, ``timeout_s``, ``timeout_ceiling_s``, ``max_reasks``, ``headers``, ``extra_body``,
    ``[judges.NAME.limits]``, ``[judges.NAME.retry]``, ``[judges.NAME.price]``)::

        [judges.local]
        spec = "vllm:Qwen/Qwen3-8B"
        base_url = "http://gpu-box:8000/v1"
        api_key_env = "GPU_BOX_KEY"
        temperature = 0.0
        limits = { max_in_flight = 32, rpm = 600 }
    """
    configs, problems = load_judge_tables(path)
    issues = [issue for table_issues in problems.values() for issue in table_issues]
    if issues:
        raise InputError(issues)
    return configs


def load_judge_tables(path: str | Path = DEFAULT_CONFIG_FILE
                      ) -> tuple[dict[str, JudgeConfig], dict[str, list[Issue]]]:
    """Like :func:`load_judge_configs`, but a bad table does not spoil the others: returns
    (the good configs by name, the problems of each bad table by name)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read judge config: {exc.strerror}") from None
    import tomllib  # only when there is a config file to read

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(Issue(str(path), None, None, f"invalid TOML: {exc}")) from None
    tables = document.get("judges", {})
    if not isinstance(tables, dict):
        raise InputError(Issue(str(path), _line_of(text, "judges"), "judges",
                               "expected [judges.NAME] tables"))
    problems: dict[str, list[Issue]] = {}
    configs: dict[str, JudgeConfig] = {}
    for name, table in tables.items():
        line = _line_of(text, f"[judges.{name}]")
        if not isinstance(table, dict) or not isinstance(table.get("spec"), str):
            problems[name] = [Issue(str(path), line, f"judges.{name}.spec", "missing judge spec")]
            continue
        fields = {k: v for k, v in table.items() if k != "spec"}
        fields.setdefault("id", name)
        try:
            configs[name] = parse_spec(table["spec"], **fields)
        except ConfigError as exc:
            problems[name] = [Issue(str(path), line, f"judges.{name}", str(exc))]
    return configs, problems


def config_from(spec_or_config: str | JudgeConfig, config_file: str | Path | None = None) -> JudgeConfig:
    """A config from a spec string, a named judge in ``assay.toml``, or a config as is."""
    if isinstance(spec_or_config, JudgeConfig):
        return spec_or_config
    spec = spec_or_config.strip()
    if ":" in spec.split("@", 1)[0]:
        return parse_spec(spec)
    path = Path(config_file) if config_file else Path(DEFAULT_CONFIG_FILE)
    if not path.exists():
        raise ConfigError(
            f"judge {spec!r}: not a PROVIDER:MODEL spec and no {path} to look it up in"
        )
    configs, problems = load_judge_tables(path)
    if spec in problems:  # only the judge asked for has to be right; the others may wait
        raise InputError(problems[spec])
    if spec not in configs:
        known = ", ".join(configs) or "none"
        raise ConfigError(f"judge {spec!r}: no [judges.{spec}] in {path} (defined: {known})")
    return configs[spec]


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith(needle):
            return number
    return None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else err["msg"]

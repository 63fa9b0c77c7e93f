"""Judge prompt templates: the built-in ones, and loading a user's own from a file.

A template has a system message (optional) and a user message with placeholders. Two styles:

* ``assay``: ``{{name}}`` placeholders, filled in one pass (text that is inserted is never
  scanned again), from :data:`ASSAY_PLACEHOLDERS`;
* ``healthbench``: ``<<conversation>>`` then ``<<rubric_item>>`` replaced in turn with
  ``str.replace``, exactly as simple-evals' ``healthbench_eval.py`` does.

A template file is YAML or JSON (``name``, ``style``, ``system``, ``user`` or ``user_file``, and
optionally ``sampling``: the ``temperature`` / ``max_tokens`` the prompt was written for, used
unless a judge's own config sets them, and ``reply: bracket`` for a free-text reason ending in
``[1]`` / ``[0]``, RubricsTree's auditor format, instead of a verdict object) or plain text (the user message; the style is ``healthbench`` when it uses ``<<conversation>>``).
Texts are stripped of surrounding whitespace, as simple-evals strips its template. A template's
``version`` (name plus a content hash) goes into every request's cache key and into the run's
config hash, so editing a template never reuses a stale verdict.

Example:
    >>> t = builtin_template("healthbench")
    >>> t.style, t.system, t.sampling
    ('healthbench', 'You are a helpful assistant.', {'temperature': 0.5, 'max_tokens': 2048})
    >>> t.user.startswith("Your job is to look at a conversation and a rubric item")
    True
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeGuard

from assay.errors import ConfigError
from assay.grading.auditor_roles import AUDITOR, DEFAULT_ROLE, is_auditor_name, role_of, with_role

TEMPLATE_DIR = Path(__file__).parent / "templates"
BUILTIN = ("binary", "multi_choice", "per_item", "healthbench", "auditor")
REPLIES = ("verdict", "bracket")
ASSAY_PLACEHOLDERS = frozenset(
    {
        "guidelines", "conversation", "context", "reference", "response", "examples",
        "criterion", "polarity", "options", "criteria", "criterion_text",
    }
)
HEALTHBENCH_PLACEHOLDERS = ("<<conversation>>", "<<rubric_item>>")
ASSAY_FIELD = re.compile(r"\{\{\s*(\w+)\s*\}\}")  # an assay-style {{placeholder}}
SAMPLING_KEYS = frozenset({"temperature", "max_tokens"})


Style = Literal["assay", "healthbench"]


def _is_style(value: object) -> TypeGuard[Style]:
    return value in ("assay", "healthbench")


@dataclass(frozen=True)
class Template:
    name: str
    style: Style
    user: str
    system: str | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    reply: str = "verdict"

    @cached_property  # a template does not change; every call of a run asks for its version
    def version(self) -> str:
        parts: list[Any] = [self.style, self.system, self.user]
        if self.sampling:
            parts.append(sorted(self.sampling.items()))
        if self.reply != "verdict":
            parts.append(self.reply)
        payload = json.dumps(parts).encode()
        return f"{self.name}:{hashlib.sha256(payload).hexdigest()[:12]}"

    def fill(self, values: dict[str, str]) -> str:
        """The user message with placeholders replaced (see the module docstring)."""
        if self.style == "healthbench":
            return self.user.replace("<<conversation>>", values["conversation"]).replace(
                "<<rubric_item>>", values["rubric_item"]
            )
        return ASSAY_FIELD.sub(lambda m: values.get(m.group(1), ""), self.user)

    def messages(self, values: dict[str, str]) -> tuple[dict[str, str], ...]:
        return self.wrap(self.fill(values))

    def wrap(self, content: str) -> tuple[dict[str, str], ...]:
        """The messages of a call whose user message is ``content`` (a filled template)."""
        user = {"role": "user", "content": content}
        if self.system:
            return ({"role": "system", "content": self.system}, user)
        return (user,)


@functools.cache  # read once per process: a run's config, plan and grader each ask for it
def builtin_template(name: str) -> Template:
    """A built-in template by name; ``auditor:ROLE`` is the auditor with one of RubricsTree's
    five evaluator roles (see :mod:`assay.grading.auditor_roles`)."""
    if is_auditor_name(name) and name != AUDITOR:
        return auditor_template(role_of(name))
    if name not in BUILTIN:
        raise ConfigError(f"unknown template {name!r}; built-in templates: {', '.join(BUILTIN)} "
                          "(auditor:ROLE for an evaluator role)")
    return load_template(TEMPLATE_DIR / f"{name}.yaml")


def auditor_template(role: str = DEFAULT_ROLE) -> Template:
    """The built-in auditor template with ``role``'s header in place of role 1's (role 1: the
    plain auditor template itself, same version and cache).

    >>> auditor_template("medical-bioethicist").user.splitlines()[0]
    '### ROLE: MEDICAL BIOETHICIST & AI REVIEW BOARD MEMBER'
    >>> auditor_template("medical-bioethicist").name
    'auditor:medical-bioethicist'
    """
    base = builtin_template(AUDITOR)
    if role_of(f"{AUDITOR}:{role}") == DEFAULT_ROLE:
        return base
    return dataclasses.replace(base, name=f"{AUDITOR}:{role}", user=with_role(base.user, role))


def is_builtin(name: str) -> bool:
    """Whether ``name`` names a built-in template rather than a file.

    >>> is_builtin("auditor:medical-bioethicist"), is_builtin("my_template.yaml")
    (True, False)
    """
    return name in BUILTIN or is_auditor_name(name)


def load_template(path: str | Path) -> Template:
    """Read a template file, checking its placeholders; errors name the file and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read template: {exc.strerror}") from None
    if path.suffix.lower() in {".yaml", ".yml", ".json"}:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML/JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping with 'user' (and 'system', 'style')")
        if "user_file" in data:
            data["user"] = (path.parent / data["user_file"]).read_text(encoding="utf-8")
        if not isinstance(data.get("user"), str) or not data["user"].strip():
            raise ConfigError(f"{path}: user: the user message template is missing or empty")
        user, system = data["user"], data.get("system")
        style = data.get("style") or _guess_style(user)
        name = str(data.get("name") or path.stem)
        sampling = _sampling(data.get("sampling"), path)
        reply = str(data.get("reply") or "verdict")
        if reply not in REPLIES:
            raise ConfigError(f"{path}: reply: expected one of {', '.join(REPLIES)}, got {reply!r}")
    else:
        user, system, style, name, sampling = text, None, _guess_style(text), path.stem, {}
        reply = "verdict"
    if not _is_style(style):
        raise ConfigError(f"{path}: style: expected 'assay' or 'healthbench', got {style!r}")
    template = Template(
        name=name,
        style=style,
        user=user.strip(),
        system=system.strip() if isinstance(system, str) and system.strip() else None,
        sampling=sampling,
        reply=reply,
    )
    _check_placeholders(template, path)
    return template


def _sampling(value: Any, path: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not set(value) <= SAMPLING_KEYS:
        raise ConfigError(f"{path}: sampling: expected a mapping of "
                          f"{' and/or '.join(sorted(SAMPLING_KEYS))}, got {value!r}")
    return dict(value)


def _guess_style(user: str) -> Style:
    return "healthbench" if "<<conversation>>" in user else "assay"


def _check_placeholders(template: Template, path: Path) -> None:
    if template.style == "healthbench":
        missing = [p for p in HEALTHBENCH_PLACEHOLDERS if p not in template.user]
        if missing:
            raise ConfigError(f"{path}: user: a healthbench template needs {', '.join(missing)}")
        return
    used = set(ASSAY_FIELD.findall(template.user))
    unknown = sorted(used - ASSAY_PLACEHOLDERS)
    if unknown:
        raise ConfigError(
            f"{path}: user: unknown placeholder(s) {', '.join('{{' + u + '}}' for u in unknown)}; "
            f"known: {', '.join(sorted(ASSAY_PLACEHOLDERS))}"
        )
    if "response" not in used:
        raise ConfigError(f"{path}: user: the template never shows {{{{response}}}}")

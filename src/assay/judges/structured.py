"""Turning a judge's text into a schema-valid JSON object, or saying precisely why not.

The chain: the endpoint is asked for a JSON-schema reply where it supports one, else JSON mode,
else a plain prompt (handled by the clients). Whatever comes back goes through
:func:`parse_reply`: strict JSON first, then lenient extraction (code fences, the outermost
braces, trailing text), then a check against the schema. If that fails the judge re-asks (up
to its ``max_reasks``, 2 by default) with :func:`reask_messages`, quoting the error.

Example:
    >>> schema = {"type": "object", "required": ["verdict"],
    ...           "properties": {"verdict": {"enum": ["MET", "UNMET"]}}}
    >>> parse_reply('Sure! ```json\\n{"verdict": "MET"}\\n``` Hope it helps.', schema).data
    {'verdict': 'MET'}
    >>> parse_reply('{"verdict": "maybe"}', schema).kind
    <FailureKind.SCHEMA_MISMATCH: 'schema_mismatch'>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from assay.judges.types import FailureKind

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParseResult:
    data: dict[str, Any] | None
    kind: FailureKind | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.data is not None


def parse_reply(text: str, schema: dict[str, Any] | None,
                bool_field: str | None = None) -> ParseResult:
    """Parse ``text`` into a JSON object valid for ``schema`` and free of placeholders
    (:func:`placeholder`), holding ``bool_field`` (if given) as a JSON boolean; classify the
    failure if not.

    >>> print(parse_reply('{"criteria_met": "true"}', None, "criteria_met").error)
    $.criteria_met: expected true or false, got 'true'
    """
    obj, error = _load_object(text)
    if obj is None:
        return ParseResult(None, FailureKind.UNPARSEABLE, error)
    if schema is not None:
        problem = validate(obj, schema)
        if problem:
            return ParseResult(None, FailureKind.SCHEMA_MISMATCH, problem)
    if bool_field is not None and not isinstance(obj.get(bool_field), bool):
        return ParseResult(None, FailureKind.SCHEMA_MISMATCH,
                           f"$.{bool_field}: expected true or false, got {obj.get(bool_field)!r}")
    problem = placeholder(obj)
    if problem:
        return ParseResult(None, FailureKind.SCHEMA_MISMATCH, problem)
    return ParseResult(obj)


def reply_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply holds, found as :func:`parse_reply` finds it (code fences,
    chatter around it), not validated: None when there is none.

    >>> reply_object('Here: {"ids": ["a", "zz"]}')
    {'ids': ['a', 'zz']}
    """
    return _load_object(text)[0]


_PLACEHOLDER = re.compile(r"\s*(?:\.{2,}|…)+\s*")


def placeholder(value: Any, path: str = "$") -> str:
    """The first string of ``value`` that is only an ellipsis (``"..."``, ``"…"``): a model
    copying the elided part of a prompt's example, not an answer ("" if none).

    >>> placeholder({"criteria": [{"text": "Advises rest.", "points": 5}, {"text": "..."}]})
    "$.criteria[1].text: '...' is a placeholder, not an answer"
    """
    if isinstance(value, str):
        return (f"{path}: {value!r} is a placeholder, not an answer"
                if _PLACEHOLDER.fullmatch(value) else "")
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    for key, sub in items:
        problem = placeholder(sub, f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]")
        if problem:
            return problem
    return ""


def _load_object(text: str) -> tuple[dict[str, Any] | None, str]:
    stripped = text.strip()
    if not stripped:
        return None, "the reply is empty"
    fenced = stripped[0] == "`"  # a code fence is never JSON: go to the fenced block at once
    if not fenced:
        value, first_error = _strict_object(stripped)
        if value is not None:
            return value, ""
    for candidate in _lenient_candidates(stripped):
        try:
            value = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value, ""
    return None, _strict_object(stripped)[1] if fenced else first_error


def _strict_object(text: str) -> tuple[dict[str, Any] | None, str]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc})"
    if isinstance(value, dict):
        return value, ""
    return None, f"expected a JSON object, got {type(value).__name__}"


_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)\b')


def quote_non_finite(text: str) -> str:
    """JSON text with bare ``Infinity``, ``-Infinity`` and ``NaN`` (not JSON, but what Python's
    ``json.dumps`` writes and models copy) quoted as strings, never inside a string, so the
    field that holds one can be coerced on its own (``"Infinity"`` points read as 10).

    >>> quote_non_finite('{"points": -Infinity, "why": "NaN here stays"}')
    '{"points": "-Infinity", "why": "NaN here stays"}'
    """
    return _NON_FINITE.sub(lambda m: f'"{m.group(1)}"' if m.group(1) else m.group(0), text)


def _lenient_candidates(text: str):
    """Code-fenced blocks, then the outermost balanced ``{...}`` (ignoring text around it);
    each also without trailing commas (``{"a": 1,}``, as in Health-SCORE's prompt example),
    then with bare non-finite numbers quoted (:func:`quote_non_finite`)."""
    for candidate in _candidates(text):
        yield candidate
        fixed = _TRAILING_COMMA.sub(r"\1", candidate)
        if fixed != candidate:
            yield fixed
        quoted = quote_non_finite(fixed)
        if quoted != fixed:
            yield quoted


def _candidates(text: str):
    for match in _FENCE.finditer(text):
        yield match.group(1).strip()
    start = text.find("{")
    while start != -1:
        end = _matching_brace(text, start)
        if end is not None:
            yield text[start : end + 1]
        start = text.find("{", start + 1) if end is None else text.find("{", end + 1)


def _matching_brace(text: str, start: int) -> int | None:
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> str:
    """Check ``value`` against the JSON Schema subset judges use; return the first problem.

    Supported: type (incl. lists), enum, const, properties, required, additionalProperties,
    items, minimum/maximum, minLength/maxLength, minItems/maxItems, anyOf/oneOf, $defs/$ref
    (local). Unknown keywords are ignored.

        >>> validate({"n": 3}, {"properties": {"n": {"type": "integer", "maximum": 2}}})
        '$.n: 3 is above the maximum 2'
    """
    return _validate(value, schema, path, schema)


def _validate(value: Any, schema: dict[str, Any], path: str, root: dict[str, Any]) -> str:
    if "$ref" in schema:
        schema = _resolve(schema["$ref"], root)
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, name) for name in names):
            return f"{path}: expected {' or '.join(names)}, got {_type_name(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        return f"{path}: expected {schema['const']!r}"
    for key in ("anyOf", "oneOf"):
        if key in schema and all(_validate(value, sub, path, root) for sub in schema[key]):
            return f"{path}: matches none of the allowed shapes"
    if isinstance(value, dict):
        for name in schema.get("required", ()):
            if name not in value:
                return f"{path}: missing required property {name!r}"
        properties = schema.get("properties", {})
        for name, item in value.items():
            sub = properties.get(name)
            if sub is not None:
                problem = _validate(item, sub, f"{path}.{name}", root)
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{path}: unexpected property {name!r}"
            elif isinstance(schema.get("additionalProperties"), dict):
                problem = _validate(item, schema["additionalProperties"], f"{path}.{name}", root)
                if problem:
                    return problem
    elif isinstance(value, list):
        if "items" in schema and isinstance(schema["items"], dict):
            for i, item in enumerate(value):
                problem = _validate(item, schema["items"], f"{path}[{i}]", root)
                if problem:
                    return problem
        if len(value) < schema.get("minItems", 0):
            return f"{path}: fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{path}: more than {schema['maxItems']} items"
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{path}: shorter than {schema['minLength']} characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{path}: longer than {schema['maxLength']} characters"
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{path}: {value} is below the minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{path}: {value} is above the maximum {schema['maximum']}"
    return ""


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _type_name(value: Any) -> str:
    for name in _TYPES:
        if _is_type(value, name):
            return name
    return type(value).__name__


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        if part:
            node = node[part]
    return node


QUOTED_ERROR_CHARS = 500  # the most of a parse error that a re-ask quotes


def reask_messages(
    messages: tuple[dict[str, Any], ...], raw: str, error: str, schema: dict[str, Any] | None
) -> tuple[dict[str, Any], ...]:
    """The conversation extended with the unusable reply and a request to fix it, quoting the
    parse error (its first :data:`QUOTED_ERROR_CHARS` characters).

    >>> fix = reask_messages(({"role": "user", "content": "q"},), "{oops", "not valid JSON", None)
    >>> [m["role"] for m in fix], fix[-1]["content"].splitlines()[0]
    (['user', 'assistant', 'user'], 'Your previous reply could not be used: not valid JSON.')
    """
    if len(error) > QUOTED_ERROR_CHARS:
        error = error[:QUOTED_ERROR_CHARS - 1] + "…"
    wanted = (
        "a single JSON object matching this JSON Schema:\n" + orjson.dumps(schema).decode()
        if schema is not None
        else "a single JSON object"
    )
    fix = (
        f"Your previous reply could not be used: {error}.\n"
        f"Reply again with only {wanted}\nNo code fences, no text before or after it."
    )
    return (*messages, {"role": "assistant", "content": raw}, {"role": "user", "content": fix})


def json_instruction(schema: dict[str, Any] | None) -> str:
    """Appended to the last user message when the endpoint has no JSON mode at all."""
    if schema is None:
        return "\n\nReply with only a JSON object."
    return "\n\nReply with only a JSON object matching this JSON Schema:\n" + orjson.dumps(schema).decode()

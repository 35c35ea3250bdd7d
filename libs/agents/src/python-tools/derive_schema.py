#!/usr/bin/env python3
"""Derive tool schemas for the public functions of a Drydock Python tool module.

Usage: ``python3 derive_schema.py < {"source": "..."}`` prints
``{"functions": [...], "errors": [...]}`` as JSON; or import it and call
``derive(source)``.

The module is read with ``ast`` only: it is never imported, compiled to bytecode or
executed, so nothing in it runs (an ``import numpy`` at the top is just a node in the
tree). Drydock still runs this script inside a sandbox, and treats its output as
untrusted.

What counts as a tool: every ``def`` and ``async def`` directly at the top level of the
module whose name does not start with ``_``. Functions defined inside ``if``/``try``
blocks, classes or other functions are not tools; private ``_helpers`` are kept in the
module source and stay callable by the tools, but are never offered to the model. If a
name is defined twice, the last definition wins, as it does when Python runs the module.
``async def`` functions are included: the call runner awaits them with ``asyncio.run``.

Each function becomes ``{"name", "description", "parameters", "required"}`` where
``parameters`` is a JSON Schema object (``type: object``, ``properties``, ``required``,
``additionalProperties: false``) ready to hand to a model, and ``required`` repeats its
required names. The description is the docstring's first paragraph; parameter
descriptions come from a Google (``Args:``), reStructuredText (``:param x:``) or numpy
(``Parameters`` + dashes) section. Tools are called with keyword arguments, so
``*args``, ``**kwargs`` and positional-only parameters are refused, one error per
problem. Standard library only (Python 3.11).
"""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from typing import Any

# Model providers accept tool names of ASCII letters, digits, '_' and '-', at most 64.
_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_MAX_ANNOTATION_DEPTH = 32

_STRING = {"type": "string"}
_NULL = {"type": "null"}

# Bare names (builtins and typing/collections.abc names) that map to a fixed schema.
_SIMPLE: dict[str, dict[str, Any]] = {
    "str": _STRING,
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "None": _NULL,
    "NoneType": _NULL,
    "Any": {},
    "object": {},
}
_ARRAYS = {"list", "List", "Sequence", "MutableSequence", "Iterable", "Collection"}
_SETS = {"set", "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet"}
_TUPLES = {"tuple", "Tuple"}
_OBJECTS = {"dict", "Dict", "Mapping", "MutableMapping"}
# Modules whose attributes may be used as `typing.List`, `t.Optional`, `abc.Sequence`...
_TYPING_MODULES = {"typing", "typing_extensions", "collections.abc", "builtins"}

_GOOGLE_HEADER = re.compile(
    r"(?P<indent>\s*)(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|"
    r"Kwargs|Other Parameters)\s*:\s*\Z"
)
_GOOGLE_ENTRY = re.compile(
    r"\*{0,2}(?P<name>[^\W\d]\w*)\s*(?:\((?P<type>[^)]*)\))?\s*:\s*(?P<desc>.*)\Z"
)
# Any Google-style section header ends the summary paragraph.
_ANY_GOOGLE_HEADER = re.compile(
    r"\s*(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Kwargs|"
    r"Other Parameters|Returns|Return|Yields|Raises|Examples?|Notes?|Attributes)\s*:\s*\Z"
)
_REST_FIELD = re.compile(r"(?P<indent>\s*):(?P<body>[^:]+):\s*(?P<desc>.*)\Z")
_REST_PARAM_KINDS = {"param", "parameter", "arg", "argument", "key", "keyword"}
_NUMPY_RULE = re.compile(r"\s*-{3,}\s*\Z")
_NUMPY_PARAM_HEADERS = {"Parameters", "Other Parameters", "Keyword Arguments"}


def derive(source: str) -> dict[str, Any]:
    """Return ``{"functions": [...], "errors": [...]}`` for a module's source text."""
    if not isinstance(source, str):
        return _only_error("INVALID_INPUT", None, None, "The module source must be a string.")
    try:
        tree = ast.parse(source, filename="<tool module>")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "an unknown line"
        if exc.offset:
            where += f", column {exc.offset}"
        return _only_error(
            "SYNTAX_ERROR", None, exc.lineno, f"The module does not parse: {exc.msg} ({where})."
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        # 3.11 raises ValueError for NUL bytes; deep nesting can exhaust the parser.
        return _only_error("SYNTAX_ERROR", None, None, f"The module does not parse: {exc}.")

    resolver = _Resolver(tree)
    last_definition: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            last_definition.pop(node.name, None)  # keep the order of the final definitions
            last_definition[node.name] = node

    functions: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for node in last_definition.values():
        try:
            spec, problems = _function_spec(node, resolver)
        except (RecursionError, MemoryError) as exc:
            spec, problems = {}, [_error(
                "UNSUPPORTED_SIGNATURE", node.name, node.lineno,
                f"Function {node.name!r} (line {node.lineno}) has a signature too deeply "
                f"nested to describe ({type(exc).__name__}); simplify its annotations.",
            )]
        if problems:
            errors.extend(problems)
        else:
            functions.append(spec)
    return {"functions": functions, "errors": errors}


def _only_error(code: str, function: str | None, line: int | None, message: str) -> dict[str, Any]:
    return {"functions": [], "errors": [_error(code, function, line, message)]}


def _error(code: str, function: str | None, line: int | None, message: str) -> dict[str, Any]:
    return {"code": code, "function": function, "line": line, "message": message}


def _function_spec(
    node: ast.FunctionDef | ast.AsyncFunctionDef, resolver: _Resolver
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    name, line, args = node.name, node.lineno, node.args
    problems: list[dict[str, Any]] = []
    if not _TOOL_NAME.match(name):
        problems.append(_error(
            "INVALID_TOOL_NAME", name, line,
            f"Function {name!r} (line {line}) cannot be a tool: tool names use ASCII letters, "
            "digits and underscores, start with a letter and are at most 64 characters; "
            "rename it, or start it with '_' to keep it as a private helper.",
        ))
    if args.posonlyargs:
        names = ", ".join(a.arg for a in args.posonlyargs)
        problems.append(_error(
            "POSITIONAL_ONLY_NOT_SUPPORTED", name, line,
            f"Function {name!r} (line {line}) has positional-only parameters ({names}, before "
            "'/'); tools are called with keyword arguments, so remove the '/'.",
        ))
    if args.vararg:
        problems.append(_error(
            "VARARGS_NOT_SUPPORTED", name, line,
            f"Function {name!r} (line {line}) takes *{args.vararg.arg}; tools need named "
            "parameters, so replace it with a list parameter.",
        ))
    if args.kwarg:
        problems.append(_error(
            "VARARGS_NOT_SUPPORTED", name, line,
            f"Function {name!r} (line {line}) takes **{args.kwarg.arg}; tools need named "
            "parameters, so list them explicitly or take a dict parameter.",
        ))
    if problems:
        return {}, problems

    description, documented = _parse_docstring(ast.get_docstring(node, clean=True) or "")
    positional_defaults: list[ast.expr | None] = [None] * (len(args.args) - len(args.defaults))
    positional_defaults += list(args.defaults)
    params = list(zip(args.args, positional_defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))

    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, default in params:
        doc_description, doc_type = documented.get(arg.arg, (None, None))
        if arg.annotation is not None:
            schema = resolver.schema(arg.annotation)
        elif doc_type:
            schema = resolver.schema_from_text(doc_type)
        else:
            schema = {}
        schema = dict(schema)
        if doc_description:
            schema["description"] = doc_description
        if default is None:
            required.append(arg.arg)
        else:
            has_value, value = _literal_default(default)
            if has_value:
                if value is None and schema and not _accepts_null(schema):
                    # `x: str = None` means Optional[str] in practice; say so.
                    schema = _with_null(schema)
                schema["default"] = value
        properties[arg.arg] = schema

    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return {
        "name": name,
        "description": description,
        "parameters": parameters,
        "required": list(required),
    }, []


def _literal_default(node: ast.expr) -> tuple[bool, Any]:
    """The default as a JSON value, when it is a literal that JSON can carry."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    return _to_json(value, 0)


def _to_json(value: Any, depth: int) -> tuple[bool, Any]:
    if depth > _MAX_ANNOTATION_DEPTH:
        return False, None
    if value is None or isinstance(value, (bool, int, str)):
        return True, value
    if isinstance(value, float):
        return (True, value) if math.isfinite(value) else (False, None)
    if isinstance(value, (list, tuple)):
        items = []
        for item in value:
            ok, converted = _to_json(item, depth + 1)
            if not ok:
                return False, None
            items.append(converted)
        return True, items
    if isinstance(value, dict):
        converted_dict = {}
        for key, item in value.items():
            ok, converted = _to_json(item, depth + 1)
            if not isinstance(key, str) or not ok:
                return False, None
            converted_dict[key] = converted
        return True, converted_dict
    return False, None  # bytes, sets, complex: no faithful JSON form


def _accepts_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in schema.get("enum", []):
        return True
    return any(_accepts_null(member) for member in schema.get("anyOf", []))


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    extras = {k: v for k, v in schema.items() if k == "description"}
    core = {k: v for k, v in schema.items() if k != "description"}
    return {**_union([core, _NULL]), **extras}


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    flat: list[dict[str, Any]] = []
    for member in members:
        if member == {}:
            return {}  # Any absorbs everything else
        for part in (member["anyOf"] if set(member) == {"anyOf"} else [member]):
            if part not in flat:
                flat.append(part)
    if len(flat) == 1:
        return flat[0]
    if all(set(m) == {"type"} for m in flat):
        kinds: list[str] = []
        for m in flat:
            for kind in m["type"] if isinstance(m["type"], list) else [m["type"]]:
                if kind not in kinds:
                    kinds.append(kind)
        return {"type": kinds[0] if len(kinds) == 1 else kinds}
    return {"anyOf": flat}


class _Resolver:
    """Turns annotation expressions into JSON Schema, knowing the module's typing imports."""

    def __init__(self, tree: ast.Module) -> None:
        self._typing_modules = set(_TYPING_MODULES)
        self._aliases: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in _TYPING_MODULES:
                        self._typing_modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.ImportFrom) and node.module in _TYPING_MODULES:
                for alias in node.names:
                    if alias.asname:
                        self._aliases[alias.asname] = alias.name

    def schema_from_text(self, text: str) -> dict[str, Any]:
        text = re.sub(r",\s*optional\s*\Z", "", text.strip())
        try:
            node = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
        return self.schema(node)

    def schema(self, node: ast.expr, depth: int = 0) -> dict[str, Any]:
        if depth > _MAX_ANNOTATION_DEPTH:
            return {}
        if isinstance(node, ast.Constant):
            if node.value is None:
                return _NULL
            if isinstance(node.value, str):  # a quoted (forward-reference) annotation
                try:
                    inner = ast.parse(node.value.strip(), mode="eval").body
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    return {}
                return self.schema(inner, depth + 1)
            return {}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _union([self.schema(node.left, depth + 1), self.schema(node.right, depth + 1)])
        if isinstance(node, ast.Subscript):
            return self._generic(self._name(node.value), node.slice, depth)
        name = self._name(node)
        if name in _SIMPLE:
            return dict(_SIMPLE[name])
        if name in _ARRAYS or name in _TUPLES:
            return {"type": "array"}
        if name in _SETS:
            return {"type": "array", "uniqueItems": True}
        if name in _OBJECTS:
            return {"type": "object"}
        return {}  # a class we cannot describe (pd.DataFrame, a user class): accept anything

    def _name(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self._aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute) and _dotted(node.value) in self._typing_modules:
            return node.attr
        return None

    def _generic(self, name: str | None, index: ast.expr, depth: int) -> dict[str, Any]:
        args = list(index.elts) if isinstance(index, ast.Tuple) else [index]
        if not args:  # tuple[()]
            return {"type": "array", "maxItems": 0} if name in _TUPLES else {}
        sub = [self.schema(a, depth + 1) for a in args] if name != "Literal" else []
        if name == "Optional":
            return _union([sub[0], _NULL])
        if name == "Union":
            return _union(sub)
        if name == "Literal":
            return _literal_enum(args)
        if name == "Annotated":
            schema = dict(sub[0])
            notes = [a.value for a in args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if notes:
                schema["description"] = notes[0]
            return schema
        if name in _ARRAYS or name in _SETS:
            schema: dict[str, Any] = {"type": "array"}
            if sub[0]:
                schema["items"] = sub[0]
            if name in _SETS:
                schema["uniqueItems"] = True
            return schema
        if name in _TUPLES:
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return {"type": "array", "items": sub[0]} if sub[0] else {"type": "array"}
            return {"type": "array", "prefixItems": sub, "minItems": len(sub), "maxItems": len(sub)}
        if name in _OBJECTS:
            value = sub[1] if len(sub) == 2 else {}
            return {"type": "object", "additionalProperties": value} if value else {"type": "object"}
        return {}


def _literal_enum(args: list[ast.expr]) -> dict[str, Any]:
    values: list[Any] = []
    for arg in args:
        try:
            value = ast.literal_eval(arg)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return {}
        ok, value = _to_json(value, 0)
        if not ok or isinstance(value, (list, dict)):
            return {}
        values.append(value)
    kinds = {_json_type(v) for v in values}
    if len(kinds) == 1:
        return {"type": kinds.pop(), "enum": values}
    return {"enum": values}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


# --- docstrings -------------------------------------------------------------------------


def _parse_docstring(doc: str) -> tuple[str, dict[str, tuple[str | None, str | None]]]:
    """Summary paragraph, and {param: (description, type text)} from any supported style."""
    lines = doc.splitlines()
    params: dict[str, tuple[str | None, str | None]] = {}
    for parser in (_numpy_params, _rest_params, _google_params):
        for name, (description, kind) in parser(lines).items():
            old_description, old_kind = params.get(name, (None, None))
            params[name] = (old_description or description, old_kind or kind)
    return _summary(lines), params


def _summary(lines: list[str]) -> str:
    taken: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip():
            if taken:
                break
            continue
        next_line = lines[i + 1] if i + 1 < len(lines) else ""
        if _ANY_GOOGLE_HEADER.match(line) or _REST_FIELD.match(line) or _NUMPY_RULE.match(next_line):
            break
        taken.append(line.strip())
    return " ".join(taken)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_params(lines: list[str]) -> dict[str, tuple[str | None, str | None]]:
    found: dict[str, tuple[str | None, str | None]] = {}
    i = 0
    while i < len(lines):
        header = _GOOGLE_HEADER.match(lines[i])
        i += 1
        if not header:
            continue
        header_indent = len(header.group("indent"))
        entry_indent: int | None = None
        current: list[Any] | None = None  # [name, [description parts], type]
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            indent = _indent(line)
            if indent <= header_indent:
                break  # the section is over
            if entry_indent is None:
                entry_indent = indent
            entry = _GOOGLE_ENTRY.match(line.strip()) if indent <= entry_indent else None
            if entry:
                current = [entry.group("name"), [entry.group("desc").strip()], entry.group("type")]
                found[current[0]] = _joined(current)
            elif current is not None:
                current[1].append(line.strip())
                found[current[0]] = _joined(current)
            i += 1
    return found


def _rest_params(lines: list[str]) -> dict[str, tuple[str | None, str | None]]:
    descriptions: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    current: list[str] | None = None
    field_indent = 0
    for line in lines:
        field = _REST_FIELD.match(line)
        if field:
            current = None
            words = field.group("body").split()
            field_indent = len(field.group("indent"))
            if len(words) >= 2 and words[0] in _REST_PARAM_KINDS:
                name = words[-1].lstrip("*")
                current = descriptions.setdefault(name, [])
                current.append(field.group("desc").strip())
                if len(words) > 2:  # ":param int x: ..."
                    types.setdefault(name, " ".join(words[1:-1]))
            elif len(words) == 2 and words[0] == "type":
                types[words[1].lstrip("*")] = field.group("desc").strip()
        elif current is not None and line.strip() and _indent(line) > field_indent:
            current.append(line.strip())
        elif line.strip():
            current = None
    return {
        name: (" ".join(p for p in descriptions.get(name, []) if p) or None, types.get(name))
        for name in set(descriptions) | set(types)
    }


def _numpy_params(lines: list[str]) -> dict[str, tuple[str | None, str | None]]:
    found: dict[str, tuple[str | None, str | None]] = {}
    in_params = False
    base_indent = 0
    current: list[Any] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        next_line = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _NUMPY_RULE.match(next_line) and not _NUMPY_RULE.match(line):
            in_params = line.strip() in _NUMPY_PARAM_HEADERS
            base_indent, current = _indent(line), None
            i += 2
            continue
        if in_params and line.strip():
            if _indent(line) <= base_indent:
                names, _, kind = line.strip().partition(":")
                current = None
                for name in (n.strip().lstrip("*") for n in names.split(",")):
                    if name.isidentifier():
                        current = current or [[], [], kind.strip() or None]
                        current[0].append(name)
                if current is not None:
                    for name in current[0]:
                        found[name] = (None, current[2])
            elif current is not None:
                current[1].append(line.strip())
                for name in current[0]:
                    found[name] = (" ".join(current[1]), current[2])
        i += 1
    return found


def _joined(entry: list[Any]) -> tuple[str | None, str | None]:
    text = " ".join(part for part in entry[1] if part)
    return (text or None, entry[2])


def main() -> int:
    try:
        request = json.loads(sys.stdin.read())
    except (ValueError, UnicodeDecodeError) as exc:
        request, problem = None, f"stdin is not JSON: {exc}"
    else:
        problem = "stdin must be a JSON object with a string field 'source'."
    if not isinstance(request, dict) or not isinstance(request.get("source"), str):
        json.dump(_only_error("INVALID_INPUT", None, None, problem), sys.stdout)
        sys.stdout.write("\n")
        return 2
    json.dump(derive(request["source"]), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Strict YAML reading of specs and model files: bounded size (aliases counted before
anything is built), no duplicate keys, and errors that name the file, the line, the YAML
path and the cause.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from shredfold.spec.base import SpecError
from shredfold.spec.model import ImageTokenRule, ModelConfig
from shredfold.spec.root import Spec, load_sections

_M = TypeVar("_M", bound=BaseModel)

# A spec or model file is a few hundred nodes. YAML's aliases let a few lines stand for
# exponentially many ("billion laughs": nine levels of nine make 10^9), so the size a
# document would have once its aliases are expanded is counted on the composed node graph
# (each node once) before anything is built from it, and refused past this bound.
MAX_YAML_NODES = 100_000


def _expanded_sizes(root: yaml.Node) -> tuple[dict[int, int], yaml.Node | None]:
    """How many nodes each node stands for with every alias expanded (by ``id``, capped
    just past :data:`MAX_YAML_NODES`), counted without expanding: a node's size is computed
    once, however many aliases name it. Also the node that closes a cycle (an alias inside
    its own anchor), if any. Iterative: a deep document must not exhaust the stack."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            on_path.discard(id(node))
            size[id(node)] = min(MAX_YAML_NODES + 1, 1 + sum(size[id(c)] for c in _children(node)))
            continue
        if id(node) in size:
            continue
        if id(node) in on_path:
            return size, node
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    return size, None


def _largest(root: yaml.Node, sizes: dict[int, int], path: Path) -> str:
    """``file:line: yaml.path`` of the first top-level entry too large once expanded."""
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if sizes.get(id(v), 0) > MAX_YAML_NODES:
                return f"{path}:{k.start_mark.line + 1}: {k.value}"
    return f"{path}:{root.start_mark.line + 1}: <top>"


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _yaml_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map each YAML path (as a tuple of str keys/indices) to its 1-based line number.

    A node reached again through an alias is not walked again: an alias's paths fall back
    to the line of the alias's parent, and a document of aliases costs its own size."""
    out: dict[tuple[str, ...], int] = {}
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return out
    seen: set[int] = set()
    stack: list[tuple[yaml.Node | None, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is None:
            continue
        out[path] = node.start_mark.line + 1
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = str(k.value)
                out[(*path, key)] = k.start_mark.line + 1
                stack.append((v, (*path, key)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, (*path, str(i))) for i, v in enumerate(node.value))
    return out


# The tags of discriminated unions, which pydantic puts in error locations like a field.
_UNION_TAGS = frozenset(
    tag for rule in get_args(get_args(ImageTokenRule)[0]) for tag in get_args(rule.model_fields["rule"].annotation)
)


def _format_loc(loc: tuple[Any, ...]) -> tuple[str, tuple[str, ...]]:
    """Render a pydantic error location as a YAML path, dropping union-branch tags."""
    parts: list[str] = []
    raw: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
            raw.append(str(p))
        elif isinstance(p, str) and (
            p in ("str", "ModelConfig") or p in _UNION_TAGS or p.startswith(("function-", "literal["))
        ):
            continue
        else:
            parts.append(("." if parts else "") + str(p))
            raw.append(str(p))
    return "".join(parts) or "<top>", tuple(raw)


def format_validation_error(err: ValidationError, source: str, text: str, prefix: tuple[str, ...] = ()) -> str:
    lines = _yaml_lines(text)
    msgs = []
    seen = set()
    for e in err.errors():
        where, raw = _format_loc(tuple(e["loc"]))
        full = (*prefix, *raw)
        line = None
        for cut in range(len(full), -1, -1):
            if full[:cut] in lines:
                line = lines[full[:cut]]
                break
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field"
        elif isinstance(e.get("input"), str | int | float | bool) and e["type"] != "missing":
            msg += f" (got {e['input']!r})"
        entry = f"{source}:{line if line else '?'}: {where}: {msg}"
        if entry not in seen:
            seen.add(entry)
            msgs.append(entry)
    return "\n".join(msgs)


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a mapping may not repeat a key (last-wins hides typos)."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
        line = key_node.start_mark.line + 1
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (lines {seen[key]} and {line})", key_node.start_mark
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def read_yaml(path: Path) -> tuple[Any, str]:
    """The parsed YAML of a spec or model file and its text; errors name the file and line."""
    if not path.is_file():
        raise SpecError(f"{path}: file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(f"{path}:{line}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    loader = None
    try:
        loader = _StrictLoader(text)  # its reader refuses characters YAML does not allow
        # Composed first (aliases stay shared references: no expansion yet), bounded, and
        # only then built into Python values.
        root = loader.get_single_node()
        if root is None:
            return None, text
        sizes, cycle = _expanded_sizes(root)
        if cycle is not None:
            raise SpecError(f"{path}:{cycle.start_mark.line + 1}: not valid YAML: an alias refers to a node that contains it")
        if sizes[id(root)] > MAX_YAML_NODES:
            raise SpecError(f"{_largest(root, sizes, path)}: refused: YAML aliases that expand to more "
                            f"than {MAX_YAML_NODES:,} nodes (a spec or model file has a few hundred)")
        return loader.construct_document(root), text
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"{where}: not valid YAML: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()  # type: ignore[no-untyped-call]


def _read_as(path: Path, model: type[_M], what: str) -> tuple[_M, str]:
    data, text = read_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(f"{path}:1: <top>: expected a mapping{what}")
    try:
        return model.model_validate(data), text
    except ValidationError as exc:
        raise SpecError(format_validation_error(exc, str(path), text)) from None


def read_model_config(path: Path) -> tuple[ModelConfig, str]:
    """A model file, validated as a :class:`ModelConfig` (adapter rules are checked later)."""
    return _read_as(path, ModelConfig, " of model settings")


def read_spec(path: Path) -> tuple[Spec, str]:
    """A spec file, validated as a :class:`Spec` (references and paths not yet resolved)."""
    load_sections()
    return _read_as(path, Spec, "")


def line_of(text: str, *path: str) -> int | str:
    """The line of a YAML path in ``text`` ('?' when it is not there)."""
    return _yaml_lines(text).get(tuple(path), "?")


def spec_error_at(spec_path: str | Path, yaml_path: tuple[str, ...], cause: str) -> SpecError:
    """A problem found past validation (in what the spec names: a corpus folder's
    documents, an outside set, design files), as a spec error naming the spec file, the
    line and the YAML path of the setting that led to it."""
    try:
        text = Path(spec_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    lines = _yaml_lines(text)
    line = next((lines[yaml_path[:k]] for k in range(len(yaml_path), 0, -1) if yaml_path[:k] in lines), "?")
    return SpecError(f"{spec_path}:{line}: {'.'.join(yaml_path)}: {cause}")


"""A spec file → :class:`~shredfold.spec.ResolvedSpec`: model references resolved through the
adapter registry, every adapter's own rules checked, paths made absolute.

Every problem is a :class:`~shredfold.spec.SpecError` naming the file, the line, the YAML path
and the cause, raised before any job runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from shredfold.models import registry
from shredfold.spec import (
    ModelConfig,
    ResolvedSpec,
    Spec,
    SpecError,
    line_of,
    path_fields,
    read_model_config,
    read_spec,
)


def load_model_config(path: Path) -> ModelConfig:
    """A model file, with its adapter's own rules checked."""
    cfg, text = read_model_config(path)
    problems = registry.config_problems(cfg)
    if problems:
        raise SpecError("\n".join(f"{path}:{line_of(text, f)}: {f}: {why}" for f, why in problems))
    return cfg


def resolve_model(ref: str, models_dir: Path) -> ModelConfig:
    """A model named in a spec: ``specs/models/<ref>.yaml`` if present, else a built-in."""
    candidate = models_dir / f"{ref}.yaml"
    if candidate.is_file():
        cfg = load_model_config(candidate)
        if cfg.id != ref:
            raise SpecError(f"{candidate}: id {cfg.id!r} does not match its file name {ref!r}")
        return cfg
    try:
        return registry.builtin_config(ref)
    except KeyError:
        raise SpecError(
            f"model {ref!r}: no file {candidate} and not a built-in "
            f"({', '.join(registry.builtin_names())})"
        ) from None


def _get(model: BaseModel | None, path: tuple[str, ...]) -> Any:
    for name in path:
        if model is None:
            return None
        model = getattr(model, name)
    return model


def _set(model: BaseModel, path: tuple[str, ...], value: Any) -> BaseModel:
    head, *rest = path
    if not rest:
        return model.model_copy(update={head: value})
    return model.model_copy(update={head: _set(getattr(model, head), tuple(rest), value)})


def absolute_paths(spec: Spec, base: Path, text: str, where: Path) -> Spec:
    """The spec with every path field of its sections (:func:`shredfold.spec.path_fields`)
    absolute; a missing one is an error."""
    for path in path_fields():
        value = _get(spec, path)
        if value is None:
            continue
        absolute = value if Path(value).is_absolute() else (base / value).resolve()
        if not Path(absolute).exists():
            raise SpecError(f"{where}:{line_of(text, *path)}: {'.'.join(path)}: {absolute} does not exist")
        spec = _set(spec, path, Path(absolute))  # type: ignore[assignment]
    return spec


def apply_budgets(models: list[ModelConfig], spec: Spec, text: str, where: Path) -> list[ModelConfig]:
    """The models with the spec's ``budget_usd`` caps applied: the stricter of the spec's and
    the model file's budget holds."""
    ids = {m.id for m in models}
    unknown = [i for i in spec.budget_usd if i not in ids]
    if unknown:
        raise SpecError("\n".join(
            f"{where}:{line_of(text, 'budget_usd', i)}: budget_usd.{i}: not a model of this spec "
            f"({', '.join(sorted(ids))})" for i in unknown
        ))  # fmt: skip
    out = []
    for m in models:
        cap = spec.budget_usd.get(m.id)
        if cap is not None and (m.budget_usd is None or cap < m.budget_usd):
            m = m.model_copy(update={"budget_usd": cap})
        out.append(m)
    return out


def check_key_routes(models: list[ModelConfig], spec: Spec, text: str, where: Path) -> None:
    """Every variable a model would send where it needs an opt-in has the spec's own
    ``allow_keys`` entry for exactly that variable and host; an entry for a model the spec
    does not have, or that sends nothing, is an error too (a stale opt-in hides nothing)."""
    from shredfold.models.endpoints import key_routes

    routes = {r.model: r for r in key_routes(models)}
    ids = [m.id for m in models]
    problems = []
    for model_id, opt in spec.allow_keys.items():
        line = line_of(text, "allow_keys", model_id)
        route = routes.get(model_id)
        if route is None:
            problems.append(f"{where}:{line}: allow_keys.{model_id}: no model of this spec sends a variable by that id")
        elif (opt.env, opt.host) != (route.env, route.host):
            problems.append(f"{where}:{line}: allow_keys.{model_id}: allows ${opt.env} -> {opt.host}, but the model "
                            f"sends ${route.env} -> {route.host}")  # fmt: skip
    for route in routes.values():
        if route.concerns and route.model not in spec.allow_keys:
            i = ids.index(route.model)
            problems.append(
                f"{where}:{line_of(text, 'models', str(i))}: models[{i}]: {route.model} would send ${route.env} to "
                f"{route.host}, and {'; '.join(route.concerns)}: refused. If you trust this model file, say so in "
                f"the spec: allow_keys: {{{route.model}: {{env: {route.env}, host: '{route.host}'}}}}"
            )
    if problems:
        raise SpecError("\n".join(problems))


def load_spec(path: str | Path, models_dir: str | Path | None = None) -> ResolvedSpec:
    """Load and validate a spec; raise :class:`SpecError` naming the YAML path and cause."""
    path = Path(path).resolve()
    spec, text = read_spec(path)
    mdir = Path(models_dir) if models_dir else path.parent / "models"
    models = []
    for i, ref in enumerate(spec.models):
        try:
            if isinstance(ref, str):
                models.append(resolve_model(ref, mdir))
                continue
            problems = registry.config_problems(ref)
            if problems:
                raise SpecError("; ".join(f"{f}: {why}" for f, why in problems))
            models.append(ref)
        except SpecError as exc:
            raise SpecError(f"{path}:{line_of(text, 'models', str(i))}: models[{i}]: {exc}") from None
    ids = [m.id for m in models]
    if len(set(ids)) != len(ids):
        raise SpecError(f"{path}: models: ids must be unique after resolving files: {ids}")
    models = apply_budgets(models, spec, text, path)
    check_key_routes(models, spec, text, path)
    spec = absolute_paths(spec, path.parent, text, path)
    return ResolvedSpec(path=path, spec=spec, models=models)

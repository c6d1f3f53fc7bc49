"""Hypothesis throws generated garbage at spec loading: a SpecError naming the file (or a
valid spec), never another exception, never unbounded time."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shredfold.corpus.loaders import CorpusError
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.spec import SpecError

KEYS = ["name", "seed", "shred", "origami", "models", "domains", "granularities", "corpus",
        "render", "synthesis", "mode", "designs", "tasks", "documents_per_domain", "x"]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
    st.text(max_size=20), st.sampled_from(["oracle", "flat", "news_en", "1", "-"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5),
    ),
    max_leaves=25,
)


def check(path: Path) -> None:
    try:
        resolved = load_spec(path)
    except SpecError as exc:
        assert str(path) in str(exc) or "model " in str(exc), str(exc)
        return
    if resolved.spec.origami is None:  # (origami plans replay designs: too slow per example)
        try:
            make_plan(resolved)
        except (SpecError, CorpusError) as exc:
            assert str(exc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=values)
def test_any_yaml_document_is_a_spec_or_a_spec_error(tmp_path: Path, doc: object) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    check(path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_are_a_spec_error(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(raw)
    check(path)


def test_a_repeated_key_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("name: a\nseed: 1\nmodels: [oracle]\nseed: 2\n")
    try:
        load_spec(path)
    except SpecError as exc:
        assert f"{path}:4" in str(exc) and "duplicate key 'seed' (lines 2 and 4)" in str(exc)
    else:
        raise AssertionError("a repeated key was accepted")


def test_a_spec_that_is_not_utf8_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes("name: a\nmodels: [oracle]\ndescription: caf\xe9\n".encode("latin-1"))
    try:
        load_spec(path)
    except SpecError as exc:
        assert f"{path}:3: not UTF-8" in str(exc)
    else:
        raise AssertionError("latin-1 bytes were accepted")

"""bench/make_corpus.py: the generated 756-document corpus the planning benchmark loads."""

from __future__ import annotations

import importlib.util
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import lxml.html
import pytest

from shredfold.corpus.document import DOMAINS
from shredfold.corpus.loaders import load_corpus, load_jsonl
from shredfold.spec import CorpusSource

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "make_corpus.py"


@pytest.fixture(scope="module")
def make_corpus() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("make_corpus", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is being built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def generated(make_corpus: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "corpus.jsonl"
    assert make_corpus.main([str(out)]) == 0
    return out


def test_writes_756_distinct_documents(generated: Path) -> None:
    docs = load_jsonl(generated)
    assert len(docs) == 756
    assert Counter(d.domain for d in docs) == dict.fromkeys(DOMAINS, 126)
    assert len({d.text for d in docs}) == 756


def test_documents_are_realistic_in_size(generated: Path) -> None:
    for doc in load_jsonl(generated):
        if doc.kind == "prose":
            assert 800 <= len(doc.text) <= 2500, doc.doc_id
            assert doc.text.startswith("# ")
        elif doc.kind == "code":
            assert 1000 <= len(doc.text.encode()) <= 4096, doc.doc_id
        else:
            table = lxml.html.fragment_fromstring(doc.text)
            assert len(table.xpath("./tbody/tr")) >= 5
            assert table.xpath(".//*[@rowspan or @colspan]")


def test_generated_python_still_parses(generated: Path) -> None:
    for doc in load_jsonl(generated):
        if doc.domain == "code_python":
            compile(doc.text, doc.doc_id, "exec")


def test_same_seed_same_bytes(make_corpus: ModuleType, generated: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.jsonl"
    make_corpus.main([str(again), "--per-domain", "126"])
    assert again.read_bytes() == generated.read_bytes()
    small = tmp_path / "small.jsonl"
    make_corpus.main([str(small), "--per-domain", "3", "--seed", "1"])
    assert len(load_jsonl(small)) == 18


def test_prints_the_count(
    make_corpus: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_corpus.main([str(tmp_path / "c.jsonl"), "--per-domain", "2"])
    assert re.search(r"\b12 documents\b", capsys.readouterr().out)


def test_plan_time_load_is_fast(generated: Path) -> None:
    start = time.perf_counter()
    picked = load_corpus(CorpusSource(jsonl=generated), DOMAINS, 126)
    elapsed = time.perf_counter() - start
    assert sum(map(len, picked.values())) == 756
    # The pipeline loads the corpus while planning; a generous bound for slow CI machines.
    assert elapsed < 0.5, f"{elapsed:.3f} s"

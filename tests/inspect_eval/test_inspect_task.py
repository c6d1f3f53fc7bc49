"""`inspect eval shredfold/shredbench` and `shredfold/origami_mcq`: Inspect AI asks exactly what
shredfold asks and scores with shredfold's own metric functions, so the same answers get the
same numbers as shredfold's score jobs."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    ModelOutput,
    ModelUsage,
    get_model,
)

from shredfold.calls import Request, Response
from shredfold.inspect_eval.rows import SourceError
from shredfold.inspect_eval.task import make_task
from shredfold.metrics.text import RAW_NED_SIGNATURE
from shredfold.plan import Plan, make_plan
from shredfold.resolve import load_spec
from shredfold.shred.prompts import PAPER_TASK
from shredfold.spec import ModelConfig
from shredfold.stages.query import run_query
from shredfold.stages.score import run_score
from shredfold.store import Store
from shredfold.tasks.shredbench.task import score_text
from tests.export.tiny_export import TinyExport

if TYPE_CHECKING:
    from tests.conftest import Loopback

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("ned", "ned_raw", "bleu", "rouge_l", "teds", "teds_s")


# ---------------------------------------------------------------- what a model was asked


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def request_print(request: Request) -> tuple[Any, ...]:
    """What reaches the model: every message's role, text and image hashes."""
    return tuple((m.role, m.text, tuple(_sha(i) for i in m.images)) for m in request.messages)


def messages_print(messages: Sequence[ChatMessage]) -> tuple[Any, ...]:
    """The same for Inspect's messages (images are data URLs)."""
    out = []
    for m in messages:
        if isinstance(m.content, str):
            out.append((m.role, m.content, ()))
            continue
        text = "".join(c.text for c in m.content if isinstance(c, ContentText))
        images = tuple(_sha(base64.b64decode(c.image.split(",", 1)[1])) for c in m.content if isinstance(c, ContentImage))
        out.append((m.role, text, images))
    return tuple(out)


class Scripted:
    """A model that answers each item as the test says, recording what it was asked."""

    def __init__(self, config: ModelConfig, answers: Mapping[str, str]) -> None:
        self.config, self.answers = config, answers
        self.asked: dict[tuple[Any, ...], str] = {}  # request print -> item key

    def identity(self) -> dict[str, Any]:
        return {"adapter": "scripted"}

    def complete(self, request: Request) -> Response:
        assert request.item is not None
        self.asked[request_print(request)] = request.item
        return Response(text=self.answers[request.item], input_tokens=1, output_tokens=1)


def mock_output(text: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    # with usage given, mockllm counts no tokens (which would fetch tiktoken's tables)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def mockllm(answer: Callable[[Sequence[ChatMessage]], str]) -> Any:
    return get_model("mockllm/model", custom_outputs=lambda messages, *_: mock_output(answer(messages)))


def run(task: Any, model: Any, log_dir: Path) -> EvalLog:
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return log


# ---------------------------------------------------------------- shredfold's own scores


def shredfold_rows(plan: Plan, store: Store, work: Path, task: str, model: Scripted) -> dict[str, dict[str, Any]]:
    """Run the real query and score jobs of every cell of ``task`` with ``model`` answering;
    the score tables' rows by item key."""
    rows: dict[str, dict[str, Any]] = {}
    for i, cell in enumerate(c for c in plan.cells if c.task == task):
        query, table = work / f"{task}-{i}.json", work / f"{task}-{i}.parquet"
        run_query(plan, cell.query_key, cell.query_where, str(query), store, model=model)  # type: ignore[arg-type]
        run_score(plan, cell.score_key, cell.score_where, str(query), str(table), store)
        rows.update((r["item"], r) for r in pq.read_table(table).to_pylist())
    return rows


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.fixture
def copy(tiny_export: TinyExport, tmp_path: Path) -> tuple[Plan, Store, Path]:
    """A plan over a copy of the tiny store (answers written there stay out of the shared one)."""
    work = tmp_path / "work"
    shutil.copytree(tiny_export.results / "store", work / "store")
    store = Store(work / "store")
    return make_plan(load_spec(tiny_export.spec), store), store, work


def shred_answers(plan: Plan, store: Store) -> dict[str, str]:
    """Answers from exact to wrong: the truth, half of it, a table as Markdown, nothing."""
    from shredfold.shred.sample_folder import SAMPLE_STAGE, load_truth

    out = {}
    for i, item in enumerate(item for s in plan.sets_of("shred") for item in s.items):
        truth = load_truth(store.object(SAMPLE_STAGE, item.key))
        out[item.key] = [
            truth.html or truth.text,
            truth.text[: len(truth.text) // 2],
            "| City | Rain |\n|---|---|\n| Oslo | 12 |\n| Lima | 8 |" if item.kind == "table" else truth.text.upper(),
            "",
        ][i % 4]
    return out


def test_shredbench_in_inspect_scores_as_shredfolds_score_jobs(tiny_export: TinyExport, copy: tuple[Plan, Store, Path], tmp_path: Path) -> None:
    plan, store, work = copy
    answers = shred_answers(plan, store)
    oracle = next(m for m in plan.spec.models if m.id == "oracle")
    model = Scripted(oracle, answers)
    rows = shredfold_rows(plan, store, work, "shred", model)
    assert set(rows) == set(answers) and len(rows) == 4

    # Inspect asks the same (a request shredfold did not make has no answer: the sample fails)
    log = run(make_task("shredbench", export=str(tiny_export.out)), mockllm(lambda m: answers[model.asked[messages_print(m)]]), tmp_path / "logs")
    assert log.eval.task == "shredfold/shredbench" and log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == sorted(rows)
    for s in log.samples:
        score, row = s.scores["shredfold_scorer"], rows[str(s.id)]
        assert all(same(score.value[m], row[m]) for m in METRICS), (score.value, {m: row[m] for m in METRICS})
        assert score.metadata["signature"] == row["signature"] and RAW_NED_SIGNATURE in row["signature"]
        assert score.metadata["truncated"] == row["truncated"] and score.answer == answers[str(s.id)]
    assert {r["ned"] for r in rows.values()} >= {0.0, 1.0}  # exact and empty answers both scored
    # Inspect's means are the leaderboard's averages (TEDS over tables only)
    means = {sc.name: sc.metrics["mean"].value for sc in log.results.scores}  # type: ignore[union-attr]
    for m in METRICS:
        values = [r[m] for r in rows.values() if not math.isnan(r[m])]
        assert math.isclose(means[m], sum(values) / len(values), rel_tol=1e-12, abs_tol=1e-15), m


def test_origami_mcq_in_inspect_scores_as_shredfolds_score_jobs(tiny_export: TinyExport, copy: tuple[Plan, Store, Path], tmp_path: Path) -> None:
    from shredfold.origami_bench.items import MCQ_STAGE

    plan, store, work = copy
    items = [i for s in plan.sets_of("origami_mcq") for i in s.items]
    answers = {}
    for n, item in enumerate(items):
        right = store.get_json(MCQ_STAGE, item.key, "item.json")["answer"]
        wrong = "B" if right != "B" else "C"
        answers[item.key] = [f'{{"answer": "{right}"}}', f'{{"answer": "{wrong}"}}', "I cannot tell."][n % 3]
    agent = next(m for m in plan.spec.models if m.id == "origami-random")
    model = Scripted(agent, answers)
    rows = shredfold_rows(plan, store, work, "origami_mcq", model)
    assert len(rows) == 6

    log = run(make_task("origami_mcq", export=str(tiny_export.out)), mockllm(lambda m: answers[model.asked[messages_print(m)]]), tmp_path / "logs")
    assert log.samples is not None and sorted(str(s.id) for s in log.samples) == sorted(rows)
    for s in log.samples:
        value, row = s.scores["shredfold_scorer"].value, rows[str(s.id)]
        assert (value["correct"], value["invalid"]) == (row["correct"], row["invalid"])
    assert {r["correct"] for r in rows.values()} == {0.0, 1.0} and {r["invalid"] for r in rows.values()} == {0, 1}
    accuracy = next(sc for sc in log.results.scores if sc.name == "correct").metrics["mean"].value  # type: ignore[union-attr]
    assert accuracy == sum(r["correct"] for r in rows.values()) / len(rows)


def test_a_spec_gives_the_same_samples_as_its_export(tiny_export: TinyExport) -> None:
    for name, split in (("shredbench", None), ("origami_mcq", "mcq_causal")):
        from_export = make_task(name, export=str(tiny_export.out), split=split).dataset
        from_spec = make_task(name, spec=str(tiny_export.spec), results=str(tiny_export.results), split=split).dataset
        assert len(from_export) == len(from_spec) > 0
        for a, b in zip(from_export, from_spec, strict=True):
            assert (a.id, a.target, a.metadata) == (b.id, b.target, b.metadata)
            assert messages_print(a.input) == messages_print(b.input)  # type: ignore[arg-type]


def test_the_paper_protocol_and_image_options(tiny_export: TinyExport) -> None:
    from PIL import Image

    rows = {r["key"]: r for r in pq.read_table(next((tiny_export.out / "data" / "shredbench").glob("*.parquet"))).to_pylist()}
    paper = make_task("shredbench", export=str(tiny_export.out), protocol="paper").dataset
    for s in paper:
        row = rows[str(s.id)]
        [(_, text, images)] = [m for m in messages_print(s.input) if m[0] == "user"]  # type: ignore[arg-type]
        assert text == PAPER_TASK and images == (_sha(row["paper_image"]["bytes"]),)
        assert s.target == row["source"] and s.metadata["protocol"] == "paper"
    small = make_task("shredbench", export=str(tiny_export.out), image_mode="composite", max_side=128).dataset
    for s in small:
        [image] = [c for m in s.input for c in m.content if isinstance(c, ContentImage)]  # type: ignore[union-attr]
        with Image.open(io.BytesIO(base64.b64decode(image.image.split(",", 1)[1]))) as img:
            assert max(img.size) == 128


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"protocol": "fax"}, "shredbench option protocol: Input should be 'shredfold' or 'paper'"),
        ({"colour": "red"}, "shredbench option colour: Extra inputs are not permitted"),
        ({"split": "train"}, "shredbench has no split 'train' (it has test)"),
        ({"max_side": 10}, "max_side: 10 is not a whole number of pixels >= 64"),
    ],
)
def test_a_wrong_option_is_one_line(tiny_export: TinyExport, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="^.*$") as exc:
        make_task("shredbench", export=str(tiny_export.out), **kwargs)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_changed_or_absent_export_is_refused(tiny_export: TinyExport, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a shredfold export"):
        make_task("origami_mcq", export=str(tmp_path))
    changed = tmp_path / "changed"
    shutil.copytree(tiny_export.out, changed)
    data = next((changed / "data" / "origami_mcq").glob("mcq_assoc-*.parquet"))
    data.write_bytes(data.read_bytes()[:-9] + b"corrupted")
    with pytest.raises(SourceError, match="SHA-256 differs"):
        make_task("origami_mcq", export=str(changed))


# ---------------------------------------------------------------- the entry point


def entry_point_dist(folder: Path) -> Path:
    """A distribution declaring the inspect_ai entry point exactly as pyproject.toml does, so
    Inspect finds the tasks as it will once the package is installed (without re-pointing the
    shared venv's editable install)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    assert declared == {"shredfold": "shredfold.inspect_eval._registry"}
    dist = folder / "shredfold_entry_points-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shredfold-entry-points\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\n" + "".join(f"{k} = {v}\n" for k, v in declared.items()))
    return folder


def child_env(path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(path)]), **extra}


def test_inspect_finds_the_tasks_by_name_through_the_entry_point(tiny_export: TinyExport, tmp_path: Path) -> None:
    code = f"""
import json
from inspect_ai.util import registry_create
made = {{name: registry_create("task", "shredfold/" + name, export={str(tiny_export.out)!r})
        for name in ("shredbench", "origami_mcq")}}
print(json.dumps({{name: [t.name, len(t.dataset)] for name, t in made.items()}}))
"""
    env = child_env(entry_point_dist(tmp_path / "dist"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == {"shredbench": ["shredfold/shredbench", 4], "origami_mcq": ["shredfold/origami_mcq", 6]}


def test_the_installed_package_declares_the_entry_point() -> None:
    from importlib import metadata

    ours = [ep for ep in metadata.entry_points(group="inspect_ai") if ep.dist is not None and ep.dist.name == "shredfold"]
    if not ours:
        pytest.skip("the venv's shredfold was installed before the inspect_ai entry point: reinstall it (pip install -e '.[test]')")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    assert {ep.name: ep.value for ep in ours} == declared


@pytest.mark.slow
def test_the_inspect_cli_runs_shredbench_on_an_openai_compatible_server(
    tiny_export: TinyExport, tmp_path: Path, loopback: Loopback
) -> None:
    """`inspect eval shredfold/shredbench` with Inspect's openai-api provider, against
    `shredfold serve --model oracle` on loopback: Inspect's scores are shredfold's for the
    oracle's answers."""
    server = loopback("oracle", results=tiny_export.results, log_path=None)
    env = child_env(entry_point_dist(tmp_path / "dist"), SHREDFOLD_BASE_URL=server.url, SHREDFOLD_API_KEY="unused")
    cmd = [str(Path(sys.executable).with_name("inspect")), "eval", "shredfold/shredbench", "--model",
           "openai-api/shredfold/oracle", "-T", f"export={tiny_export.out}", "-T", "image_mode=composite",
           "--log-dir", str(tmp_path / "logs"), "--log-format", "json", "--display", "plain"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [path] = (tmp_path / "logs").glob("*.json")
    log = json.loads(path.read_text())
    assert log["status"] == "success" and log["eval"]["task"] == "shredfold/shredbench" and len(log["samples"]) == 4
    for s in log["samples"]:
        facts, score = s["metadata"], s["scores"]["shredfold_scorer"]
        ours = score_text(score["answer"], facts["truth"], facts["truth_html"], facts["kind"], facts["lang"])
        assert all(same(float(score["value"][m]), ours[m]) for m in METRICS)
        assert score["value"]["ned"] == 0.0 and score["metadata"]["signature"] == ours["signature"]

"""Real ShredBench samples for the model-layer tests: made once per session, then copied.

Making a sample takes seconds, so the stage and end-to-end tests of the model layer share
one small set (news_en, N ∈ {1, 3}, two documents: four samples), built under a file lock
in the session's temporary folder so that pytest-xdist workers build it only once.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

SHRED = """\
shred:
  domains: [news_en]
  granularities: [1, 3]
  documents_per_domain: 2
"""
ITEMS = 4  # two documents at two granularities


def shared_samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``results/store/sample/…`` and ``results/sets/…`` for :data:`SHRED`."""
    from shredfold.plan import make_plan
    from shredfold.resolve import load_spec
    from shredfold.stages.build import run_set
    from shredfold.store import Store

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of this session
    cache = base / "model-layer-samples"
    with open(base / "model-layer-samples.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cache / "done").is_file():
            shutil.rmtree(cache, ignore_errors=True)
            spec = cache / "spec.yaml"
            spec.parent.mkdir(parents=True)
            spec.write_text("name: samples\n" + SHRED + "models: [oracle]\n")
            plan = make_plan(load_spec(spec))
            store = Store(cache / "results" / "store")
            for s in plan.item_sets.values():
                run_set(plan, s.key, str(cache / s.path), store)
            (cache / "done").touch()
    return cache


def new_workdir(samples: Path, dest: Path) -> Path:
    """A Snakemake working directory whose results already hold the samples."""
    shutil.copytree(samples / "results", dest / "results")
    (dest / "specs" / "models").mkdir(parents=True)
    return dest


def write_model(workdir: Path, model_id: str, **fields: Any) -> Path:
    path = workdir / "specs" / "models" / f"{model_id}.yaml"
    path.write_text(yaml.safe_dump({"id": model_id, **fields}, sort_keys=False))
    return path


def write_spec(workdir: Path, models: list[str], name: str = "spec.yaml") -> Path:
    path = workdir / "specs" / name
    path.write_text(
        f"name: {Path(name).stem}\n" + SHRED + "models:\n" + textwrap.indent("\n".join(f"- {m}" for m in models), "  ") + "\n"
    )
    return path


def http_model(url: str, **over: Any) -> dict[str, Any]:
    """Fields of an `openai`-adapter model pointed at `shredfold serve --model oracle`.

    The tests restart the server on a new free port, so the files declare one cache scope:
    every port is the same oracle, and its answers are shared between them.
    """
    fields: dict[str, Any] = {
        "adapter": "openai",
        "base_url": url,
        "cache_scope": "shredfold-serve-oracle",
        "model": "oracle",
        "api_key_env": None,
        # generous: on a loaded 2-core machine the loopback oracle can take seconds, and a
        # client timeout retries the request, which the tests counting requests would see
        "timeout_s": 60.0,
        "max_attempts": 5,
        "backoff_s": 0.05,
        "max_concurrency": 4,
        "price_input_per_mtok": 1.0,
        "price_output_per_mtok": 4.0,
        "images": {"max_side": 8192},  # unchanged bytes, so the server can find the sample
    }
    fields.update(over)
    return fields

"""The data set card (``README.md``): YAML metadata the Hub and ``datasets`` read (configs,
data files, features, licences), then the text a person reads: what each table holds, the
protocol and settings, the licences, how to load and evaluate it, and the provenance (the
shredfold version, stage versions and metric signatures, the spec as written, every key).

Pure: values in, text out; the same values give the same text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import yaml

from shredfold.tasks.base import DataCard, Licence, Table

if TYPE_CHECKING:
    import datasets

    from shredfold.export.hf import SplitWritten


def _yaml(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True, width=1000)


def _fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def licences_of(cards: Sequence[DataCard]) -> list[Licence]:
    seen: dict[tuple[str, str], Licence] = {}
    for c in cards:
        for lic in c.licences:
            seen.setdefault((lic.what, lic.name), lic)
    return list(seen.values())


def metadata(prov: Mapping[str, Any], cards: Sequence[tuple[Table, DataCard, datasets.Features]],
             splits: Sequence[SplitWritten]) -> dict[str, Any]:  # fmt: skip
    """The card's YAML header."""
    written = {(s.config, s.split): s for s in splits}
    configs: dict[str, dict[str, Any]] = {}
    infos: dict[str, dict[str, Any]] = {}
    for table, _, feats in cards:
        config = configs.setdefault(table.config, {"config_name": table.config, "data_files": []})
        done = written[table.config, table.split]
        config["data_files"].append(
            {"split": table.split, "path": [f"data/{table.config}/{f}" for f in done.files]}
        )
        info = infos.setdefault(
            table.config, {"config_name": table.config, "features": feats._to_yaml_list(), "splits": []}
        )
        info["splits"].append({"name": table.split, "num_bytes": done.num_bytes, "num_examples": done.rows})
    first = next(iter(configs.values()))
    first["default"] = True  # load_dataset(OUT) without a config name loads the first
    hub_ids = list(dict.fromkeys(lic.hub_id for lic in licences_of([c for _, c, _ in cards])))
    return {
        "pretty_name": f"shredfold: {prov['spec']['name']}",
        "license": hub_ids[0] if len(hub_ids) == 1 else hub_ids,
        "tags": ["shredfold", "benchmark", "multimodal"],
        "configs": list(configs.values()),
        "dataset_info": list(infos.values()),
    }


def card_text(prov: Mapping[str, Any], cards: Sequence[tuple[Table, DataCard, datasets.Features]],
              splits: Sequence[SplitWritten]) -> str:  # fmt: skip
    spec = prov["spec"]
    written = {(s.config, s.split): s for s in splits}
    out = ["---", _yaml(metadata(prov, cards, splits)).rstrip(), "---", ""]
    out += [
        f"# shredfold: {spec['name']}",
        "",
        f"The items of the spec `{spec['file']}` (SHA-256 `{spec['sha256']}`), exported by "
        f"`shredfold export --format hf` (shredfold {prov['shredfold']}): every image is the "
        "bytes shredfold stores and sends, every key the content key its pipeline uses.",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
    ]
    shown: set[str] = set()
    for table, _, _ in cards:
        if table.config not in shown:
            shown.add(table.config)
            out.append(f'load_dataset("PATH", "{table.config}", split="{table.split}")')
    out += ["```", ""]
    by_config: dict[str, tuple[DataCard, list[Table]]] = {}
    for table, card, _ in cards:
        by_config.setdefault(table.config, (card, []))[1].append(table)
    for config, (card, tables) in by_config.items():
        out += [f"## `{config}`", "", card.summary, ""]
        out += ["| split | rows | left out |", "|---|---|---|"]
        for t in tables:
            w = written[t.config, t.split]
            out.append(f"| `{t.split}` | {w.rows} | {w.left_out} |")
        out += ["", "(*Left out*: planned items no model is asked, e.g. multiple-choice items whose build "
                "found no answerable set of pictures.)", ""]  # fmt: skip
        if card.facts:
            out += ["| setting | value |", "|---|---|"]
            out += [f"| {k} | `{_cell(v)}` |" for k, v in card.facts.items()]
            out.append("")
        out += ["| column | type | what |", "|---|---|---|"]
        out += [f"| `{c.name}` | {c.kind} | {_cell(c.doc)} |" for c in tables[0].columns]
        out.append("")
    out += ["## Licences", "", "| what | licence | terms |", "|---|---|---|"]
    for lic in licences_of([c for c, _ in by_config.values()]):
        out.append(f"| {_cell(lic.what)} | {_cell(lic.name)} | {_cell(lic.source) or '—'} |")
    out += [
        "",
        "## Evaluating",
        "",
        "Shredfold's tasks run it inside Inspect AI with shredfold's own scorers "
        "(`pip install 'shredfold[inspect]'`):",
        "",
        "```bash",
        *[f"inspect eval shredfold/{c} --model MODEL -T export=PATH" for c in by_config],
        "```",
        "",
        "(only the tasks shredfold registers with Inspect run there; the others are played by "
        "shredfold's own pipeline.)",
        "",
        "## Provenance",
        "",
    ]
    for t in prov["tasks"]:
        out += [f"### task `{t['task']}` (config `{t['config']}`)", ""]
        out += [f"- stage `{name}` version {version}" for name, version in t["stages"].values()]
        out += [f"- signature `{k}`: `{_cell(v)}`" for k, v in t["signatures"].items()]
        out += ["", "<details><summary>Every set and item key</summary>", ""]
        for sp in t["splits"]:
            for s in sp["sets"]:
                labels = ", ".join(f"{k}={v}" for k, v in s["labels"].items())
                out.append(f"- split `{sp['split']}`, set {labels}: `{s['key']}`")
                out += [f"  - `{k}`" for k in s["items"]]
        out += ["", "</details>", ""]
    out += ["### The spec as written", "", _fence(spec["text"], "yaml"), ""]
    out += [
        "`shredfold.json` holds the same provenance for programs, with the SHA-256 of every data file.",
        "",
    ]
    return "\n".join(out)

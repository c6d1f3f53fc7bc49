"""Reading outside sample sets: the folder layout, the manifest, keys, and every refusal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shredfold.cli import main
from shredfold.plan import make_plan
from shredfold.resolve import load_spec
from shredfold.shred import outside
from shredfold.shred.outside import OutsideSetError, read_folder, read_manifest
from tests.shred.outside_sets import folder_set, image, manifest_set

MEMO = {"id": "memo", "domain": "news_en", "n": 2, "images": ["img/memo-1.png", "img/memo-2.png"], "truth": "truth/memo.md"}


def keys(samples: list[outside.OutsideSample]) -> dict[str, str]:
    return {f"{s.doc.domain}/{s.n}/{s.doc.doc_id}": s.key for s in samples}


# ---------------------------------------------------------------- layout and manifest


def test_a_folder_gives_domain_n_and_id_from_its_layout(tmp_path: Path) -> None:
    samples = read_folder(folder_set(tmp_path / "set"))
    assert sorted(keys(samples)) == ["news_en/2/memo", "table/3/parts"]
    memo, parts = sorted(samples, key=lambda s: s.doc.domain)
    assert memo.ref.composite is None and [Path(p.path).name for p in memo.ref.pieces] == ["piece_1.png", "piece_2.png"]
    assert memo.ref.truth_format == "md" and memo.doc.text.startswith("# A memo")
    assert parts.ref.pieces == () and Path(parts.ref.composite.path).name == "composite.jpg"  # type: ignore[union-attr]
    assert parts.doc.text.startswith("<table>")  # a Markdown table is kept as HTML


def test_pieces_are_presented_in_natural_name_order(tmp_path: Path) -> None:
    d = tmp_path / "set" / "code_python" / "11" / "script"
    for k in range(1, 12):
        image(d / f"piece_{k}.png", f"line {k}")
    (d / "truth.txt").write_text("print('hi')\n")
    (sample,) = read_folder(tmp_path / "set")
    assert [Path(p.path).stem for p in sample.ref.pieces][:3] == ["piece_1", "piece_2", "piece_3"]


def test_a_manifest_lists_the_same_samples_with_the_same_keys(tmp_path: Path) -> None:
    from_folder = keys(read_folder(folder_set(tmp_path / "set")))
    from_manifest = keys(read_manifest(manifest_set(tmp_path / "m")))
    # Only the bytes (and id, domain, n, truth format) make a key, never where files lie.
    assert from_manifest == from_folder


# ---------------------------------------------------------------- keys


def test_a_moved_folder_keeps_its_keys(tmp_path: Path) -> None:
    before = keys(read_folder(folder_set(tmp_path / "a")))
    shutil.move(tmp_path / "a", tmp_path / "elsewhere" / "b")
    assert keys(read_folder(tmp_path / "elsewhere" / "b")) == before


def test_the_same_bytes_give_the_same_key_and_one_changed_byte_a_new_one(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    before = keys(read_folder(root))
    assert keys(read_folder(root)) == before
    truth = root / "news_en" / "2" / "memo" / "truth.md"
    truth.write_bytes(truth.read_bytes().replace(b"noon", b"moon"))
    after = keys(read_folder(root))
    assert after["news_en/2/memo"] != before["news_en/2/memo"]
    assert after["table/3/parts"] == before["table/3/parts"]
    image(root / "table" / "3" / "parts" / "composite.jpg", "name qty bolts 12 nuts 31", size=(400, 300))
    assert keys(read_folder(root))["table/3/parts"] != before["table/3/parts"]


def test_a_truth_read_as_text_or_markdown_is_a_different_sample(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    before = keys(read_folder(root))["news_en/2/memo"]
    (root / "news_en" / "2" / "memo" / "truth.md").rename(root / "news_en" / "2" / "memo" / "truth.txt")
    assert keys(read_folder(root))["news_en/2/memo"] != before


# ---------------------------------------------------------------- refusals (folder)


def refused(read, path: Path) -> str:  # noqa: ANN001
    with pytest.raises(OutsideSetError) as exc:
        read(path)
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_an_unknown_domain_folder_is_named(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    (root / "recipes" / "2").mkdir(parents=True)
    assert refused(read_folder, root) == f"{root / 'recipes'}: unknown domain 'recipes'; expected one of news_en, news_zh, code_python, code_java, code_cpp, table"


@pytest.mark.parametrize("name", ["0", "eight", "-3", "999", "08", "\u0663"])
def test_n_must_be_a_positive_whole_number(tmp_path: Path, name: str) -> None:
    root = folder_set(tmp_path / "set")
    (root / "news_en" / name).mkdir()
    assert refused(read_folder, root).startswith(f"{root / 'news_en' / name}: expected a folder named by n")


def test_an_image_pillow_cannot_open_is_named_with_the_cause(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    bad = root / "news_en" / "2" / "memo" / "piece_2.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really")
    assert refused(read_folder, root).startswith(f"{bad}: not an image Pillow can read (")


@pytest.mark.parametrize("keep", [0.5, 0.9])
@pytest.mark.parametrize("name", ["table/3/parts/composite.jpg", "news_en/2/memo/piece_1.png"])
def test_a_truncated_image_is_refused_at_plan_time(tmp_path: Path, keep: float, name: str) -> None:
    root = folder_set(tmp_path / "set")
    photo = root / name
    data = photo.read_bytes()
    photo.write_bytes(data[: int(len(data) * keep)])
    assert refused(read_folder, root).startswith(f"{photo}: not an image Pillow can read (")


def test_a_truth_that_is_not_utf8_is_named_with_the_offset(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    truth = root / "news_en" / "2" / "memo" / "truth.md"
    truth.write_bytes(b"caf\xe9 au lait\n")
    assert refused(read_folder, root) == f"{truth}: not UTF-8 text (byte 0xe9 at offset 3)"


def test_a_sample_without_truth_or_with_a_stray_file_is_refused(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    memo = root / "news_en" / "2" / "memo"
    (memo / "notes.txt").write_text("hm")
    assert refused(read_folder, root).startswith(f"{memo / 'notes.txt'}: not part of the layout")
    (memo / "notes.txt").unlink()
    (memo / "truth.md").unlink()
    assert refused(read_folder, root) == f"{memo}: no truth file (truth.md, truth.txt or truth.html)"


def test_the_number_of_pieces_must_be_n(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    (root / "news_en" / "2" / "memo").rename(root / "news_en" / "2" / "x")
    (root / "news_en" / "5").mkdir()
    (root / "news_en" / "2" / "x").rename(root / "news_en" / "5" / "memo")
    assert refused(read_folder, root) == f"{root / 'news_en' / '5' / 'memo'}: n is 5 but there are 2 piece images"


def test_a_table_truth_must_be_a_table(tmp_path: Path) -> None:
    root = folder_set(tmp_path / "set")
    truth = root / "table" / "3" / "parts" / "truth.md"
    truth.write_text("just words\n")
    assert refused(read_folder, root).startswith(f"{truth}: no Markdown pipe table")
    truth.rename(truth.with_suffix(".txt"))
    assert refused(read_folder, root).startswith(f"{truth.with_suffix('.txt')}: a table's truth is .html or .md")


def test_images_and_truths_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = folder_set(tmp_path / "set")
    photo = root / "table" / "3" / "parts" / "composite.jpg"
    monkeypatch.setattr(outside, "MAX_IMAGE_PIXELS", 100_000)
    assert refused(read_folder, root) == f"{photo}: image of 400x300 = 120,000 pixels is over the 100,000-pixel limit"
    monkeypatch.setattr(outside, "MAX_IMAGE_BYTES", 100)
    assert "-byte limit" in refused(read_folder, root) and "image of" in refused(read_folder, root)
    monkeypatch.setattr(outside, "MAX_IMAGE_BYTES", 2**20)
    monkeypatch.setattr(outside, "MAX_IMAGE_PIXELS", 10**6)
    monkeypatch.setattr(outside, "MAX_TRUTH_BYTES", 10)
    truth = root / "news_en" / "2" / "memo" / "truth.md"
    assert refused(read_folder, root) == f"{truth}: truth of {truth.stat().st_size} bytes is over the 10-byte limit"


# ---------------------------------------------------------------- refusals (manifest)


def manifest_refusal(tmp_path: Path, *lines: str) -> str:
    path = manifest_set(tmp_path / "m")
    path.write_text("".join(line + "\n" for line in lines))
    return refused(read_manifest, path).replace(str(path), "M")


def test_a_line_that_is_not_json_is_named_with_its_number(tmp_path: Path) -> None:
    assert manifest_refusal(tmp_path, json.dumps(MEMO), "{oops") == "M:2: bad JSON: Expecting property name enclosed in double quotes (column 2)"


def test_a_missing_image_is_named(tmp_path: Path) -> None:
    msg = manifest_refusal(tmp_path, json.dumps({**MEMO, "images": ["img/memo-1.png", "img/gone.png"]}))
    assert msg == f"M:1: {tmp_path / 'm' / 'img' / 'gone.png'}: missing (image not found)"


@pytest.mark.parametrize(
    ("change", "cause"),
    [
        ({"domain": "poetry"}, "unknown domain 'poetry'; expected one of news_en"),
        ({"n": 0}, "n 0 is not a whole number from 1 to 256"),
        ({"n": "2"}, "n '2' is not a whole number from 1 to 256"),
        ({"n": 2.5}, "n 2.5 is not a whole number from 1 to 256"),
        ({"id": "../x"}, "id '../x' is not 1-128 letters"),
        ({"n": 3}, "n is 3 but 2 images (give one composite or the 3 pieces)"),
        ({"images": []}, "images must be a non-empty list of paths"),
        ({"images": ["../outside.png"]}, "'../outside.png' leaves the manifest's folder"),
        ({"images": ["/etc/passwd"]}, "'/etc/passwd' is absolute; paths are relative to the manifest"),
        ({"truth": "../../secret.md"}, "'../../secret.md' leaves the manifest's folder"),
        ({"extra": 1}, "unknown field(s) extra"),
    ],
)
def test_each_bad_field_is_named_with_its_line(tmp_path: Path, change: dict, cause: str) -> None:
    assert manifest_refusal(tmp_path, json.dumps({**MEMO, **change})).startswith(f"M:1: {cause}")


def test_a_truth_given_inline_is_the_same_sample_as_its_file(tmp_path: Path) -> None:
    from tests.shred.outside_sets import NEWS

    path = manifest_set(tmp_path / "m")
    by_file = keys(read_manifest(path))
    path.write_text(json.dumps({**MEMO, "truth": {"text": NEWS, "format": "md"}}) + "\n")
    (inline,) = read_manifest(path)
    assert inline.key == by_file["news_en/2/memo"] and inline.ref.truth.path is None
    path.write_text(json.dumps({**MEMO, "truth": {"text": NEWS, "format": "html"}}) + "\n")
    assert refused(read_manifest, path) == f"{path}:1: truth: an HTML truth is for the table domain; news_en's is .md or .txt"
    path.write_text(json.dumps({**MEMO, "truth": {"text": NEWS}}) + "\n")
    assert refused(read_manifest, path).startswith(f'{path}:1: an inline truth is {{"text"')


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    other = {**MEMO, "n": 1, "images": ["img/memo-1.png"]}  # the same id at another N is fine
    msg = manifest_refusal(tmp_path, json.dumps(MEMO), json.dumps(other), json.dumps(MEMO))
    assert msg == "M:3: duplicate id 'memo' at news_en N=2 (first on line 1)"


def test_a_manifest_may_start_with_a_bom_and_hold_blank_lines(tmp_path: Path) -> None:
    path = manifest_set(tmp_path / "m")
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(MEMO).encode() + b"\n\n  \n")
    assert list(keys(read_manifest(path))) == ["news_en/2/memo"]


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    assert manifest_refusal(tmp_path, json.dumps({"id": "memo"})) == "M:1: missing field(s) domain, images, n, truth"


# ---------------------------------------------------------------- in a spec


def spec(tmp_path: Path, shred: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(f"name: outside\nshred:\n{shred}models: [oracle]\n")
    return path


def test_a_spec_plans_one_set_per_domain_and_n_of_the_data(tmp_path: Path) -> None:
    folder_set(tmp_path / "set")
    plan = make_plan(load_spec(spec(tmp_path, "  samples: {folder: set}\n")))
    assert [dict(s.labels) for s in plan.item_sets.values()] == [{"domain": "news_en", "n": 2}, {"domain": "table", "n": 3}]
    assert all(i.outside is not None and i.render is None for s in plan.item_sets.values() for i in s.items)


def test_the_spec_domains_and_granularities_filter_the_data(tmp_path: Path) -> None:
    folder_set(tmp_path / "set")
    plan = make_plan(load_spec(spec(tmp_path, "  samples: {folder: set}\n  domains: [table]\n")))
    assert [dict(s.labels) for s in plan.item_sets.values()] == [{"domain": "table", "n": 3}]
    from shredfold.spec import SpecError

    # named after the setting that asks for it, with its line
    with pytest.raises(SpecError, match=r"spec.yaml:\d+: shred.granularities: .*set: the spec asks for N 8 but the set has none \(it has 2, 3\)"):
        make_plan(load_spec(spec(tmp_path, "  samples: {folder: set}\n  granularities: [2, 8]\n")))


def test_samples_replace_the_corpus(tmp_path: Path) -> None:
    from shredfold.spec import SpecError

    folder_set(tmp_path / "set")
    with pytest.raises(SpecError, match="give 'corpus' .* or 'samples' .*, not both"):
        load_spec(spec(tmp_path, "  samples: {folder: set}\n  corpus: {builtin: false}\n"))
    with pytest.raises(SpecError, match="give exactly one of 'folder' and 'manifest'"):
        load_spec(spec(tmp_path, "  samples: {}\n"))
    with pytest.raises(SpecError, match="give domains and granularities .* or 'samples'"):
        load_spec(spec(tmp_path, "  documents_per_domain: 2\n"))
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(spec(tmp_path, "  samples: {manifest: nowhere.jsonl}\n"))


def test_a_plan_error_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = manifest_set(tmp_path / "m")
    path.write_text(json.dumps(MEMO) + "\nnot json\n")
    assert main(["plan", str(spec(tmp_path, "  samples: {manifest: m/set.jsonl}\n"))]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.endswith(f"{path}:2: bad JSON: Expecting value (column 1)")
    assert "Traceback" not in err


def test_a_decoded_image_is_not_decoded_again_by_the_next_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    from shredfold.store import Store

    root = folder_set(tmp_path / "set")
    store = Store(tmp_path / "store")
    read_folder(root, outside.Checks(store, write=False))
    assert list(store.keys(outside.CHECK_STAGE)) == []  # a read-only plan writes nothing
    first = keys(read_folder(root, outside.Checks(store, write=True)))
    assert len(list(store.keys(outside.CHECK_STAGE))) == 3

    def no_decoding(*args: object, **kwargs: object) -> None:
        raise AssertionError("decoded again")

    monkeypatch.setattr(Image, "open", no_decoding)
    assert keys(read_folder(root, outside.Checks(store))) == first
    # a changed image is new content: checked again
    image(root / "news_en" / "2" / "memo" / "piece_1.png", "other", mode="RGBA")
    with pytest.raises(OutsideSetError, match="decoded again"):
        read_folder(root, outside.Checks(store))

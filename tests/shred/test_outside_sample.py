"""Outside samples stored in the sample layout that query, score and report read."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from shredfold.calls import Request
from shredfold.shred.formats import COMPOSITE_FILE
from shredfold.shred.outside import OutsideSetError, read_folder
from shredfold.shred.outside_sample import truths, write_outside_sample
from shredfold.shred.sample_folder import load_hidden, load_public, load_truth
from tests.shred.outside_sets import NEWS, folder_set, image


@pytest.fixture
def samples(tmp_path: Path) -> dict[str, object]:
    return {s.doc.domain: s for s in read_folder(folder_set(tmp_path / "set"))}


def stored(sample, tmp_path: Path) -> Path:  # noqa: ANN001
    out = tmp_path / "stored" / sample.key
    out.mkdir(parents=True)
    write_outside_sample(sample, out)
    return out


def test_pieces_are_stored_in_order_and_a_composite_is_made_from_them(samples, tmp_path: Path) -> None:
    out = stored(samples["news_en"], tmp_path)
    public = load_public(out)
    assert public.meta["piece_files"] == ["pieces/00.png", "pieces/01.png"] and public.meta["origin"] == "outside"
    given = Image.open(samples["news_en"].ref.pieces[0].path)
    with Image.open(io.BytesIO(public.pieces[0])) as first:
        assert first.format == "PNG" and first.mode == "RGBA" and first.tobytes() == given.tobytes()
    with Image.open(io.BytesIO(public.composite)) as table:
        # both scraps laid on a table top: bigger than either
        assert table.mode == "RGB" and table.width * table.height > 2 * given.width * given.height
    # the scatter is seeded from the key: the same sample stores the same bytes
    again = tmp_path / "again"
    again.mkdir()
    write_outside_sample(samples["news_en"], again)
    assert (again / COMPOSITE_FILE).read_bytes() == (out / COMPOSITE_FILE).read_bytes()


def test_a_photograph_only_sample_has_no_piece_files(samples, tmp_path: Path) -> None:
    public = load_public(stored(samples["table"], tmp_path))
    assert public.pieces == [] and public.meta["n"] == 3
    with Image.open(io.BytesIO(public.composite)) as img:
        assert img.size == (400, 300)


def test_a_jpeg_photograph_is_kept_as_given_without_its_metadata(samples, tmp_path: Path) -> None:
    # A phone's photo carries EXIF (here a GPS block and the camera's make) and a comment:
    # the stored composite keeps the photo's compressed data, so the models see what the
    # user took, not a second generation of JPEG loss, and the metadata is gone.
    photo = Path(samples["table"].ref.composite.path)
    exif = Image.Exif()
    exif[0x010F] = "PhoneMaker"  # Make
    exif[0x8825] = {1: "N", 2: (52.0, 31.0, 12.0)}  # GPS IFD: latitude
    with Image.open(photo) as img:
        img.save(photo, quality=88, exif=exif, comment=b"my kitchen table")
    s = read_folder(folder_set_kept(tmp_path / "set", photo))[0]
    out = stored(s, tmp_path)
    kept = (out / COMPOSITE_FILE).read_bytes()
    given = photo.read_bytes()
    assert b"PhoneMaker" in given and b"kitchen" in given
    assert b"PhoneMaker" not in kept and b"kitchen" not in kept and b"Exif" not in kept
    scan = given.index(b"\xff\xda")
    assert kept.endswith(given[scan:])  # the same compressed pixels
    with Image.open(photo) as a, Image.open(io.BytesIO(kept)) as b:
        assert a.tobytes() == b.tobytes()


def test_a_photograph_that_must_be_turned_is_encoded_anew_upright(samples, tmp_path: Path) -> None:
    photo = Path(samples["table"].ref.composite.path)
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: shown turned 90 degrees clockwise
    with Image.open(photo) as img:
        img.save(photo, quality=88, exif=exif)
    s = read_folder(folder_set_kept(tmp_path / "set", photo))[0]
    with Image.open(io.BytesIO((stored(s, tmp_path) / COMPOSITE_FILE).read_bytes())) as img:
        assert img.size == (300, 400) and not img.getexif()


def folder_set_kept(root: Path, photo: Path) -> Path:
    """The photograph-only table sample of ``folder_set`` alone, with ``photo`` as its image."""
    import shutil

    sample = root.parent / "one" / "table" / "3" / "parts"
    sample.mkdir(parents=True)
    shutil.copy(photo, sample / "composite.jpg")
    for truth in photo.parent.iterdir():
        if truth.name != photo.name:
            shutil.copy(truth, sample / truth.name)
    return root.parent / "one"


def test_hidden_metadata_says_where_the_sample_came_from(samples, tmp_path: Path) -> None:
    s = samples["news_en"]
    hidden = load_hidden(stored(s, tmp_path))
    assert hidden["origin"] == "outside" and hidden["doc_id"] == "memo" and hidden["composite_made"]
    assert hidden["sha256"]["pieces"] == [p.sha256 for p in s.ref.pieces] and "polygons" not in hidden


def test_markdown_prose_is_scored_as_seen_and_as_written(samples, tmp_path: Path) -> None:
    truth = load_truth(stored(samples["news_en"], tmp_path))
    assert truth.text == "A memo\nThe meeting moved to Thursday at noon."  # markup dropped
    assert truth.source == NEWS and truth.html is None  # the paper protocol's truth


def test_a_table_is_kept_as_html_and_read_as_rows(samples, tmp_path: Path) -> None:
    truth = load_truth(stored(samples["table"], tmp_path))
    assert truth.html is not None and truth.html.startswith("<table>") and truth.source == truth.html
    assert truth.text == "name | qty\nbolts | 12\nnuts | 30"


def test_a_code_truth_in_markdown_is_the_code_of_its_fence(tmp_path: Path) -> None:
    d = tmp_path / "set" / "code_python" / "1" / "hello"
    image(d / "composite.png", "def f()")
    (d / "truth.md").write_text("```python\ndef f():\n    return 1\n```\n")
    (sample,) = read_folder(tmp_path / "set")
    assert truths(sample) == ("def f():\n    return 1", "def f():\n    return 1", None)


def test_a_file_changed_after_planning_is_refused(samples, tmp_path: Path) -> None:
    s = samples["table"]
    image(Path(s.ref.composite.path), "edited", size=(400, 300))
    with pytest.raises(OutsideSetError, match=r"composite.jpg: changed since the plan was made"):
        stored(s, tmp_path)


def test_a_pieces_mode_model_is_shown_the_photograph(samples, tmp_path: Path) -> None:
    from shredfold.spec import ModelConfig
    from shredfold.store import Store
    from shredfold.tasks.shredbench.task import ShredItem, shred_request

    s = samples["table"]
    store = Store(tmp_path / "store")
    with store.writing("sample", s.key) as tmp:
        write_outside_sample(s, tmp)
    item = ShredItem(key=s.key, doc=s.doc, n=s.n, outside=s.ref)

    class Cell:  # what shred_request reads of a cell
        model = ModelConfig(id="m", adapter="oracle")

    class Job:
        spec = type("S", (), {"spec": type("X", (), {"shred": None})()})()

    Job.store = store  # type: ignore[attr-defined]
    request: Request = shred_request(Cell(), item, Job())  # type: ignore[arg-type]
    (msg,) = [m for m in request.messages if m.images]
    # a pieces-mode model (the default) sees the one photograph, flagged as a table top
    assert msg.images == (load_public(store.object("sample", s.key)).composite,) and request.item == s.key


def test_a_set_job_whose_file_changed_since_the_plan_fails_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from shredfold.cli import main
    from shredfold.plan import make_plan, write_plan
    from shredfold.resolve import load_spec

    folder_set(tmp_path / "set")
    (tmp_path / "spec.yaml").write_text("name: o\nshred:\n  samples: {folder: set}\nmodels: [oracle]\n")
    plan = make_plan(load_spec(tmp_path / "spec.yaml"))
    plan_file = tmp_path / write_plan(plan, tmp_path)
    table = next(s for s in plan.item_sets.values() if s.labels["domain"] == "table")
    photo = tmp_path / "set" / "table" / "3" / "parts" / "composite.jpg"
    image(photo, "edited", size=(400, 300))
    args = ["job", "set", "--plan", str(plan_file), "--key", table.key, "--out", str(tmp_path / "set.json")]
    assert main([*args, "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"error: {photo}: changed since the plan was made; run again to plan it anew"
    assert not (tmp_path / "set.json").exists()


def test_show_writes_an_outside_sample_and_names_what_it_has(samples, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from shredfold.cli import main
    from shredfold.store import Store

    s = samples["table"]
    store = Store(tmp_path / "results" / "store")
    with store.writing("sample", s.key) as tmp:
        write_outside_sample(s, tmp)
    out = tmp_path / "shown"
    assert main(["show", s.key[:10], "--out", str(out), "--results", str(tmp_path / "results")]) == 0
    assert capsys.readouterr().out.strip().endswith(f"({COMPOSITE_FILE}, source.txt, truth.txt)")
    assert (out / "truth.html").read_text().startswith("<table>") and not (out / "pieces").exists()

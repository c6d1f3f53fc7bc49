"""`shredfold weights fetch clip`: pinned open_clip weights into the cache SS reads, checked
by SHA-256 before they are put in place, never over a file the fetch did not write; SS then
finds them there with no network. The downloads are a small checkpoint made here, served
from a ``file://`` URL and from a loopback HTTP server."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from shredfold.cli import main
from shredfold.download import CACHE_ENV, FetchError
from shredfold.metrics import clip_weights as cw
from shredfold.metrics.clip import load_clip, weights_id
from shredfold.spec import ClipSettings
from tests.metrics.tiny_clip import NAME, tiny_weights

if TYPE_CHECKING:
    from tests.conftest import Loopback

pytest.importorskip("open_clip")
OPENAI = cw.pins()[("ViT-B-32", "openai")]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    for var in ("HF_HOME", "HF_HUB_CACHE"):  # open_clip's own cache: an empty one
        monkeypatch.setenv(var, str(tmp_path / "hf"))
    return tmp_path / "cache"


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, cw.Pin]:
    """A tiny checkpoint and a pin for it, in place of the package's pins."""
    folder = tmp_path / "made"
    folder.mkdir()
    config, weights = tiny_weights(folder, file=cw.WEIGHTS)
    data = weights.read_bytes()
    pin = dataclasses.replace(
        OPENAI, model=NAME, pretrained="tiny-tag", hf_repo="tests/tiny-clip", size=len(data), sha256=sha(data),
        quick_gelu=False,
    )  # fmt: skip
    monkeypatch.setattr(cw, "pins", lambda: {(pin.model, pin.pretrained): pin})
    return config, weights, pin


@pytest.fixture
def http_root(tmp_path: Path, loopback: Loopback) -> tuple[str, Path]:
    """A real HTTP server on loopback serving a folder."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *args: object) -> None:
            pass

    server = loopback.run(ThreadingHTTPServer(("127.0.0.1", 0), Quiet))
    return f"http://127.0.0.1:{server.server_address[1]}", root


def test_the_pin_is_the_file_open_clip_itself_downloads_for_the_tag() -> None:
    import open_clip
    from open_clip.constants import HF_SAFE_WEIGHTS_NAME, HF_WEIGHTS_NAME
    from open_clip.pretrained import _get_safe_alternatives

    cfg = open_clip.get_pretrained_cfg("ViT-B-32", "openai")
    repo, file = os.path.split(cfg["hf_hub"])
    assert OPENAI.hf_repo == repo and file == ""  # the repository's default file …
    assert list(_get_safe_alternatives(HF_WEIGHTS_NAME)) == [OPENAI.file] == [HF_SAFE_WEIGHTS_NAME]  # … as safetensors
    assert OPENAI.url == (
        "https://huggingface.co/timm/vit_base_patch32_clip_224.openai/resolve/"
        "a6f597a30f7b82c51704746581f9a4e41421e878/open_clip_model.safetensors"
    )
    assert (OPENAI.size, len(OPENAI.sha256), len(OPENAI.revision)) == (605_143_284, 64, 40)
    # what open_clip applies for the tag, and must be told for the file
    assert OPENAI.quick_gelu is cfg["quick_gelu"] is True
    assert (OPENAI.mean, OPENAI.std) == (tuple(cfg["mean"]), tuple(cfg["std"]))
    assert (OPENAI.interpolation, OPENAI.resize_mode) == (cfg["interpolation"], cfg["resize_mode"])
    assert weights_id(ClipSettings(model="ViT-B-32", pretrained="openai"))["sha256"] == OPENAI.sha256


def test_fetch_from_a_file_url_into_the_cache_then_ss_finds_it_offline(
    cache: Path, tiny: tuple[Path, Path, cw.Pin], tmp_path: Path
) -> None:
    import open_clip
    import torch
    from PIL import Image

    config, weights, pin = tiny
    settings = ClipSettings(model=str(config), pretrained=pin.pretrained)
    clip, why = load_clip(settings)
    assert clip is None and "run `shredfold weights fetch clip --model tiny-clip --pretrained tiny-tag`" in why

    got = cw.fetch_weights(pin, weights.as_uri())
    target = cache / "clip" / NAME / "tiny-tag" / cw.WEIGHTS
    assert got.changed and got.path == target and target.read_bytes() == weights.read_bytes()
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    assert json.loads((target.parent / cw.MARKER).read_text())["sha256"] == pin.sha256
    assert sorted(p.name for p in target.parent.iterdir()) == sorted([cw.WEIGHTS, cw.MARKER])  # no temporary left

    clip, why = load_clip(settings)
    assert clip is not None, why
    assert clip.label == f"{NAME}/tiny-tag {pin.sha256[:12]}"
    # the embedding is the checkpoint's own, computed with open_clip directly
    model, _, preprocess = open_clip.create_model_and_transforms(NAME, pretrained=str(weights))
    model.eval()
    png = _png()
    with torch.no_grad():
        want = model.encode_image(preprocess(Image.open(io.BytesIO(png)).convert("RGB")).unsqueeze(0))
    assert torch.allclose(clip.embed(png), want / want.norm(dim=-1, keepdim=True), atol=1e-6)

    inode = target.stat().st_ino
    again = cw.fetch_weights(pin, weights.as_uri())
    assert not again.changed and target.stat().st_ino == inode and "already there" in again.line()


def test_fetch_over_loopback_http_and_into_another_cache_folder(
    cache: Path, tiny: tuple[Path, Path, cw.Pin], http_root: tuple[str, Path], tmp_path: Path
) -> None:
    config, weights, pin = tiny
    base, root = http_root
    (root / "w.safetensors").write_bytes(weights.read_bytes())
    got = cw.fetch_weights(pin, f"{base}/w.safetensors", to=tmp_path / "elsewhere")
    assert got.path == tmp_path / "elsewhere" / NAME / "tiny-tag" / cw.WEIGHTS and got.path.is_file()
    assert not (cache / "clip").exists()
    assert load_clip(ClipSettings(model=str(config), pretrained=pin.pretrained))[0] is None  # not in the default cache
    clip, why = load_clip(ClipSettings(model=str(config), pretrained=pin.pretrained, cache_dir=tmp_path / "elsewhere"))
    assert clip is not None, why
    with pytest.raises(FetchError, match="download failed"):
        cw.fetch_weights(pin, f"{base}/missing.safetensors", to=tmp_path / "third")


def test_other_bytes_are_refused_naming_both_hashes_and_nothing_is_written(
    cache: Path, tiny: tuple[Path, Path, cw.Pin], tmp_path: Path
) -> None:
    _, weights, pin = tiny
    wrong = tmp_path / "wrong.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # the same size, one bit off
    wrong.write_bytes(bytes(data))
    with pytest.raises(FetchError) as info:
        cw.fetch_weights(pin, wrong.as_uri())
    assert f"SHA-256 {sha(bytes(data))}" in str(info.value) and f"the pin is {pin.sha256}" in str(info.value)
    assert "nothing written" in str(info.value)
    folder = cache / "clip" / NAME / "tiny-tag"
    assert list(folder.iterdir()) == []  # the download is gone with the refusal

    longer = tmp_path / "longer.safetensors"
    longer.write_bytes(weights.read_bytes() + b"\0")
    with pytest.raises(FetchError, match=f"larger than {pin.size} bytes"):
        cw.fetch_weights(pin, longer.as_uri())
    assert list(folder.iterdir()) == []


def test_a_file_the_fetch_did_not_write_is_never_touched(
    cache: Path, tiny: tuple[Path, Path, cw.Pin], tmp_path: Path
) -> None:
    config, weights, pin = tiny
    folder = cache / "clip" / NAME / "tiny-tag"
    folder.mkdir(parents=True)
    mine = folder / cw.WEIGHTS
    mine.write_bytes(b"a user's own file of the same name")
    (folder / "notes.txt").write_text("kept")
    with pytest.raises(FetchError) as info:
        cw.fetch_weights(pin, weights.as_uri())
    msg = str(info.value)
    assert f"SHA-256 {sha(mine.read_bytes())}" in msg and f"the pin is {pin.sha256}" in msg and "refusing to touch it" in msg
    assert mine.read_bytes() == b"a user's own file of the same name" and (folder / "notes.txt").read_text() == "kept"
    assert not (folder / cw.MARKER).exists()
    clip, why = load_clip(ClipSettings(model=str(config), pretrained=pin.pretrained))
    assert clip is None and "fetch clip" in why  # its bytes are not the pin's: never used

    # the pinned bytes put there by hand are used as they are, and left alone
    mine.write_bytes(weights.read_bytes())
    assert not cw.fetch_weights(pin, weights.as_uri()).changed
    assert load_clip(ClipSettings(model=str(config), pretrained=pin.pretrained))[0] is not None


def test_same_sized_other_bytes_in_open_clips_cache_are_not_used(
    cache: Path, tiny: tuple[Path, Path, cw.Pin], tmp_path: Path
) -> None:
    config, weights, pin = tiny
    snapshot = tmp_path / "hf" / "models--tests--tiny-clip" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    data = bytearray(weights.read_bytes())
    data[100] ^= 1
    (snapshot / cw.WEIGHTS).write_bytes(bytes(data))
    clip, why = load_clip(ClipSettings(model=str(config), pretrained=pin.pretrained))
    assert clip is None and "with other bytes" in why and str(snapshot / cw.WEIGHTS) in why
    (snapshot / cw.WEIGHTS).write_bytes(weights.read_bytes())  # open_clip's own download of the file
    clip, why = load_clip(ClipSettings(model=str(config), pretrained=pin.pretrained))
    assert clip is not None and clip.label.endswith(pin.sha256[:12]), why


def test_the_command_line(cache: Path, tiny: tuple[Path, Path, cw.Pin], capsys: pytest.CaptureFixture[str]) -> None:
    _, weights, pin = tiny
    assert main(["weights", "fetch", "clip", "--model", NAME, "--pretrained", "tiny-tag", "--url", weights.as_uri()]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(str(cache / "clip" / NAME / "tiny-tag" / cw.WEIGHTS)) and "(written)" in out[0]
    assert out[1].endswith("origami: {clip: {model: tiny-clip, pretrained: tiny-tag}}")
    assert main(["weights", "fetch", "clip", "--model", "ViT-B-32", "--pretrained", "laion9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: no pinned SHA-256 for open_clip ViT-B-32/laion9; pinned: --model tiny-clip --pretrained tiny-tag"]


def test_the_package_pin_refuses_other_bytes_from_the_command_line(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "not-clip.safetensors"
    fake.write_bytes(b"not the weights")
    assert main(["weights", "fetch", "clip", "--url", fake.as_uri()]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"SHA-256 {sha(b'not the weights')} (15 bytes), the pin is {OPENAI.sha256}" in err[0]
    assert not any(p.is_file() for p in (cache / "clip").rglob("*"))


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def _png() -> bytes:
    from shredfold.origami_bench.designs import builtin_designs
    from shredfold.origami_bench.env import render_folded
    from shredfold.origami_bench.targets import target_state

    return render_folded(target_state(builtin_designs()[0]), 64)

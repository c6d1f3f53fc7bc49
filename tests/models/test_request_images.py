"""Every image a built-in model reads is bounded in pixels and memory: a transparent
9400 × 9400 PNG (a cut-out scrap that skipped the photo's reduction: 2.9 GB and 37 s before)
is refused from its header, in-process and through `shredfold serve`, under a memory cap;
a request within the refusal bound but over the reading bound is reduced as a whole."""

from __future__ import annotations

import base64
import io
import struct
import subprocess
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from PIL import Image

from shredfold.calls import ModelCallError
from shredfold.models.builtin.request_images import MAX_IMAGE_PIXELS, MAX_PIXELS, bounded
from shredfold.shred.prompts import build_request

HUGE = 9400


def transparent_png(width: int, height: int) -> bytes:
    """A fully transparent RGBA PNG, written row by row (never held whole in memory)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    z = zlib.compressobj(6)
    row = b"\x00" + b"\x00" * (4 * width)
    idat = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "scrap.png"
    path.write_bytes(transparent_png(HUGE, HUGE))
    return path


CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))
from pathlib import Path
from shredfold.calls import ModelCallError
from shredfold.models import registry
from shredfold.origami_bench.prompts import mcq_request
from shredfold.shred.prompts import build_request
from shredfold.store import Store

png = Path(sys.argv[1]).read_bytes()
store = Store(Path(sys.argv[2]))
for name in registry.builtin_names():
    config = registry.builtin_config(name)
    if registry.answers(config, "shred"):
        request = build_request(kind="prose", lang="en", n=3, images=[png, png, png], composite=False, item=None)
    else:
        request = mcq_request(png, [png] * 4, item=None)
    try:
        registry.build_model(config, store).complete(request)
        print(f"{name}: answered")
    except ModelCallError as exc:
        print(f"{name}: refused: {exc}")
    except ValueError as exc:  # an origami agent told of no item: a question it cannot place
        print(f"{name}: refused: {exc}")
"""


def test_every_built_in_model_refuses_a_9400_square_transparent_png_under_a_memory_cap(huge: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", CAPPED, str(huge), str(tmp_path / "store")],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    from shredfold.models import registry

    assert set(said) == set(registry.builtin_names())
    bound = f"image 1 is {HUGE}x{HUGE} = {HUGE * HUGE:,} pixels, over the {MAX_IMAGE_PIXELS:,}-pixel bound"
    for name in ("ocr-islands", "jigsaw-ocr"):  # the models that decode images
        assert said[name].startswith(f"refused: {name}: {bound}"), said[name]
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr


def test_serve_answers_three_at_once_with_422_under_a_memory_cap(huge: Path, tmp_path: Path) -> None:
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))

    cmd = [sys.executable, "-m", "shredfold", "serve", "--model", "ocr-islands", "--port", "0"]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=cap)
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert " at http://127.0.0.1:" in line, line + (server.stderr.read() if server.stderr else "")
        url = line.split(" at ")[1].strip()
        data_url = "data:image/png;base64," + base64.b64encode(huge.read_bytes()).decode()
        body = {"model": "ocr-islands", "messages": [{"role": "user", "content": [
            {"type": "text", "text": build_request(kind="prose", lang="en", n=1, images=[], composite=False, item=None).text},
            {"type": "image_url", "image_url": {"url": data_url}}]}]}  # fmt: skip

        def ask(_: int) -> httpx.Response:
            return httpx.post(f"{url}/chat/completions", json=body, timeout=120)

        with ThreadPoolExecutor(3) as pool:
            replies = list(pool.map(ask, range(3)))
        assert [r.status_code for r in replies] == [422] * 3
        assert all("over the 64,000,000-pixel bound" in r.json()["error"]["message"] for r in replies)
        assert httpx.get(f"{url}/models", timeout=30).status_code == 200  # still serving
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_request_over_the_reading_bound_is_reduced_as_a_whole() -> None:
    big = transparent_png(7000, 6000)  # 42 MP: within the refusal bound, over the reading bound
    small = io.BytesIO()
    Image.new("RGBA", (700, 600), (250, 250, 250, 255)).save(small, format="PNG")
    out = bounded([big, small.getvalue()], "test")
    sizes = [Image.open(io.BytesIO(d)).size for d in out]
    assert sum(w * h for w, h in sizes) <= MAX_PIXELS
    (w0, h0), (w1, h1) = sizes
    assert w0 / w1 == pytest.approx(10, rel=0.01) and h0 / h1 == pytest.approx(10, rel=0.01)  # one factor
    assert all(Image.open(io.BytesIO(d)).mode == "RGBA" for d in out)
    within = [small.getvalue()] * 3
    assert bounded(within, "test") == within  # every sample the pipeline makes: the very bytes


def test_an_unreadable_image_is_named() -> None:
    with pytest.raises(ModelCallError, match="ocr-islands: image 2 is not a readable image"):
        bounded([transparent_png(8, 8), b"not an image"], "ocr-islands")

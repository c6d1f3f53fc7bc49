"""Small photographs made the way the ShredBench authors' are, with their answer key.

A page set like theirs (serif body on off-white, a centred heading over a rule, bold runs,
paragraph gaps; or CJK), cut along straight lines (a Voronoi cut: each scrap a convex
polygon), and each scrap laid on a mid-grey backdrop turned at random, shaded across as a
curled sheet is, with a bulge of bare paper at one corner (where their curled rims bulge),
and a soft shadow; the photograph reduced and saved as JPEG. Everything is drawn from a
seeded generator, so a test sees the same image every run.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from scipy.spatial import cKDTree

from shredfold.shred.fonts import DEJAVU_DIR, load_font
from shredfold.shred.solvers.jigsaw.words import Word

PAPER = (253, 251, 247)
INK = (17, 17, 17)
GREY = (150, 150, 150)

LATIN = [
    ("h1", "Harbour Ferry Returns"),
    ("bold", ("Date:", "2025-12-21")),
    ("p", "The harbour ferry returned to service on Monday after six weeks of repairs to its "
          "hull, the city transport office said. Morning crossings will run every twenty "
          "minutes until the summer timetable begins."),
    ("p", "Commuters who switched to the bridge bus during the repairs said the ferry was "
          "faster and calmer. The office plans a second boat for the evening rush next year "
          "if the budget allows."),
]
CJK = [
    ("h1", "渡轮恢复运营"),
    ("p", "经过六周的船体维修，港口渡轮于周一恢复运营。市交通办公室表示，早班渡轮将每二十分钟一班，直到夏季时刻表开始。"),
    ("p", "维修期间改乘大桥巴士的通勤者说，渡轮更快也更平稳。"),
]


def serif(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    name = "DejaVuSerif-Bold.ttf" if bold else "DejaVuSerif.ttf"
    return ImageFont.truetype(str(DEJAVU_DIR / name), size, layout_engine=ImageFont.Layout.BASIC)


@dataclass
class Page:
    rgb: np.ndarray
    words: list[Word]  # one box per drawn line, as the OCR reports them
    source: str  # the Markdown it was set from


def _wrap(text: str, font: ImageFont.FreeTypeFont, width: float, cjk: bool) -> list[str]:
    units = list(text) if cjk else text.split(" ")
    glue = "" if cjk else " "
    lines, cur = [], ""
    for u in units:
        trial = cur + glue + u if cur else u
        if font.getlength(trial) > width and cur:
            lines.append(cur)
            cur = u
        else:
            cur = trial
    return lines + [cur] if cur else lines


def page(blocks: list[tuple[str, object]], width: int = 760, body: int = 22, cjk: bool = False,
         ) -> Page:
    """A page set from Markdown-like blocks: ``h1`` (2.2x, bold, centred, over a 3 px
    rule), ``bold`` (a bold run and the rest of its line) and ``p`` paragraphs; lines 1.6
    body sizes apart, paragraphs a body size further."""
    pad = 40
    regular = load_font("cjk", body) if cjk else serif(body)
    heavy = load_font("cjk_bold", round(2.2 * body)) if cjk else serif(round(2.2 * body), True)
    bold = load_font("cjk_bold", body) if cjk else serif(body, True)
    pitch = round(1.6 * body)
    height = 2000
    im = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(im)
    words: list[Word] = []
    md: list[str] = []
    y = pad
    for kind, content in blocks:
        if kind == "h1":
            text = str(content)
            w = heavy.getlength(text)
            x = (width - w) / 2
            draw.text((x, y), text, font=heavy, fill=INK)
            x0, y0, x1, y1 = draw.textbbox((x, y), text, font=heavy)
            words.append(Word(text, x0, y0, x1, y1, 1.0))
            y += round(2.2 * body * 1.3)
            draw.rectangle((pad, y, width - pad, y + 2), fill=(51, 51, 51))
            y += body + pitch // 2
            md.append(f"# {text}")
        elif kind == "bold":
            head, rest = content  # type: ignore[misc]
            draw.text((pad, y), head, font=bold, fill=INK)
            x = pad + bold.getlength(head + " ")
            draw.text((x, y), rest, font=regular, fill=INK)
            x0, y0, _, y1 = draw.textbbox((pad, y), head, font=bold)
            x1 = draw.textbbox((x, y), rest, font=regular)[2]
            words.append(Word(f"{head} {rest}", x0, y0, x1, y1, 1.0))
            y += pitch + body
            md.append(f"**{head}** {rest}")
        else:
            text = str(content)
            for line in _wrap(text, regular, width - 2 * pad, cjk):
                draw.text((pad, y), line, font=regular, fill=INK)
                words.append(Word(line, *draw.textbbox((pad, y), line, font=regular), 1.0))
                y += pitch
            y += body
            md.append(text)
    rgb = np.asarray(im)[: y + pad].copy()
    return Page(rgb, words, "\n\n".join(md))


@dataclass
class Photo:
    data: bytes  # the JPEG as sent
    rgb: np.ndarray  # decoded
    masks: list[np.ndarray] = field(default_factory=list)  # each scrap's paper, photo pixels
    poses: list[np.ndarray] = field(default_factory=list)  # each scrap: page px -> photo px


def voronoi(h: int, w: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Labels 0..n-1 of a Voronoi cut of an h x w page (convex pieces, straight edges)."""
    seeds = rng.random((n, 2)) * [w, h]
    ys, xs = np.mgrid[0:h, 0:w]
    _, lab = cKDTree(seeds).query(np.column_stack([xs.ravel(), ys.ravel()]))
    return lab.reshape(h, w)


def photograph(pg: Page, n: int, seed: int, scale: float = 0.7, quality: int = 95,
               bulge: bool = True) -> Photo:
    """The page cut into ``n`` scraps and photographed on grey."""
    rng = np.random.default_rng(seed)
    h, w = pg.rgb.shape[:2]
    labels = voronoi(h, w, n, rng)
    pieces = []
    for k in range(n):
        mask = (labels == k).astype(np.uint8)
        ys, xs = np.nonzero(mask)
        x0, y0, x1, y1 = xs.min() - 20, ys.min() - 20, xs.max() + 21, ys.max() + 21
        crop = np.zeros((y1 - y0, x1 - x0, 4), np.float32)
        sx0, sy0 = max(x0, 0), max(y0, 0)
        sub = (slice(sy0 - y0, min(y1, h) - y0), slice(sx0 - x0, min(x1, w) - x0))
        crop[sub + (slice(0, 3),)] = pg.rgb[sy0:min(y1, h), sx0:min(x1, w)]
        crop[sub + (3,)] = mask[sy0:min(y1, h), sx0:min(x1, w)] * 255.0
        # A curled sheet: shaded across, and a bulge of bare paper at its corner that
        # lies farthest from its middle.
        gy, gx = np.mgrid[0 : crop.shape[0], 0 : crop.shape[1]]
        tilt = rng.uniform(0, 2 * np.pi)
        ramp = (np.cos(tilt) * gx + np.sin(tilt) * gy) / max(crop.shape)
        crop[..., :3] *= (0.93 + 0.07 * (ramp - ramp.min()) / max(np.ptp(ramp), 1e-6))[..., None]
        if bulge:
            py, px = np.nonzero(crop[..., 3] > 0)
            c = np.array([px.mean(), py.mean()])
            far = np.argmax((px - c[0]) ** 2 + (py - c[1]) ** 2)
            v = np.array([px[far], py[far]], float)
            at = v + 8.0 * (v - c) / max(np.hypot(*(v - c)), 1.0)
            disc = (gx - at[0]) ** 2 + (gy - at[1]) ** 2 <= 14.0**2
            crop[disc & (crop[..., 3] == 0), :3] = np.array(PAPER, np.float32) * 0.96
            crop[disc, 3] = 255.0
        angle = rng.uniform(0, 360)
        pieces.append((crop, angle, np.array([x0, y0], float)))
    cell = int(max(np.hypot(*c.shape[:2]) for c, _, _ in pieces)) + 30
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    size = (rows * cell + 60, cols * cell + 60)
    canvas = np.zeros(size + (3,), np.float32)
    canvas[:] = GREY
    shadow = np.zeros(size, np.float32)
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    for k, (crop, angle, origin) in enumerate(pieces):
        ch, cw = crop.shape[:2]
        r, c = divmod(k, cols)
        centre = np.array([30 + c * cell + cell / 2, 30 + r * cell + cell / 2])
        m = cv2.getRotationMatrix2D((cw / 2, ch / 2), angle, 1.0)
        m[:, 2] += centre - np.array([cw / 2, ch / 2])
        pre = crop.copy()
        pre[..., :3] *= pre[..., 3:] / 255.0
        warped = cv2.warpAffine(pre, m, (size[1], size[0]), flags=cv2.INTER_CUBIC)
        shadow = np.maximum(shadow, cv2.GaussianBlur(
            np.roll(warped[..., 3], (4, 4), axis=(0, 1)) / 255.0, (0, 0), 5.0))
        to_crop = np.array([[1, 0, -origin[0]], [0, 1, -origin[1]], [0, 0, 1]])
        layers.append((warped, np.vstack([m, [0, 0, 1]]) @ to_crop))
    canvas *= (1.0 - 0.35 * np.clip(shadow, 0, 1))[..., None]
    masks, poses = [], []
    for warped, pose in layers:
        a = np.clip(warped[..., 3:] / 255.0, 0, 1)
        canvas = canvas * (1 - a) + warped[..., :3]
        masks.append(a[..., 0] > 0.5)
        poses.append(pose)
    canvas = np.clip(canvas + rng.normal(0, 1.5, canvas.shape), 0, 255).astype(np.uint8)
    small = (round(size[1] * scale), round(size[0] * scale))
    im = Image.fromarray(canvas).resize(small, Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=quality)
    data = buf.getvalue()
    shrink = np.diag([small[0] / size[1], small[1] / size[0], 1.0])
    return Photo(
        data,
        np.asarray(Image.open(io.BytesIO(data)).convert("RGB")),
        [cv2.resize(mk.astype(np.uint8), small, interpolation=cv2.INTER_NEAREST).astype(bool)
         for mk in masks],
        [shrink @ p for p in poses],
    )

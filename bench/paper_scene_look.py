"""How the paper scene looks beside the ShredBench authors' composites: the backdrop's grey
and its fall-off, the paper's brightness and shading, the shadow at the paper's feet, how
far the curled rims reach beyond the cut, the scraps' share of the image and the text's
scale. Notes: paper_scene_notes.md.

    python bench/paper_scene_look.py --released /tmp/sb/data_8            # their composites
    python bench/paper_scene_look.py --released /tmp/sb/data_8 --their-script /tmp/sb/blenderprocess_.py

``--released DIR``: measures every ``*.jpg`` there (their released 4096² composites, N = 8).
Ours: one sample of ``--domain`` at ``--n`` pieces with the paper spec's page and synthesis
settings (``specs/paper.yaml``: its render settings, preset paper). ``--their-script FILE``:
the same pieces rendered by their script, run unchanged under this venv's bpy from a
scratch folder (its inputs, ``news_textures_output/<group>/<doc>/mask_i.png, tex_i.png``,
written from our pieces exactly as their cutter crops them; in a copy there only
NUM_SAMPLES is edited; Python's ``random`` seeded); after it has rendered, the wrapper
reads its scene (each piece's location and turn, the camera) so that its poses are known.
Their code never enters the project: it is read from where you keep it.

Measures (grey = mean of RGB, 8-bit), the same function on every image: *paper* = bright
(> 200), closed, filled regions of at least 0.1% of the image, one per scrap;
*backdrop* = pixels >= 2% of the width from paper: its mean, its standard deviation (noise
plus fall-off) and how much brighter its centre is than its corners (a quadratic fit in the
radius); *shadow* = mean grey 2 px to 0.6% of the width outside the paper minus the
backdrop's; *paper* = mean and 5-95% range of blank paper (>= 0.4% of the width inside, grey
> 200); *share* = paper's share of the image; *bulge* = per scrap 1 - area / convex hull's
area (their cut is Voronoi cells, convex: a flat scrap scores ~0, curled corners and rims
bulging out beyond necks score more), median and 90th percentile over scraps; *pitch* =
the text's line pitch in image px (per scrap: its ink's strongest spatial frequency gives
the lines' direction, the autocorrelation of the ink projected across them the pitch;
median over scraps), and relative to the width. Where the poses are known (ours, their
script on our cut) also *rim*: per piece the farthest paper pixel beyond its cut polygon
laid flat by its pose (paper assigned to the nearest polygon), 95th percentile and max over
pieces, px; and *scale*: frame px per page px. Our page's own pitch, measured the same way
on the flat page, turns a pitch into a scale (for theirs: their CSS line height, 44.8 px).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from scipy import ndimage
from scipy.signal import find_peaks
from shapely.geometry import Polygon

from shredfold.corpus.loaders import load_builtin
from shredfold.resolve import load_spec
from shredfold.shred.blender_paper import crops, pose
from shredfold.shred.paper_layout import Placed
from shredfold.shred.sample import Built, build_sample

THEIR_LINE_PITCH = 28 * 1.6  # page px: their stylesheet's font size x line height
SIZE = 4096
# Read in the wrapper after their script has rendered: each piece's location and turn (their
# transform_apply put the turn into the mesh: the plane's first edge, vertices 0 -> 1), and
# the camera.
DUMP = """
import json, math
out = {}
for o in bpy.data.objects:
    if o.name.startswith('Piece_'):
        v = o.data.vertices
        a = math.degrees(math.atan2(v[1].co.y - v[0].co.y, v[1].co.x - v[0].co.x))
        out[o.name] = [o.location.x, o.location.y, o.location.z, a]
cam = bpy.context.scene.camera
out['camera'] = [cam.location.x, cam.location.y, cam.data.ortho_scale]
print('SCENE ' + json.dumps(out))
"""


# ------------------------------------------------------------------ measures


def paper_regions(grey: np.ndarray) -> tuple[np.ndarray, int]:
    """Labelled scraps: bright, closed, filled regions of at least 0.1% of the image."""
    h, w = grey.shape
    paper = cv2.morphologyEx((grey > 200).view(np.uint8), cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8)) > 0
    paper = ndimage.binary_fill_holes(paper)
    lab, k = ndimage.label(paper)
    sizes = ndimage.sum(paper, lab, range(1, k + 1))
    big = 1 + np.flatnonzero(sizes > 0.001 * h * w)
    relabel = np.zeros(k + 1, np.int32)
    relabel[big] = np.arange(1, len(big) + 1)
    return relabel[lab], len(big)


def line_pitch(grey: np.ndarray, region: np.ndarray) -> float | None:
    """The line pitch (px) of the text in ``region`` (bool), or None where it has too little."""
    inner = ndimage.binary_erosion(region, iterations=8)
    if inner.sum() < 20_000:
        return None
    ys, xs = np.nonzero(inner)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    g, m = grey[y0:y1, x0:x1], inner[y0:y1, x0:x1]
    raw = np.clip(np.median(g[m]) - g, 0, None) * m
    if raw.std() < 1.0:
        return None
    ink = raw.copy()
    ink[m] -= ink[m].mean()
    side = min(4096, 1 << math.ceil(math.log2(max(ink.shape))))
    power = np.abs(np.fft.rfft2(ink, (side, side))) ** 2
    fy = np.fft.fftfreq(side)[:, None]
    fx = np.fft.rfftfreq(side)[None, :]
    f = np.hypot(fx, fy)
    power[(f < 1 / 300) | (f > 1 / 25)] = 0  # periods 25-300 px
    iy, ix = np.unravel_index(int(np.argmax(power)), power.shape)
    theta = math.degrees(math.atan2(fy[iy, 0], fx[0, ix]))  # across the lines
    # Turn the lines horizontal and project the ink across them.
    hh, ww = ink.shape
    turn = cv2.getRotationMatrix2D((ww / 2, hh / 2), theta - 90, 1.0)
    big = int(math.hypot(hh, ww)) + 2
    turn[:, 2] += ((big - ww) / 2, (big - hh) / 2)
    flat = cv2.warpAffine(raw.astype(np.float32), turn, (big, big))
    cover = cv2.warpAffine(m.astype(np.float32), turn, (big, big))
    rows = cover.sum(axis=1) > 0.25 * cover.sum(axis=1).max()
    profile = flat.sum(axis=1)[rows] / cover.sum(axis=1)[rows]
    # Each text line is a peak of ink across the lines; the pitch is the commonest gap
    # between neighbouring peaks (their news has short paragraphs, so a gap is a line or a
    # line and a paragraph break: the lower quartile of the gaps is a line).
    found, _ = find_peaks(ndimage.gaussian_filter1d(profile, 2.0), distance=20, prominence=0.25 * profile.max())
    gaps = np.diff(found)
    gaps = gaps[(gaps >= 25) & (gaps <= 300)]
    if len(gaps) < 3:
        return None
    line = np.percentile(gaps, 25)
    return float(gaps[gaps <= 1.15 * line].mean())


def measure(rgb: np.ndarray) -> dict[str, object]:
    grey = rgb.astype(np.float32).mean(axis=2)
    h, w = grey.shape
    lab, count = paper_regions(grey)
    paper = lab > 0
    out_d = ndimage.distance_transform_edt(~paper)
    in_d = ndimage.distance_transform_edt(paper)
    far = out_d > 0.02 * w
    near = (out_d > 2) & (out_d < 0.006 * w)
    blank = (in_d > 0.004 * w) & (grey > 200)
    ys, xs = np.nonzero(far)
    r2 = (xs / w - 0.5) ** 2 + (ys / h - 0.5) ** 2
    fit, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(xs)), r2]), grey[ys, xs], rcond=None)
    bulge, pitches = [], []
    for k, sl in enumerate(ndimage.find_objects(lab), start=1):
        region = lab[sl] == k
        contours, _ = cv2.findContours(region.view(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        hull = cv2.contourArea(cv2.convexHull(max(contours, key=cv2.contourArea)))
        bulge.append(1 - float(region.sum()) / max(hull, 1.0))
        p = line_pitch(grey[sl], region)
        if p is not None:
            pitches.append(p)
    pitch = float(np.median(pitches)) if pitches else float("nan")
    return {
        "backdrop": round(float(grey[far].mean()), 1),
        "backdrop_rgb": [round(float(v), 1) for v in rgb[far].mean(axis=0)],
        "backdrop_std": round(float(grey[far].std()), 2),
        "backdrop_centre_minus_corner": round(float(-fit[1] * 0.5), 1),
        "shadow": round(float(grey[near].mean() - grey[far].mean()), 1),
        "paper": round(float(grey[blank].mean()), 1),
        "paper_rgb": [round(float(v), 1) for v in rgb[blank].mean(axis=0)],
        "paper_p5_p95": [round(float(v), 1) for v in np.percentile(grey[blank], [5, 95])],
        "share": round(float(paper.mean()), 4),
        "scraps": count,
        "bulge_median": round(float(np.median(bulge)), 4),
        "bulge_p90": round(float(np.percentile(bulge, 90)), 4),
        "pitch_px": round(pitch, 1),
        "pitch_rel": round(pitch / w, 5),
    }


def flat_polygons(polygons: Sequence[Polygon], matrices: Sequence[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """Label map (0: none, k + 1: piece k) of each cut polygon laid flat by its pose."""
    out = np.zeros(shape, np.int32)
    for k, (poly, m) in enumerate(zip(polygons, matrices, strict=True)):
        pts = np.asarray(poly.exterior.coords) @ m[:, :2].T + m[:, 2]
        cv2.fillPoly(out, [np.round((pts - 0.5) * 16).astype(np.int32)], k + 1, shift=4)
    return out


def rim_reach(paper: np.ndarray, flat: np.ndarray) -> list[float]:
    """Per piece: how far (px) the paper reaches beyond its flat polygon, each paper pixel
    counted for the nearest polygon, within 3% of the width of it."""
    dist, (iy, ix) = ndimage.distance_transform_edt(flat == 0, return_indices=True)
    owner = flat[iy, ix]
    mine = paper & (dist < 0.03 * paper.shape[1])
    out = []
    for k in range(1, int(flat.max()) + 1):
        sel = mine & (owner == k)
        out.append(float(dist[sel].max()) if sel.any() else 0.0)
    return out


def rim_summary(reach: list[float]) -> dict[str, float]:
    return {"rim_px_p95": round(float(np.percentile(reach, 95)), 1), "rim_px_max": round(max(reach), 1)}


# ------------------------------------------------------------------ the three sources


def ours(domain: str, n: int) -> tuple[np.ndarray, dict[str, object], Built]:
    shred = load_spec(Path(__file__).resolve().parent.parent / "specs" / "paper.yaml").spec.shred
    assert shred is not None
    doc = load_builtin(domain)[0]
    render = shred.render_for(domain)
    t = time.process_time()
    built = build_sample(doc, n, render, shred.synthesis, 0)
    cpu = time.process_time() - t
    fp = built.table.footprint
    assert fp is not None
    matrices = []
    for k, i in enumerate(built.order):
        px, py = built.table.placements[k]
        matrices.append(np.asarray(built.scraps[i].matrix) + np.array([[0, 0, px], [0, 0, py]]))
    flat = flat_polygons([built.polygons[i] for i in built.order], matrices, fp.shape)
    grey = built.table.image.astype(np.float32).mean(axis=2)
    page = np.asarray(built.page.image.convert("L"), dtype=np.float32)
    page_pitch = line_pitch(page, np.ones(page.shape, bool))
    m = np.asarray(built.scraps[0].matrix)[:, :2]
    extra = {
        **{f"true_{k}": v for k, v in rim_summary(rim_reach(fp >= 0, flat)).items()},
        **rim_summary(rim_reach(paper_regions(grey)[0] > 0, flat)),
        "scale": round(float(np.sqrt(abs(np.linalg.det(m)))), 3),
        "page_pitch_px": round(page_pitch, 1) if page_pitch else None,
        "cpu_s": round(cpu, 1),
    }
    return built.table.image, extra, built


def theirs(script: Path, built: Built, samples: int) -> tuple[np.ndarray, dict[str, object]]:
    """Their script on these pieces, from a scratch folder: its render, its CPU seconds and
    the rim reach by the poses read from its scene."""
    parts = crops(built.pieces)
    with tempfile.TemporaryDirectory(prefix="paperscene-theirs-") as tmp:
        work = Path(tmp)
        folder = work / "news_textures_output" / f"group_{len(parts)}_pieces" / "ours"
        folder.mkdir(parents=True)
        for i, c in enumerate(parts):
            cv2.imwrite(str(folder / f"mask_{i}.png"), c.mask)
            cv2.imwrite(str(folder / f"tex_{i}.png"), c.rgb[..., ::-1])
        code = script.read_text(encoding="utf-8").replace("NUM_SAMPLES = 128", f"NUM_SAMPLES = {samples}")
        if f"NUM_SAMPLES = {samples}" not in code:
            raise SystemExit(f"{script}: no 'NUM_SAMPLES = 128' to edit")
        (work / "theirs.py").write_text(code, encoding="utf-8")
        (work / "dump.py").write_text(DUMP, encoding="utf-8")
        run = ("import random, resource, bpy; random.seed(0); "
               "exec(compile(open('theirs.py').read(), 'blenderprocess_.py', 'exec')); "
               "exec(open('dump.py').read()); "
               "u = resource.getrusage(resource.RUSAGE_SELF); print('CPU', u.ru_utime + u.ru_stime)")
        done = subprocess.run([sys.executable, "-c", run], cwd=work, capture_output=True, text=True, check=False)
        lines = done.stdout.splitlines()
        cpu = [float(x.split()[1]) for x in lines if x.startswith("CPU ")]
        scene = [json.loads(x[6:]) for x in lines if x.startswith("SCENE ")]
        out = work / "final_renders" / "ours.png"
        if done.returncode or not out.exists() or not scene:
            raise SystemExit(f"their script failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        img = np.ascontiguousarray(cv2.imread(str(out), cv2.IMREAD_COLOR)[..., ::-1])
        shutil.copy(out, Path(tempfile.gettempdir()) / "paperscene-theirs-look.png")
    cx, cy, side = scene[0]["camera"]
    matrices, polys = [], []
    for i, c in enumerate(parts):
        x, y, z, angle = scene[0][f"Piece_{i}"]
        matrices.append(np.asarray(pose(c, Placed(x, y, z, angle), cx, cy, side, SIZE)))
        polys.append(built.polygons[i])
    grey = img.astype(np.float32).mean(axis=2)
    flat = flat_polygons(polys, matrices, grey.shape)
    extra = {**rim_summary(rim_reach(paper_regions(grey)[0] > 0, flat)),
             "scale": round(float(np.sqrt(abs(np.linalg.det(matrices[0][:, :2])))), 3),
             "cpu_s": round(cpu[0], 1) if cpu else None}
    return img, extra


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--released", type=Path, help="folder of their released composites (*.jpg)")
    ap.add_argument("--their-script", type=Path, help="their blenderprocess_.py, run on our cut")
    ap.add_argument("--samples", type=int, default=4, help="their script's NUM_SAMPLES")
    ap.add_argument("--domain", default="news_en")
    ap.add_argument("--n", type=int, default=8, help="pieces (their released composites: 8)")
    args = ap.parse_args()
    if args.released:
        rows = []
        for f in sorted(args.released.glob("*.jpg")):
            m = measure(cv2.imread(str(f), cv2.IMREAD_COLOR)[..., ::-1])
            m["scale_from_pitch"] = round(m["pitch_px"] / THEIR_LINE_PITCH, 3)  # type: ignore[operator]
            rows.append(m)
            print(f"released {f.name}: {json.dumps(m)}")
        keys = [k for k, v in rows[0].items() if isinstance(v, int | float)]
        print("released, mean [min, max]: " + json.dumps(
            {k: [round(float(np.mean([r[k] for r in rows])), 4), min(r[k] for r in rows), max(r[k] for r in rows)]
             for k in keys}))
    img, extra, built = ours(args.domain, args.n)
    m = {**measure(img), **extra}
    if extra["page_pitch_px"]:
        m["scale_from_pitch"] = round(m["pitch_px"] / extra["page_pitch_px"], 3)  # type: ignore[operator]
    print(f"ours (paper spec, {args.domain} N={args.n}): {json.dumps(m)}")
    if args.their_script:
        img, extra = theirs(args.their_script, built, args.samples)
        m = {**measure(img), **extra}
        print(f"their script ({args.samples} spp, same pieces): {json.dumps(m)}")


if __name__ == "__main__":
    main()

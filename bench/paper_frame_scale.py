"""How large the page shows in the ShredBench authors' photographs: the frame's scale (frame
px per page px) drawn by their own code beside ours, over many draws of the same document.

    python bench/paper_frame_scale.py --authors /tmp/sb --draws 12 [--docs news_008 news_031 news_041]

Their camera is fitted to the packed pieces (``auto_fit_camera`` in their
``blenderprocess_.py``), so the text's size in the photograph (x-height and line pitch
relative to the image, the scraps' share of it) is set by one draw of their cutter's uniform
seeds, the pieces' random turns and their packing. This bench measures how far that draw
strays, per document, by running their code beside the project (``--authors``: a checkout of
``ythere-y/ShredBench``; nothing of it enters the project):

- **their code**: the page as our paper style sets it (their stylesheet; the page bench shows
  the two pages agree), cut by their ``generate_cut_masks`` (``preprocess_.py``, numpy's global
  generator seeded with the draw), laid out by their ``blenderprocess_.py`` under our bpy with
  the render call left out (Python's ``random`` seeded with the draw); the scale is
  4096 / (camera ortho scale x their 500 px per metre);
- **ours**: :func:`paper_fidelity.layout_scales` (the sample's own cut, pieces and packing at
  seeds 0..K-1, the camera fitted to the built scene, relief included, as theirs to their objects);
- **their code, bare cuts drawn again**: the same, but a cut in which a piece holds no
  glyph's centre is drawn again from the next seed (:func:`their_seed`), as our cutter does
  (``text_cut``: no blank scraps, issue 29 item 1). This is the like-with-like comparison: the
  two pipelines then draw from the same distribution, and their medians should agree to
  within the draws' noise;
- **their released composite**, where there is one: its line pitch / 44.8 page px.

Reported per document: median [min, max] of each, ours' median against theirs (as is, and
with bare cuts drawn again; ✓ within 5 %), the scraps' share of the frame against theirs
(the scale squared: the same page area), and where their released composite falls in their
own code's draws (its rank).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_fidelity import LINE_HEIGHT, layout_scales, looks  # noqa: E402

from shredfold.corpus.document import Document  # noqa: E402
from shredfold.resolve import load_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N = 8

# Run under the project's bpy: their layout script with its render call left out, one folder
# per draw; prints the camera's ortho scale.
DRIVER = """
import json, random, sys
import numpy as np
import bpy
script, folders = sys.argv[1], json.loads(sys.argv[2])
src = open(script, encoding="utf-8").read()
if "bpy.ops.render.render(write_still=True)" not in src:
    raise SystemExit("their script has no render call to leave out")
src = src.replace("bpy.ops.render.render(write_still=True)", "pass")
ns = {"__name__": "their_layout"}
exec(compile(src, "blenderprocess_.py", "exec"), ns)
for folder, draw in folders:
    random.seed(draw)
    np.random.seed(draw)
    ns["process_single_folder"](folder, str(draw))
    cam = bpy.context.scene.camera
    print("ORTHO " + json.dumps([folder, cam.data.ortho_scale, ns["PIXELS_PER_METER"], ns["RESOLUTION"][0]]))
"""


def their_cutter(preprocess: Path):
    """``generate_cut_masks`` from their preprocess_.py, without importing the rest of it (it
    imports selenium at the top)."""
    from PIL import Image
    from scipy.spatial import cKDTree

    tree = ast.parse(preprocess.read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "generate_cut_masks")
    ns: dict[str, object] = {"np": np, "Image": Image, "cKDTree": cKDTree, "os": __import__("os")}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(preprocess), "exec"), ns)
    return ns["generate_cut_masks"]


def their_seed(draw: int, size: tuple[int, int], centres: np.ndarray) -> int:
    """The seed of their ``draw``-th cut with a bare piece drawn again, as our cutter draws it
    again (``text_cut``: every piece must hold a glyph's centre, at most ``TRIES`` draws, else
    the fewest bare). Their cutter's first draw is its Voronoi sites, ``np.random.rand(N, 2) *
    [w, h]``, each pixel going to the nearest site on a half-scale grid, so a seed is checked
    without cutting."""
    from scipy.spatial import cKDTree

    from shredfold.shred.text_cut import TRIES

    best = (N + 1, draw * TRIES)
    for j in range(TRIES):
        seed = draw * TRIES + j
        np.random.seed(seed)
        sites = np.random.rand(N, 2) * np.asarray(size)
        _, owner = cKDTree(sites * 0.5).query(np.floor(centres * 0.5))
        bare = N - len(set(owner.tolist()))
        if bare == 0:
            return seed
        best = min(best, (bare, seed))
    return best[1]


def their_scales(doc: Document, draws: int, authors: Path, work: Path, redraw_bare: bool = False) -> list[float]:
    from shredfold.shred.glyphs import page_glyphs
    from shredfold.shred.render import render_page
    from shredfold.shred.sample import streams
    from shredfold.shred.sample_key import draw_key

    shred = load_spec(ROOT / "specs" / "paper.yaml").spec.shred
    assert shred is not None
    render, synth = shred.render_for(doc.domain), shred.synthesis
    page = render_page(doc, render, streams(draw_key(doc, N, render, synth, 0))["render"]).image
    base = work / f"{doc.doc_id}-page.png"
    page.save(base)
    cut = their_cutter(authors / "preprocess_.py")
    boxes = page_glyphs(doc, render).boxes
    centres = np.column_stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2])
    folders = []
    for draw in range(draws):
        seed = their_seed(draw, page.size, centres) if redraw_bare else draw
        folder = work / doc.doc_id / ("redrawn" if redraw_bare else "as-is") / str(draw)
        np.random.seed(seed)
        cut(str(base), str(folder), N)
        folders.append([str(folder), seed])
    done = subprocess.run([sys.executable, "-c", DRIVER, str(authors / "blenderprocess_.py"), json.dumps(folders)],
                          cwd=work, capture_output=True, text=True, check=False)
    rows = [json.loads(x[6:]) for x in done.stdout.splitlines() if x.startswith("ORTHO ")]
    if done.returncode or len(rows) != draws:
        raise SystemExit(f"their layout failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return [res / (ortho * ppm) for _, ortho, ppm, res in rows]


def mark(diff: float) -> str:
    return "✓" if abs(diff) <= 0.05 else "✗"


def spread(v: list[float]) -> str:
    return f"{np.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--authors", type=Path, required=True, help="a checkout of ythere-y/ShredBench")
    ap.add_argument("--draws", type=int, default=12)
    ap.add_argument("--docs", nargs="*", help="document ids of their my_dataset/ (default: those with a composite)")
    ap.add_argument("--out", type=Path, help="also write the table here (Markdown)")
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    dataset, released = args.authors / "my_dataset", args.authors / "data_8"
    names = args.docs or sorted(p.stem for p in dataset.glob("*.md") if (released / f"{p.stem}.jpg").is_file())
    out = [f"Frame scale (frame px per page px), N = {N}, {args.draws} draws each: median [min, max]. "
           "Their code as it runs, and with a cut holding a bare piece drawn again, as ours is. The "
           "scraps' share of the frame goes with the scale's square (the same page area).", "",
           "| document | their code | their code, bare cuts drawn again | ours | ours / theirs - 1 (medians) "
           "| ours / theirs, bare cuts drawn again | share: ours / theirs, bare cuts drawn again | "
           "their released composite | its rank in their draws |", "|---|---|---|---|---|---|---|---|---|"]
    diffs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="frame-scale-") as tmp:
        for name in names:
            doc = Document(doc_id=name, domain="news_en", text=(dataset / f"{name}.md").read_text(encoding="utf-8"))
            theirs = their_scales(doc, args.draws, args.authors, Path(tmp))
            redrawn = their_scales(doc, args.draws, args.authors, Path(tmp), redraw_bare=True)
            ours = layout_scales(doc, range(args.draws))
            like = float(np.median(ours) / np.median(redrawn))
            diffs.append(like - 1)
            shown, rank = "-", "-"
            if (released / f"{name}.jpg").is_file():
                s = float(looks(released / f"{name}.jpg")["pitch_px"]) / LINE_HEIGHT  # type: ignore[arg-type]
                shown, rank = f"{s:.3f}", f"{sum(t < s for t in theirs)} of {len(theirs)} below"
            row = (f"| {name} | {spread(theirs)} | {spread(redrawn)} | {spread(ours)} | "
                   f"{np.median(ours) / np.median(theirs) - 1:+.1%} | {like - 1:+.1%} {mark(like - 1)} | "
                   f"{like**2 - 1:+.1%} {mark(like**2 - 1)} | {shown} | {rank} |")
            print(row, flush=True)
            out.append(row)
    out.append(f"| mean | | | | | {np.mean(diffs):+.1%} | | | |")
    took = f"{time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU in this process"
    text = "\n".join(out) + f"\n\n({took})\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

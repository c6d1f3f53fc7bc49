"""Scraps out of one photograph of a table top: a mask and an RGBA crop per scrap.

Pure: an image array in, scraps out. Every pixel the table model does not explain
(:mod:`shredfold.shred.solvers.jigsaw.tabletop`) is paper — white paper, ink, a shaded curl — and the
connected paper regions, holes filled, are the scraps. Ink is where the colours alone
mislead, so three rules give it back to its scrap:

* ink lines the colour of the (shadowed) table — a table's ruled line, a stroke crossing a
  tear — are thin, table between scraps is not: opening the table mask by a little over
  half the stroke width (measured on the photo) returns them to the paper;
* pockets darker than any shadow that touch exactly one scrap are its ink (where two
  scraps' shadows overlap, the pocket touches both and stays table);
* wider bites out of one scrap's edge that open onto its ink (a bold stroke on the
  shadow's side) are found by a wider opening and given back the same way.

Thin strands (table grain off the table's hue touching an edge) are cut off each scrap;
the sub-pixel alpha and the colours of its crop come from :mod:`shredfold.shred.solvers.jigsaw.edge`.
Scraps touching one another, and a table about as light as the paper, are not separated.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image
from scipy import ndimage

from shredfold.shred.solvers.jigsaw.edge import disk, edge_alpha
from shredfold.shred.solvers.jigsaw.level import ink_darkness
from shredfold.shred.solvers.jigsaw.scale import enlarge, enlargement
from shredfold.shred.solvers.jigsaw.tabletop import classify

ALPHA_SIGMA = 0.8  # px: smoothing of the finished alpha
MIN_AREA_SHARE = 0.02  # of the largest region: smaller regions are specks, not scraps
MIN_IMAGE_SHARE = 0.001  # of the photo: smaller regions are specks (a scrap of N = 64 is ~1%)
MIN_AREA = 64  # px
POCKET_SHARE = 0.05  # of its scrap's area: larger dark regions are not ink at an edge
RADIUS_MIN, RADIUS_MAX = 2, 5  # px: the opening that gives ink lines back to the paper
WIDE, RADIUS_WIDE = 3, 9  # the wider opening (times the first, at most px) for bold bites
INK_REACH = 3  # px: a bite opens onto ink this close
STRAND = 2  # px: radius of the opening that cuts thin strands off a scrap
PAD = 6  # px of margin around each crop
MAX_PIXELS = 40_000_000  # a larger photo is reduced first (bounded time and memory)
NECK_MIN = 3.0  # px: the narrowest neck radius tried between two touching scraps ...
NECK_GROWTH = 1.4  # ... growing by this factor ...
NECK_SHARE = 0.25  # ... up to this share of the region's thickest point
NECK_PART_SHARE = 0.04  # of the region: the least a part split off must hold ...
NECK_INK = 100  # ... and this many ink pixels ...
NECK_INK_LEVEL = 0.25  # ... each at least this dark against the paper around it


@dataclass(frozen=True)
class Segment:
    """One scrap found on the table: ``box`` (x0, y0, x1, y1) in the photo, ``mask`` the
    scrap's pixels within the box, ``rgba`` the crop with alpha = paper share."""

    box: tuple[int, int, int, int]
    mask: np.ndarray  # (h, w) bool
    rgba: np.ndarray  # (h, w, 4) uint8

    @property
    def area(self) -> int:
        return int(self.mask.sum())


def decode_photo(data: bytes) -> np.ndarray:
    """RGB uint8 pixels of an encoded image (PNG, JPEG, ...); alpha, if any, dropped."""
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


def request_scraps(images: Sequence[bytes], max_pixels: int = MAX_PIXELS,
                   ) -> tuple[list[np.ndarray], list[int | None]]:
    """The scraps a request shows, as RGBA arrays, at the size shown, and for each the
    image it was cut out of (None: given cut out): an image with transparency is one
    cut-out scrap and is kept as it is; an opaque one is a photograph of scraps on a
    table, and the scraps segmented out of it are returned in its reading order (a photo
    of more than ``max_pixels`` is reduced to that size first, bounding time and memory)."""
    out: list[np.ndarray] = []
    photo: list[int | None] = []
    for k, data in enumerate(images):
        try:
            with Image.open(io.BytesIO(data)) as im:
                rgba = np.asarray(im.convert("RGBA"))
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise ValueError(f"image {k + 1} is not a readable image ({exc})") from exc
        if rgba[..., 3].min() < 255:
            if rgba.shape[0] * rgba.shape[1] > max_pixels:  # a guard; models bound requests first
                f = (max_pixels / (rgba.shape[0] * rgba.shape[1])) ** 0.5
                rgba = cv2.resize(rgba, (max(1, int(rgba.shape[1] * f)), max(1, int(rgba.shape[0] * f))), interpolation=cv2.INTER_AREA)
            out.append(rgba)
            photo.append(None)
            continue
        rgb = np.ascontiguousarray(rgba[..., :3])
        h, w = rgb.shape[:2]
        if h * w > max_pixels:
            f = (max_pixels / (h * w)) ** 0.5
            size = (max(1, int(w * f)), max(1, int(h * f)))
            rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        crops = [sg.rgba for sg in segment(rgb)]
        out.extend(crops)
        photo.extend([k] * len(crops))
    return out, photo


def scrap_images(images: Sequence[bytes], max_pixels: int = MAX_PIXELS) -> list[np.ndarray]:
    """The scraps a request shows (:func:`request_scraps`), those cut out of a photograph
    enlarged when their text is small (:func:`enlarged`)."""
    return enlarged(*request_scraps(images, max_pixels), max_pixels)


def enlarged(scraps: Sequence[np.ndarray], source: Sequence[int | None],
             max_pixels: int = MAX_PIXELS) -> list[np.ndarray]:
    """The scraps, those cut out of a photograph (``source`` not None) enlarged when their
    text is small (:mod:`shredfold.shred.solvers.jigsaw.scale`: a photo reduced for presentation shows
    the scraps at half their size or less), to at most ``max_pixels`` per photograph."""
    out = list(scraps)
    for k in sorted({s for s in source if s is not None}):
        at = [n for n, s in enumerate(source) if s == k]
        crops = [scraps[n] for n in at]
        area = sum(c.shape[0] * c.shape[1] for c in crops)
        factor = min(enlargement(crops), (max_pixels / area) ** 0.5)
        if factor > 1.0:
            for n in at:
                out[n] = enlarge(scraps[n], factor)
    return out


def ink_strokes(rgb: np.ndarray, paper: np.ndarray) -> tuple[np.ndarray, int]:
    """Ink on the paper, from 2 px inside its edge, and the radius of the opening that
    gives ink lines back to the paper: a little over half the width of most strokes."""
    inner = cv2.erode(paper.view(np.uint8), disk(2)).astype(bool)
    if inner.sum() < 1000:
        return np.zeros_like(paper), RADIUS_MIN
    lum = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    white = float(np.percentile(lum[inner][::7], 90))
    table = float(np.median(lum[~paper][::7])) if (~paper).any() else 0.0
    ink = inner & (lum < 0.5 * (white + min(table, white - 40)))
    if ink.sum() < 200:
        return ink, RADIUS_MIN
    depth = cv2.distanceTransform(ink.view(np.uint8), cv2.DIST_L2, 3)
    half = float(np.percentile(depth[ink][::3], 90))
    return ink, int(np.clip(np.ceil(half + 0.5), RADIUS_MIN, RADIUS_MAX))


def _adopt(labels: np.ndarray, candidates: np.ndarray, areas: np.ndarray,
           ink: np.ndarray | None = None) -> None:
    """Give each small region of ``candidates`` that touches exactly one scrap (and not
    the image border; and, with ``ink``, touches that ink) to that scrap, in place.
    A region between two scraps (their shadows overlapping, a narrow gap) stays table."""
    regions, count = ndimage.label(candidates, structure=np.ones((3, 3), bool))
    if count == 0 or labels.max() == 0:
        return
    big = np.float32(labels.max() + 1)
    lab = labels.astype(np.float32)
    square = np.ones((3, 3), np.uint8)
    at = np.flatnonzero(regions)
    which = regions.reshape(-1)[at]
    # The scrap labels next to each pixel: largest and smallest (0: none).
    hi = cv2.dilate(lab, square).reshape(-1)[at]
    lo = cv2.erode(np.where(labels > 0, lab, big), square).reshape(-1)[at]
    most = np.zeros(count + 1, np.float32)
    least = np.full(count + 1, big, np.float32)
    np.maximum.at(most, which, hi)
    np.minimum.at(least, which, lo)
    size = np.bincount(which, minlength=count + 1)
    edge = np.zeros(count + 1, bool)
    for side in (regions[0], regions[-1], regions[:, 0], regions[:, -1]):
        edge[side] = True
    owner = np.where(least < big, least, 0).astype(np.int64)
    ok = (most == least) & (owner > 0) & ~edge
    ok &= size <= POCKET_SHARE * areas[owner]
    if ink is not None:
        reach = cv2.dilate(ink.view(np.uint8), disk(INK_REACH)).reshape(-1)[at]
        touches = np.zeros(count + 1, np.uint8)
        np.maximum.at(touches, which, reach)
        ok &= touches > 0
    ok[0] = False
    give = np.where(ok, owner, 0)
    target = give[which]
    labels.reshape(-1)[at[target > 0]] = target[target > 0]


def _parts(region: np.ndarray, ink: np.ndarray) -> np.ndarray | None:
    """Labels (1, 2, ...) of the scraps a region falls into at its narrowest necks, or
    None when it is one scrap.

    Two scraps lying so their rims touch (a curled corner resting on a neighbour) are one
    region joined by a neck much narrower than either. Eroding the region by a growing
    radius parts it there first; it is split when every part holds ink and a fair share
    of the region, and the neck is under half as wide as the thinner part is thick (a
    waist of one scrap is not a neck). Every pixel goes to the nearest part.
    """
    dist = cv2.distanceTransform(region.view(np.uint8), cv2.DIST_L2, 5)
    area = float(region.sum())
    radius = NECK_MIN
    while radius <= NECK_SHARE * float(dist.max()):
        cores, count = ndimage.label(dist > radius, structure=np.ones((3, 3), bool))
        if count >= 2:
            _, idx = cv2.distanceTransformWithLabels((cores == 0).view(np.uint8), cv2.DIST_L2, 5,
                                                     labelType=cv2.DIST_LABEL_PIXEL)
            seeds = cores[cores > 0]  # labels in raster order of the zero pixels
            parts = np.where(region, seeds[idx - 1], 0)
            sizes = np.bincount(parts.ravel(), minlength=count + 1)[1:]
            inks = np.bincount(parts.ravel(), weights=ink.ravel(), minlength=count + 1)[1:]
            thick = ndimage.maximum(dist, cores, index=np.arange(1, count + 1))
            real = ((sizes >= NECK_PART_SHARE * area) & (inks >= NECK_INK)
                    & (np.asarray(thick) >= 2 * radius))
            if real.sum() >= 2:
                # Parts too small or bare to be scraps go with their nearest real part.
                owner = np.flatnonzero(real) + 1
                _, idx2 = cv2.distanceTransformWithLabels(
                    (~np.isin(cores, owner)).view(np.uint8), cv2.DIST_L2, 5,
                    labelType=cv2.DIST_LABEL_PIXEL)
                seeds2 = cores[np.isin(cores, owner)]
                renumber = np.zeros(count + 1, np.int32)
                renumber[owner] = np.arange(1, len(owner) + 1)
                return np.where(region, renumber[seeds2[idx2 - 1]], 0)
        radius *= NECK_GROWTH
    return None


def split_necks(labels: np.ndarray, keep: np.ndarray, ink: np.ndarray,
                rgb: np.ndarray | None = None) -> np.ndarray:
    """Regions of ``labels`` split at necks (:func:`_parts`), in place; the labels kept.
    With ``rgb``, ink also counts where it is dark only against the paper around it."""
    out = []
    queue = list(keep)
    next_label = int(labels.max()) + 1
    while queue:
        lab = queue.pop(0)
        sl = ndimage.find_objects((labels == lab).view(np.uint8))[0]
        own = labels[sl] == lab
        # Ink the table's colour (grey text on a grey table) is still a hole in its
        # scrap here: holes count as ink.
        region = fill_holes(own)
        marks = ink[sl] | ~own
        if rgb is not None:
            # Small grey type (code on a tinted block, photographed and reduced) is lighter
            # than the photo-wide ink level: a scrap of it would hold no ink and never be
            # split off a neighbour its rim touches (a paper-style code page, N = 8).
            marks |= ink_darkness(rgb[sl], own.astype(np.float32)) >= NECK_INK_LEVEL
        parts = _parts(region, marks & region)
        if parts is None:
            out.append(lab)
            continue
        for p in range(2, int(parts.max()) + 1):
            labels[sl][own & (parts == p)] = next_label
            queue.append(next_label)
            next_label += 1
        queue.append(lab)
    return np.asarray(sorted(out), dtype=np.int64)


def _held_back(labels: np.ndarray, keep: np.ndarray, before: np.ndarray, held: np.ndarray,
               areas: np.ndarray) -> np.ndarray:
    """The regions ``held`` back (their labels in ``before``, areas in ``areas``) that hold
    at least :data:`MIN_AREA_SHARE` of the largest scrap once split: labelled again in
    ``labels``, in place, under new labels (returned). Two large scraps touching were one
    region, and the bound taken from it left out two sliver scraps of a paper-style Java
    page (N = 16) at 3-4 % of the largest scrap."""
    if not len(held) or not len(keep):
        return np.zeros(0, np.int64)
    largest = int(np.bincount(labels.ravel())[keep].max())
    back = []
    for lab in held[areas[held] >= MIN_AREA_SHARE * largest]:
        new = int(labels.max()) + 1
        labels[before == lab] = new
        back.append(new)
    return np.asarray(back, dtype=np.int64)


def fill_holes(mask: np.ndarray) -> np.ndarray:
    """``mask`` with every region it encloses filled (4-connected background)."""
    padded = np.pad(mask.view(np.uint8), 1)
    outside = padded.copy()
    cv2.floodFill(outside, None, (0, 0), 1, flags=4)
    return (padded | (1 - outside))[1:-1, 1:-1].astype(bool)


def segment(rgb: np.ndarray) -> list[Segment]:
    """Every scrap on the table top ``rgb`` (HxWx3 uint8), in reading order (top to
    bottom by their centres, then left to right)."""
    rgb = np.ascontiguousarray(rgb[..., :3])
    h, w = rgb.shape[:2]
    coloured, dark = classify(rgb)
    tablish = (coloured | dark).view(np.uint8)
    # Ink lines the colour of the table (a ruled line, a stroke crossing a tear) are thin;
    # table between scraps is not: opening the table mask leaves them to the paper.
    ink, radius = ink_strokes(rgb, ~(coloured | dark))
    table = cv2.morphologyEx(tablish, cv2.MORPH_OPEN, disk(radius),
                             borderType=cv2.BORDER_REPLICATE).astype(bool)
    labels, count = ndimage.label(~table, structure=np.ones((3, 3), bool))
    if count == 0:
        return []
    areas = np.bincount(labels.ravel(), minlength=count + 1)
    areas[0] = 0
    least = max(MIN_AREA, MIN_IMAGE_SHARE * h * w)
    keep = np.flatnonzero(areas >= max(least, MIN_AREA_SHARE * areas.max()))
    kept = np.zeros(count + 1, bool)
    kept[keep] = True
    # Regions under the share of the largest, held back until the largest is split (it may
    # be several scraps touching).
    held = np.flatnonzero((areas >= least) & ~kept)
    before = labels.copy() if len(held) else labels
    labels[~kept[labels]] = 0
    # Pockets darker than any shadow at one scrap's edge are ink (where shadows overlap,
    # between two scraps, they are not); so are wider bites out of a scrap's edge that
    # open onto its ink (a bold stroke crossing the tear, on the shadow's side).
    _adopt(labels, dark & table, areas)
    wide = cv2.morphologyEx(tablish, cv2.MORPH_OPEN, disk(min(WIDE * radius, RADIUS_WIDE)),
                            borderType=cv2.BORDER_REPLICATE).astype(bool)
    _adopt(labels, table & ~wide & (labels == 0), areas, ink)
    keep = split_necks(labels, keep, ink, rgb)
    keep = np.sort(np.concatenate([keep, _held_back(labels, keep, before, held, areas)]))
    objects = ndimage.find_objects(labels)
    out = []
    for lab in keep:
        sl = objects[lab - 1]
        y0, y1 = max(0, sl[0].start - PAD), min(h, sl[0].stop + PAD)
        x0, x1 = max(0, sl[1].start - PAD), min(w, sl[1].stop + PAD)
        lab_crop = labels[y0:y1, x0:x1]
        own = lab_crop == lab
        # Paper is never thinner than this: thin strands are table texture (a dark grain
        # line off the table's hue) that touched the scrap.
        filled = cv2.morphologyEx(fill_holes(own).view(np.uint8), cv2.MORPH_OPEN,
                                  disk(STRAND)).astype(bool)
        near = cv2.dilate(filled.view(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
        near &= (lab_crop == 0) | filled  # its soft edge, where no other scrap is
        img = rgb[y0:y1, x0:x1].astype(np.float32)
        plain_table = coloured[y0:y1, x0:x1] & table[y0:y1, x0:x1] & ~filled
        given = filled & (coloured[y0:y1, x0:x1] | dark[y0:y1, x0:x1])
        alpha, colour = edge_alpha(img, filled, near, plain_table, given)
        # Per-pixel noise (grain, JPEG) would roughen the traced outline; the cut's own
        # roughness is coarser than this.
        alpha = cv2.GaussianBlur(alpha.astype(np.float32), (0, 0), ALPHA_SIGMA)
        a8 = np.rint(alpha * 255.0).astype(np.uint8)
        crop = np.dstack([np.rint(colour).astype(np.uint8), a8])
        crop[a8 == 0] = 0
        out.append(Segment(box=(x0, y0, x1, y1), mask=a8 >= 128, rgba=crop))
    out.sort(key=lambda sg: _reading_key(sg))
    return out


def _reading_key(sg: Segment) -> tuple[float, float]:
    ys, xs = np.nonzero(sg.mask)
    return float(ys.mean()) + sg.box[1], float(xs.mean()) + sg.box[0]

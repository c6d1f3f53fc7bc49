"""Scraps out of one photograph of a table top: a mask and an RGBA crop per scrap.

The table is whatever lies at the image border: a colour field that may be textured and
darkened by shadows, i.e. ``k · T(p)`` with a shadow factor ``k`` and a smooth local table
colour ``T(p)``. Every pixel the table model does not explain is paper (white paper, ink,
a shaded curl); connected paper regions with their holes filled are the scraps.

Edges are traced to a fraction of a pixel: across the cut edge a pixel mixes the paper
just inside with the (maybe shadowed) table just outside, so its paper share is the
projection of ``c - B`` on ``P - B`` with ``B`` and ``P`` the local table and paper
colours. The reassembly matches cut edges at sub-pixel accuracy and finds the page border
by its straightness, so the share is what the crop's alpha carries.

Ink that reaches the cut edge is darker than the table beside it; such pixels are paper
with alpha 1 (else every letter crossing a tear would bite a notch into the outline).
Where ink and shadowed table have the same colour (a near-black table) the edge is only
as good as the colour allows.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image
from scipy import ndimage

BORDER = 3  # px of the image border assumed to be table
COARSE = 8  # the table colour field is estimated on a grid of this many px
FIELD_SIGMA = 3.0  # coarse cells: smoothing of the table colour field
SHADOW_MIN = 0.2  # darkest shadow, as a share of the table's brightness
LIT_MIN = 0.8  # pixels at least this bright relative to the field count as unshadowed
K_MAX_MIN, K_MAX_MAX = 1.05, 3.0  # bounds of the table/paper brightness split
VALLEY_SHARE = 0.3  # a brightness histogram dipping less between its peaks has one mode
SPARSE = 3  # px: stride of the full-size pixels that set the split
ITERATIONS = 3
STRIP = 256  # rows per strip of the full-size classification
HUE_MIN, HUE_MAX = 8.0, 40.0  # grey levels: bounds of the table's off-hue limit
HUE_SHARE = 0.04  # ... plus this share of the pixel's brightness
HUE_PERCENTILE = 90.0  # of the plain table pixels' off-hue distances ...
HUE_MARGIN = 2.2  # ... times this is the limit (~4.7 sigma of round noise)
PLAIN_K = 0.15  # plain table: within this of the field's brightness
PAPER_SIGMA = 1.0  # px: averaging of the paper colour sampled beside an edge ...
TABLE_SIGMA = 1.0  # ... and of the table's
ALPHA_SIGMA = 0.8  # px: smoothing of the finished alpha
OFFSET_SIGMA = 4.0  # px: reach along the edge of the clean stretches' sub-pixel offset
INK_SHARE = -0.08  # paper share below this on non-table pixels: ink at the edge
MIN_AREA_SHARE = 0.02  # of the largest region: smaller regions are specks, not scraps
MIN_IMAGE_SHARE = 0.001  # of the photo: smaller regions are specks (a scrap of N = 64 is ~1%)
MIN_AREA = 64  # px
POCKET_SHARE = 0.05  # of its scrap's area: larger dark regions are not ink at an edge
RADIUS_MIN, RADIUS_MAX = 2, 5  # px: the opening that gives ink lines back to the paper
WIDE, RADIUS_WIDE = 3, 9  # the wider opening (times the first, at most px) for bold bites
INK_REACH = 3  # px: a bite opens onto ink this close
STRAND = 2  # px: radius of the opening that cuts thin strands off a scrap
PAD = 6  # px of margin around each crop


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


def scrap_images(images: Sequence[bytes]) -> list[np.ndarray]:
    """The scraps a request shows, as RGBA arrays: an image with transparency is one
    cut-out scrap and is kept as it is; an opaque one is a photograph of scraps on a
    table, and the scraps segmented out of it are returned in its reading order."""
    out: list[np.ndarray] = []
    for k, data in enumerate(images):
        try:
            with Image.open(io.BytesIO(data)) as im:
                rgba = np.asarray(im.convert("RGBA"))
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise ValueError(f"image {k + 1} is not a readable image ({exc})") from exc
        if rgba[..., 3].min() < 255:
            out.append(rgba)
        else:
            out.extend(sg.rgba for sg in segment(rgba[..., :3]))
    return out


def _border_pixels(img: np.ndarray, width: int) -> np.ndarray:
    return np.concatenate(
        [
            img[:width].reshape(-1, 3),
            img[-width:].reshape(-1, 3),
            img[:, :width].reshape(-1, 3),
            img[:, -width:].reshape(-1, 3),
        ]
    )


def _smooth(values: np.ndarray, weight: np.ndarray, sigma: float) -> np.ndarray:
    """Normalised convolution: the ``weight``-weighted local mean of ``values`` (HxWx3);
    where no weight is near, the nearest known mean."""
    wt = weight.astype(np.float32)
    den = cv2.GaussianBlur(wt, (0, 0), sigma, borderType=cv2.BORDER_REFLECT)
    num = cv2.GaussianBlur(values * wt[..., None], (0, 0), sigma, borderType=cv2.BORDER_REFLECT)
    known = den > 1e-3
    out = num / np.maximum(den, 1e-3)[..., None]
    if not known.all() and known.any():
        idx = ndimage.distance_transform_edt(~known, return_distances=False, return_indices=True)
        out = out[idx[0], idx[1]]
    return out


def split(values: np.ndarray, bins: int = 64) -> float | None:
    """Otsu's threshold between the two modes of ``values``, or None when there are no
    two modes: the histogram between the two classes' peaks never falls below
    VALLEY_SHARE of the smaller peak (a bare, grainy table is one broad mode)."""
    hist, edges = np.histogram(values, bins=bins)
    p = hist.astype(np.float64)
    centres = 0.5 * (edges[:-1] + edges[1:])
    w0 = np.cumsum(p)
    w1 = w0[-1] - w0
    m0 = np.cumsum(p * centres)
    mean0 = m0 / np.maximum(w0, 1e-9)
    mean1 = (m0[-1] - m0) / np.maximum(w1, 1e-9)
    cut = int(np.argmax(w0 * w1 * (mean0 - mean1) ** 2)) + 1
    smooth = np.convolve(p, np.ones(3) / 3, mode="same")
    if cut >= bins or cut < 1:
        return None
    lo, hi = int(np.argmax(smooth[:cut])), cut + int(np.argmax(smooth[cut:]))
    valley = smooth[lo : hi + 1].min()
    if valley > VALLEY_SHARE * min(smooth[lo], smooth[hi]):
        return None
    return float(edges[cut])


def _field_at(field: np.ndarray, shape: tuple[int, int], rows: slice | None = None,
              ) -> tuple[list[np.ndarray], np.ndarray]:
    """Planes of T/|T|² and |T| of the coarse table field, enlarged (bilinear, as
    ``cv2.resize``) to an image of ``shape`` (h, w), for its ``rows`` only if given."""
    length = np.sqrt(np.maximum((field * field).sum(axis=2), 1.0)).astype(np.float32)
    unit = field / (length * length)[..., None]
    h, w = shape
    gh, gw = field.shape[:2]
    rows = rows or slice(0, h)
    ys = np.arange(rows.start, rows.stop, dtype=np.float32)
    map_y = np.broadcast_to(((ys + 0.5) * (gh / h) - 0.5)[:, None], (len(ys), w))
    map_x = np.broadcast_to(((np.arange(w, dtype=np.float32) + 0.5) * (gw / w) - 0.5)[None, :],
                            (len(ys), w))
    map_x, map_y = np.ascontiguousarray(map_x), np.ascontiguousarray(map_y)

    def big(plane: np.ndarray) -> np.ndarray:
        return cv2.remap(np.ascontiguousarray(plane), map_x, map_y, cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)

    return [big(unit[..., c]) for c in range(3)], big(length)


def _explain(planes: list[np.ndarray], unit: list[np.ndarray], length: np.ndarray,
             ) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel the shadow factor ``k`` = c·T/|T|² and the squared distance of its
    colour from the table's hue line, |c - kT|² = |c|² - k²|T|²."""
    r, g, b = planes
    k = r * unit[0]
    k += g * unit[1]
    k += b * unit[2]
    kn = k * length
    off2 = r * r + g * g + b * b - kn * kn
    return k, off2


def table_model(rgb: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The table: its (unshadowed) colour field on a 1/COARSE grid, the brightest a table
    pixel gets relative to it (texture, grain) — brighter is paper — and how far from the
    table's hue its own pixels stray (texture, noise, JPEG) — farther is paper or ink.

    The field is fitted on the reduced image; the two limits are read off a sparse set of
    full-size pixels (texture averages out in the reduced image): the brightness limit is
    Otsu's split of log k between the table's mode and the paper's, the hue limit a margin
    over what the lit table pixels show.
    """
    h, w = rgb.shape[:2]
    small = cv2.resize(rgb, (max(1, w // COARSE), max(1, h // COARSE)),
                       interpolation=cv2.INTER_AREA).astype(np.float32)
    sparse = rgb[SPARSE // 2 :: SPARSE, SPARSE // 2 :: SPARSE].astype(np.float32)
    border = _border_pixels(small, max(1, min(BORDER, min(small.shape[:2]) // 4)))
    field = np.broadcast_to(np.median(border, axis=0), small.shape).astype(np.float32)
    s_planes = [np.ascontiguousarray(small[..., c]) for c in range(3)]
    p_planes = [np.ascontiguousarray(sparse[..., c]) for c in range(3)]
    k_max, hue_max = K_MAX_MIN, HUE_MAX
    for _ in range(ITERATIONS):
        k, off2 = _explain(p_planes, *_field_at(field, sparse.shape[:2]))
        # Ink and shadows are a mode of their own below the table's: leave them out.
        logk = np.log(np.clip(k[k >= LIT_MIN], LIT_MIN, K_MAX_MAX))
        cut = split(logk) if logk.size > 100 else None
        # No paper mode: nothing is brighter than the table (what is left off its hue
        # is specks).
        k_max = K_MAX_MAX if cut is None else float(np.clip(np.exp(cut), K_MAX_MIN, K_MAX_MAX))
        # Table at its usual brightness: edge pixels mixing in paper are rare there.
        plain = (np.abs(k - 1.0) <= PLAIN_K) & (k <= k_max) & (off2 <= hue_max**2)
        if plain.sum() > 100:
            spread = float(np.sqrt(np.percentile(off2[plain], HUE_PERCENTILE)))
            hue_max = float(np.clip(HUE_MARGIN * spread, HUE_MIN, HUE_MAX))
        k, off2 = _explain(s_planes, *_field_at(field, small.shape[:2]))
        lit = (off2 <= hue_max**2) & (k >= LIT_MIN) & (k <= k_max)
        if lit.sum() > 20:
            field = _smooth(small, lit, FIELD_SIGMA)
    return field, k_max, hue_max


def classify(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full-size masks (table colour, dark): pixels of the table's hue from its darkest
    shadow to its brightest grain, and pixels darker than any shadow (ink, or where two
    scraps' shadows overlap). Worked in strips of rows, so memory stays a few masks."""
    field, k_max, hue_max = table_model(rgb)
    h, w = rgb.shape[:2]
    coloured = np.empty((h, w), bool)
    dark = np.empty((h, w), bool)
    for top in range(0, h, STRIP):
        rows = slice(top, min(h, top + STRIP))
        planes = [p.astype(np.float32) for p in cv2.split(rgb[rows])]
        unit, length = _field_at(field, (h, w), rows)
        k, off2 = _explain(planes, unit, length)
        # JPEG blurs colour near strong edges, more so the brighter the pixel.
        limit = k * length * np.float32(HUE_SHARE) + np.float32(hue_max)
        dark[rows] = k < SHADOW_MIN
        coloured[rows] = (off2 <= limit * limit) & ~dark[rows] & (k <= k_max)
    return coloured, dark


def _nearest(img: np.ndarray, weight: np.ndarray, rows: np.ndarray, cols: np.ndarray,
             sigma: float) -> np.ndarray:
    """For each (row, col), the colour of the nearest pixel of ``weight``, averaged over
    its ``weight`` neighbours (Gaussian, ``sigma`` px) against noise and texture."""
    wt = weight.astype(np.float32)
    den = cv2.GaussianBlur(wt, (0, 0), sigma)
    num = cv2.GaussianBlur(img * wt[..., None], (0, 0), sigma)
    if not weight.any():
        return np.broadcast_to(img.reshape(-1, 3).mean(axis=0), (len(rows), 3))
    src = np.where(weight, 0, 1).astype(np.uint8)
    _, lab = cv2.distanceTransformWithLabels(src, cv2.DIST_L2, 5,
                                             labelType=cv2.DIST_LABEL_PIXEL)
    # Labels number the zero pixels of src in raster order.
    at = np.flatnonzero(src.reshape(-1) == 0)[lab[rows, cols] - 1]
    return num.reshape(-1, 3)[at] / np.maximum(den.reshape(-1)[at], 1e-3)[:, None]


def _paper_share(img: np.ndarray, paper: np.ndarray, table: np.ndarray, band: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per ``band`` pixel, the share of paper in it (float, unclipped): the projection of
    c - B on P - B, with B and P the colours of the nearest plain table and plain paper
    (the paper may darken toward a curled edge, a shadow deepens toward the paper).
    Returns the share (HxW) and B and P at the band pixels (in ``np.nonzero`` order)."""
    kernel = np.ones((3, 3), np.uint8)
    far_table = cv2.erode(table.view(np.uint8), kernel).astype(bool)
    inner = cv2.erode(paper.view(np.uint8), kernel).astype(bool)
    # Paper colour from the white of the paper, not its ink.
    lum = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    if inner.any():
        level = float(np.percentile(lum[inner], 60))
        inner &= lum > level - 40
    rows, cols = np.nonzero(band)
    c = img[rows, cols]
    b = _nearest(img, far_table, rows, cols, TABLE_SIGMA)
    p = _nearest(img, inner, rows, cols, PAPER_SIGMA)
    d = p - b
    share = np.zeros(band.shape, np.float32)
    share[rows, cols] = ((c - b) * d).sum(axis=1) / np.maximum((d * d).sum(axis=1), 100.0)
    return share, b, p


def _signed_distance(mask: np.ndarray) -> np.ndarray:
    """Distance (px) of each pixel centre to the pixel boundary of ``mask``: positive
    inside, negative outside (±0.5 on the pixels either side of it)."""
    inside = cv2.distanceTransform(mask.view(np.uint8), cv2.DIST_L2, 5)
    outside = cv2.distanceTransform((~mask).view(np.uint8), cv2.DIST_L2, 5)
    return np.where(mask, inside - 0.5, 0.5 - outside)


def edge_alpha(img: np.ndarray, filled: np.ndarray, near: np.ndarray,
               plain_table: np.ndarray, given: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Alpha (float 0..1) of one scrap's crop — 1 inside, its paper share across the edge
    — and its colours with the table taken out of the edge pixels (else every seam of
    the reassembled page would be drawn in the table's colour, through the letters)."""
    square = np.ones((3, 3), np.uint8)
    interior = cv2.erode(filled.view(np.uint8), square).astype(bool)
    band = near & ~interior
    share, under, paper = _paper_share(img, filled, plain_table, band)
    alpha = np.where(band, np.clip(share, 0.0, 1.0), 0.0)
    alpha[interior] = 1.0
    alpha = _edge_offsets(img, alpha, share, filled, band, plain_table, given)
    # c = a·paper + (1 - a)·table, solved for the paper where it is most of the pixel.
    rows, cols = np.nonzero(band)
    a = alpha[rows, cols][:, None]
    unmixed = (img[rows, cols] - (1.0 - a) * under) / np.maximum(a, 0.5)
    colour = img.copy()
    colour[rows, cols] = np.where(a >= 0.5, np.clip(unmixed, 0.0, 255.0), paper)
    return alpha, colour


def _edge_offsets(img: np.ndarray, alpha: np.ndarray, share: np.ndarray, filled: np.ndarray,
                  band: np.ndarray, plain_table: np.ndarray, given: np.ndarray) -> np.ndarray:
    """``alpha`` with its odd edge pixels set otherwise: where the colour across the edge
    is not paper over table, the edge is the scrap's pixel boundary moved by the sub-pixel
    offset the clean stretches of edge nearby show against it. Odd are the pixels given
    to the scrap (table-coloured or dark: ink lines, pockets), ink darker than the table,
    and any edge pixel that ink comes within reach of."""
    odd = band & (given | (filled & (share < INK_SHARE)))
    lum = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    deep = cv2.erode(filled.view(np.uint8), _disk(2)).astype(bool)
    if deep.any() and plain_table.any():
        white = float(np.percentile(lum[deep], 90))
        floor = float(np.median(lum[plain_table]))
        ink = deep & (lum < 0.5 * (white + floor))
        # Strokes that reach the edge pass within 2 px of it: ink from 2 px in, grown by 3.
        odd |= band & cv2.dilate(ink.view(np.uint8), _disk(3)).astype(bool)
    if not odd.any():
        return alpha
    sd = _signed_distance(filled)
    clean = band & ~odd & (share > 0.02) & (share < 0.98)
    offset = np.where(clean, share - 0.5 - sd, 0.0).astype(np.float32)
    num = cv2.GaussianBlur(offset, (0, 0), OFFSET_SIGMA)
    den = cv2.GaussianBlur(clean.astype(np.float32), (0, 0), OFFSET_SIGMA)
    fallback = float(offset[clean].mean()) if clean.any() else 0.0
    shift = np.where(den > 1e-3, num / np.maximum(den, 1e-3), fallback)
    alpha[odd] = np.clip(0.5 + sd[odd] + shift[odd], 0.0, 1.0)
    return alpha


def _disk(radius: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))


def ink_strokes(rgb: np.ndarray, paper: np.ndarray) -> tuple[np.ndarray, int]:
    """Ink on the paper, from 2 px inside its edge, and the radius of the opening that
    gives ink lines back to the paper: a little over half the width of most strokes."""
    inner = cv2.erode(paper.view(np.uint8), _disk(2)).astype(bool)
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
        reach = cv2.dilate(ink.view(np.uint8), _disk(INK_REACH)).reshape(-1)[at]
        touches = np.zeros(count + 1, np.uint8)
        np.maximum.at(touches, which, reach)
        ok &= touches > 0
    ok[0] = False
    give = np.where(ok, owner, 0)
    target = give[which]
    labels.reshape(-1)[at[target > 0]] = target[target > 0]


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
    table = cv2.morphologyEx(tablish, cv2.MORPH_OPEN, _disk(radius),
                             borderType=cv2.BORDER_REPLICATE).astype(bool)
    labels, count = ndimage.label(~table, structure=np.ones((3, 3), bool))
    if count == 0:
        return []
    areas = np.bincount(labels.ravel(), minlength=count + 1)
    areas[0] = 0
    keep = np.flatnonzero(areas >= max(MIN_AREA, MIN_IMAGE_SHARE * h * w,
                                        MIN_AREA_SHARE * areas.max()))
    kept = np.zeros(count + 1, bool)
    kept[keep] = True
    labels[~kept[labels]] = 0
    # Pockets darker than any shadow at one scrap's edge are ink (where shadows overlap,
    # between two scraps, they are not); so are wider bites out of a scrap's edge that
    # open onto its ink (a bold stroke crossing the tear, on the shadow's side).
    _adopt(labels, dark & table, areas)
    wide = cv2.morphologyEx(tablish, cv2.MORPH_OPEN, _disk(min(WIDE * radius, RADIUS_WIDE)),
                            borderType=cv2.BORDER_REPLICATE).astype(bool)
    _adopt(labels, table & ~wide & (labels == 0), areas, ink)
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
                                  _disk(STRAND)).astype(bool)
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

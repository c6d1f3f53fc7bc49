"""Classical jigsaw reassembly of ShredBench scraps (the ``jigsaw-ocr`` reference solver).

Pipeline, one small module each:

* :mod:`segment` — a photograph of scraps on a table (one opaque image) cut into RGBA
  scraps, using :mod:`tabletop` (which pixels are table) and :mod:`edge` (sub-pixel
  alpha); cut-out scraps pass through as they are;
* :mod:`contour` — alpha → sub-pixel paper outline (shadow dropped);
* :mod:`sides` — corners and sides; straight sides are page border;
* :mod:`ink` — text-line direction of a scrap;
* :mod:`match` — side-to-side candidate joins with ICP-refined poses;
* :mod:`assemble` — cheapest-first union-find assembly with overlap/border/text checks;
* :mod:`refine` — joint pose refinement of a cluster;
* :mod:`solve` — the above end to end, clusters levelled so text runs horizontally;
* :mod:`read` / :mod:`table` — drawing, which-way-up, OCR and text/HTML output.

:mod:`scoring` reads the answer key for evaluation only; the solver never imports it.
"""

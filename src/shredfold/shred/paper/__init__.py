"""The ``paper`` render style: a document set the way the ShredBench authors' pipeline sets it.

Their ``preprocess_.py`` turns the Markdown into HTML with Python-Markdown (extensions
``extra``, ``nl2br``, ``codehilite``), lays it out in headless Chrome with one stylesheet and
takes a 1600 px wide screenshot. Here the same HTML is laid out by a small engine that follows
Chrome's rules for the parts of CSS that stylesheet uses (block margins and their collapsing,
line boxes, justification, tables with collapsed borders), shaping text with HarfBuzz in the
faces Chrome used, so that lines break where Chrome breaks them, and draws with Pillow: the
same bytes on any machine, with no browser in the sample path.

Modules: :mod:`.css` (the stylesheet and the browser defaults it relies on), :mod:`.markup`
(document → Markdown → HTML → nodes), :mod:`.shaping` (faces, fallback, HarfBuzz),
:mod:`.breaks` (where a line may break, where justification may add space), :mod:`.inline`
(lines), :mod:`.table` (column widths), :mod:`.blocks` (the page's boxes), :mod:`.paint`
(pixels) and :mod:`.page` (the entry points).
"""

# Part of every paper-style sample's key: bump it when the layout or the pixels change for
# the same document and faces.
STYLE_VERSION = 1

"""A document as the authors' pipeline reads it: Markdown, then HTML, then a tree of nodes.

News is Markdown already. A code document becomes one fenced block in its language, as
their code documents are (their renderer reads Markdown files only, and codehilite is what
turns a fence into a ``<pre><code>``). A table is its HTML, which Markdown passes through.

Before Markdown, their renderer "unescapes" a document that holds a literal backslash-n or is
wrapped in double quotes (``\\n``, ``\\t`` and ``\\"`` become a newline, a tab and a quote):
this is what their pages show, so it is done here too. Their ``$…$`` spans are not: those
were typeset by MathJax, a TeX engine loaded from the web, and here are text as written.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from shredfold.corpus.document import Document

# The extensions the authors' renderer enables (their preprocess_.py).
EXTENSIONS = ("extra", "nl2br", "codehilite")
FENCE_LANGUAGE = {"code_python": "python", "code_java": "java", "code_cpp": "cpp"}


@dataclass
class Node:
    """An HTML element: its tag, attributes and children (text or elements, in order)."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)


def document_markdown(doc: Document) -> str:
    """The Markdown the authors' pipeline would render for ``doc``."""
    if doc.kind == "code":
        code = doc.text.replace("\r\n", "\n").rstrip("\n")
        fence = "```"
        while fence in code:  # a fence inside the code must not close the block
            fence += "`"
        return f"{fence}{FENCE_LANGUAGE.get(doc.domain, '')}\n{code}\n{fence}\n"
    return doc.text


def unescape_like_authors(text: str) -> str:
    """Their renderer's clean-up of a document stored as an escaped string literal."""
    if "\\n" in text or (text.strip().startswith('"') and text.strip().endswith('"')):
        text = text.strip()
        if text.startswith('"') and text.endswith('"'):
            text = text[1:-1]
        text = text.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
    return text


def markdown_html(markdown_text: str) -> str:
    """Python-Markdown's HTML for ``markdown_text``, with the authors' extensions."""
    import markdown

    return markdown.markdown(unescape_like_authors(markdown_text), extensions=list(EXTENSIONS))


def html_tree(html: str) -> Node:
    """The ``<body>`` of ``html`` as nodes (entities decoded, comments dropped)."""
    import lxml.html

    root = lxml.html.document_fromstring(f"<html><body>{html}</body></html>")
    body = root.find("body")
    assert body is not None
    return _convert(body)


def _convert(el: object) -> Node:
    node = Node(str(el.tag).lower(), {str(k): str(v) for k, v in el.attrib.items()})  # type: ignore[attr-defined]
    if el.text:  # type: ignore[attr-defined]
        node.children.append(el.text)  # type: ignore[attr-defined]
    for child in el:  # type: ignore[attr-defined]
        if isinstance(child.tag, str):
            node.children.append(_convert(child))
        if child.tail:
            node.children.append(child.tail)
    return node


@functools.lru_cache(maxsize=32)
def _tree_of(markdown_text: str) -> Node:
    return html_tree(markdown_html(markdown_text))


def document_tree(doc: Document) -> Node:
    """The body of the HTML page the authors' pipeline makes of ``doc`` (shared: do not change)."""
    return _tree_of(document_markdown(doc))

"""Write a generated JSONL corpus for the paper-scale planning benchmark.

usage: python bench/make_corpus.py OUT [--per-domain 126] [--seed 0]

Each document is recombined from the built-in corpus so it is distinct yet looks and
weighs like a real one: news articles keep a built-in headline and byline and get new
paragraphs of sentences drawn from every article of the language; code files keep a
built-in header and entry point around top-level definitions drawn from every file of
the language; tables keep a built-in layout with some row groups dropped and every
number redrawn. The same seed always writes the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shredfold.corpus.document import DOMAINS, Document
from shredfold.corpus.loaders import load_builtin

NEWS_CHARS = (900, 2400)
CODE_BYTES = (1200, 3800)
CODE_MAX_BYTES = 4000
MIN_TABLE_ROWS = 5


# ---------------------------------------------------------------- news


@dataclass(frozen=True)
class Article:
    headline: str
    byline: str | None
    sentences: list[str]


_EN_ABBREVIATIONS = ("Dr.", "Mr.", "Mrs.", "Ms.", "St.", "a.m.", "p.m.")


def split_sentences(paragraph: str, chinese: bool) -> list[str]:
    """Split at sentence ends outside quotations, so a quote is never cut in half."""
    out: list[str] = []
    start = 0
    depth = 0
    enders = "。！？" if chinese else ".!?"
    for i, ch in enumerate(paragraph):
        if chinese:
            depth += (ch == "“") - (ch == "”")
        elif ch == '"':
            depth = 1 - depth
        # Chinese attributions follow the closing quote (“……。”他说), so only an ender
        # outside quotes ends a Chinese sentence; English may end on a closing quote.
        closes_quote = not chinese and ch == '"' and paragraph[i - 1] in enders
        if depth or not (ch in enders or closes_quote):
            continue
        if not chinese:
            rest = paragraph[i + 1 :]
            if not rest.startswith(" ") or not rest[1:2].isupper() and rest[1:2] != '"':
                continue
            if paragraph[: i + 1].endswith(_EN_ABBREVIATIONS):
                continue
        out.append(paragraph[start : i + 1].strip())
        start = i + 1
    tail = paragraph[start:].strip()
    if tail:
        out.append(tail)
    return out


def parse_article(doc: Document) -> Article:
    blocks = [b.strip() for b in doc.text.split("\n\n") if b.strip()]
    headline = blocks[0]
    byline = None
    body = blocks[1:]
    if body and len(body[0]) < 90 and not body[0].endswith((".", "。", '"', "”")):
        byline, body = body[0], body[1:]
    chinese = doc.domain == "news_zh"
    sentences = [s for para in body for s in split_sentences(para, chinese)]
    return Article(headline, byline, sentences)


def make_news(rng: random.Random, base: Document, pool: list[Article]) -> str:
    article = parse_article(base)
    sentences = [s for a in pool for s in a.sentences]
    rng.shuffle(sentences)
    joiner = "" if base.domain == "news_zh" else " "
    target = rng.randint(*NEWS_CHARS)
    head = [article.headline] + ([article.byline] if article.byline else [])
    length = sum(len(h) + 2 for h in head)
    paragraphs: list[list[str]] = [[]]
    size = rng.randint(2, 4)
    for sentence in sentences:
        if length >= target:
            break
        if length + len(sentence) + 2 > NEWS_CHARS[1]:
            continue
        if len(paragraphs[-1]) == size:
            paragraphs.append([])
            size = rng.randint(2, 4)
        paragraphs[-1].append(sentence)
        length += len(sentence) + (2 if len(paragraphs[-1]) == 1 else len(joiner))
    return "\n\n".join(head + [joiner.join(p) for p in paragraphs]) + "\n"


# ---------------------------------------------------------------- code


@dataclass(frozen=True)
class SourceFile:
    comment: str
    imports: list[str]
    chunks: list[str]
    entry: str


_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def _depth_change(line: str) -> int:
    code = _LITERAL.sub("", line.split("//")[0])
    return code.count("{") - code.count("}")


def parse_python(doc: Document) -> SourceFile:
    tree = ast.parse(doc.text)
    lines = doc.text.split("\n")
    comment = ""
    imports: list[str] = []
    chunks: list[str] = []
    entry = ""
    for i, node in enumerate(tree.body):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[first - 1 : node.end_lineno])
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            comment = text
        elif isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(text)
        elif isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            entry = text
        else:
            chunks.append(text)
    return SourceFile(comment, imports, chunks, entry)


def parse_braced(doc: Document, member_depth: int) -> SourceFile:
    """Split C++ (``member_depth`` 0) or Java (1) into definitions at that brace depth."""
    comment_lines: list[str] = []
    imports: list[str] = []
    chunks: list[str] = []
    current: list[str] = []
    depth = 0
    for line in doc.text.split("\n"):
        stripped = line.strip()
        if depth == 0 and stripped.startswith(("#include", "import ", "package ")):
            imports.append(stripped)
            continue
        if depth == 0 and not imports and stripped.startswith("//"):
            comment_lines.append(line)
            continue
        before = depth
        depth += _depth_change(line)
        if before < member_depth or (before == member_depth and depth < member_depth):
            # Class header and closing brace of a Java file: rebuilt around the members.
            continue
        if stripped or depth > member_depth:
            current.append(line)
        elif current:
            # A blank line back at member depth ends a definition.
            chunks.append("\n".join(current))
            current = []
    if current:
        chunks.append("\n".join(current))
    mains = [c for c in chunks if re.search(r"\bmain\s*\(", c.split("{")[0])]
    entry = mains[0] if mains else ""
    chunks = [c for c in chunks if c not in mains]
    return SourceFile("\n".join(comment_lines), imports, chunks, entry)


def _java_frame(doc: Document) -> tuple[str, str]:
    """The lines before the first member (Javadoc, class line) and the closing brace."""
    lines = doc.text.split("\n")
    start = next(i for i, line in enumerate(lines) if re.match(r"(final |public )*class ", line))
    first = start
    while first > 0 and lines[first - 1].strip() and not lines[first - 1].startswith("import"):
        first -= 1
    return "\n".join(lines[first : start + 1]), "}"


def parse_code(doc: Document) -> SourceFile:
    if doc.domain == "code_python":
        return parse_python(doc)
    return parse_braced(doc, member_depth=1 if doc.domain == "code_java" else 0)


_JAVA_CONSTRUCTOR = re.compile(r"\s*(?:public |protected |private )?[A-Z]\w*\(")


def make_code(rng: random.Random, base: Document, parsed: dict[str, SourceFile]) -> str:
    own = parsed[base.doc_id]
    chunks = [
        (doc_id, c)
        for doc_id, f in parsed.items()
        for c in f.chunks
        # Another Java class's constructor would be a glaring misfit inside this one.
        if doc_id == base.doc_id or not _JAVA_CONSTRUCTOR.match(c)
    ]
    rng.shuffle(chunks)
    target = rng.randint(*CODE_BYTES)
    chosen: list[tuple[str, str]] = []
    text = _assemble(base, own, parsed, chosen)
    for item in chunks:
        if len(text) >= target:
            break
        candidate = _assemble(base, own, parsed, [*chosen, item])
        if len(candidate) <= CODE_MAX_BYTES:
            chosen.append(item)
            text = candidate
    return text


def _assemble(
    base: Document,
    own: SourceFile,
    parsed: dict[str, SourceFile],
    chosen: list[tuple[str, str]],
) -> str:
    """One source file: the base file's frame around the chosen definitions."""
    sources = {base.doc_id} | {doc_id for doc_id, _ in chosen}
    imports = sorted({imp for s in sources for imp in parsed[s].imports})
    body = [chunk for _, chunk in chosen]
    if base.domain == "code_python":
        # A __future__ import must stay first or the file does not compile.
        imports.sort(key=lambda imp: "__future__" not in imp)
        parts = [own.comment, "\n".join(imports), *body, own.entry]
        return "\n\n\n".join(p for p in parts if p) + "\n"
    if base.domain == "code_cpp":
        parts = [own.comment + "\n" + "\n".join(imports), *body, own.entry]
        return "\n\n".join(p for p in parts if p) + "\n"
    header, closing = _java_frame(base)
    members = "\n\n".join([*body, own.entry])
    return "\n".join(imports) + "\n\n" + header + "\n" + members + "\n" + closing + "\n"


# ---------------------------------------------------------------- tables


_NUMBER = re.compile(r"^-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")
_TD = re.compile(r"(<td[^>]*>)([^<]*)(</td>)")
_ROWSPAN = re.compile(r'rowspan="(\d+)"')
_MERGED = re.compile(r"(rowspan|colspan)=")


def _redraw(rng: random.Random, text: str) -> str:
    if not _NUMBER.match(text):
        return text
    plain = text.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    value = float(plain) * rng.uniform(0.8, 1.25)
    out = f"{value:,.{decimals}f}" if "," in text else f"{value:.{decimals}f}"
    return "0" if out in ("-0", "-0.0") else out


def make_table(rng: random.Random, base: Document) -> str:
    lines = base.text.split("\n")
    first = lines.index("  <tbody>") + 1
    last = lines.index("  </tbody>")
    rows = lines[first:last]
    # Rows tied together by a rowspan form one group and are kept or dropped together.
    groups: list[list[str]] = []
    i = 0
    while i < len(rows):
        end = i + max([int(n) for n in _ROWSPAN.findall(rows[i])] or [1])
        j = i + 1
        while j < end:
            end = max(end, j + max([int(n) for n in _ROWSPAN.findall(rows[j])] or [1]))
            j += 1
        groups.append(rows[i:end])
        i = end
    head = "\n".join(lines[:first])

    def fine_without(group: list[str]) -> bool:
        rest = [row for g in keep if g is not group for row in g]
        # Every table must keep a merged cell: some have them only in the body.
        merged = any(_MERGED.search(text) for text in [head, *rest])
        return len(rest) >= MIN_TABLE_ROWS and merged

    keep = list(groups)
    for _ in range(rng.randint(0, 3)):
        candidates = [g for g in keep[:-1] if fine_without(g)]
        if not candidates:
            break
        keep.remove(rng.choice(candidates))
    body = [
        _TD.sub(lambda m: m.group(1) + _redraw(rng, m.group(2)) + m.group(3), row)
        for group in keep
        for row in group
    ]
    return "\n".join(lines[:first] + body + lines[last:])


# ---------------------------------------------------------------- main


def generate(per_domain: int, seed: int = 0) -> list[dict[str, object]]:
    rng = random.Random(seed)
    records: list[dict[str, object]] = []
    for domain in DOMAINS:
        builtin = load_builtin(domain)
        make: Callable[[Document], str]
        if domain.startswith("news"):
            articles = [parse_article(d) for d in builtin]

            def make(base: Document, articles: list[Article] = articles) -> str:
                return make_news(rng, base, articles)

        elif domain.startswith("code"):
            parsed = {d.doc_id: parse_code(d) for d in builtin}

            def make(base: Document, parsed: dict[str, SourceFile] = parsed) -> str:
                return make_code(rng, base, parsed)

        else:

            def make(base: Document) -> str:
                return make_table(rng, base)

        seen: set[str] = set()
        for n in range(per_domain):
            base = builtin[n % len(builtin)]
            for _ in range(100):
                text = make(base)
                if text not in seen:
                    break
            else:
                raise RuntimeError(f"{domain}: could not make a distinct document {n}")
            seen.add(text)
            records.append(
                {
                    "id": f"{domain}/gen_{n:04d}",
                    "domain": domain,
                    "text": text,
                    "meta": {"generated_from": base.doc_id, "seed": seed},
                }
            )
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="JSONL file to write")
    parser.add_argument("--per-domain", type=int, default=126, help="documents per domain")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.per_domain < 1:
        parser.error("--per-domain must be at least 1")
    records = generate(args.per_domain, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="\n") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} documents ({args.per_domain} per domain) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

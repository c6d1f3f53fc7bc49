"""The document value that flows from the corpus into the renderer."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from shredfold.store import content_key

Domain = Literal["news_en", "news_zh", "code_python", "code_java", "code_cpp", "table"]
Kind = Literal["prose", "code", "table"]
Lang = Literal["en", "zh"]


@dataclass(frozen=True)
class DomainInfo:
    kind: Kind
    lang: Lang  # the language of the domain's text (a CJK character anywhere also means zh)
    extensions: tuple[str, ...]  # file suffixes accepted in a corpus folder (lower-case)


# One home for what a domain is: adding a domain is adding it to ``Domain`` and here (and
# giving it built-in documents).
DOMAIN_INFO: dict[Domain, DomainInfo] = {
    "news_en": DomainInfo("prose", "en", (".md", ".txt")),
    "news_zh": DomainInfo("prose", "zh", (".md", ".txt")),
    "code_python": DomainInfo("code", "en", (".py",)),
    "code_java": DomainInfo("code", "en", (".java",)),
    "code_cpp": DomainInfo("code", "en", (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h")),
    "table": DomainInfo("table", "en", (".html", ".htm", ".md")),
}
DOMAINS: tuple[Domain, ...] = get_args(Domain)
assert set(DOMAINS) == set(DOMAIN_INFO), "every domain needs its DomainInfo"

# Characters set one per cell in Chinese text (ideographs, CJK punctuation, full-width forms).
CJK = re.compile(
    "["
    "\u2e80-\u2fdf"  # radicals
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u30ff"  # kana (occasionally quoted)
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs
    "\ufe30-\ufe4f"  # CJK compatibility forms
    "\uff00-\uffef"  # full-width forms
    "\U00020000-\U0002fa1f"
    "]"
)


def domain_info(domain: str) -> DomainInfo:
    info = DOMAIN_INFO.get(domain)  # type: ignore[call-overload]
    if info is None:
        raise ValueError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    return info


def domain_kind(domain: str) -> Kind:
    return domain_info(domain).kind


class Document(BaseModel):
    """One source document.

    ``text`` is the source as written: Markdown for news, source code for code, and an HTML
    ``<table>`` (with ``rowspan``/``colspan`` for merged cells) for tables. What a model must
    read back is decided by the renderer (it is exactly what was drawn).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str
    domain: Domain
    text: str
    source: str = "builtin"

    @property
    def kind(self) -> Kind:
        return domain_kind(self.domain)

    @property
    def lang(self) -> Lang:
        """What the page is drawn in and scored as: the domain's language, or Chinese as soon
        as the text holds a CJK character (fonts and tokenizers must handle it)."""
        if domain_info(self.domain).lang == "zh" or CJK.search(self.text):
            return "zh"
        return "en"

    @property
    def key(self) -> str:
        """Content key: changes only when the document's domain or text changes."""
        return content_key("document", 1, {"domain": self.domain, "text": self.text})

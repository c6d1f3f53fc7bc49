"""The document value that flows from the corpus into the renderer."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from shredfold.store import content_key

Domain = Literal["news_en", "news_zh", "code_python", "code_java", "code_cpp", "table"]
DOMAINS: tuple[Domain, ...] = (
    "news_en",
    "news_zh",
    "code_python",
    "code_java",
    "code_cpp",
    "table",
)
Kind = Literal["prose", "code", "table"]


def domain_kind(domain: str) -> Kind:
    if domain.startswith("news"):
        return "prose"
    if domain.startswith("code"):
        return "code"
    if domain == "table":
        return "table"
    raise ValueError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")


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
    def key(self) -> str:
        """Content key: changes only when the document's domain or text changes."""
        return content_key("document", 1, {"domain": self.domain, "text": self.text})

"""Source documents: the built-in corpus and loaders for a user's own."""

from shredfold.corpus.document import DOMAINS, Document, Domain, domain_kind

__all__ = ["DOMAINS", "Document", "Domain", "domain_kind"]

"""Source documents: the built-in corpus and loaders for a user's own.

Every built-in document (``builtin/<domain>/``) was written for this project; the results
tables' models, data sets and numbers are invented and describe no real system.
"""

from shredfold.corpus.document import DOMAINS, Document, Domain, domain_kind

__all__ = ["DOMAINS", "Document", "Domain", "domain_kind"]

"""Keeping an API key out of every string the model layer hands on (errors, answers, logs).

A server may echo the key it was sent (some providers do, in a 401 body), and anything we
keep of a reply is cut to a bounded excerpt. Masking only whole occurrences of the key after
cutting would let the cut leave its first characters behind, so :func:`scrub` also masks any
run of text that starts like the key (its first :data:`MIN_PREFIX` characters or more), and
:func:`excerpt` scrubs before it cuts.
"""

from __future__ import annotations

MASK = "***"
# The shortest start of a key that is treated as the key. Shorter runs carry too little of
# a real key (40+ random characters) to matter and would mask ordinary words.
MIN_PREFIX = 6
# Keys shorter than this are placeholders for servers without auth (the adapter suggests
# "EMPTY"); they are masked in errors but not in answers, where they would mask ordinary words.
MIN_SECRET_IN_ANSWERS = 8


def scrub(text: str, secret: str | None) -> str:
    """``text`` with the secret, and every run that begins like it, replaced by ``***``."""
    if not secret or not text:
        return text
    if len(secret) < MIN_PREFIX:
        return text.replace(secret, MASK)
    head = secret[:MIN_PREFIX]
    out: list[str] = []
    i = 0
    while (j := text.find(head, i)) >= 0:
        k = j + MIN_PREFIX
        while k < len(text) and k - j < len(secret) and text[k] == secret[k - j]:
            k += 1
        out += [text[i:j], MASK]
        i = k
    if not out:
        return text
    out.append(text[i:])
    masked = "".join(out)
    # Masking joins what was on either side; should that spell the key's start again, mask
    # again (each round is shorter, so this ends).
    return scrub(masked, secret) if head in masked else masked


def excerpt(text: str, secret: str | None, limit: int = 300) -> str:
    """At most ``limit`` characters of ``text`` to keep in an error message, scrubbed first.

    Only a window a key's length past the limit is scrubbed: a key starting inside the
    excerpt either ends in that window or is cut at its edge, leaving a masked prefix.
    """
    window = text[: limit + len(secret or "") + 1]
    return scrub(window, secret)[:limit].strip()


def scrub_answer(text: str, secret: str | None) -> str:
    """An answer's text, with the key masked when it is a real secret (see above)."""
    if secret is None or len(secret) < MIN_SECRET_IN_ANSWERS:
        return text
    return scrub(text, secret)

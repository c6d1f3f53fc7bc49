"""Keeping an API key out of every string the model layer hands on (errors, answers, logs).

A server may echo the key it was sent (some providers do, in a 401 body), whole or in part
(without its first characters, cut at a line's end, …), and anything we keep of a reply is
cut to a bounded excerpt. So :func:`scrub` masks, besides the key itself:

- any run of :data:`MIN_RUN` or more characters that occurs in the key, wherever in the key
  (eight characters of a 40-character random key are 48 bits of it: a leak);
- any run that starts like the key (its first :data:`MIN_PREFIX` characters or more), which
  is where a cut leaves a key's remains;

and :func:`excerpt` scrubs a window past its cut before cutting, so that a key straddling
the cut is masked whole rather than left as a fragment.
"""

from __future__ import annotations

import functools
import re

MASK = "***"
# The shortest run of a key, anywhere in it, that is treated as the key.
MIN_RUN = 8
# The shortest start of a key that is treated as the key. Shorter runs carry too little of
# a real key (40+ random characters) to matter and would mask ordinary words.
MIN_PREFIX = 6
# Keys shorter than this are placeholders for servers without auth (the adapter suggests
# "EMPTY"); they are masked in errors but not in answers, where they would mask ordinary words.
MIN_SECRET_IN_ANSWERS = 8


def key_runs(secret: str) -> set[str]:
    """Every run of the key that is a leak on its own: its :data:`MIN_RUN`-character
    windows (any longer run holds one)."""
    return {secret[i : i + MIN_RUN] for i in range(len(secret) - MIN_RUN + 1)}


@functools.lru_cache(maxsize=8)
def _starts(secret: str) -> re.Pattern[str]:
    """Where a masked run may begin: a window of the key, or the key's start."""
    runs = sorted(key_runs(secret) | {secret[:MIN_PREFIX]}, key=lambda r: (-len(r), r))
    return re.compile("|".join(map(re.escape, runs)))


def scrub(text: str, secret: str | None) -> str:
    """``text`` with the secret, every run of :data:`MIN_RUN` characters of it and every run
    that begins like it replaced by ``***`` (each masked run as long as the key allows)."""
    if not secret or not text:
        return text
    if len(secret) < MIN_PREFIX:
        return text.replace(secret, MASK)
    starts = _starts(secret)
    out: list[str] = []
    i = 0
    while (m := starts.search(text, i)) is not None:
        j, k = m.start(), m.end()
        # the longest run from j that occurs in the key
        while k < len(text) and text[j : k + 1] in secret:
            k += 1
        out += [text[i:j], MASK]
        i = k
    if not out:
        return text
    out.append(text[i:])
    masked = "".join(out)
    # Masking joins what was on either side; should that spell a run of the key again, mask
    # again (each round is shorter by at least three characters a run, so this ends).
    return scrub(masked, secret) if starts.search(masked) else masked


def excerpt(text: str, secret: str | None, limit: int = 300) -> str:
    """The first ``limit`` characters of ``text`` scrubbed, to keep in an error message.

    Scrubbed before it is cut, over a window that reaches a key's length past the cut
    (doubled until the masked window still does): a key that starts inside the excerpt is
    masked whole, never cut into a fragment that escapes the mask. The result is the first
    ``limit`` characters of ``scrub(text)``, read in bounded time from a long reply."""
    if not secret:
        return text[:limit].strip()
    width = limit + len(secret) + 1
    while True:
        masked = scrub(text[:width], secret)
        if width >= len(text) or len(masked) >= limit + len(secret) + MIN_RUN:
            return masked[:limit].strip()
        width *= 2


def scrub_answer(text: str, secret: str | None) -> str:
    """An answer's text, with the key masked when it is a real secret (see above)."""
    if secret is None or len(secret) < MIN_SECRET_IN_ANSWERS:
        return text
    return scrub(text, secret)


def leaks(data: bytes, secret: str) -> bool:
    """Whether ``data`` holds the key or any run of :data:`MIN_RUN` characters of it (what a
    release is checked for before it is written)."""
    raw = secret.encode("utf-8")
    if len(secret) < MIN_RUN:
        return raw in data
    return any(run.encode("utf-8") in data for run in key_runs(secret))

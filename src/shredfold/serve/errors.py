"""What ``shredfold serve`` raises when it cannot start."""

from __future__ import annotations


class ServeError(ValueError):
    """``shredfold serve`` cannot start: an unknown model, a bad fault schedule, an address
    it cannot listen on. The message names the cause (the CLI prints it and exits 2)."""

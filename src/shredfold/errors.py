"""The error a command raises for a problem the user can fix: printed as one line, exit 2.

Here, below every layer, so that a benchmark's own commands (its ``commands`` hook) raise the
same error the CLI prints."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix; printed as one line, exit 2."""


class InputError(ValueError):
    """A user's input that cannot be used (a file the spec names changed or broke since the
    plan, a sample folder, a manifest, weights that are not what they claim); the message
    names the place and the cause. A job ends on it with that one line."""

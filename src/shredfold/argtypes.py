"""Value types of command-line options (argparse ``type=``), shared by the CLI and the
commands a benchmark adds: each refuses a bad value with a message naming it."""

from __future__ import annotations

import argparse


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value

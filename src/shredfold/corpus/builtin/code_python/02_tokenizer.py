"""Tokenizer for a tiny arithmetic language with variables and functions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum, auto


class Kind(Enum):
    NUMBER = auto()
    NAME = auto()
    OP = auto()
    LPAREN = auto()
    RPAREN = auto()
    COMMA = auto()
    END = auto()


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.kind.name}({self.text!r}) at {self.line}:{self.column}"


class TokenizeError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{line}:{column}: {message}")
        self.line = line
        self.column = column


_SPEC = [
    ("NUMBER", r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?"),
    ("NAME", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("OP", r"\*\*|[-+*/%^=<>]"),
    ("LPAREN", r"\("),
    ("RPAREN", r"\)"),
    ("COMMA", r","),
    ("NEWLINE", r"\n"),
    ("SKIP", r"[ \t]+|#[^\n]*"),
    ("ERROR", r"."),
]
_PATTERN = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in _SPEC))


def tokenize(source: str) -> Iterator[Token]:
    """Yield tokens, ending with a single END token."""
    line = 1
    line_start = 0
    depth = 0
    for match in _PATTERN.finditer(source):
        group = match.lastgroup or "ERROR"
        text = match.group()
        column = match.start() - line_start + 1
        if group == "NEWLINE":
            line += 1
            line_start = match.end()
            continue
        if group == "SKIP":
            continue
        if group == "ERROR":
            raise TokenizeError(f"unexpected character {text!r}", line, column)
        if group == "LPAREN":
            depth += 1
        elif group == "RPAREN":
            depth -= 1
            if depth < 0:
                raise TokenizeError("unmatched ')'", line, column)
        yield Token(Kind[group], text, line, column)
    if depth:
        raise TokenizeError("unclosed '('", line, len(source) - line_start + 1)
    yield Token(Kind.END, "", line, len(source) - line_start + 1)


def count_kinds(source: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in tokenize(source):
        counts[token.kind.name] = counts.get(token.kind.name, 0) + 1
    return counts


def main() -> None:
    program = "rate = 0.05\ntotal = principal * (1 + rate) ** years  # compound\n"
    for token in tokenize(program):
        print(token)
    print(count_kinds(program))
    try:
        list(tokenize("x = (1 + 2"))
    except TokenizeError as err:
        print("error:", err)


if __name__ == "__main__":
    main()

"""The fault schedule of ``shredfold serve``: which injected failure each request gets."""

from __future__ import annotations

from dataclasses import dataclass

FAULTS = ("ok", "429", "500", "503", "slow", "truncate", "malformed", "no-choices", "reset")


@dataclass(frozen=True)
class FaultPlan:
    """Which fault each arrival of a distinct request body gets.

    Syntax: rules separated by ``|``; a rule is a comma-separated sequence of faults for the
    1st, 2nd, … arrival of a body, after which it is answered normally; a trailing ``*``
    repeats the last fault for ever. A body follows rule ``sha256(body) mod len(rules)``.

    ``"429,500"``        every body: 429, then 500, then answered.
    ``"503|ok"``         about half the bodies get one 503 first.
    ``"500*|ok|ok"``     about a third of the bodies never succeed.
    """

    rules: tuple[tuple[str, ...], ...] = ()
    forever: tuple[bool, ...] = ()

    @classmethod
    def parse(cls, spec: str | None) -> FaultPlan:
        if not spec:
            return cls()
        rules, forever = [], []
        for raw in spec.split("|"):
            steps = [s.strip() for s in raw.split(",") if s.strip()]
            rep = bool(steps) and steps[-1].endswith("*")
            if rep:
                steps[-1] = steps[-1][:-1]
            bad = [s for s in steps if s not in FAULTS]
            if bad:
                raise ValueError(f"unknown fault(s) {bad} in {spec!r}; known: {', '.join(FAULTS)}")
            rules.append(tuple(steps))
            forever.append(rep)
        return cls(tuple(rules), tuple(forever))

    def fault(self, body_hash: str, arrival: int) -> str:
        if not self.rules:
            return "ok"
        i = int(body_hash, 16) % len(self.rules)
        steps = self.rules[i]
        if arrival < len(steps):
            return steps[arrival]
        return steps[-1] if self.forever[i] and steps else "ok"

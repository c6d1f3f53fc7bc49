"""Mutation testing of the core modules with cosmic-ray: do the tests catch planted bugs?

Run by hand, never in CI (it is slow: one test run per mutant). For each chosen module it
copies the tree (tracked and untracked-but-not-ignored files) into a temporary folder, so
the worktree is never left mutated even if the run is killed, plants cosmic-ray's mutants
one at a time in the copy, runs only the tests listed for that module in :data:`MODULES`
(fast tests, ``-x``), and prints per module how many mutants were killed, survived or timed
out, then every survivor as ``file:line operator`` with its diff.

    python bench/mutation.py --list
    python bench/mutation.py metrics store models.retry      # names or groups from --list
    python bench/mutation.py metrics.text --sample 20        # a seeded sample: a smoke run
    python bench/mutation.py all --json /tmp/mutation.json   # everything, report kept as JSON

Operators: a curated subset of cosmic-ray's (:data:`OPERATORS`): each mutant is a bug a
person could plausibly write (``<`` for ``<=``, ``+`` for ``-``, a constant off by one, a
dropped ``not``, a loop that never runs, an ``and`` for an ``or``), not all 200 of its
operator variants (``%`` for ``<<`` and the like multiply the run time and teach little).

Survivors judged equivalent (no input can tell them apart from the original) are listed in
``bench/mutation_equivalent.toml`` with the reason; the report counts them separately, and
the kill rate is given with and without them.

Mutants equivalent by construction (inside never-evaluated annotations, and cosmic-ray's
"mutation" of the bare ``*`` of keyword-only parameters) are not run; the report counts
them as "not run" (:class:`StaticEquivalence`).

Per-mutant timeout: ``--timeout`` seconds, by default 4 × the module's baseline test time
+ 10 s; a mutant that makes the tests hang counts as killed (reported as "timeout").
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT_FILE = ROOT / "bench" / "mutation_equivalent.toml"


@dataclass(frozen=True)
class Target:
    source: str  # path of the module, relative to the repository root
    tests: tuple[str, ...]  # test files (or folders) that exercise it, fastest first
    deselect: str = ""  # a pytest -k expression of tests to leave out (cost, not values)


# The hardening tests of the scoring caps run whole scorings in child processes to measure
# their cost; each takes seconds and checks bounds, not values, so mutants skip them.
_COST_TESTS = "not bounded_time_and_memory and not cost_linear_time and not bounded_time"


MODULES: dict[str, Target] = {
    "metrics.text": Target(
        "src/shredfold/metrics/text.py",
        ("tests/metrics/test_text.py", "tests/metrics/test_limits.py"),
        _COST_TESTS,
    ),
    "metrics.teds": Target(
        "src/shredfold/metrics/teds.py",
        ("tests/metrics/test_teds.py", "tests/metrics/test_limits.py"),
        _COST_TESTS,
    ),
    "tables": Target(
        "src/shredfold/tables.py",
        (
            "tests/metrics/test_tables.py",
            "tests/metrics/test_teds.py",
            "tests/metrics/test_text.py",
            "tests/metrics/test_limits.py",
        ),
        _COST_TESTS,
    ),
    "limits": Target(
        "src/shredfold/limits.py",
        ("tests/metrics/test_limits.py",),
        _COST_TESTS,
    ),
    "metrics.shape": Target(
        "src/shredfold/metrics/shape.py",
        ("tests/metrics/test_shape.py", "tests/origami_bench/test_shape_and_designs.py"),
    ),
    "prompts.shred": Target(
        "src/shredfold/shred/prompts.py",
        ("tests/shred/test_prompts.py", "tests/test_answer_fuzz.py"),
        _COST_TESTS,
    ),
    "store": Target("src/shredfold/store.py", ("tests/test_store.py",)),
    "models.retry": Target(
        "src/shredfold/models/retry.py", ("tests/models/test_retry_and_limits.py",)
    ),
    "calls": Target(
        "src/shredfold/calls.py",
        ("tests/test_calls.py", "tests/models/test_retry_and_limits.py"),
    ),
    "shred.voronoi": Target("src/shredfold/shred/voronoi.py", ("tests/shred/test_voronoi.py",)),
    "origami.local": Target("src/shredfold/origami/local.py", ("tests/origami/test_local.py",)),
    # the quick Flat-Folder designs (a second each at most) are the only real patterns
    # whose counts, components and verdicts are checked against an outside reference; the
    # invariance property over them takes seconds and checks what test_layers' does
    "origami.layers": Target(
        "src/shredfold/origami/layers.py",
        ("tests/origami/test_layers.py", "tests/origami/test_shared_designs.py"),
        "not counts_and_verdicts_ignore",
    ),
    "origami.states": Target(
        "src/shredfold/origami/states.py", ("tests/origami/test_states.py",)
    ),
    "aggregate": Target("src/shredfold/aggregate.py", ("tests/test_aggregate.py",)),
}

GROUPS: dict[str, tuple[str, ...]] = {
    "metrics": ("metrics.text", "metrics.teds", "tables", "limits", "metrics.shape"),
    "origami": ("origami.local", "origami.layers", "origami.states"),
    "all": tuple(MODULES),
}

# cosmic-ray operator names (regular expressions, matched in full).
OPERATORS: tuple[str, ...] = (
    r"core/ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div|Mod_FloorDiv"
    r"|Pow_Mul|BitOr_BitAnd|BitAnd_BitOr|LShift_RShift|RShift_LShift)",
    r"core/ReplaceComparisonOperator_(Eq_NotEq|NotEq_Eq|Lt_LtE|Lt_GtE|LtE_Lt|LtE_Gt|Gt_GtE"
    r"|Gt_LtE|GtE_Gt|GtE_Lt|Is_IsNot|IsNot_Is)",
    r"core/ReplaceUnaryOperator_(USub_UAdd|Delete_Not)",
    r"core/(AddNot|ReplaceTrueWithFalse|ReplaceFalseWithTrue|ReplaceAndWithOr|ReplaceOrWithAnd)",
    r"core/(ReplaceBreakWithContinue|ReplaceContinueWithBreak|ExceptionReplacer)",
    r"core/(NumberReplacer|ZeroIterationForLoop|RemoveDecorator)",
)


@dataclass
class Mutant:
    module: str
    file: str
    line: int
    operator: str
    outcome: str  # killed | survived | timeout | incompetent | no-test
    diff: str = ""
    equivalent: str | None = None  # the reason, when listed as equivalent
    carried: bool = False  # killed in the --resume report, not run again


@dataclass
class ModuleReport:
    module: str
    tests: list[str]
    baseline_s: float
    mutants: list[Mutant] = field(default_factory=list)
    skipped: int = 0  # equivalent by construction (see static_equivalence), not run

    def count(self, outcome: str) -> int:
        return sum(m.outcome == outcome for m in self.mutants)

    def score(self, *, drop_equivalent: bool) -> float | None:
        judged = [m for m in self.mutants if m.outcome in ("killed", "timeout", "survived")]
        if drop_equivalent:
            judged = [m for m in judged if m.equivalent is None]
        if not judged:
            return None
        return sum(m.outcome != "survived" for m in judged) / len(judged)


def tree_files(root: Path) -> list[str]:
    """Files of the tree as git sees them: tracked plus untracked-but-not-ignored."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, check=True, capture_output=True,
    ).stdout.decode()
    return [p for p in out.split("\0") if p and (root / p).is_file()]


def copy_tree(root: Path, dest: Path, rev: str | None = None) -> None:
    """The working tree (or the commit ``rev``) into ``dest``."""
    if rev is not None:
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", rev], cwd=root, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    else:
        for rel in tree_files(root):
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, target)
    # Tests find the reference data at ../shared beside the checkout.
    shared = root.parent / "shared"
    if shared.exists():
        (dest.parent / "shared").symlink_to(shared.resolve())


def test_command(tests: Iterable[str], deselect: str = "") -> str:
    return " ".join(
        [
            sys.executable, "-m", "pytest", "-x", "-q", "--no-header", "-p", "no:cacheprovider",
            "-m", "'not slow'", "--hypothesis-seed=0", *([f"-k '{deselect}'"] if deselect else []),
            *tests,
        ]
    )


def load_equivalent(path: Path = EQUIVALENT_FILE) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open("rb") as fh:
        return list(tomllib.load(fh).get("equivalent", []))


def changed_lines(diff: str) -> tuple[str, str]:
    """(original, mutated) non-blank lines of a mutant's diff, stripped."""
    def side(mark: str) -> str:
        lines = (ln[1:].strip() for ln in diff.splitlines() if ln.startswith(mark) and not ln.startswith(mark * 3))
        return "\n".join(ln for ln in lines if ln)

    return side("-"), side("+")


def equivalence(m: Mutant, known: list[dict[str, str]]) -> str | None:
    """The listed reason when this survivor is a known equivalent mutant.

    Keyed by file, operator and the original and mutated source lines (not line numbers),
    so the list survives edits elsewhere in the file.
    """
    old, new = changed_lines(m.diff)
    for entry in known:
        if (
            entry["file"] == m.file
            and entry["operator"] == m.operator
            and entry["original"].strip() == old
            and entry["mutated"].strip() == new
        ):
            return entry["reason"]
    return None


Span = tuple[tuple[int, int], tuple[int, int]]


def _span(node: ast.AST) -> Span:
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _inside(pos: tuple[int, int], spans: list[Span]) -> bool:
    return any(a <= pos < b for a, b in spans)


class StaticEquivalence:
    """Mutants that no test can kill, by construction, so they are not run:

    * any mutant inside a function's parameter or return annotation, in a module with
      ``from __future__ import annotations``: those annotations are never evaluated
      (``int | None`` → ``int & None``). Class-level annotations are kept: pydantic
      evaluates them;
    * a binary-operator mutant outside any binary expression: cosmic-ray also "mutates"
      the bare ``*`` that makes the following parameters keyword-only into ``/``, which
      only widens what calls are accepted.
    """

    def __init__(self, source: str) -> None:
        tree = ast.parse(source)
        lazy = any(
            isinstance(n, ast.ImportFrom) and n.module == "__future__"
            and any(a.name == "annotations" for a in n.names)
            for n in tree.body
        )
        self.annotations: list[Span] = []
        self.operators: list[Span] = []
        for node in ast.walk(tree):
            if lazy and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                    if arg is not None and arg.annotation is not None:
                        self.annotations.append(_span(arg.annotation))
                if node.returns is not None:
                    self.annotations.append(_span(node.returns))
            if isinstance(node, (ast.BinOp, ast.AugAssign)):
                self.operators.append(_span(node))

    def reason(self, operator: str, pos: tuple[int, int]) -> str | None:
        if _inside(pos, self.annotations):
            return "in an annotation that is never evaluated"
        if operator.startswith("core/ReplaceBinaryOperator_") and not _inside(pos, self.operators):
            return "not an operator of an expression"
        return None


Change = tuple[str, str, str]  # operator, original and mutated source lines


@dataclass(frozen=True)
class Previous:
    """One module of an earlier report: its survivors, and which mutants it ran (None for a
    text report, which lists survivors only: read as a run of every mutant)."""

    survivors: set[Change]
    ran: set[Change] | None = None

    def killed(self, change: Change) -> bool:
        return change not in self.survivors and (self.ran is None or change in self.ran)


def previous_survivors(path: Path) -> dict[str, Previous]:
    """Per module of an earlier report (its text or its JSON): its survivors, and for a JSON
    report every mutant it ran, so that a sampled run carries over only what it killed."""
    if path.suffix == ".json":
        out: dict[str, Previous] = {}
        for r in json.loads(path.read_text(encoding="utf-8")):
            changes = [(m["operator"], *changed_lines(m["diff"])) for m in r["mutants"]]
            survived = [m["outcome"] == "survived" for m in r["mutants"]]
            out[r["module"]] = Previous(
                {c for c, s in zip(changes, survived, strict=True) if s}, set(changes)
            )
        return out
    return {name: Previous(changes) for name, changes in _text_survivors(path).items()}


def _text_survivors(path: Path) -> dict[str, set[Change]]:
    out: dict[str, set[Change]] = {}
    section, entry = None, None
    old: list[str] = []
    new: list[str] = []

    def close() -> None:
        if section is not None and entry is not None:
            out[section].add((entry, "\n".join(old), "\n".join(new)))

    in_table = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("module "):
            in_table = True
        elif in_table and line.strip():
            out.setdefault(line.split()[0], set())
        elif in_table:
            in_table = False
        if m := re.match(r"^## (\S+): survivors", line):
            close()
            section, entry = m.group(1), None
        elif section and (m := re.match(r"^\S+:\d+ (\S+)", line)):
            close()
            entry, old, new = m.group(1), [], []
        elif section and line.startswith("    - ") and line[6:].strip():
            old.append(line[6:].strip())
        elif section and line.startswith("    + ") and line[6:].strip():
            new.append(line[6:].strip())
    close()
    return out


def _mutant_lines(code: str, operator: str, occurrence: int) -> tuple[str, str] | None:
    """(original, mutated) lines of one mutant, or None when cosmic-ray cannot make it here
    (its own run then reports the mutant as incompetent)."""
    import difflib

    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    try:
        mutated = mutate_code(code, cosmic_ray.plugins.get_operator(operator)(), occurrence)
    except Exception:  # noqa: BLE001 - cosmic-ray's operators fail on some syntax
        return None
    if mutated is None:
        return None
    return changed_lines("\n".join(difflib.unified_diff(code.split("\n"), mutated.split("\n"), lineterm="")))


def run_module(
    name: str, work: Path, *, timeout: float | None, sample: int | None, verbose: bool,
    resume: dict[str, Previous] | None = None,
) -> ModuleReport | None:
    from cosmic_ray.commands import init
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    target = MODULES[name]
    if not (work / target.source).is_file():
        print(f"{name}: skipped, {target.source} does not exist", file=sys.stderr, flush=True)
        return None
    tests = [t for t in target.tests if (work / t).exists()]
    if not tests:
        print(f"{name}: skipped, none of its test files exist ({', '.join(target.tests)})",
              file=sys.stderr, flush=True)
        return None
    command = test_command(tests, target.deselect)

    start = time.monotonic()
    base = subprocess.run(command, shell=True, cwd=work, capture_output=True, text=True)
    baseline = time.monotonic() - start
    if base.returncode != 0:
        raise SystemExit(f"{name}: the tests fail before any mutation:\n{base.stdout[-3000:]}")
    limit = timeout if timeout is not None else 4 * baseline + 10
    report = ModuleReport(name, tests, round(baseline, 2))

    allowed = re.compile("|".join(f"(?:{p})" for p in OPERATORS))
    source = work / target.source
    with use_db(str(work / f".mutation-{name}.sqlite"), WorkDB.Mode.create) as db:
        init([source], db, {})
        items = [
            w for w in db.pending_work_items
            if all(allowed.fullmatch(m.operator_name) for m in w.mutations)
        ]
    static = StaticEquivalence(source.read_text(encoding="utf-8"))
    kept = [w for w in items if static.reason(w.mutations[0].operator_name, tuple(w.mutations[0].start_pos)) is None]
    report.skipped = len(items) - len(kept)
    items = kept
    items.sort(key=lambda w: (w.mutations[0].start_pos, w.mutations[0].operator_name, w.mutations[0].occurrence))
    if sample is not None and sample < len(items):
        items = sorted(random.Random(name).sample(items, sample), key=lambda w: w.mutations[0].start_pos)

    known = load_equivalent()
    print(f"{name}: {len(items)} mutants ({report.skipped} equivalent by construction, not run), "
          f"tests {' '.join(tests)} "
          f"(baseline {baseline:.1f} s, timeout {limit:.0f} s)", file=sys.stderr, flush=True)
    code = source.read_text(encoding="utf-8")
    previous = (resume or {}).get(name)
    for i, item in enumerate(items, 1):
        spec = item.mutations[0]
        lines = _mutant_lines(code, spec.operator_name, spec.occurrence) if previous is not None else None
        if previous is not None and lines is not None:
            old, new = lines
            if previous.killed((spec.operator_name, old, new)):
                diff = "\n".join(f"-{ln}" for ln in old.splitlines()) + "\n" + "\n".join(f"+{ln}" for ln in new.splitlines())
                report.mutants.append(Mutant(name, target.source, spec.start_pos[0], spec.operator_name, "killed", diff, carried=True))
                continue
        result = mutate_and_test(item.mutations, command, limit)
        if result.worker_outcome == WorkerOutcome.NO_TEST:
            outcome = "no-test"
        elif result.worker_outcome != WorkerOutcome.NORMAL:
            outcome = "incompetent"
        elif result.test_outcome == TestOutcome.SURVIVED:
            outcome = "survived"
        elif result.test_outcome == TestOutcome.KILLED:
            outcome = "timeout" if result.output == "timeout" else "killed"
        else:
            outcome = "incompetent"
        m = Mutant(name, target.source, spec.start_pos[0], spec.operator_name, outcome, result.diff or "")
        if outcome == "survived":
            m.equivalent = equivalence(m, known)
        report.mutants.append(m)
        if verbose or outcome == "survived" or i % 10 == 0:
            print(f"  [{i}/{len(items)}] {outcome:9} {m.file}:{m.line} {m.operator}", file=sys.stderr, flush=True)
    return report


def render(reports: list[ModuleReport]) -> str:
    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.0f}%"

    carried = sum(m.carried for r in reports for m in r.mutants)
    lines = [f"({carried} killed mutants carried over from the --resume report)"] if carried else []
    lines += [
        f"{'module':16} {'mutants':>7} {'killed':>6} {'timeout':>7} {'survived':>8} {'equiv':>5} "
        f"{'other':>5} {'killed%':>7} {'w/o equiv':>9} {'not run':>7}"
    ]
    for r in reports:
        equiv = sum(m.equivalent is not None for m in r.mutants)
        other = r.count("incompetent") + r.count("no-test")
        lines.append(
            f"{r.module:16} {len(r.mutants):7} {r.count('killed'):6} {r.count('timeout'):7} "
            f"{r.count('survived'):8} {equiv:5} {other:5} {pct(r.score(drop_equivalent=False)):>7} "
            f"{pct(r.score(drop_equivalent=True)):>9} {r.skipped:7}"
        )
    for r in reports:
        survivors = [m for m in r.mutants if m.outcome == "survived"]
        if not survivors:
            continue
        lines += ["", f"## {r.module}: survivors ({' '.join(r.tests)})"]
        for m in survivors:
            old, new = changed_lines(m.diff)
            tag = f"  [equivalent: {m.equivalent}]" if m.equivalent else ""
            lines.append(f"{m.file}:{m.line} {m.operator}{tag}")
            lines += [f"    - {ln}" for ln in old.splitlines()] + [f"    + {ln}" for ln in new.splitlines()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="module names or groups (see --list)")
    ap.add_argument("--list", action="store_true", help="print the modules, groups and test map")
    ap.add_argument("--timeout", type=float, help="seconds per mutant (default 4 x baseline + 10)")
    ap.add_argument("--sample", type=int, help="test only this many mutants per module (seeded)")
    ap.add_argument("--json", type=Path, help="also write the full report (diffs included) here")
    ap.add_argument("--verbose", action="store_true", help="print every mutant's outcome")
    ap.add_argument("--rev", help="mutate this commit's tree instead of the working tree")
    ap.add_argument(
        "--resume", type=Path,
        help="an earlier report (text or JSON) of the same sources: its killed mutants are "
        "counted as killed without running (tests only ever get stronger), its survivors "
        "rerun, and (JSON) mutants it did not run, run",
    )
    args = ap.parse_args(argv)

    if args.list or not args.modules:
        for name, t in MODULES.items():
            print(f"{name:16} {t.source}  <- {' '.join(t.tests)}")
        for g, members in GROUPS.items():
            print(f"group {g}: {' '.join(members)}")
        return 0
    names: list[str] = []
    for arg in args.modules:
        if arg not in MODULES and arg not in GROUPS:
            ap.error(f"unknown module {arg!r}; see --list")
        names += [n for n in GROUPS.get(arg, (arg,)) if n not in names]

    resume = previous_survivors(args.resume.resolve()) if args.resume else None
    if args.json:
        args.json = args.json.resolve()
    reports = []
    with tempfile.TemporaryDirectory(prefix="shredfold-mutation-") as tmp:
        work = Path(tmp) / ROOT.name
        copy_tree(ROOT, work, args.rev)
        os.environ["PYTHONPATH"] = str(work / "src")
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        # cosmic-ray runs the test command in the current folder: it must be the copy, so
        # that the copy's tests (not the worktree's) run against the mutated copy.
        os.chdir(work)
        for name in names:
            report = run_module(
                name, work, timeout=args.timeout, sample=args.sample, verbose=args.verbose, resume=resume
            )
            if report is None:
                continue
            reports.append(report)
            # Each module's report as soon as it is done, so a long run shows progress.
            print(render(reports[-1:]), flush=True)
            print(flush=True)
    print(render(reports))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

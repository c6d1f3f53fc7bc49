"""Where the pipeline's files live: the one home of every path pattern that the plan and the
Snakemake rules share.

Sets, query manifests and score tables sit at ``results/sets/<where>/<key>.json``,
``results/cells/<where>/<key><attempt>.json`` and ``….parquet``, where ``<where>`` is the
task's layout (:class:`~shredfold.tasks.base.Layout`) filled with a cell's labels. The rules
match these patterns with a ``{where}`` wildcard, so they are generic over tasks.
"""

from __future__ import annotations

RESULTS = "results"
STORE = f"{RESULTS}/store"
PLANS = f"{RESULTS}/plans"

SET = f"{RESULTS}/sets/{{where}}/{{key}}.json"
QUERY = f"{RESULTS}/cells/{{where}}/{{key}}{{attempt}}.json"
SCORE = f"{RESULTS}/cells/{{where}}/{{key}}{{attempt}}.parquet"
SET_LOG = f"{RESULTS}/logs/sets/{{where}}/{{key}}.log"
PLAN = f"{PLANS}/{{key}}.json"
# Superseded attempts of a cell (see plan.resolve_attempts) are moved here, out of the
# folder users glob for cell tables.
SUPERSEDED = f"{RESULTS}/superseded"

# A job that found a corrupt object it can rebuild leaves a note here; the next plan moves
# the cell on to a new attempt (new paths), so Snakemake redoes it.
REPAIR = f"{RESULTS}/repairs/{{where}}/{{key}}.json"

LEADERBOARD = f"{RESULTS}/leaderboard.csv"
PAIRWISE = f"{RESULTS}/pairwise.csv"
REPORT = f"{RESULTS}/report.html"
RELEASE = f"{RESULTS}/release.tar.gz"
REPORT_LOG = f"{RESULTS}/logs/report.log"
RELEASE_LOG = f"{RESULTS}/logs/release.log"
AGGREGATE_LOG = f"{RESULTS}/logs/aggregate.log"

KEY_PATTERN = "[0-9a-f]{64}"
ATTEMPT_PATTERN = "(-r[1-9][0-9]*)?"


def limited_where(where: str, limit: int) -> str:
    """The path part of a quick run's set or cell (``--config limit=N``): under ``first-N/``,
    apart from the full run's, whose tables hold more items."""
    return f"first-{limit}/{where}"


def attempt_suffix(attempt: int) -> str:
    """``-rN`` on the paths of the N-th retry of a cell whose earlier query had errors."""
    return f"-r{attempt}" if attempt else ""


def attempt_number(suffix: str) -> int:
    """The attempt a path's ``-rN`` suffix names (0 for none): :func:`attempt_suffix` undone."""
    if not suffix:
        return 0
    if not suffix.startswith("-r") or not suffix[2:].isdigit() or suffix[2] == "0":
        raise ValueError(f"not an attempt suffix: {suffix!r}")
    return int(suffix[2:])


def set_path(where: str, key: str) -> str:
    return SET.format(where=where, key=key)


def query_path(where: str, key: str, attempt: int = 0) -> str:
    return QUERY.format(where=where, key=key, attempt=attempt_suffix(attempt))


def score_path(where: str, key: str, attempt: int = 0) -> str:
    return SCORE.format(where=where, key=key, attempt=attempt_suffix(attempt))


def cell_log(stage: str) -> str:
    """The log pattern of a cell's ``stage`` job (``query`` or ``score``)."""
    return f"{RESULTS}/logs/cells/{{where}}/{{key}}{{attempt}}.{stage}.log"


def cell_log_path(stage: str, where: str, key: str, attempt: int = 0) -> str:
    return cell_log(stage).format(where=where, key=key, attempt=attempt_suffix(attempt))


def set_log_path(where: str, key: str) -> str:
    return SET_LOG.format(where=where, key=key)


def progress_path(log: str) -> str:
    """The progress state a job keeps beside its log (``….log`` → ``….progress.json``): what
    ``shredfold status`` reads while the job runs."""
    return log.removesuffix(".log") + ".progress.json"


def repair_path(where: str, key: str) -> str:
    return REPAIR.format(where=where, key=key)


def attempt_of(path: str, key: str) -> int:
    """The attempt a cell file's name carries (``…/<key>-r2.parquet`` → 2)."""
    name = path.rsplit("/", 1)[-1]
    suffix = name[len(key):].split(".", 1)[0] if name.startswith(key) else ""
    return int(suffix[2:]) if suffix.startswith("-r") and suffix[2:].isdigit() else 0


def plan_path(key: str) -> str:
    return PLAN.format(key=key)


def breakdown_path(name: str) -> str:
    return f"{RESULTS}/{name}"

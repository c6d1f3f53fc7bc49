# Load and validate the spec before any job runs, expand it into the plan (item sets, cells,
# keys) once, and write it to a content-addressed file that every job loads.
import sys
from pathlib import Path

from shredfold import paths
from shredfold.aggregate import breakdown_files
from shredfold.models.endpoints import endpoint_limits, endpoint_resource
from shredfold.plan import make_plan, parse_limit, resolve_attempts, with_limit, write_plan
from shredfold.resolve import load_spec
from shredfold.stages import resources as res
from shredfold.spec import SpecError
from shredfold.store import Store

try:
    # --config limit=N: a quick run of the first N items of every cell (overrides the spec's
    # shred.limit / origami.limit); the items keep their keys, so a full run reuses it all.
    LIMIT = parse_limit(config.get("limit"))
except ValueError as exc:
    print(f"error: --config {exc}", file=sys.stderr)  # one line, as for a spec error
    sys.exit(2)
try:
    # The plan may cache costly inputs (the origami design catalogue) in the store.
    _PLANNED = make_plan(with_limit(load_spec(config["spec"]), LIMIT), Store(paths.STORE), write=True)
except (SpecError, ValueError) as exc:
    # What `shredfold plan` says, and nothing else: a WorkflowError would add this file's
    # name and line, which are of no use to whoever wrote the spec.
    print(f"spec error: {exc}" if isinstance(exc, SpecError) else f"spec error: {config['spec']}: {exc}", file=sys.stderr)
    sys.exit(2)
for _notes in _PLANNED.notes.values():  # what the plan left out (skipped design files, …)
    for _note in _notes:
        print(f"note: {_note}", file=sys.stderr)
# resolve_attempts: a cell whose last query recorded errors gets a new attempt (-rN paths),
# so failed items are asked again on the next run; paths are relative to the workdir.
# --config reask_corrupt=true: stored answers that fail their manifests are moved aside and
# asked again (never silently: they may have cost money).
_REASK = str(config.get("reask_corrupt", "")).lower() in ("1", "true", "yes")
# A cell whose latest manifest cannot be read is queried again too: said on screen.
PLAN = resolve_attempts(
    _PLANNED, Path.cwd(), reask_corrupt=Store(paths.STORE) if _REASK else None,
    note=lambda line: print(f"note: {line}", file=sys.stderr),
)
# Not a rule param: Snakemake re-runs jobs whose params change, and the same cell planned
# from another spec file (say, one that adds a model) must stay done. Keys carry identity.
PLAN_FILE = write_plan(_PLANNED)

PY = sys.executable
SPEC_FILE = str(Path(config["spec"]).resolve())
KEY = paths.KEY_PATTERN
ATTEMPT = paths.ATTEMPT_PATTERN

# --config replay_only=true: any query that would call a model fails the job (audits). Kept
# out of `params` so that switching it on does not make Snakemake re-run finished cells.
# The release job plans the spec again: it must plan the same quick run.
LIMIT_ARG = f"--limit {LIMIT} " if LIMIT is not None else ""
REPLAY = "--replay-only " if str(config.get("replay_only", "")).lower() in ("1", "true", "yes") else ""

# One Snakemake resource per HTTP endpoint bounds the parallel query jobs against it; a value
# given with --resources on the command line wins over the models' endpoint_slots.
ENDPOINT_OF = {m.id: endpoint_resource(m) for m in PLAN.spec.models}
for _name, _slots in endpoint_limits(PLAN.spec.models).items():
    if _name not in workflow.global_resources:
        workflow.register_resource(_name, _slots)
# Global scope: the Snakemake that schedules counts them across every job it runs or submits
# (on a cluster, across all the jobs in the queue), never per job.
workflow.resourcescope(**{_name: "global" for _name in endpoint_limits(PLAN.spec.models)})


# Memory: every rule declares mem_mb (shredfold.stages.resources, from measured peaks), and
# the jobs Snakemake runs at once on this machine stay within what it has free, so that
# `--cores 32` on a small machine runs fewer jobs instead of running out of memory.
# `--resources mem_mb=N` sets another bound. With a cluster executor jobs run elsewhere: the
# bound, which also caps each job's own mem_mb, would be the submitting node's, so none.
if "mem_mb" not in workflow.global_resources and workflow.local_exec:
    workflow.register_resource("mem_mb", res.machine_mem_mb())
if workflow.is_main_process:  # (a cluster job's own Snakemake needs only its job's)
    res.warm(PLAN.item_sets.values())


def _cell(wildcards):
    return PLAN.cell(wildcards.key, wildcards.where)


def _endpoint_use(name):
    return lambda wildcards: 1 if ENDPOINT_OF.get(_cell(wildcards).model.id) == name else 0


ENDPOINT_RESOURCES = {name: _endpoint_use(name) for name in endpoint_limits(PLAN.spec.models)}


def set_manifest(wildcards):
    """The item-set manifest a query cell reads."""
    return _cell(wildcards).item_set.path


def query_manifest(wildcards):
    """The query manifest a score cell reads: the attempt its own path names. Not this run's
    resolved attempt: a cluster job reads the Snakefile again once its cell's query has run,
    and a query that recorded errors moves the resolved cell on to the next attempt."""
    return _cell(wildcards).at(paths.attempt_number(wildcards.attempt)).query_path


def cell_name(wildcards):
    return _cell(wildcards).name


def set_name(wildcards):
    return PLAN.item_set(wildcards.key).where


def set_needs(wildcards):
    """The manifests of the sets an item set's build reads (e.g. its designs' validations)."""
    return [PLAN.item_set(k).path for k in PLAN.item_set(wildcards.key).needs]


def set_mem(wildcards):
    return res.set_mem_mb(PLAN.item_set(wildcards.key), PLAN.spec)


def query_mem(wildcards):
    return res.query_mem_mb(_cell(wildcards), PLAN.spec)


def score_mem(wildcards):
    return res.score_mem_mb(_cell(wildcards), PLAN.spec)


def score_threads(wildcards):
    return res.score_threads(_cell(wildcards), PLAN.spec)


# Run after a job's process ended badly: one line naming the rule, the set or cell and its
# mem_mb (a SIGKILL is most likely the kernel's out-of-memory killer), on the terminal and
# in the log; the job's exit status is kept.
def failed(stage):
    return (
        " || {PY} -m shredfold job-failed " + stage + " --status $? --log {log:q} "
        "--name {params.name:q} --mem-mb {resources.mem_mb}"
    )

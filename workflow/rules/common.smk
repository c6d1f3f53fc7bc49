# Load and validate the spec before any job runs, and expand it into the plan (cells + keys).
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from shredfold.models.endpoints import endpoint_limits, endpoint_resource
from shredfold.plan import make_plan, resolve_attempts
from shredfold.spec import SpecError, load_spec

try:
    # resolve_attempts: a cell whose last query recorded errors gets a new attempt (-rN paths),
    # so failed items are asked again on the next run; paths are relative to the workdir.
    PLAN = resolve_attempts(make_plan(load_spec(config["spec"])), Path.cwd())
except (SpecError, ValueError) as exc:
    raise WorkflowError(f"invalid spec: {exc}") from None

PY = sys.executable
# Not a rule param: Snakemake re-runs jobs whose params change, and the same cell planned
# from another spec file (say, one that adds a model) must stay done. Keys carry identity.
SPEC = str(PLAN.spec.path)
KEY = "[0-9a-f]{64}"
ATTEMPT = "(-r[1-9][0-9]*)?"

# --config replay_only=true: any query that would call a model fails the job (audits). Kept
# out of `params` so that switching it on does not make Snakemake re-run finished cells.
REPLAY = "--replay-only " if str(config.get("replay_only", "")).lower() in ("1", "true", "yes") else ""

# One Snakemake resource per HTTP endpoint bounds the parallel query jobs against it; a value
# given with --resources on the command line wins over the models' endpoint_slots.
ENDPOINT_OF = {m.id: endpoint_resource(m) for m in PLAN.spec.models}
for _name, _slots in endpoint_limits(PLAN.spec.models).items():
    if _name not in workflow.global_resources:
        workflow.register_resource(_name, _slots)


def _endpoint_use(name):
    return lambda wildcards: 1 if ENDPOINT_OF.get(wildcards.model) == name else 0


ENDPOINT_RESOURCES = {name: _endpoint_use(name) for name in endpoint_limits(PLAN.spec.models)}


def set_manifest(wildcards):
    """The sample-set manifest a query cell reads."""
    return PLAN.cell(wildcards.key).sample_set.path


def query_manifest(wildcards):
    """The query manifest a score cell reads."""
    return PLAN.cell(wildcards.key).query_path

# OrigamiBench: items per task × tier (set), one model on one set (run), its table (score).
# Helpers are here rather than in common.smk so that the origami rules stay in one file.


def origami_items(wildcards):
    """The set manifest an origami run cell reads."""
    return PLAN.cell(wildcards.key).origami_set.path


def origami_episodes(wildcards):
    """The run manifest an origami score cell reads (its current attempt)."""
    return PLAN.cell(wildcards.key).query_path


rule origami_set:
    message:
        "Build OrigamiBench {wildcards.task} items ({wildcards.tier})"
    output:
        manifest="results/sets/origami/{task}/{tier}/{key}.json",
    log:
        "results/logs/origami/set/{task}/{tier}/{key}.log",
    wildcard_constraints:
        key=KEY,
    shell:
        "{PY} -m shredfold job origami-set --spec {SPEC:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"


rule origami_run:
    message:
        "Run {wildcards.model} on OrigamiBench {wildcards.task} ({wildcards.tier}){wildcards.attempt}"
    input:
        origami_set=origami_items,
    output:
        manifest="results/cells/origami/run/{model}/{task}/{tier}/{key}{attempt}.json",
    log:
        "results/logs/origami/run/{model}/{task}/{tier}/{key}{attempt}.log",
    wildcard_constraints:
        key=KEY,
        attempt=ATTEMPT,
    resources:
        **ENDPOINT_RESOURCES,
    shell:
        "{PY} -m shredfold job origami-run {REPLAY}--spec {SPEC:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"


rule origami_score:
    message:
        "Score {wildcards.model} on OrigamiBench {wildcards.task} ({wildcards.tier})"
    input:
        episodes=origami_episodes,
    output:
        table="results/cells/origami/score/{model}/{task}/{tier}/{key}{attempt}.parquet",
    log:
        "results/logs/origami/score/{model}/{task}/{tier}/{key}{attempt}.log",
    wildcard_constraints:
        key=KEY,
        attempt=ATTEMPT,
    shell:
        "{PY} -m shredfold job origami-score --spec {SPEC:q} --key {wildcards.key} "
        "--input {input.episodes:q} --out {output.table:q} > {log:q} 2>&1"

# Build the items of one item set (ShredBench samples, OrigamiBench MCQ items, targets or a
# design's validation), after the sets it needs.
rule item_set:
    message:
        "Build {params.name}"
    input:
        needs=set_needs,
    output:
        manifest=paths.SET,
    log:
        paths.SET_LOG,
    params:
        name=set_name,
    wildcard_constraints:
        key=KEY,
    shell:
        "{PY} -m shredfold job set --plan {PLAN_FILE:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"

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
    resources:
        mem_mb=set_mem,
    shell:
        "OMP_NUM_THREADS={threads} {PY} -m shredfold job set --plan {PLAN_FILE:q} --key {wildcards.key} "
        "--out {output.manifest:q} --name {params.name:q} --mem-mb {resources.mem_mb} > {log:q} 2>&1" + failed("set")

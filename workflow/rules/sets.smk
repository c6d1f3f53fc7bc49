# Build the items of one item set (ShredBench samples, OrigamiBench MCQ items or targets).
rule item_set:
    message:
        "Build {params.name}"
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

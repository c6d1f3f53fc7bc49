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
    # Item sets first: a set built late leaves its queries and scores to run one after the
    # other at the end, on one core (the default run's last origami set started 344 s in,
    # and its chain kept a core idle for the last 25 s).
    priority: 1
    shell:
        "{PY} -m shredfold job set --plan {PLAN_FILE:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"

# Ask one model about every item of one item set (answers cached per request).
rule query:
    message:
        "Ask {params.name}{wildcards.attempt}"
    input:
        item_set=set_manifest,
    output:
        manifest=paths.QUERY,
    log:
        paths.cell_log("query"),
    params:
        name=cell_name,
    wildcard_constraints:
        key=KEY,
        attempt=ATTEMPT,
    resources:
        mem_mb=query_mem,
        **ENDPOINT_RESOURCES,
    shell:
        "OMP_NUM_THREADS={threads} {PY} -m shredfold job query {REPLAY}--plan {PLAN_FILE:q} --key {wildcards.key} "
        "--where {wildcards.where:q} --out {output.manifest:q} --name {params.name:q} --mem-mb {resources.mem_mb} "
        "> {log:q} 2>&1" + failed("query")

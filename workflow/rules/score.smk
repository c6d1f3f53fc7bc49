# Score one cell's answers into its Parquet table.
rule score:
    message:
        "Score {params.name}{wildcards.attempt}"
    input:
        answers=query_manifest,
    output:
        table=paths.SCORE,
    log:
        paths.cell_log("score"),
    params:
        name=cell_name,
    wildcard_constraints:
        key=KEY,
        attempt=ATTEMPT,
    threads: score_threads
    resources:
        mem_mb=score_mem,
    shell:
        "OMP_NUM_THREADS={threads} {PY} -m shredfold job score --plan {PLAN_FILE:q} --key {wildcards.key} "
        "--where {wildcards.where:q} --input {input.answers:q} --out {output.table:q} --name {params.name:q} "
        "--mem-mb {resources.mem_mb} > {log:q} 2>&1" + failed("score")

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
    shell:
        "{PY} -m shredfold job score --plan {PLAN_FILE:q} --key {wildcards.key} --where {wildcards.where:q} "
        "--input {input.answers:q} --out {output.table:q} > {log:q} 2>&1"

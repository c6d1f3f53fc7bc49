rule score:
    message:
        "Score {wildcards.model} on {wildcards.domain} N={wildcards.n}"
    input:
        responses=query_manifest,
    output:
        table="results/cells/score/{model}/{bench}/{domain}/N{n}/{key}{attempt}.parquet",
    log:
        "results/logs/score/{model}/{bench}/{domain}/N{n}/{key}{attempt}.log",
    wildcard_constraints:
        key=KEY,
        attempt=ATTEMPT,
    shell:
        "{PY} -m shredfold job score --spec {SPEC:q} --key {wildcards.key} "
        "--input {input.responses:q} --out {output.table:q} > {log:q} 2>&1"

rule query:
    message:
        "Query {wildcards.model} on {wildcards.domain} N={wildcards.n}{wildcards.attempt}"
    input:
        samples=set_manifest,
    output:
        manifest="results/cells/query/{model}/{bench}/{domain}/N{n}/{key}{attempt}.json",
    log:
        "results/logs/query/{model}/{bench}/{domain}/N{n}/{key}{attempt}.log",
    wildcard_constraints:
        key=KEY,
        attempt=ATTEMPT,
    resources:
        **ENDPOINT_RESOURCES,
    shell:
        "{PY} -m shredfold job query {REPLAY}--spec {SPEC:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"

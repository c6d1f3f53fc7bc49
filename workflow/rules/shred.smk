rule shred:
    message:
        "Shred {wildcards.domain} into N={wildcards.n} pieces"
    output:
        manifest="results/sets/shred/{domain}/N{n}/{key}.json",
    log:
        "results/logs/shred/{domain}/N{n}/{key}.log",
    wildcard_constraints:
        key=KEY,
    params:
        spec=SPEC,
    shell:
        "{PY} -m shredfold job shred --spec {params.spec:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"

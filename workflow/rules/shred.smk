rule shred:
    message:
        "Shred {wildcards.domain} into N={wildcards.n} pieces"
    output:
        manifest="results/sets/shred/{domain}/N{n}/{key}.json",
    log:
        "results/logs/shred/{domain}/N{n}/{key}.log",
    wildcard_constraints:
        key=KEY,
    shell:
        "{PY} -m shredfold job shred --spec {SPEC:q} --key {wildcards.key} "
        "--out {output.manifest:q} > {log:q} 2>&1"

rule aggregate:
    message:
        "Aggregate {n} cell tables into the leaderboard".format(n=len(PLAN.cells))
    input:
        tables=PLAN.score_paths,
    output:
        leaderboard="results/leaderboard.csv",
        breakdown="results/breakdown.csv",
        breakdown_origami="results/breakdown_origami.csv",
    log:
        "results/logs/aggregate.log",
    shell:
        "{PY} -m shredfold job aggregate --spec {SPEC:q} --tables {input.tables:q} "
        "--out {output.leaderboard:q} {output.breakdown:q} {output.breakdown_origami:q} "
        "> {log:q} 2>&1"

# DuckDB over exactly the plan's cell tables (one writer: a single job).
rule aggregate:
    message:
        "Aggregate {n} cell tables into the leaderboard".format(n=len(PLAN.cells))
    input:
        tables=PLAN.score_paths,
    output:
        leaderboard=report(paths.LEADERBOARD, caption="../report/leaderboard.rst", category="Tables"),
        breakdowns=breakdown_files(),
        pairwise=report(paths.PAIRWISE, caption="../report/pairwise.rst", category="Tables"),
    log:
        paths.AGGREGATE_LOG,
    shell:
        "{PY} -m shredfold job aggregate --plan {PLAN_FILE:q} --tables {input.tables:q} "
        "--out {output.leaderboard:q} {output.breakdowns:q} --pairwise {output.pairwise:q} > {log:q} 2>&1"

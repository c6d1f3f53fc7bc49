# DuckDB over exactly the plan's cell tables (one writer: a single job). A local rule: with a
# cluster executor it runs in the Snakemake that submits the jobs, whose plan named the cell
# tables of this run; a cluster job would plan again, and a query that recorded errors during
# the run moves its cell on to the next attempt, whose tables do not exist yet.
localrules:
    aggregate,


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
    params:
        name="the leaderboard",
    resources:
        mem_mb=res.AGGREGATE_MB,
    # Shown as well as logged: what the plan and the set jobs left out (the leaderboard's
    # notes), or why there is no leaderboard (every design left out).
    shell:
        "{PY} -m shredfold job aggregate --plan {PLAN_FILE:q} --tables {input.tables:q} "
        "--out {output.leaderboard:q} {output.breakdowns:q} --pairwise {output.pairwise:q} "
        "--mem-mb {resources.mem_mb} 2>&1 | tee {log:q}" + failed("aggregate")

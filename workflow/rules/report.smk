# The HTML report next to the leaderboard (part of the default target), and the release
# (its own target: snakemake results/release.tar.gz). Local rules, like aggregate: they read
# the tables of this run's attempts, which a cluster job's own plan may have moved past.
localrules:
    report,
    release,


rule report:
    message:
        "Write the HTML report"
    input:
        leaderboard=rules.aggregate.output.leaderboard,
        breakdowns=rules.aggregate.output.breakdowns,
        pairwise=rules.aggregate.output.pairwise,
        tables=PLAN.score_paths,
    output:
        html=report(paths.REPORT, caption="../report/report.rst", category="Report"),
    log:
        paths.REPORT_LOG,
    shell:
        "{PY} -m shredfold job report --plan {PLAN_FILE:q} --tables {input.tables:q} "
        "--out {output.html:q} > {log:q} 2>&1"


rule release:
    message:
        "Write the release of {n} cells".format(n=len(PLAN.cells))
    input:
        leaderboard=rules.aggregate.output.leaderboard,
        breakdowns=rules.aggregate.output.breakdowns,
        pairwise=rules.aggregate.output.pairwise,
        tables=PLAN.score_paths,
    output:
        archive=paths.RELEASE,
    log:
        paths.RELEASE_LOG,
    # Shown as well as logged: the digest, and how many items failed and why.
    shell:
        "{PY} -m shredfold release --spec {SPEC_FILE:q} --out {output.archive:q} 2>&1 | tee {log:q}"

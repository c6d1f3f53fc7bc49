# shredfold: spec → item sets → model queries → scores → leaderboard.
# Run: snakemake --cores all [results/leaderboard.csv results/report.html] [--config spec=…]
#      snakemake --cores all results/release.tar.gz   (a release that `shredfold verify` checks)
# The rules are thin and generic over tasks: each calls one `shredfold job …` command; paths
# carry content keys (patterns in shredfold.paths).

config.setdefault("spec", str(Path(workflow.basedir) / "specs" / "default.yaml"))


include: "workflow/rules/common.smk"
include: "workflow/rules/sets.smk"
include: "workflow/rules/query.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        rules.aggregate.output.leaderboard,
        rules.report.output.html,

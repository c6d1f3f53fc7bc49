"""The I/O edge of each pipeline stage: one function per Snakemake rule, generic over tasks."""

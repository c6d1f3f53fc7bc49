"""shredfold's benchmarks as Inspect AI tasks (``inspect eval shredfold/<name>``).

Generic over tasks: every task with the :class:`~shredfold.tasks.base.Evaluated` hooks gets an
Inspect task named by its ``public_name``, whose samples are exactly the requests shredfold
sends and whose scorer is the task's own metric functions (:mod:`.task`); the rows come from a
``shredfold export`` folder or from a spec's store (:mod:`.rows`). Inspect finds the tasks
through the ``inspect_ai`` entry point, :mod:`._registry`.
"""

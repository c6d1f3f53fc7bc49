"""What Inspect AI loads through shredfold's ``inspect_ai`` entry point (pyproject.toml): one
``@task`` per evaluated shredfold task, registered as ``shredfold/<public name>``
(``shredfold/shredbench``, ``shredfold/origami_mcq``)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.util import registry_info

from shredfold.inspect_eval.task import evaluated_tasks, make_task


def _register(name: str) -> Any:
    def run(
        export: str | None = None,
        spec: str | None = None,
        results: str = "results",
        split: str | None = None,
        build: bool = True,
        max_side: int | None = None,
        **options: Any,
    ) -> Task:
        return make_task(
            name, export=export, spec=spec, results=results, split=split, build=build, max_side=max_side, **options
        )

    run.__name__ = run.__qualname__ = name
    run.__doc__ = (
        f"shredfold's {name} from an export (-T export=FOLDER) or a spec (-T spec=SPEC, default "
        "specs/default.yaml; -T results=FOLDER); -T split=NAME keeps one split, -T max_side=PX "
        "downscales images as a model file's images.max_side; other -T options are the task's."
    )
    registered = task(name=name)(run)
    if registry_info(registered).name != f"shredfold/{name}":
        # Inspect prefixes the package only when it finds shredfold installed (an editable
        # install counts); from a source tree it does not, and the name must say it.
        registered = task(name=f"shredfold/{name}")(run)
    return registered


TASKS = {name: _register(name) for name in evaluated_tasks()}
globals().update(TASKS)

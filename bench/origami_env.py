"""Seconds per environment step (median, p90) on medium designs: render the observation,
parse the answer, apply the fold, hash the state. Run: python bench/origami_env.py"""

from __future__ import annotations

import numpy as np

from shredfold.models.builtin.origami_agents import OrigamiRandom
from shredfold.origami_bench.catalogue import load_catalogue
from shredfold.origami_bench.env import EnvConfig, render_folded, run_episode
from shredfold.origami_bench.targets import target_state
from shredfold.spec import ModelConfig, OrigamiBenchSpec
from shredfold.store import Store


def main() -> None:
    ob = OrigamiBenchSpec()
    designs = [d for d in load_catalogue(ob, 0, Store("results/store")).designs if d.tier == "medium"]
    agent = OrigamiRandom(ModelConfig(id="origami-random", adapter="origami-random"), None)
    env = EnvConfig(step_limit=6, image_size=ob.image_size)
    secs = []
    for d in designs:
        target = render_folded(target_state(d), env.image_size)
        ep = run_episode(target, env, lambda r: (agent.complete(r).text, {}), item=None)
        secs += [t.seconds for t in ep.turns]
    s = np.array(secs)
    print(f"{len(designs)} medium designs, {len(s)} steps: "
          f"median {np.median(s):.3f} s/step, p90 {np.quantile(s, 0.9):.3f} s/step")


if __name__ == "__main__":
    main()

"""Full-step GS of the reference agents on Flat-Folder's designs, by tier and by category.

The designs are read from a fetched folder (``shredfold designs fetch``; default: where
``designs: {flat_folder: true}`` reads), each with the paper's category and tier.

1. Each design's target is solved and drawn as the full-step task does (``target_state``,
   ``render_folded``, ``silhouette``), every design in its own process with a limit of CPU
   seconds (``--solve-cpu``, so a busy machine does not skip more designs) and memory
   (``--solve-memory``): a design whose folded state is not found within them, or that does
   not fold flat through the benchmark's path, is reported as skipped with its reason. Solved
   targets are cached by design key under ``--cache``, so a second run only plays.
2. Each solved target is played by each agent (``--agents``) with ``run_episode`` in
   ``--workers`` long-lived processes, one agent object per worker and agent as a pipeline
   cell has (origami-search builds its outline library once per process). GS is the task's.
   Each worker's memory is capped (``--play-memory``, RLIMIT_AS) and each episode's CPU
   time (``--episode-cpu``): an episode past either is a row with GS 0 and the cause, and a
   worker that dies or hangs past a wall-clock bound is replaced, its design recorded as
   lost, so one design cannot stop the bench.

With ``--interleave`` the players solve each target themselves just before playing it (the
same bounds: ``--solve-cpu`` by ITIMER_PROF, memory by the player's cap), so no process is
started per design (about 15 s of wall time each on a shared 2-core machine) and a run
stopped early has the GS of every design it reached. A player holds more than a fresh
process (the agent, its outline library), so give it more room than ``--solve-memory``:
under the 4 GB default, six designs the fresh solver process solves (057 Dragon HP, 066
Rattlesnake HP, 100 Ryujin 2-1, 111 Wizard, 112 Cicada v1, and 037 Shrimp v2, which fails
either way) failed with MemoryError in a player; measured with ``--play-memory 8``.

The step limit defaults to 20, the paper spec's (``specs/paper.yaml``); the OrigamiBench
paper's own limit was not found in the text available here.

    nice -n 10 python bench/fullstep_flat_folder.py --cache /tmp/ff-targets --out ff.json [--interleave]
    python bench/fullstep_flat_folder.py --summary ff.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from shredfold.origami_bench.design import TIERS, Design

AGENTS = {"search": "origami-search", "random": "origami-random"}


def designs(folder: Path) -> list[Design]:
    from shredfold.origami_bench.designs import folder_designs

    found, errors = folder_designs(folder, None, flat_folder_only=True)
    for e in errors:
        print(f"not read: {e}")
    return found


def _paths(cache: Path, design: Design, size: int) -> tuple[Path, Path, Path]:
    stem = cache / f"{design.key}-{size}"
    return stem.with_suffix(".png"), stem.with_suffix(".npy"), stem.with_suffix(".json")


def _solve(design: Design, size: int, cache: Path, cpu_s: float, memory_gb: float) -> None:
    """In a child process: the target, written atomically; or why there is none."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_s), int(cpu_s) + 5))
    memory = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    _solve_target(design, size, cache)


def _solve_target(design: Design, size: int, cache: Path) -> dict[str, Any]:
    """The target, written atomically under ``cache``; its meta (``skipped``: why there is
    none, or None)."""
    from shredfold.origami_bench.env import render_folded, silhouette
    from shredfold.origami_bench.targets import target_state

    png, npy, meta = _paths(cache, design, size)
    t0 = time.process_time()
    try:
        state = target_state(design)
        why = None if state.flat_foldable else f"does not fold flat ({state.layers.reason}: {state.layers.detail})"
    except Exception as exc:  # noqa: BLE001 - a bench reports every design
        state, why = None, f"{type(exc).__name__}: {exc}"
    if why is None and state is not None:
        for path, data in ((png, render_folded(state, size)), (npy, silhouette(state, size))):
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                if isinstance(data, bytes):
                    fh.write(data)
                else:
                    np.save(fh, data)
            os.replace(tmp, path)
    info = {"skipped": why, "solve_cpu_s": round(time.process_time() - t0, 3)}
    tmp = meta.with_name(f"{meta.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, meta)
    return info


def _solve_in_player(design: Design, size: int, cache: Path, cpu_s: float) -> str | None:
    """In a long-lived player (--interleave): the design's target unless cached, within
    ``cpu_s`` of CPU (ITIMER_PROF) and the player's address-space cap; why there is none."""
    meta = _paths(cache, design, size)[2]
    if meta.is_file():
        return json.loads(meta.read_text())["skipped"]
    signal.signal(signal.SIGPROF, _over_cpu)
    signal.setitimer(signal.ITIMER_PROF, cpu_s)
    try:
        info = _solve_target(design, size, cache)
    except EpisodeCpuLimit:
        info = {"skipped": f"no folded state within {cpu_s:g} s of CPU", "solve_cpu_s": None}
        meta.write_text(json.dumps(info))
    except MemoryError as exc:
        info = {"skipped": f"MemoryError: {exc}", "solve_cpu_s": None}
        meta.write_text(json.dumps(info))
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return info["skipped"]


def solve_all(found: list[Design], size: int, cache: Path, cpu_s: float, memory_gb: float, workers: int) -> dict[str, dict[str, Any]]:
    """Every design's target (from the cache where solved before), ``workers`` at a time."""
    cache.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("spawn")
    todo = [d for d in found if not _paths(cache, d, size)[2].is_file()]
    running: list[tuple[Design, Any]] = []
    while todo or running:
        while todo and len(running) < workers:
            d = todo.pop(0)
            p = ctx.Process(target=_solve, args=(d, size, cache, cpu_s, memory_gb))
            p.start()
            running.append((d, p))
        time.sleep(0.2)
        for item in list(running):
            d, p = item
            if p.is_alive():
                continue
            running.remove(item)
            meta = _paths(cache, d, size)[2]
            if not meta.is_file():  # killed by a limit (CPU: SIGXCPU or SIGKILL; memory: MemoryError)
                why = f"no folded state within {cpu_s:g} s of CPU and {memory_gb:g} GB (exit code {p.exitcode})"
                meta.write_text(json.dumps({"skipped": why, "solve_cpu_s": None}))
            print(f"solved {d.id}: {json.loads(meta.read_text())}", flush=True)
    out = {}
    for d in found:
        meta = _paths(cache, d, size)[2]
        out[d.key] = json.loads(meta.read_text()) if meta.is_file() else {"skipped": "solver process died"}
    return out


_AGENTS: dict[str, Any] = {}


class EpisodeCpuLimit(BaseException):  # noqa: N818 - not an Exception: the env's own handlers must not swallow it
    """An episode ran past its CPU time (raised from SIGPROF)."""


def _over_cpu(signum: int, frame: Any) -> None:
    raise EpisodeCpuLimit


def _play(args: tuple[Design, int, int, str, list[str], float, float | None]) -> dict[str, Any]:
    from shredfold.models.builtin import origami_agents
    from shredfold.origami_bench.env import EnvConfig, gs, run_episode, silhouette
    from shredfold.spec import ModelConfig

    design, size, step_limit, cache, agents, episode_cpu, solve_cpu = args
    row: dict[str, Any] = {"design": design.id, "key": design.key, "tier": design.tier, "category": design.category}
    if solve_cpu is not None and (why := _solve_in_player(design, size, Path(cache), solve_cpu)) is not None:
        return {**row, "skipped": why}
    png, npy, _ = _paths(Path(cache), design, size)
    target_png, target_mask = png.read_bytes(), np.load(npy)
    env = EnvConfig(kind="fold", step_limit=step_limit, image_size=size)
    for short in agents:
        name = AGENTS[short]
        if name not in _AGENTS:
            cls = {"origami-search": origami_agents.OrigamiSearch, "origami-random": origami_agents.OrigamiRandom}[name]
            _AGENTS[name] = cls(ModelConfig(id=name, adapter=name), None)
        agent = _AGENTS[name]
        t0 = time.process_time()
        # ITIMER_PROF counts this process's CPU time; the handler raises at the next bytecode
        signal.signal(signal.SIGPROF, _over_cpu)
        signal.setitimer(signal.ITIMER_PROF, episode_cpu)
        try:
            episode = run_episode(target_png, env, lambda r, a=agent: (a.complete(r).text, {}), item=None)
            signal.setitimer(signal.ITIMER_PROF, 0)
        except EpisodeCpuLimit:
            row[short] = {"gs": 0.0, "steps": 0, "cpu_s": round(time.process_time() - t0, 2), "error": f"over {episode_cpu:g} s of CPU"}
            continue
        except MemoryError as exc:
            signal.setitimer(signal.ITIMER_PROF, 0)
            row[short] = {"gs": 0.0, "steps": 0, "cpu_s": round(time.process_time() - t0, 2), "error": f"out of memory: {exc}"}
            continue
        except Exception as exc:  # noqa: BLE001 - a crash is the bench's finding, not its end
            signal.setitimer(signal.ITIMER_PROF, 0)
            row[short] = {"gs": 0.0, "steps": 0, "cpu_s": round(time.process_time() - t0, 2), "error": f"crash: {type(exc).__name__}: {exc}"}
            continue
        row[short] = {
            "gs": gs(silhouette(episode.final, size), target_mask),
            "steps": episode.steps,
            "cpu_s": round(time.process_time() - t0, 2),
            "error": episode.error,
            # the engine's rejections by reason (a fold past MAX_LAYERS is "thickness")
            "rejected": dict(sorted(Counter(t.reason for t in episode.turns if not t.valid).items())),
        }
    return row


def _worker(inbox: Any, outbox: Any, memory_gb: float) -> None:
    """A long-lived player: designs in, rows out, under a cap on its address space."""
    import resource

    memory = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    for task in iter(inbox.get, None):
        outbox.put((os.getpid(), _play(task)))


def play_all(work: list[tuple[Any, ...]], workers: int, memory_gb: float, wall_s: float) -> Any:
    """Rows of ``work`` as they come, from ``workers`` players; a player that dies or takes
    longer than ``wall_s`` on one design is replaced and the design's row says so."""
    ctx = mp.get_context("spawn")
    outbox = ctx.Queue()
    todo = list(work)
    players: dict[int, tuple[Any, Any, tuple[Any, ...] | None, float]] = {}

    def start() -> None:
        inbox = ctx.Queue()
        p = ctx.Process(target=_worker, args=(inbox, outbox, memory_gb), daemon=True)
        p.start()
        players[p.pid] = (p, inbox, None, 0.0)

    for _ in range(min(workers, len(todo))):
        start()
    while todo or any(task is not None for _, _, task, _ in players.values()):
        for pid, (p, inbox, task, _) in list(players.items()):
            if task is None and todo:
                task = todo.pop(0)
                inbox.put(task)
                players[pid] = (p, inbox, task, time.monotonic())
        try:
            pid, row = outbox.get(timeout=2.0)
            p, inbox, _, _ = players[pid]
            players[pid] = (p, inbox, None, 0.0)
            yield row
        except Exception:  # noqa: BLE001 - queue.Empty: check on the players
            pass
        for pid, (p, _, task, since) in list(players.items()):
            if task is None:
                continue
            dead = not p.is_alive()
            if dead or time.monotonic() - since > wall_s:
                if not dead:
                    p.kill()
                p.join()
                del players[pid]
                d = task[0]
                why = f"player lost (exit code {p.exitcode})" if dead else f"player past {wall_s:g} s of wall time, killed"
                yield {"design": d.id, "key": d.key, "tier": d.tier, "category": d.category,
                       **{a: {"gs": 0.0, "steps": 0, "cpu_s": None, "error": why} for a in task[4]}}  # fmt: skip
                if todo:
                    start()
    for p, inbox, _, _ in players.values():
        inbox.put(None)
        p.join(timeout=10)


def summary(rows: list[dict[str, Any]], skipped: list[dict[str, Any]], agents: list[str]) -> dict[str, Any]:
    def stats(sel: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(sel)}
        for a in agents:
            g = [r[a]["gs"] for r in sel if a in r]
            if g:
                out[a] = round(float(np.mean(g)), 4)
        return out

    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)
    reasons: dict[str, int] = defaultdict(int)
    for s in skipped:
        reasons[s["skipped"].split(" (")[0].split(":")[0]] += 1
    return {
        "all": stats(rows),
        "tier": {t: stats([r for r in rows if r["tier"] == t]) for t in TIERS},
        "category": {c: stats(v) for c, v in sorted(by_cat.items())},
        "skipped": {"n": len(skipped), "by_tier": {t: sum(s["tier"] == t for s in skipped) for t in TIERS},
                    "reasons": dict(reasons)},  # fmt: skip
    }


def print_summary(s: dict[str, Any], agents: list[str]) -> None:
    head = "  ".join(f"{a:>7s}" for a in agents)
    print(f"{'':24s} {'n':>4s}  {head}")
    for name, part in [("all", s["all"]), *((f"tier {t}", v) for t, v in s["tier"].items()),
                       *((f"  {c}", v) for c, v in s["category"].items())]:  # fmt: skip
        print(f"{name:24s} {part['n']:4d}  " + "  ".join(f"{part.get(a, float('nan')):7.4f}" for a in agents))
    print(f"skipped: {s['skipped']}")


def main() -> None:
    from shredfold.origami_bench.flat_folder import fetched_folder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, default=None, help="Flat-Folder's designs (default: the fetched cache)")
    ap.add_argument("--step-limit", type=int, default=20)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--agents", nargs="+", choices=sorted(AGENTS), default=["search", "random"])
    ap.add_argument("--solve-cpu", type=float, default=120.0, help="CPU seconds to solve one target")
    ap.add_argument("--solve-memory", type=float, default=4.0, help="GB of memory to solve one target")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--interleave", action="store_true",
                    help="each player solves a target just before playing it (no process per design; a stopped run has GS so far)")
    ap.add_argument("--play-memory", type=float, default=4.0, help="GB of address space of each player process")
    ap.add_argument("--episode-cpu", type=float, default=300.0, help="CPU seconds of one agent's episode")
    ap.add_argument("--limit", type=int, default=0, help="only the first N designs (0: all)")
    ap.add_argument("--sample", type=int, default=0, help="only N designs spread evenly over the name order (0: all)")
    ap.add_argument("--cache", type=Path, required=False, default=Path("results/bench-ff-targets"))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--summary", type=Path, default=None, help="print the summary of an --out file")
    args = ap.parse_args()
    if args.summary:
        data = json.loads(args.summary.read_text())
        print_summary(data["summary"], data["args"]["agents"])
        return
    found = designs(args.folder or fetched_folder())
    if args.limit:
        found = found[: args.limit]
    if args.sample:  # an even spread over the name order (the paper's order mixes tiers and categories)
        found = found[:: max(1, len(found) // args.sample)][: args.sample]
    t0 = time.monotonic()
    if args.interleave:  # the players solve each target themselves, just before playing it
        args.cache.mkdir(parents=True, exist_ok=True)
        skipped: list[dict[str, Any]] = []
        playable = found
    else:
        solved = solve_all(found, args.size, args.cache, args.solve_cpu, args.solve_memory, args.workers)
        print(f"solved {sum(v['skipped'] is None for v in solved.values())} of {len(found)} targets "
              f"in {time.monotonic() - t0:.0f} s", flush=True)  # fmt: skip
        skipped = [{"design": d.id, "tier": d.tier, "category": d.category, "skipped": solved[d.key]["skipped"]}
                   for d in found if solved[d.key]["skipped"]]  # fmt: skip
        playable = [d for d in found if not solved[d.key]["skipped"]]
    # each episode's row is appended to a journal under the cache as it comes (a stopped run
    # resumes; the journal is per step limit, size and agents)
    journal = args.cache / f"played-{args.step_limit}-{args.size}-{'-'.join(sorted(args.agents))}.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if journal.is_file():
        for line in journal.read_text().splitlines():
            row = json.loads(line)
            done[row["key"]] = row
    rows: list[dict[str, Any]] = [done[d.key] for d in playable if d.key in done and "skipped" not in done[d.key]]
    skipped += [{k: done[d.key][k] for k in ("design", "tier", "category", "skipped")}
                for d in playable if d.key in done and "skipped" in done[d.key]]  # fmt: skip
    print(f"resumed {len(rows)} episodes from {journal}", flush=True)
    t1 = time.monotonic()
    solve_cpu = args.solve_cpu if args.interleave else None
    work = [(d, args.size, args.step_limit, str(args.cache), args.agents, args.episode_cpu, solve_cpu)
            for d in playable if d.key not in done]  # fmt: skip
    # a player's wall time on one design: its episodes' CPU on a machine shared 4 ways, and
    # the outline library it builds first
    wall_s = 4 * (args.episode_cpu * len(args.agents) + (args.solve_cpu if args.interleave else 0)) + 600
    with journal.open("a") as log:
        for row in play_all(work, args.workers, args.play_memory, wall_s):
            log.write(json.dumps(row) + "\n")
            log.flush()
            if "skipped" in row:  # --interleave: no target within the solve's bounds
                skipped.append({k: row[k] for k in ("design", "tier", "category", "skipped")})
                print(row["design"], row["tier"], f"skipped: {row['skipped']}", flush=True)
                continue
            rows.append(row)
            print(row["design"], row["tier"], row["category"],
                  " ".join(f"{a}={row[a]['gs']:.3f}/{row[a]['steps']}/{row[a]['cpu_s']}s"
                           + (f" [{row[a]['error']}]" if row[a]["error"] else "") for a in args.agents),
                  flush=True)  # fmt: skip
    s = summary(rows, skipped, args.agents)
    print(f"played {len(rows)} in {time.monotonic() - t1:.0f} s")
    print_summary(s, args.agents)
    if args.out:
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps({"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                                   "summary": s, "rows": rows, "skipped": skipped}, indent=1))  # fmt: skip
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()

// Flat-Folder's batch solver, kept warm in one node process, for
// bench/solver_vs_flatfolder.py. Flat-Folder is not part of this project: SRC_DIR is the
// `src` folder of a checkout at the commit pinned in
// src/shredfold/origami_bench/data/flat_folder/manifest.json.
//
//     node flat_folder_driver.mjs SRC_DIR
//
// prints {"ready": true} once Flat-Folder's constraint tables are built (its batch page does
// that once, before the first file), then reads lines FILE<TAB>LIMIT (LIMIT a number or
// "all") and answers each with one JSON line: what BATCH.process_file(fold, limit) returns
// (states as a string: it is a BigInt) plus cpu_sec, this process's processor time for the
// design (user + system, every thread), or {"error": "..."}.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const src = process.argv[2];
if (!src) {
  process.stderr.write("usage: node flat_folder_driver.mjs FLAT_FOLDER_SRC_DIR\n");
  process.exit(2);
}
const reply = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
// Flat-Folder logs its progress with console.log; stdout carries the answers
console.log = (...parts) => process.stderr.write(parts.join(" ") + "\n");

const load = (name) => import(pathToFileURL(path.join(src, name)).href);
const { CON } = await load("constraints.js");
const { BATCH } = await load("batch.js");
const { NOTE } = await load("note.js");
CON.build();
reply({ ready: true });

for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const [file, limit] = line.split("\t");
  try {
    // parsed before the clock starts, as the batch page does
    const fold = JSON.parse(fs.readFileSync(file, "utf8"));
    fold.number = path.basename(file).slice(0, 3);
    NOTE.show = false;
    const before = process.cpuUsage();
    const out = await BATCH.process_file(fold, limit === "all" ? Infinity : Number(limit));
    const used = process.cpuUsage(before);
    reply({ ...out, states: String(out.states), cpu_sec: (used.user + used.system) / 1e6 });
  } catch (err) {
    reply({ error: String((err && err.message) || err || "unknown error") });
  }
}

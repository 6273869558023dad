# genai sweep's Ray driver (embedded in genai; written to a private temporary file and run with
# the interpreter that has `ray`). It submits one Ray task per cell, each running
# `genai sweep --cell JOB` on the node Ray picks by the cell's CPUs and memory, and prints one
# JSON line per cell as it finishes: {"cell", "exit_code", "error", "node", "attempts"}.
# The cells write their own folders (a path every node sees); this process only schedules.
#
#   python3 ray_driver.py SPEC.json
# SPEC: {"address": "auto" | "HOST:PORT", "max_retries": N,
#        "cells": [{"name", "argv": [...], "num_cpus", "memory"}]}
import json
import os
import subprocess
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if spec["address"].split(":")[0] in ("127.0.0.1", "localhost"):
        # Ray otherwise replaces a loopback address by the host's outward one (a cluster started
        # on loopback only is not listening there).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray  # noqa: E402 (after the environment it reads)

    ray.init(address=spec["address"], logging_level="ERROR", log_to_driver=False)

    @ray.remote
    def run_cell(argv):
        # In the worker's process group (no new session): when Ray kills the worker, the cell's
        # genai and its steps go with it.
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        errors = [line[7:] for line in err if line.startswith("error: ")]
        return {"exit_code": p.returncode, "error": errors[-1] if errors else (err[-1] if err else ""),
                "node": ray.get_runtime_context().get_node_id()}

    refs = {}
    for cell in spec["cells"]:
        task = run_cell.options(num_cpus=cell["num_cpus"], memory=cell["memory"],
                                max_retries=spec["max_retries"], retry_exceptions=False)
        refs[task.remote(cell["argv"])] = cell["name"]
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        name = refs[done[0]]
        try:
            r = ray.get(done[0])
            line = {"cell": name, **r}
        except ray.exceptions.RayError as e:  # the worker died on every attempt, or was cancelled
            first = str(e).strip().splitlines()
            line = {"cell": name, "exit_code": None,
                    "error": f"{type(e).__name__}: {first[0] if first else ''}", "node": None}
        print(json.dumps(line), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()

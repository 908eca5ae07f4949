"""logtrial beside Elle (and Jepsen's Kafka checker) on Jepsen's own histories.

    python -m benchmarks.bench_elle [--histories DIR] [--sizes 10000,100000,1000000] [--runs 1]
                                    [--reference-rev REV] [--out DIR]

The histories are the list-append ones Jepsen's history simulator wrote
(`la-si-N.edn.gz` in ../shared/bench/, its README has Elle's figures). For
each size, in the same run and one after another:

- logtrial checking the EDN directly (`logtrial check h.edn.gz`) and the JSON
  Lines `import-edn` writes from it (converted once, untimed), each in a
  fresh interpreter, start-up included, serializable;
- the previous version of logtrial (a `git worktree` of --reference-rev,
  default HEAD) on the same JSON Lines: the reference when Elle is absent;
- Elle, when LOGTRIAL_ELLE gives its command line, with {history} where the
  EDN file goes (e.g. `java -jar elle-cli.jar --model list-append
  --consistency-models serializable {history}`);
- Jepsen's Kafka checker, when LOGTRIAL_JEPSEN_KAFKA gives its command line
  the same way (for queue histories in EDN given with --histories).

Each is a subprocess whose process tree's resident memory is sampled every
0.1 s. logtrial's anomaly counts must agree between its runs. Prints a
Markdown table with the load average before and after each row, and writes
elle.json in --out.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_check import tree_rss

REPO = Path(__file__).resolve().parent.parent
DEFAULT_HISTORIES = REPO.parent / "shared" / "bench"
CHECK = """
import json, sys
from checkers.api import check_history
from checkers.options import CheckOptions
r = check_history(sys.argv[1], "list-append", out_dir=sys.argv[2], engine="local",
                  options=CheckOptions(consistency_model="serializable"))
print(json.dumps({k: v["count"] for k, v in r["anomalies"].items()}))
"""


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def measured(argv: list[str], env: dict | None = None, timeout: float = 3600) -> dict:
    """Wall time, peak resident memory of the process tree, exit code and output."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.1)
        if time.monotonic() - started > timeout:
            proc.kill()
    out, err = proc.communicate()
    return {"seconds": round(time.monotonic() - started, 2), "peak_gb": round(peak / 2**30, 2),
            "rc": proc.returncode, "stdout": out[-2000:], "stderr": err[-2000:]}


def logtrial(python: str, history: Path, out: Path, pythonpath: Path | None = None) -> dict:
    env = {"PYTHONPATH": str(pythonpath)} if pythonpath else None
    found = measured([python, "-c", CHECK, str(history), str(out)], env)
    lines = found["stdout"].strip().splitlines()
    found["counts"] = json.loads(lines[-1]) if found["rc"] == 0 and lines else None
    return found


def external(command: str, history: Path) -> dict:
    return measured([part.replace("{history}", str(history)) for part in shlex.split(command)])


def reference_tree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)
    return where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--histories", type=Path, default=DEFAULT_HISTORIES)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--reference-rev", default="HEAD")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "logtrial-bench-elle")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    reference = None
    if not args.no_reference:
        reference = reference_tree(args.reference_rev, Path(tempfile.mkdtemp(prefix="logtrial-ref-")) / "tree")
    elle, jepsen = os.environ.get("LOGTRIAL_ELLE"), os.environ.get("LOGTRIAL_JEPSEN_KAFKA")
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            gz = args.histories / f"la-si-{size}.edn.gz"
            jsonl = args.out / f"la-si-{size}.jsonl"
            if not jsonl.exists():
                edn = args.out / f"la-si-{size}.edn"
                with gzip.open(gz, "rb") as src, open(edn, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                subprocess.run([python, "-c", "import sys; from pathlib import Path; "
                                "from checkers.history.edn_convert import import_edn; "
                                "import_edn(Path(sys.argv[1]), Path(sys.argv[2]), 'list-append')",
                                str(edn), str(jsonl)], check=True)
                edn.unlink()
            for run in range(args.runs):
                row = {"size": size, "run": run, "load_before": load()}
                row["edn"] = logtrial(python, gz, args.out / "edn")
                row["jsonl"] = logtrial(python, jsonl, args.out / "jsonl")
                if reference is not None:
                    row["reference"] = logtrial(python, jsonl, args.out / "reference", reference)
                if elle:
                    row["elle"] = external(elle, gz)
                if jepsen:
                    row["jepsen_kafka"] = external(jepsen, gz)
                row["load_after"] = load()
                rows.append(row)
                print(_line(row), flush=True)
    finally:
        if reference is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(reference)],
                           capture_output=True)
    (args.out / "elle.json").write_text(json.dumps(rows, indent=1) + "\n")
    counts = {json.dumps(r[k]["counts"], sort_keys=True) for r in rows for k in ("edn", "jsonl", "reference")
              if k in r}
    return 0 if all(r["edn"]["counts"] == r["jsonl"]["counts"] for r in rows) and None not in counts else 1


def _line(row: dict) -> str:
    cells = [f"10^{len(str(row['size'])) - 1}"]
    for key in ("edn", "jsonl", "reference", "elle", "jepsen_kafka"):
        if key in row:
            r = row[key]
            cells.append(f"{key}: {r['seconds']} s, {r['peak_gb']} GB" + (f", {r['counts']}" if "counts" in r else "")
                         + ("" if r["rc"] == 0 or key in ("elle", "jepsen_kafka") else f", exit {r['rc']}"))
    return "| " + " | ".join(cells) + f" | load {row['load_before']} → {row['load_after']} |"


if __name__ == "__main__":
    sys.exit(main())

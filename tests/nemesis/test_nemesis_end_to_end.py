"""A whole `logtrial test` run with every fault: it completes, the cluster ends healed,
and the checker reads the history it leaves."""
from __future__ import annotations

import json

import pytest

from checkers.history.stream import raw_events
from harness.runner import TestOptions, run_test
from checkers.history.wellformed import wellformedness_problems
from nemesis.heal import verify_healed
from nemesis.registry import F_NAMES

# the four faults of the nemesis package (producer-state, a workload-specific fault, has
# its own tests)
FAULTS = ("pause", "kill", "partition", "clock")

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_forty_seconds_of_all_faults_end_healed_and_checkable(cluster, tmp_path):
    # 40 s at one fault step every 5 s, not 60 s at 8 s: each of the four faults still
    # strikes (27-29 nemesis events in three runs on 2026-11-25, kill once or twice)
    options = TestOptions.from_flat(nodes_file=str(cluster.inventory.path), store=str(tmp_path / "store"),
                                    leave_db_running=True, time_limit=40, rate=50, concurrency=4,
                                    nemesis=FAULTS, nemesis_interval=5, seed=11,
                                    db_targets=("one", "majority", "controller", "leader"),
                                    recovery_time=5, final_time_limit=60, check=True, report=False)
    result = run_test(options)
    assert result.status == "complete"
    events = list(raw_events(result.run_dir / "history.jsonl"))
    assert wellformedness_problems(events, "queue") == []
    struck = {F_NAMES[e["f"]][0] for e in events if e["process"] == "nemesis"
              and e["f"] in F_NAMES}
    assert struck == set(FAULTS)
    assert [e for e in events if e["process"] == "nemesis"][-1]["f"] == "heal"
    results = json.loads((result.run_dir / "results.json").read_text())
    assert results["valid"] in (True, False, "unknown")
    assert "anomaly_types" in results
    verify_healed(cluster)

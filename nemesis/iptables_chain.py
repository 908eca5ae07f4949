"""logtrial's own iptables chains: made, listed and removed by name, so a heal takes
exactly ours and nothing an operator put in the same hooks (partition, packet)."""
from __future__ import annotations

import shlex
from typing import Sequence

IPTABLES = "iptables -w 10"


def create_script(hook: str, chain: str, rules: Sequence[str]) -> str:
    """Shell that (re)creates `chain` with `rules` and jumps to it from the top of `hook`."""
    steps = [f"({IPTABLES} -N {chain} 2>/dev/null || {IPTABLES} -F {chain})",
             f"({IPTABLES} -C {hook} -j {chain} 2>/dev/null || {IPTABLES} -I {hook} 1 -j {chain})"]
    steps += [f"{IPTABLES} -A {chain} {rule}" for rule in rules]
    return " && ".join(steps)


def remove_script(hook: str, chain: str) -> str:
    """Shell that removes `chain` and every jump to it; idempotent, never fails."""
    return (f"while {IPTABLES} -D {hook} -j {chain} 2>/dev/null; do :; done; "
            f"{IPTABLES} -F {chain} 2>/dev/null; {IPTABLES} -X {chain} 2>/dev/null; true")


def listing_script(*chains: str) -> str:
    """Shell printing our rules (`-S` lines naming one of `chains`), never the rest."""
    patterns = " ".join(f"-e {shlex.quote(chain)}" for chain in chains)
    return f"{IPTABLES} -S 2>/dev/null | grep {patterns} || true"

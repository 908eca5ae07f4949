"""What a packet fault does to the traffic of the links it strikes (pure).

A behaviour is a flat dict of the netem-like knobs Jepsen 0.3's packet nemesis has:
delay_ms, jitter_ms, loss_pct, duplicate_pct, reorder_pct, corrupt_pct, rate_kbit. Absent
keys are off. Reordering needs a delay to reorder against (as in netem), so a drawn
reorder always comes with one.
"""
from __future__ import annotations

import random

KNOBS = ("delay_ms", "jitter_ms", "loss_pct", "duplicate_pct", "reorder_pct", "corrupt_pct",
         "rate_kbit")
# what the userspace holder does (nemesis/packet_holder.py); loss and rate have their own
HELD = ("delay_ms", "jitter_ms", "reorder_pct", "duplicate_pct", "corrupt_pct")
# rate of the htb class when the behaviour has none: shaping by netem alone
UNLIMITED_KBIT = 10_000_000


def _draw(kind: str, rng: random.Random) -> dict:
    if kind == "delay":
        delay = round(2 ** rng.uniform(3.3, 7.7))  # 10 .. 200 ms, log-uniform
        return {"delay_ms": delay, "jitter_ms": round(delay * rng.uniform(0, 0.5))}
    if kind == "reorder":
        return {**_draw("delay", rng), "reorder_pct": round(rng.uniform(5, 50), 1)}
    if kind == "rate":
        return {"rate_kbit": round(2 ** rng.uniform(7, 13.3))}  # 128 kbit .. 10 Mbit
    upper = {"loss": 30, "duplicate": 20, "corrupt": 10}[kind]
    return {f"{kind}_pct": round(rng.uniform(1, upper), 1)}


KINDS = ("delay", "loss", "duplicate", "reorder", "corrupt", "rate")


def plan_behaviour(rng: random.Random) -> dict:
    """One to three kinds of trouble, each with drawn parameters."""
    behaviour: dict = {}
    for kind in rng.sample(KINDS, rng.randint(1, 3)):
        behaviour.update(_draw(kind, rng))  # reorder's delay wins over delay's: either is fine
    return {k: behaviour[k] for k in KNOBS if k in behaviour}


def held(behaviour: dict) -> bool:
    """Whether the behaviour needs packets held (netem, or the NFQUEUE holder)."""
    return any(behaviour.get(k) for k in HELD)


def netem_args(behaviour: dict) -> str:
    """The netem options for a behaviour (rate is htb's, the class netem hangs under)."""
    args = []
    if behaviour.get("delay_ms"):
        args.append(f"delay {behaviour['delay_ms']}ms {behaviour.get('jitter_ms', 0)}ms")
    for knob, word in (("loss_pct", "loss"), ("duplicate_pct", "duplicate"),
                       ("reorder_pct", "reorder"), ("corrupt_pct", "corrupt")):
        if behaviour.get(knob):
            args.append(f"{word} {behaviour[knob]}%")
    return " ".join(args)


def holder_args(behaviour: dict) -> str:
    """The holder's options for a behaviour."""
    pairs = (("--delay-ms", "delay_ms"), ("--jitter-ms", "jitter_ms"),
             ("--reorder", "reorder_pct"), ("--duplicate", "duplicate_pct"),
             ("--corrupt", "corrupt_pct"))
    return " ".join(f"{flag} {behaviour[k]}" for flag, k in pairs if behaviour.get(k))

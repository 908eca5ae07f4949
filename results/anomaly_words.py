"""One plain-words sentence per anomaly type (Jepsen/Elle vocabulary), shown
above each anomaly section of the report. Unknown types just get none."""

ANOMALY_WORDS = {
    "duplicate": "The same value appears at more than one offset of a key.",
    "inconsistent-offsets": "Two operations disagree about which value sits at one offset.",
    "lost-write": "An acknowledged send was never read, although later offsets of its key were.",
    "unseen": "Acknowledged sends that no poll ever saw (by the end of the test).",
    "G1a": "Aborted read: a value from a failed (aborted) write was read.",
    "precommitted-read": "A transaction read a value before the transaction that wrote it had committed.",
    "poll-skip": "A consumer's successive polls skipped over offsets it should have seen.",
    "nonmonotonic-poll": "A consumer's polls went backwards in offset order.",
    "int-poll-skip": "Inside one transaction, polls skipped offsets.",
    "int-nonmonotonic-poll": "Inside one transaction, polls went backwards.",
    "int-send-skip": "Inside one transaction, sends to one key landed at non-consecutive offsets.",
    "nonmonotonic-send": "A producer's successive sends to a key landed at decreasing offsets.",
    "int-nonmonotonic-send": "Inside one transaction, sends to a key landed at decreasing offsets.",
    "G0": "Write cycle: transactions overwrote each other in a cycle (ww edges only).",
    "G1b": "Intermediate read: a read saw a value that was not its writer's final one.",
    "G1c": "Circular information flow: a cycle of write-write and write-read dependencies.",
    "G-single": "Read skew: a cycle with exactly one anti-dependency (rw) edge.",
    "G2-item": "Write skew: a cycle with two or more anti-dependency (rw) edges.",
    "internal": "A transaction's read disagreed with its own earlier writes.",
    "incompatible-order": "Two reads of a key saw orders that cannot both be prefixes of one log.",
    "duplicate-elements": "A read saw the same appended element twice.",
    "dirty-update": "A committed write built on a value from a failed write.",
    "lost-update": "Two transactions read the same version and both wrote past it.",
    "future-read": "A transaction read a value written after it completed.",
}


def words_for(anomaly_type: str) -> str | None:
    """The sentence for a type; `-process` and `-realtime` variants reuse the base's."""
    if anomaly_type in ANOMALY_WORDS:
        return ANOMALY_WORDS[anomaly_type]
    for suffix, extra in (("-process", "process order"), ("-realtime", "real-time order")):
        base = anomaly_type.removesuffix(suffix)
        if base != anomaly_type and base in ANOMALY_WORDS:
            return f"{ANOMALY_WORDS[base]} The cycle also uses {extra} edges."
    return None

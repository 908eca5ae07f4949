"""What a check is asked to do, besides which history and where: one validated
value that travels from the CLI (`check`, `test`, `test-all`) through the runner
to either engine, and is recorded in test.json and results.json."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from checkers.verdict.consistency import DEFAULT_MODEL, check_model
from checkers.verdict.taxonomy import DEFAULT_EXAMPLES


class CheckOptionError(ValueError):
    """A bad option to a check (unknown workload, model, engine, ...)."""


@dataclass(frozen=True)
class CheckOptions:
    # the model checked against (list-append); None: the workload's default
    consistency_model: str | None = None
    allow: tuple[str, ...] = ()              # anomaly types that do not make a run invalid
    forbid: tuple[str, ...] = ()             # anomaly types that do
    realtime_cycles: bool = False            # queue: also -process/-realtime cycles
    examples: int = DEFAULT_EXAMPLES         # examples kept per anomaly type

    def __post_init__(self) -> None:
        # click hands over lists or tuples; a frozen value wants tuples
        object.__setattr__(self, "allow", tuple(self.allow))
        object.__setattr__(self, "forbid", tuple(self.forbid))
        if self.consistency_model is not None:
            try:
                object.__setattr__(self, "consistency_model", check_model(self.consistency_model))
            except ValueError as e:
                raise CheckOptionError(str(e)) from None
        if self.examples < 1:
            raise CheckOptionError(f"examples must be at least 1, not {self.examples}")

    @property
    def model(self) -> str:
        """The model a workload judged by one is checked against."""
        return self.consistency_model or DEFAULT_MODEL

    def record(self) -> dict:
        """As recorded in test.json and results.json."""
        found = asdict(self)
        found["allow"], found["forbid"] = sorted(self.allow), sorted(self.forbid)
        return found

    @classmethod
    def from_record(cls, record: dict | None) -> "CheckOptions":
        """From a recorded dict (test.json); fields it lacks keep their defaults."""
        known = {k: v for k, v in (record or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)

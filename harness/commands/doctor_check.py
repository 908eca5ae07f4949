"""One line of `logtrial doctor`'s report."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Check:
    what: str
    ok: bool
    detail: str
    required: bool = True

"""The flat view of nested option specs: the command line (and test.json's
"options") name every setting once, without saying which spec holds it.

A spec field whose default is itself a dataclass is expanded into that
dataclass's fields; a field's flat name is its own name unless its metadata
says otherwise (`flat("workload")`). Flat names are unique across a spec tree."""
from __future__ import annotations

import dataclasses
from typing import Any, Iterator

FLAT = "flat"          # metadata key: the field's name on the command line
CLI = "cli"            # metadata key: False for fields no command-line option sets


def flat(name: str | None = None, cli: bool = True) -> dict:
    """Field metadata: the flat name (default: the field's own), and whether an option sets it."""
    meta: dict[str, Any] = {CLI: cli}
    if name:
        meta[FLAT] = name
    return meta


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _nested(f: dataclasses.Field) -> type | None:
    """The dataclass a field holds, when it is to be expanded."""
    default = _default(f)
    return type(default) if dataclasses.is_dataclass(default) else None


def leaves(cls: type) -> Iterator[tuple[str, dataclasses.Field]]:
    """(flat name, field) of every setting in the tree under `cls`."""
    for f in dataclasses.fields(cls):
        nested = _nested(f)
        if nested is not None:
            yield from leaves(nested)
        else:
            yield f.metadata.get(FLAT, f.name), f


def flat_names(cls: type, cli_only: bool = False) -> set[str]:
    return {name for name, f in leaves(cls) if not cli_only or f.metadata.get(CLI, True)}


def from_flat(cls: type, values: dict[str, Any]) -> Any:
    """An instance of `cls` from flat values; unknown names are a TypeError."""
    unknown = set(values) - flat_names(cls)
    if unknown:
        raise TypeError(f"{cls.__name__}: unknown options {', '.join(sorted(unknown))}")
    return _build(cls, values)


def _build(cls: type, values: dict[str, Any]) -> Any:
    kwargs = {}
    for f in dataclasses.fields(cls):
        nested = _nested(f)
        if nested is not None:
            kwargs[f.name] = _build(nested, values)
        elif (name := f.metadata.get(FLAT, f.name)) in values:
            kwargs[f.name] = values[name]
    return cls(**kwargs)


def to_flat(obj: Any) -> dict[str, Any]:
    """Every setting of `obj` by flat name (JSON-ready as dataclasses.asdict makes it)."""
    found: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if _nested(f) is not None:
            found.update(to_flat(value))
        else:
            found[f.metadata.get(FLAT, f.name)] = value
    return found


def replace_flat(obj: Any, **values: Any) -> Any:
    """`obj` with some settings changed, by flat name."""
    return from_flat(type(obj), {**to_flat(obj), **values})

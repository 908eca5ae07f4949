"""tansu's PostgreSQL schema, derived from the crate that was built.

tansu 0.6.0's PostgreSQL engine creates no tables (the broker panics with
`relation "cluster" does not exist`). The crate tansu-storage ships the schema
only in SQLite's dialect (src/ddl/*.sql, which its SQLite engines apply
themselves), and its queries (src/sql/*.sql) say which unique keys an upsert
needs. This module rewrites that DDL for PostgreSQL at install time, so the
schema always matches the installed release and none of it is copied here.

What SQLite leaves loose PostgreSQL checks: the engine binds Rust types
(src/pg.rs: `COPY record ... BINARY` with INT8 offsets, INT2 attributes and
epochs, TIMESTAMPTZ; `Uuid` e-tags and topic ids; `serde_json::Value` details),
and a parameter or binary COPY whose type differs from the column's fails. So
some columns get the type the engine binds (COLUMN_TYPES)."""
from __future__ import annotations

import re
from pathlib import Path

# (table or "*", column) -> PostgreSQL type: what src/pg.rs binds or reads there
COLUMN_TYPES = {
    ("*", "offset_id"): "bigint", ("*", "committed_offset"): "bigint",
    ("*", "offset_start"): "bigint", ("*", "offset_end"): "bigint",
    ("*", "low"): "bigint", ("*", "high"): "bigint", ("*", "producer_id"): "bigint",
    ("*", "attributes"): "smallint", ("*", "epoch"): "smallint",
    ("*", "uuid"): "uuid", ("*", "e_tag"): "uuid", ("*", "detail"): "json",
    ("*", "timestamp"): "timestamptz", ("*", "started_at"): "timestamptz",
    ("*", "is_internal"): "bool",
    ("record", "producer_epoch"): "smallint",  # elsewhere a reference to producer_epoch (id)
    # producer ids are Kafka's int64, and so are the keys that refer to them
    ("producer", "id"): "bigint", ("producer_epoch", "producer"): "bigint",
    ("txn", "producer"): "bigint",
}
# Columns only PostgreSQL's own queries (src/pg/*.sql) read, so the SQLite DDL has none:
# record_fetch.sql asks `r.transaction_id < pg_snapshot_xmin(pg_current_snapshot())`,
# whether the transaction that wrote a record had completed, and the engine reads that
# as a non-null bool; the column is that transaction's id, which PostgreSQL fills in.
# Added only where a query of the crate names it.
PG_ONLY_COLUMNS = {"record": {"transaction_id": "xid8 default pg_current_xact_id() not null"}}
SQLITE_TYPES = {"datetime": "timestamptz", "blob": "bytea", "integer": "int", "int": "int", "text": "text"}
AUTOINCREMENT = re.compile(r"\binteger\s+primary\s+key\s+autoincrement\b", re.I)
CREATE = re.compile(r"create\s+table\s+if\s+not\s+exists\s+(\w+)\s*\((.*)\)\s*;", re.I | re.S)
COLUMN = re.compile(r"^(\s*)(\"?\w+\"?)\s+(\w+)(.*)$", re.S)
REFERENCE = re.compile(r"\breferences\s+(\w+)", re.I)
UPSERT = re.compile(r"insert\s+into\s+(\w+).*?on\s+conflict\s*\(([^)]*)\)", re.I | re.S)
CONSTRAINT_WORDS = ("unique", "primary", "foreign", "constraint", "check")


class SchemaError(RuntimeError):
    """The crate's DDL has a shape this translation does not know; names the file."""


def storage_crate_dir(cargo_home: Path, version: str) -> Path:
    """tansu-storage's sources as cargo unpacked them for the build."""
    found = sorted((cargo_home / "registry" / "src").glob(f"*/tansu-storage-{version}"))
    if not found:
        raise SchemaError(f"tansu-storage {version} sources not found under {cargo_home}/registry/src "
                          "(the build unpacks them; is the tansu build complete?)")
    return found[-1]


def postgres_schema(crate_dir: Path) -> str:
    """The whole PostgreSQL DDL, tables in the crate's file order, in one transaction."""
    upserts = upsert_keys(sorted((crate_dir / "src" / "sql").glob("*.sql")))
    pg_queries = " ".join(_strip_comments(p.read_text()) for p in sorted((crate_dir / "src" / "pg").glob("*.sql")))
    extra = {table: {c: t for c, t in columns.items() if re.search(rf"\b{c}\b", pg_queries)}
             for table, columns in PG_ONLY_COLUMNS.items()}
    tables = [translate_file(path, upserts, extra) for path in sorted((crate_dir / "src" / "ddl").glob("*.sql"))]
    if not tables:
        raise SchemaError(f"no DDL in {crate_dir}/src/ddl")
    return "begin;\n" + "\n".join(_referenced_first(tables)) + "commit;\n"


def _referenced_first(tables: list[str]) -> list[str]:
    """The statements ordered so a table comes after those it references (PostgreSQL
    checks a reference when the table is created, SQLite only when a row is written:
    the crate's files put `header` before the `record` it refers to)."""
    by_name = {CREATE.search(t).group(1): t for t in tables}
    done: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done or name not in by_name or name in path:
            return
        for other in REFERENCE.findall(by_name[name]):
            visit(other, path + (name,))
        done.append(name)

    for name in by_name:
        visit(name, ())
    return [by_name[name] for name in done]


def upsert_keys(query_files: list[Path]) -> dict[str, set[tuple[str, ...]]]:
    """{table: {columns}} that `insert ... on conflict (columns)` needs unique."""
    keys: dict[str, set[tuple[str, ...]]] = {}
    for path in query_files:
        for table, columns in UPSERT.findall(_strip_comments(path.read_text())):
            keys.setdefault(table, set()).add(tuple(c.strip() for c in columns.split(",")))
    return keys


def translate_file(path: Path, upserts: dict[str, set[tuple[str, ...]]],
                   extra: dict[str, dict[str, str]] | None = None) -> str:
    """One table's DDL for PostgreSQL, with the unique keys `upserts` need and the
    `extra` columns only PostgreSQL's queries read."""
    match = CREATE.search(_strip_comments(path.read_text()))
    if not match:
        raise SchemaError(f"{path}: no `create table if not exists` statement")
    table, body = match.group(1), match.group(2)
    lines = [_translate_line(table, part, path) for part in _split_top_level(body)]
    lines += [f"    {column} {definition}" for column, definition in (extra or {}).get(table, {}).items()]
    unique = {_columns(line) for line in lines if line.strip().lower().startswith(("unique", "primary key"))}
    unique |= {(line.split()[0],) for line in lines if re.search(r"\b(unique|primary key)\b", line, re.I)
               and not line.strip().lower().startswith(CONSTRAINT_WORDS)}
    lines += [f"    unique ({', '.join(cols)})" for cols in sorted(upserts.get(table, ())) if cols not in unique]
    return f"create table if not exists {table} (\n" + ",\n".join(lines) + "\n);\n"


def _translate_line(table: str, line: str, path: Path) -> str:
    line = line.rstrip()
    if line.strip().lower().startswith(CONSTRAINT_WORDS):
        return line
    match = COLUMN.match(line)
    if not match:
        raise SchemaError(f"{path}: cannot read column definition {line.strip()!r}")
    indent, name, sqlite_type, rest = match.groups()
    if AUTOINCREMENT.search(line):
        id_type = COLUMN_TYPES.get((table, name), "int")
        return f"{indent}{name} {id_type} generated by default as identity primary key"
    bare = name.strip('"')
    pg_type = COLUMN_TYPES.get((table, bare)) or COLUMN_TYPES.get(("*", bare)) \
        or SQLITE_TYPES.get(sqlite_type.lower())
    if pg_type is None:
        raise SchemaError(f"{path}: column {name} has type {sqlite_type}, which has no PostgreSQL mapping")
    if pg_type == "bool":
        rest = re.sub(r"default\s+(0|1)\b", lambda m: f"default {'true' if m.group(1) == '1' else 'false'}", rest)
    return f"{indent}{name} {pg_type}{rest}"


def _columns(constraint: str) -> tuple[str, ...]:
    inside = constraint[constraint.index("(") + 1:constraint.rindex(")")]
    return tuple(c.strip() for c in inside.split(","))


def _split_top_level(body: str) -> list[str]:
    """A table body split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p for p in (p.strip("\n") for p in parts) if p.strip()]


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)

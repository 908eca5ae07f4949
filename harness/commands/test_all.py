"""`logtrial test-all`: a matrix of systems x Kafka versions x controller quorums x transaction
versions x clients x workloads x nemeses x txn on/off x --test-count (or --seeds), each run through the
runner's Python API; prints a summary table, writes JUnit XML, writes the static index, and exits non-zero
if any run is not valid.

A campaign is a matrix with a seeds axis: each cell runs once per seed, `--forensics` reads each lost
write's offset back from the partition's log into the run directory (harness/forensics.py), and the
anomaly counts are summed per cell (results/campaign.py):

    logtrial test-all --local 3 --workloads queue --txn on --nemeses client-delay --preset late-batch \
        --clients librdkafka,java --txn-versions 1,2 --seeds 1-20 --forensics
"""
from __future__ import annotations

import dataclasses
import itertools
import sys
import traceback
from pathlib import Path
from typing import Callable, TypeVar

import click
from click.core import ParameterSource

from common import exit_codes
from clusters.system_kind import InstallError
from clusters.systems import DEFAULT_SYSTEM, SYSTEMS, system_kind
from harness.check_cli import check_options
from harness.presets import PRESETS, preset_options
from harness.kafka_options import kafka_versions_option
from harness.matrix_journal import JOURNAL, Finished, Journal, mark_abandoned
from nemesis.targets import parse_targets
from results.index import write_static_index
from results.campaign import campaign_table
from results.matrix_report import MatrixRun, exit_code, summary_table, write_junit
from results.runs import read_run
from workloads.client_kinds import client_kind
from workloads.registry import workload_kind

T = TypeVar("T")
TXN_CHOICES = {"both": (False, True), "on": (True,), "off": (False,)}
QUORUMS = {"static": False, "dynamic": True}   # --quorums: how each run's cluster is formatted


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@dataclasses.dataclass(frozen=True)
class Cell:
    workload: str
    nemesis: str     # kinds joined by "+", or "none"
    txn: bool
    attempt: int
    kafka_version: str | None = None  # None: the cluster's (or the default)
    dynamic_quorum: bool | None = None  # None: as --dynamic-quorum says (static by default)
    client: str | None = None  # None: librdkafka, without the client axis
    db: str | None = None  # the system under test; None: the cluster's (kafka), without the system axis
    txn_version: int | None = None  # transaction.version finalized; None: the cluster's, without the axis
    seed: int | None = None  # the run's seed, with the seeds axis; None: --seed's (or random)


def matrix(workloads: list[str], nemeses: list[str], txn: str, test_count: int,
           kafka_versions: list[str | None] | None = None, quorums: list[bool | None] | None = None,
           clients: list[str | None] | None = None, dbs: list[str | None] | None = None, *,
           txn_versions: list[int] | None = None, seeds: list[int] | None = None) -> list[Cell]:
    """Every combination, in a stable order, one system (then Kafka version, then
    quorum) after the other (so a cluster serves all its runs). txn is an axis only
    of the workloads that have one (WorkloadKind.txn_axis) and of the systems that
    have transactions (the others get txn off); the others get one txn setting. A
    client runs only the workloads it has clients for (ClientKind.workloads).
    UnknownWorkload (a ValueError) names the known workloads. With seeds, each
    combination runs once per seed (attempt n has the n-th seed) instead of
    test_count times."""
    attempts = list(enumerate(seeds, 1)) if seeds else [(n, None) for n in range(1, test_count + 1)]
    cells = []
    for db, version, quorum, txn_version, client, workload, nemesis, (attempt, seed) in itertools.product(
            dbs or [None], kafka_versions or [None], quorums or [None], txn_versions or [None], clients or [None],
            workloads, nemeses, attempts):
        if client is not None and workload not in client_kind(client).workloads:
            continue
        for with_txn in workload_kind(workload).txn_settings(txn_choices(txn, db)):
            cells.append(Cell(workload, nemesis, with_txn, attempt, version, quorum, client, db, txn_version, seed))
    return cells


def parse_seeds(text: str) -> list[int]:
    """--seeds: "1-20", "3,7,11" or both ("1-5,9"); ValueError naming a bad part."""
    seeds = []
    for part in split_list(text):
        first, _, last = part.partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            raise ValueError(f"--seeds {text}: {part!r} is not a seed nor a range like 1-20") from None
        if high < low:
            raise ValueError(f"--seeds {text}: the range {part} runs backwards")
        seeds.extend(range(low, high + 1))
    return seeds


def txn_choices(txn: str, db: str | None) -> tuple[bool, ...]:
    """--txn's settings on one system: off only where it has no transactions."""
    features = system_kind(db or DEFAULT_SYSTEM).client_features
    if features is not None and "transactions" not in features:
        return (False,)
    return TXN_CHOICES[txn]


def options_for(base, cell: Cell):
    kinds = tuple(k for k in cell.nemesis.split("+") if k and k != "none")
    quorum = base.cluster.dynamic_quorum if cell.dynamic_quorum is None else cell.dynamic_quorum
    extra = {"db": cell.db} if cell.db else {}
    extra.update({name: value for name, value in (("txn_version", cell.txn_version), ("seed", cell.seed))
                  if value is not None})
    return base.replace(workload=cell.workload, nemesis=kinds, txn=cell.txn, **extra,
                        kafka_version=cell.kafka_version or base.cluster.kafka_version, dynamic_quorum=quorum,
                        client=cell.client or base.workload.settings.client)


def cell_label(cell: Cell) -> str:
    """The cell as the progress lines and errors name it."""
    axes = [f"db={cell.db}"] if cell.db else []
    axes += [f"kafka={cell.kafka_version}"] if cell.kafka_version else []
    axes += [f"quorum={quorum_label(cell)}"] if cell.dynamic_quorum is not None else []
    axes += [f"tv={cell.txn_version}"] if cell.txn_version is not None else []
    axes += [f"client={cell.client}"] if cell.client else []
    seed = [f"seed={cell.seed}"] if cell.seed is not None else []
    return " ".join(axes + [cell.workload, f"nemesis={cell.nemesis}", f"txn={'on' if cell.txn else 'off'}"] + seed)


def quorum_label(cell: Cell) -> str | None:
    """The quorum axis' value for the summary ("static"/"dynamic"), None without the axis."""
    return None if cell.dynamic_quorum is None else next(k for k, v in QUORUMS.items() if v == cell.dynamic_quorum)


def run_cell(base, cell: Cell, store: Path, forensics: bool = False):
    """Run one cell (then trace its lost writes, with forensics); a crash of the
    harness becomes an error row, not the end of the matrix."""
    from harness.runner import run_test  # loads confluent_kafka: only when needed

    try:
        options = options_for(base, cell)
        result = run_test(options)
        if forensics and result.valid is not None:
            trace_lost_writes(options, Path(result.run_dir))
    except KeyboardInterrupt:
        raise
    except Exception as e:
        traceback.print_exc()
        return matrix_run(cell, None, exit_codes.HARNESS_ERROR, f"{type(e).__name__}: {e}")
    return matrix_run(cell, read_run(Path(result.run_dir), store), result.exit_code, result.error)


def trace_lost_writes(options, run_dir: Path) -> None:
    """The run's lost writes traced in its cluster's logs (harness/forensics.py), said in one line."""
    from clusters.cluster import Cluster  # loads paramiko: only when needed
    from harness.forensics import write_forensics
    with Cluster.open(cluster_inventory(options.cluster), insecure_host_keys=options.cluster.insecure_host_keys) \
            as cluster:
        traces = write_forensics(cluster, run_dir)
    if traces:
        click.echo(f"  forensics: {len(traces)} lost writes traced in {run_dir / 'forensics.txt'}", err=True)


def matrix_run(cell: Cell, summary, code: int, error: str | None):
    """The summary row of one cell."""
    return MatrixRun(cell.workload, cell.nemesis, cell.txn, cell.attempt, summary, code, error,
                     cell.kafka_version, quorum_label(cell), cell.client, cell.db, cell.txn_version, cell.seed)


def db_targets(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None  # each fault's own, or the preset's
    try:
        return tuple(parse_targets(value))
    except ValueError as e:
        raise click.BadParameter(str(e), ctx, param) from None


@click.command(name="test-all")
@click.option("--workloads", default="queue,list-append", show_default=True, help="Comma-separated workloads.")
@click.option("--nemeses", default="none,partition,pause,kill", show_default=True,
              help="Comma-separated nemeses; combine kinds in one run with '+', e.g. partition+pause.")
@click.option("--txn", type=click.Choice(sorted(TXN_CHOICES)), default="both", show_default=True,
              help="Queue workload with transactions on, off, or both.")
@click.option("--test-count", type=click.IntRange(1), default=1, show_default=True, help="Runs per combination.")
@click.option("--nodes-file", type=click.Path(exists=True, dir_okay=False), help="Inventory of the cluster.")
@click.option("--local", type=click.IntRange(1, 9), help="Bring up a local cluster of N nodes for each run.")
@click.option("--bootstrap-servers", help="An existing Kafka without SSH (nemesis must be none).")
@click.option("--store", default="store", show_default=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--time-limit", type=float, default=30.0, show_default=True, help="Seconds of main phase per run.")
@click.option("--rate", type=float, default=100.0, show_default=True)
@click.option("--concurrency", type=click.IntRange(1), default=10, show_default=True)
@click.option("--nemesis-interval", type=float, default=10.0, show_default=True)
@click.option("--recovery-time", type=float, default=10.0, show_default=True)
@click.option("--final-time-limit", type=float, default=60.0, show_default=True)
@click.option("--hang-timeout", type=float, default=120.0, show_default=True,
              help="Seconds without a heartbeat after which a watchdog process takes the control process "
                   "for hung: dumps its stacks, kills it, heals the cluster (0: no watchdog).")
@click.option("--seed", type=int, help="Seed for every run (default: random per run).")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JUnit XML output (default STORE/junit.xml).")
@click.option("--leave-db-running", is_flag=True, help="Leave Kafka up after the last run.")
@click.option("--quorums", metavar="static,dynamic", default="",
              help="Comma-separated controller quorums each combination runs on: static (controller.quorum."
                   "voters) and/or dynamic (KIP-853, Kafka 3.9+, as --dynamic-quorum). More than one needs "
                   "--local. Default: static.")
@click.option("--clients", metavar="librdkafka,java,...", default="",
              help="Comma-separated Kafka clients each combination runs on (workloads/client_kinds.py; a client "
                   "runs only the workloads it has clients for). Default: librdkafka.")
@click.option("--resume", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="STORE",
              help="Go on with the matrix whose store this is (its matrix.json), after the control node died: "
                   "finished cells are kept, the cell under way is run again. Every other option comes from "
                   "the journal.")
@click.option("--dbs", metavar="kafka,tansu", default="",
              help="Comma-separated systems under test each combination runs on (docs/cluster.md); "
                   "more than one needs --local. Default: the cluster's (kafka).")
@click.option("--txn-versions", metavar="1,2", default="",
              help="Comma-separated transaction.version levels each combination runs on (finalized before the "
                   "run, as --txn-version; Kafka 4.x). Default: the cluster's.")
@click.option("--db-targets", default=None, metavar="one,majority,...", callback=db_targets,
              help="Which brokers each fault strikes, for every run (as `test --db-targets`): one, minority, "
                   "majority, all, controller, leader. Default: the fault's own, or the preset's.")
@click.option("--seeds", metavar="1-20", default="",
              help="A seeds axis: each combination runs once per seed (ranges and lists: 1-20, 3,7,11), "
                   "in place of --test-count; the anomaly counts are then summed per combination.")
@click.option("--forensics", is_flag=True,
              help="After each run with lost writes, read what the partition's log holds at each lost "
                   "write's offset (DumpLogSegments; Kafka only) into the run's forensics.txt. A --local "
                   "cluster stays up between runs for it.")
@preset_options
@check_options
@kafka_versions_option
def test_all(resume: Path | None, **options) -> None:
    """Run a matrix of tests and summarise them (table, JUnit XML, static index)."""
    journal = None
    if resume is not None:
        journal = resumed_journal(resume)
        # an option the journal lacks (an older logtrial wrote it) takes its default; a
        # preset's options were applied when it was started, and are recorded as such
        known = set(options) | {name for preset in PRESETS.values() for name in preset.options}
        options = {**options, **journal_options(journal, known), "store": resume}
    run_matrix(journal, **options)


def resumed_journal(store: Path) -> Journal:
    """The journal to go on from; bad input (exit 3) if there is none or options were
    given beside --resume (the matrix must be the one that was started)."""
    ctx = click.get_current_context()
    given = [f"--{name.replace('_', '-')}" for name in ctx.params if name != "resume"
             and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
    if given:
        click.echo(f"logtrial test-all: --resume takes every option from {store / JOURNAL}; "
                   f"drop {', '.join(given)}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    return bad_input_exits(lambda: Journal.load(store))


def journal_options(journal: Journal, known: set[str]) -> dict:
    """The options as click gave them: JSON made the tuples of repeated options lists.
    One this command does not have is bad input, named."""
    unknown = sorted(set(journal.options) - known)
    if unknown:
        click.echo(f"logtrial test-all: {journal.path}: options this logtrial does not have: "
                   f"{', '.join(unknown)}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in journal.options.items()}
    options["junit"] = Path(options["junit"]) if options.get("junit") else None
    return options


def run_matrix(journal: Journal | None, workloads: str, nemeses: str, txn: str, test_count: int, store: Path,
               junit: Path | None, kafka_versions: str | None, quorums: str, clients: str, dbs: str = "",
               txn_versions: str = "", seeds: str = "", forensics: bool = False, **settings) -> None:
    from harness.test_options import TestOptions  # loads confluent_kafka: only when needed

    leave_running = settings.get("leave_db_running", False)
    if forensics and settings.get("local"):
        settings = {**settings, "leave_db_running": True}  # the traces read the nodes after each run
    base = bad_input_exits(lambda: TestOptions.from_flat(store=str(store), **settings))
    versions = split_list(kafka_versions or "")
    quorum_names = split_list(quorums)
    known_only("--quorums", quorum_names, QUORUMS)
    systems = split_list(dbs)
    known_only("--dbs", systems, SYSTEMS)
    for axis, values in (("--kafka-versions", versions), ("--quorums", quorum_names), ("--dbs", systems)):
        if len(values) > 1 and not base.cluster.local:
            click.echo(f"logtrial test-all: {axis} {','.join(values)} needs --local N: one "
                       "cluster cannot run several at once", err=True)
            sys.exit(exit_codes.BAD_INPUT)
    client_names = split_list(clients)
    for name in client_names:
        bad_input_exits(lambda: client_kind(name))
    if seeds and settings.get("seed") is not None:
        click.echo("logtrial test-all: --seeds and --seed: give one", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    seed_list = bad_input_exits(lambda: parse_seeds(seeds))
    levels = bad_input_exits(lambda: [int(level) for level in split_list(txn_versions)])
    cells = bad_input_exits(lambda: matrix(split_list(workloads), split_list(nemeses) or ["none"], txn, test_count,
                                           versions, [QUORUMS[q] for q in quorum_names], client_names, systems,
                                           txn_versions=levels, seeds=seed_list))
    validate_all(base, cells)
    install_systems(systems)
    recorded = [journal_cell(cell) for cell in cells]
    if journal is None:
        journal = Journal.start(store, {"workloads": workloads, "nemeses": nemeses, "txn": txn,
                                        "test_count": test_count, "junit": junit, "kafka_versions": kafka_versions,
                                        "quorums": quorums, "clients": clients, "dbs": dbs,
                                        "txn_versions": txn_versions, "seeds": seeds, "forensics": forensics,
                                        **settings, "leave_db_running": leave_running}, recorded)
    elif journal.cells != recorded:
        click.echo(f"logtrial test-all: {journal.path}: its cells are not the matrix its options make "
                   "(written by another logtrial version?)", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    elif journal.running is not None:
        heal_left_faults(base)
        for run_dir in mark_abandoned(journal, store):
            click.echo(f"  {run_dir}: marked incomplete (the control node died during it)", err=True)
    runs = []
    try:
        for index, cell in enumerate(cells):
            runs.append(cell_row(base, cell, index, journal, store, forensics))
    except KeyboardInterrupt:
        click.echo("interrupted: summarising the runs so far", err=True)
        runs.append(interrupted_row(cells[len(runs)]))
    finally:
        if base.cluster.leave_db_running and not leave_running:
            take_down_local(base)
    click.echo(summary_table(runs))
    if seed_list:
        click.echo(campaign_table(runs, store))
    click.echo(f"junit: {write_junit(runs, junit or store / 'junit.xml')}")
    if store.is_dir():
        click.echo(f"index: {write_static_index(store)}")
    sys.exit(exit_code(runs))


def install_systems(systems: list[str]) -> None:
    """What the --dbs axis's systems need built, before the first cell: a matrix does
    not run its Kafka cells for an hour to find then that tansu cannot be built."""
    try:
        for name in systems:
            system_kind(name).ensure_installed(click.echo)
    except InstallError as e:
        click.echo(f"logtrial test-all: {e}", err=True)
        sys.exit(exit_codes.HARNESS_ERROR)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(exit_codes.INTERRUPTED)


def known_only(option: str, names: list[str], known) -> None:
    """Exit BAD_INPUT naming the names of an axis that are not among `known`."""
    unknown = [name for name in names if name not in known]
    if unknown:
        click.echo(f"logtrial test-all: {option} {','.join(names)}: unknown {', '.join(unknown)} "
                   f"(valid: {', '.join(known)})", err=True)
        sys.exit(exit_codes.BAD_INPUT)


def journal_cell(cell: Cell) -> dict:
    """The cell as matrix.json records it; the axes added later (system, transaction
    version, seed) only when given, so a matrix started by an older logtrial resumes."""
    recorded = dataclasses.asdict(cell)
    for later_axis in ("db", "txn_version", "seed"):
        if recorded[later_axis] is None:
            del recorded[later_axis]
    return recorded


def cell_row(base, cell: Cell, index: int, journal: Journal, store: Path, forensics: bool = False):
    """The cell's summary row: kept from the journal if it finished before, else run
    (the journal says it is under way, then what it gave)."""
    count = f"[{index + 1}/{len(journal.cells)}] {cell_label(cell)}"
    done = journal.finished.get(index)
    if done is not None:
        click.echo(f"{count}: kept from before ({done.run_dir or done.error})", err=True)
        return finished_row(cell, done, store)
    again = " (run again: it was under way when the matrix stopped)" if journal.running == index else ""
    click.echo(count + again, err=True)
    journal.begin(index)
    row = run_cell(base, cell, store, forensics)
    journal.finish(index, Finished(row.summary.rel if row.summary else None, row.exit_code, row.error))
    return row


def finished_row(cell: Cell, done: Finished, store: Path):
    """The summary row of a cell the journal says finished."""
    run_dir = store / done.run_dir if done.run_dir else None
    return matrix_run(cell, read_run(run_dir, store) if run_dir and run_dir.is_dir() else None,
                      done.exit_code, done.error)


def finished_rows(journal: Journal, store: Path) -> list:
    """The summary rows of every cell the journal says finished, in the matrix's order."""
    return [finished_row(Cell(**journal.cells[index]), done, store) for index, done in sorted(journal.finished.items())]


def heal_left_faults(base) -> None:
    """Before a resumed matrix runs again: the faults the killed run left on its
    cluster (the inventory's, or the local cluster if it is still there), healed as
    `cluster heal` heals (a control-link cut first: every SSH connection fails on it);
    a cluster that cannot be is a harness error (exit 4), said with what is left."""
    from clusters.db import DatabaseError  # loads confluent_kafka: only when needed
    from clusters.nodes.inventory import InventoryError
    from clusters.nodes.ssh import SSHError
    from nemesis.heal import ClusterNotHealed, heal_inventory
    spec = base.cluster
    inventory = cluster_inventory(spec)
    if inventory is None or not Path(inventory).exists():
        return
    try:
        for action in heal_inventory(inventory, insecure_host_keys=spec.insecure_host_keys):
            click.echo(f"  {action}", err=True)
    except (ClusterNotHealed, SSHError, DatabaseError, InventoryError) as e:
        click.echo(f"logtrial test-all: the cluster of the interrupted run ({inventory}) could not be "
                   f"healed: {e}", err=True)
        sys.exit(exit_codes.HARNESS_ERROR)


def cluster_inventory(spec) -> Path | str | None:
    """The inventory of the cluster the matrix runs on: --nodes-file's, or the local
    cluster's (which may not be up); None with --bootstrap-servers."""
    from clusters.nodes.local import LocalCluster
    from harness.run_cluster import LOCAL_CLUSTER
    return spec.nodes_file or (LocalCluster(LOCAL_CLUSTER).inventory_path if spec.local else None)


def take_down_local(base) -> None:
    """The local cluster --forensics kept up between runs, down at the matrix's end."""
    from clusters.nodes.local import LocalCluster
    from harness.run_cluster import LOCAL_CLUSTER
    if base.cluster.local and LocalCluster(LOCAL_CLUSTER).exists():
        LocalCluster(LOCAL_CLUSTER).down()


def validate_all(base, cells: list[Cell]) -> None:
    """Every cell's options are checked before the first run: bad input costs no cluster time."""
    for cell in cells:
        try:
            options_for(base, cell).validate()
        except ValueError as e:
            click.echo(f"logtrial test-all: {cell_label(cell)}: {e}", err=True)
            sys.exit(exit_codes.BAD_INPUT)


def bad_input_exits(build: Callable[[], T]) -> T:
    """build(), or exit BAD_INPUT naming what a ValueError says (CheckOptionError,
    UnknownWorkload), before any run."""
    try:
        return build()
    except ValueError as e:
        click.echo(f"logtrial test-all: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)


def interrupted_row(cell: Cell):
    return matrix_run(cell, None, exit_codes.INTERRUPTED, "interrupted")

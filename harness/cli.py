"""The `logtrial` command line.

Each subcommand lives in its own module under harness/commands/ and is imported
only when it is used, so `logtrial --help` stays fast and one broken area does
not take down the others.
"""
from __future__ import annotations

import importlib
import sys

import click

from common import exit_codes
from common.malloc_arenas import limit_malloc_arenas
# subcommand name -> "module:attribute" of its click command
COMMANDS: dict[str, str] = {
    "doctor": "harness.commands.doctor:doctor",
    "cluster": "harness.commands.cluster:cluster",
    "test": "harness.commands.test:test",
    "test-all": "harness.commands.test_all:test_all",
    "check": "harness.commands.check:check",
    "to-parquet": "harness.commands.to_parquet:to_parquet",
    "import-edn": "harness.commands.import_edn:import_edn",
    "report": "harness.commands.report:report",
    "index": "harness.commands.serve:index",
    "serve": "harness.commands.serve:serve",
    "probe": "harness.commands.probe:probe",
    "campaign": "harness.commands.campaign:campaign",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Like click's, except that a usage error exits BAD_INPUT: click's own
        code for it (2) means "unknown" to logtrial's callers."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as e:
            e.show()
            sys.exit(exit_codes.BAD_INPUT)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(exit_codes.INTERRUPTED)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=LazyGroup)
@click.version_option(package_name="logtrial")
def main() -> None:
    """logtrial: fault-injection tests for Kafka-compatible clusters."""
    limit_malloc_arenas()  # before any command starts its threads (common/malloc_arenas.py)


if __name__ == "__main__":
    main()

"""--kafka-version and --kafka-mode, the same on `logtrial test`, `cluster up` and
`test-all` (which takes a comma-separated list of versions)."""
from __future__ import annotations

import click

from clusters.kafka.versions import DEFAULT_VERSION, MODES

VERSION_HELP = (f"Apache Kafka version (default {DEFAULT_VERSION}): any release of "
                "org.apache.kafka:kafka_2.13 on Maven Central from 3.0.0 on, fetched on first use.")
MODE_HELP = ("Metadata mode: zk (ZooKeeper; 3.x only, and the only one before 3.3) or kraft "
             "(3.3 on; 4.x only). Default: kraft where Kafka supports it, else zk.")


QUORUM_HELP = ("Format a dynamic KRaft controller quorum (KIP-853, Kafka 3.9+: --initial-controllers, "
               "controller.quorum.bootstrap.servers), whose voters the membership nemesis can "
               "remove and add. Default: a static quorum (controller.quorum.voters).")


def kafka_release_options(f):
    f = click.option("--dynamic-quorum", is_flag=True, help=QUORUM_HELP)(f)
    f = click.option("--kafka-mode", type=click.Choice(MODES), help=MODE_HELP)(f)
    return click.option("--kafka-version", metavar="VERSION", help=VERSION_HELP)(f)


def kafka_versions_option(f):
    """test-all's version axis, with one mode for every version."""
    f = click.option("--kafka-mode", type=click.Choice(MODES), help=MODE_HELP)(f)
    return click.option("--kafka-versions", metavar="V1,V2,...",
                        help="Comma-separated Kafka versions: every combination runs on each. "
                             "More than one needs --local (each version gets its own cluster). "
                             + VERSION_HELP.split(": ", 1)[1])(f)

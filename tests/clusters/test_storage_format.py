"""Formatting storage must work whatever the cluster id looks like."""
from __future__ import annotations

import itertools
import shlex
import subprocess

from clusters.kafka.config import kafka_cache_dir
from clusters.kafka.paths import cluster_id
from clusters.kafka.storage import format_storage_args


def _name_whose_id_starts_with_dash() -> str:
    return next(f"c{i}" for i in itertools.count() if cluster_id(f"c{i}").startswith("-"))


def test_an_id_beginning_with_a_dash_formats(tmp_path):
    name = _name_whose_id_starts_with_dash()
    config = tmp_path / "server.properties"
    config.write_text("process.roles=broker,controller\nnode.id=1\n"
                      "controller.quorum.voters=1@127.0.0.1:19093\n"
                      "listeners=PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093\n"
                      "controller.listener.names=CONTROLLER\n"
                      f"log.dirs={tmp_path / 'data'}\n")
    command = (f"java -Xmx128m -XX:TieredStopAtLevel=1 -cp {shlex.quote(str(kafka_cache_dir() / 'libs'))}/'*' "
               + format_storage_args(name, str(config)))
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    meta = (tmp_path / "data" / "meta.properties").read_text()
    assert f"cluster.id={cluster_id(name)}" in meta

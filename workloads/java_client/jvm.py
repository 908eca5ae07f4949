"""One JVM running the Java client's server (build.py): a child process of the
bridge (workloads/bridge/process.py), whose ready line says the kafka-clients
version it runs. The command line is all that is Java's here."""
from __future__ import annotations

from workloads.bridge.process import BridgeGone, BridgeProcess

JVM_OPTIONS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
JvmGone = BridgeGone  # the name callers know it by


class Jvm(BridgeProcess):
    def __init__(self, classpath: str, main_class: str, name: str = "java-client"):
        super().__init__(["java", *JVM_OPTIONS, "-cp", classpath, main_class], name)
        self.client_version: str = self.ready

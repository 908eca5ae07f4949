"""Apache Kafka as a system under test: its releases, jars, settings, storage and
broker processes, its admin tools and log dumps, and the ZooKeeper ensemble 3.x needs."""

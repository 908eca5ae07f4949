# The two commands the README opens with: `make demo` and `make test`.
# Each first installs what it runs that is missing (tansu's long build aside: `make
# test` builds it beside its tests), and is quick the second time.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install base system kafka tansu venv archives broker-archive spark-archive java-client clients demo test test-deep bench clean

# everything, tansu too
install: base spark-archive clients tansu

# what every run on Kafka needs
base: system kafka venv broker-archive

system:
	@bash scripts/install-system.sh

kafka:
	@bash scripts/install-kafka.sh

# tansu, the second system under test: built once by cargo (the longest build here:
# docs/benchmarks.md), then the cached binary is reused (clusters/tansu/install.py).
# No other target needs it: `--db tansu` builds it on first use, `make test` in the
# background
tansu:
	@bash scripts/install-tansu.sh

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@bash scripts/install-venv.sh $(PYTHON) $(VENV)
	@touch $@

# class-data-sharing archives of the broker and the Spark driver: built once,
# then every JVM starts on less CPU (common/jvm_archive.py)
archives: broker-archive spark-archive

broker-archive: kafka venv
	@$(BIN)/python -m clusters.kafka.archive

spark-archive: venv
	@$(BIN)/python -m checkers.spark_archive_build

# the Java client's server (--client java), compiled against the default Kafka's
# kafka-clients jar into the jar cache; other versions compile on first use
java-client: kafka venv
	@$(BIN)/python -m workloads.java_client.build

# the other clients under test, pinned, each into its own corner of the cache once:
# the Go clients' program, franz-go and Sarama (go build against its go.sum), and
# kafka-python (pip --target);
# aiokafka with its own dependencies (pip --target, apart from kafka-python's);
# kafkajs's Node program's modules (npm ci against its package-lock.json);
# a second call finds them and returns at once
clients: java-client
	@$(BIN)/python -m workloads.go_clients.build
	@$(BIN)/python -m workloads.kafka_python.install
	@$(BIN)/python -m workloads.aiokafka_client.install
	@$(BIN)/python -m workloads.kafkajs_client.install

# the demo runs Kafka and checks in-process: no tansu, Spark or Java client
demo: base
	@bash scripts/demo.sh

# pytest-xdist workers: see tests/conftest.py for how tests are shared out. Each
# worker that runs checker tests starts its own Spark JVM. Three on two cores: the
# cluster tests wait on brokers and SSH, and with two workers the cores were 80 %
# busy (490 s), with three 97 % (396 s, same session)
# tansu is not a prerequisite: its build would hold up the first test for many
# minutes. The session starts it in the background at collection, under nice, so it
# uses what the tests leave of the cores, and runs the tests that need it last, in
# one group; they wait for it if it is not done (tests/conftest.py,
# tests/fixtures/builds.py)
# --no-loadscope-reorder: xdist would otherwise hand out the groups by their number of
# tests, which put the tansu group on a worker at the start, to wait there for its build
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder
test: base spark-archive clients
	@$(BIN)/python -m pytest $(XDIST) --durations=30 $(PYTEST_ARGS)

# the nightly depth: every property test four times its nominal examples (make test
# runs a third of them: tests/fixtures/depth.py) and every published case on Spark too
test-deep: base spark-archive clients
	@LOGTRIAL_HYPOTHESIS_PROFILE=nightly LOGTRIAL_SPARK_ALL=1 \
		$(BIN)/python -m pytest $(XDIST) --durations=30 $(PYTEST_ARGS)

bench: base spark-archive java-client
	@$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) store .pytest_cache

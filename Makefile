# The two commands the README opens with: `make demo` and `make test`.
# Both install whatever is missing first, and are quick the second time.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install system kafka tansu venv archives java-client demo test bench clean

install: system kafka tansu venv archives java-client

system:
	@bash scripts/install-system.sh

kafka:
	@bash scripts/install-kafka.sh

# tansu, the second system under test: built once by cargo (about 20 min on 2 cores),
# then the cached binary is reused (clusters/tansu_install.py)
tansu:
	@bash scripts/install-tansu.sh

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@bash scripts/install-venv.sh $(PYTHON) $(VENV)
	@touch $@

# class-data-sharing archives of the broker and the Spark driver: built once,
# then every JVM starts on less CPU (clusters/jvm_archive.py)
archives: kafka venv
	@$(BIN)/python -m clusters.kafka_archive
	@$(BIN)/python -m checkers.spark_archive_build

# the Java client's server (--client java), compiled against the default Kafka's
# kafka-clients jar into the jar cache; other versions compile on first use
java-client: kafka venv
	@$(BIN)/python -m workloads.java_client.build

demo: install
	@bash scripts/demo.sh

# pytest-xdist workers: see tests/conftest.py for how tests are shared out. Each
# worker that runs checker tests starts its own Spark JVM. Three on two cores: the
# cluster tests wait on brokers and SSH, and with two workers the cores were 80 %
# busy (490 s), with three 97 % (396 s, same session)
TEST_WORKERS ?= 3
test: install
	@$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=30 $(PYTEST_ARGS)

bench: install
	@$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) store .pytest_cache

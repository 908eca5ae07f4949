# The two commands the README opens with: `make demo` and `make test`.
# Both install whatever is missing first, and are quick the second time.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install system kafka venv archives demo test bench clean

install: system kafka venv archives

system:
	@bash scripts/install-system.sh

kafka:
	@bash scripts/install-kafka.sh

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install -q --upgrade pip
	@$(BIN)/pip install -q -e '.[test]'
	@touch $@

# class-data-sharing archives of the broker and the Spark driver: built once,
# then every JVM starts on less CPU (clusters/jvm_archive.py)
archives: kafka venv
	@$(BIN)/python -m clusters.kafka_archive
	@$(BIN)/python -m checkers.spark_archive

demo: install
	@bash scripts/demo.sh

# pytest-xdist workers: see tests/conftest.py for how tests are shared out. Each
# worker that runs checker tests starts its own Spark JVM: on two cores, two workers
TEST_WORKERS ?= 2
test: install
	@$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=30 $(PYTEST_ARGS)

bench: install
	@$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) store .pytest_cache

#!/usr/bin/env bash
# Creates the virtualenv and installs logtrial into it, editable, with its test extras.
#   scripts/install-venv.sh PYTHON VENV
# With uv (fetched once into the cache) the install takes about 15 s instead of pip's 32:
# uv links packages from its cache instead of unpacking them again. PySpark is published
# as a source archive only; uv would build it on every install, so its wheel is built
# once into the cache's wheel folder and found there. Without network access to fetch
# uv, pip does the install as before.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:-python3}"
venv="${2:-.venv}"
# the cache Kafka and its archive live in (LOGTRIAL_CACHE, else ~/.cache/logtrial)
cache=$("$python" -c 'from clusters.kafka.versions import cache_root; print(cache_root())')
tools="$cache/tools/uv"
wheels="$cache/wheels"

test -x "$venv/bin/python" || "$python" -m venv "$venv"
if test -x "$tools/bin/uv" || "$venv/bin/pip" install -q --target "$tools" 'uv>=0.5,<1' 2>/dev/null; then
  mkdir -p "$wheels"
  # compiled: PYTHONDONTWRITEBYTECODE would otherwise leave every process to compile
  # PySpark and pandas again on import
  "$tools/bin/uv" pip install -q --compile-bytecode --python "$venv/bin/python" \
    --find-links "$wheels" -e '.[test]'
  version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("pyspark"))')
  # best effort: without it the next install builds PySpark again, nothing worse
  ls "$wheels"/pyspark-"$version"-*.whl >/dev/null 2>&1 \
    || "$venv/bin/pip" wheel -q --no-deps -w "$wheels" "pyspark==$version" \
    || echo "could not keep a PySpark wheel in $wheels" >&2
else
  echo "uv not available: installing with pip" >&2
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -e '.[test]'
fi

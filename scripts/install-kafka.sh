#!/usr/bin/env bash
# Assembles Kafka's jars from Maven Central into a cache outside the repo.
# Idempotent: a complete cache (marked by .complete) is left alone.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pom="$here/clusters/kafka/pom.xml"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
cache="${LOGTRIAL_CACHE:-$HOME/.cache/logtrial}/kafka-$version"
if [ -f "$cache/.complete" ]; then
  echo "kafka $version: cached in $cache"
  exit 0
fi
mkdir -p "$cache/libs"
echo "kafka $version: assembling from Maven Central into $cache"
mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$cache/libs" -DincludeScope=runtime
echo "$version" > "$cache/.complete"
echo "kafka $version: ready"

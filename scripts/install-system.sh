#!/usr/bin/env bash
# Installs the Debian packages logtrial needs, only those that are missing.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "logtrial needs root: it creates network namespaces, runs sshd and edits iptables." >&2
  exit 1
fi
# command -> package that provides it
declare -A need=(
  [sshd]=openssh-server
  [iptables]=iptables
  [ip]=iproute2
  [ps]=procps
  [faketime]=faketime
  [java]=openjdk-17-jre-headless
  [javac]=openjdk-17-jdk-headless   # compiles the Java client's server (workloads/java_client)
  [mvn]=maven
  [chromium]=chromium
  [chromedriver]=chromium-driver
  [fusermount3]=fuse3              # the power fault's layer (clusters/nodes/powerfs.py)
  [node]=nodejs                    # runs the kafkajs client's program (workloads/kafkajs_client)
  [npm]=npm                        # installs its modules from its package-lock.json
)
missing=()
for cmd in "${!need[@]}"; do
  PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
# tansu's storage node runs Debian's PostgreSQL 15 binaries (clusters/tansu/postgres.py);
# tansu itself is built by cargo (scripts/install-tansu.sh), which comes from rustup or Debian
ls /usr/lib/postgresql/15/bin/postgres >/dev/null 2>&1 || missing+=(postgresql-15)
PATH="$PATH:$HOME/.cargo/bin" command -v cargo >/dev/null 2>&1 || missing+=(cargo)
# libfaketime's preload library is what the clock nemesis uses
ls /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 >/dev/null 2>&1 || missing+=(libfaketime)
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi
echo "system packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Build the Iceberg Java writers of `python -m studies.real_clients --real-client iceberg-java` with Maven and
# print the directory that holds iceberg-writers.jar and lib/ (run as java -cp "DIR/iceberg-writers.jar:DIR/lib/*").
#
#   DIR=$(scripts/build-iceberg-writers.sh)
#
# The build is cached, like scripts/install-helm.sh caches helm, under
#   ${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}/iceberg-writers-<hash>/
# where <hash> is that of the pom and the sources: a change to either builds anew. A cold build (empty ~/.m2)
# downloads about 45 MB from Maven Central; Java 17 and Maven 3.8 or newer (apt-get install maven openjdk-17-jdk).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/studies/real_clients/java"
tools_dir=${SWEEPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commit-sweeps/tools}
hash=$(cd "$src" && find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
dir="$tools_dir/iceberg-writers-$hash"

if [ -f "$dir/iceberg-writers.jar" ] && [ -d "$dir/lib" ]; then
    echo "build-iceberg-writers: reusing $dir" >&2
    echo "$dir"
    exit 0
fi
for tool in mvn java; do
    command -v "$tool" >/dev/null 2>&1 || { echo "build-iceberg-writers: '$tool' is not on PATH; install Java 17 and Maven (apt-get install openjdk-17-jdk maven)" >&2; exit 1; }
done
echo "build-iceberg-writers: building with Maven into $dir (a minute or less the first time)" >&2
mkdir -p "$tools_dir"
work=$(mktemp -d "$tools_dir/.iceberg-writers-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Built in a copy, so that the source tree gets no target/ and two builds at once do not share one.
cp -r "$src/pom.xml" "$src/src" "$work/"
mvn -B -q -f "$work/pom.xml" package -DskipTests >&2
mkdir -p "$work/out"
mv "$work/target/iceberg-writers.jar" "$work/target/lib" "$work/out/"
# Another build of the same sources may have finished first: keep the one there.
mv -T "$work/out" "$dir" 2>/dev/null || [ -f "$dir/iceberg-writers.jar" ]
echo "$dir"

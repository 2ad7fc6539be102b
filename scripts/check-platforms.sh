#!/usr/bin/env bash
# Resolves the starter's dependency tree as Maven does on linux-aarch64 and macOS (arm and Intel), where
# JCuda publishes no natives, and builds and tests gpumem-core there: no jcuda-natives may be asked for, and
# the core must build and pass on the host backend (all but the model checker's tests, whose interleavings are
# the same on every platform and which .ci/run's suites run). Maven reads the platform from its own JVM's os.name
# and os.arch, so they are set in MAVEN_OPTS (through an argument file, for the space in "Mac OS X").
set -euo pipefail
cd "$(dirname "$0")/.."
args=$(mktemp)
trap 'rm -f "$args"' EXIT
for platform in "Linux/aarch64" "Mac OS X/aarch64" "Mac OS X/x86_64"; do
  printf -- '-Dos.name="%s"\n-Dos.arch=%s\n' "${platform%/*}" "${platform#*/}" > "$args"
  echo "== as on ${platform%/*} ${platform#*/}"
  tree=$(MAVEN_OPTS="@$args" mvn -B -ntp -q -pl gpumem-spring-boot-starter -am dependency:tree -DoutputFile=/dev/stdout)
  if grep -q "jcuda-natives" <<<"$tree"; then
    grep "jcuda" <<<"$tree"
    echo "jcuda-natives is resolved on ${platform}, where JCuda publishes none" >&2
    exit 1
  fi
  grep -q "org.jcuda:jcuda:jar" <<<"$tree" || { echo "the starter lost JCuda on ${platform}" >&2; exit 1; }
  MAVEN_OPTS="@$args" mvn -B -ntp -q -pl gpumem-core verify -Dmaven.javadoc.skip=true -Dmaven.test.redirectTestOutputToFile=true \
    -DexcludedGroups=model-checker
  echo "starter resolved without natives; gpumem-core built and tested"
done

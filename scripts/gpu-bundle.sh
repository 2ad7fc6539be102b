#!/usr/bin/env bash
# Builds the GPU bundle into target/gpu-bundle/: gpu-verify.sh and gpumem-gpu.tar.xz, which holds a Java
# runtime made with jlink, the sample service, the real-driver tests, the GPU benchmarks and the JUnit
# console launcher. Take the folder to a GPU machine (nothing else is needed there) and run
# target/gpu-bundle/gpu-verify.sh --out DIR; docs/gpu-verification.md says more.
#
# Usage: scripts/gpu-bundle.sh [--no-build]
#   --no-build   pack what the Maven build already staged in gpumem-gpu-verification/target/stage
#                (the build's own test does this) instead of building it first
set -euo pipefail
cd "$(dirname "$0")/.."

limit_mib=60
stage=gpumem-gpu-verification/target/stage
bundle=target/gpu-bundle
# What the sample (Spring Boot, Tomcat, Jackson), JUnit, JMH and JCuda need of the JDK, as jdeps lists it
# (java.desktop for java.beans, which Spring uses; the AWT libraries it brings are left out), and
# jdk.zipfs for JUnit's scan of the test jars.
modules=java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.prefs,java.scripting,java.security.jgss,java.sql,java.xml,jdk.jfr,jdk.management,jdk.unsupported,jdk.zipfs
awt='**/libawt*.so,**/libsplashscreen.so,**/libjsound.so,**/libmlib_image.so,**/libjavajpeg.so,**/liblcms.so,**/libfontmanager.so,**/libjawt.so'

if [ "${1:-}" != "--no-build" ]; then
  mvn -B -ntp -q -DskipTests package -pl gpumem-gpu-verification -am
fi
if [ ! -d "$stage/lib" ]; then
  echo "gpu-bundle: $stage is missing; run without --no-build, or build first (mvn -DskipTests package)" >&2
  exit 1
fi

java_home=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
jlink=$java_home/bin/jlink
if [ ! -x "$jlink" ]; then
  echo "gpu-bundle: no jlink in $java_home: set JAVA_HOME to a JDK (17 or newer, with its jmods)" >&2
  exit 1
fi
for tool in tar xz; do
  command -v "$tool" >/dev/null || { echo "gpu-bundle: $tool is needed to pack the bundle" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
payload=$work/gpumem-gpu
mkdir -p "$payload"
cp -r "$stage"/app "$stage"/natives "$stage"/lib "$stage"/tools "$payload"/
cp gpumem-gpu-verification/target/gpumem-gpu-verification-*.jar "$payload"/tools/

"$jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=0 \
  --exclude-files="$awt" --output "$payload"/runtime
if command -v strip >/dev/null; then
  strip --strip-unneeded "$payload"/runtime/lib/server/libjvm.so
fi
"$payload"/runtime/bin/java -version 2>&1 | head -n 1 > "$payload"/runtime/JAVA_VERSION

rm -rf "$bundle"
mkdir -p "$bundle"
tar -C "$work" -cf - gpumem-gpu | xz -6 -T0 > "$bundle"/gpumem-gpu.tar.xz
cp scripts/gpu-verify.sh "$bundle"/
chmod +x "$bundle"/gpu-verify.sh

bytes=$(du -sb "$bundle" | cut -f1)
mib=$(( (bytes + 1048575) / 1048576 ))
unpacked_mib=$(( $(du -sb "$payload" | cut -f1) / 1048576 ))
echo "gpu-bundle: $bundle is $mib MiB ($unpacked_mib MiB unpacked), runtime $(cat "$payload"/runtime/JAVA_VERSION)"
if [ "$bytes" -gt $(( limit_mib * 1048576 )) ]; then
  echo "gpu-bundle: the bundle is $mib MiB, over the limit of $limit_mib MiB" >&2
  exit 1
fi

#!/usr/bin/env bash
# Rewrites the table of gpumem.* properties in docs/configuration.md from the configuration metadata that the
# build generates for the starter; ConfigurationReferenceTest fails until it is run after a property changes.
# Arguments go to mvn (e.g. -o to build offline).
set -euo pipefail
cd "$(dirname "$0")/.."
module=gpumem-spring-boot-autoconfigure
mvn -B -ntp -q "$@" -pl "$module" -am test-compile dependency:build-classpath \
	-Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
java -cp "$module/target/test-classes:$module/target/classes:$(cat "$module/target/test-classpath.txt")" \
	io.gpumem.autoconfigure.ConfigurationReference

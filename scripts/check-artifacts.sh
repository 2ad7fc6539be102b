#!/usr/bin/env bash
# What a user's build gets from gpumem's published jars, checked on the jars `mvn verify` just built:
# each has its Automatic-Module-Name, core and autoconfigure come with sources and javadoc jars, and the
# BOM lists exactly the published modules at the parent's version. The sample's executable jar enables
# native access, so that java -jar on Java 24+ starts it without JCuda's restricted-method warnings.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
	echo "check-artifacts: $*" >&2
	exit 1
}

version=$(sed -n '/<artifactId>gpumem-parent<\/artifactId>/,/<\/version>/s/.*<version>\(.*\)<\/version>.*/\1/p' pom.xml | head -1)
[[ -n "$version" ]] || fail "no version in pom.xml"

check_jar() {
	local module=$1 name=$2 jar="$1/target/$1-$version.jar"
	[[ -f "$jar" ]] || fail "$jar is missing: run mvn verify first"
	unzip -p "$jar" META-INF/MANIFEST.MF | tr -d '\r' | grep -x "Automatic-Module-Name: $name" > /dev/null \
		|| fail "$jar has no Automatic-Module-Name: $name"
}

check_attached() {
	local module=$1 sources="$1/target/$1-$version-sources.jar" javadoc="$1/target/$1-$version-javadoc.jar"
	[[ -f "$sources" ]] && unzip -l "$sources" | grep '\.java$' > /dev/null || fail "$sources is missing or holds no sources"
	[[ -f "$javadoc" ]] && unzip -l "$javadoc" | grep ' index\.html$' > /dev/null || fail "$javadoc is missing or holds no javadoc"
}

check_jar gpumem-core io.gpumem.core
check_jar gpumem-spring-boot-autoconfigure io.gpumem.autoconfigure
check_jar gpumem-spring-boot-starter io.gpumem.starter
check_attached gpumem-core
check_attached gpumem-spring-boot-autoconfigure

sample="sample-app/target/sample-app-$version.jar"
[[ -f "$sample" ]] || fail "$sample is missing: run mvn verify first"
unzip -p "$sample" META-INF/MANIFEST.MF | tr -d '\r' | grep -x "Enable-Native-Access: ALL-UNNAMED" > /dev/null \
	|| fail "$sample has no Enable-Native-Access: ALL-UNNAMED"

bom_version=$(sed -n '/<artifactId>gpumem-bom<\/artifactId>/,/<\/version>/s/.*<version>\(.*\)<\/version>.*/\1/p' gpumem-bom/pom.xml | head -1)
[[ "$bom_version" == "$version" ]] || fail "gpumem-bom is at $bom_version, the parent at $version"

published=$(for module in $(sed -n 's/.*<module>\(.*\)<\/module>.*/\1/p' pom.xml); do
	[[ "$module" == gpumem-bom ]] && continue
	grep -q '<maven.deploy.skip>true</maven.deploy.skip>' "$module/pom.xml" || echo "$module"
done | sort)
listed=$(sed -n '/<dependencyManagement>/,/<\/dependencyManagement>/s/.*<artifactId>\(.*\)<\/artifactId>.*/\1/p' gpumem-bom/pom.xml | sort)
[[ "$published" == "$listed" ]] || fail "gpumem-bom lists [$(echo $listed)] but the published modules are [$(echo $published)]"

echo "check-artifacts: module names, sources and javadoc jars, the BOM ($version) and the sample's manifest are right"

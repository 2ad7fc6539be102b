#!/usr/bin/env bash
# Makes sure COMMAND is on PATH: installs Debian's PACKAGE when it is missing and apt-get can (as root);
# elsewhere says what to install and fails. Usage: scripts/require-command.sh COMMAND PACKAGE
set -euo pipefail
command=$1
package=$2
if command -v "$command" > /dev/null; then
  exit 0
fi
if command -v apt-get > /dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -q "$package" > /dev/null 2>&1 || { apt-get update -q > /dev/null && apt-get install -y -q "$package" > /dev/null; }
else
  echo "$command is not on PATH: install it (Debian: apt-get install $package)" >&2
  exit 1
fi

#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages megatune needs to build, when missing; with
# --bundle, also those the single-GPU bundle needs (make gpu-bundle: the static
# archives of libpfm and gfortran, dpkg-dev to unpack cJSON's source, xz); with
# --test, those and the test suite's (Chromium with a font for the HTML
# report's browser test, python3 for the tracer test's format check, xmllint for the JUnit
# schema check, man-db and groff-base for the man pages of make install; dpkg-dev, already
# the bundle's, gives make deb its dpkg-shlibdeps).  Quick when everything is present: it
# checks with dpkg first and only then runs apt-get update and apt-get install.
set -eu

PKGS="build-essential libcjson-dev libyajl-dev libyaml-dev zlib1g-dev libcmocka-dev libopenblas-dev libopenmpi-dev openmpi-bin libpapi-dev libsqlite3-dev"
BUNDLE_PKGS="libpfm4-dev gfortran dpkg-dev xz-utils"
if [ "${1:-}" = "--bundle" ]; then
	PKGS="$PKGS $BUNDLE_PKGS"
fi
if [ "${1:-}" = "--test" ]; then
	PKGS="$PKGS $BUNDLE_PKGS chromium fonts-dejavu-core python3 python3-numpy python3-packaging python3-omegaconf python3-yaml libxml2-utils man-db groff-base"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-deps: need root (or sudo) to install:$missing" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2086
$SUDO apt-get install -y --no-install-recommends $missing

#!/bin/sh
# SPDX-License-Identifier: MIT
# Build libcjson.a for the single-GPU bundle (make gpu-bundle): Debian's libcjson-dev ships
# only the shared library, so this fetches Debian's own source of cJSON (the version of the
# installed libcjson-dev, with Debian's patches applied; the newest in the archive when that
# version is gone) through a private apt configuration and compiles cJSON.c.  Needs network
# access to Debian's archive once; the archive is kept in OUTDIR and reused.
# Usage: scripts/static-cjson.sh OUTDIR      (writes OUTDIR/libcjson.a)
set -eu
OUT=${1:?usage: static-cjson.sh OUTDIR}
CC=${CC:-cc}
[ -f "$OUT/libcjson.a" ] && exit 0
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
A=$OUT/apt
rm -rf "$A" "$OUT/src"
mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$OUT/src"
# the machine's sources, as deb-src (deb822 .sources files and one-line lists)
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && sed -e 's/^Types: deb$/Types: deb-src/' "$f" >"$A/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >>"$A/src.list"
done
set -- -oDir::Etc::SourceList="$A/src.list" -oDir::Etc::SourceParts="$A" \
	-oDir::State::Lists="$A/lists" -oDir::Cache="$A/cache" -oDebug::NoLocking=1
touch "$A/src.list"
if ! apt-get "$@" update >"$A/update.log" 2>&1; then
	echo "static-cjson: apt-get update (deb-src) failed; see $A/update.log" >&2
	exit 1
fi
ver=$(dpkg-query -W -f='${Version}' libcjson-dev 2>/dev/null || true)
cd "$OUT/src"
if ! { [ -n "$ver" ] && apt-get "$@" source "cjson=$ver" >"$A/source.log" 2>&1; }; then
	apt-get "$@" source cjson >"$A/source.log" 2>&1 || {
		echo "static-cjson: apt-get source cjson failed; see $A/source.log" >&2
		exit 1
	}
fi
src=$(ls -d "$OUT"/src/cjson-*/ 2>/dev/null | head -1)
[ -n "$src" ] && [ -f "$src/cJSON.c" ] || { echo "static-cjson: no cJSON.c in $OUT/src" >&2; exit 1; }
$CC -std=c99 -O2 -fPIC -c "$src/cJSON.c" -o "$OUT/cJSON.o"
ar rcs "$OUT/libcjson.a.tmp" "$OUT/cJSON.o"
mv "$OUT/libcjson.a.tmp" "$OUT/libcjson.a"
echo "static-cjson: $OUT/libcjson.a from $(basename "$src") (Debian source)"

#!/bin/sh
# SPDX-License-Identifier: MIT
# Pack the tree `make install DESTDIR=DIR/debian/megatune PREFIX=/usr` wrote (make
# deb, scripts/install.mk) as OUTDIR/megatune_<version>_<arch>.deb:
#   - Version: MEGATUNE_VERSION of lib/version.h; Architecture: dpkg --print-architecture;
#   - man pages gzipped (-9n), ELF files stripped of their symbols ($STRIP, default strip);
#   - Depends: the packages of the shared libraries the ELF files ask for (their NEEDED
#     entries): dpkg-shlibdeps ($DPKG_SHLIBDEPS) with its version bounds; without it (or
#     when it fails), each library's file as the loader finds it (ldd) looked up with
#     dpkg -S, without versions; a library no package owns is named on stderr and left out;
#   - DEBIAN/md5sums; dpkg-deb --build --root-owner-group.
# Usage: scripts/deb.sh DIR OUTDIR
set -eu
DIR=$(cd "${1:?usage: deb.sh DIR OUTDIR}" && pwd)
OUT=${2:?usage: deb.sh DIR OUTDIR}
ROOT=$DIR/debian/megatune
SRC=$(cd "$(dirname "$0")/.." && pwd)
MAINTAINER=${DEB_MAINTAINER:-megatune maintainers <maintainers@users.noreply.a-seed-784923cb.example>}
[ -x "$ROOT/usr/bin/megatune" ] || { echo "deb.sh: no $ROOT/usr/bin/megatune (make deb installs it)" >&2; exit 2; }
command -v dpkg-deb >/dev/null 2>&1 || { echo "deb.sh: dpkg-deb is missing (package dpkg)" >&2; exit 2; }

version=$(sed -n 's/^#define MEGATUNE_VERSION "\(.*\)"$/\1/p' "$SRC/lib/version.h")
[ -n "$version" ] || { echo "deb.sh: no MEGATUNE_VERSION in lib/version.h" >&2; exit 2; }
arch=$(dpkg --print-architecture)

# the ELF files: the programs and the libraries (not the probe-<name> links)
elves=$(find "$ROOT" -type f \( -path '*/bin/*' -o -name '*.so' \) | sort)
find "$ROOT/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9nf {} +
strip=${STRIP:-strip}
if command -v "$strip" >/dev/null 2>&1; then
	for f in $elves; do "$strip" --strip-unneeded --remove-section=.comment "$f"; done
fi

# Depends without dpkg-shlibdeps: the package of each NEEDED library's file, as the
# loader finds it (ldd: "soname => /path (addr)", or "/path (addr)" for the loader itself)
depends_by_dpkg() {
	: >"$DIR/pkgs"
	for f in $elves; do
		map=$(ldd "$f" 2>/dev/null) || { echo "deb.sh: ldd $f failed" >&2; return 1; }
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			path=$(printf '%s\n' "$map" | sed -n -e "s|^[[:space:]]*$lib => \\(/[^ ]*\\) .*|\\1|p" \
				-e "s|^[[:space:]]*\\(/[^ ]*/$lib\\) .*|\\1|p" | head -1)
			[ -n "$path" ] || { echo "deb.sh: $f needs $lib, which the loader does not find" >&2; return 1; }
			pkg=""
			# as ldd names it, the file it links to, and the other side of a merged /usr
			for p in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr$path"; do
				pkg=$(dpkg -S "$p" 2>/dev/null | sed -n '1s/^\([^:,]*\).*: .*/\1/p') || pkg=""
				[ -n "$pkg" ] && break
			done
			if [ -n "$pkg" ]; then
				echo "$pkg" >>"$DIR/pkgs"
			else
				echo "deb.sh: no package owns $path ($lib, needed by $f): left out of Depends" >&2
			fi
		done
	done
	sort -u "$DIR/pkgs" | paste -sd, - | sed 's/,/, /g'
}

depends=""
if command -v "${DPKG_SHLIBDEPS:-dpkg-shlibdeps}" >/dev/null 2>&1; then
	# dpkg-shlibdeps reads debian/control of the folder it runs in
	printf 'Source: megatune\n\nPackage: megatune\nArchitecture: any\n' >"$DIR/debian/control"
	rel=$(for f in $elves; do printf ' %s' "${f#"$DIR"/}"; done)
	# shellcheck disable=SC2086
	if line=$(cd "$DIR" && "${DPKG_SHLIBDEPS:-dpkg-shlibdeps}" -O $rel 2>"$DIR/shlibdeps.err"); then
		depends=$(printf '%s\n' "$line" | sed -n 's/^shlibs:Depends=//p')
		echo "deb.sh: Depends from dpkg-shlibdeps"
	else
		echo "deb.sh: dpkg-shlibdeps failed ($(head -1 "$DIR/shlibdeps.err")): from ldd and dpkg -S" >&2
	fi
	rm -f "$DIR/debian/control"
else
	echo "deb.sh: no ${DPKG_SHLIBDEPS:-dpkg-shlibdeps} (package dpkg-dev): Depends from ldd and dpkg -S"
fi
[ -n "$depends" ] || depends=$(depends_by_dpkg) || exit 2
[ -n "$depends" ] || { echo "deb.sh: no Depends found" >&2; exit 2; }

mkdir -p "$ROOT/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
cat >"$ROOT/DEBIAN/control" <<EOF
Package: megatune
Version: $version
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $size
Depends: $depends
Section: science
Priority: optional
Description: parallel configuration advisor for Megatron-LM training
 megatune advises on the parallel configuration of Megatron-LM, Megatron-Core
 and Megatron-Bridge training: given a model, a GPU budget and a cluster
 profile it searches every combination of tensor, pipeline, context, expert
 and data parallelism, micro-batch, recomputation and offload with a memory
 and time model, and prints the best with the exact flags to use and the
 cited rules behind each choice.  It also calibrates clusters (probes),
 traces and analyses training runs (a CUPTI tracer), validates predictions
 and checks for performance regressions.
EOF
(cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort |
	xargs md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums"
deb=$OUT/megatune_${version}_$arch.deb
dpkg-deb --root-owner-group --build "$ROOT" "$deb" >/dev/null
echo "deb.sh: $deb"
echo "deb.sh: Depends: $depends"

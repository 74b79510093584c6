#!/bin/sh
# SPDX-License-Identifier: MIT
# make install, uninstall and deb (scripts/install.mk), end to end:
#  - make install DESTDIR=T PREFIX=/usr/local takes the programs as built: run twice,
#    the second compiles and links nothing; the installed megatune advises, runs
#    megatune-probe beside it, and finds the tracer and the CUDA library (when built)
#    in lib/megatune, as does a probe-<name> link;
#  - every installed man page renders (man -l) without a groff warning and names every
#    option of its command (megatune(1): every command);
#  - the bash completion completes a command, an option and the bundled model names; the
#    zsh one parses (where zsh is installed);
#  - --version names the commit (scripts/version-commit.sh: "unknown" outside git, a
#    given one, the header rewritten only when it changes);
#  - make uninstall leaves no file;
#  - make deb (with dpkg-shlibdeps, and as without it) gives a package dpkg -i installs:
#    /usr/bin/megatune advises; dpkg -r removes every file (as root, with dpkg; skipped
#    when a megatune package is installed already).
# Exit 0 pass, 77 skip (reason on the last line), other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
[ -x "$BUILD/megatune" ] || { echo "FAIL: no $BUILD/megatune"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/install.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
note() { echo "note: $*"; }
# the outer make's jobserver is not ours; its variables are (make check: SANITIZE=...), so
# that a program make install has to bring up to date is built as the rest of $BUILD
MKVARS=$(printf '%s\n' "${MAKEFLAGS:-}" | sed -n 's/^.* -- //p')
# shellcheck disable=SC2086
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory $MKVARS BUILD="$BUILD" \
	NO_DEPS=1 "$@"; }
stamps() { for f in "$BUILD"/megatune "$BUILD"/megatune-probe "$BUILD"/*.so; do
	[ -f "$f" ] && stat -c '%n %Y' "$f"; done; }
# compiler and linker lines make prints
built() { grep -E '^(cc|gcc|clang|c\+\+|g\+\+|ar|[^ ]*nvcc) ' "$1"; }
JOB="advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64"
advise() { "$1" advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64; } # JOB
P=$T/usr/local

# --- make install, twice: the second only copies
stamps >"$T/before"
mk install DESTDIR="$T" PREFIX=/usr/local >"$T/install1.log" 2>&1 || {
	tail -20 "$T/install1.log"; echo "FAIL: make install"; exit 1; }
stamps >"$T/after1"
cmp -s "$T/before" "$T/after1" ||
	note "the first make install brought $BUILD up to date: $(built "$T/install1.log" | wc -l) commands"
mk install DESTDIR="$T" PREFIX=/usr/local >"$T/install2.log" 2>&1 || bad "make install, again"
stamps >"$T/after2"
cmp -s "$T/after1" "$T/after2" || bad "a second make install rebuilt: $(diff "$T/after1" "$T/after2")"
[ -z "$(built "$T/install2.log")" ] || bad "a second make install compiled: $(built "$T/install2.log" | head -3)"

for f in bin/megatune bin/megatune-probe share/man/man1/megatune.1 share/man/man1/megatune-advise.1 \
	share/bash-completion/completions/megatune share/zsh/site-functions/_megatune; do
	[ -f "$P/$f" ] || bad "make install: no $P/$f"
done
M=$P/bin/megatune
for n in $("$BUILD/megatune-probe" probe --list); do
	[ "$(readlink "$P/lib/megatune/probe-$n")" = ../../bin/megatune-probe ] ||
		bad "no link $P/lib/megatune/probe-$n to ../../bin/megatune-probe"
done

# --- the installed programs
advise "$M" >"$T/advise.out" 2>&1 || bad "installed megatune $JOB: exit $?"
grep -q '^best: TP[0-9]' "$T/advise.out" || bad "installed megatune $JOB: no best configuration
$(head -5 "$T/advise.out")"
[ "$("$M" probe --list 2>&1)" = "$("$BUILD/megatune-probe" probe --list)" ] ||
	bad "installed megatune probe --list: megatune-probe not run from beside it"
out=$("$P/lib/megatune/probe-skeleton" --backend cpu --smoke 2>&1) ||
	bad "lib/megatune/probe-skeleton --backend cpu --smoke: $out"
if [ -f "$BUILD/libmegatune_trace.so" ]; then
	[ -f "$P/lib/megatune/libmegatune_trace.so" ] || bad "no lib/megatune/libmegatune_trace.so"
	out=$(cd "$T" && "$M" profile -o "$T/traces" -- true 2>&1)
	case $out in *"is not here"*) bad "installed megatune profile: $out" ;; esac
fi
if [ -f "$BUILD/libmegatune_cuda.so" ]; then
	out=$("$P/lib/megatune/probe-gemm" --backend cuda --smoke 2>&1)
	case $out in *"is neither next to"*) bad "installed probe-gemm: $out" ;; esac
fi

# --- man pages: no warning, every option of the command
if command -v man >/dev/null 2>&1; then
	render() { LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat PAGER=cat man --warnings -l "$1"; }
elif command -v groff >/dev/null 2>&1; then
	note "no man (man-db): pages rendered with groff"
	render() { LC_ALL=C.UTF-8 groff -man -ww -Tutf8 -P-c "$1"; }
else
	render() { return 0; }
	note "neither man nor groff: the pages are not rendered"
fi
cmds=$("$M" --help=complete | sed -n 's/^\([a-z][a-z0-9-]*\)\t.*/\1/p')
[ -n "$cmds" ] || bad "megatune --help=complete lists no command"
for page in "$P"/share/man/man1/*.1; do
	render "$page" >"$T/page.txt" 2>"$T/page.err" || bad "$page does not render"
	[ -s "$T/page.err" ] && bad "$page: $(head -3 "$T/page.err")"
	command -v man >/dev/null 2>&1 || continue
	# hyphens as groff may draw them (U+2010, U+2212)
	sed 's/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g' "$T/page.txt" >"$T/page.plain"
	name=$(basename "$page" .1)
	if [ "$name" = megatune ]; then
		words=$cmds
	else
		words=$("$M" "${name#megatune-}" --help=complete | cut -f1 | grep '^--')
	fi
	[ -n "$words" ] || bad "$name: no option to look for"
	for w in $words; do
		grep -q -- "$w" "$T/page.plain" || bad "$name(1) does not name $w"
	done
done
for c in $cmds; do
	[ -f "$P/share/man/man1/megatune-$c.1" ] || bad "no page megatune-$c.1"
done

# --- completion
comp=$(PATH="$P/bin:$PATH" bash -c '
	. "$1" || exit 1
	c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
		_megatune; printf "%s\n" "$*: ${COMPREPLY[*]}"; }
	c megatune adv
	c megatune advise --mo
	c megatune advise --model ll
	c megatune advise --precision ""
	c megatune rules ""' sh "$P/share/bash-completion/completions/megatune" 2>&1)
want_ll=$("$M" --help=models | grep '^ll' | tr '\n' ' ')
for want in "megatune adv: advise" "megatune advise --mo: --model --moe-flex-backend --moe-balance --moe-dispatcher --moe-rank-budget" \
	"megatune advise --model ll: ${want_ll% }" "megatune advise --precision : bf16 fp8 nvfp4" \
	"megatune rules : list show lint check facts doc"; do
	printf '%s\n' "$comp" | grep -qxF -- "$want" || bad "bash completion: want '$want', got:
$comp"
done
case $want_ll in *llama3-8b*) ;; *) bad "megatune --help=models lacks llama3-8b: $want_ll" ;; esac
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$P/share/zsh/site-functions/_megatune" || bad "_megatune does not parse (zsh -n)"
else
	note "no zsh here: _megatune not parsed"
fi

# --- the version and the commit
v=$("$M" --version)
printf '%s\n' "$v" | grep -Eqx 'megatune [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}(-dirty)?|unknown)\)' ||
	bad "megatune --version: '$v'"
if [ -e .git ] && head=$(git rev-parse HEAD 2>/dev/null); then
	c=$(printf '%s\n' "$v" | sed -n 's/.*(commit \([0-9a-f]*\).*/\1/p')
	case $head in "$c"?*) ;; *) bad "megatune --version: '$v', HEAD is $head" ;; esac
fi
mkdir -p "$T/src/scripts" && cp scripts/version-commit.sh "$T/src/scripts/"
sh "$T/src/scripts/version-commit.sh" "$T/c.h"
grep -q 'MEGATUNE_COMMIT "unknown"' "$T/c.h" || bad "version-commit.sh outside git: $(cat "$T/c.h")"
sh "$T/src/scripts/version-commit.sh" "$T/c.h" v1.2-3
grep -q 'MEGATUNE_COMMIT "v1.2-3"' "$T/c.h" || bad "version-commit.sh with a commit: $(cat "$T/c.h")"
touch -d '2001-01-01' "$T/c.h"
sh "$T/src/scripts/version-commit.sh" "$T/c.h" v1.2-3
[ "$(stat -c %Y "$T/c.h")" = "$(date -d 2001-01-01 +%s)" ] || bad "version-commit.sh rewrote an unchanged header"
sh "$T/src/scripts/version-commit.sh" "$T/c.h" 'a"b' 2>/dev/null && bad "version-commit.sh took 'a\"b'"

# --- make uninstall
mk uninstall DESTDIR="$T" PREFIX=/usr/local >"$T/uninstall.log" 2>&1 || bad "make uninstall"
left=$(find "$P" -type f -o -type l)
[ -z "$left" ] || bad "make uninstall left: $left"

# --- make deb, dpkg -i, dpkg -r
if [ "$(id -u)" != 0 ] || ! command -v dpkg-deb >/dev/null 2>&1; then
	note "not root, or no dpkg: the package is not built"
	[ $fail -eq 0 ] && echo "ok: install, man pages, completion, version, uninstall"
	exit $fail
fi
deps_of() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort -u; }
mk deb DPKG_SHLIBDEPS=/nonexistent/dpkg-shlibdeps >"$T/deb0.log" 2>&1 || {
	tail -20 "$T/deb0.log"; bad "make deb without dpkg-shlibdeps"; }
deb=$(find "$BUILD" -maxdepth 1 -name 'megatune_*.deb' | head -1)
[ -n "$deb" ] && deps_of "$deb" >"$T/deps0"
mk deb >"$T/deb.log" 2>&1 || { tail -20 "$T/deb.log"; bad "make deb"; }
deb=$(find "$BUILD" -maxdepth 1 -name 'megatune_*.deb' | head -1)
[ -n "$deb" ] || { echo "FAIL: make deb made no $BUILD/megatune_*.deb"; exit 1; }
version=$(sed -n 's/^#define MEGATUNE_VERSION "\(.*\)"$/\1/p' lib/version.h)
[ "$deb" = "$BUILD/megatune_${version}_$(dpkg --print-architecture).deb" ] || bad "package named $deb"
for field in Package:megatune Version:$version Architecture:$(dpkg --print-architecture); do
	[ "$(dpkg-deb -f "$deb" "${field%%:*}")" = "${field#*:}" ] || bad "$deb: ${field%%:*} is not ${field#*:}"
done
for field in Maintainer Description; do
	[ -n "$(dpkg-deb -f "$deb" "$field")" ] || bad "$deb: no $field"
done
deps_of "$deb" >"$T/deps"
# what megatune links, whichever way Depends was found
for p in libc6 libcjson1 libyajl2 libyaml-0-2 zlib1g libsqlite3-0; do
	grep -qx "$p" "$T/deps" || bad "Depends (dpkg-shlibdeps) lacks $p: $(dpkg-deb -f "$deb" Depends)"
	grep -qx "$p" "$T/deps0" 2>/dev/null || bad "Depends (dpkg -S) lacks $p: $(cat "$T/deps0" 2>/dev/null)"
done
while read -r p; do
	dpkg -s "$p" >/dev/null 2>&1 || bad "Depends (dpkg -S) names $p, which is not installed"
done <"$T/deps0"
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
	dpkg-deb -f "$deb" Depends | grep -q 'libc6 (>= ' ||
		bad "Depends is not dpkg-shlibdeps's (no version of libc6): $(dpkg-deb -f "$deb" Depends)"
fi
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$T/files"
for f in /usr/bin/megatune /usr/bin/megatune-probe /usr/lib/megatune/probe-gemm \
	/usr/share/man/man1/megatune.1.gz /usr/share/man/man1/megatune-advise.1.gz \
	/usr/share/bash-completion/completions/megatune /usr/share/zsh/vendor-completions/_megatune; do
	grep -qx "$f" "$T/files" || bad "$deb lacks $f"
done
[ $fail -eq 0 ] || exit 1

if dpkg-query -W -f='${Status}' megatune 2>/dev/null | grep -q 'install ok'; then
	echo "a megatune package is installed here already: the .deb is built, not installed"
	exit 77
fi
# one test at a time installs the package; dpkg's own lock may be held by apt: retry
exec 9>/tmp/megatune-install-test.lock
command -v flock >/dev/null 2>&1 && flock -w 600 9
dpkg_retry() { for _ in 1 2 3 4 5 6; do
	dpkg "$@" >"$T/dpkg.log" 2>&1 && return 0
	grep -q lock "$T/dpkg.log" || break; sleep 10; done
	cat "$T/dpkg.log"; return 1; }
dpkg_retry -i "$deb" || bad "dpkg -i $deb"
trap 'dpkg -r megatune >/dev/null 2>&1; rm -rf "$T"' EXIT
advise /usr/bin/megatune >"$T/advise.out" 2>&1 || bad "/usr/bin/megatune $JOB: exit $?"
grep -q '^best: TP[0-9]' "$T/advise.out" || bad "/usr/bin/megatune $JOB: no best configuration"
if [ -f "$BUILD/libmegatune_trace.so" ]; then
	out=$(cd "$T" && /usr/bin/megatune profile -o "$T/traces2" -- true 2>&1)
	case $out in *"is not here"*) bad "/usr/bin/megatune profile: $out" ;; esac
fi
dpkg_retry -r megatune || bad "dpkg -r megatune"
trap 'rm -rf "$T"' EXIT
while read -r f; do
	[ -f "$f" ] || [ -L "$f" ] && bad "dpkg -r left $f"
done <"$T/files"
[ $fail -eq 0 ] && echo "ok: install, man pages, completion, version, uninstall, .deb ($deb)"
exit $fail

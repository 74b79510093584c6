#!/bin/sh
# SPDX-License-Identifier: MIT
# Turn a GPU campaign's campaign.tgz (scripts/gpu-campaign.sh) into test fixtures with their
# provenance: tests/fixtures/gpu/<date>-<gpu>/ (or DEST) gets the summary, every phase's
# output, the documents it wrote (calibrated profile and results, PyTorch reference,
# sustained GEMM, host cost, analyses, validations, advice), the Megatron-LM and proxy
# logs, and the traces gzipped when each stays under 4 MB so; PROVENANCE.md says which
# machine, driver, bundle, date and command measured them.  Nothing is overwritten: an
# existing DEST is refused.
# Usage: scripts/gpu-fixtures.sh campaign.tgz [DEST]
set -eu
TGZ=${1:?usage: gpu-fixtures.sh campaign.tgz [DEST]}
cd "$(dirname "$0")/.."
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-fixtures.XXXXXX")
trap 'rm -rf "$T"' EXIT
tar -C "$T" -xzf "$TGZ"
R=$T/results
[ -f "$R/summary.txt" ] || { echo "gpu-fixtures: $TGZ holds no results/summary.txt" >&2; exit 2; }
when=$(sed -n '1s/.*campaign, \([0-9-]*\)T.*/\1/p' "$R/summary.txt")
gpu=$(sed -n 's/^gpu: \([^,]*\).*/\1/p' "$R/summary.txt" | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
DEST=${2:-tests/fixtures/gpu/${when:-undated}-${gpu:-nogpu}}
[ -e "$DEST" ] && { echo "gpu-fixtures: $DEST exists; name another DEST" >&2; exit 2; }
mkdir -p "$DEST.tmp"
for f in "$R"/*.txt "$R"/*.out "$R"/*.json "$R"/*.jsonl; do
	[ -f "$f" ] && cp "$f" "$DEST.tmp/"
done
for d in megatron-logs megatron-traced-logs proxy-logs; do
	[ -d "$R/$d" ] && cp -r "$R/$d" "$DEST.tmp/"
done
# every file of the trace folders, at any depth (Megatron-LM's profiler writes
# <dir>/torch_profile/rank-N.json.gz), gzipped unless it is already
(cd "$R" && find trace-* -type f 2>/dev/null) | while read -r f; do
	mkdir -p "$DEST.tmp/$(dirname "$f")"
	case $f in
	*.gz) out=$DEST.tmp/$f; cp "$R/$f" "$out" ;;
	*) out=$DEST.tmp/$f.gz; gzip -9c "$R/$f" >"$out" ;;
	esac
	if [ "$(stat -c %s "$out")" -gt 4000000 ]; then
		rm "$out"
		echo "left out $f: over 4 MB gzipped" >>"$DEST.tmp/LEFT-OUT"
	fi
done
{
	echo "# GPU campaign of $when"
	echo
	echo "Measured by \`bash scripts/gpu-campaign.sh\` (scripts/gpu-campaign.sh) on the machine below;"
	echo "imported with \`scripts/gpu-fixtures.sh\`.  Nothing here is edited by hand."
	echo
	echo '```'
	sed -n '1,/^$/p' "$R/summary.txt"
	echo '```'
	echo
	echo "Phases and figures: summary.txt.  Each phase's output: <phase>.out."
} >"$DEST.tmp/PROVENANCE.md"
mv "$DEST.tmp" "$DEST"
echo "gpu-fixtures: $DEST ($(du -sk "$DEST" | cut -f1) KiB)"

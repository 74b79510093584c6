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
for d in "$R"/trace-*; do
	[ -d "$d" ] || continue
	mkdir -p "$DEST.tmp/$(basename "$d")"
	for f in "$d"/*; do
		gzip -9c "$f" >"$DEST.tmp/$(basename "$d")/$(basename "$f").gz"
		if [ "$(stat -c %s "$DEST.tmp/$(basename "$d")/$(basename "$f").gz")" -gt 4000000 ]; then
			rm "$DEST.tmp/$(basename "$d")/$(basename "$f").gz"
			echo "left out $(basename "$d")/$(basename "$f"): over 4 MB gzipped" >>"$DEST.tmp/LEFT-OUT"
		fi
	done
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

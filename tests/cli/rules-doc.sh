#!/bin/sh
# docs/RULES.md is what `megatune rules doc` generates from the rule files and
# the fact table: a rule or fact changed without `make docs` fails here.
set -u
tmp=${TMPDIR:-/tmp}/rules-doc.$$
"$MEGATUNE" rules doc -o "$tmp" || exit 1
if ! cmp -s "$tmp" docs/RULES.md; then
	diff -u docs/RULES.md "$tmp" | head -20
	echo "docs/RULES.md is stale: run 'make docs'"
	rm -f "$tmp"
	exit 1
fi
rm -f "$tmp"
exit 0

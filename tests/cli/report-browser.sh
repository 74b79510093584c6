#!/bin/sh
# SPDX-License-Identifier: MIT
# The HTML report in headless Chromium: reports of the bundled examples load
# with no console message, every section of their inputs is in the DOM, the
# page's script ran (the sortable headers), and a screenshot is produced; a
# hostile model name injects nothing; the text of every copy block, as the
# browser holds it, passes `bash -n` (a DeepSeek-V3 advice's pipeline layout and
# MoE layer pattern included).  Chromium comes from Debian's package
# (scripts/install-deps.sh --test installs it).
set -u
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	echo "chromium is not installed: run scripts/install-deps.sh --test"
	exit 1
fi
t=${TMPDIR:-/tmp}/report-browser.$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

run() { # name args...: write $t/$name.html
	name=$1
	shift
	"$MEGATUNE" "$@" >"$t/$name.out" 2>&1 || [ $? -eq 1 ] || bad "$name: megatune $* failed: $(tail -3 "$t/$name.out")"
}
run llama advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --json "$t/advice.json" --report "$t/llama.html"
run full report --advice "$t/advice.json" --profile dgx-h100 \
	--analysis tests/fixtures/report/analysis-dlrm-8rank.json \
	--compare tests/fixtures/report/comparison-efa-tuner.json -o "$t/full.html"
# a history of five nccl-tests runs (three without the tuner plugin, two with) for the
# trend charts, with a real comparison
NT=tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1
for f in "$NT.txt" "$NT.txt" "$NT.txt" "$NT-with-tuner.txt" "$NT-with-tuner.txt"; do
	"$MEGATUNE" history add "$f" --db "$t/h.sqlite" >/dev/null || bad "history add $f"
done
"$MEGATUNE" compare -q "$NT.txt" "$NT-with-tuner.txt" --json "$t/cmp.json"
[ $? -eq 1 ] || bad "compare of the nccl-tests pair: not exit 1"
run trends report --compare "$t/cmp.json" --history "$t/h.sqlite" -o "$t/trends.html"
run deepseek advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --report "$t/deepseek.html"
run xss advise --model tests/fixtures/report/model-xss.json --gpus 8 --seq 4096 --gbs 64 --report "$t/xss.html"
run val report --advice tests/fixtures/validate/advice-llama3-8b-16.json \
	--validation tests/fixtures/validate/validation-standin.json -o "$t/val.html"

chrome() { # html out-prefix extra-args...: DOM to .dom, console to .log
	html=$1
	out=$2
	shift 2
	timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-dev-shm-usage --user-data-dir="$t/profile-$$-$(basename "$out")" \
		--enable-logging=stderr --v=0 "$@" "file://$html" >"$out.dom" 2>"$out.log"
}

check() { # name sections...
	name=$1
	shift
	f="$t/$name.html"
	[ -s "$f" ] || { bad "$name: no report written"; return; }
	chrome "$f" "$t/$name" --dump-dom || bad "$name: chromium failed: $(tail -3 "$t/$name.log")"
	for s in "$@"; do
		grep -q "<section id=\"$s\">" "$t/$name.dom" || bad "$name: section '$s' not in the DOM"
	done
	# the page's script ran: it marks the sortable headers
	grep -q 'class="n sort"' "$t/$name.dom" || bad "$name: the page's script did not run"
	if grep -E 'CONSOLE|Uncaught|Refused to' "$t/$name.log" >/dev/null; then
		bad "$name: console messages: $(grep -E 'CONSOLE|Uncaught|Refused to' "$t/$name.log" | head -3)"
	fi
	chrome "$f" "$t/$name-shot" --hide-scrollbars --window-size=1280,3000 --screenshot="$t/$name.png" ||
		bad "$name: no screenshot: $(tail -3 "$t/$name-shot.log")"
	if [ -s "$t/$name.png" ]; then
		[ "$(head -c 8 "$t/$name.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
			bad "$name: the screenshot is not a PNG"
		[ "$(wc -c <"$t/$name.png")" -gt 20000 ] || bad "$name: the screenshot is nearly empty"
	else
		bad "$name: no screenshot"
	fi
	echo "$name: $(wc -c <"$f") bytes, sections: $*"
}

check llama summary cluster candidates memory time why configuration
check full summary cluster candidates memory time why configuration findings regressions
check trends regressions trends
n=$(grep -o '<div class="trend">' "$t/trends.dom" | wc -l)
[ "$n" -ge 60 ] || bad "trends: $n trend charts, expected 60"
grep -q 'baseline (median of the runs before)' "$t/trends.dom" || bad "trends: no baseline band"
check deepseek summary cluster candidates memory time why configuration
check xss summary candidates why configuration
check val summary candidates why configuration validation
# the copy blocks paste into a shell: the text of each <pre> as the DOM holds it
# (what the copy button takes, its textContent: the serializer's &amp; &lt; &gt;
# decoded) passes bash -n
copy_text() { # dom id: the text of <pre id="ID"> in the DOM dump
	tr '\n' '\001' <"$1" | sed -e "s/.*<pre id=\"$2\">//" -e 's/<\/pre>.*//' | tr '\001' '\n' |
		sed -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&nbsp;/ /g' -e 's/&amp;/\&/g'
}
for name in llama deepseek xss val; do
	for id in cfg-megatron cfg-bridge cfg-env; do
		grep -q "<pre id=\"$id\">" "$t/$name.dom" || { bad "$name: no copy block $id"; continue; }
		copy_text "$t/$name.dom" "$id" >"$t/$name-$id.sh"
		[ -s "$t/$name-$id.sh" ] || bad "$name: copy block $id is empty"
		bash -n "$t/$name-$id.sh" 2>"$t/$name-$id.err" ||
			bad "$name: copy block $id is not shell: $(head -3 "$t/$name-$id.err")"
	done
done
# the DeepSeek-V3 advice has a pipeline layout and the first-k-dense MoE pattern,
# each one quoted word whatever the shell would read in it
grep -q "^--pipeline-model-parallel-layout '[^']*|[^']*' \\\\\$" "$t/deepseek-cfg-megatron.sh" ||
	bad "deepseek: no quoted pipeline layout in the copy block"
grep -q "^--moe-layer-freq '(\[0\]\*3+\[1\]\*58)' \\\\\$" "$t/deepseek-cfg-megatron.sh" ||
	bad "deepseek: no quoted --moe-layer-freq in the copy block"
# nothing injected: our one script element, no image
n=$(grep -o '<script' "$t/xss.dom" | wc -l)
[ "$n" -eq 1 ] || bad "xss: $n script elements in the DOM, expected 1"
grep -q '<img' "$t/xss.dom" && bad "xss: an injected <img> is in the DOM"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$t/xss.dom" || bad "xss: the name is not shown as text"
exit $fail

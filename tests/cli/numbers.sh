#!/bin/sh
# SPDX-License-Identifier: MIT
# Numbers are refused the same way by every command: hexadecimal ("0x10",
# "0x0.8"), NaN, infinities, "1e400", a fraction for an integer, trailing junk
# and values out of range, each given to a numeric option of a command's table,
# exit 2 with the one message of cli/opts.h on standard error and nothing else:
#     megatune CMD: error: --NAME: expected WANT, got 'VALUE'
# calibrate, probe and proxy run in megatune-probe (megatune execs it).
# Prints "ok - " / "not ok - " lines; exit 0 pass, 1 fail, 77 skip.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
case $M in /*) ;; *) M=$(pwd)/$M ;; esac
[ -x "$M" ] || { echo "skip: no $M"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/numbers.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
cd "$T" || exit 2
fail=0 n=0

# command (its words) | option | value | the other arguments (none is read: the
# option is refused first)
cases() {
	cat <<'EOF'
compare         | --window      | 0x10     | a.json b.json
compare         | --tolerance   | 0x10     | a.json b.json
compare         | --confidence  | nan      | a.json b.json
compare         | --confidence  | 100      | a.json b.json
history list    | --last        | 1e400    | --db h.sqlite
history prune   | --keep        | 0x2      | --db h.sqlite
report          | --window      | inf      | -o r.html
import          | --ranks       | 0x10     | nccl-tests x.txt
import          | --ranks       | 1        | nccl-tests x.txt
profile         | --flush-ms    | 1e3      | -o d -- true
validate        | --timeout     | nan      | --advice a.json --proxy -o v.json
validate        | --timeout     | 0x0.8    | --advice a.json --proxy -o v.json
validate        | --top         | 0x2      | --advice a.json --proxy -o v.json
validate        | --top         | 65       | --advice a.json --proxy -o v.json
validate        | --iters       | 1.5      | --advice a.json --proxy -o v.json
validate        | --warmup      | -1       | --advice a.json --proxy -o v.json
validate        | --kill-grace  | inf      | --advice a.json --proxy -o v.json
validate        | --budget      | 1e400    | --advice a.json --proxy -o v.json
tune            | --per-round   | 0x2      | --advice a.json --proxy
tune            | --candidates  | 65       | --advice a.json --proxy
tune            | --max-rounds  | nan      | --advice a.json --proxy
tune            | --runs        | 1.5      | --advice a.json --proxy
tune            | --iters       | 0x10     | --advice a.json --proxy
tune            | --timeout     | -inf     | --advice a.json --proxy
tune            | --budget      | 12abc    | --advice a.json --proxy
probe gemm      | --repeats     | 0x3      | --backend cpu
probe gemm      | --warmup      | 1e2      | --backend cpu
probe gemm      | --tp          | 0x1      | --backend cpu
probe gemm      | --timeout     | nan      | --backend cpu
probe collective| --max-bytes   | inf      | --backend cpu
probe collective| --min-bytes   | 0x10     | --backend cpu
calibrate       | --rounds      | 0x2      | --backend cpu -o c.json
calibrate       | --margin      | 0x10     | --backend cpu -o c.json
calibrate       | --margin      | nan      | --backend cpu -o c.json
calibrate       | --launched-round | 1e400 | --backend cpu -o c.json
calibrate       | --repeats     | inf      | --backend cpu -o c.json
proxy           | --candidate   | 0x1      | --advice a.json
proxy           | --iters       | 1e400    | --advice a.json --candidate 1
proxy           | --warmup      | -1       | --advice a.json --candidate 1
proxy           | --timeout     | nan      | --advice a.json --candidate 1
advise          | --optimizer-cpu-offload | 0x0.8 | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
advise          | --mem-headroom | 0x10    | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
advise          | --gpus        | 0x8      | --model llama3-8b --seq 4096 --gbs 64
advise          | --seq         | 4096.0   | --model llama3-8b --gpus 8 --gbs 64
advise          | --gbs         | 1e400    | --model llama3-8b --gpus 8 --seq 4096
advise          | --top         | 65       | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
advise          | --tp          | 0x2      | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
advise          | --bucket-size | nan      | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
advise          | --recompute-layers | 010x | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
advise          | --moe-balance | drop:nan | --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64
estimate        | --offload-layers | -1    | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
estimate        | --mbs         | inf      | --model llama3-8b --gpus 8 --seq 4096 --gbs 64
estimate        | --moe-balance | drop:0x2 | --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64
EOF
}

trim() { printf '%s' "$1" | sed 's/^ *//; s/ *$//'; }

cases >"$T/cases"
while IFS='|' read -r cmd opt val rest; do
	cmd=$(trim "$cmd") opt=$(trim "$opt") val=$(trim "$val") rest=$(trim "$rest")
	n=$((n + 1))
	name="megatune $cmd $opt $val"
	# shellcheck disable=SC2086
	"$M" $cmd "$opt" "$val" $rest >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	want="megatune ${cmd%% *}: error: $opt: expected .+, got '$val'"
	if [ $rc -ne 2 ]; then
		fail=1
		echo "not ok - $name: exit $rc, expected 2"
		sed 's/^/#   /' "$T/err" | head -3
	elif [ -s "$T/out" ] || [ "$(wc -l <"$T/err")" -ne 1 ] ||
		! grep -Eqx -- "$want" "$T/err"; then
		fail=1
		echo "not ok - $name: the message is not /$want/"
		sed 's/^/#   /' "$T/out" "$T/err" | head -3
	else
		echo "ok - $name"
	fi
done <"$T/cases"
echo "$n numbers given to numeric options"
[ $fail -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: MIT
# The CUPTI injection library, build/libmegatune_trace.so (profiler/inject.c):
#  - it exports InitializeInjection and InitializeInjectionNvtx2 and nothing else, and
#    links no CUPTI (it finds one at run time: lib/dlsearch.h);
#  - loaded into an ordinary program with the real libcupti on a machine without a GPU,
#    it says so in exactly one stderr line, creates nothing, starts no thread and leaves
#    the program's output, exit status and SIGTERM behaviour alone (with a GPU: it
#    writes a trace with a header and an end record);
#  - with a stand-in libcupti (tests/cli/inject-host.c built with -DFAKE_CUPTI) that
#    hands over synthetic records, the trace is exactly the megatune.trace/1 lines
#    expected, streamed before exit, and complete with its end record after SIGTERM;
#  - set-up failures (version mismatch, attribute, enable) back out with one line and
#    leave no file.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LIB=$BUILD/libmegatune_trace.so
if [ ! -f "$LIB" ]; then
	echo "no libmegatune_trace.so: CUPTI headers absent"
	exit 77
fi
LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
T=$(mktemp -d "${TMPDIR:-/tmp}/inject.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
unset RANK LOCAL_RANK WORLD_SIZE MEGATUNE_TRACE_API MEGATUNE_TRACE_FLUSH_MS FAKE_CUPTI_FAIL FAKE_N
CHECKSUM=checksum=6573374ae88a1383

fail() {
	echo "FAIL: $*"
	exit 1
}
nap() { sleep 0.2 2>/dev/null || sleep 1; }

# --- exports: the two injection entries (the linker's _init/_fini/_edata/... aside)
syms=$(nm -D --defined-only "$LIB" | awk '{print $NF}' |
	grep -Ev '^(_init|_fini|_edata|_end|__bss_start)$' | sort | tr '\n' ' ')
[ "$syms" = "InitializeInjection InitializeInjectionNvtx2 " ] ||
	fail "exported symbols other than InitializeInjection and InitializeInjectionNvtx2: $syms"
if ldd "$LIB" | grep -q libcupti; then
	fail "the tracer links libcupti: $(ldd "$LIB" | grep libcupti)"
fi

# --- the host program
cc -std=c11 -O1 -Wall -Wextra -Werror tests/cli/inject-host.c -o "$T/inject-host" -ldl ||
	fail "cannot build tests/cli/inject-host.c"
HOST=$T/inject-host

check_output() { # name stdout-file out-file
	grep -qx 'init=1,1' "$2" || fail "$1: InitializeInjection did not return 1 twice: $(cat "$2")"
	grep -qx "$CHECKSUM" "$2" || fail "$1: checksum line missing or wrong: $(cat "$2")"
	[ "$(cat "$3")" = "${CHECKSUM#checksum=}" ] || fail "$1: the program's file is wrong"
}

# one stderr line "megatune-trace: ..." and nothing else
check_one_line() { # name stderr-file
	n=$(wc -l <"$2")
	if [ "$n" -ne 1 ] || ! grep -q '^megatune-trace: ' "$2"; then
		fail "$1: expected one 'megatune-trace:' line on stderr, got $n lines: $(cat "$2")"
	fi
}

# --- 1. the real libcupti
if nvidia-smi -L >/dev/null 2>&1; then gpu=1; else gpu=0; fi
MEGATUNE_TRACE_DIR=$T/tr timeout 60 "$HOST" "$LIB" "$T/out1" >"$T/o1" 2>"$T/e1"
rc=$?
[ $rc -eq 0 ] || fail "real CUPTI: exit status $rc (stderr: $(cat "$T/e1"))"
check_output "real CUPTI" "$T/o1" "$T/out1"
grep -qx 'done' "$T/o1" || fail "real CUPTI: the program did not finish"
if [ $gpu -eq 0 ]; then
	check_one_line "real CUPTI without a GPU" "$T/e1"
	[ -z "$(ls -A "$T/tr" 2>/dev/null)" ] || fail "real CUPTI without a GPU: files were created: $(ls "$T/tr")"
	threads=$(sed -n 's/^threads before=\([0-9]*\) after=\([0-9]*\)$/\1 \2/p' "$T/o1")
	# shellcheck disable=SC2086 # two numbers: split on purpose
	set -- $threads
	if [ $# -ne 2 ] || [ "$1" != "$2" ]; then
		fail "real CUPTI without a GPU: threads changed: $threads"
	fi
	echo "real CUPTI, no GPU: $(cat "$T/e1")"
else
	set -- "$T"/tr/megatune-trace.pid*.jsonl
	f=$1
	[ -f "$f" ] || fail "real CUPTI with a GPU: no trace file (stderr: $(cat "$T/e1"))"
	head -1 "$f" | grep -q '"schema":"megatune.trace/1"' || fail "real CUPTI with a GPU: no header in $f"
	tail -1 "$f" | grep -q '^{"t":"end","records":[0-9]*,"dropped":[0-9]*}$' ||
		fail "real CUPTI with a GPU: no end record in $f"
fi

# --- 2. SIGTERM while sleeping, real libcupti: dies of SIGTERM as it would untraced
run_term() { # name out-prefix wait-for-file; env set by the caller
	"$HOST" "$LIB" "$2.out" 30 >"$2.o" 2>"$2.e" &
	pid=$!
	( # watchdog: a hung program is killed (status 137); the sleep goes with it
		trap 'kill $s 2>/dev/null; exit 0' TERM
		sleep 20 &
		s=$!
		wait $s
		kill -KILL $pid 2>/dev/null
	) &
	dog=$!
	i=0
	until grep -qx sleeping "$2.o" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || break; nap
	done
	if [ -n "$3" ]; then # the trace streams: records are there before any exit
		i=0
		until grep -q '"t":"kernel"' "$3" 2>/dev/null; do
			i=$((i + 1)); [ $i -lt 50 ] || break; nap
		done
		grep -q '"t":"kernel"' "$3" 2>/dev/null || { kill -KILL $pid; fail "$1: nothing flushed to $3 while running"; }
	fi
	kill -TERM $pid
	wait $pid 2>/dev/null
	rc=$?
	kill $dog 2>/dev/null
	wait $dog 2>/dev/null
	[ $rc -eq 143 ] || [ $rc -eq 0 ] || fail "$1: exit status $rc after SIGTERM (137: it hung)"
	grep -qx "$CHECKSUM" "$2.o" || fail "$1: output lost: $(cat "$2.o")"
}
MEGATUNE_TRACE_DIR=$T/tr2 run_term "real CUPTI, SIGTERM" "$T/t1" ""
[ $gpu -eq 1 ] || [ $rc -eq 143 ] || fail "real CUPTI, SIGTERM: exit status $rc, expected 143"

# --- 3. a stand-in libcupti with synthetic records
if [ ! -f "$CUDA_HOME/include/cupti.h" ]; then
	echo "note: no $CUDA_HOME/include/cupti.h: the stand-in CUPTI checks are left out"
	exit 0
fi
mkdir -p "$T/fake"
cc -std=c11 -O1 -Wall -Wextra -Werror -fPIC -shared -DFAKE_CUPTI -isystem "$CUDA_HOME/include" \
	-Wl,-soname,libcupti.so.13 tests/cli/inject-host.c -o "$T/fake/libcupti.so.13" -lpthread ||
	fail "cannot build the stand-in libcupti"
# found at run time through LD_LIBRARY_PATH (the loader's search), ahead of the toolkit's;
# check_trace asserts the header names it

python=$(command -v python3 || true)
check_trace() { # name file records dropped n
	f=$2
	[ -f "$f" ] || fail "$1: no trace file $f ($(ls "$(dirname "$f")" 2>&1))"
	tail -1 "$f" | grep -qx "{\"t\":\"end\",\"records\":$3,\"dropped\":$4}" ||
		fail "$1: last line is not the expected end record: $(tail -1 "$f")"
	if [ -z "$python" ]; then
		head -1 "$f" | grep -q '^{"schema":"megatune.trace/1","pid":[0-9]*,"rank":' || fail "$1: bad header"
		[ "$(grep -c '"t":"kernel"' "$f")" -eq $((2 * $5)) ] || fail "$1: kernel count"
		return
	fi
	"$python" - "$f" "$5" "$T/fake/libcupti.so.13" <<'EOF' || fail "$1: $f does not hold the expected records"
import json, sys
path, n, fake = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(path, encoding="utf-8").read().split("\n")
assert lines[-1] == "", "no final newline"
recs = [json.loads(l) for l in lines[:-1]]
h, body, end = recs[0], recs[1:-1], recs[-1]
assert list(h) == ["schema", "pid", "rank", "local_rank", "world_size", "host",
                   "cupti_version", "cupti_path", "cupti_from", "clock"], h
assert h["cupti_path"] == fake and h["cupti_from"] == "the loader's search path", h
assert h["schema"] == "megatune.trace/1" and h["rank"] == 3 and h["local_rank"] == 1
assert h["world_size"] == 8 and h["clock"] == "cupti" and h["cupti_version"] >= 130000, h
keys = {"kernel": ["t", "name", "dev", "ctx", "stream", "start", "end", "corr", "grid", "block"],
        "memcpy": ["t", "name", "dev", "stream", "start", "end", "corr", "bytes"],
        "memset": ["t", "name", "dev", "stream", "start", "end", "corr", "bytes"],
        "runtime": ["t", "name", "tid", "start", "end", "corr"],
        "driver": ["t", "name", "tid", "start", "end", "corr"]}
count = {}
for r in body:
    t = r["t"]
    count[t] = count.get(t, 0) + 1
    if t in keys:
        assert list(r) == keys[t], r
    assert r["start"] <= r["end"], r
names = lambda t: sorted({r["name"] for r in body if r["t"] == t})
assert count == {"kernel": 2 * n, "memcpy": 3 * n, "memset": n, "sync": 2 * n,
                 "runtime": n, "driver": n, "nvtx": 2 * n}, count
weird = 'plain_c "kernel"\\\n\x01 caf\u00e9 bad\ufffd'
assert names("kernel") == sorted(["void kernel<3>(float*, int)", weird]), names("kernel")
k = next(r for r in body if r["t"] == "kernel")
assert (k["dev"], k["ctx"], k["stream"], k["grid"], k["block"]) == (2, 1, 7, [128, 2, 1], [256, 1, 1]), k
assert k["end"] - k["start"] == 1500, k
assert names("memcpy") == ["Memcpy DtoH (Device -> Pinned)", "Memcpy HtoD (Pageable -> Device)",
                           "Memcpy PtoP (Device -> Device)"], names("memcpy")
assert names("memset") == ["Memset (Device)"]
ss = [r for r in body if r["t"] == "sync" and r["name"] == "Stream Sync"]
cs = [r for r in body if r["t"] == "sync" and r["name"] == "Context Sync"]
assert len(ss) == n and all(r["dev"] == 2 and r["stream"] == 7 for r in ss), ss
assert len(cs) == n and all("dev" not in r and "stream" not in r for r in cs), cs
assert names("runtime") == ["cudaLaunchKernel_v7000"] and names("driver") == ["cuLaunchKernel"]
rng = [r for r in body if r["t"] == "nvtx" and r["name"] == 'fwd\t"x"']
mk = [r for r in body if r["t"] == "nvtx" and r["name"] == "step"]
assert len(rng) == n and all(r["end"] - r["start"] == 20000 and r["tid"] == 77 for r in rng), rng
assert sum(r.get("domain") == "megatron" for r in rng) == n // 2, rng
assert sum("domain" in r for r in rng) == n // 2, rng
assert len(mk) == n and all(r["start"] == r["end"] and "domain" not in r for r in mk), mk
assert end == {"t": "end", "records": len(body), "dropped": 5}, end
EOF
}

# records per synthetic step: 2 kernels, 3 memcpys, 1 memset, 2 syncs, 2 API, 2 NVTX;
# dropped: 3 reported by the stand-in CUPTI, 1 END without START, 1 range open at exit
# (a forked child that exits through exit() must leave the parent's trace alone)
RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 FAKE_N=5 MEGATUNE_TRACE_DIR=$T/fk/sub LD_LIBRARY_PATH=$T/fake \
	INJECT_HOST_FORK=1 timeout 60 "$HOST" "$LIB" "$T/out2" >"$T/o2" 2>"$T/e2"
rc=$?
[ $rc -eq 0 ] || fail "stand-in CUPTI: exit status $rc (stderr: $(cat "$T/e2"))"
[ ! -s "$T/e2" ] || fail "stand-in CUPTI: unexpected stderr: $(cat "$T/e2")"
check_output "stand-in CUPTI" "$T/o2" "$T/out2"
grep -qx 'nvtx=7' "$T/o2" || fail "stand-in CUPTI: NVTX's entry was not forwarded to it: $(cat "$T/o2")"
check_trace "stand-in CUPTI" "$T/fk/sub/megatune-trace.rank3.jsonl" 60 5 5

# SIGTERM: streamed while running, then flushed with its end record before dying
RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 FAKE_N=7 MEGATUNE_TRACE_DIR=$T/st LD_LIBRARY_PATH=$T/fake \
	MEGATUNE_TRACE_FLUSH_MS=50 run_term "stand-in CUPTI, SIGTERM" "$T/t2" "$T/st/megatune-trace.rank3.jsonl"
[ $rc -eq 143 ] || fail "stand-in CUPTI, SIGTERM: exit status $rc, expected 143"
check_trace "stand-in CUPTI, SIGTERM" "$T/st/megatune-trace.rank3.jsonl" 84 5 7

# SIGTERM with a handler of the program's own: the trace ends, then that handler runs
RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 FAKE_N=2 MEGATUNE_TRACE_DIR=$T/sh LD_LIBRARY_PATH=$T/fake \
	INJECT_HOST_HANDLER=1 run_term "stand-in CUPTI, SIGTERM, own handler" "$T/t3" ""
if [ $rc -ne 0 ] || ! grep -qx 'got SIGTERM' "$T/t3.o"; then
	fail "stand-in CUPTI, SIGTERM, own handler: status $rc, the program's handler did not run: $(cat "$T/t3.o")"
fi
check_trace "stand-in CUPTI, SIGTERM, own handler" "$T/sh/megatune-trace.rank3.jsonl" 24 5 2

# file names without RANK
LOCAL_RANK=2 FAKE_N=1 MEGATUNE_TRACE_DIR=$T/lr LD_LIBRARY_PATH=$T/fake \
	timeout 60 "$HOST" "$LIB" "$T/out4" >"$T/o4" 2>"$T/e4" || fail "LOCAL_RANK run failed"
[ -f "$T/lr/megatune-trace.local2.jsonl" ] || fail "no megatune-trace.local2.jsonl: $(ls "$T/lr")"
FAKE_N=1 MEGATUNE_TRACE_DIR=$T/pd LD_LIBRARY_PATH=$T/fake \
	timeout 60 "$HOST" "$LIB" "$T/out5" >"$T/o5" 2>"$T/e5" || fail "pid run failed"
ls "$T"/pd/megatune-trace.pid[0-9]*.jsonl >/dev/null 2>&1 || fail "no megatune-trace.pid<PID>.jsonl: $(ls "$T/pd")"
head -1 "$T"/pd/megatune-trace.pid*.jsonl | grep -q '"pid":[0-9]*,"host":' ||
	fail "header without RANK still names a rank: $(head -1 "$T"/pd/*.jsonl)"

# two live processes of one rank (a program the job starts with RANK set that loads CUDA
# too): the second writes <name>.pid<PID>.jsonl beside the first, which stays whole
RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 FAKE_N=1 MEGATUNE_TRACE_DIR=$T/two LD_LIBRARY_PATH=$T/fake \
	timeout 60 "$HOST" "$LIB" "$T/out7" 3 >"$T/o7" 2>"$T/e7" &
first=$!
n=0
until grep -qx sleeping "$T/o7" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "two processes of one rank: the first never slept"
	nap
done
RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 FAKE_N=1 MEGATUNE_TRACE_DIR=$T/two LD_LIBRARY_PATH=$T/fake \
	timeout 60 "$HOST" "$LIB" "$T/out8" >"$T/o8" 2>"$T/e8" || fail "two processes of one rank: the second failed"
second=$(ls "$T"/two/megatune-trace.rank3.pid[0-9]*.jsonl 2>/dev/null)
[ -n "$second" ] || fail "two processes of one rank: no megatune-trace.rank3.pid<PID>.jsonl: $(ls "$T/two")"
check_trace "second process of one rank" "$second" 12 5 1
wait $first || fail "two processes of one rank: the first failed"
check_trace "first process of one rank" "$T/two/megatune-trace.rank3.jsonl" 12 5 1

# set-up failures back out: one line, no file, the program unharmed
for what in version attr enable; do
	FAKE_CUPTI_FAIL=$what MEGATUNE_TRACE_DIR=$T/f-$what LD_LIBRARY_PATH=$T/fake \
		timeout 60 "$HOST" "$LIB" "$T/out-$what" >"$T/o-$what" 2>"$T/e-$what"
	rc=$?
	[ $rc -eq 0 ] || fail "failing $what: exit status $rc"
	check_output "failing $what" "$T/o-$what" "$T/out-$what"
	check_one_line "failing $what" "$T/e-$what"
	[ -z "$(ls -A "$T/f-$what" 2>/dev/null)" ] || fail "failing $what: left $(ls "$T/f-$what")"
	echo "stand-in CUPTI failing at $what: $(cat "$T/e-$what")"
	# a CUPTI of another API version is not used at all: the search went on past it
	if [ $what = version ] && grep -q '(fake)' "$T/e-$what"; then
		fail "failing version: the stand-in of another API version was used"
	fi
done
# end to end without a GPU: megatune profile sets the environment, the program loads
# the library it names (as the CUDA driver does), the stand-in CUPTI hands over records,
# megatune profile lists the trace and converts it for Perfetto, and megatune analyze
# reads both forms to the same figures
if [ -x "${MEGATUNE:-}" ]; then
	RANK=5 WORLD_SIZE=8 FAKE_N=4 LD_LIBRARY_PATH=$T/fake timeout 60 "$MEGATUNE" profile \
		-o "$T/prof" --chrome -- sh -c 'exec "$0" "$CUDA_INJECTION64_PATH" "$1"' "$HOST" \
		"$T/out6" >"$T/o6" 2>"$T/e6"
	rc=$?
	[ $rc -eq 0 ] || fail "megatune profile: exit status $rc: $(cat "$T/o6" "$T/e6")"
	grep -q "megatune-trace.rank5.jsonl: [1-9][0-9]* kernel/memcpy/memset" "$T/o6" ||
		fail "megatune profile did not list the trace: $(cat "$T/o6")"
	grep -qx "  CUPTI: $T/fake/libcupti.so.13 (the loader's search path)" "$T/o6" ||
		fail "megatune profile did not say which CUPTI the tracer loaded: $(cat "$T/o6")"
	[ -s "$T/prof/megatune-trace.rank5.json" ] || fail "megatune profile --chrome wrote nothing"
	"$MEGATUNE" analyze --no-rules --json "$T/a1.json" --quiet "$T/prof/megatune-trace.rank5.jsonl" ||
		fail "megatune analyze cannot read the tracer's output"
	"$MEGATUNE" analyze --no-rules --json "$T/a2.json" --quiet "$T/prof/megatune-trace.rank5.json" ||
		fail "megatune analyze cannot read the Chrome conversion"
	grep -q '"rank": 5' "$T/a1.json" || fail "the analysis lost the rank: $(head -30 "$T/a1.json")"
	for key in total_us busy_us computation_us exposed_memcpy_us '"kernels"'; do
		a=$(grep -m1 "$key" "$T/a1.json") b=$(grep -m1 "$key" "$T/a2.json")
		[ "$a" = "$b" ] || fail "JSONL and Chrome analyses differ: $a vs $b"
	done
	echo "megatune profile + analyze: $(grep -m1 '"kernels"' "$T/a1.json" | tr -d ' ,')"
fi
echo "ok"
exit 0

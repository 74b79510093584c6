#!/bin/sh
# SPDX-License-Identifier: MIT
# The fuzz targets, built with a plain main(), run over the seed corpus and
# every prefix of it: bundled models, profiles and rules, and the bad-input
# fixtures.
set -eu
B=${BUILD:-build}
for t in fuzz-model fuzz-profile fuzz-advise fuzz-rules fuzz-report fuzz-trace fuzz-import fuzz-compare fuzz-logparse fuzz-job; do
	[ -x "$B/tests/$t" ] || { echo "missing $B/tests/$t"; exit 1; }
done
"$B/tests/fuzz-model" models/*.json tests/fixtures/models/*.json tests/fixtures/bad/*.json
"$B/tests/fuzz-profile" profiles/*.json tests/fixtures/bad/*.json
"$B/tests/fuzz-advise" models/llama3-8b.json models/qwen3-30b-a3b.json tests/fixtures/models/sc21-gpt-1.7b.json
"$B/tests/fuzz-rules" rules/defs/*.rules tests/fixtures/rules/*.rules tests/fixtures/bad/*.rules
"$B/tests/fuzz-report" tests/fixtures/report/*.json profiles/dgx-h100.json tests/fixtures/findings/dlrm-8rank.json
"$B/tests/fuzz-trace" tests/fixtures/traces/small/* tests/fixtures/bad/trace-*.json
"$B/tests/fuzz-import" tests/fixtures/nccl-tests/*.txt tests/fixtures/nccl-tests/constructed/* \
	tests/fixtures/nvbandwidth/*.txt tests/fixtures/nvbandwidth/*.json
"$B/tests/fuzz-compare" tests/fixtures/compare/*.jsonl tests/fixtures/report/*.json profiles/dgx-h100.json \
	tests/fixtures/nccl-tests/h100_p5_*.txt tests/fixtures/nvbandwidth/*.txt tests/fixtures/bad/import-*.txt
"$B/tests/fuzz-logparse" tests/fixtures/megatron-logs/*.log tests/fixtures/validate/validation-standin.json
"$B/tests/fuzz-job" tests/fixtures/jobs/* tests/fixtures/megatron-logs/mlm_core_mixtral8x7b_16xh100_throughput_success.log

# megatune compare: name | exit | ERE (stdout+stderr) | arguments
# the two real nccl-tests logs of one AWS p5 cluster, without and with the tuner plugin
nccl pair regressed at 64 KiB | 1 | regressed +\+20\.10% .*64 KiB, in place | compare tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt
nccl pair noise stated | 1 | \+- +3\.98% | compare tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt
same log twice passes | 0 | 64 metrics: 0 regressed, 0 improved, 64 unchanged | compare tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt
thresholds raise one tolerance | 1 | unchanged +\+20\.10% .*64 KiB, in place | compare --all --thresholds tests/fixtures/compare/thresholds.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt
a high tolerance passes | 0 | 0 regressed | compare --tolerance 30 tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt
results with samples | 0 | "method": "mann-whitney" | compare --all --json - tests/fixtures/compare/result-a.jsonl tests/fixtures/compare/result-b.jsonl
results json schema | 0 | "schema": "megatune.comparison/1" | compare --json - tests/fixtures/compare/result-a.jsonl tests/fixtures/compare/result-b.jsonl
help | 0 | usage: megatune compare BASELINE CURRENT | compare --help
# bad input: a clear message and exit 2
different kinds | 2 | error: .*is nccl-tests, .*is result: compare documents of one kind | compare tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/compare/result-a.jsonl
unreadable | 2 | error: .*no-such-file | compare tests/fixtures/compare/no-such-file.jsonl tests/fixtures/compare/result-a.jsonl
wrong schema | 2 | field 'schema': expected a document megatune compares.*megatune.comparison/1 | compare tests/fixtures/report/comparison-efa-tuner.json tests/fixtures/report/comparison-efa-tuner.json
newer schema | 2 | 'megatune.result/2' is newer than this megatune reads | compare tests/fixtures/compare/result-a.jsonl tests/fixtures/compare/result-v2.jsonl
not a document | 2 | not a megatune document, nccl-tests output or nvbandwidth output | compare tests/fixtures/compare/README.md tests/fixtures/compare/README.md
thresholds unknown metric | 2 | thresholds-unknown.txt:2: 'alltoall\*' matches no metric | compare --thresholds tests/fixtures/compare/thresholds-unknown.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt
thresholds bad line | 2 | thresholds-bad.txt:1: expected 'PATTERN PCT' | compare --thresholds tests/fixtures/compare/thresholds-bad.txt tests/fixtures/compare/result-a.jsonl tests/fixtures/compare/result-b.jsonl
bad tolerance | 2 | --tolerance: expected a percentage from 0 to 1000000, got 'x' | compare --tolerance x tests/fixtures/compare/result-a.jsonl tests/fixtures/compare/result-b.jsonl
one document | 2 | expected BASELINE and CURRENT | compare tests/fixtures/compare/result-a.jsonl
corrupt history | 2 | history-corrupt.db: not a megatune history database | compare --history tests/fixtures/compare/history-corrupt.db tests/fixtures/compare/result-a.jsonl
history needs --db | 2 | missing --db DB | history list
history unknown subcommand | 2 | unknown subcommand 'drop' | history drop --db x.db
history corrupt db | 2 | not a megatune history database | history list --db tests/fixtures/compare/history-corrupt.db
# a crashed calibration does not pass: its last record cut short is bad input naming the file
# and line (a JUnit failure too), and a metric of the baseline it lacks fails the gate
cut record names file and line | 2 | error: tests/fixtures/compare/result-cut\.jsonl:5: a record cut short at the end of the file | compare tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-cut.jsonl
cut record is no pass | 2 | !compare result: pass | compare tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-cut.jsonl --junit -
cut record JUnit failure | 2 | <failure type="bad input" message="tests/fixtures/compare/result-cut\.jsonl:5: a record cut short | compare -q --junit - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-cut.jsonl
cut record JUnit counts | 2 | <testsuite name="megatune\.compare" tests="1" failures="1" | compare -q --junit - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-cut.jsonl
cut history current | 2 | result-cut\.jsonl:5: a record cut short | compare --history no-such.sqlite tests/fixtures/compare/result-cut.jsonl --junit -
stopped run fails | 1 | ^compare result: fail | compare tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
stopped run counts missing | 1 | 3 metrics: 0 regressed, .*; 53 missing from the current | compare tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
stopped run names missing | 1 | only in the baseline \(53\): missing from the current, a failure | compare tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
stopped run JUnit failures | 1 | <testsuite name="megatune\.compare\.result" tests="56" failures="53" errors="0" skipped="0" | compare -q --junit - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
stopped run JUnit message | 1 | <failure type="missing" message="missing: in the baseline, not in tests/fixtures/compare/result-stopped\.jsonl | compare -q --junit - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
stopped run JSON verdict | 1 | "verdict": "fail" | compare --json - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
stopped run Markdown | 1 | ^### megatune compare \(result\): \*\*fail\*\* | compare -q --markdown - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
allow-missing passes | 0 | ^compare result: pass | compare --allow-missing tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
allow-missing JUnit skips | 0 | failures="0" errors="0" skipped="53" | compare -q --allow-missing --junit - tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-1/calibrated.json.results.jsonl tests/fixtures/compare/result-stopped.jsonl
only in the current passes | 0 | ^compare result: pass | compare tests/fixtures/compare/result-stopped.jsonl tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/calibrated.json.results.jsonl
# every kind of the table reads
advice against itself | 0 | advice: pass | compare tests/fixtures/report/advice-llama3-8b.json tests/fixtures/report/advice-llama3-8b.json
analysis against itself | 0 | 48 metrics: 0 regressed, 0 improved, 48 unchanged | compare tests/fixtures/report/analysis-dlrm-8rank.json tests/fixtures/report/analysis-dlrm-8rank.json
profiles H100 against H200 | 1 | improved +\+39\.73% .* memory bandwidth | compare dgx-h100 dgx-h200
nvbandwidth against itself | 0 | 88 metrics: 0 regressed, 0 improved, 88 unchanged | compare tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt
markdown to stdout | 1 | ^### megatune compare \(nccl-tests\) | compare -q --markdown - tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt
nothing in common | 2 | have no metric in common \(64 only in the baseline, 48 only in the current\) | compare tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
bad --match | 2 | --match: expected host,gpu, gpu, host or none, got 'rack' | compare --match rack --history x.sqlite tests/fixtures/compare/result-a.jsonl
a bad profile | 2 | profile-busbw-type.json: field 'collectives\[2\]\.points\[3\]\.busbw_gbps': expected a number | compare tests/fixtures/bad/profile-busbw-type.json dgx-h100
# validations: candidates matched by name, their measured step and tokens/s per GPU
validation pair regressed | 1 | regressed +\+25\.00% .*c1-tp2-pp1-mbs4 measured step | compare tests/fixtures/validate/validation-standin.json tests/fixtures/compare/validation-c1-slower.json
validation pair other unchanged | 1 | 4 metrics: 2 regressed, 0 improved, 2 unchanged | compare tests/fixtures/validate/validation-standin.json tests/fixtures/compare/validation-c1-slower.json
validation twice passes | 0 | 4 metrics: 0 regressed | compare tests/fixtures/validate/validation-standin.json tests/fixtures/validate/validation-standin.json

# megatune import: usage and bad input.  Golden output and the advisor on the
# imported profiles: tests/cli/import.sh.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
help has the exit codes | 0 | exit codes: 0 success; 1 a check failed under --strict; 2 bad usage | import --help
listed in megatune --help | 0 | import +turn nccl-tests or nvbandwidth output | --help
no tool | 2 | give the tool \(nccl-tests or nvbandwidth\) and at least one file | import
unknown tool | 2 | expected nccl-tests or nvbandwidth, got 'ib_write_bw' | import ib_write_bw x.txt
no file | 2 | give at least one nccl-tests output file | import nccl-tests
options after the files | 0 | "schema": "megatune.import/1" | import nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt --json
unknown option | 2 | unknown option '--frobnicate' | import --frobnicate nccl-tests x.txt
-o without a value | 2 | option '-o' needs a value | import nccl-tests x.txt -o
bad span | 2 | --span: expected nvlink or network, got 'pcie' | import --span pcie nccl-tests x.txt
bad op | 2 | --op: expected all_reduce, all_gather, reduce_scatter, alltoall, sendrecv or broadcast, got 'reduce' | import --op reduce nccl-tests x.txt
bad ranks | 2 | --ranks: expected a number of ranks from 2 to 16777216, got 'one' | import --ranks one nccl-tests x.txt
json and profile both on stdout | 2 | --json and -o - would both write to standard output | import --json -o - nccl-tests x.txt
missing file | 2 | cannot read 'nope.txt': No such file | import nccl-tests nope.txt
a directory | 2 | cannot read 'tests/fixtures' | import nccl-tests tests/fixtures
empty file | 2 | import-empty.txt: empty file | import nccl-tests tests/fixtures/bad/import-empty.txt
empty nvbandwidth file | 2 | import-empty.txt: empty file | import nvbandwidth tests/fixtures/bad/import-empty.txt
not a log | 2 | import-not-a-log.txt: not nccl-tests output: no result table | import nccl-tests tests/fixtures/bad/import-not-a-log.txt
not an nvbandwidth log | 2 | import-not-a-log.txt: not nvbandwidth output | import nvbandwidth tests/fixtures/bad/import-not-a-log.txt
header without rows | 2 | import-header-no-rows.txt:4: a table header with no result rows under it | import nccl-tests tests/fixtures/bad/import-header-no-rows.txt
not a number | 2 | import-not-a-number.txt:6: column 'busbw \(out-of-place\)' of the result row: expected a number, got 'n/a' | import nccl-tests tests/fixtures/bad/import-not-a-number.txt
short row | 2 | import-short-row.txt:6: a result row of 8 columns; the table header \(line 4\) has 13 | import nccl-tests tests/fixtures/bad/import-short-row.txt
a bad file among good ones | 2 | import-short-row.txt:6: | import nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt tests/fixtures/bad/import-short-row.txt
footer not reproduced warns | 0 | warning: .*import-footer-mismatch.txt:8: all_reduce_perf: the footer 'Avg bus bandwidth : 99.1' is not the mean of the 4 busbw values | import nccl-tests tests/fixtures/bad/import-footer-mismatch.txt
footer not reproduced, strict | 1 | error: .*is not the mean of the 4 busbw values .*\(--strict\) | import --strict nccl-tests tests/fixtures/bad/import-footer-mismatch.txt
collective unknown | 2 | import-no-op.txt:2: cannot tell which collective this table measured .*give --op | import nccl-tests tests/fixtures/bad/import-no-op.txt
--op names it | 0 | all_reduce +2 +\? +2 | import --op all_reduce --base dgx-h200 nccl-tests tests/fixtures/bad/import-no-op.txt
ranks unknown | 2 | import-no-ranks.txt:2: cannot tell over how many ranks sendrecv_perf ran .*give --ranks N | import nccl-tests tests/fixtures/bad/import-no-ranks.txt
--ranks gives them | 0 | sendrecv +16 | import --ranks 16 --base dgx-h100 nccl-tests tests/fixtures/bad/import-no-ranks.txt
not a profile collective | 2 | reduce_perf is not one of the collectives a profile holds | import nccl-tests tests/fixtures/bad/import-reduce.txt
GPU without a bundled profile | 2 | the logs ran on 'Tesla V100-SXM2-32GB', which no bundled profile describes .*give --base | import -o v100.json nccl-tests tests/fixtures/bad/import-v100.txt
GPU without a profile, checks only | 0 | checked; nothing written \(no -o, and no bundled profile for the GPU\) | import nccl-tests tests/fixtures/bad/import-v100.txt
unknown base | 2 | --base: unknown profile 'dgx-z9': give a profile file or one of: dgx-a100-80g, dgx-b200 | import --base dgx-z9 nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
80 ranks cannot span NVLink | 2 | 80 ranks cannot be inside an NVLink domain of 8 GPUs | import --span nvlink -o nv.json nccl-tests tests/fixtures/nccl-tests/h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt
nvbandwidth given to nccl-tests | 2 | this is nvbandwidth output, not nccl-tests: use 'megatune import nvbandwidth' | import nccl-tests tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt
nccl-tests given to nvbandwidth | 2 | this is nccl-tests output, not nvbandwidth | import nvbandwidth tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
nccl-tests JSON given to nvbandwidth | 2 | this is nccl-tests JSON, not nvbandwidth | import nvbandwidth tests/fixtures/nccl-tests/constructed/all_reduce_g8_v2.17.8.json
nvbandwidth bad value | 2 | import-nvb-bad-value.txt:10: column 2 of the host_to_device_memcpy_ce matrix: expected a number or N/A, got '55,63' | import nvbandwidth tests/fixtures/bad/import-nvb-bad-value.txt
JSON of the wrong type | 2 | import-nccl-bad-type.json: field 'results\[0\].size': expected a number, got a string | import nccl-tests tests/fixtures/bad/import-nccl-bad-type.json
truncated JSON | 2 | import-nccl-truncated.json:1:[0-9]+: malformed JSON: the file ends too early | import nccl-tests tests/fixtures/bad/import-nccl-truncated.json
text summary | 0 | all_reduce +2 +2 +24 +31.89 +15.5188 +yes \(exact\) +network +24 | import nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
summary names the base | 0 | profile would be 'dgx-h200-imported' = dgx-h200 | import nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
writes a profile | 0 | wrote h200.json: profile 'h200' = dgx-h200 | import -o h200.json nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
--name names it | 0 | profile 'lab-b' | import -o lab.json --name lab-b nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
profile to standard output | 0 | "schema":[[:space:]]*"megatune.profile/1" | import -o - nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
json summary | 0 | "schema": "megatune.import/1" | import --json nccl-tests tests/fixtures/nccl-tests/h200_2node2gpu_all_reduce_1nic_dranet.txt
tagged rows of the p5 log | 0 | all_reduce +16 +2 +32 +487.90 +124.584 +yes | import nccl-tests tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt
old layout | 0 | all_reduce +128 +16 +24 +26.63 +5.52162 +yes +network | import nccl-tests tests/fixtures/nccl-tests/a100_16node128gpu_all_reduce_oldformat_abci.txt
old layout on a 40 GB A100 warns about the base | 0 | warning: the logs ran on A100-SXM4-40GB, the base profile describes NVIDIA A100-SXM4-80GB | import nccl-tests tests/fixtures/nccl-tests/a100_1node8gpu_all_reduce_oldformat_abci.txt
paste without device list or footer | 0 | sendrecv_perf +sendrecv +8 +1 +4 +195.10 +- +no footer +nvlink +4 | import --base dgx-a100-80g nccl-tests tests/fixtures/nccl-tests/a100_1node8gpu_sendrecv_g8_liplus.txt
nvbandwidth text | 0 | host_to_device_memcpy_ce +8 +44.10 +55.65 +433.57 +yes +h2d 55.64 GB/s | import nvbandwidth tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt
nvbandwidth names the slow GPU | 0 | warning: .*GPU 5 \(NVIDIA H100 80GB HBM3\): host_to_device_memcpy_ce at 44.1 GB/s is 21% below the median | import nvbandwidth tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt
nvbandwidth says what it left out | 0 | not imported, no profile field holds GPU-to-GPU copies .*device_to_device_memcpy_read_ce | import nvbandwidth tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.json

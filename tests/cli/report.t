# megatune report, and advise --report.
# name | exit status | ERE the output must match (!ERE: must not) | arguments
a profile alone | 0 | <section id="cluster"> | report --profile dgx-h100 -o -
a profile alone has no summary | 0 | !<section id="summary"> | report --profile dgx-h100 -o -
an analysis | 0 | <section id="findings"> | report --analysis tests/fixtures/report/analysis-dlrm-8rank.json -o -
its findings with rule ids | 0 | diag-exposed-ep | report --analysis tests/fixtures/report/analysis-dlrm-8rank.json -o -
a comparison | 0 | all_reduce time, 16 ranks, 64 KiB | report --compare tests/fixtures/report/comparison-efa-tuner.json -o -
a regression is marked | 0 | class="verdict-regressed" | report --compare tests/fixtures/report/comparison-efa-tuner.json -o -
advise writes the report | 0 | best: TP4 | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --report report-test.html
estimate writes the report | 0 | verdict: fits | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --report report-test2.html
nothing to report | 2 | nothing to report: give --advice, --profile, --analysis, --compare, --validation, --check or --history | report -o x.html
no output named | 2 | missing -o FILE | report --profile dgx-h100
the wrong kind of document | 2 | h100-1numa-nccl2.27.json: field 'schema': --advice expects "megatune.advice/1", got "megatune.profile/1" | report --advice tests/fixtures/rules/h100-1numa-nccl2.27.json -o x.html
a missing file | 2 | cannot read 'nope.json' | report --advice nope.json -o x.html
a truncated file | 2 | truncated | report --profile tests/fixtures/bad/profile-truncated.json -o x.html
an unknown option | 2 | unknown option '--colour' | report --colour -o x.html
help | 0 | usage: megatune report | report --help
a check | 0 | <section id="check"> | report --check tests/fixtures/report/check-llama3-70b.json -o -
a check's diffs | 0 | the diff: best overall .everything. | report --check tests/fixtures/report/check-llama3-70b.json -o -
a check's diagnoses | 0 | <h3>Diagnoses .10.</h3> | report --check tests/fixtures/report/check-llama3-70b.json -o -
a check that is an advice | 2 | advice-llama3-8b.json: .*schema.*megatune.check/1 | report --check tests/fixtures/report/advice-llama3-8b.json -o -
check --report | 0 | <section id="check"> | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --report -
check --report, the job as it is | 0 | <section id="summary"> | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --report -
check --report not with many | 2 | --report: one job at a time | check tests/fixtures/jobs/llama3-8b.args tests/fixtures/jobs/llama3-70b-overlaps-off.sh --gpus 8 --report /tmp/x.html
# the copy blocks are shell (tests/cli/report-browser.sh pastes them into bash -n): each
# word through the one quoter, a DeepSeek-V3 pipeline layout and MoE layer pattern quoted
the copy block quotes a pipeline layout | 0 | ^--pipeline-model-parallel-layout &#39;[^&]*[(][^&]*&#39; \\$ | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --report -
the copy block has no bare pipeline layout | 0 | !--pipeline-model-parallel-layout [^&] | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --report -
the copy block quotes the MoE layer pattern | 0 | ^--moe-layer-freq &#39;\(\[0\]\*3\+\[1\]\*58\)&#39; \\$ | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --report -
the copy block quotes a Bridge layout | 0 | ^&#39;model.pipeline_model_parallel_layout=&quot;[^&]*&quot;&#39; \\$ | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --report -
# an advice beside a profile of another system: a warning, and a note in the cluster section
another system's profile warns | 0 | megatune report: warning: the advice was made for dgx-h100 \(NVIDIA H100 80GB HBM3\) but the profile is gb200-nvl72 \(NVIDIA GB200 \(B200\)\) | report --advice tests/fixtures/report/advice-llama3-8b.json --profile gb200-nvl72 -o -
another system's profile is noted in the cluster section | 0 | <section id="cluster"><h2>Cluster</h2><div class="rule violated"><h4>Not the advice's system</h4> | report --advice tests/fixtures/report/advice-llama3-8b.json --profile gb200-nvl72 -o -
the advice's own profile is not noted | 0 | !Not the advice | report --advice tests/fixtures/report/advice-llama3-8b.json --profile dgx-h100 -o -
the advice's own profile does not warn | 0 | !warning | report --advice tests/fixtures/report/advice-llama3-8b.json --profile dgx-h100 -o -

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the bundled cluster profiles (profiles/*.json) from recorded data.

usage: tools/build-profiles.py DATA_DIR OUT_DIR

DATA_DIR holds the published measurements the profiles are built from:
  nccl-tests/*.txt, nccl-tests/reference/*_summary.csv (nccl-tests logs)
  calibration-refs/azure_ai_benchmarking_guide/ND_*_results.md
Every value written carries a source id; the sources list says where each
number was read and, for derived values, how it was derived.  Run it again
after changing a derivation and review the diff of profiles/.
"""
import csv
import json
import os
import re
import sys

import moe_dispatch_tables

GIB = 1 << 30


def nccl_tables(path):
    """Parse an nccl-tests log: {test_name: [(bytes, time_us, busbw)]} (out-of-place)."""
    out, cur = {}, None
    name = os.path.basename(path)
    with open(path) as f:
        for raw in f:
            line = re.sub(r'^\[\d+,\d+\]<std(out|err)>:', '', raw.rstrip('\n'))
            m = re.search(r'Collective test starting: (\w+)', line)
            if m:
                cur = m.group(1).replace('_perf', '')
                continue
            if cur is None:
                cur = 'single'
            f_ = line.split()
            if len(f_) < 8 or not f_[0].isdigit() or line.lstrip().startswith('#'):
                continue
            size = int(f_[0])
            if size == 0:
                continue
            # new layout: size count type redop root time algbw busbw #wrong ...
            # old layout: size count type redop time algbw busbw error ...
            if f_[4].lstrip('-').isdigit() and len(f_) >= 12:
                t, bus = float(f_[5]), float(f_[7])
            else:
                t, bus = float(f_[4]), float(f_[6])
            out.setdefault(cur, []).append((size, t, bus))
    if not out:
        raise SystemExit(f'{name}: no table rows')
    if len(out) == 1:
        out['single'] = next(iter(out.values()))
    return out


def azure(path):
    """Parse an Azure AI-benchmarking-guide results page."""
    txt = open(path).read()
    res = {'gemm': [], 'nccl': []}
    sec = None
    for line in txt.splitlines():
        if line.startswith('#'):
            sec = line.strip('# ').lower()
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if sec and sec.startswith('gemm') and len(cells) == 4 and cells[0].isdigit():
            res['gemm'].append(tuple(float(c) for c in cells))
        elif sec == 'hbm bandwidth' and cells[0] == 'Triad':
            res['triad_tbps'] = float(cells[1])
        elif sec and sec.startswith('flash attention') and len(cells) == 2:
            if cells[0].startswith('Flash'):
                res['fa2'] = float(cells[1])
            elif cells[0].startswith('Standard'):
                res['std_attn'] = float(cells[1])
        elif sec == 'nv bandwidth' and len(cells) == 2:
            if cells[0] == 'Host to Device':
                res['h2d'] = float(cells[1])
            elif cells[0] == 'Device to Host':
                res['d2h'] = float(cells[1])
        elif sec == 'nccl bandwidth' and len(cells) == 2 and re.match(r'^\d+[KMG]$', cells[0]):
            # Azure labels sizes loosely ("65K" is 65536 B, "1G" is 1 GiB); the
            # sweep is every power of two from 1 KiB to 8 GiB, in order.
            res['nccl'].append(float(cells[1]))
    # sizes: rebuild as an exact power-of-two sweep from 1 KiB
    res['nccl'] = [(1024 << i, bw) for i, bw in enumerate(res['nccl'])]
    hd = re.search(r'head dimension of (\d+)', txt)
    sq = re.search(r'sequence length of (\d+)', txt)
    res['attn_hd'] = int(hd.group(1))
    res['attn_seq'] = int(sq.group(1))
    return res


def summary(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r['test'].replace('_perf', ''), int(r['N']), int(r['G']))
            rows.setdefault(key, []).append(float(r['peak_busbw_GBs']))
    return {k: sum(v) / len(v) for k, v in rows.items()}


def factor(op, n):
    if op == 'all_reduce':
        return 2.0 * (n - 1) / n
    if op in ('all_gather', 'reduce_scatter', 'alltoall'):
        return (n - 1) / n
    return 1.0


def curve(op, span, ranks, per_node, source, pts, scale=1.0, size_scale=1.0):
    out = []
    for size, t, bus in pts:
        if bus <= 0 and t > 0:  # printed as 0.00: recompute from the time
            bus = size / (t * 1e3) * factor(op, ranks)
        b = bus * scale
        s = int(round(size * size_scale))
        # measured values are kept as printed; derived ones to 4 digits
        p = {'bytes': s, 'busbw_gbps': b if scale == 1.0 else float('%.4g' % b)}
        if scale == 1.0 and size_scale == 1.0 and t:
            p['time_us'] = t
        out.append(p)
    # drop duplicate sizes, keep the first
    seen, uniq = set(), []
    for p in out:
        if p['bytes'] not in seen:
            seen.add(p['bytes'])
            uniq.append(p)
    return {'op': op, 'span': span, 'ranks': ranks, 'ranks_per_node': per_node,
            'source': source, 'points': uniq}


def sweep_from_busbw(pairs):
    return [(s, 0, b) for s, b in pairs]


def write(out_dir, prof):
    path = os.path.join(out_dir, prof['name'] + '.json')
    moe_dispatch_tables.add(prof)
    with open(path + '.tmp', 'w') as f:
        json.dump(prof, f, indent=1)
        f.write('\n')
    os.replace(path + '.tmp', path)
    print('wrote', path)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    data, out_dir = sys.argv[1], sys.argv[2]
    nt = lambda f: nccl_tables(os.path.join(data, 'nccl-tests', f))
    az = lambda f: azure(os.path.join(data, 'calibration-refs', 'azure_ai_benchmarking_guide', f))
    multi = summary(os.path.join(data, 'nccl-tests', 'reference', 'xxrjun_multi-node_summary.csv'))
    single = summary(os.path.join(data, 'nccl-tests', 'reference', 'xxrjun_single-node_summary.csv'))

    h100_1n = nt('h100_1node8gpu_allcoll_nccltests2.17.8_xxrjun.txt')
    h100_10n = nt('h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt')
    h100_rs_small = nt('h100_1node8gpu_reduce_scatter_g8_together_ring.txt')['single']
    az_h100, az_h200, az_a100 = az('ND_H100_v5_results.md'), az('ND_H200_v5_results.md'), az('ND_A100_v4_results.md')
    a100_16n = nt('a100_16node128gpu_all_reduce_oldformat_abci.txt')['single']
    a100_sr = nt('a100_1node8gpu_sendrecv_g8_liplus.txt')['single']
    h200_rail = nt('h200_2node2gpu_all_reduce_1nic_dranet.txt')['single']

    XX = ('github.com/xxrjun/nccl-tests-cluster @ 455de4f8de, example-cluster01, nccl-tests 2.17.8, '
          'NCCL 2.29.2, 8x H100 80GB HBM3 per node')
    AZ = 'github.com/Azure/AI-benchmarking-guide Azure_Results/{} @ 8fd0c6e1bd'

    def h100_sources():
        return [
            {'id': 'spec-h100', 'kind': 'spec', 'citation':
             'NVIDIA H100 SXM5 datasheet: BF16/FP16 989.4, FP8 1978.9, TF32 494.7 TFLOP/s dense '
             '(sparsity figures halved), HBM3 3350 GB/s, NVLink 4 450 GB/s per direction, PCIe Gen5 '
             'x16 63 GB/s per direction (via glennklockwood.com/garden/processors/h100 and the '
             'datasheet copy at archive-lib.hpctech.co.jp; ml-engineering network/README.md @ 744d01e18b)'},
            {'id': 'mlperf-eos', 'kind': 'published', 'citation':
             'MLCommons training_results_v4.0 NVIDIA/systems/eos_n64_ngc24.04_nemo.json @ 6fe954378e: '
             '"accelerator_memory_capacity": "81559 MiB"; 8x ConnectX-7 NDR 400 Gb/s for compute; '
             '2x Xeon Platinum 8480C; host memory: the Eos DGX H100 system description gives 2.0 TB '
             'host memory (2 TiB; DGX H100 datasheet: 2TB system memory)'},
            {'id': 'azure-nd-h100-v5', 'kind': 'published', 'citation':
             AZ.format('ND_H100_v5_results.md') + ': cuBLASLt FP8 GEMM (random init, 10000 warm-up '
             'iterations), STREAM triad 2.97 TB/s, FlashAttention-2 (batch 2, seq 8192, head dim 128, '
             'direction not stated: used for forward and backward), nvbandwidth H2D 51 / D2H 52 GB/s; '
             'CUDA 12.6, NCCL 2.18.5'},
            {'id': 'derived-h100-bf16', 'kind': 'derived', 'citation':
             'BF16 GEMM sweep derived from the measured FP8 sweep (azure-nd-h100-v5) times the ratio of '
             'dense peaks 989.4 / 1978.9 = 0.5: the same fraction of peak at each shape'},
            {'id': 'azure-nd-h100-v5-nccl', 'kind': 'published', 'citation':
             AZ.format('ND_H100_v5_results.md') + ': NCCL all_reduce in-place bus bandwidth, 8 GPUs, '
             'NVLS, 1 KiB to 8 GiB (sizes labelled loosely by the source: a power-of-two sweep)'},
            {'id': 'xxrjun-1node', 'kind': 'imported', 'citation':
             XX + ', single node (cnode3-002), out-of-place busbw, 32 MiB to 16 GiB: benchmarks/'
             'example-cluster01/nccl-benchmark-results/single-node/runs/20260128-145017/without-debug/'
             'logs/nccl_N1_G8_cnode3-002.log'},
            {'id': 'together-rs-ring', 'kind': 'imported', 'citation':
             'github.com/togethercomputer/together-nccl-tests benchmarks/H100/results/20260305_220043/'
             'reduce_scatter_ring.out @ 6698e53c1d: 1 node x 8 H100 80GB HBM3, nccl-tests 2.17.9, NCCL '
             '2.26.2, NCCL_ALGO=Ring, out-of-place, 128 B to 8 GiB'},
            {'id': 'xxrjun-10node', 'kind': 'imported', 'citation':
             XX + ', 10 nodes x 8 GPUs = 80 ranks (interconnect not stated by the source; busbw '
             'consistent with 8x 400 Gb/s per node), out-of-place busbw, 32 MiB to 16 GiB: '
             '.../multi-node/runs/20260129-180219/without-debug/logs/nccl_N10_G8.log'},
            {'id': 'derived-h100-rails', 'kind': 'derived', 'citation':
             'Curves for groups of G = 1, 2, 4 GPUs per node across 10 nodes: the shape of the measured '
             '80-rank sweep (xxrjun-10node, at G/8 of the size, since each NIC carries size/G), scaled to '
             'the peak busbw of nccl_N10_G{1,2,4}.log in xxrjun reference/multi-node/summary.csv '
             '(e.g. all_reduce G1 48.89, G2 98.32, G4 196.40 GB/s)'},
            {'id': 'derived-h100-nvl4', 'kind': 'derived', 'citation':
             'Curves for 4 GPUs inside a node: the 8-GPU sweeps scaled to the mean peak busbw of '
             'nccl_N1_G4_*.log in xxrjun reference/single-node/summary.csv (all_reduce 367.8, '
             'all_gather 360.7, reduce_scatter 355.2, alltoall 356.9, sendrecv 367.8 GB/s; NCCL uses '
             'Ring, not NVLS, for 4 GPUs)'},
        ]

    def sweep(pts):
        return pts

    def peak_scaled(pts, peak_to, peak_from=None):
        peak_from = peak_from or max(b for _, _, b in pts)
        return [(s, 0, b * peak_to / peak_from) for s, _, b in pts]

    def gemm(res, dtype, src):
        return [{'dtype': dtype, 'm': int(m), 'n': int(n), 'k': int(k), 'tflops': t, 'source': src}
                for m, n, k, t in res['gemm']]

    def gemm_scaled(res, dtype, ratio, src):
        return [{'dtype': dtype, 'm': int(m), 'n': int(n), 'k': int(k),
                 'tflops': round(t * ratio, 2), 'source': src} for m, n, k, t in res['gemm']]

    def azure_attention(res, src, impls=('flash', 'unfused')):
        key = {'flash': 'fa2', 'unfused': 'std_attn'}
        return [{'impl': i, 'dtype': 'bf16', 'head_dim': res['attn_hd'], 'seq': res['attn_seq'],
                 'causal': False, 'fwd_tflops': res[key[i]], 'bwd_tflops': res[key[i]],
                 'source': src} for i in impls]

    def azure_offload(res, src):
        return [{'direction': d, 'memory': 'pinned', 'numa_local': True, 'gbps': res[d],
                 'source': src} for d in ('h2d', 'd2h')]

    def azure_hopper(res, src, bf16_src):
        """The profile parts measured by the Azure guide on a Hopper VM."""
        return {
            'memory_bandwidth': {'kernel': 'stream-triad', 'gbps': res['triad_tbps'] * 1000,
                                 'source': src},
            'gemm': gemm(res, 'fp8', src) + gemm_scaled(res, 'bf16', 989.4 / 1978.9, bf16_src),
            'attention': azure_attention(res, src),
            'offload': azure_offload(res, src),
        }

    def h100_collectives(ar_nvl_src='azure-nd-h100-v5-nccl', ar_nvl=None):
        ar_nvl = ar_nvl or sweep_from_busbw(az_h100['nccl'])
        c = [curve('all_reduce', 'nvlink', 8, 8, ar_nvl_src, ar_nvl),
             curve('all_gather', 'nvlink', 8, 8, 'xxrjun-1node', h100_1n['all_gather']),
             curve('reduce_scatter', 'nvlink', 8, 8, 'together-rs-ring', h100_rs_small),
             curve('alltoall', 'nvlink', 8, 8, 'xxrjun-1node', h100_1n['alltoall']),
             curve('sendrecv', 'nvlink', 8, 8, 'xxrjun-1node', h100_1n['sendrecv'])]
        g4 = {op: single[(op, 1, 4)] for op in ('all_reduce', 'all_gather', 'reduce_scatter',
                                                  'alltoall', 'sendrecv')}
        src8 = {'all_reduce': h100_1n['all_reduce'], 'all_gather': h100_1n['all_gather'],
                'reduce_scatter': h100_1n['reduce_scatter'], 'alltoall': h100_1n['alltoall'],
                'sendrecv': h100_1n['sendrecv']}
        for op in src8:
            c.append(curve(op, 'nvlink', 4, 4, 'derived-h100-nvl4',
                           peak_scaled(src8[op], g4[op], single[(op, 1, 8)])))
        for op in ('all_reduce', 'all_gather', 'reduce_scatter', 'alltoall', 'sendrecv'):
            c.append(curve(op, 'network', 80, 8, 'xxrjun-10node', h100_10n[op]))
            for g in (1, 2, 4):
                c.append(curve(op, 'network', 10 * g, g, 'derived-h100-rails',
                               peak_scaled(h100_10n[op], multi[(op, 10, g)]),
                               size_scale=g / 8.0))
        return c

    # ------------------------------------------------------------ dgx-h100
    h100 = {
        'schema': 'megatune.profile/1',
        'name': 'dgx-h100',
        'description': 'DGX H100: 8x H100 SXM5 80GB per node, NVLink 4 through NVSwitch, 8x 400 Gb/s '
                       'InfiniBand NDR per node. Built from published specifications and published '
                       'measurements (cuBLASLt, STREAM, FlashAttention-2, nvbandwidth, nccl-tests); '
                       'no value here was measured by megatune.',
        'sources': h100_sources(),
        'gpu': {'name': 'NVIDIA H100 80GB HBM3', 'memory_bytes': 81559 * 1024 * 1024, 'sm_count': 132,
                'compute_capability': 9.0,
                'hbm_gbps': 3350,
                'peak_tflops': {'bf16': 989.4, 'fp16': 989.4, 'fp8': 1978.9, 'tf32': 494.7},
                'source': 'spec-h100'},
        'node': {'gpus_per_node': 8, 'nvlink_domain': 8, 'nvlink_gbps': 450, 'nics_per_node': 8,
                 'nic_gbps': 50, 'pcie_gbps': 63, 'numa_nodes': 2, 'host_memory_bytes': 2 << 40,
                 'source': 'mlperf-eos'},
        'collectives': h100_collectives(),
    }
    h100.update(azure_hopper(az_h100, 'azure-nd-h100-v5', 'derived-h100-bf16'))
    write(out_dir, h100)

    # ------------------------------------------------------------ dgx-h200
    h200_src = [s for s in h100_sources() if s['id'] not in ('spec-h100', 'mlperf-eos',
                                                            'azure-nd-h100-v5', 'derived-h100-bf16',
                                                            'azure-nd-h100-v5-nccl')]
    h200_src = [
        {'id': 'spec-h200', 'kind': 'spec', 'citation':
         'H200 SXM 141GB: same GH100 tensor cores as H100 (BF16 989.4, FP8 1978.9 dense), HBM3e 4.8 TB/s, '
         '18x NVLink 4 900 GB/s, PCIe Gen5 x16 (openmetal.io, aiminingco.com; MLCommons inference v4.1 '
         'H200-SXM-141GBx8 system JSON); driver reports 143155 MiB and 132 SMs (ml-engineering '
         'network/README.md @ 744d01e18b)'},
        {'id': 'assumed-dgx-nics', 'kind': 'derived', 'citation':
         'Node network assumed as DGX H100: 8x ConnectX-7 400 Gb/s (50 GB/s) for compute '
         '(MLCommons v4.0 eos system JSON); not stated for H200 in the sources here; host memory: '
         'DGX H200 datasheet, 2 TB system memory (2 TiB)'},
        {'id': 'azure-nd-h200-v5', 'kind': 'published', 'citation':
         AZ.format('ND_H200_v5_results.md') + ': cuBLASLt FP8 GEMM, STREAM triad 4.15 TB/s, '
         'FlashAttention-2 (batch 2, seq 8192, head dim 128; used for forward and backward), '
         'nvbandwidth H2D 52 / D2H 52 GB/s; NCCL 2.20.5'},
        {'id': 'azure-nd-h200-v5-nccl', 'kind': 'published', 'citation':
         AZ.format('ND_H200_v5_results.md') + ': NCCL all_reduce in-place busbw, 8 GPUs, NVLS, '
         '1 KiB to 8 GiB'},
        {'id': 'derived-h200-bf16', 'kind': 'derived', 'citation':
         'BF16 GEMM sweep: the measured FP8 sweep (azure-nd-h200-v5) times 989.4 / 1978.9'},
        {'id': 'dranet-h200-rail', 'kind': 'imported', 'citation':
         'github.com/kubernetes-sigs/dranet site/content/docs/user/mpi-operator.md @ 967816dfbc: '
         'all_reduce, 2 nodes x 1 H200, one RDMA NIC each (GKE), out-of-place busbw, 1 KiB to 8 GiB'},
        {'id': 'h100-fabric', 'kind': 'derived', 'citation':
         'No H200 sweep for this operation: the H100 curves of the same NVLink 4 / NVSwitch fabric and '
         'NICs are used (xxrjun-1node, together-rs-ring, xxrjun-10node and their derivations, as in '
         'profile dgx-h100)'},
    ] + h200_src
    h200_coll = h100_collectives(ar_nvl_src='azure-nd-h200-v5-nccl',
                                 ar_nvl=sweep_from_busbw(az_h200['nccl']))
    for cv in h200_coll:
        if cv['source'] not in ('azure-nd-h200-v5-nccl',):
            cv['source'] = 'h100-fabric'
    h200_coll.append(curve('all_reduce', 'network', 2, 1, 'dranet-h200-rail', h200_rail))
    h200 = {
        'schema': 'megatune.profile/1', 'name': 'dgx-h200',
        'description': 'DGX H200: 8x H200 SXM 141GB per node, NVLink 4 through NVSwitch, 8x 400 Gb/s '
                       'per node (assumed). Published specifications and measurements; collective '
                       'sweeps not measured on H200 are taken from H100 on the same fabric.',
        'sources': h200_src,
        'gpu': {'name': 'NVIDIA H200', 'memory_bytes': 143155 * 1024 * 1024, 'sm_count': 132,
                'compute_capability': 9.0, 'hbm_gbps': 4800,
                'peak_tflops': {'bf16': 989.4, 'fp16': 989.4, 'fp8': 1978.9, 'tf32': 494.7},
                'source': 'spec-h200'},
        'node': {'gpus_per_node': 8, 'nvlink_domain': 8, 'nvlink_gbps': 450, 'nics_per_node': 8,
                 'nic_gbps': 50, 'pcie_gbps': 63, 'numa_nodes': 2, 'host_memory_bytes': 2 << 40,
                 'source': 'assumed-dgx-nics'},
        'collectives': h200_coll,
    }
    h200.update(azure_hopper(az_h200, 'azure-nd-h200-v5', 'derived-h200-bf16'))
    write(out_dir, h200)

    # ------------------------------------------------------------ dgx-a100-80g
    a100_ar = sweep_from_busbw(az_a100['nccl'])
    a100 = {
        'schema': 'megatune.profile/1', 'name': 'dgx-a100-80g',
        'description': 'DGX A100 80GB (the SC21 Selene node): 8x A100 SXM4 80GB, NVLink 3 through '
                       'NVSwitch, 8x 200 Gb/s HDR InfiniBand per node. Published specifications and '
                       'measurements; no NVLink SHARP and no FP8 on A100.',
        'sources': [
            {'id': 'spec-a100', 'kind': 'spec', 'citation':
             'NVIDIA A100 SXM4 80GB datasheet: BF16/FP16 312, TF32 156 TFLOP/s dense, HBM2e 80 GB at '
             '2039 GB/s, NVLink 3 300 GB/s per direction, PCIe Gen4 x16 32 GB/s per direction '
             '(glennklockwood.com/garden/processors/A100; thundercompute.com A100 guide)'},
            {'id': 'sc21-selene', 'kind': 'published', 'citation':
             'Narayanan et al., SC21 (arXiv 2104.04473) section 5: 8x A100 80GB per node with NVLink and '
             'NVSwitch, eight 200 Gb/s HDR InfiniBand HCAs for application traffic; host memory: DGX '
             'A100 640GB datasheet, system memory 2 TB (2 TiB, 32x 64 GiB DIMMs)'},
            {'id': 'azure-nd-a100-v4', 'kind': 'published', 'citation':
             AZ.format('ND_A100_v4_results.md') + ': cuBLASLt FP16 GEMM, STREAM triad 1.70 TB/s, '
             'FlashAttention-2 and PyTorch standard attention (batch 2, seq 8192, head dim 64; used '
             'for forward and backward), nvbandwidth H2D 26.28 / D2H 6.27 GB/s; CUDA 12.5, NCCL 2.18.5'},
            {'id': 'derived-a100-bf16', 'kind': 'derived', 'citation':
             'BF16 GEMM sweep = the measured FP16 sweep (azure-nd-a100-v4): equal dense peaks on A100'},
            {'id': 'azure-nd-a100-v4-nccl', 'kind': 'published', 'citation':
             AZ.format('ND_A100_v4_results.md') + ': NCCL all_reduce in-place busbw, 8 GPUs, 1 KiB to '
             '8 GiB (the source says NVLS, which A100 lacks: ring/tree)'},
            {'id': 'derived-a100-ring', 'kind': 'derived', 'citation':
             'all_gather, reduce_scatter and alltoall inside the node: the measured all_reduce busbw '
             '(azure-nd-a100-v4-nccl) at the same size; a ring all_reduce is a reduce_scatter plus an '
             'all_gather, each moving (n-1)/n of the data at the same bus bandwidth'},
            {'id': 'liplus-a100-sendrecv', 'kind': 'imported', 'citation':
             'github.com/li-plus/playground cuda/nccl.md @ b85070fb44: sendrecv_perf -g 8 on 8 A100 '
             'NVLink, 128 MiB to 1 GiB, out-of-place busbw'},
            {'id': 'abci-a100-16node', 'kind': 'imported', 'citation':
             'github.com/aistabci/abci2.0benchmark allreduce/inter_anode/job16.sh.7194312.nccl @ '
             'f0aa27f2fb: 16 nodes x 8 A100-SXM4-40GB, NCCL 2.8.4, 4 B to 32 MiB out-of-place busbw '
             '(network type not named by the source)'},
            {'id': 'nccl-812-dgx-a100', 'kind': 'published', 'citation':
             'github.com/NVIDIA/nccl/issues/812 (NVIDIA, 2023-03-31): "On an Nvidia DGX-A100 system we '
             'have 8x200Gbit/s IB cards and we measure 192GB/s AllReduce BusBW"; the size is not stated: '
             'placed at 8 GiB as the plateau of the all_reduce network curve'},
            {'id': 'derived-a100-net', 'kind': 'derived', 'citation':
             'Network all_gather, reduce_scatter and sendrecv for DGX A100: the all_reduce '
             'network curve (abci-a100-16node + nccl-812-dgx-a100) at the same busbw; groups with fewer '
             'GPUs per node scale by the number of NICs they drive. No all-to-all: at a ring\'s busbw it '
             'would move more across the network than 8 NICs of 25 GB/s carry, so it is derived from the '
             'NIC description (docs/MODEL.md 3.3)'},
        ],
        'gpu': {'name': 'NVIDIA A100-SXM4-80GB', 'memory_bytes': 80 * 10**9, 'sm_count': 108,
                'compute_capability': 8.0,
                'hbm_gbps': 2039, 'peak_tflops': {'bf16': 312, 'fp16': 312, 'tf32': 156},
                'source': 'spec-a100'},
        'node': {'gpus_per_node': 8, 'nvlink_domain': 8, 'nvlink_gbps': 300, 'nics_per_node': 8,
                 'nic_gbps': 25, 'pcie_gbps': 32, 'numa_nodes': 2, 'host_memory_bytes': 2 << 40,
                 'source': 'sc21-selene'},
        'memory_bandwidth': {'kernel': 'stream-triad', 'gbps': az_a100['triad_tbps'] * 1000,
                             'source': 'azure-nd-a100-v4'},
        'gemm': gemm(az_a100, 'fp16', 'azure-nd-a100-v4') + gemm(az_a100, 'bf16', 'derived-a100-bf16'),
        'attention': azure_attention(az_a100, 'azure-nd-a100-v4'),
        'collectives': [curve('all_reduce', 'nvlink', 8, 8, 'azure-nd-a100-v4-nccl', a100_ar)] +
                       [curve(op, 'nvlink', 8, 8, 'derived-a100-ring', a100_ar)
                        for op in ('all_gather', 'reduce_scatter', 'alltoall')] +
                       [curve('sendrecv', 'nvlink', 8, 8, 'liplus-a100-sendrecv', a100_sr)],
        'offload': azure_offload(az_a100, 'azure-nd-a100-v4'),
    }
    net = curve('all_reduce', 'network', 128, 8, 'abci-a100-16node', a100_16n)
    net['points'].append({'bytes': 8 * GIB, 'busbw_gbps': 192.0, 'source': 'nccl-812-dgx-a100'})
    a100['collectives'].append(net)
    for op in ('all_gather', 'reduce_scatter', 'sendrecv'):
        c = json.loads(json.dumps(net))
        c['op'] = op
        c['source'] = 'derived-a100-net'
        for p in c['points']:
            p.pop('time_us', None)
            p.pop('source', None)
        a100['collectives'].append(c)
    write(out_dir, a100)

    # ------------------------------------------------------------ dgx-b200 / gb200-nvl72
    b200_1n = [(1 << 20, 36.06), (16 << 20, 254.96), (64 << 20, 400.60), (256 << 20, 646.11),
               (512 << 20, 688.99), (1 << 30, 723.34), (2 << 30, 734.97), (4 << 30, 740.64),
               (8 << 30, 839.07), (16 << 30, 845.67)]
    b200_4n = [(1 << 20, 5.37), (16 << 20, 64.43), (64 << 20, 156.74), (256 << 20, 229.09),
               (512 << 20, 326.90), (1 << 30, 361.99), (2 << 30, 372.42), (4 << 30, 377.34),
               (8 << 30, 380.39), (16 << 30, 381.80)]
    ring_ratio = 682.2 / 365.6  # B200 / H200 ring all_reduce busbw at 8 GiB, 8 GPUs, NVLS off
    b_sources = [
        {'id': 'spec-b200', 'kind': 'spec', 'citation':
         'HGX B200 at 1000 W: BF16 2250, FP8 4500 TFLOP/s dense, HBM3e 8 TB/s '
         '(glennklockwood.com/garden/processors/B200); DGX B200: 1440 GB of GPU memory = 180 GB per '
         'GPU, NVLink 5 at 900 GB/s per direction through 2 NVSwitch chips '
         '(brent-newsom-nvidia.github.io/AIPS-Boom/wiki/NVIDIA-DGX-B200)'},
        {'id': 'derived-b200-gemm', 'kind': 'derived', 'citation':
         'FP8: no B200 cuBLAS FP8 sweep is published in the sources here: the GB200 sweep '
         '(azure-nd-gb200-v6) unscaled, the same GB100 die; published MXFP8 cuBLAS figures at '
         '8192^3 (2849.9 on a B200 with unlocked clocks, triton-lang/triton PR 9044; 2894.5 on a '
         'Blackwell GPU PR 9697 does not name) are within 1% of its 2876.6 (the H100 sweep scaled '
         'by the peak ratio said 2933.7)'},
        {'id': 'azure-nd-gb200-v6', 'kind': 'published', 'citation':
         AZ.format('ND_GB200_v6_results.md').replace('8fd0c6e1bd', 'fa799957e3') +
         ' (GB200 185GB, CUDA 12.8, driver 570.133.20): cuBLASLt FP8 and FP4 GEMM '
         '(random init, 10000 warm-up iterations; FP4 format not stated; at 2a370be6de '
         'the file reads FP4 7627.6 and 7487.2 at 16384^3 and 32768^3, here 5604.0 and '
         '5262.2), nvbandwidth H2D 201, D2H 193 GB/s (its FlashAttention-2 figure is '
         'not used: docs/MODEL.md 3.2)'},
        {'id': 'ao-b200-gemm', 'kind': 'published', 'citation':
         'pytorch/ao pull request 2427 (2025-06-23, benchmarks/float8/bench_matmul.py --recipe nvfp4) '
         'on one NVIDIA B200: square M=K=N from 1024 to 8192, torch.mm in BF16 (cuBLAS) and NVFP4 '
         '(E2M1 with E4M3 scales per 16 elements, torch._scaled_mm): BF16 423, 921, 1130, 1510, 1410, '
         '1450, 1420 and NVFP4 366, 1080, 1680, 3510, 4460, 5500, 5370 TFLOP/s at 1024, 1536, 2048, '
         '3072, 4096, 6144, 8192 (NVFP4 60% of the 9000 dense peak at 8192)'},
        {'id': 'derived-b200-hbm', 'kind': 'derived', 'citation':
         'Achievable HBM bandwidth: the B200 datasheet 8000 GB/s times the STREAM-triad fraction '
         'measured on H100 (2970 / 3350 = 0.887, azure-nd-h100-v5)'},
        {'id': 'derived-b200-attn', 'kind': 'derived', 'citation':
         'FlashAttention rate: the H100 measurement (azure-nd-h100-v5, 327.9 TFLOP/s) times the BF16 '
         'peak ratio 2250 / 989.4'},
        {'id': 'mleng-b200-allreduce', 'kind': 'published', 'citation':
         'stas00/ml-engineering network/README.md @ 744d01e18b ("Inter-node speed depends on intra-node '
         'speed"): AWS P6-B200 (8x B200, NVLink 5, 8x 50 GB/s EFA v4 per node), all_reduce_bench.py, '
         'torch 2.9.1+cu130, NCCL 2.27.7; busbw for 1 node and for 4 nodes, 1 MiB to 16 GiB; host '
         'memory: DGX B200 datasheet, system memory 2 TB (2 TiB), configurable to 4 TB: a node with '
         '4 TB is measured by calibrate (the topology probe reads MemTotal)'},
        {'id': 'derived-b200-nvlink', 'kind': 'derived', 'citation':
         'all_gather, reduce_scatter, alltoall and sendrecv inside the NVLink 5 domain: the H100 sweeps '
         '(xxrjun-1node, together-rs-ring) times the measured ring all_reduce ratio B200 / H200 = '
         '682.2 / 365.6 at 8 GiB with NVLS off (ml-engineering network/README.md SHARP section)'},
        {'id': 'derived-b200-net', 'kind': 'derived', 'citation':
         'Network all_gather, reduce_scatter, alltoall, sendrecv and the per-node rail curves: the '
         'H100 curves (xxrjun-10node and derived-h100-rails, profile dgx-h100), since both nodes '
         'drive 8x 400 Gb/s NICs'},
        {'id': 'pcie5-h200', 'kind': 'published', 'citation':
         'PCIe Gen5 x16 host<->device copies measured by nvbandwidth on 8x H200 (55.43 H2D, 55.06 '
         'D2H GB/s; ml-engineering network/README.md PCIe section), taken for a PCIe Gen5 B200 node'},
    ]

    def b200_common(nvl_ranks):
        coll = [curve('all_reduce', 'nvlink', 8, 8, 'mleng-b200-allreduce', sweep_from_busbw(b200_1n))]
        for op, pts, src in (('all_gather', h100_1n['all_gather'], 'derived-b200-nvlink'),
                             ('reduce_scatter', h100_rs_small, 'derived-b200-nvlink'),
                             ('alltoall', h100_1n['alltoall'], 'derived-b200-nvlink'),
                             ('sendrecv', h100_1n['sendrecv'], 'derived-b200-nvlink')):
            coll.append(curve(op, 'nvlink', 8, 8, src, pts, scale=ring_ratio))
        coll.append(curve('all_reduce', 'network', 32, 8, 'mleng-b200-allreduce', sweep_from_busbw(b200_4n)))
        for cv in h100_collectives():
            if cv['span'] == 'network' and not (cv['op'] == 'all_reduce' and cv['ranks_per_node'] == 8):
                cv['source'] = 'derived-b200-net'
                coll.append(cv)
        return coll

    # Square GEMMs measured on one B200 (pytorch/ao PR 2427, bench_matmul.py): TFLOP/s by size
    ao_b200 = {
        'bf16': [(1024, 423), (1536, 921), (2048, 1130), (3072, 1510), (4096, 1410), (6144, 1450),
                 (8192, 1420)],
        'fp4': [(1024, 366), (1536, 1080), (2048, 1680), (3072, 3510), (4096, 4460), (6144, 5500),
                (8192, 5370)],
    }

    # FP8 and FP4 measured on one GB200 (Azure ND GB200 v6, cuBLASLt): (m, n, k, TFLOP/s)
    az_gb200 = {
        'fp8': [(1024, 1024, 1024, 489.2), (2048, 2048, 2048, 2243.6), (4096, 4096, 4096, 2834.6),
                (8192, 8192, 8192, 2876.6), (16384, 16384, 16384, 2906.9),
                (32768, 32768, 32768, 2825.6), (1024, 2145, 1024, 1022.2),
                (6144, 12288, 12288, 2895.6), (802816, 192, 768, 1459.5)],
        'fp4': [(1024, 1024, 1024, 261.8), (2048, 2048, 2048, 1398.0), (4096, 4096, 4096, 4854.5),
                (8192, 8192, 8192, 7609.1), (16384, 16384, 16384, 5604.0),
                (32768, 32768, 32768, 5262.2), (1024, 2145, 1024, 548.3),
                (802816, 192, 768, 2624.5)],
    }

    # One GB100 die in both: B200 (1000 W) and GB200 (1200 W) run the same cuBLASLt kernels, and
    # the FP8 8192^3 figures agree (GB200 2877; MXFP8 2850 on a B200 and 2895 on an unnamed
    # Blackwell GPU, triton-lang/triton PRs 9044 and 9697), so what one measured stands for the
    # other unscaled.  FP4 is each one's own; `src` names, per dtype, the measurement or the
    # derivation
    def square(pts):
        return [(n, n, n, t) for n, t in pts]

    def b200_gemm(fp4, src):
        sweeps = {'bf16': square(ao_b200['bf16']), 'fp8': az_gb200['fp8'], 'fp4': fp4}
        return [e for dt in ('bf16', 'fp8', 'fp4') for e in gemm({'gemm': sweeps[dt]}, dt, src[dt])]

    b200 = {
        'schema': 'megatune.profile/1', 'name': 'dgx-b200',
        'description': 'DGX B200: 8x B200 per node, NVLink 5 through NVSwitch, 8x 400 Gb/s per node. '
                       'Specifications plus published measurements: collectives (AWS P6-B200), BF16 '
                       'and NVFP4 GEMMs (pytorch/ao); the FP8 GEMM curve is GB200\'s (Azure), '
                       'attention and HBM are derived from H100 measurements: calibrate before '
                       'relying on absolute numbers.',
        'sources': b_sources + [s for s in h100_sources() if s['id'] in
                                ('azure-nd-h100-v5', 'xxrjun-1node', 'together-rs-ring', 'xxrjun-10node',
                                 'derived-h100-rails')],
        'gpu': {'name': 'NVIDIA B200', 'memory_bytes': 180 * 10**9, 'hbm_gbps': 8000,
                'compute_capability': 10.0,
                'peak_tflops': {'bf16': 2250, 'fp16': 2250, 'fp8': 4500, 'tf32': 1100, 'fp4': 9000},
                'source': 'spec-b200'},
        'node': {'gpus_per_node': 8, 'nvlink_domain': 8, 'nvlink_gbps': 900, 'nics_per_node': 8,
                 'nic_gbps': 50, 'pcie_gbps': 63, 'numa_nodes': 2, 'host_memory_bytes': 2 << 40,
                 'source': 'mleng-b200-allreduce'},
        'memory_bandwidth': {'kernel': 'stream-triad', 'gbps': round(8000 * 2970 / 3350, 1),
                             'source': 'derived-b200-hbm'},
        'gemm': b200_gemm(square(ao_b200['fp4']), {'bf16': 'ao-b200-gemm', 'fp8': 'derived-b200-gemm',
                                                   'fp4': 'ao-b200-gemm'}),
        'attention': [{'impl': 'flash', 'dtype': 'bf16', 'head_dim': 128, 'seq': 8192, 'causal': False,
                       'fwd_tflops': round(327.9 * 2250 / 989.4, 1),
                       'bwd_tflops': round(327.9 * 2250 / 989.4, 1), 'source': 'derived-b200-attn'}],
        'collectives': b200_common(8),
        'offload': [{'direction': 'h2d', 'memory': 'pinned', 'numa_local': True, 'gbps': 55.43,
                     'source': 'pcie5-h200'},
                    {'direction': 'd2h', 'memory': 'pinned', 'numa_local': True, 'gbps': 55.06,
                     'source': 'pcie5-h200'}],
    }
    b200['sources'][-1:] = b200['sources'][-1:]
    b200['sources'][0]['citation'] += '; the tf32 peak 1100 is from verda.com/blog/gb300-nvl72-architecture'
    write(out_dir, b200)

    # GB200 NVL72: one NVLink domain of 72 GPUs, 4 GPUs per compute tray.
    gb = json.loads(json.dumps(b200))
    gb['name'] = 'gb200-nvl72'
    gb['description'] = ('GB200 NVL72: 72 B200 GPUs (1200 W variant) and 36 Grace CPUs in one NVLink 5 '
                         'domain, 4 GPUs per compute tray, one 400 Gb/s NIC per GPU. Specifications, '
                         'FP8 and FP4 GEMMs and host copies measured on GB200 (Azure), the rest '
                         'derived: calibrate before relying on absolute numbers.')
    gb['sources'].insert(0, {'id': 'spec-gb200', 'kind': 'spec', 'citation':
                             'GB200 variant of B200 at 1200 W: BF16 2500, FP8 5000 TFLOP/s dense, 192 GB '
                             'HBM3e at 8 TB/s (glennklockwood.com/garden/processors/B200); NVL72: 72 GPUs '
                             'in one NVLink 5 domain, 18 compute trays of 2 GB200 superchips; Grace-GPU '
                             'NVLink-C2C 900 GB/s bidirectional (continuumlabs.ai, datacrunch.io GB200 '
                             'NVL72 pages); host memory: each compute tray (4 GPUs) holds 2 Grace CPUs '
                             'with 480 GB LPDDR5X each (NVIDIA GB200 NVL72 datasheet: up to 17 TB '
                             'LPDDR5X in the rack = 18 trays x 2 x 480 GB), 960 GB per node'})
    gb['sources'].insert(1, {'id': 'gtc-nvl72', 'kind': 'published', 'citation':
                             'NVIDIA GTC25 slide s72583 quoted in ml-engineering network/README.md @ '
                             '744d01e18b: NVL72 all_reduce busbw 680 GB/s without NVLink SHARP, 850 GB/s '
                             'with it'})
    gb['sources'].insert(2, {'id': 'derived-nvl72', 'kind': 'derived', 'citation':
                             'Curves for 72 GPUs: the 8-GPU B200 sweeps scaled to the NVL72 plateau '
                             '(all_reduce to 850 GB/s, the other operations by 680 / 682.2, the ring '
                             'ratio of NVL72 to an 8-GPU B200 node)'})
    gb['gpu'] = {'name': 'NVIDIA GB200 (B200)', 'memory_bytes': 192 * 10**9, 'hbm_gbps': 8000,
                 'compute_capability': 10.0,
                 'peak_tflops': {'bf16': 2500, 'fp16': 2500, 'fp8': 5000, 'fp4': 10000},
                 'source': 'spec-gb200'}
    gb['node'] = {'gpus_per_node': 4, 'nvlink_domain': 72, 'nvlink_gbps': 900, 'nics_per_node': 4,
                  'nic_gbps': 50, 'pcie_gbps': 450, 'numa_nodes': 2, 'host_memory_bytes': 960e9,
                  'source': 'spec-gb200'}
    gb['gemm'] = b200_gemm(az_gb200['fp4'], {'bf16': 'derived-gb200-gemm', 'fp8': 'azure-nd-gb200-v6',
                                             'fp4': 'azure-nd-gb200-v6'})
    gb['sources'] = [x for x in gb['sources'] if x['id'] != 'derived-b200-gemm']
    gb['sources'].append({'id': 'derived-gb200-gemm', 'kind': 'derived', 'citation':
                          'BF16: the B200 measurements (ao-b200-gemm) unscaled: the same GB100 die, '
                          'whose FP8 figures at 8192^3 agree within 1% (azure-nd-gb200-v6 2876.6; MXFP8 '
                          'cuBLAS on a B200 2849.9, triton-lang/triton PR 9044); no GB200 BF16 sweep is '
                          'published here'})
    for a in gb['attention']:
        a['fwd_tflops'] = a['bwd_tflops'] = round(327.9 * 2500 / 989.4, 1)
    extra = []
    for cv in gb['collectives']:
        if cv['span'] == 'nvlink' and cv['ranks'] == 8:
            c72 = json.loads(json.dumps(cv))
            c72['ranks'] = c72['ranks_per_node'] = 72
            c72['source'] = 'derived-nvl72'
            peak = max(p['busbw_gbps'] for p in c72['points'])
            k = 850.0 / peak if cv['op'] == 'all_reduce' else 680.0 / 682.2
            for p in c72['points']:
                p['busbw_gbps'] = round(p['busbw_gbps'] * k, 3)
                p.pop('time_us', None)
            extra.append(c72)
    gb['collectives'] += extra
    # network: one NIC per GPU and 4 GPUs per tray; the 8-per-node curves stay as measured shapes
    # host<->device over NVLink-C2C as nvbandwidth measured it (azure-nd-gb200-v6)
    gb['offload'] = [{'direction': 'h2d', 'memory': 'pinned', 'numa_local': True, 'gbps': 201,
                      'source': 'azure-nd-gb200-v6'},
                     {'direction': 'd2h', 'memory': 'pinned', 'numa_local': True, 'gbps': 193,
                      'source': 'azure-nd-gb200-v6'}]
    gb['sources'].append({'id': 'te-2053-grace', 'kind': 'published', 'citation':
                          "NVIDIA/TransformerEngine issue #2053 (2025-08, 'High CPU overhead on Grace "
                          "systems'): CPU time of one Linear forward, BF16, hidden 2048, 8192 tokens, on "
                          "GB200: torch.nn.Linear 37.08 us, te.Linear 99.66 us (GH200: 33.17 and 90.53; "
                          "DGX H100 with Xeon Platinum 8480C: torch 13.48)"})
    gb['host'] = {'eager_op_us': 37.1, 'te_module_us': 99.7, 'source': 'te-2053-grace'}
    write(out_dir, gb)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure reference "findings" from recorded Kineto (PyTorch-profiler) traces.

usage: tools/findings-ref.py [--workload TEXT] [--comm-pattern REGEX]...
                             [--one-host {auto,yes,no}] [--data-root DIR]
                             [--analysis] TRACE [TRACE...]

Every TRACE is the trace of one rank of ONE job (.json or .json.gz).  The
script prints a JSON document (schema "megatune.facts/1") with the facts the
diagnose rules read, so that tests/fixtures/findings/ can hold the numbers
measured on real recorded traces.

How the numbers are measured (per rank, then pooled over ranks):

* GPU work = "ph":"X" events of cat kernel, gpu_memcpy, gpu_memset (and the
  old capitalised Kernel/Memcpy/Memset).  gpu_user_annotation and cuda_sync
  are not GPU work.
* Window: when the trace has ProfilerStep#N CPU annotations, a GPU event
  belongs to the steps when its launching cuda_runtime/cuda_driver call
  (same args.correlation) starts inside [first step start, last step end].
  GPU events with no launching call in the trace ("unlinked", e.g. launched
  before the CPU window opened) are left out, as TraceLens and HTA do.
  Without ProfilerStep annotations every GPU event is used.  The window is
  then first start .. last end of the chosen GPU events.
* Time is kept in integer nanoseconds (the floats of ns-resolution traces
  are read as decimals), and busy times are unions of intervals, because
  several streams overlap.
* Communication = kernel names containing "nccl" (any case) or the DeepEP
  prefix "dpsk::ep::", plus any --comm-pattern.  Among those, data-parallel
  traffic is all-reduce / reduce-scatter / all-gather NCCL kernels; all-to-
  all traffic is DeepEP / --comm-pattern kernels, NCCL AllToAll kernels, and
  NCCL SendRecv kernels launched under an all_to_all annotation (or whose
  "Collective name" argument says all_to_all).
* Memsets count as computation (TraceLens's gpu_timeline), memcpys as
  memory copies.
* "exposed" = time when a kernel of that class runs and no compute (non-
  communication) kernel runs, as a fraction of the window.
* median_kernel_us: the median over ranks of each rank's median kernel
  duration.
* Several ranks: slowest_rank is the rank with the largest compute-only busy
  time (union of its non-communication kernel intervals in the window), and
  slowest_rank_ratio that time over the median rank's.  Communication kernels
  are left out because an NCCL kernel spins while it waits for late peers, so
  counting it would make the rank that waits look slow.
* start_skew_s / wait_rank, only when the ranks share one clock (one host):
  the spread (max - min) over ranks of the CPU start of the first
  ProfilerStep#N present in every rank, and the rank that started earliest
  (it waits longest for its peers in the first collective).  One host is
  assumed (--one-host auto) when the traces form a complete world (ranks
  0..world_size-1 from distributedInfo, each once), all carry the same
  deviceProperties listing at least world_size GPUs, and every rank's GPU
  events run on a single device of its own; --one-host yes/no overrides.
* bubble_frac (pipeline bubble) is never computed: it needs a pipeline-
  parallel run with its stage schedule in the trace.
* A fact is left out when it cannot be measured (e.g. dp_exposed_frac when
  the trace has no data-parallel kernel at all).

When a TraceLens gpu_timeline.csv lies next to the trace
(<trace stem>_perf_report_csvs/), the TraceLens-basis numbers (all linked
events, memset counted as computation) are recomputed and compared with it;
the comparison goes into "method".

With --analysis the script prints instead a "megatune.analysis/1" document:
per rank (rank from distributedInfo, else the trace's index on the command
line), over the same window, in microseconds rounded to 3 decimals:
total_us (window), busy_us (union of kernel/memcpy/memset), idle_us (total -
busy), computation_us (union of non-communication kernels), comm_us (union of
communication kernels), exposed_comm_us (communication with no computation
kernel running), exposed_memcpy_us (memcpy/memset with no kernel of either
class running) and overlap_pct = 100 * (comm - exposed_comm) / comm (0 when
there is no communication), HTA's communication/computation overlap.
"""
import argparse
import csv
import gzip
import json
import os
import re
import statistics
import sys
from decimal import Decimal

SCHEMA = 'megatune.facts/1'
ANALYSIS_SCHEMA = 'megatune.analysis/1'

KERNEL_CATS = ('kernel', 'Kernel')
MEMCPY_CATS = ('gpu_memcpy', 'Memcpy')
MEMSET_CATS = ('gpu_memset', 'Memset')
GPU_CATS = KERNEL_CATS + MEMCPY_CATS + MEMSET_CATS
LAUNCH_CATS = ('cuda_runtime', 'cuda_driver', 'Runtime')
STEP_CATS = ('user_annotation', 'cpu_op')   # old traces put ProfilerStep in cpu_op
STEP_RE = re.compile(r'^ProfilerStep#(\d+)$')

NCCL_RE = re.compile(r'nccl', re.I)
DEEPEP_PREFIX = 'dpsk::ep::'
DP_RE = re.compile(r'all_?reduce|reduce_?scatter|all_?gather', re.I)
A2A_RE = re.compile(r'all_?to_?all', re.I)
SENDRECV_RE = re.compile(r'send_?recv', re.I)


# --------------------------------------------------------------------------
# Loading

def load_events(path):
    """Return the traceEvents list; floats are read as Decimal (exact ns)."""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt', encoding='utf-8') as f:
        doc = json.load(f, parse_float=Decimal)
    if isinstance(doc, list):           # bare Chrome-trace array
        return doc, {}
    return doc.get('traceEvents', []), doc


def ns(v):
    """Kineto µs value (int, float or Decimal) -> integer nanoseconds."""
    if isinstance(v, int):
        return v * 1000
    return int((Decimal(v) * 1000).to_integral_value())


def correlation(e):
    a = e.get('args') or {}
    return a.get('correlation')


# --------------------------------------------------------------------------
# Interval arithmetic (half-open [start, end) in ns)

def union(intervals):
    """Merge intervals into a sorted list of disjoint [s, e)."""
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(merged):
    return sum(e - s for s, e in merged)


def minus_length(a, b):
    """|a - b| for two merged interval lists."""
    total, j = 0, 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                total += b[k][0] - cur
            cur = max(cur, b[k][1])
            if cur >= e:
                break
            k += 1
        if cur < e:
            total += e - cur
    return total


# --------------------------------------------------------------------------
# Classification of GPU kernels

class Classifier:
    def __init__(self, extra_patterns):
        self.extra = [re.compile(p) for p in extra_patterns]

    def is_custom_a2a(self, name):
        """DeepEP kernels and user-given patterns: expert all-to-all."""
        return DEEPEP_PREFIX in name or any(p.search(name) for p in self.extra)

    def is_comm(self, name):
        return bool(NCCL_RE.search(name)) or self.is_custom_a2a(name)

    def comm_kind(self, ev, under_a2a):
        """'dp', 'ep' or None (other communication) for a comm kernel."""
        name = ev.get('name', '')
        if self.is_custom_a2a(name):
            return 'ep'
        coll = str((ev.get('args') or {}).get('Collective name', ''))
        if DP_RE.search(name) or DP_RE.search(coll):
            return 'dp'
        if A2A_RE.search(name) or A2A_RE.search(coll):
            return 'ep'
        if SENDRECV_RE.search(name) and under_a2a:
            return 'ep'
        return None


# --------------------------------------------------------------------------
# One rank

def analyze_rank(path, clf):
    events, doc = load_events(path)
    xs = [e for e in events if e.get('ph') == 'X' and 'ts' in e]

    steps = [e for e in xs if e.get('cat') in STEP_CATS
             and STEP_RE.match(str(e.get('name', '')))]
    launches = {}
    for e in xs:
        if e.get('cat') in LAUNCH_CATS and correlation(e) is not None:
            launches[correlation(e)] = e
    gpu = [e for e in xs if e.get('cat') in GPU_CATS]

    # Choose the GPU events of the window.
    unlinked = 0
    if steps:
        lo = min(ns(e['ts']) for e in steps)
        hi = max(ns(e['ts']) + ns(e.get('dur', 0)) for e in steps)
        chosen = []
        for g in gpu:
            launch = launches.get(correlation(g))
            if launch is None:
                if launches:
                    unlinked += 1
                    continue
                t = ns(g['ts'])          # no launch records at all: GPU time
            else:
                t = ns(launch['ts'])
            if lo <= t <= hi:
                chosen.append(g)
    else:
        chosen = list(gpu)
    if not chosen:
        raise SystemExit(f'{path}: no GPU kernel/memcpy/memset events in the window')

    # all_to_all annotations: CPU ranges per (pid, tid).
    a2a_ranges = {}
    for e in xs:
        if e.get('cat') in STEP_CATS and A2A_RE.search(str(e.get('name', ''))):
            s = ns(e['ts'])
            a2a_ranges.setdefault((e.get('pid'), e.get('tid')), []).append(
                (s, s + ns(e.get('dur', 0))))

    def launched_under_a2a(g):
        launch = launches.get(correlation(g))
        if launch is None:
            return False
        t = ns(launch['ts'])
        return any(s <= t <= e for s, e in
                   a2a_ranges.get((launch.get('pid'), launch.get('tid')), ()))

    iv = {'all': [], 'kernel': [], 'comp': [], 'comm': [], 'dp': [], 'ep': [], 'mem': []}
    kdur = []
    for g in chosen:
        s = ns(g['ts'])
        e = s + ns(g.get('dur', 0))
        iv['all'].append((s, e))
        if g.get('cat') in MEMCPY_CATS:
            iv['mem'].append((s, e))    # memcpy
            continue
        iv['kernel'].append((s, e))     # kernels and memsets (TraceLens)
        if g.get('cat') in KERNEL_CATS:
            kdur.append(e - s)
        name = str(g.get('name', ''))
        if not clf.is_comm(name):
            iv['comp'].append((s, e))
            continue
        iv['comm'].append((s, e))
        kind = clf.comm_kind(g, launched_under_a2a(g))
        if kind:
            iv[kind].append((s, e))

    u = {k: union(v) for k, v in iv.items()}
    w0 = u['all'][0][0]
    w1 = u['all'][-1][1]
    dinfo = doc.get('distributedInfo') or {}
    # CPU start of each ProfilerStep#N (earliest, should one repeat).
    step_start = {}
    for e in steps:
        k = int(STEP_RE.match(str(e['name'])).group(1))
        t = ns(e['ts'])
        if k not in step_start or t < step_start[k]:
            step_start[k] = t
    # GPU device(s) this rank ran on: args.device, else the Kineto GPU pid.
    devices = set()
    for g in chosen:
        d = (g.get('args') or {}).get('device', g.get('pid'))
        devices.add(str(d))
    props = doc.get('deviceProperties')
    return {
        'path': path,
        'rank': dinfo.get('rank'),
        'world_size': dinfo.get('world_size'),
        'step_start_ns': step_start,
        'devices': devices,
        'device_props': json.dumps(props, sort_keys=True, default=str) if props else None,
        'n_device_props': len(props) if isinstance(props, list) else 0,
        'step_ns': [ns(e.get('dur', 0)) for e in steps],
        'step_names': sorted({e['name'] for e in steps}),
        'window_ns': w1 - w0,
        'busy_ns': length(u['all']),
        'kernel_busy_ns': length(u['kernel']),
        'comp_ns': length(u['comp']),
        'comm_ns': length(u['comm']),
        # memcpy/memset with no kernel (computation or communication) running
        'exposed_mem_ns': minus_length(u['mem'], u['kernel']),
        'exposed_ns': {k: minus_length(u[k], u['comp']) for k in ('comm', 'dp', 'ep')},
        'present': {k: bool(iv[k]) for k in ('comm', 'dp', 'ep')},
        'kernel_durs': kdur,
        'n_chosen': len(chosen),
        'unlinked': unlinked,
        'events': events,
    }


# --------------------------------------------------------------------------
# TraceLens cross-check (gpu_timeline.csv next to the trace)

def tracelens_csv(path):
    base = os.path.basename(path)
    for suf in ('.json.gz', '.json'):
        if base.endswith(suf):
            base = base[:-len(suf)]
    p = os.path.join(os.path.dirname(path), base + '_perf_report_csvs', 'gpu_timeline.csv')
    if not os.path.exists(p):
        return None
    with open(p, newline='') as f:
        return {r['type']: float(r['time ms']) for r in csv.DictReader(f)}


def tracelens_basis(events):
    """TraceLens gpu_timeline on linked events: memset counts as computation."""
    linked = {correlation(e) for e in events
              if e.get('ph') == 'X' and e.get('cat') in LAUNCH_CATS}
    comp, comm, mem, alls, everything = [], [], [], [], []
    for e in events:
        if e.get('ph') != 'X' or e.get('cat') not in GPU_CATS:
            continue
        s = ns(e['ts'])
        iv = (s, s + ns(e.get('dur', 0)))
        everything.append(iv)
        if correlation(e) not in linked:
            continue
        alls.append(iv)
        if e.get('cat') in MEMCPY_CATS:
            mem.append(iv)
        elif re.search(r'nccl|rccl|cross_device_reduce', str(e.get('name', '')), re.I):
            comm.append(iv)
        else:
            comp.append(iv)
    ua = union(alls)
    total = ua[-1][1] - ua[0][0]
    ue = union(everything)          # whole trace, unlinked events included
    return {'computation_time': length(union(comp)) / 1e6,
            'busy_time': length(ua) / 1e6,
            'idle_time': (total - length(ua)) / 1e6,
            'total_time': total / 1e6,
            'n_unlinked': len(everything) - len(alls),
            'idle_pct_all_events': 100 * (1 - length(ue) / (ue[-1][1] - ue[0][0]))}


# --------------------------------------------------------------------------

def data_relpath(path, root):
    """Path relative to the shared data folder (parent of 'traces/')."""
    ap = os.path.abspath(path)
    if root is None:
        parts = ap.split(os.sep)
        if 'traces' in parts:
            i = len(parts) - 1 - parts[::-1].index('traces')
            root = os.sep.join(parts[:i]) or os.sep
    return os.path.relpath(ap, root) if root else path


def sig(x, digits=6):
    return float(f'{x:.{digits}g}')


def one_host_evidence(ranks):
    """Why the ranks are taken to share one host clock, or None if not shown."""
    n = len(ranks)
    ws = {r['world_size'] for r in ranks}
    ids = sorted(r['rank'] for r in ranks if isinstance(r['rank'], int))
    if len(ws) != 1 or not isinstance(next(iter(ws)), int) or ids != list(range(n)) \
            or next(iter(ws)) != n:
        return None
    props = {r['device_props'] for r in ranks}
    if len(props) != 1 or None in props or ranks[0]['n_device_props'] < n:
        return None
    devs = [r['devices'] for r in ranks]
    if any(len(d) != 1 for d in devs) or len(set.union(*devs)) != n:
        return None
    dl = sorted(set.union(*devs), key=lambda d: (len(d), d))
    return (f'complete {n}-rank world, identical deviceProperties listing '
            f'{ranks[0]["n_device_props"]} GPUs in every trace, each rank on a GPU of its '
            f'own ({", ".join(dl)})')


def source_text(ranks, args):
    rel = [data_relpath(r['path'], args.data_root) for r in ranks]
    source = ', '.join(rel)
    if args.workload:
        source += ': ' + args.workload
    return source


def us(t_ns):
    return round(t_ns / 1e3, 3)


def print_analysis(ranks, args):
    """Per-rank time breakdown, schema megatune.analysis/1."""
    rows = []
    for k, r in enumerate(ranks):
        comm = r['comm_ns']
        exposed = r['exposed_ns']['comm']
        rows.append({
            'rank': r['rank'] if r['rank'] is not None else k,
            'total_us': us(r['window_ns']),
            'busy_us': us(r['busy_ns']),
            'idle_us': us(r['window_ns'] - r['busy_ns']),
            'computation_us': us(r['comp_ns']),
            'comm_us': us(comm),
            'exposed_comm_us': us(exposed),
            'exposed_memcpy_us': us(r['exposed_mem_ns']),
            'overlap_pct': round(100 * (comm - exposed) / comm, 3) if comm else 0,
        })
    stepped = any(r['step_names'] for r in ranks)
    comm_def = 'kernels whose name contains "nccl" (any case) or "dpsk::ep::"'
    if args.comm_pattern:
        comm_def += ' or matches ' + ', '.join(repr(p) for p in args.comm_pattern)
    method = ('Per rank, in integer ns over the window (first start to last end of the GPU '
              'kernel/memcpy/memset events '
              + ('launched inside the ProfilerStep annotations' if stepped else 'in the trace')
              + '), reported in us: total = window, busy = union of all kernel/memcpy/memset '
              'intervals, idle = total - busy, computation = union of non-communication kernels and '
              'memsets, '
              f'comm = union of communication kernels ({comm_def}). '
              'exposed_comm = comm time with no computation kernel running, exposed_memcpy = '
              'memcpy time with no kernel or memset running (memsets count as computation, as '
              'TraceLens counts them), '
              'overlap_pct = 100 * (comm - exposed_comm) / comm (HTA communication/computation '
              'overlap; 0 without communication).')
    out = {'schema': ANALYSIS_SCHEMA, 'source': source_text(ranks, args), 'method': method,
           'ranks': rows, 'findings': []}
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write('\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('traces', nargs='+', help='one Kineto trace per rank of one job')
    ap.add_argument('--workload', default='', help='what the workload is (for "source")')
    ap.add_argument('--comm-pattern', action='append', default=[],
                    help='extra regex (case-sensitive) for all-to-all comm kernels')
    ap.add_argument('--one-host', choices=('auto', 'yes', 'no'), default='auto',
                    help='whether the traces share one host clock (for start_skew_s); '
                         'auto: judged from distributedInfo, deviceProperties and devices')
    ap.add_argument('--data-root', default=None,
                    help='folder the source paths are given relative to')
    ap.add_argument('--analysis', action='store_true',
                    help='print per-rank time breakdown (megatune.analysis/1) instead of facts')
    args = ap.parse_args()

    clf = Classifier(args.comm_pattern)
    ranks = [analyze_rank(p, clf) for p in args.traces]
    n = len(ranks)
    if args.analysis:
        print_analysis(ranks, args)
        return

    # Pooled over ranks: sum of measured time / sum of the windows.
    window = sum(r['window_ns'] for r in ranks)
    steps = [d for r in ranks for d in r['step_ns']]
    facts = {'finding.ranks': n}
    if steps:
        facts['finding.step_s'] = sig(statistics.fmean(steps) / 1e9)
    else:
        facts['finding.step_s'] = sig(window / n / 1e9)
    facts['finding.compute_frac'] = round(sum(r['comp_ns'] for r in ranks) / window, 5)
    facts['finding.idle_frac'] = round(1 - sum(r['busy_ns'] for r in ranks) / window, 5)
    for kind, key in (('comm', 'comm_exposed_frac'), ('dp', 'dp_exposed_frac'),
                      ('ep', 'ep_exposed_frac')):
        if any(r['present'][kind] for r in ranks):
            facts['finding.' + key] = round(
                sum(r['exposed_ns'][kind] for r in ranks) / window, 5)
    meds = [statistics.median(r['kernel_durs']) for r in ranks if r['kernel_durs']]
    if meds:
        facts['finding.median_kernel_us'] = round(statistics.median(meds) / 1e3, 3)
    def rank_id(k):
        return ranks[k]['rank'] if ranks[k]['rank'] is not None else k

    skew_note = ''
    if n > 1:
        # Compute-only busy time: communication kernels spin while they wait
        # for late peers and would make the waiting rank look slow.
        comp = [r['comp_ns'] for r in ranks]
        i = max(range(n), key=lambda k: comp[k])
        facts['finding.slowest_rank'] = rank_id(i)
        facts['finding.slowest_rank_ratio'] = round(comp[i] / statistics.median(comp), 4)

        if args.one_host == 'auto':
            evidence = one_host_evidence(ranks)
        else:
            evidence = ('given by --one-host yes' if args.one_host == 'yes' else None)
        common = set.intersection(*(set(r['step_start_ns']) for r in ranks))
        if evidence is None:
            skew_note = (' No start_skew_s: the ranks are not shown to share one host clock'
                         + (' (--one-host no).' if args.one_host == 'no' else '.'))
        elif not common:
            skew_note = ' No start_skew_s: no ProfilerStep number is present in every rank.'
        else:
            k0 = min(common)
            starts = [r['step_start_ns'][k0] for r in ranks]
            w = min(range(n), key=lambda k: starts[k])
            facts['finding.start_skew_s'] = sig((max(starts) - starts[w]) / 1e9)
            facts['finding.wait_rank'] = rank_id(w)
            firsts = all(min(r['step_start_ns']) == k0 for r in ranks)
            skew_note = (f' Ranks taken to share one clock ({evidence}): start_skew_s = max - '
                         f'min over ranks of the CPU start of ProfilerStep#{k0}'
                         + (" (each rank's first)" if firsts else ' (the first in every rank)')
                         + '; wait_rank = the rank that started it earliest, which waits '
                         'longest for its peers in the first collective.')

    # Method: the rules above, plus what this run actually did.
    names = sorted({s for r in ranks for s in r['step_names']})
    method = ('Intervals in integer ns, unions over all streams; fractions are of the window '
              '(first start to last end of the GPU kernel/memcpy/memset events in it'
              + (', pooled over ranks: summed times / summed windows' if n > 1 else '')
              + '); compute = non-communication kernels, idle = no kernel/memcpy/memset, '
              'exposed = that comm class running with no compute kernel; memsets count as compute '
              '(TraceLens); median kernel duration'
              + (' = median of the ranks\' medians' if n > 1 else '')
              + ('; slowest rank by union of its compute (non-communication) kernel '
                 'intervals vs the median rank' if n > 1 else '') + '. ')
    if names:
        unl = sum(r['unlinked'] for r in ranks)
        method += (f'Window: GPU events launched (cuda_runtime/driver correlation) inside '
                   f'{len(steps)} ProfilerStep annotation(s) ({", ".join(names)}); step_s is '
                   f'the mean CPU ProfilerStep duration; {unl} unlinked GPU event(s) left out.')
    else:
        method += 'No ProfilerStep: whole trace; step_s is the GPU-active window.'
    if n > 1:
        # For information: what all kernels (communication included) would give.
        busy = [r['kernel_busy_ns'] for r in ranks]
        j = max(range(n), key=lambda k: busy[k])
        method += (f' Communication kernels are left out of the slowest-rank busy time because '
                   f'they spin while waiting for late peers; by all kernels the busiest rank '
                   f'would be {rank_id(j)} ({busy[j] / statistics.median(busy):.3f}x the '
                   f'median).' + skew_note)
    if args.comm_pattern:
        method += (' Communication also matches ' +
                   ', '.join(repr(p) for p in args.comm_pattern) + ' (all-to-all).')
    for r in ranks:
        ref = tracelens_csv(r['path'])
        if ref is None:
            continue
        mine = tracelens_basis(r['events'])
        idle_pct = 100 * mine['idle_time'] / mine['total_time']
        ref_pct = 100 * ref['idle_time'] / ref['total_time']
        method += (f' TraceLens-basis check (all linked events, memset as computation) '
                   f'against its gpu_timeline.csv: computation {mine["computation_time"]:.4f} vs '
                   f'{ref["computation_time"]:.4f} ms, total {mine["total_time"]:.4f} vs '
                   f'{ref["total_time"]:.4f} ms, idle {idle_pct:.2f}% vs {ref_pct:.2f}%'
                   + ('; idle agrees' if abs(idle_pct - ref_pct) < 0.05 else '; idle differs'))
        if mine['n_unlinked']:
            method += (f' (with the {mine["n_unlinked"]} unlinked GPU events (no launching call '
                       f'in the trace) included, the whole-trace idle would be '
                       f'{mine["idle_pct_all_events"]:.2f}%)')
        method += '.'

    out = {'schema': SCHEMA, 'source': source_text(ranks, args), 'method': method,
           'facts': facts}
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()

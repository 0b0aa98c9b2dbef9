#!/usr/bin/env python3
"""Writes the simulator's mixes (runtime/simulator/mixes/*.json).

Each mix is a `smpart.profiles/1` document (so SMPART_PROFILES and
smpart-plan read it as-is) with one extra key, "mix": the launches, the
kernels the controller gets no profile for, and the simulator's settings.
The kernels' curves follow a roofline: time on S SMs is the smooth maximum
of a compute time that scales with 132 / S and a memory floor, the shape
HSM and CD-search measure; by_ctas_per_sm curves are given per archetype.
Run it again after changing an archetype; the JSON files are committed.
"""
import json
import os

NUM_SMS = 132
GPU = {
    "name": "H200 (simulated)", "num_sms": NUM_SMS,
    "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
    "regs_per_sm": 65536, "smem_per_sm": 233472,
    "clock_ghz": 1.98, "ipc_max_per_sm": 4.0, "cache_line_bytes": 128,
    "noc_bw_gbs": 10000.0, "llc_bw_gbs": 7000.0,
    "mem_bw_gbs": 4800.0, "mem_bw_util": 0.5,
    "hsm": {"c1": 0.4, "c2": 0.35, "epoch_cycles": 500000},
}

# name: block (threads, regs, smem), total blocks, compute ms and memory
# floor ms on the whole GPU, CTA curve (ctas -> ms), metrics.
ARCH = {
    "sgemm": dict(block=(256, 64, 32768), total=20000, tc=10.0, tm=1.0,
                  ctas={1: 30.0, 2: 16.0, 3: 11.0, 4: 10.0},
                  m=0.1, apki=5.0, hit=0.8, rbh=0.5, type="Up", opt=4),
    "conv": dict(block=(128, 64, 16384), total=30000, tc=12.0, tm=1.5,
                 ctas={1: 50.0, 2: 26.0, 4: 14.0, 6: 12.0, 8: 12.5},
                 m=0.15, apki=8.0, hit=0.85, rbh=0.5, type="Optimal", opt=6),
    "stream_triad": dict(block=(256, 32, 0), total=100000, tc=2.5, tm=9.7,
                         ctas={1: 40.0, 2: 22.0, 4: 12.0, 6: 10.5, 8: 10.8},
                         m=0.85, apki=80.0, hit=0.3, rbh=0.6, type="Optimal",
                         opt=6),
    "lbm": dict(block=(256, 64, 0), total=40000, tc=4.0, tm=14.0,
                ctas={1: 30.0, 2: 18.0, 3: 15.0, 4: 14.0},
                m=0.75, apki=60.0, hit=0.4, rbh=0.7, type="Up", opt=4),
    "spmv": dict(block=(256, 32, 0), total=60000, tc=3.0, tm=8.0,
                 ctas={1: 30.0, 2: 16.0, 4: 9.0, 6: 8.0, 8: 8.2},
                 m=0.6, apki=50.0, hit=0.5, rbh=0.3, type="Optimal", opt=6),
    "kmeans": dict(block=(256, 32, 0), total=50000, tc=8.0, tm=3.0,
                   ctas={1: 40.0, 2: 21.0, 4: 12.0, 6: 9.0, 8: 8.0},
                   m=0.3, apki=40.0, hit=0.9, rbh=0.5, type="Up", opt=8),
    "histo": dict(block=(256, 32, 0), total=30000, tc=6.0, tm=2.0,
                  ctas={1: 25.0, 2: 13.0, 4: 7.0, 6: 6.0, 8: 6.2},
                  m=0.2, apki=20.0, hit=0.6, rbh=0.4, type="Optimal", opt=6),
}
ARCH["unprofiled_kernel"] = dict(ARCH["spmv"], total=40000)
# A latency-critical inference kernel: ~0.28 ms alone, compute-bound
# (needs most of the GPU to run at its alone speed). Its NP target: the
# 1.25x latency target less one chunk of preemption latency (40 us) needs
# 0.281 / (1.25 x 0.281 - 0.04) = 0.91; 0.95 leaves HSM's model a margin.
ARCH["infer"] = dict(block=(128, 64, 16384), total=1024, tc=0.28, tm=0.1,
                     ctas={1: 1.0, 2: 0.55, 4: 0.3},
                     m=0.3, apki=10.0, hit=0.7, rbh=0.5, type="Up", opt=4,
                     np_target=0.95)


def time_at(a, sms):
    """Smooth roofline: compute scales with SMs, memory does not."""
    p = 4.0
    tc = a["tc"] * NUM_SMS / sms
    return round((tc ** p + a["tm"] ** p) ** (1 / p), 3)


def kernel(name, n_kernels, high):
    a = ARCH[name]
    threads, regs, smem = a["block"]
    full = time_at(a, NUM_SMS)
    by_sms = []
    for s in (8, 16, 33, 66, 99, 132):
        t = time_at(a, s)
        util = s / NUM_SMS
        by_sms.append({"sms": s, "time_ms": t,
                       "ipc": round(4.0 * NUM_SMS * (1 - a["m"]) * full / t, 1),
                       "power_w": round(60 + 300 * util * (1 - 0.4 * a["m"])
                                        + 100 * a["m"] * min(1.0, full / t), 1)})
    # The CTA curve is relative: scale it so occupancy meets by_sms at 132.
    occ = max(a["ctas"])
    scale = full / a["ctas"][occ]
    memory = a["m"] >= 0.5
    k = {
        "name": name,
        "block": {"threads": threads, "regs_per_thread": regs,
                  "smem_bytes": smem},
        "total_blocks": a["total"],
        "executed_blocks": 0,
        "isolated": {
            "by_sms": by_sms,
            "by_ctas_per_sm": [{"ctas": c, "time_ms": round(t * scale, 3)}
                               for c, t in sorted(a["ctas"].items())],
        },
        "metrics": {"llc_apki": a["apki"], "llc_hit_rate": a["hit"],
                    "bw_util": a["m"], "rbh": a["rbh"], "type": a["type"],
                    "opt_ctas_per_sm": a["opt"]},
        "shared": {"sms": NUM_SMS // n_kernels,
                   "instructions": 2.0e7 if memory else 1.0e8,
                   "cycles": 500000.0,
                   "mem_accesses": 3.0e6 * a["m"] if memory else 2.0e5,
                   "bw_util": round(a["m"] * 0.6, 3), "rbh": a["rbh"]},
        "priority": "high" if high else "normal",
    }
    if high:
        k["np_target"] = a.get("np_target", 0.8)
    return k


MIXES = {
    "mc_sgemm_stream": ("memory + compute", [("sgemm", 0), ("stream_triad", 0)]),
    "mm_stream_lbm": ("memory + memory", [("stream_triad", 0), ("lbm", 0)]),
    "cc_sgemm_conv": ("compute + compute", [("sgemm", 0), ("conv", 0)]),
    "mc_kmeans_stream": ("cache-sensitive + streaming (L1 contention)",
                         [("kmeans", 0), ("stream_triad", 0)]),
    "three_sgemm_stream_spmv": ("3 kernels", [("sgemm", 0), ("stream_triad", 0),
                                              ("spmv", 0)]),
    "four_sgemm_conv_stream_lbm": ("4 kernels", [("sgemm", 0), ("conv", 0),
                                                 ("stream_triad", 0), ("lbm", 0)]),
    "arrival_sgemm_stream": ("arrival mid-run", [("sgemm", 0),
                                                 ("stream_triad", 4.0)]),
    "arrival3_lbm_sgemm_histo": ("3 kernels, staggered arrivals",
                                 [("lbm", 0), ("sgemm", 3.0), ("histo", 6.0)]),
    "demo": ("demo: an unprofiled kernel arrives", [("sgemm", 0),
                                                    ("stream_triad", 2.0),
                                                    ("unprofiled_kernel", 5.0)]),
    # Launches may carry their own fields (blocks, count, period_ms); the
    # first kernel listed is the high-priority one.
    "latency_critical": ("latency-critical co-location: inference beside "
                         "training",
                         [("infer", 1.0, {"count": 40, "period_ms": 2.0}),
                          ("sgemm", 0, {"blocks": 100000})]),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for file, (title, launches) in MIXES.items():
        names = [n for n, *_ in launches]
        doc = {
            "schema": "smpart.profiles/1",
            "gpu": GPU,
            "kernels": [kernel(n, len(names), i == 0) for i, n in enumerate(names)],
            "mix": {
                "name": title,
                "launches": [dict({"kernel": n, "at_ms": t}, **(x[0] if x else {}))
                             for n, t, *x in launches],
                "unprofiled": [n for n in names if n == "unprofiled_kernel"],
                "sim": {"dt_us": 10, "ack_us": 40, "noise": 0.02, "seed": 1},
            },
        }
        with open(os.path.join(here, file + ".json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()

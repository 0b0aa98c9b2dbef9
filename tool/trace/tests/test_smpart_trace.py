#!/usr/bin/env python3
"""smpart-trace on a small two-kernel trace in the documented format: the
plot is a real PNG, the summary names both kernels, bad input exits 2."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(HERE), "smpart-trace")


def ev(name, ph, ts, cat, **args):
    e = {"name": name, "ph": ph, "ts": ts, "pid": 1, "tid": 1, "cat": cat, "args": args}
    if ph in ("b", "e"):
        e["id"] = hex(args["kernel_id"])
    return e


def two_kernel_trace():
    """sgemm alone on 132 SMs; stream_triad arrives at 2 ms (66/66, then
    cd-search 84/48); stream_triad's last block at 6 ms gives sgemm all."""
    E = [ev("sgemm", "b", 0, "kernel", kernel="sgemm", kernel_id=1, total_blocks=1000),
         ev("decision", "i", 10, "controller", policy="cd-search", trigger="arrival"),
         ev("allocation", "i", 20, "allocation", kernel="sgemm", kernel_id=1, sms=132,
            ctas_per_sm=4, preempted=False),
         ev("stream_triad", "b", 2000, "kernel", kernel="stream_triad", kernel_id=2,
            total_blocks=500),
         ev("decision", "i", 2010, "controller", policy="cd-search", trigger="arrival"),
         ev("allocation", "i", 2020, "allocation", kernel="sgemm", kernel_id=1, sms=84,
            ctas_per_sm=4, preempted=False),
         ev("allocation", "i", 2030, "allocation", kernel="stream_triad", kernel_id=2,
            sms=48, ctas_per_sm=8, preempted=False),
         ev("last_block_taken", "i", 6000, "kernel", kernel="stream_triad", kernel_id=2),
         ev("decision", "i", 6010, "controller", policy="cd-search",
            trigger="last_block_taken"),
         ev("allocation", "i", 6020, "allocation", kernel="sgemm", kernel_id=1, sms=132,
            ctas_per_sm=4, preempted=False),
         ev("stream_triad", "e", 6500, "kernel", kernel="stream_triad", kernel_id=2),
         ev("sgemm", "e", 9000, "kernel", kernel="sgemm", kernel_id=1)]
    return {"traceEvents": E, "displayTimeUnit": "ms",
            "otherData": {"schema": "smpart.trace/1"}}


def have_matplotlib():
    """The same look-up as the tool (Debian's package as a fallback)."""
    r = subprocess.run([sys.executable, "-c",
                        "import importlib.machinery, sys; "
                        "sys.path.insert(0, %r); " % os.path.dirname(TOOL) +
                        "l = importlib.machinery.SourceFileLoader('t', %r); " % TOOL +
                        "m = l.load_module(); m.import_matplotlib()"],
                       capture_output=True)
    return r.returncode == 0


class SmpartTrace(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.trace = os.path.join(self.dir.name, "t.json")
        with open(self.trace, "w") as f:
            json.dump(two_kernel_trace(), f)

    def tearDown(self):
        self.dir.cleanup()

    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_writes_png(self):
        out = os.path.join(self.dir.name, "t.png")
        r = self.run_tool("plot", self.trace, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(data), 10000)

    def test_summary_names_kernels_and_last_allocation(self):
        r = self.run_tool("summary", self.trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 kernels, 3 decisions", r.stdout)
        self.assertIn("stream_triad #2: 2.000 .. 6.500 ms, 1 allocations, last 48 SMs x 8 CTAs/SM",
                      r.stdout)
        self.assertIn("sgemm #1: 0.000 .. 9.000 ms, 3 allocations, last 132 SMs", r.stdout)

    def test_bad_input_exits_2_with_one_line(self):
        bad = os.path.join(self.dir.name, "bad.json")
        with open(bad, "w") as f:
            f.write("{\"schema\": 1}")
        r = self.run_tool("summary", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a trace", r.stderr)
        r = self.run_tool("summary", os.path.join(self.dir.name, "missing.json"))
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)

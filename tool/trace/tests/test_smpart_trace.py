#!/usr/bin/env python3
"""smpart-trace on a small two-kernel trace in the documented format: the
plot is a real PNG, the summary names both kernels; a bad input file (JSON
syntax, wrong types, missing) is one line naming the file and the line and
column or the JSON path, exit 1, never a traceback. Online policies' epochs
(normalised progress per kernel) get a panel of their own and their steps a
label from their notes, on a hand-written trace and on one the co-run
simulator writes (SMPART_CORUN_SIM, set by ctest when it is built)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(os.path.dirname(HERE), "smpart-trace")
MIXES = os.path.join(HERE, "..", "..", "..", "runtime", "simulator", "mixes")


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


def opaque_trace():
    """The two-kernel trace with an opaque partition (cublas) that holds 4
    SMs from 3 ms and 2 from 5 ms, and a target event."""
    doc = two_kernel_trace()
    doc["traceEvents"] += [
        ev("opaque_target", "i", 2500, "opaque", partition="cublas", sms=4),
        ev("opaque_hold", "i", 3000, "opaque", partition="cublas", sms=4,
           sm_ids=[3, 7, 64, 130], clear=True),
        ev("opaque_hold", "i", 5000, "opaque", partition="cublas", sms=2,
           sm_ids=[64, 130], clear=False)]
    doc["traceEvents"].sort(key=lambda e: e["ts"])
    return doc


def sample(kernel, kernel_id, np, steady=True):
    return {"kernel": kernel, "kernel_id": kernel_id, "sms": 66, "ctas_per_sm": 4,
            "preempted": False, "steady": steady, "np": np}


def epoch_trace():
    """The two-kernel trace under an online policy: epochs from 3 to 5 ms
    (normalised progress of both kernels) and one step at 4 ms whose notes
    name the phase, the metric and the decision."""
    doc = two_kernel_trace()
    for i, (ts, np1, np2) in enumerate([(3000, 0.5, 0.9), (4000, 0.6, 0.85),
                                        (5000, 0.8, 0.8)]):
        doc["traceEvents"] += [
            ev("np sgemm #1", "C", ts, "epoch", np=np1),
            ev("epoch", "i", ts, "epoch", index=i, start_us=ts - 1000, end_us=ts,
               kernels=[sample("sgemm", 1, np1, steady=i != 2),
                        sample("stream_triad", 2, np2)])]
    doc["traceEvents"].append(
        ev("decision", "i", 4010, "controller", policy="hsm-fair-online",
           trigger="epoch", notes=[
               "hsm-fair-online: fairness 0.706 below 0.90, predicted 0.978",
               "sgemm: NP 0.600 on 84 SMs -> 0.765 on 101"]))
    doc["traceEvents"].sort(key=lambda e: e["ts"])
    return doc


def load_tool():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("smpart_trace", TOOL)
    spec = importlib.util.spec_from_loader("smpart_trace", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def png_height(path):
    import struct
    with open(path, "rb") as f:
        return struct.unpack(">I", f.read(24)[20:24])[0]


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

    def test_summary_names_opaque_partitions(self):
        with open(self.trace, "w") as f:
            json.dump(opaque_trace(), f)
        r = self.run_tool("summary", self.trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("opaque cublas: 2 holds, at most 4 SMs, last 2 SMs [64, 130], "
                      "target 4", r.stdout)

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_draws_opaque_partitions(self):
        with open(self.trace, "w") as f:
            json.dump(opaque_trace(), f)
        plain = os.path.join(self.dir.name, "plain.png")
        out = os.path.join(self.dir.name, "t.png")
        with open(os.path.join(self.dir.name, "plain.json"), "w") as f:
            json.dump(two_kernel_trace(), f)
        self.assertEqual(self.run_tool("plot", os.path.join(self.dir.name, "plain.json"),
                                       "-o", plain, "--title", "t").returncode, 0)
        r = self.run_tool("plot", self.trace, "-o", out, "--title", "t")
        self.assertEqual(r.returncode, 0, r.stderr)
        # A panel of the partitions' SM ids makes the figure taller.
        import struct
        with open(plain, "rb") as f:
            h_plain = struct.unpack(">I", f.read(24)[20:24])[0]
        with open(out, "rb") as f:
            h_opaque = struct.unpack(">I", f.read(24)[20:24])[0]
        self.assertGreater(h_opaque, h_plain)

    def test_summary_lists_progress_and_online_steps(self):
        with open(self.trace, "w") as f:
            json.dump(epoch_trace(), f)
        r = self.run_tool("summary", self.trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sgemm #1: 0.000 .. 9.000 ms, 3 allocations, last 132 SMs x 4 "
                      "CTAs/SM, NP at its allocation 0.800 in the last of 3 epochs", r.stdout)
        # The step's first note without the policy's name; one note more.
        self.assertIn("  step 4.010 ms hsm-fair-online: fairness 0.706 below 0.90, "
                      "predicted 0.978 (+1)\n", r.stdout)
        # Without epochs, no NP and no steps.
        with open(self.trace, "w") as f:
            json.dump(two_kernel_trace(), f)
        r = self.run_tool("summary", self.trace)
        self.assertNotIn("NP", r.stdout)
        self.assertNotIn("step", r.stdout)

    def test_step_label_keeps_phase_and_decision(self):
        label = load_tool().step_label
        self.assertEqual(label("p", []), "p")
        self.assertEqual(label("tlp-dynamic", ["tlp-dynamic: bypass step 3: no bypassing "
                                               "beats none"]),
                         "bypass step 3: no bypassing beats none")
        # Too long: the phase and the decision stay, the middle goes.
        cut = label("cd-search-online", [
            "performance: stream_triad on 54 SMs: 0.947 of its 66-SM rate, beyond 5% "
            "-> stop at 66 SMs", "performance mode converged"])
        self.assertTrue(cut.startswith("performance: stream_triad"), cut)
        self.assertTrue(cut.endswith("... stop at 66 SMs (+1)"), cut)
        self.assertLessEqual(len(cut), 48 + len(" (+1)"))
        cut = label("tlp-dynamic", [
            "tlp-dynamic: tlp step (sgemm 2c+0b, stream_triad 4c+0b): projected STP "
            "1.637 -> 1.617, PUCT SP 1.538 LDST 0.922: backed off"])
        self.assertTrue(cut.startswith("tlp step (sgemm"), cut)
        self.assertTrue(cut.endswith("... backed off"), cut)
        # A separator inside parentheses is not the decision's.
        cut = label("tlp-dynamic", [
            "tlp-dynamic: bypass trial stream_triad 1 CTAs/SM: projected STP 1.623 "
            "(none: 1.637)"])
        self.assertFalse(cut.endswith("1.637)"), cut)
        self.assertTrue(cut.startswith("bypass trial stream_triad"), cut)
        self.assertLessEqual(len(cut), 48)

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_draws_normalised_progress(self):
        plain = os.path.join(self.dir.name, "plain.png")
        out = os.path.join(self.dir.name, "t.png")
        self.assertEqual(self.run_tool("plot", self.trace, "-o", plain, "--title",
                                       "t").returncode, 0)
        with open(self.trace, "w") as f:
            json.dump(epoch_trace(), f)
        r = self.run_tool("plot", self.trace, "-o", out, "--title", "t")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The progress panel makes the figure taller.
        self.assertGreater(png_height(out), png_height(plain))
        # With opaque partitions too: both panels.
        doc = epoch_trace()
        doc["traceEvents"] += [e for e in opaque_trace()["traceEvents"]
                               if e["cat"] == "opaque"]
        doc["traceEvents"].sort(key=lambda e: e["ts"])
        with open(self.trace, "w") as f:
            json.dump(doc, f)
        both = os.path.join(self.dir.name, "both.png")
        r = self.run_tool("plot", self.trace, "-o", both, "--title", "t")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(png_height(both), png_height(out))

    @unittest.skipUnless(os.environ.get("SMPART_CORUN_SIM"),
                         "SMPART_CORUN_SIM unset (ctest sets it when the co-run simulator "
                         "is built)")
    def test_simulator_trace_of_an_online_policy(self):
        r = subprocess.run([os.environ["SMPART_CORUN_SIM"],
                            os.path.join(MIXES, "mc_sgemm_stream.json"),
                            "--policy", "hsm-fair-online", "--trace", self.trace],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.run_tool("summary", self.trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"sgemm #1: .*, NP at its allocation [0-9.]+ in the last of [0-9]+ epochs")
        self.assertRegex(r.stdout, r"\n  step [0-9.]+ ms hsm-fair-online: .+\n")
        if have_matplotlib():
            out = os.path.join(self.dir.name, "sim.png")
            r = self.run_tool("plot", self.trace, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_epoch_samples_and_notes_are_checked(self):
        doc = epoch_trace()
        epoch = next(e for e in doc["traceEvents"] if e["name"] == "epoch")
        epoch["args"]["kernels"][1]["np"] = "high"
        i = doc["traceEvents"].index(epoch)
        self.bad_input(json.dumps(doc), f"traceEvents[{i}].args.kernels[1].np: "
                       "expected a finite number, got a string")
        epoch["args"]["kernels"][1]["np"] = 1e400  # JSON's 1e400 reads as inf
        self.bad_input(json.dumps(doc).replace("Infinity", "1e400"),
                       f"traceEvents[{i}].args.kernels[1].np: expected a finite "
                       "number, got a number out of range")
        epoch["args"]["kernels"] = {}
        self.bad_input(json.dumps(doc), f"traceEvents[{i}].args.kernels: "
                       "expected an array, got an object")
        doc = epoch_trace()
        doc["traceEvents"][-1]["args"]["notes"] = [1]
        self.bad_input(json.dumps(doc), ".args.notes: expected an array of strings")
        # np is null where the writer had NaN: that sample is left out.
        doc = epoch_trace()
        for e in doc["traceEvents"]:
            if e["name"] == "epoch":
                e["args"]["kernels"][0]["np"] = None
        with open(self.trace, "w") as f:
            json.dump(doc, f)
        r = self.run_tool("summary", self.trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("NP at its allocation 0.800 in the last of 3 epochs", r.stdout)
        self.assertNotIn("CTAs/SM, NP", r.stdout.splitlines()[1])

    def test_opaque_sm_ids_must_be_integers(self):
        doc = opaque_trace()
        doc["traceEvents"][-1]["args"]["sm_ids"] = ["3"]
        self.bad_input(json.dumps(doc), ".args.sm_ids: expected an array of SM ids")

    def bad_input(self, text, *expected):
        """summary and plot of a file holding text: exit 1, one line on stderr
        starting with the tool's name and naming the file, no traceback."""
        bad = os.path.join(self.dir.name, "bad.json")
        with open(bad, "w") as f:
            f.write(text)
        for args in (["summary", bad], ["plot", bad, "-o", bad + ".png"]):
            r = self.run_tool(*args)
            if args[0] == "plot" and "needs matplotlib" in r.stderr:
                continue  # no matplotlib: plot stops before reading the trace
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith(f"smpart-trace: error: {bad}"), r.stderr)
            for text in expected:
                self.assertIn(text, r.stderr)
            self.assertEqual(r.stdout, "")

    def test_not_a_trace(self):
        self.bad_input('{"schema": 1}', "not a trace (no traceEvents)")
        self.bad_input('[1, 2]', "not a trace: expected a JSON object", "got an array")

    def test_missing_file(self):
        missing = os.path.join(self.dir.name, "missing.json")
        r = self.run_tool("summary", missing)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, f"smpart-trace: error: {missing}: No such file or directory\n")

    def test_json_syntax_error_names_file_line_and_column(self):
        bad = os.path.join(self.dir.name, "bad.json")
        self.bad_input('{"traceEvents": [\n  {"ts": 1,}\n]}',
                       f"{bad}:2:12: invalid JSON: Expecting property name")
        self.bad_input("", f"{bad}:1:1: invalid JSON: Expecting value")
        self.bad_input("[" * 100000, "JSON nested too deeply")

    def test_wrong_types_name_the_json_path(self):
        self.bad_input('{"traceEvents": 5}', "traceEvents: expected an array, got a number")
        self.bad_input('{"traceEvents": {}}', "traceEvents: expected an array, got an object")
        self.bad_input('{"traceEvents": [{"ts": 1}, 7]}',
                       "traceEvents[1]: expected an object, got a number")
        self.bad_input('{"traceEvents": [{"ts": "10"}]}',
                       "traceEvents[0].ts: expected a finite number, got a string")
        self.bad_input('{"traceEvents": [{"ts": true}]}',
                       "traceEvents[0].ts: expected a finite number, got a boolean")
        self.bad_input('{"traceEvents": [{"ts": 1, "args": [1]}]}',
                       "traceEvents[0].args: expected an object, got an array")
        self.bad_input('{"traceEvents": [{"ts": 1}, {"name": "allocation", "ts": 2, '
                       '"args": {"kernel_id": 1, "sms": "all"}}]}',
                       "traceEvents[1].args.sms: expected a finite number, got a string")
        self.bad_input('{"traceEvents": [{"name": "allocation", "ts": 2, '
                       '"args": {"kernel_id": [1], "sms": 4}}]}',
                       "traceEvents[0].args.kernel_id: expected a number or a string, "
                       "got an array")
        self.bad_input('{"traceEvents": [{"name": 3}]}',
                       "traceEvents[0].name: expected a string, got a number")

    def test_numbers_a_plot_cannot_draw_are_refused(self):
        # NaN, infinity and integers too large for a float are valid JSON
        # (or Python's JSON) but no time or SM count.
        for ts in ("NaN", "Infinity", "1e400", "1" + "0" * 400):
            self.bad_input('{"traceEvents": [{"name": "x", "ts": %s}]}' % ts,
                           "traceEvents[0].ts: expected a finite number, "
                           "got a number out of range")

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_of_a_trace_without_kernels_is_an_error(self):
        empty = os.path.join(self.dir.name, "empty.json")
        with open(empty, "w") as f:
            f.write('{"traceEvents": []}')
        r = self.run_tool("plot", empty, "-o", os.path.join(self.dir.name, "e.png"))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, f"smpart-trace: error: {empty}: no kernels in the trace\n")

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_writes_the_format_its_extension_names(self):
        # x.svg is an SVG (it once held PNG bytes); an extension that is no
        # image format is refused, naming the ones there are.
        out = os.path.join(self.dir.name, "plot.svg")
        r = self.run_tool("plot", self.trace, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertIn(b"<svg", f.read(4096))
        bad = os.path.join(self.dir.name, "plot.txt")
        r = self.run_tool("plot", self.trace, "-o", bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"cannot write '{bad}': unknown image format '.txt' (one of ",
                      r.stderr)
        self.assertIn("svg", r.stderr)
        self.assertFalse(os.path.exists(bad))

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_writes_the_path_it_is_given(self):
        # A name without .png is still the file written (savefig would add
        # the extension); `-o -` is the standard output.
        out = os.path.join(self.dir.name, "plot")
        r = self.run_tool("plot", self.trace, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, f"smpart-trace: wrote {out}\n")
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertFalse(os.path.exists(out + ".png"))
        r = subprocess.run([sys.executable, TOOL, "plot", self.trace, "-o", "-"],
                           capture_output=True, cwd=self.dir.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout[:8], b"\x89PNG\r\n\x1a\n")
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "-")))

    @unittest.skipUnless(have_matplotlib(), "matplotlib missing (apt install python3-matplotlib)")
    def test_plot_never_replaces_its_trace_or_a_file_it_cannot_finish(self):
        with open(self.trace) as f:
            before = f.read()
        r = self.run_tool("plot", self.trace, "-o", self.trace)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"cannot write '{self.trace}': ", r.stderr)
        # Behind an image name, too.
        link = os.path.join(self.dir.name, "link.png")
        os.symlink(self.trace, link)
        r = self.run_tool("plot", self.trace, "-o", link)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"cannot write '{link}': it is '{self.trace}', an input", r.stderr)
        os.remove(link)
        with open(self.trace) as f:
            self.assertEqual(f.read(), before)
        # A write cut short (here by a file size limit) keeps the old file.
        old = os.path.join(self.dir.name, "old.png")
        with open(old, "w") as f:
            f.write("precious")

        def limit():
            import resource
            import signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        r = subprocess.run([sys.executable, TOOL, "plot", self.trace, "-o", old],
                           capture_output=True, text=True, preexec_fn=limit)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, f"smpart-trace: error: cannot write '{old}': "
                         "File too large\n")
        with open(old) as f:
            self.assertEqual(f.read(), "precious")
        self.assertEqual(sorted(os.listdir(self.dir.name)), ["old.png", "t.json"])

    def test_fields_the_tool_does_not_read_may_be_anything(self):
        t = two_kernel_trace()
        t["traceEvents"][0]["pid"] = "one"
        t["traceEvents"][1]["args"]["inputs"] = 5
        t["traceEvents"].append({"name": "process_name", "ph": "M", "args": None})
        with open(self.trace, "w") as f:
            json.dump(t, f)
        r = self.run_tool("summary", self.trace)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 kernels, 3 decisions", r.stdout)


class CommandLine(unittest.TestCase):
    """The convention of every smpart binary: --help and --version on stdout
    with exit 0; bad usage is an error line, a hint line and exit 2."""

    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)

    def test_help_lists_options_and_exit_codes(self):
        r = self.run_tool("--help")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        for text in ("plot TRACE.json -o OUT.png [--title T]", "--version",
                     "exit status:", "  1  the job failed", "  2  bad usage"):
            self.assertIn(text, r.stdout)

    def test_version(self):
        r = self.run_tool("--version")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        version = os.environ.get("SMPART_VERSION", r"[0-9]+\.[0-9]+\.[0-9]+")
        self.assertRegex(r.stdout, rf"^smpart-trace version {version}\n$")

    def bad_usage(self, args, problem):
        r = self.run_tool(*args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, f"smpart-trace: error: {problem}\n"
                         "smpart-trace: see 'smpart-trace --help'\n")

    def test_bad_usage_exits_2_naming_the_problem(self):
        self.bad_usage(["--bogus"], "unrecognized arguments: --bogus")
        self.bad_usage([], "expected a command: plot or summary")
        self.bad_usage(["frob"], "argument {plot,summary}: invalid choice: 'frob' "
                       "(choose from 'plot', 'summary')")
        self.bad_usage(["plot", "t.json"], "plot: -o OUT.png is required")
        self.bad_usage(["plot", "t.json", "-o"], "argument -o: expected one argument")
        # No abbreviation: --out is not --output.
        self.bad_usage(["summary", "t.json", "--out", "x"], "unrecognized arguments: --out x")


if __name__ == "__main__":
    unittest.main(verbosity=2)

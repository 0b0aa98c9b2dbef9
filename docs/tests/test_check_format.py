#!/usr/bin/env python3
"""Unit tests of docs/check_format.py: the bundled examples pass, and each
documented required field, when removed or mistyped, is reported by path."""
import copy
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import check_format  # noqa: E402

EXAMPLES = os.path.join(ROOT, "runtime", "policies", "examples")


def load(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as f:
        return json.load(f)


def remove(doc, path):
    d = copy.deepcopy(doc)
    node = d
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    return d


def replace(doc, path, value):
    d = copy.deepcopy(doc)
    node = d
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return d


class Examples(unittest.TestCase):
    def test_profiles_examples_pass(self):
        names = [n for n in os.listdir(EXAMPLES)
                 if n.endswith(".json") and "plan" not in n]
        self.assertGreaterEqual(len(names), 4)
        for n in names:
            self.assertEqual(check_format.check_document(
                "profiles", load(EXAMPLES, n)), [], n)

    def test_plan_example_passes(self):
        self.assertEqual(check_format.check_document(
            "plan", load(EXAMPLES, "compute_memory_plan.json")), [])

    def test_manifest_example_passes(self):
        self.assertEqual(check_format.check_document(
            "manifest", load(ROOT, "docs", "examples", "manifest.json")), [])


class Mutants(unittest.TestCase):
    def expect(self, kind, doc, fragment):
        errs = check_format.check_document(kind, doc)
        self.assertTrue(any(fragment in e for e in errs),
                        f"{fragment!r} not in {errs}")

    def test_profiles_required(self):
        doc = load(EXAMPLES, "compute_memory_pair.json")
        self.expect("profiles", remove(doc, ["schema"]), "schema: missing")
        self.expect("profiles", remove(doc, ["gpu", "num_sms"]), "gpu.num_sms: missing")
        self.expect("profiles", remove(doc, ["kernels", 1, "name"]), "kernels[1].name: missing")
        self.expect("profiles", replace(doc, ["schema"], "smpart.plan/1"),
                    "schema: expected \"smpart.profiles/1\"")
        self.expect("profiles", replace(doc, ["gpu", "num_sms"], "132"),
                    "gpu.num_sms: expected an integer")
        self.expect("profiles", replace(doc, ["kernels"], []), "at least one kernel")
        self.expect("profiles", replace(doc, ["kernels", 0, "metrics", "type"], "Sideways"),
                    "metrics.type")
        dup = replace(doc, ["kernels", 1, "name"], doc["kernels"][0]["name"])
        self.expect("profiles", dup, "repeats")
        self.expect("profiles",
                    remove(doc, ["kernels", 0, "isolated", "by_sms", 0, "time_ms"]),
                    "kernels[0].isolated.by_sms[0].time_ms: missing")

    def test_plan_required(self):
        doc = load(EXAMPLES, "compute_memory_plan.json")
        for key in ("name", "sms", "sm_first"):
            self.expect("plan", remove(doc, ["kernels", 0, key]), f"kernels[0].{key}: missing")
        self.expect("plan", replace(doc, ["kernels", 1, "sms"], -1),
                    "kernels[1].sms: expected a value >= 0")
        self.expect("plan", replace(doc, ["notes"], [1]), "notes[0]: expected a string")

    def test_manifest_required(self):
        doc = load(ROOT, "docs", "examples", "manifest.json")
        for key in ("name", "mangled_name", "location", "status", "reasons",
                    "parameters", "resource_hints"):
            self.expect("manifest", remove(doc, ["files", 0, "kernels", 0, key]),
                        f"files[0].kernels[0].{key}: missing")
        self.expect("manifest", replace(doc, ["files", 0, "already_transformed"], 0),
                    "already_transformed: expected a boolean")
        self.expect("manifest", replace(doc, ["files", 0, "kernels", 0, "status"], "done"),
                    "status: expected one of")

    def test_trace_required(self):
        doc = {"traceEvents": [{"name": "k", "ph": "b", "ts": 0, "pid": 1, "tid": 1}],
               "otherData": {"schema": "smpart.trace/1"}}
        self.expect("trace", doc, "traceEvents[0].id: missing")
        doc["traceEvents"][0]["id"] = "0x1"
        self.assertEqual(check_format.check_document("trace", doc), [])
        self.expect("trace", remove(doc, ["otherData"]), "otherData: missing")


if __name__ == "__main__":
    unittest.main()

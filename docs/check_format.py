#!/usr/bin/env python3
"""Checks a JSON document against the documented smpart formats.

    check_format.py {profiles|plan|manifest|trace} FILE...

Checks the required fields and their JSON types as docs/*.md describe them
(not every range: the C++ loaders do that). Prints one line per problem,
"FILE: JSON.PATH: what was expected", and exits 1 if there was any.
Python 3 standard library only.
"""
import json
import sys

NUM = (int, float)


class Field:
    def __init__(self, types, required=True, sub=None, each=None, const=None,
                 choices=None, minimum=None):
        self.types = types if isinstance(types, tuple) else (types,)
        self.required = required
        self.sub = sub          # dict of Field for objects
        self.each = each        # Field for array elements
        self.const = const
        self.choices = choices
        self.minimum = minimum


def opt(*a, **k):
    return Field(*a, required=False, **k)


def type_name(types):
    names = {dict: "an object", list: "an array", str: "a string",
             bool: "a boolean", int: "an integer", float: "a number"}
    if types == NUM:
        return "a number"
    return " or ".join(names[t] for t in types)


def check(value, field, path, errors):
    ok = isinstance(value, field.types)
    # bool is an int in Python; JSON true is not a number.
    if isinstance(value, bool) and bool not in field.types:
        ok = False
    if not ok:
        errors.append(f"{path or '(root)'}: expected {type_name(field.types)}")
        return
    if field.const is not None and value != field.const:
        errors.append(f"{path}: expected \"{field.const}\", got {json.dumps(value)}")
    if field.choices is not None and value not in field.choices:
        errors.append(f"{path}: expected one of {', '.join(field.choices)}, got {json.dumps(value)}")
    if field.minimum is not None and isinstance(value, NUM) and value < field.minimum:
        errors.append(f"{path}: expected a value >= {field.minimum}, got {value}")
    if field.sub is not None:
        for key, sub in field.sub.items():
            child = f"{path}.{key}" if path else key
            if key not in value:
                if sub.required:
                    errors.append(f"{child}: missing")
                continue
            check(value[key], sub, child, errors)
    if field.each is not None:
        for i, v in enumerate(value):
            check(v, field.each, f"{path}[{i}]", errors)


FRACTION = dict(minimum=0)

PROFILES = Field(dict, sub={
    "schema": Field(str, const="smpart.profiles/1"),
    "gpu": Field(dict, sub={
        "name": opt(str),
        "num_sms": Field(int, minimum=1),
        **{k: opt(int, minimum=0) for k in
           ("max_threads_per_sm", "max_blocks_per_sm", "regs_per_sm", "smem_per_sm")},
        **{k: opt(NUM, minimum=0) for k in
           ("clock_ghz", "ipc_max_per_sm", "cache_line_bytes", "noc_bw_gbs",
            "llc_bw_gbs", "mem_bw_gbs", "mem_bw_util")},
        "hsm": opt(dict, sub={"c1": opt(NUM), "c2": opt(NUM),
                              "epoch_cycles": opt(NUM, minimum=0)}),
    }),
    "kernels": Field(list, each=Field(dict, sub={
        "name": Field(str),
        "block": opt(dict, sub={"threads": Field(int, minimum=1),
                                "regs_per_thread": opt(int, minimum=0),
                                "smem_bytes": opt(int, minimum=0)}),
        "total_blocks": opt(int, minimum=1),
        "executed_blocks": opt(int, minimum=0),
        "isolated": opt(dict, sub={
            "by_sms": opt(list, each=Field(dict, sub={
                "sms": Field(int, minimum=1), "time_ms": Field(NUM, minimum=0),
                "ipc": opt(NUM, minimum=0), "power_w": opt(NUM, minimum=0)})),
            "by_ctas_per_sm": opt(list, each=Field(dict, sub={
                "ctas": Field(int, minimum=1), "time_ms": Field(NUM, minimum=0)})),
        }),
        "metrics": opt(dict, sub={
            "llc_apki": opt(NUM, minimum=0), "llc_hit_rate": opt(NUM, **FRACTION),
            "bw_util": opt(NUM, **FRACTION), "rbh": opt(NUM, **FRACTION),
            "type": opt(str, choices=["Up", "Optimal", "Down"]),
            "opt_ctas_per_sm": opt(int, minimum=1)}),
        "shared": opt(dict, sub={
            "sms": opt(int, minimum=1), "instructions": opt(NUM),
            "cycles": opt(NUM), "mem_accesses": opt(NUM),
            "bw_util": opt(NUM), "rbh": opt(NUM)}),
        "priority": opt(str, choices=["high", "normal", "low"]),
        "np_target": opt(NUM, minimum=0),
    })),
})

PLAN = Field(dict, sub={
    "schema": Field(str, const="smpart.plan/1"),
    "policy": opt(str), "mode": opt(str), "num_sms": opt(int, minimum=0),
    "gpu_sms": opt(int, minimum=1),
    "kernels": Field(list, each=Field(dict, sub={
        "name": Field(str),
        "sms": Field(int, minimum=0),
        "sm_first": Field(int, minimum=0),
        "ctas_per_sm": opt(int, minimum=0),
        "bypass_ctas_per_sm": opt(int, minimum=0),
        "class": opt(str),
        "predicted_np": opt(NUM, minimum=0),
        "round": opt(int, minimum=0),
        "kind": opt(str, choices=["rewritten", "opaque"]),
        "held_sm_ids": opt(list, each=Field(int, minimum=0)),
    })),
    "gated_sms": opt(int, minimum=0),
    "notes": opt(list, each=Field(str)),
})

MANIFEST = Field(dict, sub={
    "schema": Field(str, const="smpart.manifest/1"),
    "files": Field(list, each=Field(dict, sub={
        "file": Field(str),
        "already_transformed": Field(bool),
        "kernels": Field(list, each=Field(dict, sub={
            "name": Field(str),
            "mangled_name": Field(str),
            "location": Field(dict, sub={"file": Field(str),
                                         "line": Field(int, minimum=1),
                                         "column": Field(int, minimum=1)}),
            "status": Field(str, choices=["transformed", "refused", "excluded"]),
            "reasons": Field(list, each=Field(str)),
            "warnings": Field(list, each=Field(str)),
            "parameters": Field(list, each=Field(str)),
            "resource_hints": Field(dict),
            "confinement": opt(str, choices=["confined", "free"]),
            "free_because": opt(str),
        })),
        "pointer_launches": Field(list, each=Field(dict, sub={
            "callee": Field(str),
            "location": Field(dict, sub={"file": Field(str),
                                         "line": Field(int, minimum=1),
                                         "column": Field(int, minimum=1)}),
            "confinement": Field(str, choices=["confined", "free"]),
            "free_because": opt(str),
        })),
    })),
})

TRACE_EVENT = Field(dict, sub={
    "name": Field(str),
    "ph": Field(str, choices=["b", "e", "n", "i", "C", "M"]),
    "ts": Field(NUM, minimum=0),
    "pid": Field(int),
    "tid": Field(int),
    "cat": opt(str),
    "id": opt(str),
    "s": opt(str, choices=["g", "p", "t"]),
    "args": opt(dict),
})

TRACE = Field(dict, sub={
    "traceEvents": Field(list, each=TRACE_EVENT),
    "displayTimeUnit": opt(str),
    "otherData": Field(dict, sub={"schema": Field(str, const="smpart.trace/1")}),
})

FORMATS = {"profiles": PROFILES, "plan": PLAN, "manifest": MANIFEST,
           "trace": TRACE}


def extra_checks(kind, doc, errors):
    """Cross-field rules the tables cannot express."""
    if kind == "profiles" and isinstance(doc.get("kernels"), list):
        names = [k.get("name") for k in doc["kernels"] if isinstance(k, dict)]
        if not doc["kernels"]:
            errors.append("kernels: expected at least one kernel")
        for n in sorted(set(x for x in names if names.count(x) > 1)):
            errors.append(f"kernels: expected unique names, \"{n}\" repeats")
    if kind == "plan" and isinstance(doc.get("kernels"), list) and not doc["kernels"]:
        errors.append("kernels: expected at least one kernel")
    if kind == "trace" and isinstance(doc.get("traceEvents"), list):
        for i, e in enumerate(doc["traceEvents"]):
            if isinstance(e, dict) and e.get("ph") in ("b", "e", "n") and "id" not in e:
                errors.append(f"traceEvents[{i}].id: missing (async event)")


def check_document(kind, doc):
    errors = []
    check(doc, FORMATS[kind], "", errors)
    if isinstance(doc, dict):
        extra_checks(kind, doc, errors)
    return errors


def main(argv):
    if len(argv) < 3 or argv[1] not in FORMATS:
        print(f"usage: {argv[0]} {{{'|'.join(FORMATS)}}} FILE...", file=sys.stderr)
        return 2
    failed = False
    for path in argv[2:]:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: (root): {e}")
            failed = True
            continue
        for err in check_document(argv[1], doc):
            print(f"{path}: {err}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

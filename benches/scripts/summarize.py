#!/usr/bin/env python3
"""Summarizes criterion results as markdown tables.

Reads <target>/criterion/**/new/{benchmark,estimates}.json and prints, per
bench, the median time per iteration as ns/row and M rows/s with criterion's
confidence interval of the median: [low median high].

Usage: summarize.py [CRITERION_DIR] [REGEX]   (default /work/target/criterion)
       summarize.py --kernels [CRITERION_DIR] (compact per-specialization table)
"""
import json
import os
import re
import sys


def load(root):
    rows = {}
    for dirpath, _, files in os.walk(root):
        if not dirpath.endswith("/new") or "estimates.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        tp = bench.get("throughput") or {}
        elements = tp.get("Elements") or tp.get("elements") or 1
        med = est["median"]
        ci = med["confidence_interval"]
        # ns per iteration -> ns per row; rows/s from the same figures.
        ns = [ci["lower_bound"] / elements, med["point_estimate"] / elements, ci["upper_bound"] / elements]
        rows[bench["full_id"]] = ns
    return rows


def fmt_ns(ns):
    return "[%.2f **%.2f** %.2f]" % tuple(ns)


def fmt_mrows(ns):
    # Lower time bound is the higher throughput bound.
    return "[%.0f **%.0f** %.0f]" % (1e3 / ns[2], 1e3 / ns[1], 1e3 / ns[0])


def plain(rows, pattern):
    print("| bench | ns/row [low median high] | M rows/s [low median high] |")
    print("|---|---|---|")
    for name in sorted(rows):
        if pattern and not re.search(pattern, name):
            continue
        ns = rows[name]
        print("| `%s` | %s | %s |" % (name, fmt_ns(ns), fmt_mrows(ns)))


def kernels(rows):
    # full_id: FUNCTION/SPEC<TYPE>/mode/op/keys
    table = {}
    for name, ns in rows.items():
        parts = name.split("/")
        if len(parts) < 5 or parts[-1] not in ("64keys", "1Mkeys"):
            continue
        spec = "/".join(parts[1:-2])
        op = parts[-2]
        table.setdefault((spec, op), {})[parts[-1]] = ns
    print("| specialization | op | 64 keys ns/row (M rows/s) | 1M keys ns/row (M rows/s) |")
    print("|---|---|---|---|")
    for (spec, op) in sorted(table):
        cells = []
        for keys in ("64keys", "1Mkeys"):
            ns = table[(spec, op)].get(keys)
            cells.append("-" if ns is None else "%.2f (%.0f) [%.2f-%.2f]" % (ns[1], 1e3 / ns[1], ns[0], ns[2]))
        print("| `%s` | %s | %s | %s |" % (spec, op, cells[0], cells[1]))


def compact(rows):
    # One row per specialization: median ns/row (M rows/s) per op and keys.
    table = {}
    for name, ns in rows.items():
        parts = name.split("/")
        if len(parts) < 5 or parts[-1] not in ("64keys", "1Mkeys"):
            continue
        spec = "/".join(parts[1:-2])
        op = parts[-2].replace("datafusion_adapter", "datafusion")
        table.setdefault(spec, {})[(op, parts[-1])] = ns
    cols = [(op, k) for op in ("update", "merge", "datafusion") for k in ("64keys", "1Mkeys")]
    print("| specialization | " + " | ".join("%s %s" % (op, k.replace("keys", "")) for op, k in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for spec in sorted(table):
        cells = []
        for c in cols:
            ns = table[spec].get(c)
            cells.append("-" if ns is None else "%.2f (%.0f)" % (ns[1], 1e3 / ns[1]))
        print("| `%s` | %s |" % (spec, " | ".join(cells)))


def main(argv):
    if argv and argv[0] == "--compact":
        root = argv[1] if len(argv) > 1 else "/work/target/criterion"
        compact(load(root))
        return
    if argv and argv[0] == "--kernels":
        root = argv[1] if len(argv) > 1 else "/work/target/criterion"
        kernels(load(root))
        return
    root = argv[0] if argv else "/work/target/criterion"
    pattern = argv[1] if len(argv) > 1 else None
    plain(load(root), pattern)


if __name__ == "__main__":
    main(sys.argv[1:])

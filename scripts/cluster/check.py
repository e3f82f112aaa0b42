#!/usr/bin/env python3
"""Checks for scripts/cluster-test.sh (Python standard library only).

Subcommands:
  compare NAME EXPECTED_DIR ACTUAL_DIR
      Apply both Debezium-JSON changelogs (the committed files a Flink
      filesystem sink wrote) into final tables and compare them exactly.
  job-id PORT NAME TIMEOUT
      Wait for a job called NAME in the cluster's REST API, print its id.
  monitor PORT OUT_DIR STOP_FILE
      While STOP_FILE is absent: poll running jobs and keep, per job, the
      latest snapshot of their operator metrics whose names contain
      "aggforge" (and how many metrics there were) in OUT_DIR.
  check-plan PORT NAME EXPECT SAVE_DIR   (EXPECT: native | stock | report)
      The job's plan (/jobs/<id>/plan, vertex names) contains operators
      named Aggforge* and no Flink aggregate (native), or Flink's own
      aggregates and no Aggforge* (stock); report only prints them. The plan
      is saved to SAVE_DIR/plan-NAME.json.
  check-metrics OUT_DIR NAME EXPECT      (EXPECT: native | stock | report)
      From the monitor's snapshots: native needs a metric whose own name
      contains "aggforge" and rows/records-in with a non-zero count, stock
      needs no aggforge metric at all; report only prints what was found.
  wait-checkpoint PORT JOB_ID MIN TIMEOUT
      Wait until the running job completed at least MIN checkpoints.
  wait-failover PORT JOB_ID TIMEOUT
      Wait until the job left RUNNING (it noticed the lost TaskManager) or
      recorded an exception.
  check-restart PORT JOB_ID
      The job finished after restarting from a checkpoint: its checkpoint
      statistics count a restore and its exception history is not empty.

Exit status: 0 ok, 1 check failed, 2 timeout or usage error.
"""

import decimal
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request


def fail(msg, code=1):
    print(f"CHECK FAILED: {msg}", file=sys.stderr)
    sys.exit(code)


# ---------------------------------------------------------------- changelogs

PART_RE = re.compile(r"-(\d+)-(\d+)(?:\.[^.-]*)?$")


def committed_files(directory):
    """The sink's committed part files, in write order per subtask.

    The filesystem sink names committed files part-<uuid>-<subtask>-<count>;
    in-progress and staging files are hidden ('.' prefix) and marker files
    start with '_': neither is part of the result. All rows of one key come
    from one subtask, so ordering by (subtask, count) replays each key's
    changelog in order.
    """
    if not os.path.isdir(directory):
        fail(f"sink directory {directory} does not exist (the job wrote nothing?)")
    files = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in names:
            if name.startswith((".", "_")):
                continue
            m = PART_RE.search(name)
            if not m:
                fail(f"unexpected file in sink directory: {os.path.join(root, name)}")
            files.append(((int(m.group(1)), int(m.group(2)), name), os.path.join(root, name)))
    return [path for _, path in sorted(files)]


def freeze(row):
    # The format writes a row's fields in schema order: (name, value) pairs
    # in that order identify it (and keep the names for messages).
    return tuple(row.items())


def final_table(directory):
    """Apply a Debezium-JSON changelog: op c adds `after`, op d removes `before`.

    The table is a multiset of whole rows, so no key needs to be known, and a
    retraction of a row that is not there is an error (a broken changelog).
    Returns (table as {row: count}, number of changelog records, file count).
    """
    table = {}
    records = 0
    files = committed_files(directory)
    for path in files:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                rec = json.loads(line, parse_float=decimal.Decimal)
                records += 1
                op = rec.get("op")
                if op == "c":
                    row = freeze(rec["after"])
                    table[row] = table.get(row, 0) + 1
                elif op == "d":
                    row = freeze(rec["before"])
                    if table.get(row, 0) == 0:
                        fail(f"{path}:{lineno}: retraction of a row not in the table: {line}")
                    table[row] -= 1
                    if table[row] == 0:
                        del table[row]
                else:
                    fail(f"{path}:{lineno}: unknown Debezium op {op!r}")
    return table, records, len(files)


def show(row):
    return "{" + ", ".join(f"{k}={v}" for k, v in row) + "}"


def cmd_compare(name, expected_dir, actual_dir):
    expected, exp_records, exp_files = final_table(expected_dir)
    actual, act_records, act_files = final_table(actual_dir)
    if not expected:
        fail(f"{name}: the expected table ({expected_dir}) is empty")
    if expected == actual:
        print(f"  {name}: equal, {sum(actual.values())} rows "
              f"(changelogs: {exp_records} records in {exp_files} files vs "
              f"{act_records} in {act_files})")
        return
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    print(f"  {name}: DIFFERENT: {len(missing)} expected rows missing, "
          f"{len(extra)} unexpected rows", file=sys.stderr)
    for row in missing[:10]:
        print(f"    - {show(row)}", file=sys.stderr)
    for row in extra[:10]:
        print(f"    + {show(row)}", file=sys.stderr)
    for row in set(expected) & set(actual):
        if expected[row] != actual[row]:
            print(f"    count {expected[row]} vs {actual[row]}: {show(row)}", file=sys.stderr)
    fail(f"{name}: {actual_dir} differs from {expected_dir}")


# ---------------------------------------------------------------- REST API

def rest(port, path, timeout=10):
    url = f"http://localhost:{port}{path}"
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def find_job(port, name):
    jobs = [j for j in rest(port, "/jobs/overview").get("jobs", []) if j.get("name") == name]
    if not jobs:
        return None
    return max(jobs, key=lambda j: j.get("start-time", 0))


def cmd_job_id(port, name, timeout):
    deadline = time.time() + float(timeout)
    while time.time() < deadline:
        try:
            job = find_job(port, name)
            if job:
                print(job["jid"])
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    fail(f"no job named {name} appeared within {timeout} s", 2)


def aggforge_metrics(port, jid):
    """{vertex name: {metric id: value}} for metric ids containing 'aggforge'."""
    job = rest(port, f"/jobs/{jid}")
    found, total = {}, 0
    for v in job.get("vertices", []):
        ids = [m["id"] for m in rest(port, f"/jobs/{jid}/vertices/{v['id']}/metrics")]
        total += len(ids)
        wanted = [i for i in ids if "aggforge" in i.lower()]
        values = {}
        for start in range(0, len(wanted), 20):
            chunk = ",".join(wanted[start:start + 20])
            query = urllib.request.quote(chunk, safe=",")
            for m in rest(port, f"/jobs/{jid}/vertices/{v['id']}/metrics?get={query}"):
                values[m["id"]] = m.get("value")
        if values:
            found[v["name"]] = values
    return found, total


def cmd_monitor(port, out_dir, stop_file, max_seconds=1800):
    os.makedirs(out_dir, exist_ok=True)
    deadline = time.time() + max_seconds
    while not os.path.exists(stop_file) and time.time() < deadline:
        try:
            for job in rest(port, "/jobs/overview").get("jobs", []):
                if job.get("state") != "RUNNING":
                    continue
                found, total = aggforge_metrics(port, job["jid"])
                if total == 0:
                    continue  # the metric fetcher has nothing yet
                path = os.path.join(out_dir, f"metrics-{job['name']}.json")
                snapshot = {"jid": job["jid"], "name": job["name"], "time": time.time(),
                            "metric_count": total, "aggforge": found}
                with open(path + ".tmp", "w", encoding="utf-8") as f:
                    json.dump(snapshot, f, indent=1, sort_keys=True)
                os.replace(path + ".tmp", path)
        except (urllib.error.URLError, OSError, KeyError, ValueError):
            pass  # cluster starting or stopping, or the job just ended
        time.sleep(1)


def plan_texts(port, jid):
    plan = rest(port, f"/jobs/{jid}/plan")["plan"]
    texts = [n.get("description", "") for n in plan.get("nodes", [])]
    texts += [v.get("name", "") for v in rest(port, f"/jobs/{jid}").get("vertices", [])]
    return texts


# Flink's own streaming aggregate operators; "AggforgeGroupAggregate" does not
# match (no letter may precede the name).
STOCK_AGG_RE = re.compile(r"(?<![A-Za-z])(?:Local|Global|Incremental)?GroupAggregate\b")


def cmd_check_plan(port, name, expect, save_dir):
    job = find_job(port, name)
    if not job:
        fail(f"no job named {name}")
    os.makedirs(save_dir, exist_ok=True)
    with open(os.path.join(save_dir, f"plan-{name}.json"), "w", encoding="utf-8") as f:
        json.dump(rest(port, f"/jobs/{job['jid']}/plan"), f, indent=1)
    texts = plan_texts(port, job["jid"])
    native = sorted({m for t in texts for m in re.findall(r"Aggforge\w*", t)})
    stock = sorted({m for t in texts for m in STOCK_AGG_RE.findall(t)})
    print(f"  {name} ({job['jid']}): Aggforge operators {native or 'none'}, "
          f"Flink aggregates {stock or 'none'}")
    if expect == "native":
        if not native:
            fail(f"{name}: no Aggforge operator in the job's plan (is the jar in lib/ "
                 f"and table.exec.aggforge.enabled true?)")
        if stock:
            fail(f"{name}: aggregates stayed on Flink next to the native ones: {stock}")
    elif expect == "stock":
        if native:
            fail(f"{name}: the stock run has Aggforge operators: {native}")
        if not stock:
            fail(f"{name}: no Flink GroupAggregate in the plan (the check itself is broken)")


# Metric ids of a vertex are "<subtask>.<metric>" (task scope) or
# "<subtask>.<operator>.<metric>" (operator scope).
METRIC_ID_RE = re.compile(r"^(\d+)\.(?:([^.]+)\.)?(.+)$")


def split_metric(metric_id):
    m = METRIC_ID_RE.match(metric_id)
    if not m:
        return None, metric_id
    return m.group(2), m.group(3)


def is_rows_in(metric):
    return bool(re.search(r"(rows|records).?in", metric.lower()))


def cmd_check_metrics(out_dir, name, expect):
    """Metrics named *aggforge* (the metric's own name, not its operator's)."""
    path = os.path.join(out_dir, f"metrics-{name}.json")
    if not os.path.exists(path):
        msg = f"{name}: no metric snapshot was taken while the job ran ({path})"
        if expect == "report":
            print(f"  {msg}")
            return
        fail(msg)
    with open(path, encoding="utf-8") as f:
        snap = json.load(f)
    dedicated, on_operators = {}, {}
    for values in snap["aggforge"].values():
        for mid, value in values.items():
            operator, metric = split_metric(mid)
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = None
            target = dedicated if "aggforge" in metric.lower() else on_operators
            key = (operator or "(task)", metric)
            if value is not None:
                target[key] = target.get(key, 0.0) + value  # summed over subtasks
            else:
                target.setdefault(key, None)
    print(f"  {name}: {snap['metric_count']} metrics while running; "
          f"{len(dedicated)} named *aggforge*, {len(on_operators)} other metrics of "
          f"Aggforge operators")
    for (operator, metric), value in sorted(dedicated.items()):
        print(f"    aggforge metric {operator[:50]}.{metric} = {value}")
    for (operator, metric), value in sorted(on_operators.items()):
        if is_rows_in(metric):
            print(f"    operator metric {operator[:50]}.{metric} = {value}")
    rows_in = sum(v or 0 for (_, metric), v in dedicated.items() if is_rows_in(metric))
    if expect == "native" and rows_in <= 0:
        fail(f"{name}: no aggforge rows-in metric with a non-zero count "
             f"(aggforge metrics: {sorted(m for _, m in dedicated) or 'none'})")
    if expect == "stock" and (dedicated or on_operators):
        fail(f"{name}: the stock run reports aggforge metrics")


def cmd_wait_checkpoint(port, jid, minimum, timeout):
    deadline = time.time() + float(timeout)
    completed = 0
    while time.time() < deadline:
        try:
            state = rest(port, f"/jobs/{jid}")["state"]
            if state in ("FINISHED", "FAILED", "CANCELED"):
                fail(f"job {jid} ended ({state}) before {minimum} checkpoint(s) completed; "
                     f"slow the source down (CLUSTER_FAILOVER_RPS)", 2)
            completed = rest(port, f"/jobs/{jid}/checkpoints")["counts"]["completed"]
            if completed >= int(minimum):
                print(f"  job {jid}: {completed} checkpoint(s) completed")
                return
        except (urllib.error.URLError, OSError, KeyError):
            pass
        time.sleep(0.5)
    fail(f"job {jid}: {completed} checkpoint(s) completed within {timeout} s, wanted {minimum}", 2)


def exception_entries(port, jid):
    exc = rest(port, f"/jobs/{jid}/exceptions")
    return exc.get("exceptionHistory", {}).get("entries", [])


def cmd_wait_failover(port, jid, timeout):
    deadline = time.time() + float(timeout)
    while time.time() < deadline:
        try:
            state = rest(port, f"/jobs/{jid}")["state"]
            if state != "RUNNING" or exception_entries(port, jid):
                print(f"  job {jid}: {state}, the JobManager noticed the failure")
                return
        except (urllib.error.URLError, OSError, KeyError):
            pass
        time.sleep(0.5)
    fail(f"job {jid} did not notice the killed TaskManager within {timeout} s", 2)


def cmd_check_restart(port, jid):
    # The REST API serves job details from a cache (web.refresh-interval,
    # 3 s): right after the client saw the job finish it may still say RUNNING.
    deadline = time.time() + 30
    job = rest(port, f"/jobs/{jid}")
    while job["state"] not in ("FINISHED", "FAILED", "CANCELED") and time.time() < deadline:
        time.sleep(0.5)
        job = rest(port, f"/jobs/{jid}")
    cps = rest(port, f"/jobs/{jid}/checkpoints")
    entries = exception_entries(port, jid)
    restored = cps.get("counts", {}).get("restored", 0)
    latest = (cps.get("latest") or {}).get("restored") or {}
    restarting = job.get("timestamps", {}).get("RESTARTING", 0)
    first = entries[0].get("exceptionName", "?") if entries else "none"
    cause = (entries[0].get("stacktrace", "") or "").splitlines()[:1] if entries else []
    print(f"  job {jid}: {job['state']}, restored {restored} time(s) "
          f"(from checkpoint {latest.get('id', '?')}), RESTARTING at {restarting or 'never'}, "
          f"{len(entries)} exception(s): {first} {cause[0][:160] if cause else ''}")
    if job["state"] != "FINISHED":
        fail(f"job {jid} is {job['state']}, not FINISHED")
    if restored < 1 or not latest:
        fail(f"job {jid} was not restored from a checkpoint")
    if not entries:
        fail(f"job {jid} has no exception history entry for the killed TaskManager")


def main(argv):
    commands = {
        "compare": (cmd_compare, 3),
        "job-id": (lambda p, n, t: cmd_job_id(int(p), n, t), 3),
        "monitor": (lambda p, o, s: cmd_monitor(int(p), o, s), 3),
        "check-plan": (lambda p, n, e, d: cmd_check_plan(int(p), n, e, d), 4),
        "check-metrics": (cmd_check_metrics, 3),
        "wait-checkpoint": (lambda p, j, m, t: cmd_wait_checkpoint(int(p), j, m, t), 4),
        "wait-failover": (lambda p, j, t: cmd_wait_failover(int(p), j, t), 3),
        "check-restart": (lambda p, j: cmd_check_restart(int(p), j), 2),
    }
    if len(argv) < 1 or argv[0] not in commands or len(argv) - 1 != commands[argv[0]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    func, _ = commands[argv[0]]
    try:
        func(*argv[1:])
    except urllib.error.URLError as e:
        fail(f"{argv[0]}: the cluster's REST API did not answer: {e}", 2)
    except OSError as e:
        fail(f"{argv[0]}: {e}", 2)


if __name__ == "__main__":
    main(sys.argv[1:])

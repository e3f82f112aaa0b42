#!/usr/bin/env bash
# Real-cluster test: aggforge in an unmodified Apache Flink distribution.
#
#   1. Builds a Flink distribution from PyPI (apache-flink: bin/ conf/;
#      apache-flink-libraries: lib/ opt/ plugins/) plus the SQL gateway jar
#      from Maven Central, which bin/sql-client.sh needs and PyPI lacks.
#   2. Copies the aggforge jar into lib/ unchanged. Nothing of the
#      distribution is removed or replaced; each run's conf/config.yaml is the
#      distribution's with Flink's normal settings appended, and
#      `table.exec.aggforge.enabled: true` for the native runs (false: stock).
#   3. Starts a standalone cluster (bin/start-cluster.sh: one JobManager, one
#      TaskManager with 2 slots) on localhost, always stopped on exit.
#   4. Runs scripts/cluster/*.sql with bin/sql-client.sh -f: generated
#      deterministic rows, three GROUP BY queries (single phase, two-phase
#      mini-batch, GROUP BY over GROUP BY), changelogs to filesystem sinks
#      (debezium-json), once stock and once native.
#   5. Checks: native final tables == stock (scripts/cluster/check.py), the
#      job plans (REST /jobs/<id>/plan) have Aggforge operators only in the
#      native run, and (CLUSTER_CHECK_METRICS=1) aggforge operator metrics.
#   6. Failover: the native job with checkpoints every second; after two
#      completed checkpoints the TaskManager is killed (kill -9) and a new one
#      started (bin/taskmanager.sh start); Flink restores the job from the
#      checkpoint; it must finish with the same tables as the unfailed run.
#
# Usage: scripts/cluster-test.sh [AGGFORGE_JAR]
#
# Environment (all optional):
#   FLINK_VERSION          2.2.1 (also tested: 2.3.0, 1.20.3)
#   AGGFORGE_JAR           the aggforge-flink jar (or the first argument); without
#                          one every run is stock Flink (the plumbing is still tested)
#   AGGFORGE_CACHE         cache root, default ~/.cache/aggforge (wheels and the
#                          assembled distribution go to $AGGFORGE_CACHE/flink)
#   CLUSTER_EXPECT_NATIVE  1: native runs must show Aggforge operators
#                          (default: 1 with a jar, 0 without)
#   CLUSTER_CHECK_METRICS  1: native runs must report non-zero aggforge rows-in
#                          metrics, stock runs none (default 0: only reported)
#   CLUSTER_REST_PORT, CLUSTER_RPC_PORT
#                          JobManager REST and RPC ports (default: free ports
#                          picked at start, so concurrent runs do not meet)
#   CLUSTER_ROWS           40000 rows per job
#   CLUSTER_RPS            4000 rows/s (stock and native runs: ~10 s per job)
#   CLUSTER_FAILOVER_RPS   1250 rows/s (failover run: ~32 s)
#   CLUSTER_JOB_TIMEOUT    300 s per sql-client invocation
#   CLUSTER_WORK_DIR       where runs, logs and outputs go (default: a new
#                          temporary directory, removed on success)
#   CLUSTER_KEEP_WORK      1: keep the work directory on success too
#
# Needs: bash, curl, python3 with pip, Java 17, Maven.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
sql_dir=$here/cluster
check=(python3 "$here/cluster/check.py")

if (($# > 1)); then
    echo "usage: $0 [AGGFORGE_JAR] (one jar; got: $*)" >&2
    exit 2
fi
flink_version=${FLINK_VERSION:-2.2.1}
jar=${1:-${AGGFORGE_JAR:-}}
cache=${AGGFORGE_CACHE:-$HOME/.cache/aggforge}/flink
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=${CLUSTER_REST_PORT:-$(free_port)}
rpc_port=${CLUSTER_RPC_PORT:-$(free_port)}
rows=${CLUSTER_ROWS:-40000}
rps=${CLUSTER_RPS:-4000}
failover_rps=${CLUSTER_FAILOVER_RPS:-1250}
job_timeout=${CLUSTER_JOB_TIMEOUT:-300}
if [[ -n $jar ]]; then expect_native=${CLUSTER_EXPECT_NATIVE:-1}; else expect_native=${CLUSTER_EXPECT_NATIVE:-0}; fi
check_metrics=${CLUSTER_CHECK_METRICS:-0}

log() { printf '[cluster-test %3ds] %s\n' "$SECONDS" "$*"; }
die() { printf '[cluster-test %3ds] FAILED: %s\n' "$SECONDS" "$*" >&2; exit 1; }
summary=()
note() { summary+=("$*"); log "$*"; }

for tool in curl python3 java mvn timeout; do
    command -v "$tool" >/dev/null || die "$tool not found on PATH"
done
if [[ -n $jar ]]; then
    [[ -f $jar ]] || die "aggforge jar $jar does not exist"
    jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")
fi

# ------------------------------------------------------------ distribution

# A Flink distribution from the two PyPI packages, assembled once per version
# under $cache/flink-$V (pristine; every test run works on a copy).
build_distribution() {
    local dist=$cache/flink-$flink_version wheels=$cache/wheels-$flink_version
    if [[ -f $dist/.complete ]]; then
        log "Flink $flink_version distribution: $dist (cached)"
        return
    fi
    mkdir -p "$cache"
    if ! compgen -G "$wheels/apache[-_]flink-${flink_version}[-.]*" >/dev/null ||
       ! compgen -G "$wheels/apache[-_]flink[-_]libraries-${flink_version}[-.]*" >/dev/null; then
        log "Downloading apache-flink $flink_version and apache-flink-libraries $flink_version (PyPI, ~300 MB)"
        rm -rf "$wheels.tmp"
        timeout 1200 python3 -m pip download --quiet --no-deps --dest "$wheels.tmp" \
            "apache-flink==$flink_version" "apache-flink-libraries==$flink_version" ||
            die "pip download of Flink $flink_version failed"
        rm -rf "$wheels" && mv "$wheels.tmp" "$wheels"
    fi

    log "Assembling the Flink $flink_version distribution in $dist"
    local staging=$dist.tmp archive part
    rm -rf "$staging" "$dist" && mkdir -p "$staging/unpacked" "$staging/home"
    for archive in "$wheels"/*; do
        part=$staging/unpacked/$(basename "$archive")
        mkdir -p "$part"
        case $archive in
            *.whl) python3 -m zipfile -e "$archive" "$part" ;;
            *.tar.gz) tar -xzf "$archive" -C "$part" ;;
            *) die "unexpected file in $wheels: $archive" ;;
        esac
    done
    # Wheels keep the distribution under pyflink/, source archives (1.20's
    # apache-flink-libraries) under <name>-<version>/deps/.
    local sub src
    for sub in bin conf lib opt plugins log; do
        mkdir -p "$staging/home/$sub"
        for src in "$staging"/unpacked/*/pyflink/"$sub" "$staging"/unpacked/*/*/deps/"$sub"; do
            if [[ -d $src ]]; then cp -R "$src/." "$staging/home/$sub/"; fi
        done
    done
    for sub in bin/config.sh conf lib/flink-dist-"$flink_version".jar opt/flink-sql-client-"$flink_version".jar; do
        [[ -e $staging/home/$sub ]] || die "the PyPI packages of Flink $flink_version have no $sub"
    done
    chmod +x "$staging"/home/bin/*.sh "$staging/home/bin/flink"

    log "Fetching flink-sql-gateway-$flink_version.jar (Maven Central) into opt/"
    timeout 600 mvn -B -q --no-transfer-progress \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        "-Dartifact=org.apache.flink:flink-sql-gateway:$flink_version" \
        "-DoutputDirectory=$staging/home/opt" >"$staging/mvn.log" 2>&1 ||
        { cat "$staging/mvn.log" >&2; die "could not fetch flink-sql-gateway $flink_version"; }

    mv "$staging/home" "$dist"
    rm -rf "$staging"
    touch "$dist/.complete"
}

# ------------------------------------------------------------ configuration

# Each run gets its own copy of the distribution's conf/ with our settings
# appended (flat keys; Flink's YAML reader merges them with the nested
# defaults, the appended value winning) and its own log/, pid/, tmp/ and
# output directories (a TaskManager killed with -9 leaves its temporary
# files behind: they stay in the run's tmp/). bin/* and the SQL client read
# FLINK_CONF_DIR.
write_conf() {
    local run=$1 aggforge_enabled=$2 dir=$work/$1
    mkdir -p "$dir"
    cp -R "$home/conf" "$dir/conf"
    local checkpoint_dir_key=execution.checkpointing.dir
    [[ ${flink_version%%.*} -ge 2 ]] || checkpoint_dir_key=state.checkpoints.dir
    cat >>"$dir/conf/$conf_file" <<EOF

# ---- appended by aggforge scripts/cluster-test.sh (run: $run) ----
rest.address: localhost
rest.bind-address: localhost
rest.port: $port
jobmanager.rpc.address: localhost
jobmanager.rpc.port: $rpc_port
jobmanager.bind-host: localhost
taskmanager.bind-host: localhost
taskmanager.host: localhost
jobmanager.memory.process.size: 1g
taskmanager.memory.process.size: 2g
taskmanager.numberOfTaskSlots: 2
parallelism.default: 2
execution.checkpointing.interval: 1 s
$checkpoint_dir_key: file://$dir/checkpoints
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 5
restart-strategy.fixed-delay.delay: 2 s
heartbeat.interval: 1000
heartbeat.timeout: 10000
metrics.fetcher.update-interval: 1000
io.tmp.dirs: $dir/tmp
web.tmpdir: $dir/tmp
env.java.opts.taskmanager: -Djava.io.tmpdir=$dir/tmp
table.exec.aggforge.enabled: $aggforge_enabled
EOF
    mkdir -p "$dir/tmp"
}

use_run() {
    current_run=$1
    export FLINK_CONF_DIR=$work/$1/conf FLINK_LOG_DIR=$work/$1/log FLINK_PID_DIR=$work/$1/pid
    mkdir -p "$FLINK_LOG_DIR" "$FLINK_PID_DIR"
}

# ------------------------------------------------------------ cluster

rest_up() { curl -fsS --max-time 2 "http://localhost:$port/overview" 2>/dev/null; }

start_cluster() {
    local run=$1
    use_run "$run"
    if rest_up >/dev/null; then
        die "something already answers on localhost:$port (set CLUSTER_REST_PORT)"
    fi
    log "[$run] bin/start-cluster.sh (logs: $FLINK_LOG_DIR)"
    cluster_running=1
    "$home/bin/start-cluster.sh" >"$work/$run/start-cluster.out" 2>&1 ||
        { cat "$work/$run/start-cluster.out" >&2; die "start-cluster.sh failed"; }
    local deadline=$((SECONDS + 90)) overview=""
    while ((SECONDS < deadline)); do
        overview=$(rest_up || true)
        if [[ $overview == *'"slots-total":2'* ]]; then
            # The JobManager answering must be this run's (its io.tmp.dirs).
            local config
            config=$(curl -fsS --max-time 5 "http://localhost:$port/jobmanager/config" || true)
            [[ $config == *"\"value\":\"$work/$run/tmp\""* ]] ||
                die "localhost:$port answers, but not with this run's configuration (another cluster?)"
            log "[$run] cluster up on localhost:$port: $overview"
            return
        fi
        sleep 1
    done
    die "the cluster did not come up within 90 s (REST: ${overview:-no answer}); see $FLINK_LOG_DIR"
}

stop_cluster() {
    [[ ${cluster_running:-0} == 1 ]] || return 0
    cluster_running=0
    log "[$current_run] bin/stop-cluster.sh"
    timeout 60 "$home/bin/stop-cluster.sh" >"$work/$current_run/stop-cluster.out" 2>&1 || true
    # Anything still alive that this run started (e.g. a TaskManager the pid
    # file no longer lists last) is ended by its pid.
    local pidfile pid
    for pidfile in "$FLINK_PID_DIR"/*.pid; do
        [[ -f $pidfile ]] || continue
        while read -r pid; do
            if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
                kill -9 "$pid" 2>/dev/null || true
            fi
        done <"$pidfile"
    done
}

cleanup() {
    local rc=$?
    if [[ -n ${monitor_pid:-} ]]; then kill "$monitor_pid" 2>/dev/null || true; fi
    if [[ -n ${sql_pid:-} ]]; then kill "$sql_pid" 2>/dev/null || true; fi
    stop_cluster
    if [[ -n ${work:-} && -d ${work:-} ]]; then
        if [[ $rc == 0 && ${CLUSTER_KEEP_WORK:-0} != 1 ]]; then
            rm -rf "$work"
        else
            echo "[cluster-test] logs, SQL and outputs kept in $work" >&2
        fi
    fi
    exit "$rc"
}

# ------------------------------------------------------------ jobs

# Starts bin/sql-client.sh -f on tables.sql + the given job files in the
# background (sql_pid) plus the REST monitor that snapshots metrics.
submit() {
    local run=$1 rate=$2 file
    shift 2
    local script=$work/$run/jobs.sql
    for file in tables.sql "$@"; do cat "$sql_dir/$file"; echo; done |
        sed -e "s|@ROWS@|$rows|g" -e "s|@ROWS_PER_SECOND@|$rate|g" \
            -e "s|@OUT@|$work/$run/out|g" -e "s|@JOB_PREFIX@|aggforge-$run|g" >"$script"
    rm -f "$work/$run/monitor.stop"
    "${check[@]}" monitor "$port" "$work/$run/rest" "$work/$run/monitor.stop" &
    monitor_pid=$!
    log "[$run] bin/sql-client.sh -f $script ($rows rows at $rate rows/s per job)"
    timeout -k 10 "$job_timeout" "$home/bin/sql-client.sh" -f "$script" \
        --history "$work/$run/sql-client.history" </dev/null >"$work/$run/sql-client.out" 2>&1 &
    sql_pid=$!
}

# Waits for the SQL client (it returns when its last job finished).
await_sql() {
    local run=$1 rc=0
    wait "$sql_pid" || rc=$?
    sql_pid=""
    touch "$work/$run/monitor.stop"
    wait "$monitor_pid" || true
    monitor_pid=""
    if [[ $rc == 124 ]]; then
        die "[$run] sql-client did not finish within $job_timeout s (CLUSTER_JOB_TIMEOUT); see $work/$run/sql-client.out"
    fi
    # The client exits 0 even when a statement fails: look for its [ERROR].
    if [[ $rc != 0 ]] || grep -q '\[ERROR\]' "$work/$run/sql-client.out"; then
        tail -n 40 "$work/$run/sql-client.out" >&2
        die "[$run] sql-client failed (exit $rc); see $work/$run/sql-client.out and $FLINK_LOG_DIR"
    fi
    log "[$run] sql-client done: $(grep -c 'Complete execution' "$work/$run/sql-client.out" || true) job(s) finished"
    # What aggforge's planner hook logged in the client (informative only).
    local hook
    hook=$(cat "$FLINK_LOG_DIR"/*sql-client*.log 2>/dev/null | grep 'aggforge: group aggregate' || true)
    if [[ -n $hook ]]; then
        log "[$run] aggforge planner log (client): $(grep -c 'runs natively' <<<"$hook" || true)" \
            "'runs natively' and $(grep -c 'stays on Flink' <<<"$hook" || true) 'stays on Flink' lines"
        grep 'stays on Flink' <<<"$hook" | sed 's/^.*aggforge: /    /' | cut -c1-300 || true
    fi
}

plan_expectation() {  # $1: native | stock
    if [[ $1 == stock ]]; then echo stock
    elif [[ $expect_native == 1 ]]; then echo native
    else echo report
    fi
}

metrics_expectation() {
    if [[ $check_metrics == 1 ]]; then plan_expectation "$1"; else echo report; fi
}

check_jobs() {  # run mode job...
    local run=$1 mode=$2 job out
    shift 2
    for job in "$@"; do
        out=$("${check[@]}" check-plan "$port" "aggforge-$run-$job" "$(plan_expectation "$mode")" "$work/$run/rest") ||
            { echo "$out"; die "[$run] plan check of $job"; }
        echo "$out"
        summary+=("${out#  }")
        "${check[@]}" check-metrics "$work/$run/rest" "aggforge-$run-$job" "$(metrics_expectation "$mode")" ||
            die "[$run] metrics check of $job"
    done
}

# One cluster, both jobs (immediate: q1 + q3; two-phase: q2), plan checks.
run_pass() {  # run aggforge-enabled mode
    local run=$1 start=$SECONDS
    write_conf "$run" "$2"
    start_cluster "$run"
    submit "$run" "$rps" job-immediate.sql job-two-phase.sql
    await_sql "$run"
    check_jobs "$run" "$3" immediate two-phase
    stop_cluster
    note "$run run: table.exec.aggforge.enabled=$2, 2 jobs, $((SECONDS - start)) s"
}

run_failover() {
    local run=failover start=$SECONDS jid tm_pid pidfile
    write_conf "$run" true
    start_cluster "$run"
    submit "$run" "$failover_rps" job-immediate.sql
    jid=$("${check[@]}" job-id "$port" "aggforge-$run-immediate" 120) || die "[$run] the job did not start"
    "${check[@]}" wait-checkpoint "$port" "$jid" 2 120 || die "[$run] no checkpoint to restore from"

    pidfile=$(compgen -G "$FLINK_PID_DIR/flink-*-taskexecutor.pid") || die "[$run] no TaskManager pid file"
    tm_pid=$(tail -n 1 "$pidfile")
    log "[$run] kill -9 $tm_pid (the TaskManager)"
    kill -9 "$tm_pid"
    "${check[@]}" wait-failover "$port" "$jid" 60 || die "[$run] failure not noticed"
    log "[$run] bin/taskmanager.sh start (replacement TaskManager)"
    "$home/bin/taskmanager.sh" start >>"$work/$run/start-cluster.out" 2>&1 || die "taskmanager.sh start failed"
    await_sql "$run"

    "${check[@]}" check-restart "$port" "$jid" || die "[$run] restart check"
    check_jobs "$run" native immediate
    stop_cluster
    local q
    for q in q1 q3; do
        "${check[@]}" compare "$q" "$work/stock/out/$q" "$work/$run/out/$q" ||
            die "[$run] $q after the failover differs from the unfailed stock run"
    done
    note "failover run: TaskManager killed after checkpoints, job restored and finished, q1 q3 equal the unfailed run, $((SECONDS - start)) s"
}

# ------------------------------------------------------------ main

trap cleanup EXIT
trap 'exit 130' INT TERM

build_distribution

work=${CLUSTER_WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/aggforge-cluster.XXXXXX")}
mkdir -p "$work"
home=$work/flink
log "FLINK_HOME $home (copy of $cache/flink-$flink_version)"
cp -R "$cache/flink-$flink_version" "$home"
if [[ -f $home/conf/config.yaml ]]; then conf_file=config.yaml; else conf_file=flink-conf.yaml; fi
if [[ -n $jar ]]; then
    cp "$jar" "$home/lib/"
    note "aggforge jar: $jar -> lib/ (expect native operators: $expect_native)"
else
    note "no aggforge jar: every run is stock Flink (CLUSTER_EXPECT_NATIVE=$expect_native)"
fi

run_pass stock false stock
run_pass native true native
for q in q1 q2 q3; do
    "${check[@]}" compare "$q" "$work/stock/out/$q" "$work/native/out/$q" ||
        die "native $q differs from stock"
done
note "native final tables q1 q2 q3 equal stock"
run_failover

echo
echo "== cluster-test summary (Flink $flink_version, $SECONDS s) =="
printf '  %s\n' "${summary[@]}"
echo "  checks: plans $( ((expect_native == 1)) && echo native-asserted || echo reported), metrics $( ((check_metrics == 1)) && echo asserted || echo reported)"
echo "PASSED"

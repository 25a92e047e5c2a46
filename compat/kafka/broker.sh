#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft, combined broker + controller) on loopback, for tests.
#
#   compat/kafka/broker.sh start    resolve the pinned jars (Maven), format fresh storage, start, wait
#   compat/kafka/broker.sh stop     stop it (SIGTERM, then SIGKILL after 20 s)
#   compat/kafka/broker.sh status   exit 0 when it is running
#   compat/kafka/broker.sh classpath  print the broker classpath
#
# Environment: KAFKA_PORT (default 19092), KAFKA_CONTROLLER_PORT (19093), KAFKA_WORK (default
# compat/kafka/target/run), KAFKA_RACK (broker.rack, unset by default).
# The log is $KAFKA_WORK/broker.log. Storage is formatted fresh on every start.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${KAFKA_PORT:-19092}"
cport="${KAFKA_CONTROLLER_PORT:-19093}"
work="${KAFKA_WORK:-$here/target/run}"
pidfile="$work/broker.pid"

resolve() {
  if [[ ! -f "$here/target/lib/kafka_2.13-4.4.0.jar" || "$here/pom.xml" -nt "$here/target/lib" ]]; then
    rm -rf "$here/target/lib"
    (cd "$here" && mvn -q -B package) >&2
  fi
}

classpath() { resolve; local IFS=:; local jars=("$here"/target/lib/*.jar); echo "${jars[*]}"; }

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

wait_port() {
  local deadline=$((SECONDS + ${1:-60}))
  while ((SECONDS < deadline)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    running || return 1
    sleep 0.5
  done
  return 1
}

start() {
  if running; then echo "broker already running (pid $(cat "$pidfile"))" >&2; return 0; fi
  local cp; cp="$(classpath)"
  rm -rf "$work"; mkdir -p "$work/data"
  cat >"$work/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$work/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.retention.check.interval.ms=600000
PROPS
  if [[ -n "${KAFKA_RACK:-}" ]]; then echo "broker.rack=$KAFKA_RACK" >>"$work/server.properties"; fi
  cat >"$work/log4j2.yaml" <<'LOG'
Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
    Logger:
      - name: kafka.coordinator.group
        level: INFO
      - name: org.apache.kafka.coordinator.group
        level: INFO
      - name: kafka.log
        level: WARN
      - name: org.apache.kafka.storage
        level: WARN
LOG
  local java_opts=(-Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$work/log4j2.yaml" -cp "$cp")
  local cluster_id
  cluster_id="$(java "${java_opts[@]}" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
  java "${java_opts[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$work/server.properties" \
    >"$work/format.log" 2>&1 || { cat "$work/format.log" >&2; return 1; }
  nohup java "${java_opts[@]}" kafka.Kafka "$work/server.properties" >"$work/broker.log" 2>&1 &
  echo $! >"$pidfile"
  if ! wait_port 90; then
    echo "broker did not come up on 127.0.0.1:$port; last lines of $work/broker.log:" >&2
    tail -50 "$work/broker.log" >&2
    stop; return 1
  fi
  echo "broker up on 127.0.0.1:$port (pid $(cat "$pidfile"), log $work/broker.log)" >&2
}

stop() {
  running || { rm -f "$pidfile"; return 0; }
  local pid; pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) running ;;
  classpath) classpath ;;
  *) echo "usage: $0 start|stop|status|classpath" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft, combined broker + controller) on loopback, for tests.
#
#   compat/kafka/broker.sh start    resolve the pinned jars (Maven), format fresh storage, start, wait
#   compat/kafka/broker.sh stop     stop it (SIGTERM, then SIGKILL after 20 s)
#   compat/kafka/broker.sh restart [N]  stop it, wait N seconds (default 0) and start it again
#                                   on the same storage (topics, groups and offsets kept),
#                                   e.g. to see clients ride it out
#   compat/kafka/broker.sh status   exit 0 when it is running
#   compat/kafka/broker.sh classpath  print the broker classpath
#
# Environment: KAFKA_PORT (default 19092), KAFKA_CONTROLLER_PORT (19093), KAFKA_WORK (default
# compat/kafka/target/run), KAFKA_RACK (broker.rack, unset by default).
# Opt-in, for broker plugins: KAFKA_EXTRA_CLASSPATH (jars appended to the broker's classpath)
# and KAFKA_EXTRA_PROPERTIES (lines appended to server.properties, e.g.
# "group.streams.assignors=sticky,io.kstreamsassignor.plugin.OptimizedStreamsTaskAssignor").
# The log is $KAFKA_WORK/broker.log. Storage is formatted fresh on every start.
#
# KAFKA_SECURITY=1 also opens an SSL listener on KAFKA_SSL_PORT (default KAFKA_PORT + 2) and a
# SASL_SSL listener on KAFKA_SASL_SSL_PORT (KAFKA_PORT + 3) with PLAIN, SCRAM-SHA-256,
# SCRAM-SHA-512 and OAUTHBEARER (Kafka's unsecured validator), and an SSL listener that requires
# a client certificate on KAFKA_MTLS_PORT (KAFKA_PORT + 4). Made at start in
# $KAFKA_WORK/security: a CA (ca.pem), the broker's certificate signed by it for 127.0.0.1 only
# (so that `localhost` fails the host name check), a client certificate signed by it
# (client-keystore.pem: key and certificate), and an unrelated CA (other-ca.pem). The user
# `alice` has the password `alice-secret` for PLAIN and both SCRAMs (made at format time).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${KAFKA_PORT:-19092}"
cport="${KAFKA_CONTROLLER_PORT:-19093}"
work="${KAFKA_WORK:-$here/target/run}"
pidfile="$work/broker.pid"
security="${KAFKA_SECURITY:-0}"
ssl_port="${KAFKA_SSL_PORT:-$((port + 2))}"
sasl_ssl_port="${KAFKA_SASL_SSL_PORT:-$((port + 3))}"
mtls_port="${KAFKA_MTLS_PORT:-$((port + 4))}"

resolve() {
  if [[ ! -f "$here/target/lib/kafka_2.13-4.4.0.jar" || "$here/pom.xml" -nt "$here/target/lib" ]]; then
    rm -rf "$here/target/lib"
    (cd "$here" && mvn -q -B package) >&2
  fi
}

classpath() { resolve; local IFS=:; local jars=("$here"/target/lib/*.jar); echo "${jars[*]}"; }

# The CA, the broker's certificate (SAN 127.0.0.1) in a PKCS12 key store, a client certificate,
# and an unrelated CA.
certificates() {
  local dir="$work/security"
  mkdir -p "$dir"
  (
    cd "$dir"
    ca() {
      openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days 3650 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    }
    ca ca "kstreams-assignor test CA"
    ca other-ca "an unrelated CA"
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=localhost"
    printf '%s\n' "subjectAltName=IP:127.0.0.1" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.pem -days 3650 -extfile broker.ext
    openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker -out broker.p12 -passout pass:broker-secret
    openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=alice"
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" "extendedKeyUsage=clientAuth" >client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 3650 -extfile client.ext
    cat client.key client.pem >client-keystore.pem
  ) >"$work/certificates.log" 2>&1 || { cat "$work/certificates.log" >&2; return 1; }
}

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
# Not the default (1048588): describe's group-record limit is seen to come from the broker.
message.max.bytes=2000000
PROPS
  if [[ -n "${KAFKA_RACK:-}" ]]; then echo "broker.rack=$KAFKA_RACK" >>"$work/server.properties"; fi
  if [[ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]]; then printf '%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$work/server.properties"; fi
  if [[ -n "${KAFKA_EXTRA_CLASSPATH:-}" ]]; then cp="$cp:$KAFKA_EXTRA_CLASSPATH"; fi
  local scram=()
  if [[ "$security" == 1 ]]; then
    certificates
    local sec="$work/security"
    local extra="SSL://127.0.0.1:$ssl_port,SASL_SSL://127.0.0.1:$sasl_ssl_port,MTLS://127.0.0.1:$mtls_port"
    sed -i -e "s|^listeners=.*|&,$extra|" -e "s|^advertised.listeners=.*|&,$extra|" \
      -e "s|^listener.security.protocol.map=.*|&,SSL:SSL,SASL_SSL:SASL_SSL,MTLS:SSL|" "$work/server.properties"
    cat >>"$work/server.properties" <<PROPS
ssl.keystore.type=PKCS12
ssl.keystore.location=$sec/broker.p12
ssl.keystore.password=broker-secret
ssl.key.password=broker-secret
ssl.client.auth=none
listener.name.mtls.ssl.client.auth=required
listener.name.mtls.ssl.truststore.type=PEM
listener.name.mtls.ssl.truststore.location=$sec/ca.pem
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";
PROPS
    scram=(--add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]' --add-scram 'SCRAM-SHA-512=[name=alice,password=alice-secret]')
  fi
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
  java "${java_opts[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$work/server.properties" "${scram[@]}" \
    >"$work/format.log" 2>&1 || { cat "$work/format.log" >&2; return 1; }
  launch "$cp"
}

# Starts the broker on the storage and server.properties of $work (`start` made them) and waits
# for its port.
launch() {
  local java_opts=(-Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$work/log4j2.yaml" -cp "$1")
  nohup java "${java_opts[@]}" kafka.Kafka "$work/server.properties" >>"$work/broker.log" 2>&1 &
  echo $! >"$pidfile"
  if ! wait_port 90; then
    echo "broker did not come up on 127.0.0.1:$port; last lines of $work/broker.log:" >&2
    tail -50 "$work/broker.log" >&2
    stop; return 1
  fi
  echo "broker up on 127.0.0.1:$port (pid $(cat "$pidfile"), log $work/broker.log)" >&2
  if [[ "$security" == 1 ]]; then
    if ! (port="$sasl_ssl_port" wait_port 30); then
      echo "the SASL_SSL listener did not open on 127.0.0.1:$sasl_ssl_port; see $work/broker.log" >&2
      stop; return 1
    fi
    echo "SSL on 127.0.0.1:$ssl_port, SASL_SSL on 127.0.0.1:$sasl_ssl_port, SSL with client certificates on 127.0.0.1:$mtls_port; for the tests:" >&2
    echo "  KAFKA_SSL_BOOTSTRAP=127.0.0.1:$ssl_port KAFKA_SASL_SSL_BOOTSTRAP=127.0.0.1:$sasl_ssl_port KAFKA_MTLS_BOOTSTRAP=127.0.0.1:$mtls_port KAFKA_SECURITY_DIR=$work/security" >&2
  fi
}

stop() {
  running || { rm -f "$pidfile"; return 0; }
  local pid; pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

restart() {
  [[ -f "$work/server.properties" ]] || { echo "no broker was started in $work" >&2; return 1; }
  local cp; cp="$(classpath)"
  if [[ -n "${KAFKA_EXTRA_CLASSPATH:-}" ]]; then cp="$cp:$KAFKA_EXTRA_CLASSPATH"; fi
  stop
  sleep "${1:-0}"
  launch "$cp"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) restart "${2:-0}" ;;
  status) running ;;
  classpath) classpath ;;
  *) echo "usage: $0 start|stop|restart [seconds down]|status|classpath" >&2; exit 2 ;;
esac

#!/bin/bash
# Entrypoint of the bench image. Spark on Kubernetes starts driver and executor pods
# with the first argument "driver" or "executor" and describes the rest in SPARK_*
# environment variables; anything else is run as given (bench, python -m ..., spark-class).
set -euo pipefail

case "${1:-}" in
  driver)
    shift
    exec spark-submit \
      --deploy-mode client \
      --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:-0.0.0.0}" \
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=${SPARK_DRIVER_BIND_ADDRESS:-}" \
      "$@"
    ;;
  executor)
    shift
    exec java \
      -Xms"${SPARK_EXECUTOR_MEMORY:-1g}" -Xmx"${SPARK_EXECUTOR_MEMORY:-1g}" \
      ${SPARK_JAVA_OPT_0:-} ${SPARK_JAVA_OPT_1:-} ${SPARK_JAVA_OPT_2:-} \
      -cp "${SPARK_CLASSPATH:-}:${SPARK_HOME}/jars/*" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "${SPARK_DRIVER_URL}" \
      --executor-id "${SPARK_EXECUTOR_ID}" \
      --cores "${SPARK_EXECUTOR_CORES:-1}" \
      --app-id "${SPARK_APPLICATION_ID}" \
      --hostname "${SPARK_EXECUTOR_POD_IP}" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}" \
      --podName "${SPARK_EXECUTOR_POD_NAME:-}" \
      "$@"
    ;;
  *)
    exec "$@"
    ;;
esac

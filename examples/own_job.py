"""A PySpark Structured Streaming job written without bench: it only reads its Kafka
servers and topics from the environment (bench sets them; the defaults are for running
it on its own with spark-submit).

It reads ActivePowerRecords ({"identifier", "timestamp", "valueInW"} as JSON), converts
each to kilowatts with its sensor and the hour of day, and writes the result as JSON to
the output topic.

    bench run --job examples/own_job.py --loads 1000,4000 --resources 1,2
"""

import os

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

bootstrap = os.environ.get("BENCH_BOOTSTRAP_SERVERS", "localhost:9092")
input_topic = os.environ.get("BENCH_INPUT_TOPIC", "input")
output_topic = os.environ.get("BENCH_OUTPUT_TOPIC", "output")

spark = SparkSession.builder.appName("power-to-kw").getOrCreate()

records = (
    spark.readStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", input_topic)
    .option("startingOffsets", "earliest")
    .load()
    .select(
        F.from_json(
            F.col("value").cast("string"),
            "identifier string, timestamp long, valueInW double",
        ).alias("r")
    )
    .where(F.col("r.identifier").isNotNull())
)

converted = records.select(
    F.col("r.identifier").alias("key"),
    F.to_json(
        F.struct(
            F.col("r.identifier").alias("sensor"),
            F.hour(F.timestamp_millis(F.col("r.timestamp"))).alias("hourOfDay"),
            (F.col("r.valueInW") / 1000.0).alias("kW"),
        )
    ).alias("value"),
)

query = (
    converted.writeStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", output_topic)
    .option("checkpointLocation", "/tmp/power-to-kw/checkpoint")
    .start()
)
query.awaitTermination()

/** MQTT load generator: P2P pairs and fan-out with per-pair loss, duplicate and order accounting. */
package io.tbmq.loadgen;

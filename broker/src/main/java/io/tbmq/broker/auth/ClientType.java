package io.tbmq.broker.auth;

/**
 * The TBMQ paper's two kinds of client: DEVICEs (many, few messages each; persistent sessions in Redis)
 * and APPLICATIONs (few, many messages; persistent sessions in their own Kafka topic).
 */
public enum ClientType {
    DEVICE,
    APPLICATION
}

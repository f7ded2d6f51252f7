package io.tbmq.operator.api;

/** Whether the operator runs a dependency itself or the user points at one. */
public enum Mode {
    MANAGED, EXTERNAL
}

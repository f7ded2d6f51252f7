package io.tbmq.broker.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TransportTest {

    @Test
    void ioUringOnlyWhenWantedAndTheKernelAllowsIt() {
        assertThat(Transport.choose(true, true, true, true)).isEqualTo(Transport.IO_URING);
        assertThat(Transport.choose(true, false, true, true)).isEqualTo(Transport.EPOLL);
        assertThat(Transport.choose(true, true, false, true)).as("refused, e.g. by a seccomp profile").isEqualTo(Transport.EPOLL);
    }

    @Test
    void nioWhenNoNativeTransportIsWantedOrLoads() {
        assertThat(Transport.choose(false, true, true, true)).isEqualTo(Transport.NIO);
        assertThat(Transport.choose(true, true, false, false)).isEqualTo(Transport.NIO);
        assertThat(Transport.choose(true, false, true, false)).isEqualTo(Transport.NIO);
    }

    @Test
    void noRefusalToReportWhenIoUringIsNotWanted() {
        assertThat(Transport.ioUringRefusal(false, true)).isNull();
        assertThat(Transport.ioUringRefusal(true, false)).isNull();
    }
}

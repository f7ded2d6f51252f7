package io.tbmq.broker.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.tbmq.broker.testing.Hex;

class ServerPacketFramingTest {
    @Test
    void acceptsServerPacketsAndSeesAnAcceptedConnect() {
        assertThat(ServerPacketFraming.check(Hex.bytes("20 02 00 00  90 03 00 01 00  62 02 00 05  d0 00"))).isTrue();
        assertThat(ServerPacketFraming.check(Hex.bytes("20 02 00 05"))).isFalse();
    }

    @Test
    void rejectsWhatAServerMustNotWrite() {
        assertThatThrownBy(() -> ServerPacketFraming.check(Hex.bytes("10 00"))).hasMessageContaining("never sends packet type 1");
        assertThatThrownBy(() -> ServerPacketFraming.check(Hex.bytes("60 02 00 05"))).hasMessageContaining("flags 0");
        assertThatThrownBy(() -> ServerPacketFraming.check(Hex.bytes("36 00"))).hasMessageContaining("flags 6");
        assertThatThrownBy(() -> ServerPacketFraming.check(Hex.bytes("40 03 00 01"))).hasMessageContaining("claims 3 bytes");
        assertThatThrownBy(() -> ServerPacketFraming.check(Hex.bytes("30 ff ff ff ff 01"))).hasMessageContaining("Remaining Length");
    }
}

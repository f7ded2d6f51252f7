package io.tbmq.broker.protocol;

import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttProperties.MqttPropertyType;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.tbmq.broker.testing.TestBroker;
import io.tbmq.broker.testing.WireClient;

/** A publisher and a subscriber on one test broker, for the outbound-ack handler tests. */
final class DeliveryFixture implements AutoCloseable {
    final TestBroker broker;
    final WireClient publisher;
    final WireClient subscriber;

    DeliveryFixture(MqttVersion version, int subscriptionQos, long sessionExpiry) {
        this(new TestBroker(), version, subscriptionQos, sessionExpiry);
    }

    DeliveryFixture(TestBroker broker, MqttVersion version, int subscriptionQos, long sessionExpiry) {
        this.broker = broker;
        publisher = broker.client(version);
        publisher.connectAccepted("pub", true);
        subscriber = broker.client(version);
        connectSubscriber(subscriber, true, sessionExpiry);
        subscriber.subscribe(1, "d/#", subscriptionQos);
        subscriber.expect(MqttMessageType.SUBACK);
    }

    static void connectSubscriber(WireClient c, boolean clean, long sessionExpiry) {
        MqttProperties p = new MqttProperties();
        if (sessionExpiry > 0) {
            p.add(new MqttProperties.IntegerProperty(MqttPropertyType.SESSION_EXPIRY_INTERVAL.value(), (int) sessionExpiry));
        }
        c.connect("sub", clean, "alice", TestBroker.PASSWORD, p);
    }

    @Override
    public void close() {
        publisher.close();
        subscriber.close();
        broker.close();
    }
}

package io.tbmq.operator.desired;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tbmq.operator.api.TbmqCluster;

/** The TbmqClusters of config/samples/, as a user applies them. */
public final class Samples {
    public static final Path DIR = Path.of("..", "config", "samples");

    private Samples() {
    }

    public static TbmqCluster load(String file, String namespace) {
        try (InputStream in = Files.newInputStream(DIR.resolve(file))) {
            TbmqCluster c = Serialization.unmarshal(in, TbmqCluster.class);
            c.getMetadata().setNamespace(namespace);
            c.getMetadata().setUid("uid-" + c.getMetadata().getName());
            c.getMetadata().setGeneration(1L);
            return c;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.tbmq.operator.config;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import io.quarkus.runtime.StartupEvent;

/** One line at start: the version the operator image was tagged with, and the images it gives TbmqClusters that name none. */
@ApplicationScoped
public class StartupReport {
    private static final Logger LOG = Logger.getLogger(StartupReport.class);

    void onStart(@Observes StartupEvent event, OperatorConfig config) {
        String tagged = System.getenv("TBMQ_VERSION");
        String version = tagged != null && !tagged.isBlank() ? tagged
                : ConfigProvider.getConfig().getOptionalValue("quarkus.application.version", String.class).orElse("unknown");
        LOG.infof("TBMQ operator %s; default broker image %s, default Redis image %s", version, config.brokerImage(),
                config.redisImage());
    }
}

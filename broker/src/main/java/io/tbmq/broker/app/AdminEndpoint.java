package io.tbmq.broker.app;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.tbmq.broker.admin.AdminApi;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** Puts the admin API on Quarkus's HTTP port, beside /q/health and /q/metrics. */
@ApplicationScoped
public class AdminEndpoint {
    private static final Logger LOG = Logger.getLogger(AdminEndpoint.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SPEC = "/io/tbmq/broker/admin/admin-api.yaml";

    @Inject
    BrokerApplication broker;

    void routes(@Observes Router router) {
        router.get(AdminApi.PREFIX + "/openapi.yaml").handler(this::spec);
        router.route(AdminApi.PREFIX + "/*").blockingHandler(this::handle, false);
    }

    private void spec(RoutingContext ctx) {
        try (InputStream in = AdminEndpoint.class.getResourceAsStream(SPEC)) {
            ctx.response().putHeader("Content-Type", "application/yaml").end(new String(in.readAllBytes(),
                    java.nio.charset.StandardCharsets.UTF_8));
        } catch (IOException | NullPointerException e) {
            ctx.response().setStatusCode(500).end();
        }
    }

    private void handle(RoutingContext ctx) {
        AdminApi api = broker.admin();
        Context context = Vertx.currentContext();
        if (api == null) {
            send(ctx, new AdminApi.Response(503, Map.of("error", "the broker is still starting"), Map.of("Retry-After", "5")));
            return;
        }
        Map<String, String> query = new HashMap<>();
        ctx.queryParams().forEach(e -> query.putIfAbsent(e.getKey(), e.getValue()));
        api.handle(new AdminApi.Request(ctx.request().method().name(), ctx.request().path(), query,
                ctx.request().getHeader("Authorization"))).whenComplete((response, failure) -> context.runOnContext(v -> {
                    if (failure != null) {
                        LOG.warnf(failure, "admin request %s %s failed", ctx.request().method(), ctx.request().path());
                        send(ctx, new AdminApi.Response(500, Map.of("error", String.valueOf(failure.getMessage())), Map.of()));
                    } else {
                        send(ctx, response);
                    }
                }));
    }

    private static void send(RoutingContext ctx, AdminApi.Response response) {
        try {
            var out = ctx.response().setStatusCode(response.status()).putHeader("Content-Type", "application/json");
            response.headers().forEach(out::putHeader);
            out.end(JSON.writeValueAsString(response.body()));
        } catch (IOException e) {
            ctx.response().setStatusCode(500).end();
        }
    }
}

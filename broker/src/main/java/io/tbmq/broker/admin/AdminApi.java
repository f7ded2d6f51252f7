package io.tbmq.broker.admin;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.tbmq.broker.retain.RetainedStore;
import io.tbmq.broker.topic.Topics;

/**
 * The admin API (docs/admin-api.yaml, OpenAPI): sessions of the whole cluster, one session's
 * subscriptions, disconnecting a client, retained topics. Independent of the HTTP server: a request
 * in, a JSON-ready answer out.
 */
public final class AdminApi {
    public static final String PREFIX = "/api/v1";
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 10_000;

    public record Request(String method, String rawPath, Map<String, String> query, String authorization) {
    }

    /** {@code body} is serialized as JSON; {@code headers} go with it. */
    public record Response(int status, Object body, Map<String, String> headers) {
        static Response of(int status, Object body) {
            return new Response(status, body, Map.of());
        }

        static Response error(int status, String message) {
            return of(status, Map.of("error", message));
        }
    }

    private final AdminToken token;
    private final ClusterSessions sessions;
    private final RetainedStore retained;

    public AdminApi(AdminToken token, ClusterSessions sessions, RetainedStore retained) {
        this.token = token;
        this.sessions = sessions;
        this.retained = retained;
    }

    public CompletableFuture<Response> handle(Request request) {
        if (!token.enabled()) {
            return done(Response.error(404, "the admin API is off: set tbmq.admin.token or tbmq.admin.token-file"));
        }
        if (!token.accepts(request.authorization())) {
            return done(new Response(401, Map.of("error", "a valid 'Authorization: Bearer <token>' header is required"),
                    Map.of("WWW-Authenticate", "Bearer realm=\"tbmq-admin\"")));
        }
        try {
            return route(request);
        } catch (BadRequest e) {
            return done(Response.error(400, e.getMessage()));
        }
    }

    private CompletableFuture<Response> route(Request r) {
        String[] path = segments(r.rawPath());
        boolean get = r.method().equals("GET");
        if (path.length == 1 && path[0].equals("sessions") && get) {
            return done(listSessions(r.query()));
        }
        if (path.length == 2 && path[0].equals("sessions") && get) {
            return done(sessions.get(path[1]).<Response>map(d -> Response.of(200, d))
                    .orElseGet(() -> Response.error(404, "no session of client '" + path[1] + "'")));
        }
        if (path.length == 3 && path[0].equals("sessions") && path[2].equals("disconnect") && r.method().equals("POST")) {
            boolean clear = flag(r.query(), "clear");
            return sessions.disconnect(path[1], clear).map(f -> f.thenApply(d -> Response.of(200, d)))
                    .orElseGet(() -> done(Response.error(404, "no session of client '" + path[1] + "'")));
        }
        if (path.length == 1 && path[0].equals("retained") && get) {
            return done(listRetained(r.query()));
        }
        return done(Response.error(404, "no such operation: " + r.method() + " " + r.rawPath() + " (see " + PREFIX + "/openapi.yaml)"));
    }

    private Response listSessions(Map<String, String> query) {
        String connected = query.get("connected");
        if (connected != null && !connected.equals("true") && !connected.equals("false")) {
            throw new BadRequest("connected must be true or false");
        }
        int limit = limit(query);
        List<ClusterSessions.Summary> page = sessions.list(connected == null ? null : Boolean.valueOf(connected), query.get("after"), limit);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("sessions", page);
        body.put("next", page.size() == limit ? page.get(page.size() - 1).clientId() : null);
        return Response.of(200, body);
    }

    private Response listRetained(Map<String, String> query) {
        int limit = limit(query);
        String after = query.get("after");
        List<String> topics = retained.match(Topics.parseFilter("#", Integer.MAX_VALUE)).stream().map(m -> m.topic())
                .filter(t -> after == null || t.compareTo(after) > 0).sorted().limit(limit).toList();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("topics", topics);
        body.put("next", topics.size() == limit ? topics.get(topics.size() - 1) : null);
        return Response.of(200, body);
    }

    private static int limit(Map<String, String> query) {
        String raw = query.get("limit");
        if (raw == null) {
            return DEFAULT_LIMIT;
        }
        try {
            int limit = Integer.parseInt(raw);
            if (limit >= 1 && limit <= MAX_LIMIT) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new BadRequest("limit must be a number from 1 to " + MAX_LIMIT);
    }

    private static boolean flag(Map<String, String> query, String name) {
        String v = query.get(name);
        if (v == null || v.equals("false")) {
            return false;
        }
        if (v.equals("true")) {
            return true;
        }
        throw new BadRequest(name + " must be true or false");
    }

    /** The path after the prefix, split and percent-decoded per segment (a client id may hold '/' as %2F). */
    private static String[] segments(String rawPath) {
        String rest = rawPath.startsWith(PREFIX + "/") ? rawPath.substring(PREFIX.length() + 1) : "";
        String[] parts = rest.isEmpty() ? new String[0] : rest.split("/", -1);
        for (int i = 0; i < parts.length; i++) {
            parts[i] = URLDecoder.decode(parts[i].replace("+", "%2B"), StandardCharsets.UTF_8);
        }
        return parts;
    }

    private static CompletableFuture<Response> done(Response r) {
        return CompletableFuture.completedFuture(r);
    }

    private static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }
}

package io.tbmq.broker.persistence.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** One Lua script from the classpath and its SHA-1, the name EVALSHA calls it by. */
public record LuaScript(String name, String body, String sha) {

    public static LuaScript load(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(name + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("script " + name + ".lua missing");
            }
            String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(body.getBytes(StandardCharsets.UTF_8)));
            return new LuaScript(name, body, sha);
        } catch (IOException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot load script " + name, e);
        }
    }
}

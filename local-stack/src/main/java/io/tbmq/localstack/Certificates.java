package io.tbmq.localstack;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test and evaluation PKI made with the openssl CLI: a CA, a server certificate for localhost,
 * client certificates signed by that CA, and a second, untrusted CA for negative tests. Keys are
 * PKCS#8 PEM, the form the broker's TLS listeners read.
 */
public final class Certificates {
    private final Path dir;

    public Certificates(Path dir) {
        this.dir = dir.toAbsolutePath();
    }

    public Path dir() {
        return dir;
    }

    public Path caCert() {
        return dir.resolve("ca.pem");
    }

    public Path serverCert() {
        return dir.resolve("server.pem");
    }

    public Path serverKey() {
        return dir.resolve("server.key");
    }

    public Path cert(String name) {
        return dir.resolve(name + ".pem");
    }

    public Path key(String name) {
        return dir.resolve(name + ".key");
    }

    /** Creates the CA and the localhost server certificate unless they already exist. */
    public Certificates ensureServer() {
        if (Files.exists(serverCert()) && Files.exists(serverKey()) && Files.exists(caCert())) {
            return this;
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        ca("ca", "tbmq local CA");
        signed("server", "localhost", "ca", 825, "subjectAltName=DNS:localhost,IP:127.0.0.1");
        return this;
    }

    /** A client certificate with common name {@code cn} signed by the trusted CA. */
    public Certificates client(String name, String cn) {
        return client(name, cn, "ca", 365);
    }

    /** A client certificate signed by {@code caName}; {@code days} may be negative for an expired one. */
    public Certificates client(String name, String cn, String caName, int days) {
        signed(name, cn, caName, days, null);
        return this;
    }

    /** A CA the broker does not trust. */
    public Certificates untrustedCa(String name) {
        ca(name, "untrusted " + name);
        return this;
    }

    private void ca(String name, String cn) {
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key(name).toString(), "-out", cert(name).toString(), "-days", "3650",
                "-subj", "/CN=" + cn, "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    }

    private void signed(String name, String cn, String caName, int days, String extension) {
        Path csr = dir.resolve(name + ".csr");
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key(name).toString(), "-out", csr.toString(), "-subj", "/CN=" + cn);
        if (days < 0) {
            expired(name, csr, caName);
            return;
        }
        List<String> sign = new ArrayList<>(List.of("x509", "-req", "-in", csr.toString(),
                "-CA", cert(caName).toString(), "-CAkey", key(caName).toString(), "-CAcreateserial",
                "-out", cert(name).toString(), "-days", Integer.toString(days)));
        if (extension != null) {
            Path ext = dir.resolve(name + ".ext");
            try {
                Files.writeString(ext, extension + "\n");
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            sign.addAll(List.of("-extfile", ext.toString()));
        }
        openssl(sign.toArray(String[]::new));
    }

    /** openssl x509 cannot back-date (3.0); openssl ca can, with a throwaway database. */
    private void expired(String name, Path csr, String caName) {
        try {
            Path db = Files.createDirectories(dir.resolve("ca-db-" + name));
            Files.writeString(db.resolve("index.txt"), "");
            Files.writeString(db.resolve("serial"), "01\n");
            Path config = db.resolve("ca.cnf");
            Files.writeString(config, String.join("\n", "[ ca ]", "default_ca = local", "[ local ]",
                    "database = " + db.resolve("index.txt"), "new_certs_dir = " + db, "serial = " + db.resolve("serial"),
                    "default_md = sha256", "policy = any", "[ any ]", "commonName = supplied", ""));
            openssl("ca", "-batch", "-config", config.toString(), "-cert", cert(caName).toString(),
                    "-keyfile", key(caName).toString(), "-in", csr.toString(), "-out", cert(name).toString(),
                    "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-notext");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private void openssl(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Tools.require("openssl", "openssl").toString());
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("openssl " + String.join(" ", args) + " failed:\n" + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not run openssl: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

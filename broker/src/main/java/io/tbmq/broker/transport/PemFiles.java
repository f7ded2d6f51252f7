package io.tbmq.broker.transport;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM certificates and private keys as TLS tooling writes them: keys in PKCS#8 ("PRIVATE KEY"),
 * PKCS#1 ("RSA PRIVATE KEY", cert-manager's default encoding) or SEC1 ("EC PRIVATE KEY", what
 * openssl ecparam writes), RSA or EC. The older encodings are wrapped into PKCS#8 here, so no
 * extra security provider is needed.
 */
final class PemFiles {
    private static final Pattern BLOCK = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([^-]+)-----END \\1-----");
    /** rsaEncryption, 1.2.840.113549.1.1.1, with NULL parameters. */
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d,
            0x01, 0x01, 0x01, 0x05, 0x00};
    /** id-ecPublicKey, 1.2.840.10045.2.1. */
    private static final byte[] EC_KEY_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    private PemFiles() {
    }

    record Block(String type, byte[] der) {
    }

    static List<Block> read(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        List<Block> blocks = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            blocks.add(new Block(m.group(1), Base64.getMimeDecoder().decode(m.group(2))));
        }
        return blocks;
    }

    static X509Certificate[] certificates(Path file) throws IOException, GeneralSecurityException {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        List<X509Certificate> certs = new ArrayList<>();
        for (Block b : read(file)) {
            if ("CERTIFICATE".equals(b.type())) {
                certs.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(b.der())));
            }
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no PEM CERTIFICATE");
        }
        return certs.toArray(X509Certificate[]::new);
    }

    static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        for (Block b : read(file)) {
            switch (b.type()) {
                case "PRIVATE KEY":
                    return pkcs8(b.der());
                case "RSA PRIVATE KEY":
                    return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(
                            sequence(concat(new byte[] {0x02, 0x01, 0x00}, RSA_ALGORITHM, tlv(0x04, b.der())))));
                case "EC PRIVATE KEY":
                    byte[] curve = curveOid(b.der());
                    return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(
                            sequence(concat(new byte[] {0x02, 0x01, 0x00}, sequence(concat(EC_KEY_OID, curve)), tlv(0x04, b.der())))));
                case "ENCRYPTED PRIVATE KEY":
                    throw new IllegalArgumentException(file + " holds an encrypted key; the broker needs it unencrypted "
                            + "(protect the file, e.g. a Kubernetes Secret mounted read-only)");
                default:
                    // EC PARAMETERS and other blocks before the key
            }
        }
        throw new IllegalArgumentException(file + " holds no PEM private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)");
    }

    private static PrivateKey pkcs8(byte[] der) throws GeneralSecurityException {
        for (String algorithm : List.of("RSA", "EC", "Ed25519")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next
            }
        }
        throw new GeneralSecurityException("the PKCS#8 key is neither RSA, EC nor Ed25519");
    }

    /** The named curve's OID from a SEC1 ECPrivateKey's [0] parameters. */
    static byte[] curveOid(byte[] sec1) {
        int[] p = {0};
        expect(sec1, p, 0x30);
        length(sec1, p);
        while (p[0] < sec1.length) {
            int tag = sec1[p[0]++] & 0xff;
            int len = length(sec1, p);
            if (tag == 0xa0) {
                if ((sec1[p[0]] & 0xff) != 0x06) {
                    break;
                }
                byte[] oid = new byte[len];
                System.arraycopy(sec1, p[0], oid, 0, len);
                return oid;
            }
            p[0] += len;
        }
        throw new IllegalArgumentException("EC PRIVATE KEY without a named curve; write it with its parameters (openssl ec -param_out)");
    }

    private static void expect(byte[] der, int[] p, int tag) {
        if ((der[p[0]++] & 0xff) != tag) {
            throw new IllegalArgumentException("not a DER SEQUENCE");
        }
    }

    private static int length(byte[] der, int[] p) {
        int first = der[p[0]++] & 0xff;
        if (first < 0x80) {
            return first;
        }
        int n = first & 0x7f;
        int len = 0;
        for (int i = 0; i < n; i++) {
            len = (len << 8) | (der[p[0]++] & 0xff);
        }
        return len;
    }

    private static byte[] sequence(byte[] body) {
        return tlv(0x30, body);
    }

    private static byte[] tlv(int tag, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 6);
        out.write(tag);
        int len = body.length;
        if (len < 0x80) {
            out.write(len);
        } else if (len < 0x100) {
            out.write(0x81);
            out.write(len);
        } else if (len < 0x10000) {
            out.write(0x82);
            out.write(len >> 8);
            out.write(len);
        } else {
            out.write(0x83);
            out.write(len >> 16);
            out.write(len >> 8);
            out.write(len);
        }
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}

package io.tbmq.broker.util;

/**
 * Client-chosen text (client ids, user names, topics) made safe for a log line: control and
 * line-separator characters become {@code \\uXXXX} so a client id cannot forge or split log lines,
 * and anything past 200 characters is cut with a note of the full length.
 */
public final class LogText {
    static final int MAX = 200;

    private LogText() {
    }

    public static String of(String s) {
        if (s == null) {
            return "null";
        }
        int end = Math.min(s.length(), MAX);
        StringBuilder out = null;
        for (int i = 0; i < end; i++) {
            char c = s.charAt(i);
            boolean unsafe = c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == '\u2028' || c == '\u2029';
            if (unsafe && out == null) {
                out = new StringBuilder(end + 16).append(s, 0, i);
            }
            if (out != null) {
                if (unsafe) {
                    out.append(String.format("\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
        }
        String text = out == null ? s.substring(0, end) : out.toString();
        return s.length() > MAX ? text + "...(" + s.length() + " chars)" : text;
    }
}

package io.tbmq.loadgen.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A small line or bar chart written as SVG, so the benchmark page needs no plotting library. */
final class SvgChart {
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
    private static final int W = 720;
    private static final int H = 400;
    private static final int LEFT = 70;
    private static final int RIGHT = 200;
    private static final int TOP = 40;
    private static final int BOTTOM = 95;

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final Map<String, List<double[]>> series = new LinkedHashMap<>();

    SvgChart(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    SvgChart point(String seriesName, double x, double y) {
        series.computeIfAbsent(seriesName, k -> new ArrayList<>()).add(new double[] {x, y});
        return this;
    }

    String lines() {
        double maxX = 0;
        double maxY = 0;
        for (List<double[]> points : series.values()) {
            for (double[] p : points) {
                maxX = Math.max(maxX, p[0]);
                maxY = Math.max(maxY, p[1]);
            }
        }
        maxX = nice(maxX);
        maxY = nice(maxY);
        StringBuilder svg = frame(maxX, maxY);
        int i = 0;
        for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
            String color = COLORS[i % COLORS.length];
            StringBuilder pts = new StringBuilder();
            for (double[] p : e.getValue()) {
                double x = LEFT + p[0] / maxX * (W - LEFT - RIGHT);
                double y = H - BOTTOM - p[1] / maxY * (H - TOP - BOTTOM);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>%n", x, y, color));
            }
            svg.append(String.format("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n", pts, color));
            legend(svg, i, e.getKey(), color);
            i++;
        }
        return svg.append("</svg>\n").toString();
    }

    /** Bars: each series has one value per category (x = category index). */
    String bars(List<String> categories) {
        double maxY = 0;
        for (List<double[]> points : series.values()) {
            for (double[] p : points) {
                maxY = Math.max(maxY, p[1]);
            }
        }
        maxY = nice(maxY);
        StringBuilder svg = frame(0, maxY);
        double groupWidth = (double) (W - LEFT - RIGHT) / categories.size();
        double barWidth = groupWidth * 0.8 / Math.max(1, series.size());
        int s = 0;
        for (Map.Entry<String, List<double[]>> e : series.entrySet()) {
            String color = COLORS[s % COLORS.length];
            for (double[] p : e.getValue()) {
                double x = LEFT + p[0] * groupWidth + groupWidth * 0.1 + s * barWidth;
                double h = p[1] / maxY * (H - TOP - BOTTOM);
                svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>%n",
                        x, H - BOTTOM - h, barWidth, h, color));
            }
            legend(svg, s, e.getKey(), color);
            s++;
        }
        for (int c = 0; c < categories.size(); c++) {
            double x = LEFT + (c + 0.5) * groupWidth;
            int y = H - BOTTOM + 12;
            svg.append(String.format(Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" transform=\"rotate(-35 %.1f %d)\">%s</text>%n",
                    x, y, x, y, escape(categories.get(c))));
        }
        return svg.append("</svg>\n").toString();
    }

    private StringBuilder frame(double maxX, double maxY) {
        StringBuilder svg = new StringBuilder();
        svg.append(String.format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">%n", W, H));
        svg.append(String.format("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", W, H));
        svg.append(String.format("<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>%n", LEFT, escape(title)));
        svg.append(String.format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM));
        svg.append(String.format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", LEFT, TOP, LEFT, H - BOTTOM));
        for (int t = 0; t <= 5; t++) {
            double y = H - BOTTOM - t / 5.0 * (H - TOP - BOTTOM);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>%n", LEFT, y, W - RIGHT, y));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>%n",
                    LEFT - 6, y + 4, format(maxY * t / 5)));
            if (maxX > 0) {
                double x = LEFT + t / 5.0 * (W - LEFT - RIGHT);
                svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>%n",
                        x, H - BOTTOM + 16, format(maxX * t / 5)));
            }
        }
        svg.append(String.format("<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>%n",
                (LEFT + W - RIGHT) / 2, H - 18, escape(xLabel)));
        svg.append(String.format("<text x=\"16\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">%s</text>%n",
                (TOP + H - BOTTOM) / 2, (TOP + H - BOTTOM) / 2, escape(yLabel)));
        return svg;
    }

    private static void legend(StringBuilder svg, int i, String name, String color) {
        int y = TOP + 10 + i * 20;
        svg.append(String.format("<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>%n", W - RIGHT + 15, y - 10, color));
        svg.append(String.format("<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>%n", W - RIGHT + 32, y, escape(name)));
    }

    private static double nice(double max) {
        if (max <= 0) {
            return 1;
        }
        double magnitude = Math.pow(10, Math.floor(Math.log10(max)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * magnitude >= max) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String format(double v) {
        return v >= 1000 ? String.format(Locale.ROOT, "%.0fk", v / 1000) : v >= 10 ? String.format(Locale.ROOT, "%.0f", v)
                : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}

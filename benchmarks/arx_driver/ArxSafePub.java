import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataDefinition;
import org.deidentifier.arx.DataGeneralizationScheme;
import org.deidentifier.arx.DataGeneralizationScheme.GeneralizationDegree;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.EDDifferentialPrivacy;
import org.deidentifier.arx.dp.ParameterCalculation;
import org.deidentifier.arx.metric.Metric;

/**
 * Benchmark driver: ARX's (epsilon, delta)-differential privacy (SafePub) on one data file.
 *
 * Usage: java ArxSafePub DATA.csv HIERARCHY_DIR < cases.txt
 * A case is one line of key=value tokens. mode=params with epsilon and delta prints ARX's beta
 * and k. Otherwise: id, qis (comma-separated; every other column is left out of the data
 * definition as insensitive), epsilon, delta, steps (expansions), budget (the search's share),
 * metric (dm, aecs, precision, loss, entropy) and runs: each run prints one JSON line with the
 * chosen node, the records released (not suppressed) and the CPU seconds (ARX draws from
 * SecureRandom, so runs differ). With levels (qi:level, comma-separated) and/or preset (a
 * GeneralizationDegree: NONE, LOW, LOW_MEDIUM, MEDIUM, MEDIUM_HIGH, HIGH, COMPLETE) the model is
 * the data-independent one (a DataGeneralizationScheme, no search); each line then also holds the
 * model's k and beta.
 */
public class ArxSafePub {

    public static void main(String[] args) throws Exception {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Map<String, String> c = new HashMap<>();
            for (String tok : line.split("\\s+")) {
                int eq = tok.indexOf('=');
                c.put(tok.substring(0, eq), tok.substring(eq + 1));
            }
            double eps = Double.parseDouble(c.get("epsilon"));
            double delta = Double.parseDouble(c.get("delta"));
            if ("params".equals(c.get("mode"))) {
                ParameterCalculation p = new ParameterCalculation(eps, delta);
                System.out.println(String.format(Locale.ROOT, "{\"mode\": \"params\", \"epsilon\": %s, \"delta\": %s, "
                        + "\"beta\": %.17g, \"k\": %d}", c.get("epsilon"), c.get("delta"), p.getBeta(), p.getK()));
                continue;
            }
            int runs = Integer.parseInt(c.getOrDefault("runs", "1"));
            for (int r = 0; r < runs; r++) {
                System.out.println(runOnce(args[0], args[1], c, eps, delta, bean));
                System.out.flush();
            }
        }
    }

    private static String runOnce(String dataPath, String hierDir, Map<String, String> c, double eps, double delta,
                                  ThreadMXBean bean) throws Exception {
        Data data = Data.create(dataPath, StandardCharsets.UTF_8, ',');
        DataDefinition def = data.getDefinition();
        String[] qis = c.get("qis").split(",");
        for (int i = 0; i < data.getHandle().getNumColumns(); i++) {
            def.setAttributeType(data.getHandle().getAttributeName(i), AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        for (String q : qis) {
            File f = new File(hierDir, "adult_hierarchy_" + q + ".csv");
            def.setAttributeType(q, Hierarchy.create(f, StandardCharsets.UTF_8, ','));
        }
        ARXConfiguration config = ARXConfiguration.create();
        boolean fixed = c.containsKey("levels") || c.containsKey("preset");
        if (fixed) {
            DataGeneralizationScheme scheme = c.containsKey("preset")
                    ? DataGeneralizationScheme.create(data, GeneralizationDegree.valueOf(c.get("preset").toUpperCase(Locale.ROOT)))
                    : DataGeneralizationScheme.create(data);
            for (String item : c.getOrDefault("levels", "").split(",")) {
                if (!item.isEmpty()) {
                    int colon = item.lastIndexOf(':');
                    scheme.generalize(item.substring(0, colon), Integer.parseInt(item.substring(colon + 1)));
                }
            }
            config.addPrivacyModel(new EDDifferentialPrivacy(eps, delta, scheme));
        } else {
            config.addPrivacyModel(new EDDifferentialPrivacy(eps, delta));
            config.setDPSearchBudget(Double.parseDouble(c.getOrDefault("budget", "0.1")));
            config.setHeuristicSearchStepLimit(Integer.parseInt(c.getOrDefault("steps", "300")),
                    ARXConfiguration.SearchStepSemantics.EXPANSIONS);
        }
        config.setSuppressionLimit(1d);
        switch (c.getOrDefault("metric", "dm")) {
            case "dm": config.setQualityModel(Metric.createDiscernabilityMetric(false)); break;
            case "aecs": config.setQualityModel(Metric.createAECSMetric()); break;
            case "precision": config.setQualityModel(Metric.createPrecisionMetric()); break;
            case "loss": config.setQualityModel(Metric.createLossMetric()); break;
            case "entropy": config.setQualityModel(Metric.createEntropyMetric()); break;
            default: throw new IllegalArgumentException("unknown metric " + c.get("metric"));
        }
        long cpu0 = bean.getCurrentThreadCpuTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        double cpu = (bean.getCurrentThreadCpuTime() - cpu0) / 1e9;
        ARXNode opt = result.getGlobalOptimum();
        DataHandle out = result.getOutput(opt, false);
        int released = 0;
        for (int row = 0; row < out.getNumRows(); row++) {
            if (!out.isOutlier(row)) {
                released++;
            }
        }
        String[] names = opt.getQuasiIdentifyingAttributes();
        int[] lv = opt.getTransformation();
        StringBuilder sb = new StringBuilder("{\"id\": \"" + c.get("id") + "\", \"levels\": {");
        for (int i = 0; i < names.length; i++) {
            sb.append(i > 0 ? ", " : "").append('"').append(names[i]).append("\": ").append(lv[i]);
        }
        sb.append("}, \"released\": ").append(released);
        if (fixed) {
            EDDifferentialPrivacy model = result.getConfiguration().getPrivacyModel(EDDifferentialPrivacy.class);
            sb.append(", \"k\": ").append(model.getK());
            sb.append(", \"beta\": ").append(String.format(Locale.ROOT, "%.17g", model.getBeta()));
        }
        sb.append(", \"cpu_seconds\": ").append(String.format(Locale.ROOT, "%.4f", cpu)).append("}");
        data.getHandle().release();
        return sb.toString();
    }
}

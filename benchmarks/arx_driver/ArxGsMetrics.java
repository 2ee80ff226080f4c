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
import org.deidentifier.arx.ARXCostBenefitConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataDefinition;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;

/**
 * Benchmark driver: ARX's quality metrics that take the generalisation/suppression factor and
 * that ArxCompare does not build with one (precision, average class size, publisher payout,
 * entropy-based information loss), under k-anonymity with suppression; per case one JSON line
 * with the optimum node, its quality value and the CPU time.
 *
 * Usage: java ArxGsMetrics DATA.csv HIERARCHY_DIR < cases.txt
 * A case is one line of key=value tokens: id, qis (comma-separated), k, suppression, metric
 * (precision, aecs, publisher_payout, entropy_information_loss), gs (the factor, default 0.5)
 * and, for publisher_payout, benefit, publisher_loss, gain and cost (ARX's defaults where absent;
 * prosecutor attacker). Hierarchy files are HIERARCHY_DIR/adult_hierarchy_{qi}.csv.
 */
public class ArxGsMetrics {

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
            String out;
            try {
                out = runCase(args[0], args[1], c, bean);
            } catch (Exception e) {
                out = "{\"id\": \"" + c.get("id") + "\", \"error\": \"" + String.valueOf(e).replace("\"", "'") + "\"}";
            }
            System.out.println(out);
            System.out.flush();
        }
    }

    private static String runCase(String dataPath, String hierDir, Map<String, String> c, ThreadMXBean bean)
            throws Exception {
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
        double gs = Double.parseDouble(c.getOrDefault("gs", "0.5"));
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(Integer.parseInt(c.get("k"))));
        config.setCostBenefitConfiguration(ARXCostBenefitConfiguration.create()
                .setPublisherBenefit(Double.parseDouble(c.getOrDefault("benefit", "1200")))
                .setPublisherLoss(Double.parseDouble(c.getOrDefault("publisher_loss", "300")))
                .setAdversaryGain(Double.parseDouble(c.getOrDefault("gain", "300")))
                .setAdversaryCost(Double.parseDouble(c.getOrDefault("cost", "4"))));
        String metric = c.get("metric");
        switch (metric) {
            case "precision": config.setQualityModel(Metric.createPrecisionMetric(false, gs)); break;
            case "aecs": config.setQualityModel(Metric.createAECSMetric(gs)); break;
            case "publisher_payout": config.setQualityModel(Metric.createPublisherPayoutMetric(false, gs)); break;
            case "entropy_information_loss":
                config.setQualityModel(Metric.createEntropyBasedInformationLossMetric(gs));
                break;
            default: throw new IllegalArgumentException("unknown metric " + metric);
        }
        config.setSuppressionLimit(Double.parseDouble(c.getOrDefault("suppression", "0")));
        long cpu0 = bean.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        double cpu = (bean.getCurrentThreadCpuTime() - cpu0) / 1e9;
        double wall = (System.nanoTime() - t0) / 1e9;
        ARXNode opt = result.getGlobalOptimum();
        StringBuilder sb = new StringBuilder();
        sb.append("{\"id\": \"").append(c.get("id")).append("\"");
        if (opt == null) {
            sb.append(", \"levels\": null, \"value\": null");
        } else {
            String[] names = opt.getQuasiIdentifyingAttributes();
            int[] lv = opt.getTransformation();
            sb.append(", \"levels\": {");
            for (int i = 0; i < names.length; i++) {
                sb.append(i > 0 ? ", " : "").append('"').append(names[i]).append("\": ").append(lv[i]);
            }
            sb.append("}, \"value\": ").append(opt.getHighestScore().toString());
        }
        sb.append(", \"cpu_seconds\": ").append(String.format(Locale.ROOT, "%.4f", cpu));
        sb.append(", \"seconds\": ").append(String.format(Locale.ROOT, "%.4f", wall)).append("}");
        data.getHandle().release();
        return sb.toString();
    }
}

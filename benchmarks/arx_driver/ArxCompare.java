import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXCostBenefitConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.AttributeType.MicroAggregationFunction;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataDefinition;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.DataSubset;
import org.deidentifier.arx.DataType;
import org.deidentifier.arx.criteria.BasicBLikeness;
import org.deidentifier.arx.criteria.DDisclosurePrivacy;
import org.deidentifier.arx.criteria.EnhancedBLikeness;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.criteria.KMap;
import org.deidentifier.arx.criteria.OrderedDistanceTCloseness;
import org.deidentifier.arx.criteria.PopulationUniqueness;
import org.deidentifier.arx.criteria.ProfitabilityJournalist;
import org.deidentifier.arx.criteria.ProfitabilityJournalistNoAttack;
import org.deidentifier.arx.criteria.ProfitabilityProsecutor;
import org.deidentifier.arx.criteria.ProfitabilityProsecutorNoAttack;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness.PopulationUniquenessModel;

/**
 * Benchmark driver: runs ARX on one data file for the cases read from standard input and
 * prints, per case, one JSON line with the optimum node, its quality value and the CPU time.
 *
 * Usage: java ArxCompare DATA.csv HIERARCHY_DIR < cases.txt
 * A case is one line of key=value tokens: id, qis (comma-separated), sensitive, suppression,
 * metric (loss, dm, dm_star, height, ambiguity, normalised_entropy, classification), and the
 * models: k, kmap with population and estimator (poisson or zero_truncated_poisson) and
 * significance, beta with beta_variant (basic or enhanced), delta, t_ordered, uniqueness with
 * population and uniqueness_model (zayatz, pitman, snb, dankar); hier_prefix (hierarchy files
 * HIERARCHY_DIR/{hier_prefix}{qi}.csv, default adult_hierarchy_), algorithm (bottom_up,
 * top_down, binary or genetic: ARX's best-effort searches) and time_limit_ms (their time
 * limit, wall clock); profitability (prosecutor, prosecutor_no_attack, journalist or
 * journalist_no_attack: ARX's game-theoretic models) with the amounts benefit, publisher_loss,
 * gain and cost (ARX's cost/benefit configuration, its defaults where absent); the metrics
 * publisher_payout (attacker prosecutor, or journalist with payout_attacker=journalist) and
 * entropy_information_loss; subset_mod=M makes the research subset the rows whose index is a
 * multiple of M (the journalist models: the file is the population, the subset the data),
 * whose size the output gives as n; gs (ARX's generalisation/suppression factor of the loss and
 * classification metrics, default 0.5); microagg=COLUMN:FUNCTION (arithmetic_mean,
 * geometric_mean, median, mode or interval; the column a decimal quasi-identifier transformed by
 * ARX's microaggregation, without clustering) with dump=PATH (the optimum's output values of
 * that column written there, one a line, in the input's row order).
 */
public class ArxCompare {

    public static void main(String[] args) throws Exception {
        String dataPath = args[0];
        String hierDir = args[1];
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
                out = runCase(dataPath, hierDir, c, bean);
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
        String sens = c.get("sensitive");
        for (int i = 0; i < data.getHandle().getNumColumns(); i++) {
            def.setAttributeType(data.getHandle().getAttributeName(i), AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        for (String q : qis) {
            File f = new File(hierDir, c.getOrDefault("hier_prefix", "adult_hierarchy_") + q + ".csv");
            def.setAttributeType(q, Hierarchy.create(f, StandardCharsets.UTF_8, ','));
        }
        String microCol = null;
        if (c.containsKey("microagg")) {
            String[] mf = c.get("microagg").split(":");
            microCol = mf[0];
            MicroAggregationFunction f;
            switch (mf[1]) {
                case "arithmetic_mean": f = MicroAggregationFunction.createArithmeticMean(); break;
                case "geometric_mean": f = MicroAggregationFunction.createGeometricMean(); break;
                case "median": f = MicroAggregationFunction.createMedian(); break;
                case "mode": f = MicroAggregationFunction.createMode(); break;
                case "interval": f = MicroAggregationFunction.createInterval(); break;
                default: throw new IllegalArgumentException("unknown microaggregation function " + mf[1]);
            }
            def.setDataType(microCol, DataType.DECIMAL);
            def.setAttributeType(microCol, AttributeType.QUASI_IDENTIFYING_ATTRIBUTE);
            def.setMicroAggregationFunction(microCol, f, false);
        }
        double gs = Double.parseDouble(c.getOrDefault("gs", "0.5"));
        ARXConfiguration config = ARXConfiguration.create();
        boolean needsSensitive = false;
        if (c.containsKey("k")) {
            config.addPrivacyModel(new KAnonymity(Integer.parseInt(c.get("k"))));
        }
        if (c.containsKey("kmap")) {
            ARXPopulationModel pop = ARXPopulationModel.create(Long.parseLong(c.get("population")));
            KMap.CellSizeEstimator est = "zero_truncated_poisson".equals(c.get("estimator"))
                    ? KMap.CellSizeEstimator.ZERO_TRUNCATED_POISSON : KMap.CellSizeEstimator.POISSON;
            config.addPrivacyModel(new KMap(Integer.parseInt(c.get("kmap")),
                    Double.parseDouble(c.getOrDefault("significance", "0.01")), pop, est));
        }
        if (c.containsKey("beta")) {
            needsSensitive = true;
            double b = Double.parseDouble(c.get("beta"));
            config.addPrivacyModel("enhanced".equals(c.get("beta_variant")) ? new EnhancedBLikeness(sens, b)
                                                                              : new BasicBLikeness(sens, b));
        }
        if (c.containsKey("delta")) {
            needsSensitive = true;
            config.addPrivacyModel(new DDisclosurePrivacy(sens, Double.parseDouble(c.get("delta"))));
        }
        if (c.containsKey("t_ordered")) {
            needsSensitive = true;
            config.addPrivacyModel(new OrderedDistanceTCloseness(sens, Double.parseDouble(c.get("t_ordered"))));
        }
        if (c.containsKey("uniqueness")) {
            ARXPopulationModel pop = ARXPopulationModel.create(Long.parseLong(c.get("population")));
            PopulationUniquenessModel m = PopulationUniquenessModel.valueOf(
                    c.getOrDefault("uniqueness_model", "dankar").toUpperCase(Locale.ROOT));
            config.addPrivacyModel(new PopulationUniqueness(Double.parseDouble(c.get("uniqueness")), m, pop));
        }
        ARXCostBenefitConfiguration game = ARXCostBenefitConfiguration.create()
                .setPublisherBenefit(Double.parseDouble(c.getOrDefault("benefit", "1200")))
                .setPublisherLoss(Double.parseDouble(c.getOrDefault("publisher_loss", "300")))
                .setAdversaryGain(Double.parseDouble(c.getOrDefault("gain", "300")))
                .setAdversaryCost(Double.parseDouble(c.getOrDefault("cost", "4")));
        config.setCostBenefitConfiguration(game);
        DataSubset subset = null;
        if (c.containsKey("subset_mod")) {
            int mod = Integer.parseInt(c.get("subset_mod"));
            Set<Integer> rows = new HashSet<>();
            for (int i = 0; i < data.getHandle().getNumRows(); i += mod) {
                rows.add(i);
            }
            subset = DataSubset.create(data, rows);
        }
        if (c.containsKey("profitability")) {
            switch (c.get("profitability")) {
                case "prosecutor": config.addPrivacyModel(new ProfitabilityProsecutor()); break;
                case "prosecutor_no_attack": config.addPrivacyModel(new ProfitabilityProsecutorNoAttack()); break;
                case "journalist": config.addPrivacyModel(new ProfitabilityJournalist(subset)); break;
                case "journalist_no_attack": config.addPrivacyModel(new ProfitabilityJournalistNoAttack(subset)); break;
                default: throw new IllegalArgumentException("unknown profitability " + c.get("profitability"));
            }
        }
        if (needsSensitive) {
            def.setAttributeType(sens, AttributeType.SENSITIVE_ATTRIBUTE);
        }
        String metric = c.getOrDefault("metric", "dm");
        switch (metric) {
            case "loss": config.setQualityModel(Metric.createLossMetric(gs)); break;
            case "dm": config.setQualityModel(Metric.createDiscernabilityMetric(false)); break;
            case "dm_star": config.setQualityModel(Metric.createDiscernabilityMetric(true)); break;
            case "height": config.setQualityModel(Metric.createHeightMetric()); break;
            case "ambiguity": config.setQualityModel(Metric.createAmbiguityMetric()); break;
            case "normalised_entropy": config.setQualityModel(Metric.createNormalizedEntropyMetric()); break;
            case "classification":
                def.setResponseVariable(sens, true);
                config.setQualityModel(Metric.createClassificationMetric(gs));
                break;
            case "publisher_payout":
                config.setQualityModel(Metric.createPublisherPayoutMetric(
                        "journalist".equals(c.get("payout_attacker"))));
                break;
            case "entropy_information_loss":
                config.setQualityModel(Metric.createEntropyBasedInformationLossMetric());
                break;
            default: throw new IllegalArgumentException("unknown metric " + metric);
        }
        config.setSuppressionLimit(Double.parseDouble(c.getOrDefault("suppression", "0")));
        if (c.containsKey("algorithm")) {
            // bottom_up is ARX's Lightning, the search it offers for lattices above 100,000 nodes
            config.setAlgorithm(ARXConfiguration.AnonymizationAlgorithm.valueOf(
                    "BEST_EFFORT_" + c.get("algorithm").toUpperCase(Locale.ROOT)));
        }
        if (c.containsKey("time_limit_ms")) {
            config.setHeuristicSearchTimeLimit(Integer.parseInt(c.get("time_limit_ms")));
        }
        ARXAnonymizer anonymizer = new ARXAnonymizer();
        long cpu0 = bean.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        ARXResult result = anonymizer.anonymize(data, config);
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
        if (subset != null) {
            sb.append(", \"n\": ").append(subset.getSet().size());
        }
        if (opt != null && microCol != null && c.containsKey("dump")) {
            DataHandle out = result.getOutput(opt, false);
            int col = out.getColumnIndexOf(microCol);
            try (PrintWriter w = new PrintWriter(c.get("dump"), "UTF-8")) {
                for (int r = 0; r < out.getNumRows(); r++) {
                    w.println(out.getValue(r, col));
                }
            }
        }
        sb.append(", \"cpu_seconds\": ").append(String.format(Locale.ROOT, "%.4f", cpu));
        sb.append(", \"seconds\": ").append(String.format(Locale.ROOT, "%.4f", wall)).append("}");
        data.getHandle().release();
        return sb.toString();
    }
}

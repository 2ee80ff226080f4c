import java.util.HashMap;
import java.util.Map;

import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.DataType;
import org.deidentifier.arx.aggregates.HierarchyBuilderPriorityBased;
import org.deidentifier.arx.aggregates.HierarchyBuilderPriorityBased.Priority;

/**
 * Prints the hierarchy ARX 3.9.2's priority-based builder (HierarchyBuilderPriorityBased) makes
 * for one input, one row a line, levels separated by ';' (the table sdckit's
 * priority_hierarchy is tested against; never run by the tests).
 *
 * Usage: java ArxPriorityHierarchy DIRECTION MAX_LEVELS MODE VALUE...
 * DIRECTION is highest_to_lowest or lowest_to_highest; MODE is integer or string (the values
 * ordered by ARX's data type), or priorities (each VALUE is value=priority, the values ordered
 * by their priorities; a bare value has none). The values are passed in the order given.
 *
 * Build and run against the classes compiled by benchmarks/compare_arx.py (from the project root):
 *   B=~/.cache/sdckit-arx; CP=$B/classes:$(ls $B/lib/ant/*.jar | tr '\n' ':')
 *   javac -nowarn -d /tmp/arxprio -cp "$CP" -sourcepath $B/src/main:$B/stubs benchmarks/arx_driver/ArxPriorityHierarchy.java
 *   java -cp /tmp/arxprio:"$CP" ArxPriorityHierarchy highest_to_lowest 4 integer 7 3 12 1 9
 */
public class ArxPriorityHierarchy {

    public static void main(String[] args) {
        Priority direction = Priority.valueOf(args[0].toUpperCase());
        int maxLevels = Integer.parseInt(args[1]);
        String mode = args[2];
        String[] values = new String[args.length - 3];
        Map<String, Integer> priorities = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String a = args[i];
            int eq = a.lastIndexOf('=');
            if ("priorities".equals(mode) && eq > 0) {
                values[i - 3] = a.substring(0, eq);
                priorities.put(values[i - 3], Integer.parseInt(a.substring(eq + 1)));
            } else {
                values[i - 3] = a;
            }
        }
        HierarchyBuilderPriorityBased<?> builder;
        switch (mode) {
            case "integer": builder = HierarchyBuilderPriorityBased.create(DataType.INTEGER, direction, maxLevels); break;
            case "string": builder = HierarchyBuilderPriorityBased.create(DataType.STRING, direction, maxLevels); break;
            case "priorities": builder = HierarchyBuilderPriorityBased.create(priorities, direction, maxLevels); break;
            default: throw new IllegalArgumentException("unknown mode " + mode);
        }
        Hierarchy h = builder.build(values);
        for (String[] row : h.getHierarchy()) {
            System.out.println(String.join(";", row));
        }
    }
}

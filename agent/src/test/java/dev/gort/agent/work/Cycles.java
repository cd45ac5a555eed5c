package dev.gort.agent.work;

import java.util.ArrayList;
import java.util.List;
import org.apache.commons.lang3.builder.HashCodeBuilder;
import org.apache.commons.lang3.builder.ToStringBuilder;
import org.apache.commons.lang3.builder.ToStringStyle;

/**
 * commons-lang3's reflection builders over object cycles, the shape of its own
 * {@code HashCodeBuilderTest.testReflectionObjectCycle} and
 * {@code ToStringBuilderTest.testSelfInstanceTwoVarsReflectionObjectCycle}: each node's
 * {@code hashCode}/{@code toString} is the reflection builder's, so a ring recurses through the
 * builders, which stop at a node already on the way by looking it up in a {@code ThreadLocal}
 * registry (HashCodeBuilder's REGISTRY, ToStringStyle's). A registry that does not follow the code
 * across a preemption breaks the cycle detection or leaves entries behind that change later
 * results. The result depends only on the arguments (identity hashes are cut out of the strings),
 * so it can be compared with the same work done without instrumentation.
 */
public final class Cycles {
    /** A node of a ring, referring to itself too (two variables, one of them a self-cycle). */
    public static final class Node {
        private final int id;
        private final String name;
        private final long weight;
        private final List<Integer> list = new ArrayList<>();
        private Node next;
        private Node self;

        Node(int id, String name, long weight) {
            this.id = id;
            this.name = name;
            this.weight = weight;
        }

        @Override
        public int hashCode() {
            return HashCodeBuilder.reflectionHashCode(this);
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public String toString() {
            return ToStringBuilder.reflectionToString(this, ToStringStyle.SHORT_PREFIX_STYLE);
        }
    }

    /** A ring of {@code n} nodes whose contents depend on {@code seed} only. */
    static Node ring(int seed, int n) {
        Node[] nodes = new Node[n];
        for (int k = 0; k < n; k++) {
            nodes[k] = new Node(seed * 1000 + k, "node-" + seed + "-" + k, (long) seed * 31 + k);
            for (int j = 0; j < k % 3; j++) {
                nodes[k].list.add(seed + j);
            }
        }
        for (int k = 0; k < n; k++) {
            nodes[k].next = nodes[(k + 1) % n];
            nodes[k].self = nodes[k];
        }
        return nodes[0];
    }

    /** Cuts {@code @1b6d3586}-style identity hashes out of {@code s}. */
    static String withoutIdentities(String s) {
        return s.replaceAll("@[0-9a-f]+", "@");
    }

    /** {@code rounds} rings' reflection hash codes and strings, folded into one number. */
    public long work(int i, int rounds) {
        long h = 17;
        for (int r = 0; r < rounds; r++) {
            Node head = ring(i * 7 + r, 6 + (i + r) % 7);
            h = h * 31 + HashCodeBuilder.reflectionHashCode(head);
            h = h * 31 + withoutIdentities(head.toString()).hashCode();
        }
        return h;
    }
}

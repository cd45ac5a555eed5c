package dev.gort.agent.work;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.cache.CacheBuilder;
import com.google.common.cache.CacheLoader;
import com.google.common.cache.LoadingCache;
import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.commons.lang3.StringUtils;

/**
 * Real libraries' own logic, one unit of work per goroutine: Jackson JSON round trips of an object
 * graph, a Guava {@code LoadingCache} shared by all (its segments are {@code ReentrantLock}s), Murmur3
 * hashing and commons-lang's {@code StringUtils}. The result depends only on the index, so it can
 * be compared with the same work done without instrumentation. One instance per class loader.
 */
public final class RealLibs {
    private final ObjectMapper mapper = new ObjectMapper();
    private final LoadingCache<Integer, String> cache = CacheBuilder.newBuilder()
            .concurrencyLevel(4)
            .maximumSize(64)
            .build(new CacheLoader<>() {
                @Override
                public String load(Integer k) {
                    return expensive(k);
                }
            });

    /** A node of the graph that goes through JSON. */
    public static final class Order {
        public int id;
        public String customer;
        public List<Item> items = new ArrayList<>();
        public Map<String, Integer> tags = new LinkedHashMap<>();

        @Override
        public boolean equals(Object o) {
            return o instanceof Order x
                    && id == x.id
                    && customer.equals(x.customer)
                    && items.equals(x.items)
                    && tags.equals(x.tags);
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, customer, items, tags);
        }
    }

    /** A leaf of the graph. */
    public static final class Item {
        public String sku;
        public long qty;
        public double price;

        @Override
        public boolean equals(Object o) {
            return o instanceof Item x && sku.equals(x.sku) && qty == x.qty && price == x.price;
        }

        @Override
        public int hashCode() {
            return Objects.hash(sku, qty, price);
        }
    }

    static String expensive(int k) {
        StringBuilder sb = new StringBuilder();
        long x = k;
        for (int i = 0; i < 2000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            if (i % 100 == 0) {
                sb.append(Long.toHexString(x));
            }
        }
        return sb.toString();
    }

    static Order order(int i) {
        Order o = new Order();
        o.id = i;
        o.customer = StringUtils.leftPad("c" + i, 12, '*');
        for (int j = 0; j < 1 + i % 7; j++) {
            Item it = new Item();
            it.sku = StringUtils.reverse("sku-" + i + "-" + j);
            it.qty = (long) i * j;
            it.price = j + i / 8.0;
            o.items.add(it);
            o.tags.put(StringUtils.capitalize("t" + j), i ^ j);
        }
        return o;
    }

    /** One goroutine's work for index {@code i}, {@code rounds} times over; a digest of everything it saw. */
    public long work(int i, int rounds) throws Exception {
        long digest = 17;
        for (int r = 0; r < rounds; r++) {
            Order o = order(i + r);
            String json = mapper.writeValueAsString(o);
            Order back = mapper.readValue(json, Order.class);
            if (!back.equals(o)) {
                throw new IllegalStateException("JSON round trip changed order " + (i + r) + ": " + json);
            }
            String cached = cache.get((i + r) % 97);
            long h = Hashing.murmur3_128()
                    .hashString(json + cached, StandardCharsets.UTF_8)
                    .asLong();
            String abbrev = StringUtils.abbreviate(json, 40);
            digest = digest * 31 + h;
            digest = digest * 31 + StringUtils.countMatches(json, '"');
            digest = digest * 31 + abbrev.hashCode();
        }
        return digest;
    }
}

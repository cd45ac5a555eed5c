package dev.gort.sync;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of sync.Pool's lock-free queues ({@link PoolDequeue}, {@link PoolChain}) under the
 * Java memory model: one producer (pushHead, popHead: the P that owns the pool's shard) against
 * consumers stealing at the tail (popTail: other Ps). {@code PoolTest.dequeue}/{@code chain} check
 * the same races by running them (no value lost or duplicated over 2^20 values); these check each
 * race's outcomes in isolation, including the acquire/release pairs a sequentially consistent test
 * cannot see. Every outcome not listed is FORBIDDEN (jcstress's default).
 *
 * <p>The classes are package-private in gort-api: these tests are in {@code dev.gort.sync} for that.
 * Outcome codes: a value is 1, 2 or 3; 0 is "got nothing" (null).
 *
 * <p>Go: sync/poolqueue.go (the races its comments argue about)
 */
public final class PoolQueueJcstress {
    private PoolQueueJcstress() {}

    static final Integer ONE = 1;
    static final Integer TWO = 2;
    static final Integer THREE = 3;

    static int id(Object o) {
        return o == null ? 0 : (Integer) o;
    }

    /** What a producer writes with plain stores before pushHead. */
    static final class Payload {
        int x;
        int y;
    }

    /**
     * The producer's popHead against a consumer's popTail of the only value: the CAS of headTail
     * decides, exactly one of them gets it. Go: poolDequeue.popHead vs popTail.
     */
    @JCStressTest
    @Description("popHead vs popTail of a dequeue's only value: never both, never neither")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "the producer popped it")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the consumer popped it")
    @State
    public static class PopHeadVsPopTail {
        final PoolDequeue d = new PoolDequeue(4);

        public PopHeadVsPopTail() {
            d.pushHead(ONE);
        }

        @Actor
        public void producer(II_Result r) {
            r.r1 = id(d.popHead());
        }

        @Actor
        public void consumer(II_Result r) {
            r.r2 = id(d.popTail());
        }
    }

    /** Two consumers on the only value: exactly one gets it. Go: poolDequeue.popTail (CAS of tail). */
    @JCStressTest
    @Description("two consumers popTail a dequeue's only value: exactly one gets it")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "consumer 1 popped it")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "consumer 2 popped it")
    @State
    public static class TwoPopTails {
        final PoolDequeue d = new PoolDequeue(4);

        public TwoPopTails() {
            d.pushHead(ONE);
        }

        @Actor
        public void consumer1(II_Result r) {
            r.r1 = id(d.popTail());
        }

        @Actor
        public void consumer2(II_Result r) {
            r.r2 = id(d.popTail());
        }
    }

    /**
     * Publication: the producer fills a value's fields with plain stores, then pushHead (a plain store
     * of the slot, then the volatile add to head); a consumer whose popTail gets it (volatile read and
     * CAS of headTail, then the slot) sees every field. Go: pushHead's atomic add, popTail's CAS.
     */
    @JCStressTest
    @Description("a consumer that pops a value sees the fields the producer wrote before pushHead")
    @Outcome(id = "0, 0, 1", expect = ACCEPTABLE, desc = "the consumer came first; the value is still queued")
    @Outcome(id = "7, 42, 0", expect = ACCEPTABLE, desc = "popped, with everything the producer wrote")
    @State
    public static class PublishThroughPushHead {
        final PoolDequeue d = new PoolDequeue(4);

        @Actor
        public void producer() {
            Payload p = new Payload();
            p.x = 7;
            p.y = 42;
            d.pushHead(p);
        }

        @Actor
        public void consumer(III_Result r) {
            Object o = d.popTail();
            if (o instanceof Payload p) {
                r.r1 = p.x;
                r.r2 = p.y;
            }
        }

        @Arbiter
        public void left(III_Result r) {
            r.r3 = d.popHead() == null ? 0 : 1;
        }
    }

    /**
     * Slot reuse on a full dequeue of two: a consumer pops the oldest value (1) while the producer
     * pushes 3 into the slot that value occupied. The producer may reuse the slot only once the
     * consumer has read it and released it (the release store of null, read by pushHead's acquire
     * load): until then pushHead reports full. So the consumer gets 1, never 3, and nothing is lost:
     * what is left is 3 then 2 (popHead order) if the push succeeded, 2 alone if not. The third
     * result is the values left, newest first, as digits. Go: poolDequeue.pushHead's "head slot is
     * free" check vs popTail's atomic store of the zero slot.
     */
    @JCStressTest
    @Description("pushHead into the slot a popTail is emptying: the consumer gets the old value, nothing lost")
    @Outcome(id = "1, 1, 32", expect = ACCEPTABLE, desc = "pushed after the consumer released the slot")
    @Outcome(id = "1, 0, 2", expect = ACCEPTABLE, desc = "the dequeue was still full: push refused")
    @State
    public static class PushIntoSlotBeingPopped {
        final PoolDequeue d = new PoolDequeue(2);

        public PushIntoSlotBeingPopped() {
            d.pushHead(ONE);
            d.pushHead(TWO);
        }

        @Actor
        public void consumer(III_Result r) {
            r.r1 = id(d.popTail());
        }

        @Actor
        public void producer(III_Result r) {
            r.r2 = d.pushHead(THREE) ? 1 : 0;
        }

        @Arbiter
        public void left(III_Result r) {
            int digits = 0;
            for (Object o; (o = d.popHead()) != null; ) {
                digits = digits * 10 + id(o);
            }
            r.r3 = digits;
        }
    }

    /**
     * A chain growing while a consumer drains it: the first dequeue (8 slots) is full, the producer's
     * next push links a new one (d.next, volatile) and pushes there, while a consumer pops at the
     * tail. The consumer gets the oldest value (1) whatever the interleaving, and every value is
     * still there exactly once: the third result counts the values left (8 or 9, with the
     * consumer's one: never a value lost to the dropped dequeue or seen twice). Go: poolChain.pushHead
     * vs popTail.
     */
    @JCStressTest
    @Description("a consumer pops while the producer grows the chain: oldest first, nothing lost or duplicated")
    @Outcome(id = "1, 8, 1", expect = ACCEPTABLE, desc = "the consumer got the oldest; 8 left, the new one among them")
    @State
    public static class ChainGrowsWhilePopped {
        final PoolChain c = new PoolChain();

        public ChainGrowsWhilePopped() {
            for (int i = 1; i <= 8; i++) {
                c.pushHead(i);
            }
        }

        @Actor
        public void consumer(III_Result r) {
            r.r1 = id(c.popTail());
        }

        @Actor
        public void producer() {
            c.pushHead(9);
        }

        @Arbiter
        public void left(III_Result r) {
            int n = 0;
            boolean nine = false;
            boolean[] seen = new boolean[10];
            for (Object o; (o = c.popHead()) != null; ) {
                int v = id(o);
                if (seen[v]) {
                    n = -100; // a duplicate
                }
                seen[v] = true;
                n++;
                nine |= v == 9;
            }
            r.r2 = n;
            r.r3 = nine ? 1 : 0;
        }
    }

    /**
     * Two consumers draining a chain of two dequeues, one value in each (the first dequeue's last, 1
     * here, and 2 in the second): whichever consumer finds the first dequeue empty moves on to the
     * second (and races the other to drop the first, the CAS of tail). Each value goes to exactly one
     * consumer and neither comes back empty. Go: poolChain.popTail.
     */
    @JCStressTest
    @Description("two consumers drain a chain of two dequeues: each value exactly once")
    @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "consumer 1 got the older value")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "consumer 2 got the older value")
    @State
    public static class TwoConsumersAcrossDequeues {
        final PoolChain c = new PoolChain();

        public TwoConsumersAcrossDequeues() {
            for (int i = 0; i < 8; i++) {
                c.pushHead(100 + i);
            }
            c.pushHead(TWO); // goes into a second dequeue: the first is full
            for (int i = 0; i < 7; i++) {
                c.popTail(); // leaves 107, the first dequeue's last value
            }
        }

        @Actor
        public void consumer1(II_Result r) {
            r.r1 = norm(c.popTail());
        }

        @Actor
        public void consumer2(II_Result r) {
            r.r2 = norm(c.popTail());
        }

        static int norm(Object o) {
            int v = id(o);
            return v == 107 ? 1 : v;
        }
    }
}

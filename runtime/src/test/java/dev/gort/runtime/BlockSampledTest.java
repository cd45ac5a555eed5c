package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Go's block-profile sampling rule ({@code mprof.go blocksampled}) with its draws given: an event
 * at least the rate long is always kept, a shorter one of d ns is kept when the draw modulo the
 * rate is at most d (probability (d + 1) / rate), and a rate of 0 keeps nothing.
 */
class BlockSampledTest {
    @Test
    void anEventAtLeastTheRateLongIsAlwaysKept() {
        for (long rand : new long[] {0, 1, 999, Long.MAX_VALUE, Long.MIN_VALUE, -1}) {
            assertTrue(BlockProfiles.blocksampled(1_000, 1_000, rand));
            assertTrue(BlockProfiles.blocksampled(5_000, 1_000, rand));
        }
    }

    @Test
    void aShorterEventIsKeptWhenTheDrawFallsUnderItsLength() {
        long rate = 2_000_000_000L;
        assertTrue(BlockProfiles.blocksampled(1_000, rate, 1_000));
        assertTrue(BlockProfiles.blocksampled(1_000, rate, rate + 500)); // modulo the rate
        assertFalse(BlockProfiles.blocksampled(1_000, rate, 1_001));
        assertFalse(BlockProfiles.blocksampled(1_000, rate, rate - 1));
        assertTrue(BlockProfiles.blocksampled(1_000, rate, -rate)); // a negative draw, modulo the rate: 0
        assertFalse(BlockProfiles.blocksampled(1_000, rate, -1)); // floorMod: rate - 1
    }

    /** Over every draw modulo a small rate, the share kept is (d + 1) / rate. */
    @Test
    void theShareKeptIsTheLengthOverTheRate() {
        int rate = 1_000;
        for (int d : new int[] {0, 1, 10, 500, 999}) {
            int kept = 0;
            for (int rand = 0; rand < rate; rand++) {
                if (BlockProfiles.blocksampled(d, rate, rand)) {
                    kept++;
                }
            }
            assertEquals(d + 1, kept, "length " + d);
        }
    }

    @Test
    void aRateOfZeroKeepsNothing() {
        assertFalse(BlockProfiles.blocksampled(Long.MAX_VALUE, 0, 0));
        assertFalse(BlockProfiles.blocksampled(1, 0, 0));
    }
}

package dev.gort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gort.runtime.pprof.ProfileProto.Profile;
import dev.gort.runtime.pprof.ProfileProto.Sample;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code pprof.WriteHeapProfile} ({@link Go#writeHeapProfile}) after {@link Go#startMemProfile}:
 * Go's heap profile.proto, {@code inuse_space} last (what {@code go tool pprof} shows by default),
 * a goroutine's allocations under the method that made them.
 */
@Timeout(120)
class HeapProfileTest {
    static volatile Object sink;

    static final class Payload {
        long a;
        long b;
    }

    static void allocateForTheHeapProfile(int n) {
        for (int i = 0; i < n; i++) {
            Payload p = new Payload();
            p.a = i;
            sink = p;
        }
    }

    static Profile heapProfile() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            Go.writeHeapProfile(out);
            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(out.toByteArray()))) {
                return Profile.parseFrom(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** alloc_space of the samples whose top frame is {@link #allocateForTheHeapProfile}. */
    static long allocSpace(Profile p) {
        long n = 0;
        for (Sample sm : p.getSampleList()) {
            if (sm.getLocationIdCount() == 0) {
                continue; // JFR gave no stack
            }
            long loc = sm.getLocationId(0);
            long fid = p.getLocation((int) loc - 1).getLine(0).getFunctionId();
            String fn = p.getStringTable((int) p.getFunction((int) fid - 1).getName());
            if (fn.equals(HeapProfileTest.class.getName() + ".allocateForTheHeapProfile")) {
                n += sm.getValue(1);
            }
        }
        return n;
    }

    @Test
    void writeHeapProfileWritesWhatWasSampledInGosForm() {
        Go.startMemProfile();
        long[] space = new long[1];
        Profile[] last = new Profile[1];
        try {
            Go.run(() -> {
                Chan<Boolean> done = Chan.make();
                Go.go(() -> {
                    long deadline = System.nanoTime() + 60_000_000_000L;
                    while (space[0] == 0 && System.nanoTime() - deadline < 0) {
                        allocateForTheHeapProfile(1 << 20);
                        last[0] = heapProfile();
                        space[0] = allocSpace(last[0]);
                    }
                    done.send(true);
                });
                done.recv();
            });
        } finally {
            Go.stopMemProfile();
        }
        Profile p = last[0];
        assertTrue(space[0] > 0, "no JFR allocation sample of allocateForTheHeapProfile in 60 s");
        assertEquals(4, p.getSampleTypeCount());
        assertEquals("inuse_space", p.getStringTable((int) p.getSampleType(3).getType()));
        assertEquals(0, p.getDefaultSampleType(), "the heap profile names no default: pprof takes the last");
    }
}

package dev.gort.runtime.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import java.io.ByteArrayOutputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Perfetto protobuf trace, read back without a schema (protobuf-java's UnknownFieldSet) and
 * checked against Perfetto's rules for synthetic traces: every track is described before it is
 * used, thread tracks carry pid/tid from 1, every packet that uses interned names is on sequence 1
 * and says so (the first one clears the incremental state), names and categories are interned
 * before use, timestamps never decrease, slices on a track balance (P tracks never nest), every
 * flow has both ends, and each counter sample changes its track's value. The runs on each P are
 * the trace's runs, and the file is several times smaller per event than the JSON.
 */
class PerfettoProtoWriterTest {
    /** Deleted by JUnit after each test (a temporary directory per run would pile up in /tmp). */
    @TempDir
    Path tmp;

    record Track(long uuid, String name, long pid, long tid, boolean counter) {}

    static final class Read {
        final Map<Long, Track> tracks = new HashMap<>();
        final Map<Long, Integer> slicesByTrack = new HashMap<>();
        int events;
        int flows;
        int packets;
    }

    static Read read(byte[] bytes) throws Exception {
        Read r = new Read();
        UnknownFieldSet trace = UnknownFieldSet.parseFrom(bytes);
        List<ByteString> packets = trace.getField(PerfettoProtoWriter.PACKET).getLengthDelimitedList();
        Map<Long, String> names = new HashMap<>();
        Map<Long, String> cats = new HashMap<>();
        Map<Long, Deque<Long>> open = new HashMap<>();
        Map<Long, Long> lastCounter = new HashMap<>();
        Set<Long> flowStarts = new HashSet<>();
        Set<Long> flowEnds = new HashSet<>();
        long lastTs = -1;
        boolean first = true;
        for (ByteString bs : packets) {
            r.packets++;
            UnknownFieldSet pk = UnknownFieldSet.parseFrom(bs);
            if (pk.hasField(PerfettoProtoWriter.TRACK_DESCRIPTOR)) {
                UnknownFieldSet td = UnknownFieldSet.parseFrom(one(pk, PerfettoProtoWriter.TRACK_DESCRIPTOR));
                long uuid = td.getField(1).getVarintList().get(0);
                String name = one(td, 2).toStringUtf8();
                long pid = 0;
                long tid = 0;
                if (td.hasField(4)) {
                    UnknownFieldSet th = UnknownFieldSet.parseFrom(one(td, 4));
                    pid = th.getField(1).getVarintList().get(0);
                    tid = th.getField(2).getVarintList().get(0);
                    assertTrue(pid >= 1 && tid >= 1, "thread track " + name + " pid/tid from 1");
                    assertFalse(td.hasField(5), "thread track " + name + " has a parent");
                }
                if (td.hasField(3)) {
                    pid = UnknownFieldSet.parseFrom(one(td, 3))
                            .getField(1)
                            .getVarintList()
                            .get(0);
                    assertTrue(pid >= 1, "process " + name + " pid from 1");
                }
                if (td.hasField(5)) {
                    assertTrue(
                            r.tracks.containsKey(td.getField(5).getVarintList().get(0)), "parent of " + name);
                }
                assertEquals(null, r.tracks.put(uuid, new Track(uuid, name, pid, tid, td.hasField(8))), "track twice");
                continue;
            }
            assertTrue(pk.hasField(PerfettoProtoWriter.TRACK_EVENT), "packet without an event");
            r.events++;
            assertEquals(
                    1L, pk.getField(PerfettoProtoWriter.SEQ_ID).getVarintList().get(0));
            long flags = pk.getField(PerfettoProtoWriter.SEQUENCE_FLAGS)
                    .getVarintList()
                    .get(0);
            assertEquals(first ? 3L : 2L, flags, "sequence flags");
            first = false;
            long ts = pk.getField(PerfettoProtoWriter.TIMESTAMP).getVarintList().get(0);
            assertTrue(ts >= lastTs, "timestamps go back: " + lastTs + " then " + ts);
            lastTs = ts;
            if (pk.hasField(PerfettoProtoWriter.INTERNED_DATA)) {
                UnknownFieldSet in = UnknownFieldSet.parseFrom(one(pk, PerfettoProtoWriter.INTERNED_DATA));
                intern(in, 1, cats);
                intern(in, 2, names);
            }
            UnknownFieldSet te = UnknownFieldSet.parseFrom(one(pk, PerfettoProtoWriter.TRACK_EVENT));
            long track = te.getField(PerfettoProtoWriter.TE_TRACK_UUID)
                    .getVarintList()
                    .get(0);
            Track tr = r.tracks.get(track);
            assertNotNull(tr, "event on an undeclared track " + track);
            long type = te.getField(PerfettoProtoWriter.TE_TYPE).getVarintList().get(0);
            for (long c : te.getField(PerfettoProtoWriter.TE_CATEGORY_IIDS).getVarintList()) {
                assertTrue(cats.containsKey(c), "category iid " + c + " not interned");
            }
            for (long n : te.getField(PerfettoProtoWriter.TE_NAME_IID).getVarintList()) {
                assertTrue(names.containsKey(n), "name iid " + n + " not interned");
            }
            for (long f : te.getField(PerfettoProtoWriter.TE_FLOW_IDS).getFixed64List()) {
                assertTrue(flowStarts.add(f), "flow " + f + " starts twice");
            }
            for (long f :
                    te.getField(PerfettoProtoWriter.TE_TERMINATING_FLOW_IDS).getFixed64List()) {
                assertTrue(flowStarts.contains(f), "flow " + f + " ends before it starts");
                assertTrue(flowEnds.add(f), "flow " + f + " ends twice");
                r.flows++;
            }
            if (type == PerfettoProtoWriter.COUNTER) {
                assertTrue(tr.counter(), "counter value on " + tr.name());
                long v = te.getField(PerfettoProtoWriter.TE_COUNTER_VALUE)
                        .getVarintList()
                        .get(0);
                Long prev = lastCounter.put(track, v);
                assertTrue(prev == null || prev != v, "counter " + tr.name() + " written without a change");
            } else if (type == PerfettoProtoWriter.SLICE_BEGIN) {
                assertFalse(tr.counter());
                assertTrue(te.hasField(PerfettoProtoWriter.TE_NAME_IID), "slice without a name");
                Deque<Long> st = open.computeIfAbsent(track, k -> new ArrayDeque<>());
                if (tr.name().startsWith("Proc ")) {
                    assertTrue(st.isEmpty(), "runs nest on " + tr.name());
                }
                st.push(ts);
                r.slicesByTrack.merge(track, 1, Integer::sum);
            } else if (type == PerfettoProtoWriter.SLICE_END) {
                Deque<Long> st = open.get(track);
                assertTrue(st != null && !st.isEmpty(), "slice end without a begin on " + tr.name());
                st.pop();
            } else {
                assertEquals(PerfettoProtoWriter.INSTANT, type);
            }
        }
        for (Map.Entry<Long, Deque<Long>> e : open.entrySet()) {
            assertTrue(
                    e.getValue().isEmpty(),
                    "slices left open on " + r.tracks.get(e.getKey()).name());
        }
        assertEquals(flowStarts, flowEnds, "flows with one end");
        return r;
    }

    private static ByteString one(UnknownFieldSet s, int field) {
        List<ByteString> l = s.getField(field).getLengthDelimitedList();
        assertEquals(1, l.size(), "field " + field);
        return l.get(0);
    }

    private static void intern(UnknownFieldSet in, int field, Map<Long, String> into) throws Exception {
        for (ByteString e : in.getField(field).getLengthDelimitedList()) {
            UnknownFieldSet x = UnknownFieldSet.parseFrom(e);
            long iid = x.getField(1).getVarintList().get(0);
            assertEquals(null, into.put(iid, one(x, 2).toStringUtf8()), "iid " + iid + " interned twice");
        }
    }

    @Test
    void fanOutFollowsPerfettosRulesAndHoldsEveryRun() throws Exception {
        Workloads.Run r = Workloads.fanOut(Workloads.config(4, true), 48, 300_000);
        Trace t = r.trace();
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        PerfettoProtoWriter.write(t, bo);
        Read rd = read(bo.toByteArray());
        int[] runs = new int[t.initialProcs];
        for (long[] run : HtmlTimelineChromiumTest.runs(t)) {
            runs[(int) run[0]]++;
        }
        for (int p = 0; p < t.initialProcs; p++) {
            assertEquals(runs[p], rd.slicesByTrack.getOrDefault(PerfettoProtoWriter.pTrack(p), 0), "runs on P" + p);
            Track tr = rd.tracks.get(PerfettoProtoWriter.pTrack(p));
            assertEquals("Proc " + p, tr.name());
            assertEquals(1, tr.pid());
            assertEquals(p + 1, tr.tid());
        }
        assertTrue(rd.flows >= 40, "go/unblock flows: " + rd.flows);
    }

    /** Bytes per event of the two formats on ping-pong (the worst case: every event is a hand-off). */
    @Test
    void protobufIsSeveralTimesSmallerThanJson() throws Exception {
        Workloads.Run r = Workloads.pingPong(Workloads.config(2, true), 5_000);
        Trace t = r.trace();
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        PerfettoProtoWriter.write(t, bo);
        read(bo.toByteArray());
        StringWriter sw = new StringWriter();
        ChromeTraceWriter.write(t, sw);
        long json = sw.toString().getBytes(StandardCharsets.UTF_8).length;
        long proto = bo.size();
        Path dir = tmp;
        Path gz = dir.resolve("t.pftrace.gz");
        TraceFiles.write(t, gz);
        Path jgz = dir.resolve("t.json.gz");
        TraceFiles.write(t, jgz);
        System.out.printf(
                "ping-pong, %d events: JSON %.1f B/event (gzip %.1f), protobuf %.1f B/event (gzip %.1f)%n",
                t.size(),
                (double) json / t.size(),
                (double) Files.size(jgz) / t.size(),
                (double) proto / t.size(),
                (double) Files.size(gz) / t.size());
        assertTrue(proto * 3 < json, "protobuf " + proto + " B vs JSON " + json + " B");
    }
}

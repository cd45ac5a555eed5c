package dev.gort.compat;

import java.text.DateFormatSymbols;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.TimeZone;
import org.apache.commons.lang3.time.FastDateFormat;

/**
 * A child JVM's main for {@link SuiteJvmSoftReferencesTest}: the sequence of calls behind the 21
 * extra aborts of {@code FastDateParser_TimeZoneStrategyTest.testTimeZoneStrategy_DateFormatSymbols}
 * in the gort2 run of 2026-12-01, replayed on one plain thread, no gort, no agent.
 *
 * <ol>
 *   <li>{@code FastDateParserTest} builds en_CA's zone strategy, which commons-lang3 caches for the
 *       rest of the JVM (a static map, strongly held): its names are en_CA's
 *       {@code getZoneStrings()} of that moment.
 *   <li>{@code clear}: the JDK's soft caches of zone names (DateFormatSymbols', TimeZoneNameUtility's
 *       and LocaleResources') are cleared, here by filling the heap. In the suite the GC clears them by
 *       age ({@code -XX:SoftRefLRUPolicyMSPerMB}: a soft reference unused for about a second per free
 *       MB of heap goes), which a run as slow as gort2's reaches before the class below gets to
 *       en_CA, and the plain run did not.
 *   <li>{@code FastDateParser_TimeZoneStrategyTest} runs its locales sorted: "en" before "en_CA".
 *       Deriving en's names writes fallbacks ("Abidjan Daylight Time") into en's cached name arrays,
 *       and en_CA's names, recomputed after the clear, copy them from their parent instead of using
 *       en_CA's own region format ("Abidjan Daylight Saving Time").
 *   <li>en_CA's zone names of now are parsed with the strategy of step 1, as the test does.
 * </ol>
 *
 * <p>Prints one line, {@code unparseable=N first=NAME}: 0 without {@code clear}.
 */
public final class ZoneNamesAfterSoftClear {
    private ZoneNamesAfterSoftClear() {}

    /** Held until the heap is full; cleared before the names are read again. */
    private static List<long[]> ballast = new ArrayList<>();

    public static void main(String[] args) throws ParseException {
        Locale enCa = Locale.forLanguageTag("en-CA");
        TimeZone gmt = TimeZone.getTimeZone("GMT");
        FastDateFormat.getInstance("z", gmt, enCa).parse("Greenwich Mean Time"); // step 1
        if (args.length > 0 && args[0].equals("clear")) {
            try {
                for (; ; ) {
                    ballast.add(new long[1 << 16]); // the JVM clears every soft reference before an OOME
                }
            } catch (OutOfMemoryError expected) {
                ballast = null;
            }
        }
        DateFormatSymbols.getInstance(Locale.ENGLISH).getZoneStrings(); // step 3: the "en" invocation
        String[][] zones = DateFormatSymbols.getInstance(enCa).getZoneStrings();
        Arrays.sort(zones, Comparator.comparing((String[] z) -> z[0]));
        int bad = 0;
        String first = "-";
        for (String[] zone : zones) {
            for (int i = 1; i < zone.length && zone[i] != null; i++) {
                try {
                    FastDateFormat.getInstance("z", gmt, enCa).parse(zone[i]); // step 4
                } catch (ParseException e) {
                    if (bad++ == 0) {
                        first = zone[i];
                    }
                }
            }
        }
        System.out.println("unparseable=" + bad + " first=" + first);
    }
}

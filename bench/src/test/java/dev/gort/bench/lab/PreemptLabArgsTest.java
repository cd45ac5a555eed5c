package dev.gort.bench.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lab's command line: help, and every argument it cannot run with, answer before any work with
 * a message that names the option and what it wants (they used to be "unknown argument --help",
 * "Index 2 out of bounds for length 2", {@code For input string: "abc"}, or, for {@code --rounds 0},
 * a stack trace from the report after the whole run).
 */
class PreemptLabArgsTest {
    static String error(String... args) {
        return assertThrows(
                        IllegalArgumentException.class,
                        () -> PreemptLab.parse(args),
                        List.of(args).toString())
                .getMessage();
    }

    @Test
    void helpIsAskedForAndTheUsageSaysWhatEachOptionDoes() {
        assertTrue(PreemptLab.parse(new String[] {"preempt", "--help"}).help());
        assertTrue(PreemptLab.parse(new String[] {"preempt", "-h"}).help());
        String usage = PreemptLab.usage();
        assertTrue(usage.startsWith("usage: ./gort lab preempt "), usage);
        for (String opt : List.of(
                "--short",
                "--long",
                "--no-jmh",
                "--jmh",
                "--out",
                "--rounds",
                "--window",
                "--workloads",
                "-h, --help")) {
            assertTrue(usage.contains("\n  " + opt), "the usage does not describe " + opt + ":\n" + usage);
        }
        for (String w : PreemptLab.WORKLOADS) {
            assertTrue(usage.contains(w), "the usage does not list workload " + w);
        }
    }

    @Test
    void optionsWithoutTheirValueSaySo() {
        for (String opt : List.of("--rounds", "--window", "--out", "--jmh", "--workloads")) {
            assertEquals(opt + " needs a value", error("preempt", opt));
        }
    }

    @Test
    void countsAndWindowsAreWholeNumbersOfAtLeastOne() {
        for (String opt : List.of("--rounds", "--window")) {
            for (String bad : List.of("abc", "0", "-3", "1.5", "", "99999999999")) {
                assertEquals(opt + " wants a whole number >= 1, not '" + bad + "'", error("preempt", opt, bad));
            }
        }
        PreemptLab.Args a = PreemptLab.parse(new String[] {"preempt", "--short", "--rounds", "3", "--window", "7"});
        assertEquals(3, a.settings().rounds());
        assertEquals(7, a.settings().windowMs());
        assertNull(a.settings().jmh());
    }

    @Test
    void otherMalformedArgumentsNameTheOption(@TempDir Path dir) throws Exception {
        assertEquals("unknown argument '--bogus'", error("preempt", "--bogus"));
        assertTrue(error("preempt", "--workloads", "Spin,Nope").startsWith("--workloads: unknown workload 'Nope'"));
        assertTrue(error("preempt", "--jmh", "a,b,c").startsWith("--jmh wants WARMUP,MEASURED,MS[,FORKS]"));
        assertTrue(error("preempt", "--jmh", "3,3").startsWith("--jmh wants WARMUP,MEASURED,MS[,FORKS]"));
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertEquals("--out: " + file + " is not a directory", error("preempt", "--out", file.toString()));
        assertEquals(
                dir,
                PreemptLab.parse(new String[] {"preempt", "--out", dir.toString()})
                        .out());
    }

    /**
     * {@code ./gort lab preempt --short} (the mode the README offers for a quick look) used to write
     * its noise figures over the committed results of a full run, bench/results/lab/latest.*.
     */
    @Test
    void aShortRunDoesNotWriteOverTheCommittedResultsUnlessOutSaysSo(@TempDir Path dir) {
        assertEquals(
                Path.of("bench/results/lab"),
                PreemptLab.parse(new String[] {"preempt"}).out());
        assertEquals(
                Path.of("bench/results/lab"),
                PreemptLab.parse(new String[] {"preempt", "--no-jmh"}).out());
        assertEquals(
                Path.of("bench/target/lab"),
                PreemptLab.parse(new String[] {"preempt", "--short"}).out());
        assertEquals(
                dir,
                PreemptLab.parse(new String[] {"preempt", "--short", "--out", dir.toString()})
                        .out());
        assertTrue(PreemptLab.usage().contains("--short: bench/target/lab"), PreemptLab.usage());
    }

    /** A cell whose yields number {@code honoured} of sysmon's and {@code budget} budget ones. */
    private static PreemptLab.Result cell(long honoured, long budget, double p99Us, double maxUs) {
        return new PreemptLab.Result(
                "ArraySum",
                "budget/b64k",
                true,
                1.0,
                3.0,
                Double.NaN,
                3.0,
                1.0,
                5.0,
                Double.NaN,
                0,
                honoured,
                honoured,
                0,
                0,
                0,
                0,
                0,
                0,
                budget,
                honoured + budget,
                0.0,
                p99Us,
                maxUs,
                0,
                0,
                0,
                0,
                0,
                0.0);
    }

    /**
     * The progress line's request-to-yield: a cell whose every yield was a budget yield printed
     * {@code p99 0.0 us}, a figure no request measured (the report says {@code budget} there).
     */
    @Test
    void theProgressLineSaysBudgetWhereNoRequestWasHonoured() {
        String budgetOnly = PreemptLab.consoleLine("budget/b64k", cell(0, 103, 0.0, 0.0));
        assertTrue(budgetOnly.contains("yields  103  p99       budget  max       budget"), budgetOnly);
        String none = PreemptLab.consoleLine("none", cell(0, 0, 0.0, 0.0));
        assertTrue(none.contains("yields    0  p99            -  max            -"), none);
        String measured = PreemptLab.consoleLine("backedge", cell(12, 0, 812.34, 1900.0));
        assertTrue(measured.contains("yields   12  p99     812.3 us  max    1900.0 us"), measured);
        assertTrue(measured.startsWith("lab: ArraySum     backedge"), measured);
    }
}

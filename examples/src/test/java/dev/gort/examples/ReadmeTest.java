package dev.gort.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README only claims what exists: its commands are the launcher's and CI's, its examples are
 * {@link Main#EXAMPLES}, its showcase options are the showcase's, and every setting it names is read
 * somewhere in the sources.
 */
class ReadmeTest {
    static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    static String read(String rel) {
        try {
            return Files.readString(ROOT.resolve(rel));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static final String README = read("README.md");

    /** All main sources of the modules a user runs, the launcher and the POMs. */
    static String sources() {
        StringBuilder sb = new StringBuilder();
        sb.append(read("gort")).append(read("pom.xml"));
        for (String m : List.of("runtime", "api", "agent", "examples")) {
            Path dir = ROOT.resolve(m).resolve("src/main");
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    sb.append(Files.readString(f)).append('\n');
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return sb.toString();
    }

    static Set<String> all(String regex, String text, int group) {
        Set<String> r = new TreeSet<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            r.add(m.group(group));
        }
        return r;
    }

    @Test
    void theTwoCommandsAreTheLaunchersAndCiRunsTheTestOne() {
        assertTrue(README.contains("./gort showcase"), "README lacks ./gort showcase");
        assertTrue(README.contains("./gort test"), "README lacks ./gort test");
        String ci = read(".ci/run");
        assertTrue(ci.lines().anyMatch(l -> l.trim().equals("./gort test")), ".ci/run must call exactly ./gort test");
        String launcher = read("gort");
        for (String cmd : List.of("showcase)", "test)", "example)")) {
            assertTrue(launcher.contains("\n  " + cmd), "./gort has no " + cmd + " command");
        }
        // ~/.m2 is the user's: only the command named install installs
        for (String line : launcher.split("\n")) {
            if (line.contains(" install")
                    && !line.trim().startsWith("#")
                    && !line.trim().equals("install)")) {
                assertTrue(
                        line.contains("build_quietly") && line.contains("-pl runtime,agent,api -am install"),
                        "./gort installs outside its install command: " + line);
            }
        }
        assertTrue(ci.contains("bash .ci/readme-commands.sh"), ".ci/run must run the README's other commands");
    }

    /** {@code ./gort help} prints its usage (every command it has) and none of its own code. */
    @Test
    void launcherHelpListsEveryCommandAndNoCode() throws Exception {
        Process p = new ProcessBuilder("bash", ROOT.resolve("gort").toString(), "help")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        String launcher = read("gort");
        Set<String> commands = all("(?m)^  ([a-z]+)\\)", launcher, 1);
        assertTrue(commands.size() >= 8, "no commands found in ./gort: " + commands);
        for (String c : commands) {
            assertTrue(out.contains("./gort " + c), "./gort help does not list " + c + ":\n" + out);
        }
        for (String code : List.of("set -euo", "#!", "here=", "#!end")) {
            assertTrue(!out.contains(code), "./gort help prints its code (" + code + "):\n" + out);
        }
    }

    /**
     * {@code ./gort help}'s durations of the two benchmark budgets are bench/report.sh's (its help,
     * {@code ./gort bench --help}, is where they are measured and kept): {@code --long} once said
     * about 80 minutes in one and 140 in the other.
     */
    @Test
    void launcherHelpGivesTheBenchBudgetsOfReportSh() {
        String launcher = read("gort");
        String report = read("bench/report.sh");
        Matcher help = Pattern.compile("short budget \\(~(\\d+) min\\) or --long \\(~(\\d+) min")
                .matcher(launcher);
        assertTrue(help.find(), "no bench budgets in ./gort help");
        Matcher shortBudget = Pattern.compile("--short\\]\\s+the short budget \\(about (\\d+) minutes")
                .matcher(report);
        Matcher longBudget = Pattern.compile("--long\\s+the precise budget \\(about (\\d+) minutes")
                .matcher(report);
        assertTrue(shortBudget.find() && longBudget.find(), "no budgets in bench/report.sh's help");
        assertEquals(shortBudget.group(1), help.group(1), "./gort help's short bench budget");
        assertEquals(longBudget.group(1), help.group(2), "./gort help's --long bench budget");
    }

    @Test
    void everyExampleIsListedAndEveryListedExampleExists() {
        int at = README.indexOf("| `./gort example ...` |");
        assertTrue(at >= 0, "no examples table");
        String table = README.substring(at, README.indexOf("\n\n", at));
        Set<String> listed = all("\\| `([A-Z][A-Za-z]+)( \\[n\\])?` \\|", table, 1);
        Set<String> real = new TreeSet<>();
        for (Main.Example e : Main.EXAMPLES) {
            real.add(e.name());
        }
        assertEquals(real, listed, "the README's example table and Main.EXAMPLES differ");
    }

    @Test
    void showcaseScenariosAndOptionsAreTheShowcases() throws Exception {
        Set<String> scenarios = all("\\| `([a-z]+-[a-z]+|syscalls|network)` \\|", README, 1);
        assertTrue(!scenarios.isEmpty(), "no scenario table");
        Class<?> opts = Class.forName("dev.gort.examples.showcase.Options");
        var f = opts.getDeclaredField("USAGE");
        f.setAccessible(true);
        String usage = (String) f.get(null);
        for (String s : scenarios) {
            assertTrue(usage.contains("  " + s + " "), "showcase --help has no scenario " + s);
        }
        for (String opt : all("showcase[^\\n`]*?(--[a-z-]+)", README, 1)) {
            assertTrue(usage.contains(opt), "showcase --help has no option " + opt);
        }
    }

    @Test
    void everySettingTheReadmeNamesIsReadBySomeSource() {
        String src = sources();
        List<String> missing = new ArrayList<>();
        for (String p : all("-D(gort\\.[a-z.]+)", README, 1)) {
            if (!src.contains("\"" + p + "\"")) {
                missing.add("-D" + p);
            }
        }
        for (String e : all("\\b(GORT_[A-Z_]+|GOMAXPROCS|GODEBUG)\\b", README, 1)) {
            if (!src.contains("\"" + e + "\"") && !read("gort").contains(e)) {
                missing.add(e);
            }
        }
        for (String k : all("GODEBUG=([a-z]+)=", README, 1)) {
            if (!src.contains("\"" + k + "\"")) {
                missing.add("GODEBUG key " + k);
            }
        }
        assertEquals(List.of(), missing, "the README names settings no source reads");
    }

    static boolean exists(String className) {
        try {
            Class.forName(className, false, ReadmeTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    @Test
    void everyClassInTheRuntimeTableExists() {
        List<String> missing = new ArrayList<>();
        String table = README.substring(README.indexOf("## How the runtime maps"), README.indexOf("## Configuration"));
        for (String row : table.lines().filter(l -> l.startsWith("| `")).toList()) {
            String cell = row.substring(2, row.indexOf(" |", 2));
            for (String c : all("`([A-Za-z.]+)`", cell, 1)) {
                String name = c.startsWith("dev.gort.") ? c : "dev.gort.runtime." + c;
                if (!exists(name)
                        && !exists(name.substring(0, name.lastIndexOf('.')) + "$"
                                + name.substring(name.lastIndexOf('.') + 1))) {
                    missing.add(name);
                }
            }
        }
        assertEquals(List.of(), missing, "classes named in the README's runtime table do not exist");
    }
}

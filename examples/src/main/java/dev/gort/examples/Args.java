package dev.gort.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An example's command line: whole numbers by position, each declared once with its name, what it
 * means, its default and its range. {@link #parse} checks them before the example does any work;
 * anything it cannot use is a {@link Usage} error that names the argument and what it wants, which
 * {@link Main} prints with the usage text and exit status 2 (as Go's flag package does); {@code -h}
 * or {@code --help} prints the usage text alone.
 */
final class Args {
    /** One positional argument: a whole number from {@code min} to {@code max}, {@code dflt} when left out. */
    record Param(String name, String meaning, int dflt, int min, int max) {}

    /** A command line the example cannot run with, or a request for help ({@link #help()}). */
    static final class Usage extends IllegalArgumentException {
        private final String usage;
        private final boolean help;

        Usage(String message, String usage, boolean help) {
            super(message);
            this.usage = usage;
            this.help = help;
        }

        /** The example's usage text (ends with a newline). */
        String usage() {
            return usage;
        }

        /** Whether -h / --help asked for the usage: not an error. */
        boolean help() {
            return help;
        }
    }

    private final String example;
    private final List<Param> params;

    private Args(String example, List<Param> params) {
        this.example = example;
        this.params = params;
    }

    /** The command line of {@code example}, which takes no arguments until {@link #arg} adds some. */
    static Args of(String example) {
        return new Args(example, List.of());
    }

    /** These arguments and one more, after them. */
    Args arg(String name, String meaning, int dflt, int min, int max) {
        List<Param> ps = new ArrayList<>(params);
        ps.add(new Param(name, meaning, dflt, min, max));
        return new Args(example, List.copyOf(ps));
    }

    /** {@code usage: ./gort example Name [a] [b]}, then a line per argument. */
    String usage() {
        StringBuilder b = new StringBuilder("usage: ./gort example ").append(example);
        for (Param p : params) {
            b.append(" [").append(p.name()).append(']');
        }
        b.append('\n');
        for (Param p : params) {
            b.append(String.format(
                    Locale.ROOT,
                    "  %-10s %s: %d to %d (default %d)%n",
                    p.name(),
                    p.meaning(),
                    p.min(),
                    p.max(),
                    p.dflt()));
        }
        return b.toString();
    }

    /** Each argument's value, the default where it is left out; a {@link Usage} for anything else. */
    int[] parse(String... args) {
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                throw new Usage("help", usage(), true);
            }
        }
        if (args.length > params.size()) {
            throw new Usage(
                    params.isEmpty()
                            ? example + " takes no arguments, not '" + args[0] + "'"
                            : example + ": too many arguments (at most " + params.size() + ") at '"
                                    + args[params.size()] + "'",
                    usage(),
                    false);
        }
        int[] v = new int[params.size()];
        for (int i = 0; i < v.length; i++) {
            Param p = params.get(i);
            v[i] = i < args.length ? value(p, args[i]) : p.dflt();
        }
        return v;
    }

    private int value(Param p, String s) {
        try {
            long n = Long.parseLong(s.trim());
            if (n >= p.min() && n <= p.max()) {
                return (int) n;
            }
        } catch (NumberFormatException e) {
            // not a whole number: below
        }
        throw new Usage(
                example + ": " + p.name() + " wants a whole number from " + p.min() + " to " + p.max() + ", not '" + s
                        + "'",
                usage(),
                false);
    }
}

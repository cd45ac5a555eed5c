package dev.gort.agent.work;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;

/**
 * Methods whose stream reads take the invocation's frame token ({@code Poll.waitFrame}, a long
 * local stored at the entry), in the shapes where a new local could break the method's frames: a
 * constructor that reads before its {@code this(...)} call, a loop whose head is the method's first
 * instruction (a frame at offset 0), a strip-mined counted loop (the strip-miner's own local and
 * frames), a read inside a try/catch (a handler's frame), and a class initialiser (no token).
 */
public final class TokenShapes {
    public final String line;

    /** Reads before its this(...) call: the token is stored before the uninitialised this's call. */
    public TokenShapes(BufferedReader r) throws IOException {
        this(r.readLine(), 0);
    }

    private TokenShapes(String line, int unused) {
        this.line = line;
    }

    public static final String FIRST;

    static {
        try {
            FIRST = new BufferedReader(new java.io.StringReader("clinit\n")).readLine();
        } catch (IOException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A loop at offset 0: lines are read until the reader ends; the last one is returned. */
    public static void drain(BufferedReader r, String[] last) throws IOException {
        for (; ; ) {
            String l = r.readLine();
            if (l == null) {
                return;
            }
            last[0] = l;
        }
    }

    /** A read, then a counted loop the strip-miner rewrites. */
    public static int readThenSum(InputStream in, int[] a) throws IOException {
        byte[] b = new byte[8];
        int n = in.read(b);
        int sum = 0;
        for (int i = 0; i < a.length; i++) {
            sum += a[i];
        }
        return sum + n;
    }

    /** A read inside a try whose handler reads again. */
    public static String readOrRetry(BufferedReader r) {
        try {
            return r.readLine();
        } catch (IOException e) {
            try {
                return r.readLine();
            } catch (IOException again) {
                return null;
            }
        }
    }
}

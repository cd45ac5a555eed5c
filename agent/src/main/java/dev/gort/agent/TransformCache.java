package dev.gort.agent;

import dev.gort.agent.PollInjector.Result;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.objectweb.asm.ClassReader;

/**
 * An on-disk cache of instrumented classes ({@code -Dgort.agent.cache=DIR} / {@code
 * GORT_AGENT_CACHE}): the second start of a program under the agent reads what the first wrote
 * instead of rewriting every class again (about 1 ms a class while ASM is still interpreted, 0.15-0.3
 * ms once compiled: about 1 s of CPU for H2's 1,054 classes in a fresh JVM).
 *
 * <p>What an entry answers for is exact: it holds the class file it was made from and the
 * <em>salt</em> it was made under, and a read that does not match both byte for byte is a miss. The
 * salt stands for everything else the output depends on: the bytes of the code that rewrites (the
 * agent's code source, jar or directory, which holds its relocated ASM; ASM's own code source where
 * it is a separate jar), the strategy ({@code toString()} of the built-in strategies' records, which
 * lists their settings: stride, callers, threshold) and the verify switch; it is 64 bits (a CRC-32C
 * and a CRC-32 of those bytes, both computed by CPU instructions: a cryptographic digest costs
 * ~0.2 s in a cold JVM, more than the cache saves) plus their length. A strategy of one's own is not
 * built in and its settings are not known here: the cache is off for it (one line on stderr says so).
 *
 * <p>An entry is one file, {@code DIR/xx/<key>-<length>} (the key: the two CRCs of the salt and the
 * class file, so a changed class is a new entry), written to a temporary file and moved into place,
 * so that concurrent class loaders and JVMs sharing the directory read whole entries or none: a magic
 * number, the salt, the class file, the {@link Result}'s five counts, the rewritten class (length
 * {@code -1}: left as it was) and a CRC-32C of all that. An entry that does not read back whole
 * (torn, damaged, another version's) is a miss and is written again. Nothing here throws: an I/O
 * error is a miss, or an entry not written. The directory is never pruned: deleting it is always
 * safe. The CRCs detect damage, not tampering: an entry is trusted as the agent jar is, and whoever
 * can write the directory can change the bytecode of every class instrumented from it.
 */
final class TransformCache {
    /** "GORTAC" and a format version: an entry of another format is a miss. */
    private static final long MAGIC = 0x474f_5254_4143_0002L;

    private final Path dir;
    /** The salt: CRC-32C, CRC-32 and length of the fingerprinted bytes. */
    private final long saltC;

    private final long saltZ;
    private final long saltLength;
    /** The three as bytes, the start of every entry's key. */
    private final byte[] salt;

    private TransformCache(Path dir, long saltC, long saltZ, long saltLength) {
        this.dir = dir;
        this.saltC = saltC;
        this.saltZ = saltZ;
        this.saltLength = saltLength;
        this.salt = ByteBuffer.allocate(24)
                .putLong(saltC)
                .putLong(saltZ)
                .putLong(saltLength)
                .array();
    }

    /** Two CRCs and a length over a stream of byte arrays. */
    private static final class Fingerprint {
        final CRC32C c = new CRC32C();
        final CRC32 z = new CRC32();
        long length;

        void update(byte[] b, int off, int len) {
            c.update(b, off, len);
            z.update(b, off, len);
            length += len;
        }

        void update(byte[] b) {
            update(b, 0, b.length);
        }

        void update(String s) {
            update(s.getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * The cache in {@code dir} for {@code strategy}, or null with the reason on stderr where it
     * cannot be used (a strategy of one's own, code whose bytes cannot be read, a directory that
     * cannot be made).
     */
    static TransformCache open(String dir, Strategy strategy, boolean verify) {
        String why;
        if (!builtIn(strategy)) {
            why = "the strategy " + strategy.getClass().getName() + " is not one of gort's own, whose settings"
                    + " it knows";
        } else {
            try {
                Fingerprint f = new Fingerprint();
                Set<Path> sources = new LinkedHashSet<>();
                for (Class<?> c : List.of(TransformCache.class, ClassReader.class)) {
                    sources.add(codeSource(c));
                }
                for (Path p : sources) {
                    fingerprintCode(f, p);
                }
                f.update(strategy.getClass().getName() + "|" + strategy + "|verify=" + verify);
                Path d = Path.of(dir);
                Files.createDirectories(d);
                return new TransformCache(d, f.c.getValue(), f.z.getValue(), f.length);
            } catch (IOException | RuntimeException e) {
                why = e.toString();
            }
        }
        System.err.println("gort-agent: not using -Dgort.agent.cache=" + dir + ": " + why);
        return null;
    }

    private static boolean builtIn(Strategy s) {
        return s instanceof Strategies.Backedge
                || s instanceof LoopLength
                || s == Strategies.ENTRY
                || s == Strategies.BUDGET
                || s == Strategies.NONE;
    }

    private static Path codeSource(Class<?> c) throws IOException {
        CodeSource cs = c.getProtectionDomain().getCodeSource();
        if (cs == null || cs.getLocation() == null) {
            throw new IOException("no code source for " + c.getName());
        }
        try {
            return Path.of(cs.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new IOException("code source of " + c.getName() + ": " + cs.getLocation(), e);
        }
    }

    /** A jar's bytes, or a directory's class files (names and bytes, in name order). */
    private static void fingerprintCode(Fingerprint f, Path p) throws IOException {
        f.update(p.getFileName().toString());
        if (Files.isDirectory(p)) {
            try (Stream<Path> s = Files.walk(p)) {
                for (Path file :
                        s.filter(x -> x.toString().endsWith(".class")).sorted().toList()) {
                    f.update(p.relativize(file).toString());
                    f.update(Files.readAllBytes(file));
                }
            }
        } else {
            f.update(Files.readAllBytes(p));
        }
    }

    /** Where the entry for {@code classfile} is. */
    Path entry(byte[] classfile) {
        CRC32C c = new CRC32C();
        c.update(salt);
        c.update(classfile);
        CRC32 z = new CRC32();
        z.update(salt);
        z.update(classfile);
        String key = HexFormat.of().toHexDigits(c.getValue() << 32 | z.getValue());
        return dir.resolve(key.substring(0, 2)).resolve(key.substring(2) + "-" + classfile.length);
    }

    /** What instrumenting {@code classfile} gave last time, or null (a miss). */
    Result get(byte[] classfile) {
        byte[] e;
        try {
            e = Files.readAllBytes(entry(classfile));
        } catch (IOException | RuntimeException x) {
            return null;
        }
        try {
            if (e.length < 8) {
                return null;
            }
            CRC32C crc = new CRC32C();
            crc.update(e, 0, e.length - 8);
            ByteBuffer b = ByteBuffer.wrap(e, 0, e.length - 8);
            if (ByteBuffer.wrap(e).getLong(e.length - 8) != crc.getValue()
                    || b.getLong() != MAGIC
                    || b.getLong() != saltC
                    || b.getLong() != saltZ
                    || b.getLong() != saltLength) {
                return null;
            }
            int inLen = b.getInt();
            int at = b.position();
            if (inLen != classfile.length
                    || inLen > b.remaining()
                    || !Arrays.equals(e, at, at + inLen, classfile, 0, inLen)) {
                return null; // made from another class file (two keys alike)
            }
            b.position(at + inLen);
            int methods = b.getInt();
            int backedges = b.getInt();
            int entries = b.getInt();
            int hooks = b.getInt();
            int skipped = b.getInt();
            int outLen = b.getInt();
            if (outLen < -1 || Math.max(outLen, 0) != b.remaining()) {
                return null; // not a whole entry
            }
            byte[] bytes = null;
            if (outLen >= 0) {
                bytes = new byte[outLen];
                b.get(bytes);
            }
            return new Result(bytes, methods, backedges, entries, hooks, skipped);
        } catch (RuntimeException x) {
            return null; // BufferUnderflowException and kin: not an entry of ours
        }
    }

    /** Keeps {@code r}, what instrumenting {@code classfile} gave; an I/O error leaves no entry. */
    void put(byte[] classfile, Result r) {
        Path to = entry(classfile);
        int outLen = r.bytes() == null ? -1 : r.bytes().length;
        ByteBuffer b = ByteBuffer.allocate(8 * 4 + 4 + classfile.length + 6 * 4 + Math.max(outLen, 0) + 8);
        b.putLong(MAGIC).putLong(saltC).putLong(saltZ).putLong(saltLength);
        b.putInt(classfile.length).put(classfile);
        b.putInt(r.methods())
                .putInt(r.backedgePolls())
                .putInt(r.entryPolls())
                .putInt(r.monitorHooks())
                .putInt(r.methodsSkipped())
                .putInt(outLen);
        if (outLen > 0) {
            b.put(r.bytes());
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putLong(crc.getValue());
        Path tmp = null;
        try {
            Files.createDirectories(to.getParent());
            tmp = Files.createTempFile(to.getParent(), "tmp", null);
            Files.write(tmp, b.array());
            try {
                Files.move(tmp, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException x) {
                Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (IOException | RuntimeException x) {
            // no entry: the next start instruments this class again
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // a stray temporary file, never read as an entry
                }
            }
        }
    }
}

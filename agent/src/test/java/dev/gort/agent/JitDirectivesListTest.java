package dev.gort.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * The runtime's list of the JDK methods that read the current thread ({@code
 * current-thread-readers.txt}, which {@code JitDirectives} keeps out of compiled user code) is what
 * the running JDK's image holds: every method of every module that calls
 * {@code Thread.currentThread()} or {@code Thread.interrupted()}. A JDK update that adds one fails
 * here; {@code -Dgort.jdkscan.update=true} rewrites the list.
 */
class JitDirectivesListTest {
    static final Path LIST = Path.of("../runtime/src/main/resources/dev/gort/runtime/current-thread-readers.txt");

    @Test
    void theListIsEveryJdkMethodThatReadsTheCurrentThread() throws IOException {
        TreeSet<String> scanned = scan();
        List<String> header = new ArrayList<>();
        List<String> listed = new ArrayList<>();
        for (String l : Files.readAllLines(LIST, StandardCharsets.UTF_8)) {
            (l.startsWith("#") ? header : listed).add(l);
        }
        if (Boolean.getBoolean("gort.jdkscan.update")) {
            List<String> out = new ArrayList<>(header);
            out.addAll(scanned);
            Files.write(LIST, out, StandardCharsets.UTF_8);
            return;
        }
        assertTrue(scanned.size() > 100, "scanned " + scanned.size());
        String made = header.stream()
                .filter(h -> h.startsWith("# jdk: "))
                .map(h -> h.substring("# jdk: ".length()).strip())
                .findFirst()
                .orElse("?");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                made.equals(String.valueOf(Runtime.version().feature())),
                () -> "the list was made on JDK " + made + ", this is " + Runtime.version() + ": regenerate it there");
        TreeSet<String> missing = new TreeSet<>(scanned);
        listed.forEach(missing::remove);
        assertEquals(new TreeSet<String>(), missing, "JDK methods reading the current thread not in " + LIST);
    }

    /** {@code class.method} of every method in the JDK image that calls currentThread() or interrupted(). */
    static TreeSet<String> scan() throws IOException {
        TreeSet<String> hits = new TreeSet<>();
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        try (Stream<Path> s = Files.walk(jrt.getPath("/modules"))) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (!p.toString().endsWith(".class")
                        || p.getFileName().toString().equals("module-info.class")) {
                    continue;
                }
                byte[] b;
                try (InputStream in = Files.newInputStream(p)) {
                    b = in.readAllBytes();
                }
                String[] name = {null};
                new ClassReader(b)
                        .accept(
                                new ClassVisitor(Opcodes.ASM9) {
                                    @Override
                                    public void visit(int v, int acc, String n, String sig, String sup, String[] itf) {
                                        name[0] = n;
                                    }

                                    @Override
                                    public MethodVisitor visitMethod(
                                            int acc, String mn, String d, String sig, String[] ex) {
                                        return new MethodVisitor(Opcodes.ASM9) {
                                            @Override
                                            public void visitMethodInsn(
                                                    int op, String owner, String n, String desc, boolean itf) {
                                                if (owner.equals("java/lang/Thread")
                                                        && (n.equals("currentThread") || n.equals("interrupted"))) {
                                                    hits.add(name[0] + "." + mn);
                                                }
                                            }
                                        };
                                    }
                                },
                                ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
            }
        }
        return hits;
    }
}

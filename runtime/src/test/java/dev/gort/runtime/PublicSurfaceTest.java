package dev.gort.runtime;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A small public surface (issue 13): what {@code dev.gort.runtime} lets other packages use (the
 * api, the agent, the trace consumers, the examples and benchmarks) is the checked-in list
 * {@code src/test/resources/public-surface.txt}, so that a new public class, constructor, method or
 * field is a deliberate act. The list is made by reflection over the package's compiled classes:
 * every public or protected class (nested ones when every enclosing class is accessible too) and
 * its public or protected members, {@code toString}/{@code equals}/{@code hashCode} left out. A
 * field that is not final is marked {@code [mutable]}: its comment must say who may write it.
 *
 * <p>On a difference the test fails with the lines added and removed and says how to update the
 * list; update it only after checking that the member is needed outside the package (the
 * compiler is the judge: make it package-private and build every module).
 */
class PublicSurfaceTest {
    private static final Path LIST = Path.of("src/test/resources/public-surface.txt");
    private static final String PKG = "dev.gort.runtime";
    private static final String UPDATE = "gort.surface.update";

    @Test
    void thePublicSurfaceIsTheCheckedInList() throws Exception {
        List<String> now = surface();
        assertTrue(now.size() > 50, "found only " + now.size() + " public members: wrong class directory?");
        if (System.getProperty(UPDATE) != null) {
            Files.writeString(LIST, header() + String.join("\n", now) + "\n");
            return;
        }
        Set<String> listed = new LinkedHashSet<>();
        for (String l : Files.readAllLines(LIST)) {
            if (!l.isBlank() && !l.startsWith("#")) {
                listed.add(l);
            }
        }
        Set<String> added = new TreeSet<>(now);
        added.removeAll(listed);
        Set<String> removed = new TreeSet<>(listed);
        now.forEach(removed::remove);
        if (!added.isEmpty() || !removed.isEmpty()) {
            StringBuilder sb = new StringBuilder("the public surface of " + PKG + " differs from " + LIST + ":\n");
            added.forEach(l -> sb.append("+ ").append(l).append('\n'));
            removed.forEach(l -> sb.append("- ").append(l).append('\n'));
            sb.append("A new public member must be needed outside the package (the api, the agent, the trace")
                    .append(" consumers, examples, bench): otherwise make it package-private. If the change is")
                    .append(" deliberate, regenerate the list with\n  ./gort mvn -q -pl runtime -am test")
                    .append(" -Dtest=PublicSurfaceTest -Dsurefire.failIfNoSpecifiedTests=false -D")
                    .append(UPDATE)
                    .append("=true\nand commit runtime/")
                    .append(LIST)
                    .append(" with the change.");
            fail(sb.toString());
        }
    }

    private static String header() {
        return """
                # The public surface of dev.gort.runtime (PublicSurfaceTest): every public or protected class
                # and member, made by reflection. Regenerate with -Dgort.surface.update=true (see the test).
                """;
    }

    /** The package's classes, from the directory (or jar) Scheduler.class was loaded from. */
    private static List<Class<?>> classes() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(Scheduler.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        Path dir = root.resolve(PKG.replace('.', '/'));
        List<Class<?>> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f :
                    files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
                String n = f.getFileName().toString();
                out.add(Class.forName(
                        PKG + "." + n.substring(0, n.length() - ".class".length()),
                        false,
                        PublicSurfaceTest.class.getClassLoader()));
            }
        }
        return out;
    }

    static List<String> surface() throws Exception {
        Set<String> out = new TreeSet<>();
        for (Class<?> c : classes()) {
            if (!accessible(c)) {
                continue;
            }
            String cn = name(c);
            out.add(kind(c) + " " + cn);
            for (Field f : c.getDeclaredFields()) {
                if (visible(f.getModifiers()) && !f.isSynthetic()) {
                    out.add("field " + cn + "." + f.getName() + " : " + type(f.getType())
                            + flags(f.getModifiers(), true));
                }
            }
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (visible(k.getModifiers()) && !k.isSynthetic()) {
                    out.add("ctor " + cn + params(k));
                }
            }
            for (Method m : c.getDeclaredMethods()) {
                if (!visible(m.getModifiers()) || m.isSynthetic() || m.isBridge() || objectMethod(m)) {
                    continue;
                }
                out.add("method " + cn + "." + m.getName() + params(m) + " : " + type(m.getReturnType())
                        + flags(m.getModifiers(), false));
            }
        }
        return new ArrayList<>(out);
    }

    private static boolean visible(int mod) {
        return Modifier.isPublic(mod) || Modifier.isProtected(mod);
    }

    /** Public or protected, and so is every class around it; not anonymous, local or synthetic. */
    private static boolean accessible(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (k.isAnonymousClass() || k.isLocalClass() || k.isSynthetic() || !visible(k.getModifiers())) {
                return false;
            }
        }
        return true;
    }

    private static boolean objectMethod(Method m) {
        return switch (m.getName()) {
            case "toString", "hashCode" -> m.getParameterCount() == 0;
            case "equals" -> m.getParameterCount() == 1 && m.getParameterTypes()[0] == Object.class;
            default -> false;
        };
    }

    private static String kind(Class<?> c) {
        if (c.isAnnotation()) {
            return "annotation";
        }
        if (c.isInterface()) {
            return "interface";
        }
        if (c.isEnum()) {
            return "enum";
        }
        return c.isRecord() ? "record" : "class";
    }

    /** Config.Settings for a nested class: the name inside the package. */
    private static String name(Class<?> c) {
        return c.getEnclosingClass() == null
                ? c.getSimpleName()
                : name(c.getEnclosingClass()) + "." + c.getSimpleName();
    }

    private static String type(Class<?> t) {
        if (t.isArray()) {
            return type(t.getComponentType()) + "[]";
        }
        if (t.isPrimitive()) {
            return t.getName();
        }
        String pkg = t.getPackageName();
        return pkg.equals(PKG)
                ? name(t)
                : pkg.equals("java.lang") ? t.getSimpleName() : t.getName().replace('$', '.');
    }

    private static String params(Executable e) {
        return Stream.of(e.getParameterTypes()).map(PublicSurfaceTest::type).collect(Collectors.joining(",", "(", ")"));
    }

    private static String flags(int mod, boolean field) {
        StringBuilder sb = new StringBuilder();
        if (Modifier.isProtected(mod)) {
            sb.append(" [protected]");
        }
        if (Modifier.isStatic(mod)) {
            sb.append(" [static]");
        }
        if (field && !Modifier.isFinal(mod)) {
            sb.append(" [mutable]");
        }
        return sb.toString();
    }
}

package factoryblind;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * factory's blind-check sender (`javablind.py`): root compiles it onto the JVM's boot class path
 * (-Xbootclasspath/a in JAVA_TOOL_OPTIONS), where no class of the project can shadow it. A blind
 * check of a hidden test calls {@link #seen} where the test had `assertEquals(512.0, actual)`: the
 * expected value is on the host; this writes what the test computed, as plain data, to the file
 * root reads after the run, and lets the test go on. It calls no code of the project: the values
 * it reads are boxed primitives and strings, whose classes are final and the JDK's.
 */
public final class Seen {
    private static final String PATH = System.getenv("FACTORY_BLIND_SEEN");

    private Seen() {
    }

    /** One line: the check's id, the comparison the assertion made, the value as plain data. */
    public static synchronized void seen(String id, String how, Object actual) {
        String line = id + "\t" + how + "\t" + encode(actual) + "\n";
        if (PATH == null) {
            return; // nowhere to write: every blind check of the run is missing, and fails
        }
        try (FileOutputStream out = new FileOutputStream(PATH, true)) {
            out.write(line.getBytes(StandardCharsets.UTF_8)); // one append: JVMs that share the file do not interleave
        } catch (IOException e) {
            // this value is missing, and its test fails
        }
    }

    /** The value's class and, for the JDK's boxes and strings, its exact value (doubles and
     * floats by their bits, strings and chars by UTF-16 units): nothing else is read. */
    static String encode(Object value) {
        if (value == null) {
            return "null";
        }
        Class<?> type = value.getClass();
        String name = type.getName();
        if (type == Double.class) {
            return name + "\t" + Long.toHexString(Double.doubleToRawLongBits((Double) value));
        }
        if (type == Float.class) {
            return name + "\t" + Integer.toHexString(Float.floatToRawIntBits((Float) value));
        }
        if (type == Long.class || type == Integer.class || type == Short.class || type == Byte.class) {
            return name + "\t" + ((Number) value).longValue();
        }
        if (type == Character.class) {
            return name + "\t" + (int) (Character) value;
        }
        if (type == Boolean.class) {
            return name + "\t" + value;
        }
        if (type == String.class) {
            String text = (String) value;
            StringBuilder units = new StringBuilder(text.length() * 4);
            for (int i = 0; i < text.length(); i++) {
                units.append(String.format("%04x", (int) text.charAt(i)));
            }
            return name + "\t" + units;
        }
        return name + "\t";
    }
}

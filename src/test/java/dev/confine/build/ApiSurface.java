package dev.confine.build;

import java.io.IOException;
import java.lang.annotation.Annotation;
import java.lang.annotation.Documented;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.GenericDeclaration;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The library's API surface as text, read by reflection from the compiled classes of the packages
 * that {@code module-info.class} exports: every public or protected type, constructor, method,
 * field, record component and enum constant, with generic signatures. {@code api/confine.api} holds
 * it as checked in; {@link ApiSurfaceTest} compares the two and {@code scripts/api-dump} rewrites
 * the file.
 *
 * <p>The format, in the manner of Okio's {@code okio.api}: one block per type (nested types have
 * blocks of their own), blocks sorted by binary name; a header line with the modifiers, the kind,
 * the binary name with its type parameters (and a record's components), the supertypes and what a
 * sealed type permits; then one line per member: enum constants in ordinal order (the order is
 * API), then fields, constructors and methods, each group sorted (by name, then by the whole line).
 * Types print as binary names ({@code dev.confine.ExecRequest$Builder}), rendered here rather than
 * by {@link Type#getTypeName} so that the text does not change with the JDK that runs the dump.
 * Modifiers that the language implies (an interface's {@code abstract}, a record's {@code final}, a
 * nested enum's {@code static}) are left out; annotations show when they are {@link Documented}, as
 * javadoc shows them. Members of a supertype that is not itself API (package-private, or in an
 * unexported package) are listed on the API type that inherits them, since clients reach them
 * there.
 */
public final class ApiSurface {
  private final Set<String> exported;
  private final Set<String> ownPackages;

  private ApiSurface(ModuleDescriptor descriptor) {
    this.exported = exportedPackages(descriptor);
    this.ownPackages = descriptor.packages();
  }

  /** Writes the API surface of the classes under {@code args[0]} to the file {@code args[1]}. */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: ApiSurface CLASSES_DIR OUTPUT_FILE");
      System.exit(2);
    }
    Path out = Path.of(args[1]);
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(
        out, render(Path.of(args[0]), ApiSurface.class.getClassLoader()), StandardCharsets.UTF_8);
  }

  /**
   * The API surface of the module whose compiled classes are under {@code classes} (its {@code
   * module-info.class} included), loading them through {@code loader}.
   */
  public static String render(Path classes, ClassLoader loader) throws IOException {
    ApiSurface surface = new ApiSurface(descriptor(classes));
    StringBuilder text = new StringBuilder();
    for (Class<?> type : surface.types(classes, loader)) {
      if (!text.isEmpty()) {
        text.append('\n');
      }
      text.append(surface.header(type)).append(" {\n");
      for (String member : surface.members(type)) {
        text.append("  ").append(member).append('\n');
      }
      text.append("}\n");
    }
    return text.toString();
  }

  /**
   * The descriptor of the exploded module under {@code classes}, its packages found by scanning the
   * directory ({@code module-info.class} as javac writes it names only the exported and opened
   * ones).
   */
  public static ModuleDescriptor descriptor(Path classes) {
    if (!Files.isRegularFile(classes.resolve("module-info.class"))) {
      throw new IllegalStateException("no module-info.class in " + classes);
    }
    List<ModuleReference> found = List.copyOf(ModuleFinder.of(classes).findAll());
    if (found.size() != 1) {
      throw new IllegalStateException("not one module in " + classes + ": " + found);
    }
    return found.get(0).descriptor();
  }

  /** The packages that {@code descriptor} exports to every module. */
  public static SortedSet<String> exportedPackages(ModuleDescriptor descriptor) {
    return descriptor.exports().stream()
        .filter(e -> !e.isQualified())
        .map(ModuleDescriptor.Exports::source)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private List<Class<?>> types(Path classes, ClassLoader loader) throws IOException {
    List<Class<?>> types = new ArrayList<>();
    for (String pkg : exported) {
      List<Path> files;
      try (Stream<Path> list = Files.list(classes.resolve(pkg.replace('.', '/')))) {
        files = list.filter(p -> p.getFileName().toString().endsWith(".class")).toList();
      }
      for (Path file : files) {
        String simple = file.getFileName().toString().replaceFirst("\\.class$", "");
        if (simple.equals("package-info")) {
          continue;
        }
        Class<?> type;
        try {
          type = Class.forName(pkg + "." + simple, false, loader);
        } catch (ClassNotFoundException e) {
          throw new IllegalStateException("cannot load " + file, e);
        }
        if (isApi(type)) {
          types.add(type);
        }
      }
    }
    types.sort(Comparator.comparing(Class::getName));
    return types;
  }

  /**
   * Whether a client of the module can name {@code type}: public or protected (and so is every
   * class it is nested in), and in an exported package. The dump runs on the class path, where
   * every package reads as exported, so the descriptor decides for the module's own packages, and
   * the type's module for the JDK's.
   */
  private boolean isApi(Class<?> type) {
    if (type.isArray()) {
      return isApi(type.getComponentType());
    }
    if (type.isPrimitive()) {
      return true;
    }
    if (type.isSynthetic() || type.isAnonymousClass() || type.isLocalClass()) {
      return false;
    }
    String pkg = type.getPackageName();
    if (ownPackages.contains(pkg) ? !exported.contains(pkg) : !type.getModule().isExported(pkg)) {
      return false;
    }
    int m = type.getModifiers();
    if (!Modifier.isPublic(m) && !Modifier.isProtected(m)) {
      return false;
    }
    Class<?> outer = type.getDeclaringClass();
    return outer == null || isApi(outer);
  }

  private String header(Class<?> type) {
    List<String> words = new ArrayList<>(annotations(type));
    int m = type.getModifiers();
    words.add(access(m));
    String kind;
    if (type.isAnnotation()) {
      kind = "@interface";
    } else if (type.isInterface()) {
      kind = "interface";
    } else if (type.isEnum()) {
      kind = "enum";
    } else if (type.isRecord()) {
      kind = "record";
    } else {
      kind = "class";
    }
    boolean isClass = kind.equals("class"); // for the other kinds, static and final are implied
    if (isClass && Modifier.isAbstract(m)) {
      words.add("abstract");
    }
    if (isClass && Modifier.isStatic(m)) {
      words.add("static");
    }
    // An enum whose constants have bodies is sealed, permitting them: that is not API.
    boolean sealed = type.isSealed() && !type.isEnum();
    if (sealed) {
      words.add("sealed");
    } else if (isClass && Modifier.isFinal(m)) {
      words.add("final");
    } else if ((isClass || kind.equals("interface")) && hasSealedSupertype(type)) {
      words.add("non-sealed");
    }
    words.add(kind);
    StringBuilder h = new StringBuilder(String.join(" ", words));
    h.append(' ').append(type.getName()).append(typeParameters(type));
    if (type.isRecord()) {
      h.append(
          Arrays.stream(type.getRecordComponents())
              .map(c -> name(c.getGenericType()) + " " + c.getName())
              .collect(Collectors.joining(", ", "(", ")")));
    }
    Type superclass = visibleSuperclass(type);
    if (superclass != null) {
      h.append(" extends ").append(name(superclass));
    }
    List<String> interfaces = visibleInterfaces(type);
    if (!interfaces.isEmpty()) {
      h.append(type.isInterface() ? " extends " : " implements ")
          .append(String.join(", ", interfaces));
    }
    if (sealed) {
      h.append(
          Arrays.stream(type.getPermittedSubclasses())
              .map(Class::getName)
              .sorted()
              .collect(Collectors.joining(", ", " permits ", "")));
    }
    return h.toString();
  }

  private static boolean hasSealedSupertype(Class<?> type) {
    Class<?> s = type.getSuperclass();
    return (s != null && s.isSealed())
        || Arrays.stream(type.getInterfaces()).anyMatch(Class::isSealed);
  }

  /**
   * The nearest API superclass; null when that is {@code Object} or what the kind implies ({@code
   * Enum}, {@code Record}).
   */
  private Type visibleSuperclass(Class<?> type) {
    if (type.isInterface() || type.isEnum() || type.isRecord()) {
      return null;
    }
    Type s = type.getGenericSuperclass();
    while (s != null && !isApi(raw(s))) {
      s = raw(s).getGenericSuperclass();
    }
    return s == null || raw(s) == Object.class ? null : s;
  }

  /** The API interfaces that {@code type} implements directly or through a non-API supertype. */
  private List<String> visibleInterfaces(Class<?> type) {
    Set<String> found = new TreeSet<>();
    collectInterfaces(type, found);
    for (Class<?> c : hiddenSuperclasses(type)) {
      collectInterfaces(c, found);
    }
    return new ArrayList<>(found);
  }

  private void collectInterfaces(Class<?> of, Set<String> found) {
    for (Type i : of.getGenericInterfaces()) {
      if (isApi(raw(i))) {
        found.add(name(i));
      } else {
        collectInterfaces(raw(i), found);
      }
    }
  }

  /** The superclasses of {@code type} up to its nearest API one, which it stands in for. */
  private List<Class<?>> hiddenSuperclasses(Class<?> type) {
    List<Class<?>> hidden = new ArrayList<>();
    if (type.isInterface() || type.isEnum() || type.isRecord()) {
      return hidden;
    }
    for (Class<?> c = type.getSuperclass(); c != null && !isApi(c); c = c.getSuperclass()) {
      hidden.add(c);
    }
    return hidden;
  }

  /** The non-API superinterfaces of {@code of} and of its own non-API superinterfaces. */
  private void hiddenInterfaces(Class<?> of, List<Class<?>> hidden) {
    for (Class<?> i : of.getInterfaces()) {
      if (!isApi(i) && !hidden.contains(i)) {
        hidden.add(i);
        hiddenInterfaces(i, hidden);
      }
    }
  }

  private List<String> members(Class<?> type) {
    List<String> lines = new ArrayList<>();
    if (type.isEnum()) {
      // In ordinal order, which is API; reading the constants initializes the enum.
      for (Object constant : type.getEnumConstants()) {
        lines.add("constant " + ((Enum<?>) constant).name());
      }
    }
    // The type's own members, then those it exposes of supertypes that clients cannot name.
    List<Class<?>> declaring = new ArrayList<>();
    declaring.add(type);
    declaring.addAll(hiddenSuperclasses(type));
    List<Class<?>> interfaces = new ArrayList<>();
    for (Class<?> c : declaring) {
      hiddenInterfaces(c, interfaces);
    }
    declaring.addAll(interfaces);
    // Sorted by name, then by the whole line: a member whose type changes keeps its place.
    SortedMap<String, String> fields = new TreeMap<>();
    SortedSet<String> constructors = new TreeSet<>();
    SortedMap<String, String> methods = new TreeMap<>();
    Set<String> seenFields = new HashSet<>();
    Set<String> seenMethods = new HashSet<>();
    for (Class<?> c : declaring) {
      for (Field f : c.getDeclaredFields()) {
        if (visible(f) && !f.isEnumConstant() && seenFields.add(f.getName())) {
          String line = field(f, type);
          fields.put(f.getName() + ' ' + line, line);
        }
      }
      for (Method m : c.getDeclaredMethods()) {
        boolean inheritedStatic =
            c.isInterface() && c != type && Modifier.isStatic(m.getModifiers());
        String erased = m.getName() + Arrays.toString(m.getParameterTypes());
        if (visible(m) && !m.isBridge() && !inheritedStatic && seenMethods.add(erased)) {
          String line = method(m, type);
          methods.put(m.getName() + ' ' + line, line);
        }
      }
    }
    for (Constructor<?> k : type.getDeclaredConstructors()) {
      if (visible(k)) {
        constructors.add(constructor(k, type));
      }
    }
    lines.addAll(fields.values());
    lines.addAll(constructors);
    lines.addAll(methods.values());
    return lines;
  }

  private static boolean visible(Member member) {
    int m = member.getModifiers();
    return !member.isSynthetic() && (Modifier.isPublic(m) || Modifier.isProtected(m));
  }

  private static String field(Field f, Class<?> type) {
    List<String> words = new ArrayList<>(annotations(f));
    int mod = f.getModifiers();
    words.add(access(mod));
    if (Modifier.isStatic(mod)) {
      words.add("static");
    }
    if (Modifier.isFinal(mod)) {
      words.add("final");
    }
    if (Modifier.isVolatile(mod)) {
      words.add("volatile");
    }
    if (Modifier.isTransient(mod)) {
      words.add("transient");
    }
    words.add(name(f.getGenericType()));
    words.add(f.getName());
    return String.join(" ", words) + from(f, type);
  }

  private static String constructor(Constructor<?> k, Class<?> type) {
    List<String> words = new ArrayList<>(annotations(k));
    words.add(access(k.getModifiers()));
    String typeParameters = typeParameters(k);
    if (!typeParameters.isEmpty()) {
      words.add(typeParameters);
    }
    words.add(type.getSimpleName() + parameters(k) + exceptions(k));
    return String.join(" ", words);
  }

  private static String method(Method m, Class<?> type) {
    List<String> words = new ArrayList<>(annotations(m));
    int mod = m.getModifiers();
    words.add(access(mod));
    if (Modifier.isStatic(mod)) {
      words.add("static");
    } else if (Modifier.isAbstract(mod)) {
      words.add("abstract");
    } else if (m.isDefault()) {
      words.add("default");
    }
    if (Modifier.isFinal(mod)) {
      words.add("final");
    }
    if (Modifier.isSynchronized(mod)) {
      words.add("synchronized");
    }
    String typeParameters = typeParameters(m);
    if (!typeParameters.isEmpty()) {
      words.add(typeParameters);
    }
    words.add(name(m.getGenericReturnType()));
    words.add(m.getName() + parameters(m) + exceptions(m));
    return String.join(" ", words) + from(m, type);
  }

  /** Where an inherited member of a non-API supertype comes from. */
  private static String from(Member member, Class<?> type) {
    return member.getDeclaringClass() == type
        ? ""
        : " (from " + member.getDeclaringClass().getName() + ")";
  }

  private static String access(int modifiers) {
    return Modifier.isPublic(modifiers) ? "public" : "protected";
  }

  private static String parameters(Executable e) {
    Class<?>[] raw = e.getParameterTypes();
    Type[] generic = e.getGenericParameterTypes();
    // An inner class's outer instance, and other synthetic parameters, have no generic type.
    int offset = raw.length - generic.length;
    List<String> names = new ArrayList<>();
    for (int i = 0; i < raw.length; i++) {
      String n = name(i < offset ? raw[i] : generic[i - offset]);
      if (e.isVarArgs() && i == raw.length - 1 && n.endsWith("[]")) {
        n = n.substring(0, n.length() - 2) + "...";
      }
      names.add(n);
    }
    return "(" + String.join(", ", names) + ")";
  }

  private static String exceptions(Executable e) {
    Type[] thrown = e.getGenericExceptionTypes();
    if (thrown.length == 0) {
      return "";
    }
    return Arrays.stream(thrown)
        .map(ApiSurface::name)
        .sorted()
        .collect(Collectors.joining(", ", " throws ", ""));
  }

  private static List<String> annotations(AnnotatedElement element) {
    return Arrays.stream(element.getAnnotations())
        .map(Annotation::annotationType)
        .filter(a -> a.isAnnotationPresent(Documented.class))
        .map(a -> "@" + a.getName())
        .sorted()
        .toList();
  }

  private static String typeParameters(GenericDeclaration d) {
    TypeVariable<?>[] vars = d.getTypeParameters();
    if (vars.length == 0) {
      return "";
    }
    List<String> parts = new ArrayList<>();
    for (TypeVariable<?> v : vars) {
      List<String> bounds =
          Arrays.stream(v.getBounds())
              .filter(b -> b != Object.class)
              .map(ApiSurface::name)
              .toList();
      parts.add(
          bounds.isEmpty() ? v.getName() : v.getName() + " extends " + String.join(" & ", bounds));
    }
    return "<" + String.join(", ", parts) + ">";
  }

  /**
   * What changed from the surface {@code before} to {@code after}, per type: whole types added
   * ({@code + type ...}) or removed ({@code - type ...}), and within a type the header and member
   * lines removed ({@code -}) and added ({@code +}). Empty when the two hold the same lines in the
   * same order.
   */
  public static List<String> diff(String before, String after) {
    SortedMap<String, List<String>> old = blocks(before);
    SortedMap<String, List<String>> now = blocks(after);
    List<String> out = new ArrayList<>();
    SortedSet<String> names = new TreeSet<>(old.keySet());
    names.addAll(now.keySet());
    for (String name : names) {
      List<String> o = old.get(name);
      List<String> n = now.get(name);
      if (o == null) {
        out.add("+ type " + n.get(0) + " (" + (n.size() - 1) + " members)");
      } else if (n == null) {
        out.add("- type " + o.get(0) + " (" + (o.size() - 1) + " members)");
      } else if (!o.equals(n)) {
        List<String> removed = minus(o, n);
        List<String> added = minus(n, o);
        out.add(name + ":");
        removed.forEach(l -> out.add("  - " + l));
        added.forEach(l -> out.add("  + " + l));
        if (removed.isEmpty() && added.isEmpty()) {
          out.add("  (the same lines in another order)");
        }
      }
    }
    if (out.isEmpty() && !before.equals(after)) {
      out.add("(the same types and members, laid out differently)");
    }
    return out;
  }

  /** The lines of each type's block, its header first, by binary name. */
  private static SortedMap<String, List<String>> blocks(String surface) {
    SortedMap<String, List<String>> blocks = new TreeMap<>();
    List<String> current = null;
    for (String line : surface.lines().toList()) {
      if (line.isBlank() || line.equals("}")) {
        current = null;
      } else if (current == null || !line.startsWith("  ")) {
        String header = line.endsWith(" {") ? line.substring(0, line.length() - 2) : line;
        current = new ArrayList<>();
        current.add(header);
        blocks.put(typeName(header), current);
      } else {
        current.add(line.strip());
      }
    }
    return blocks;
  }

  /** The binary name in a header line: the word after the kind, less its type parameters. */
  private static String typeName(String header) {
    List<String> words = List.of(header.split(" "));
    for (int i = 0; i < words.size() - 1; i++) {
      if (Set.of("class", "interface", "enum", "record", "@interface").contains(words.get(i))) {
        return words.get(i + 1).replaceFirst("[<(].*", "");
      }
    }
    return header;
  }

  /** The lines of {@code a} that {@code b} lacks, counting repeats. */
  private static List<String> minus(List<String> a, List<String> b) {
    List<String> rest = new ArrayList<>(b);
    List<String> out = new ArrayList<>();
    for (String line : a) {
      if (!rest.remove(line)) {
        out.add(line);
      }
    }
    return out;
  }

  /** {@code type} as the surface prints it: binary names and generic arguments. */
  static String name(Type type) {
    return switch (type) {
      case Class<?> c when c.isArray() -> name(c.getComponentType()) + "[]";
      case Class<?> c -> c.getName();
      case ParameterizedType p -> {
        Class<?> raw = (Class<?>) p.getRawType();
        String base =
            p.getOwnerType() instanceof ParameterizedType owner
                ? name(owner) + "$" + raw.getSimpleName()
                : raw.getName();
        yield base
            + Arrays.stream(p.getActualTypeArguments())
                .map(ApiSurface::name)
                .collect(Collectors.joining(", ", "<", ">"));
      }
      case GenericArrayType a -> name(a.getGenericComponentType()) + "[]";
      case TypeVariable<?> v -> v.getName();
      case WildcardType w -> {
        if (w.getLowerBounds().length > 0) {
          yield "? super " + name(w.getLowerBounds()[0]);
        }
        Type[] upper = w.getUpperBounds();
        yield upper.length == 0 || upper[0] == Object.class ? "?" : "? extends " + name(upper[0]);
      }
      default -> throw new IllegalArgumentException("unknown kind of type: " + type);
    };
  }

  private static Class<?> raw(Type type) {
    return switch (type) {
      case Class<?> c -> c;
      case ParameterizedType p -> (Class<?>) p.getRawType();
      default -> throw new IllegalArgumentException("not a class type: " + type);
    };
  }
}

package dev.confine.linux.sys;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import java.util.function.Function;

/**
 * Looks users and groups up the way the system does (glibc's NSS: /etc/passwd and /etc/group, or
 * whatever nsswitch.conf names), for {@code confine --user NAME}.
 */
@SuppressWarnings("restricted")
public final class Users {
  private Users() {}

  private static final Linker LINKER = Linker.nativeLinker();
  private static final AddressLayout ADDR = ValueLayout.ADDRESS;
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
  // int getpwnam_r(const char *, struct passwd *, char *, size_t, struct passwd **), and alike.
  private static final FunctionDescriptor BY_NAME =
      FunctionDescriptor.of(INT, ADDR, ADDR, ADDR, LONG, ADDR);
  private static final FunctionDescriptor BY_ID =
      FunctionDescriptor.of(INT, INT, ADDR, ADDR, LONG, ADDR);
  private static final MethodHandle GETPWNAM_R = bind("getpwnam_r", BY_NAME);
  private static final MethodHandle GETPWUID_R = bind("getpwuid_r", BY_ID);
  private static final MethodHandle GETGRNAM_R = bind("getgrnam_r", BY_NAME);

  // x86-64 glibc: struct passwd { char *pw_name, *pw_passwd; uid_t pw_uid; gid_t pw_gid; char
  // *pw_gecos, *pw_dir, *pw_shell; } (48 bytes); struct group { char *gr_name, *gr_passwd; gid_t
  // gr_gid; char **gr_mem; } (32 bytes).
  private static final long PASSWD_SIZE = 48;
  private static final long PW_UID = 16;
  private static final long PW_GID = 20;
  private static final long GROUP_SIZE = 32;
  private static final long GR_GID = 16;
  private static final long BUFFER = 16 * 1024;

  private static MethodHandle bind(String name, FunctionDescriptor fd) {
    return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), fd);
  }

  /** A user's ids. */
  public record Ids(int uid, int gid) {}

  /** The user named {@code name}: its uid and primary gid; empty when there is none. */
  public static Optional<Ids> user(String name) {
    return byName(GETPWNAM_R, PASSWD_SIZE, name, Users::ids);
  }

  /** The user with {@code uid}: its ids (primary gid included); empty when there is none. */
  public static Optional<Ids> user(int uid) {
    return lookup(
        PASSWD_SIZE,
        (a, pwd, result) ->
            (int) GETPWUID_R.invokeExact(uid, pwd, a.allocate(BUFFER), BUFFER, result),
        Users::ids);
  }

  /** The gid of the group named {@code name}; empty when there is none. */
  public static Optional<Integer> group(String name) {
    return byName(GETGRNAM_R, GROUP_SIZE, name, grp -> grp.get(INT, GR_GID));
  }

  /** {@code getpwnam_r} or {@code getgrnam_r} of {@code name}. */
  private static <T> Optional<T> byName(
      MethodHandle call, long entrySize, String name, Function<MemorySegment, T> read) {
    return lookup(
        entrySize,
        (a, entry, result) ->
            (int) call.invokeExact(a.allocateFrom(name), entry, a.allocate(BUFFER), BUFFER, result),
        read);
  }

  /** One of the reentrant lookups: {@code get*_r(key, entry, buffer, size, &result)}. */
  @FunctionalInterface
  private interface Lookup {
    int call(Arena a, MemorySegment entry, MemorySegment result) throws Throwable;
  }

  /** Runs {@code call} into an entry of {@code entrySize} bytes and reads what it found. */
  private static <T> Optional<T> lookup(
      long entrySize, Lookup call, Function<MemorySegment, T> read) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment entry = a.allocate(entrySize, 8);
      MemorySegment result = a.allocate(ADDR);
      int rc = call.call(a, entry, result);
      return found(rc, result) ? Optional.of(read.apply(entry)) : Optional.empty();
    } catch (Throwable t) {
      throw Syscalls.rethrow(t);
    }
  }

  private static boolean found(int rc, MemorySegment result) {
    return rc == 0 && !result.get(ADDR, 0).equals(MemorySegment.NULL);
  }

  private static Ids ids(MemorySegment pwd) {
    return new Ids(pwd.get(INT, PW_UID), pwd.get(INT, PW_GID));
  }
}

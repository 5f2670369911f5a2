package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.sys.Syscalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A private network namespace (root) with only loopback, up, and a TCP socket listening in it on
 * {@code 127.0.0.1} at a port the kernel picks: the egress proxy serves that socket from the host's
 * namespace (a socket belongs to the namespace it was made in), and confinement threads {@linkplain
 * #join() join} the namespace so that their children find the proxy there and nothing else. Made on
 * a throwaway thread, which leaves the caller's namespace alone; the namespace lives while this
 * object, the listening socket or a process in it does.
 */
public final class NetworkNamespace implements AutoCloseable {
  static final int SOCK_STREAM = 1;
  static final int SOCK_NONBLOCK = 0x800;
  static final int SOCKADDR_IN_SIZE = 16;
  static final int LOOPBACK = 0x7f000001;
  static final int BACKLOG = 1024;

  private final int namespace;
  private int listener; // -1 once taken
  private boolean closed;

  private NetworkNamespace(int namespace, int listener) {
    this.namespace = namespace;
    this.listener = listener;
  }

  /**
   * Makes the namespace and its listening socket.
   *
   * @throws ConfinementException naming the call that failed (EPERM: not root)
   */
  public static NetworkNamespace create() {
    if (ConfinementThreads.isConfinementThread()) {
      throw new IllegalStateException("a confinement thread must not create threads");
    }
    return ThreadNamespaces.onThrowawayThread("confine-netns-maker", NetworkNamespace::makeHere);
  }

  /** On the throwaway thread: enters a new namespace, opens it and listens in it. */
  private static NetworkNamespace makeHere() {
    ThreadNamespaces.enter(true, false, java.util.List.of());
    int ns = Syscalls.open("/proc/thread-self/ns/net", LibC.O_RDONLY() | LibC.O_CLOEXEC());
    if (ns < 0) {
      throw new ConfinementException("netns", "open(/proc/thread-self/ns/net)", -ns);
    }
    int fd =
        Syscalls.socket(
            ThreadNamespaces.AF_INET,
            SOCK_STREAM | SOCK_NONBLOCK | ThreadNamespaces.SOCK_CLOEXEC,
            0);
    if (fd < 0) {
      Syscalls.close(ns);
      throw new ConfinementException("netns", "socket(AF_INET, SOCK_STREAM)", -fd);
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment sin = a.allocate(SOCKADDR_IN_SIZE, 4);
      sin.set(ValueLayout.JAVA_SHORT, 0, (short) ThreadNamespaces.AF_INET);
      sin.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) 0);
      sin.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 4, LOOPBACK);
      int r = Syscalls.bind(fd, sin, SOCKADDR_IN_SIZE);
      if (r < 0) {
        throw new ConfinementException("netns", "bind(127.0.0.1:0)", -r);
      }
      r = Syscalls.listen(fd, BACKLOG);
      if (r < 0) {
        throw new ConfinementException("netns", "listen", -r);
      }
    } catch (RuntimeException e) {
      Syscalls.close(fd);
      Syscalls.close(ns);
      throw e;
    }
    return new NetworkNamespace(ns, fd);
  }

  /**
   * Hands over the listening socket (non-blocking, close-on-exec): the caller owns it from here on.
   *
   * @throws IllegalStateException when it was taken already or this is closed
   */
  public synchronized int takeListener() {
    if (closed || listener < 0) {
      throw new IllegalStateException("the listening socket was taken or closed");
    }
    int fd = listener;
    listener = -1;
    return fd;
  }

  /**
   * Moves the calling thread into the namespace (irreversible for it).
   *
   * @throws ConfinementException when setns fails
   */
  synchronized void join() {
    if (closed) {
      throw new ConfinementException("netns", "setns: the namespace was closed", 0);
    }
    int r = Syscalls.setns(namespace, LibC.CLONE_NEWNET());
    if (r < 0) {
      throw new ConfinementException("netns", "setns(CLONE_NEWNET)", -r);
    }
  }

  /**
   * Closes this handle on the namespace and the listening socket unless it was taken. Processes in
   * it and threads that joined keep it alive. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    Syscalls.close(namespace);
    if (listener >= 0) {
      Syscalls.close(listener);
      listener = -1;
    }
  }

  @Override
  public String toString() {
    return "NetworkNamespace[fd " + namespace + (closed ? ", closed" : "") + "]";
  }
}

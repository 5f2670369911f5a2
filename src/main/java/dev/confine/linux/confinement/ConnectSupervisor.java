package dev.confine.linux.confinement;

import dev.confine.linux.libc.LibC;
import dev.confine.linux.libc.epoll_event;
import dev.confine.linux.sys.Availability;
import dev.confine.linux.sys.Syscalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The supervisor of {@link ConfinementThreads.Network#SUPERVISED} children, and of DENY_ALL ones
 * where the kernel allows (whose unix sockets it decides): one unconfined platform daemon thread
 * that serves the seccomp listeners of the confinement threads, each with its {@link ConnectGate}.
 * Every {@code connect} of a child stops in the kernel until the supervisor answers:
 *
 * <ul>
 *   <li><b>TCP</b> (an AF_INET or AF_INET6 stream socket): the supervisor copies the address out of
 *       the child's memory, asks the gate where it may go and, when it may, connects <em>the
 *       child's own socket</em> (a duplicate taken with {@code pidfd_getfd}) to the gate's route
 *       itself and tells the gate the port it connects from ({@link ConnectGate#admit}); the
 *       child's call returns what the supervisor's connect returned (0, or EINPROGRESS on a
 *       non-blocking socket, which then completes as usual). The child's call never continues on
 *       its own, so rewriting the address from another thread after the check changes nothing: the
 *       kernel's warning about TOCTOU in {@code seccomp_unotify(2)} applies to a continued call,
 *       and none is. Refused: EACCES. In a network namespace of the children's own (DENY_ALL as
 *       root) the gate routes each connect to the address it named, and other inet sockets (UDP)
 *       are connected alike ({@link ConnectGate#tcpOnly}).
 *   <li><b>AF_UNIX</b>: a path (relative ones against the calling thread's working directory) is
 *       opened by the supervisor ({@code O_PATH}, symbolic links followed as the kernel's connect
 *       would), and when the gate allows the socket file it resolves to, the supervisor connects
 *       the child's socket to <em>what it opened</em> ({@code /proc/self/fd/N}): a link swapped
 *       after the check reaches nothing else. Refused (EACCES): other sockets, abstract addresses
 *       (whose scoping Landlock would check against the connecting task: the supervisor's would be
 *       none). A socket swapped in under the same descriptor number meanwhile is no way out: the
 *       call never continues, and the children's Landlock domain refuses every TCP connect of their
 *       own (its network rights, ABI 4).
 *   <li>Any other socket (only one passed in from outside could be): EACCES.
 *   <li>{@code listen}: the supervisor makes it on the child's unix socket; on a TCP socket EACCES
 *       (listening binds an unbound socket to a port of every address, which Landlock does not
 *       check: the children would be reachable from the network).
 * </ul>
 *
 * <p>Why not the kernel's {@code SECCOMP_IOCTL_NOTIF_ADDFD} with SETFD and {@code ADDFD_FLAG_SEND},
 * replacing the child's socket with the supervisor's: the call then returns the new descriptor's
 * number, which callers that test {@code connect(...) != 0} take for a failure (the JDK's {@code
 * Net.connect0} does), and the child's socket options, flags and binding would be lost with its
 * socket. Connecting the child's own socket keeps all of them.
 *
 * <p>Reading the child's memory and taking its descriptor need the kernel's ptrace access check
 * (the JVM's user, and with Yama's {@code ptrace_scope} 1 an ancestor): a child that makes itself
 * undumpable, or a daemon that left the JVM's tree where Yama applies, gets EACCES on every
 * connect: fail closed. A listener ends when no task is left in its filter (epoll reports HUP).
 */
public final class ConnectSupervisor implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectSupervisor.class);

  /** The thread's name. */
  public static final String THREAD_NAME = "confine-connect-supervisor";

  // x86-64 numbers and values absent from the generated bindings.
  static final long SYS_PIDFD_OPEN = 434;
  static final long SYS_PIDFD_GETFD = 438;
  static final long SYS_PROCESS_VM_READV = 310;
  static final int PIDFD_THREAD = 0x80; // O_EXCL: Linux 6.9
  static final long NOTIF_RECV = 0xc0502100L; // SECCOMP_IOWR(0, struct seccomp_notif)
  static final long NOTIF_SEND = 0xc0182101L; // SECCOMP_IOWR(1, struct seccomp_notif_resp)
  static final long NOTIF_ID_VALID = 0x40082102L; // SECCOMP_IOW(2, __u64)
  static final int FLAG_CONTINUE = 1;
  static final int SOL_SOCKET = 1;
  static final int SO_TYPE = 3;
  static final int SO_PROTOCOL = 38;
  static final int SO_DOMAIN = 39;
  static final int AF_UNSPEC = 0;
  static final int EBADF = 9;
  static final int EFAULT = 14;
  static final int ENOENT = 2;
  static final int ENOTSOCK = 88;
  static final int EAFNOSUPPORT = 97;
  static final int EISCONN = 106;
  static final int EINPROGRESS = 115;
  static final int ENETUNREACH = 101;
  static final int MAX_ADDRESS = 128; // sizeof(struct sockaddr_storage)

  private static final Object START = new Object();
  private static volatile ConnectSupervisor running;

  private final int epfd;
  private final Map<Integer, ConnectGate> gates = new ConcurrentHashMap<>();
  private final AtomicLong routed = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  private ConnectSupervisor(int epfd) {
    this.epfd = epfd;
  }

  /**
   * Starts the supervisor thread, once. Must run on an unconfined thread (the supervisor acts
   * outside every confinement).
   *
   * @throws ConfinementException when its epoll instance cannot be made
   */
  public static ConnectSupervisor start() {
    ConnectSupervisor s = running;
    if (s != null) {
      return s;
    }
    synchronized (START) {
      if (running != null) {
        return running;
      }
      if (ConfinementThreads.isConfinementThread()) {
        throw new IllegalStateException("the connect supervisor must start unconfined");
      }
      int ep = Syscalls.epollCreate1(LibC.EPOLL_CLOEXEC());
      if (ep < 0) {
        throw new ConfinementException("supervisor", "epoll_create1", -ep);
      }
      s = new ConnectSupervisor(ep);
      Thread.ofPlatform().name(THREAD_NAME).daemon().inheritInheritableThreadLocals(false).start(s);
      running = s;
      return s;
    }
  }

  private static final Availability UNIX_AVAILABILITY = probe();
  private static final Availability AVAILABILITY =
      UNIX_AVAILABILITY.and(Landlock.tcpAvailability());

  private static Availability probe() {
    try {
      long r = Syscalls.syscall(SYS_PIDFD_GETFD, -1, 0, 0, 0, 0, 0);
      Availability getfd =
          r == -LibC.ENOSYS()
              ? Availability.unavailable("the kernel has no pidfd_getfd (Linux 5.6 is needed)")
              : Availability.AVAILABLE;
      return SeccompFilter.notificationAvailability().and(getfd);
    } catch (LinkageError | RuntimeException e) {
      return Availability.unavailable("the connect supervisor could not be probed: " + e);
    }
  }

  /**
   * Whether children's connects can be supervised here with the host's network: seccomp user
   * notification (Linux 5.0), {@code pidfd_getfd} (5.6) and a Landlock domain that refuses the
   * children's own TCP connects (ABI 4, 6.7); if not, why.
   */
  public static Availability availability() {
    return AVAILABILITY;
  }

  /**
   * Whether children's connects can be supervised where they have no TCP to the host anyway
   * (DENY_ALL: no inet socket, or a network namespace of their own): seccomp user notification and
   * {@code pidfd_getfd}; if not, why.
   */
  public static Availability unixAvailability() {
    return UNIX_AVAILABILITY;
  }

  /** The running supervisor, or null before {@link #start()}. */
  static ConnectSupervisor running() {
    return running;
  }

  /** How many TCP connects it has routed and refused (for tests and benchmarks). */
  public static long[] counts() {
    ConnectSupervisor s = running;
    return s == null ? new long[2] : new long[] {s.routed.get(), s.refused.get()};
  }

  /**
   * How many listeners it serves (for tests: a listener is dropped once its filter has no task).
   */
  public static int listeners() {
    ConnectSupervisor s = running;
    return s == null ? 0 : s.gates.size();
  }

  /**
   * Serves {@code listener} (a seccomp listener fd, now the supervisor's to close) with {@code
   * gate}. Callable from a confinement thread: it starts nothing.
   */
  void watch(int listener, ConnectGate gate) {
    gates.put(listener, gate);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment ev = epoll_event.allocate(a);
      epoll_event.events(ev, LibC.EPOLLIN());
      ev.set(ValueLayout.JAVA_LONG_UNALIGNED, epoll_event.data$offset(), listener);
      int r = Syscalls.epollCtl(epfd, LibC.EPOLL_CTL_ADD(), listener, ev);
      if (r < 0) {
        gates.remove(listener);
        Syscalls.close(listener); // every connect under it now fails (ENOSYS): closed, not open
        throw new ConfinementException("supervisor", "epoll_ctl(ADD) of a seccomp listener", -r);
      }
    }
  }

  @Override
  public void run() {
    try (Arena arena = Arena.ofConfined()) {
      Buffers b = new Buffers(arena);
      long size = epoll_event.sizeof();
      long dataOffset = epoll_event.data$offset();
      MemorySegment events = epoll_event.allocateArray(16, arena);
      while (true) {
        int n = Syscalls.epollWait(epfd, events, 16, -1);
        if (n < 0) {
          continue; // EINTR
        }
        for (int i = 0; i < n; i++) {
          int mask = events.get(ValueLayout.JAVA_INT, i * size);
          int fd = (int) events.get(ValueLayout.JAVA_LONG_UNALIGNED, i * size + dataOffset);
          ConnectGate gate = gates.get(fd);
          if (gate == null) {
            continue;
          }
          if ((mask & LibC.EPOLLIN()) != 0) {
            try {
              serveOne(fd, gate, b);
            } catch (RuntimeException | Error e) {
              // Never let the thread end: every connect of every supervised child would wait.
              LOG.error("the connect supervisor failed serving a notification", e);
            }
          } else if ((mask & (LibC.EPOLLHUP() | LibC.EPOLLERR())) != 0) {
            // No task is left in the filter: nothing more can arrive.
            Syscalls.epollCtl(epfd, LibC.EPOLL_CTL_DEL(), fd, MemorySegment.NULL);
            gates.remove(fd);
            Syscalls.close(fd);
          }
        }
      }
    }
  }

  /** The supervisor's native buffers, made once. */
  private static final class Buffers {
    final MemorySegment notif; // struct seccomp_notif (80 bytes on this ABI, zeroed before RECV)
    final MemorySegment resp; // struct seccomp_notif_resp
    final MemorySegment id;
    final MemorySegment address; // the child's sockaddr, copied
    final MemorySegment target; // the route's sockaddr
    final MemorySegment own; // getsockname/getpeername results
    final MemorySegment len;
    final MemorySegment iov; // two struct iovec: local, remote
    final MemorySegment scratch;

    Buffers(Arena a) {
      notif = a.allocate(128, 8);
      resp = a.allocate(24, 8);
      id = a.allocate(8, 8);
      address = a.allocate(MAX_ADDRESS, 8);
      target = a.allocate(MAX_ADDRESS, 8);
      own = a.allocate(MAX_ADDRESS, 8);
      len = a.allocate(4, 4);
      iov = a.allocate(32, 8);
      scratch = a.allocate(8, 4);
    }
  }

  private void serveOne(int listener, ConnectGate gate, Buffers b) {
    b.notif.fill((byte) 0);
    int r = Syscalls.ioctl(listener, NOTIF_RECV, b.notif);
    if (r < 0) {
      return; // ENOENT: the child went away before its call was taken; EINTR
    }
    long id = b.notif.get(ValueLayout.JAVA_LONG, 0);
    int tid = b.notif.get(ValueLayout.JAVA_INT, 8);
    // struct seccomp_data at 16: nr, arch, instruction_pointer, args[6] from 32
    int nr = b.notif.get(ValueLayout.JAVA_INT, 16);
    long[] args = new long[3];
    for (int i = 0; i < 3; i++) {
      args[i] = b.notif.get(ValueLayout.JAVA_LONG, 32 + 8L * i);
    }
    int answer; // 0, a negative errno, or CONTINUE
    try {
      answer =
          switch (nr) {
            case SeccompFilter.SYS_CONNECT ->
                decide(listener, id, tid, (int) args[0], args[1], (int) args[2], gate, b);
            case SeccompFilter.SYS_LISTEN ->
                decide(listener, id, tid, (int) args[0], LISTEN, (int) args[1], gate, b);
            default -> -LibC.ENOSYS();
          };
    } catch (RuntimeException | Error e) {
      LOG.warn("the connect supervisor failed on a child's connect: refused", e);
      answer = -LibC.EACCES();
    }
    b.resp.fill((byte) 0);
    b.resp.set(ValueLayout.JAVA_LONG, 0, id);
    if (answer == CONTINUE) {
      b.resp.set(ValueLayout.JAVA_INT, 20, FLAG_CONTINUE);
    } else {
      b.resp.set(ValueLayout.JAVA_INT, 16, answer); // error: 0 or -errno; val 0
    }
    Syscalls.ioctl(listener, NOTIF_SEND, b.resp); // ENOENT: the child is gone
  }

  private static final int CONTINUE = Integer.MIN_VALUE;
  private static final long LISTEN = -1; // as addr: the call is listen(fd, backlog)

  /**
   * The answer to one connect (or with {@code addr} {@link #LISTEN}, listen, its backlog in {@code
   * addrLen}): 0, -errno, or CONTINUE.
   */
  private int decide(
      int listener, long id, int tid, int fd, long addr, int addrLen, ConnectGate gate, Buffers b) {
    boolean listen = addr == LISTEN;
    if (!listen && (addrLen < 0 || addrLen > MAX_ADDRESS)) {
      return -LibC.EINVAL();
    }
    int pidfd = openPidfd(tid);
    if (pidfd < 0) {
      return -LibC.EACCES();
    }
    try {
      b.id.set(ValueLayout.JAVA_LONG, 0, id);
      if (Syscalls.ioctl(listener, NOTIF_ID_VALID, b.id) < 0) {
        return -ENOENT; // the thread is gone (and the tid may name another now): no answer lands
      }
      int sock = (int) Syscalls.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0, 0, 0, 0);
      if (sock < 0) {
        return sock == -EBADF ? -EBADF : -LibC.EACCES();
      }
      try {
        int domain = Syscalls.getsockoptInt(sock, SOL_SOCKET, SO_DOMAIN, b.scratch);
        if (domain < 0) {
          return domain == -ENOTSOCK ? -ENOTSOCK : -LibC.EACCES();
        }
        if (listen) {
          // A unix socket listens (made here, on the child's own socket: a continued call could
          // find a TCP socket swapped in, and listen binds an unbound one to a port of every
          // address, which Landlock does not check); a TCP one never does.
          return domain == SeccompFilter.AF_UNIX
              ? Syscalls.listen(sock, addrLen)
              : refusal(-LibC.EACCES());
        }
        boolean unix = domain == SeccompFilter.AF_UNIX;
        boolean tcp =
            !unix
                && Syscalls.getsockoptInt(sock, SOL_SOCKET, SO_TYPE, b.scratch)
                    == SeccompFilter.SOCK_STREAM
                && Syscalls.getsockoptInt(sock, SOL_SOCKET, SO_PROTOCOL, b.scratch)
                    == SeccompFilter.IPPROTO_TCP;
        if (!unix
            && ((domain != SeccompFilter.AF_INET && domain != SeccompFilter.AF_INET6)
                || (!tcp && gate.tcpOnly()))) {
          return refusal(-LibC.EACCES());
        }
        if (addrLen > 0 && !readChild(tid, addr, addrLen, b)) {
          return -EFAULT;
        }
        return unix
            ? connectUnix(sock, tid, addrLen, gate, b)
            : connectInet(sock, domain, tcp, addrLen, gate, b);
      } finally {
        Syscalls.close(sock);
      }
    } finally {
      Syscalls.close(pidfd);
    }
  }

  /**
   * Connects the child's inet socket {@code sock} (TCP unless the gate allows others) to the gate's
   * route, from its copied address.
   */
  private int connectInet(
      int sock, int domain, boolean tcp, int addrLen, ConnectGate gate, Buffers b) {
    int family = addrLen < 2 ? -1 : Short.toUnsignedInt(b.address.get(NATIVE_SHORT, 0));
    if (family == AF_UNSPEC) {
      return Syscalls.connect(sock, b.address, addrLen); // dissolves an association: no peer
    }
    // As the kernel answers an address of the other family; but an IPv6 datagram socket takes an
    // IPv4 address as the v4-mapped one (written so, below).
    if (family != domain
        && !(!tcp && domain == SeccompFilter.AF_INET6 && family == SeccompFilter.AF_INET)) {
      return -EAFNOSUPPORT;
    }
    InetSocketAddress destination = parse(b.address, family, addrLen);
    if (destination == null) {
      return family == SeccompFilter.AF_INET || family == SeccompFilter.AF_INET6
          ? -LibC.EINVAL()
          : -EAFNOSUPPORT;
    }
    InetSocketAddress route = gate.route(destination);
    if (route == null) {
      return refusal(-LibC.EACCES());
    }
    int targetLen = write(b.target, domain, route);
    int rc = Syscalls.connect(sock, b.target, targetLen);
    if (rc == -EISCONN && connectedTo(sock, b, b.target, targetLen)) {
      return 0; // a call restarted after a signal: the first connect went through, admitted
    }
    if (rc == -LibC.EINVAL() && domain == SeccompFilter.AF_INET6 && !route.equals(destination)) {
      return -ENETUNREACH; // IPV6_V6ONLY: the IPv4 loopback is out of its reach
    }
    if (rc != 0 && rc != -EINPROGRESS) {
      return rc;
    }
    // The port is the socket's from the connect on (bound earlier, it would be taken apart from
    // the ports in TIME_WAIT, and a child making many short connections would run out of them).
    int n = Syscalls.socketAddress(sock, false, b.own, b.len);
    if (n < 0) {
      return n;
    }
    gate.admit(Short.toUnsignedInt(b.own.get(NETWORK_SHORT, 2)), destination);
    routed.incrementAndGet();
    return rc;
  }

  private static final int O_PATH = 0x200000;
  private static final int O_CLOEXEC = 0x80000;

  /** Connects the child's unix socket to the socket file its copied address names, if allowed. */
  private int connectUnix(int sock, int tid, int addrLen, ConnectGate gate, Buffers b) {
    if (addrLen <= 2
        || Short.toUnsignedInt(b.address.get(NATIVE_SHORT, 0)) != SeccompFilter.AF_UNIX) {
      return addrLen < 2 ? -LibC.EINVAL() : Syscalls.connect(sock, b.address, addrLen);
    }
    int n = addrLen - 2;
    if (b.address.get(ValueLayout.JAVA_BYTE, 2) == 0) {
      return refusal(-LibC.EACCES()); // abstract
    }
    int end = 0;
    while (end < n && b.address.get(ValueLayout.JAVA_BYTE, 2 + end) != 0) {
      end++;
    }
    String path =
        new String(
            b.address.asSlice(2, end).toArray(ValueLayout.JAVA_BYTE),
            java.nio.charset.StandardCharsets.UTF_8);
    String opened = path.startsWith("/") ? path : "/proc/" + tid + "/cwd/" + path;
    int fd = Syscalls.open(opened, O_PATH | O_CLOEXEC);
    if (fd < 0) {
      return fd; // ENOENT, EACCES, ELOOP ... as the child's connect would have said
    }
    try {
      String self = "/proc/self/fd/" + fd;
      String real;
      try {
        real = Files.readSymbolicLink(Path.of(self)).toString();
      } catch (IOException e) {
        return -LibC.EACCES();
      }
      if (!gate.mayConnectUnix(real)) {
        return refusal(-LibC.EACCES());
      }
      b.target.fill((byte) 0);
      b.target.set(NATIVE_SHORT, 0, (short) SeccompFilter.AF_UNIX);
      byte[] name = self.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
      MemorySegment.copy(name, 0, b.target, ValueLayout.JAVA_BYTE, 2, name.length);
      int rc = Syscalls.connect(sock, b.target, 2 + name.length + 1);
      if (rc == 0 || rc == -EINPROGRESS) {
        routed.incrementAndGet();
      }
      return rc;
    } finally {
      Syscalls.close(fd);
    }
  }

  private int refusal(int errno) {
    refused.incrementAndGet();
    return errno;
  }

  private static boolean connectedTo(int sock, Buffers b, MemorySegment target, int len) {
    int n = Syscalls.socketAddress(sock, true, b.own, b.len);
    return n == len && b.own.asSlice(0, len).mismatch(target.asSlice(0, len)) < 0;
  }

  private static final ValueLayout.OfShort NATIVE_SHORT = ValueLayout.JAVA_SHORT;
  private static final ValueLayout.OfShort NETWORK_SHORT =
      ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

  /** A sockaddr_in or sockaddr_in6 of {@code family}, or null when malformed. */
  static InetSocketAddress parse(MemorySegment sa, int family, int len) {
    try {
      if (family == SeccompFilter.AF_INET && len >= 16) {
        byte[] ip = sa.asSlice(4, 4).toArray(ValueLayout.JAVA_BYTE);
        return new InetSocketAddress(
            InetAddress.getByAddress(ip), Short.toUnsignedInt(sa.get(NETWORK_SHORT, 2)));
      }
      if (family == SeccompFilter.AF_INET6 && len >= 24) {
        byte[] ip = sa.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
        // A v4-mapped address (::ffff:a.b.c.d) comes back as the Inet4Address it stands for.
        return new InetSocketAddress(
            InetAddress.getByAddress(ip), Short.toUnsignedInt(sa.get(NETWORK_SHORT, 2)));
      }
      return null;
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** Writes {@code a} as a sockaddr of {@code domain} (IPv4 v4-mapped on AF_INET6): its length. */
  static int write(MemorySegment sa, int domain, InetSocketAddress a) {
    sa.fill((byte) 0);
    byte[] ip = a.getAddress().getAddress();
    sa.set(NATIVE_SHORT, 0, (short) domain);
    sa.set(NETWORK_SHORT, 2, (short) a.getPort());
    if (domain == SeccompFilter.AF_INET) {
      if (!(a.getAddress() instanceof Inet4Address)) {
        throw new IllegalArgumentException("an IPv6 route for an IPv4 socket: " + a);
      }
      MemorySegment.copy(ip, 0, sa, ValueLayout.JAVA_BYTE, 4, 4);
      return 16;
    }
    if (a.getAddress() instanceof Inet6Address) {
      MemorySegment.copy(ip, 0, sa, ValueLayout.JAVA_BYTE, 8, 16);
    } else {
      sa.set(ValueLayout.JAVA_BYTE, 18, (byte) 0xff);
      sa.set(ValueLayout.JAVA_BYTE, 19, (byte) 0xff);
      MemorySegment.copy(ip, 0, sa, ValueLayout.JAVA_BYTE, 20, 4);
    }
    return 28;
  }

  /** Copies {@code len} bytes at {@code addr} of thread {@code tid}'s memory into the buffer. */
  private static boolean readChild(int tid, long addr, int len, Buffers b) {
    // struct iovec { void *iov_base; size_t iov_len; } local, then remote
    b.iov.set(ValueLayout.JAVA_LONG, 0, b.address.address());
    b.iov.set(ValueLayout.JAVA_LONG, 8, len);
    b.iov.set(ValueLayout.JAVA_LONG, 16, addr);
    b.iov.set(ValueLayout.JAVA_LONG, 24, len);
    long n =
        Syscalls.syscall(SYS_PROCESS_VM_READV, tid, b.iov.address(), 1, b.iov.address() + 16, 1, 0);
    return n == len;
  }

  /**
   * A pidfd for the process of thread {@code tid}: of the thread itself (Linux 6.9), else of its
   * thread group's leader; or -errno.
   */
  private static int openPidfd(int tid) {
    int fd = (int) Syscalls.syscall(SYS_PIDFD_OPEN, tid, PIDFD_THREAD, 0, 0, 0, 0);
    if (fd != -LibC.EINVAL()) {
      return fd;
    }
    fd = (int) Syscalls.syscall(SYS_PIDFD_OPEN, tid, 0, 0, 0, 0, 0);
    if (fd != -LibC.EINVAL()) {
      return fd;
    }
    int tgid = threadGroup(tid);
    return tgid < 0 ? fd : (int) Syscalls.syscall(SYS_PIDFD_OPEN, tgid, 0, 0, 0, 0, 0);
  }

  private static int threadGroup(int tid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + tid + "/status"))) {
        if (line.startsWith("Tgid:")) {
          return Integer.parseInt(line.substring(5).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone
    }
    return -1;
  }
}
